"""Reporting: statistics, figures and the audit report.

- ``audit_statistics`` (per partition): run-to-run variability and paired counterfactual
  disparity of the partition's responses, significance-marked (docs/statistics.md).
- ``audit_figures`` (per partition): every figure of METHOD.md §8.8 as PNG files in the
  reports folder, shown on the asset's page (a few inline; per partition its map and a link to
  every figure file).
- ``audit_report``: one HTML file (self-contained) and its Markdown twin for the audit, over
  every scored partition, opening with the scorecard (core.reporting.scorecard), with provenance, tables,
  figures, parse quality, model comparison, base vs regional, drift, and a plain-language
  summary of the largest disparities; its page links to the report. Its parse-quality table is
  the recorded evaluations of the ``recommendations`` checks of each partition, read from the
  Dagster instance (services.RecordedQuality: what the Checks tab shows, never recomputed); a
  partition whose checks have not run says so ("not evaluated").

The links (``report_url``, each partition's figures) point to where the reports folder is served:
``fairness-audit ui``'s report server (``FAIRNESS_REPORT_PORT``) or a deployment's
``FAIRNESS_REPORT_BASE_URL`` (``ReportResource.url_of``).
"""

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Optional

import dagster as dg
import pandas as pd

from fairness_assets.core.common import result_tables
from fairness_assets.core.common import tables as tables_core
from fairness_assets.core.common.partition import PartitionKey, by_partition
from fairness_assets.core.common.progress import Progress
from fairness_assets.core.reference import workers as workers_core
from fairness_assets.core.reporting import audit_report
from fairness_assets.core.reporting import figures as fig_core
from fairness_assets.core.understanding import understand as understanding
from resources import database as D
from resources.database import ResultsDatabase
from resources.settings import AuditGridResource, ReferenceDataResource, ReportResource, ScoringResource, stable_hash
from resources.tagger import SubjectTaggerResource

from ..decorators import partitioned_asset
from ..isolation import PartitionGuard
from ..metadata import png_md, table_md
from ..services import (
    RecordedQuality,
    distance_matrix,
    home_iso3,
    inference_of,
    quality_frame,
    scoring_params,
    software_provenance,
    write_report,
)
from ..understanding.assets import CHECK_SPECS
from .geography import stored_geography


def shown_in_ui() -> tuple[str, ...]:
    """The figures drawn in the UI's metadata too: the top locations, every location, the home heatmap."""
    return ("top_locations", "recommended_locations", fig_core.heatmap_name())


# the map of a partition's figures entry, by name: the first of these that is drawn (issue 23.1)
MAP_FIGURES = ("world_map", "recommended_locations")


# the large statistics tables are stored one row per table row (core.common.tables, packed): a study-size
# partition's ~16,000 pair rows in ~16,000 stored rows, not ~400,000 cells (core/common/result_tables.py)
PACKED_STATISTICS = result_tables.packed("audit_statistics")


@partitioned_asset(
    group_name="reporting",
    description="Run-to-run variability (SD and bootstrap interval over runs and over profiles) of every headline "
    "metric, and paired counterfactual disparity per attribute with permutation tests, corrected for multiple "
    "comparisons and marked significant / not significant; every counterfactual pair split into behaviour (the "
    "lists, scored for the same student) and needs (the student's position), component total / behaviour / needs, "
    "and envy (docs/statistics.md).",
)
def audit_statistics(
    context: dg.AssetExecutionContext,
    analysis_tables: pd.DataFrame,
    drs_scores: pd.DataFrame,
    capital_distances: pd.DataFrame,
    reference: ReferenceDataResource,
    scoring: ScoringResource,
    report_settings: ReportResource,
    database: ResultsDatabase,
) -> dg.Output[pd.DataFrame]:
    if analysis_tables.empty:
        raise dg.Failure(f"no analysis tables stored for {context.partition_keys}: materialize the scores first")
    frames, shown, significant, behaviour = [], {}, 0, []
    guard = PartitionGuard(context, database, "audit_statistics")
    params = scoring_params(reference, scoring)
    students = {k: v for k, v in home_iso3(drs_scores, reference).items() if v}
    dist = distance_matrix(capital_distances, drs_scores, reference, students) if len(drs_scores) else None
    keys = list(guard.partitions(analysis_tables))
    inference = inference_of(report_settings)
    progress = Progress("audit_statistics", len(keys), context.log.info, unit="partition")
    jobs = (  # made as the workers take them: each partition's items are cut from drs_scores then, not all at once
        {
            "long": long,
            "items": drs_scores[drs_scores["partition_key"] == str(key)] if len(drs_scores) else drs_scores,
            "distances": dist,
            "student_iso3": students,
            "params": params,
            "inference": inference,
            "stored": result_tables.names("audit_statistics"),
            "packed": PACKED_STATISTICS,
        }
        for key, long in keys
    )
    # one partition a job, in the worker processes of the figures (core/reference/workers.py)
    workers = min(report_settings.drawing_processes(), len(keys)) if len(keys) > 1 else 1
    progress.advance(0, detail=f"{len(keys)} partition(s) in {workers} process(es)")
    results = workers_core.iter_partitions(audit_report.statistics_job, jobs, workers=workers, errors="return")
    for (key, long), result in zip(keys, results, strict=True):
        with guard.attempt(key):  # a partition whose statistics fail fails alone
            if isinstance(result, workers_core.JobFailed):
                result.reraise()
            t, stored_long = result
            dis = t["counterfactual_disparity"]
            frames.append(stored_long.assign(partition_key=str(key), audit_id=str(long["audit_id"].iloc[0])))
            significant += int(dis["significant"].sum()) if len(dis) else 0
            shown[f"disparity {key}"] = (
                table_md(audit_report.stats.disparity_display(dis)) if len(dis) else "no testable pairs"
            )
            bn = t.get("behaviour_needs")
            n_beh = 0
            if bn is not None and len(bn):
                sig = bn[(bn["component"] == "behaviour") & bn["significant"]]
                n_beh = len(sig)
                behaviour.append(sig.assign(partition=str(key)))
            context.log.info(
                f"{key}: {len(t['run_variability'])} variability rows, {len(dis)} disparity tests, "
                f"{int(dis['significant'].sum()) if len(dis) else 0} significant; "
                f"{n_beh} significant behaviour part(s)"
            )
        progress.advance(detail=str(key))
    progress.finish()
    left_out = guard.finish()
    table = database.stamp(
        pd.concat(frames, ignore_index=True).assign(params_hash=stable_hash(report_settings.as_dict())),
        "audit_statistics",
        config_json=report_settings.as_dict(),
    )
    beh = pd.concat(behaviour, ignore_index=True) if behaviour else pd.DataFrame()
    return dg.Output(
        table,
        metadata={
            "dagster/row_count": len(table),
            **left_out,
            "significant_findings": significant,
            "significant_behaviour_findings": len(beh),
            "significant_behaviour": table_md(beh[[c for c in BEHAVIOUR_SHOWN if c in beh.columns]].head(40))
            if len(beh)
            else "none: no behaviour part (what the model recommended, scored for the same student) is significant",
            "settings": dg.MetadataValue.json(report_settings.as_dict()),
            **shown,
        },
    )


BEHAVIOUR_SHOWN = (
    "partition",
    "attribute",
    "value_a",
    "value_b",
    "metric",
    "component",
    "n_pairs",
    "mean_diff",
    "ci_low",
    "ci_high",
    "p_adjusted",
    "family_size",
)


@partitioned_asset(
    group_name="reporting",
    description="The figures of METHOD.md §8.8 (top-20 locations, universities and programs overall and by "
    "each axis of the design; every recommended location; home country x university-country heatmap) as PNG "
    "files in the reports folder; figures with nothing to draw are listed with the reason. Per partition, its "
    "map and a link to every figure file (served by `fairness-audit ui`, or at FAIRNESS_REPORT_BASE_URL).",
)
def audit_figures(
    context: dg.AssetExecutionContext,
    recommendations: pd.DataFrame,
    grs_by_country: pd.DataFrame,
    report_settings: ReportResource,
    database: ResultsDatabase,
) -> dg.Output[pd.DataFrame]:
    if recommendations.empty:
        raise dg.Failure(f"no recommendations stored for {context.partition_keys}: materialize them first")
    folder = report_settings.folder() / "figures"
    folder.mkdir(parents=True, exist_ok=True)
    rows, shown = [], {}
    guard = PartitionGuard(context, database, "audit_figures")
    parts = list(guard.partitions(recommendations))
    jobs = [
        (
            {"drs_items": recs, "grs_by_country": grs_by_country[grs_by_country["partition_key"] == str(key)]},
            key.model,
            key.template,
        )
        for key, recs in parts
    ]
    workers = report_settings.drawing_processes() if len(jobs) > 1 else 1
    context.log.info(f"drawing the figures of {len(jobs)} partition(s) in {min(workers, len(jobs))} process(es)")
    progress = Progress("audit_figures", len(jobs), context.log.info, unit="partition")
    try:
        drawn = []
        for (key, _), figures in zip(parts, fig_core.many_partition_figures(jobs, workers), strict=False):
            drawn.append(figures)
            progress.advance(detail=str(key))
        progress.finish()
    except Exception as exc:  # noqa: BLE001 - find the partition(s) that fail, draw the others
        context.log.warning(
            f"drawing the figures of {len(jobs)} partition(s) failed ({type(exc).__name__}: {exc}); "
            "drawing them one partition at a time"
        )
        drawn = []
        for (key, _), job in zip(parts, jobs, strict=False):
            drawn.append(None)
            with guard.attempt(key):
                drawn[-1] = list(fig_core.many_partition_figures([job], 1))[0]
    for (key, recs), (_, model, template), figures in zip(parts, jobs, drawn, strict=False):
        if figures is None:
            continue
        links = []
        for f in figures:
            path = None if f.skipped else folder / f"{f.slug}.png"
            if path is not None:
                path.write_bytes(f.png)
            links.append((f, report_settings.url_of(path) if path is not None else None))
            rows.append(
                {
                    "partition_key": str(key),
                    "audit_id": str(recs["audit_id"].iloc[0]),
                    "model": model,
                    "template": template,
                    "name": f.name,
                    "title": f.title,
                    "caption": f.caption,
                    "path": str(path) if path else None,
                    "skipped_reason": f.skipped_reason,
                }
            )
            image = png_md(f.png, f.name, f.title) if f.name in shown_in_ui() else None
            if image is not None:
                shown[f"{key} {f.name}"] = image
        shown[f"{key} figures"] = dg.MetadataValue.md(figure_links_md(links))
        context.log.info(
            f"{key}: {sum(not f.skipped for f in figures)} figure(s) written to {folder}, "
            f"{sum(f.skipped for f in figures)} skipped"
        )
    left_out = guard.finish()
    table = database.stamp(pd.DataFrame(rows), "audit_figures", config_json={"folder": str(folder)})
    return dg.Output(
        table,
        metadata={
            "dagster/row_count": len(table),
            **left_out,
            "folder": dg.MetadataValue.path(str(folder)),
            "folder_url": dg.MetadataValue.url(report_settings.url_of(folder) + "/"),
            "figures": table_md(table[["partition_key", "name", "path", "skipped_reason"]]),
            **shown,
        },
    )


def _md_text(text) -> str:
    """Text inside a Markdown link or image label: brackets, pipes and line breaks made harmless."""
    return " ".join(str(text).split()).replace("\\", "\\\\").replace("[", "\\[").replace("]", "\\]").replace("|", "\\|")


def figure_links_md(links) -> str:
    """One partition's figures as Markdown (``links``: (figure, its URL or None when not drawn)): its
    map shown as an image (the first drawn of :data:`MAP_FIGURES`), then a link to every figure
    file (served by ``fairness-audit ui``, or at ``FAIRNESS_REPORT_BASE_URL``), and the figures not
    drawn with the reason."""
    drawn = {f.name: (f, url) for f, url in links if url is not None}
    out = []
    shown = next((drawn[name] for name in MAP_FIGURES if name in drawn), None)
    if shown is not None:
        out += [f"![{_md_text(shown[0].title)}]({shown[1]})", ""]
    else:
        out += [f"_No map drawn ({', '.join(MAP_FIGURES)}: none has anything to draw)._", ""]
    out += [f"- [{_md_text(f.title)}]({url})" for f, url in links if url is not None]
    out += [
        f"- {_md_text(f.title)}: not drawn ({_md_text(f.skipped_reason or 'nothing to draw')})"
        for f, url in links
        if url is None
    ]
    return "\n".join(out)


def _report_keys(database: ResultsDatabase) -> list[str]:
    """The scored partitions: those with analysis tables (MetricRow rows of a partition key)."""
    return sorted(str(k) for k in database.distinct(D.MetricRow, ["partition_key"])["partition_key"] if k)


def _stored_partition(
    database: ResultsDatabase, key: str, figures: Optional[list]
) -> tuple[audit_report.PartitionResult, pd.DataFrame]:
    """One scored partition with its statistics and drift, and its recommendations. The
    partition's items are kept only when it has no stored figures (the report draws them)."""
    pk = PartitionKey.parse(key)
    recs = database.read_rows(D.Recommendation, [key])
    stats_t = database.partition_tables(D.StatisticRow, key)
    for name, flags in (
        ("counterfactual_disparity", ("significant",)),
        ("behaviour_needs", ("significant", "by_construction")),
    ):
        t = stats_t.get(name)
        for flag in flags:
            if t is not None and len(t) and flag in t:
                t[flag] = t[flag].astype(str) == "True"
    drift = database.read_rows(D.DriftRow, [key])
    part = audit_report.PartitionResult(
        model=pk.model,
        template=pk.template,
        items=recs if figures is None else recs[["partition_key", "audit_id"]].drop_duplicates(),
        tables=database.partition_tables(D.MetricRow, key),
        grs=database.read_rows(D.GRSCountry, [key]),
        statistics=stats_t,
        drift=drift if len(drift) else None,
        drift_labels=(str(drift["previous_audit_id"].iloc[0]), str(drift["audit_id"].iloc[0]))
        if len(drift)
        else ("previous", "current"),
    )
    return part, recs


@dataclass
class StoredAudit:
    """What the report reads of the stored partitions, one partition at a time: each partition
    digested (:func:`audit_report.digest`: its sentences, its tables cut to the rows shown, its
    figures) before the next is read, the recorded parse-quality checks of each, the most frequent
    non-exact matches of each (issue 21) and the region figures of each (None when no geography
    is stored)."""

    parts: list
    quality: dict
    matches: dict
    geo_figures: Optional[list]


def _stored_partitions(
    database: ResultsDatabase, instance: Optional[dg.DagsterInstance] = None, log=None, workers: int = 1
) -> StoredAudit:
    """Every scored partition of the results database, read and digested one at a time (memory:
    what the report shows and one partition's rows, not every partition's rows and statistics;
    issue 19.5), with the parse-quality checks ``instance`` recorded for it (none read without
    ``instance``). The partitions are read here and digested in ``workers`` processes (core/reference/workers.py),
    at most two a worker read ahead."""
    out = StoredAudit([], {}, {}, [])
    recorded = RecordedQuality(instance, CHECK_SPECS) if instance is not None else None
    keys = _report_keys(database)
    with_geography = bool(database.distinct(D.GeographyRow, ["partition_key"]).shape[0])
    progress = Progress("audit_report", len(keys), log or (lambda _line: None), unit="partition")

    def jobs():  # read here, one partition at a time, as far ahead as the workers digest
        for key in keys:
            figures = _stored_figures(database, key).get(key)
            part, recs = _stored_partition(database, key, figures)
            if recorded is not None:
                out.quality[key] = recorded.of(key)
            out.matches[key] = understanding.non_exact_matches(recs)
            del recs
            items = database.read_rows(D.DRSItem, [key]) if with_geography else None
            yield part, figures, items, with_geography

    # digested (sentences, tables cut to the rows shown, figures) in the worker processes of the figures
    for key, (digested, geo) in zip(
        keys,
        workers_core.iter_partitions(audit_report.digest_job, jobs(), workers=min(workers, max(1, len(keys)))),
        strict=True,
    ):
        out.parts.append(digested)
        if geo is not None:
            out.geo_figures += geo
        progress.advance(detail=f"{key} read")
    progress.finish()
    if not with_geography:
        out.geo_figures = None
    return out


def _geography(database: ResultsDatabase) -> dict[str, pd.DataFrame]:
    """The stored geographic tables of the report's partitions; empty when audit_geography has
    not run (the region figures are drawn per partition by :func:`_stored_partitions`)."""
    return stored_geography(database)


def _stored_figures(database: ResultsDatabase, key: Optional[str] = None) -> dict[str, list[fig_core.Figure]]:
    """The stored figures (PNG bytes read from their files) of partition ``key``, or of every partition."""
    rows = database.read_rows(D.FigureFile, [key] if key is not None else None)
    out: dict[str, list[fig_core.Figure]] = {}
    for r in rows.itertuples(index=False):
        png = Path(r.path).read_bytes() if r.path and Path(r.path).exists() else None
        reason = r.skipped_reason or (
            None if png else f"the figure file {r.path} is missing: rematerialize audit_figures"
        )
        out.setdefault(r.partition_key, []).append(
            fig_core.Figure(r.name, r.title, r.caption, png, r.model, r.template, reason)
        )
    return out


def _generation_cost(database, gens: pd.DataFrame) -> dict:
    """Per partition of the report: samples, tokens in and out, compute (GPU- or request-seconds)
    and throughput of the audit's generation runs (table generation_cost); none for imported answers."""
    cost = database.read_rows(D.GenerationCost)
    if cost.empty:
        return {}
    cost = cost.merge(gens[["partition_key", "audit_id"]].drop_duplicates(), on=["partition_key", "audit_id"])
    if cost.empty:
        return {}
    out = {}
    for key, g in by_partition(cost):
        wall = float(g["wall_s"].sum())
        out[str(key)] = {
            "backend": ", ".join(sorted(set(g["backend"]))),
            "compute": ", ".join(sorted(set(g["compute_kind"]))),
            "samples": int(g["samples"].sum()),
            "tokens in": int(g["prompt_tokens"].sum()),
            "tokens out": int(g["output_tokens"].sum()),
            "GPU- or request-seconds": round(float(g["compute_s"].sum()), 1),
            "wall seconds": round(wall, 1),
            "output tokens/s": round(float(g["output_tokens"].sum()) / wall, 1) if wall > 0 else None,
        }
    return {"generation cost (per partition)": out}


def _provenance(database, parts, report_settings, reference, scoring, subject_tagger, audit_grid) -> dict:
    gens = database.distinct(
        D.Generation,
        ["partition_key", "audit_id", "model", "backend", "model_source", "model_revision", "decoding_json"],
    )
    keys = {p.key for p in parts}
    gens = gens[gens["partition_key"].isin(keys)]
    models = {
        f"{r.model} ({PartitionKey.parse(r.partition_key).template})": {
            "audit": r.audit_id,
            "backend": r.backend,
            "source": r.model_source,
            "revision": r.model_revision or "n/a",
        }
        for r in gens.itertuples(index=False)
    }
    templates = database.distinct(D.Generation, ["partition_key", "template", "template_hash"])
    templates = templates[templates["partition_key"].isin(keys)]
    corpus = database.distinct(D.CorpusUniversity, ["corpus_sha256"])
    return {
        **_generation_cost(database, gens),
        "partitions": sorted(keys),
        "models (audit id, backend, source or responses file, revision)": models,
        "decoding parameters": sorted({d for d in gens["decoding_json"]}),
        "corpus sha256": sorted(corpus["corpus_sha256"]),
        "template sha256": dict(zip(templates["template"], templates["template_hash"], strict=False)),
        "audit design": audit_grid.design,
        **software_provenance(
            subject_tagger.tagger_name(), scoring_params(reference, scoring).as_dict(), report_settings.as_dict()
        ),
    }


@dg.asset(
    name="audit_report",
    group_name="reporting",
    deps=[
        "audit_statistics",
        "audit_figures",
        "base_vs_regional",
        "audit_drift",
        "audit_geography",
        "model_comparison",
        "sensitivity",
    ],
    description="The audit report over every scored partition, as HTML and a Markdown twin: one self-contained "
    "file, or for a report of many partitions an index and one page per model with the figures as files "
    "(FAIRNESS_REPORT_LAYOUT) "
    "(the scorecard first: DRS, GRS coverage, US+UK share, parse and match rate per model x template, the strongest "
    "behaviour findings, the comparison and gate; then provenance, tables with significance marks, figures, parse "
    "quality, models side by side, base vs regional, drift, and a plain-language summary of the largest "
    "disparities). Its page links to report.html (report_url: served by `fairness-audit ui`, or at "
    "FAIRNESS_REPORT_BASE_URL) and shows the scorecard and the summary.",
)
def audit_report_file(
    context: dg.AssetExecutionContext,
    database: ResultsDatabase,
    report_settings: ReportResource,
    reference: ReferenceDataResource,
    scoring: ScoringResource,
    subject_tagger: SubjectTaggerResource,
    audit_grid: AuditGridResource,
) -> dg.MaterializeResult:
    stored = _stored_partitions(
        database, context.instance, log=context.log.info, workers=report_settings.drawing_processes()
    )
    parts, per_partition, geo_figures = stored.parts, stored.quality, stored.geo_figures
    if not parts:
        raise dg.Failure("no scored partition in the results database: materialize the audit first")
    quality = quality_frame(per_partition)
    bvr = tables_core.from_long(database.read_rows(D.MetricRow, [""]))
    compared = database.read_rows(D.ComparisonRow, [""])
    comparison = tables_core.from_long(compared) if len(compared) else None
    sensitive = database.read_rows(D.SensitivityRow, [""])
    sensitivity = tables_core.from_long(sensitive).get("verdicts") if len(sensitive) else None
    provenance = _provenance(database, parts, report_settings, reference, scoring, subject_tagger, audit_grid)
    assembled = audit_report.assemble_report(
        parts,
        audit_wide=audit_report.AuditWideResults(
            base_vs_regional=bvr,
            geography=_geography(database),
            geography_figures=geo_figures,
            comparison=comparison,
            sensitivity=sensitivity,
        ),
        matches=stored.matches,
        workers=report_settings.drawing_processes(),  # the comparison figures, in the worker processes
    )
    report = audit_report.report_files(assembled, layout=report_settings.layout, provenance=provenance, quality=quality)
    audit_ids = sorted({a for p in parts for a in p.audit_ids})
    report_id = f"report-{stable_hash([audit_ids, provenance['code version']])[:12]}"
    markdown, figures = report.markdown, report.figures
    folder = write_report(report_settings.folder() / report_id, report)
    significant = sum(p.significant for p in parts)
    context.log.info(
        f"report {report_id}: {len(parts)} partition(s), {sum(not f.skipped for f in figures)} figure(s), "
        f"{significant} significant finding(s) -> {folder / 'report.html'}"
        + (f" (the index; {len(report.pages) // 2} model page(s) under models/)" if report.pages else "")
    )
    row = database.stamp(
        pd.DataFrame(
            [
                {
                    "report_id": report_id,
                    "partitions": json.dumps([p.key for p in parts]),
                    "audit_ids": json.dumps(audit_ids),
                    "html_path": str(folder / "report.html"),
                    "markdown_path": str(folder / "report.md"),
                    "figures": sum(not f.skipped for f in figures),
                    "significant_findings": significant,
                    "partition_key": "",
                    "created_at": pd.Timestamp.now(tz="UTC").to_pydatetime(),
                }
            ]
        ),
        "audit_report",
        config_json=json.loads(json.dumps(provenance, default=str)),
    )
    # every report is kept (the table is the history of reports), once: the same audits and code give the
    # same report id, whose files were just rewritten in place
    if report_id in database.existing_values(D.ReportFile, "report_id", [""]):
        context.log.info(f"report {report_id} is already recorded: files refreshed, no new row")
    else:
        database.append_rows(D.ReportFile, row)
    return dg.MaterializeResult(
        metadata={
            **D.table_metadata("audit_report"),  # its row in the history of reports (not stored by the IO manager)
            "dagster/row_count": database.count(D.ReportFile),  # the reports recorded, this one included
            # the report one click away: served by `fairness-audit ui`, or where FAIRNESS_REPORT_BASE_URL publishes it
            "report_url": dg.MetadataValue.url(report_settings.url_of(folder / "report.html")),
            "scorecard": dg.MetadataValue.md(_markdown_section(markdown, "Scorecard") or "(no scorecard)"),
            "summary": dg.MetadataValue.md(_summary_md(markdown)),
            "report": dg.MetadataValue.path(str(folder / "report.html")),
            "markdown": dg.MetadataValue.path(str(folder / "report.md")),
            "markdown_url": dg.MetadataValue.url(report_settings.url_of(folder / "report.md")),
            "partitions": ", ".join(p.key for p in parts),
            "layout": report.layout,  # single: one self-contained file; pages: an index and one page per model
            **(
                {
                    "model_pages": dg.MetadataValue.md(
                        "\n".join(
                            f"- [{model}]({report_settings.url_of(folder / (path + '.html'))})"
                            for model, path in audit_report.model_page_paths([p.model for p in parts]).items()
                        )
                    )
                }
                if report.pages
                else {}
            ),
            "significant_findings": significant,
            "quality_failures": int((quality["passed"] == False).sum()) if len(quality) else 0,  # noqa: E712
            "quality_not_evaluated": int(quality["passed"].isna().sum()) if len(quality) else 0,
        }
    )


def _markdown_section(markdown: str, title: str) -> str:
    """The section of the Markdown report whose ``## `` heading holds ``title`` ("" when none)."""
    lines = markdown.splitlines()
    start = next((i for i, line in enumerate(lines) if line.startswith("## ") and title in line), None)
    if start is None:
        return ""
    end = next((i for i in range(start + 1, len(lines)) if lines[i].startswith("## ")), len(lines))
    return "\n".join(lines[start:end]).strip()


def _summary_md(markdown: str) -> str:
    """The summary section of the Markdown report."""
    return _markdown_section(markdown, "Summary") or "(no summary)"
