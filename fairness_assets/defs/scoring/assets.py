"""Scores: DRS per item, GRS per country and the analysis tables of METHOD.md §8.

One multi-asset computes a partition's tables with ``core.scoring.metrics.score_partition`` (the same
function the command line uses) and stores them in three results tables; ``base_vs_regional``
compares the base and regional partitions of each model: the percent changes of §8.4, and every
group contrast per component (``core.statistics.component_change``: did the regional template move what the
model did, not only the outcome?).
"""

from typing import Optional

import dagster as dg
import pandas as pd

from fairness_assets.core.common import result_tables
from fairness_assets.core.common import tables as tables_core
from fairness_assets.core.common.partition import PartitionKey
from fairness_assets.core.reference import axes
from fairness_assets.core.reference.comparisons import comparisons_of
from fairness_assets.core.reporting import figures as fig_core
from fairness_assets.core.reporting.sentences import change as change_sentences
from fairness_assets.core.scoring import metrics
from fairness_assets.core.statistics import component_change as cc
from fairness_assets.core.statistics import language_affinity as la
from fairness_assets.core.statistics import signalled as sig
from fairness_assets.core.statistics import stats as st
from resources.database import (
    DRSItem,
    GeographyRow,
    GRSCountry,
    MetricRow,
    ResultsDatabase,
    StatisticRow,
    make_provenance,
)
from resources.settings import ReferenceDataResource, ReportResource, ScoringResource, stable_hash

from ..decorators import partitioned_multi_asset, stored_asset, stored_out
from ..isolation import PartitionGuard
from ..metadata import number, png_md, table_md
from ..services import distance_matrix, home_iso3, inference_of, scoring_params

ANALYSIS = result_tables.names("analysis_tables")  # core/common/result_tables.py: the tables of METHOD.md §8
EMPTY_REASON = {  # why an analysis table can be empty (the asset page says it instead of a bare header)
    "academic_alignment": "no academic-template partition in this run: Acad is measured on the programs the "
    "academic template asks for",
    "reduced_context_top": "no reduced-context template (gender_only, nationality_only, ...) in this run",
    "concentration": "no recommended university was matched",
    "volume_diversity": "no recommendation was parsed",
    "drs_summary": "no item was scored",
}
NO_PAIR = "no model has both partitions of a comparison of the design scored (base and regional for the study)"


@partitioned_multi_asset(
    outs={
        "drs_scores": stored_out(
            group_name="scoring",
            description="Per recommended item: distance, lambda, Acc, Rep, Acad, DRS and the "
            "components used (METHOD.md §5); per-response means are in analysis_tables.",
        ),
        "grs_by_country": stored_out(
            group_name="scoring", description="Per corpus country: Avail, Repr, Scaled_Repr, Rep_covg, GRS (§6)."
        ),
        "analysis_tables": stored_out(
            group_name="scoring",
            description="§8 tables 1, 2, 5, 6, 7: DRS per response and by group, academic "
            "alignment, volume and diversity, reduced-context top-k, US+UK share and "
            "coverage.",
        ),
    },
)
def scores(
    context: dg.AssetExecutionContext,
    recommendations: pd.DataFrame,
    qs_corpus: pd.DataFrame,
    capital_distances: pd.DataFrame,
    reference: ReferenceDataResource,
    scoring: ScoringResource,
    database: ResultsDatabase,
):
    params = scoring_params(reference, scoring)
    params_hash = stable_hash(params.as_dict())
    students = home_iso3(recommendations, reference)
    dist = distance_matrix(capital_distances, recommendations, reference, students)
    prov = make_provenance(
        "scores", corpus_sha256=str(qs_corpus["corpus_sha256"].iloc[0]), config_json=params.as_dict()
    )
    database.record_provenance(prov)  # one record for the three tables of the multi-asset
    items, grs, long, shown = [], [], [], {}
    guard = PartitionGuard(context, database, "scores")
    for pk, recs in guard.partitions(recommendations):
        key = str(pk)
        with guard.attempt(key):  # a partition that cannot be scored fails alone
            t = metrics.score_partition(recs, qs_corpus, dist, students, params)
            audit = str(recs["audit_id"].iloc[0])
            parts = (
                t["drs_items"].assign(partition_key=key),
                t["grs_by_country"].assign(partition_key=key, audit_id=audit),
                tables_core.to_long({n: t[n] for n in ANALYSIS}, packed=result_tables.packed("analysis_tables")).assign(
                    partition_key=key, audit_id=audit
                ),
            )
            for name in ANALYSIS:
                shown.setdefault(name, []).append(t[name].assign(partition=key))
            for frames, part in zip((items, grs, long), parts, strict=False):
                frames.append(part)
            context.log.info(
                f"{key}: {len(t['drs_items'])} items scored; mean DRS "
                f"{t['drs_responses']['drs'].mean():.4f}; countries with GRS > 0: "
                f"{(t['grs_by_country']['grs'] > 0).sum()}"
            )
    left_out = guard.finish()
    items_df = pd.concat(items, ignore_index=True).assign(params_hash=params_hash, provenance_id=prov.provenance_id)
    grs_df = pd.concat(grs, ignore_index=True).assign(params_hash=params_hash, provenance_id=prov.provenance_id)
    long_df = pd.concat(long, ignore_index=True).assign(params_hash=params_hash, provenance_id=prov.provenance_id)
    tables = {name: pd.concat(frames, ignore_index=True) for name, frames in shown.items()}
    yield dg.Output(
        items_df,
        output_name="drs_scores",
        metadata={
            "dagster/row_count": len(items_df),
            **left_out,
            "params": dg.MetadataValue.json(params.as_dict()),
            "mean_drs": number(items_df["drs"].mean()) if items_df["drs"].notna().any() else "n/a: no item scored",
            "components_used": table_md(items_df["drs_components"].value_counts().to_frame()),
        },
    )
    yield dg.Output(
        grs_df,
        output_name="grs_by_country",
        metadata={
            "dagster/row_count": len(grs_df),
            "countries_recommended": int((grs_df["n_recommendations"] > 0).sum()),
            "grs_table": table_md(
                grs_df[grs_df["n_recommendations"] > 0][
                    [
                        "partition_key",
                        "country",
                        "total_unis",
                        "recs",
                        "avail",
                        "repr",
                        "scaled_repr",
                        "rep_covg",
                        "grs",
                    ]
                ]
            ),
        },
    )
    yield dg.Output(
        long_df,
        output_name="analysis_tables",
        metadata={
            "dagster/row_count": len(long_df),
            **{
                name: table_md(tables[name], empty=EMPTY_REASON.get(name, ""))
                for name in ANALYSIS
                if name != "drs_responses"
            },
        },
    )


@stored_asset(
    group_name="scoring",
    deps=["analysis_tables", "grs_by_country", "audit_statistics", "audit_geography"],
    description="§8.4 base vs regional, and every template comparison of the design (its `comparisons`: an "
    "operator system prompt or a conversation against the bare question, ...): change in DRS/Acc/Rep (overall, by "
    "each axis of the design) and in GRS per country, in percent, for every model with both partitions "
    "materialized; and component_change: every counterfactual pair and geographic one-vs-rest contrast, per "
    "component (total / behaviour / needs), base vs other with the change tested (Welch, Holm): did the other "
    "template move what the model did?",
)
def base_vs_regional(
    context: dg.AssetExecutionContext, database: ResultsDatabase, report_settings: ReportResource
) -> dg.Output[pd.DataFrame]:
    # the partitions stored, then each model's two templates' rows only (memory: not every partition at once)
    stored = [set(database.distinct(table, ["partition_key"])["partition_key"]) for table in (MetricRow, GRSCountry)]
    keys = {PartitionKey.parse(k) for k in stored[0] & stored[1] if k}
    # the run's design (ResultsDatabase reads it from the run config): its comparisons, else base vs regional
    design = axes.current_design()
    pairs = list(comparisons_of(design))
    drs, grs, components, compared = [], [], [], []
    for base, other in pairs:
        for model in sorted({m for m, _ in keys if (m, base) in keys and (m, other) in keys}):
            compared.append((model, base, other))
            tagged = {"base_template": base, "other_template": other}
            out, change = _compare_templates(context, database, model, base, other)
            drs.append(out["drs_change"].assign(model=model, **tagged))
            grs.append(out["grs_change"].assign(model=model, **tagged))
            if change is not None:
                components.append(change.assign(**tagged))
    models = sorted({m for m, _, _ in compared})
    tables = {
        "drs_change": pd.concat(drs, ignore_index=True) if drs else pd.DataFrame(columns=["model"]),
        "grs_change": pd.concat(grs, ignore_index=True) if grs else pd.DataFrame(columns=["model"]),
        "component_change": pd.concat(components, ignore_index=True)
        if components
        else pd.DataFrame(columns=cc.CHANGE_COLUMNS),
        # the comparisons across languages: does the language move the lists toward its countries?
        "language_affinity": _affinity(context, database, design, pairs, keys, inference_of(report_settings)),
        # the comparisons of a stated template with a named one: the same contrast, stated vs signalled by a name
        "signalled": _signalled(context, database, design, pairs, keys, inference_of(report_settings)),
    }
    if tables_core.all_empty(tables):
        context.log.warning(
            f"base_vs_regional: no model has both partitions of a comparison of the design scored ("
            f"{', '.join(f'{b} vs {o}' for b, o in pairs)}); nothing to "
            "compare, nothing stored"
        )
    long_df = database.stamp(
        tables_core.to_long(
            {} if tables_core.all_empty(tables) else tables, packed=result_tables.packed("base_vs_regional")
        ).assign(audit_id=database.cross_partition_audit_id("comparison"), params_hash=""),
        "base_vs_regional",
        config_json={
            "models": models,
            "compared": [f"{m}: {b} vs {o}" for m, b, o in compared],
            "component_rule": cc.RULE_TEXT,
        },
    )
    shown = {
        f"figure {model} {f.name}": png_md(f.png, f.name)
        for model, base, other in compared
        for f in fig_core.base_vs_regional_figures(
            tables["drs_change"], tables["grs_change"], model=model, templates=(base, other)
        )
    }
    figures = {k: v for k, v in shown.items() if v is not None}
    change = tables["component_change"]
    sentences = (
        change_sentences.summary_sentences(change)
        + change_sentences.affinity_sentences(tables["language_affinity"])
        + change_sentences.signalled_sentences(tables["signalled"])
    )
    return dg.Output(
        long_df,
        metadata={
            "dagster/row_count": len(long_df),
            "models_compared": ", ".join(models) or f"none: {NO_PAIR}",
            "drs_change": table_md(tables["drs_change"], empty=NO_PAIR),
            "grs_change": table_md(tables["grs_change"].head(40), empty=NO_PAIR),
            "behaviour_moved": dg.MetadataValue.md(
                "\n".join(f"- {s}" for s in sentences) or "no model has the behaviour / needs split in both templates"
            ),
            "component_verdicts": table_md(
                _verdicts_by_comparison(change),
                empty=NO_PAIR if not models else "no behaviour / needs split stored for both templates",
            ),
            "component_change": table_md(change[change["status"] == "moved"][COMPONENT_SHOWN].head(40))
            if len(change) and (change["status"] == "moved").any()
            else "no component moved",
            "component_rule": cc.RULE_TEXT,
            "language_affinity": table_md(
                tables["language_affinity"][list(la.SHOWN)], empty="no comparison of the design crosses languages"
            ),
            "stated_vs_signalled": table_md(
                tables["signalled"][list(sig.SHOWN)],
                empty="no comparison of the design sets a name against the stated attributes",
            ),
            **figures,
        },
    )


COMPONENT_SHOWN = [
    "model",
    "source",
    "analysis",
    "value_a",
    "value_b",
    "metric",
    "component",
    "mean_base",
    "mean_regional",
    "change",
    "ci_low_change",
    "ci_high_change",
    "p_change_adjusted",
    "family_size",
]


def _affinity(context, database: ResultsDatabase, design, pairs, keys, inference) -> pd.DataFrame:
    """Language-country affinity (core.statistics.language_affinity) of each model over the comparisons of the
    design whose two templates are in different languages, from the stored items and responses of those
    partitions only; a model whose comparisons cannot be paired is named in the log, never dropped silently."""
    languages = {t.name: t.language for t in design.templates} if design is not None else {}
    crossing = [(b, o) for b, o in pairs if b in languages and o in languages and languages[b] != languages[o]]
    frames = []
    for model in sorted({m for m, _ in keys}):
        mine = [(b, o) for b, o in crossing if (model, b) in keys and (model, o) in keys]
        if not mine:
            continue
        part_keys = [str(PartitionKey(model, t)) for t in sorted({t for pair in mine for t in pair})]
        metric_rows = database.read_rows(MetricRow, part_keys)
        responses = pd.concat(
            [tables_core.from_long(metric_rows[metric_rows["partition_key"] == k])["drs_responses"] for k in part_keys],
            ignore_index=True,
        )
        try:
            frames.append(
                la.comparison_affinity(
                    database.read_rows(DRSItem, part_keys),
                    responses,
                    languages=languages,
                    comparisons=mine,
                    model=model,
                    inference=inference,
                )
            )
        except la.AffinityError as exc:
            context.log.warning(f"language_affinity: {exc}; not computed for {model}")
    if not frames:
        return pd.DataFrame(columns=["model", "template", "reference_template", *la.AFFINITY_COLUMNS])
    return pd.concat(frames, ignore_index=True)


def _signalled(context, database: ResultsDatabase, design, pairs, keys, inference) -> pd.DataFrame:
    """Stated vs signalled (core.statistics.signalled) of each model over the comparisons of the design whose
    other template is asked of the named profiles and whose base states the crossed axes, from the stored
    per-response metrics of those partitions only; a comparison that cannot be made is named in the log."""
    spec = design.names if design is not None else None
    columns = sig.SIGNALLED_COLUMNS
    if spec is None:
        return pd.DataFrame(columns=columns)
    sets = {t.name: t.profile_set for t in design.templates}
    named = [(b, o) for b, o in pairs if sets.get(o) == spec.profile_set and sets.get(b) == "full"]
    cat = design.catalogue
    frames = []
    for base, other in named:
        for model in sorted({m for m, _ in keys if (m, base) in keys and (m, other) in keys}):
            part_keys = [str(PartitionKey(model, t)) for t in (base, other)]
            rows = database.read_rows(MetricRow, part_keys)
            responses = [tables_core.from_long(rows[rows["partition_key"] == k])["drs_responses"] for k in part_keys]
            del rows
            try:
                out = sig.stated_vs_signalled(
                    *responses,
                    signals=spec.signalled,
                    crossed=design.grid.axes,
                    positions={a.name: a.position for a in cat.axes},
                    orders={a.name: list(a.values) for a in cat.axes},
                    metrics=[m for m in st.METRICS if m in responses[0].columns],
                    inference=inference,
                )
            except sig.SignalledError as exc:
                context.log.warning(f"stated vs signalled: {model}, {base} vs {other}: {exc}; not computed")
                continue
            frames.append(out.assign(model=model, stated_template=base, signalled_template=other))
    if not frames:
        return pd.DataFrame(columns=columns)
    return pd.concat(frames, ignore_index=True)[columns]


def _verdicts_by_comparison(change: pd.DataFrame) -> pd.DataFrame:
    """cc.model_verdicts of each template comparison, the comparison named in a first column."""
    parts = [
        cc.model_verdicts(rows).assign(compared=f"{base} vs {other}")
        for (base, other), rows in cc.by_comparison(change)
        if rows is not None and len(rows)
    ]
    if not parts:
        return cc.model_verdicts(change)
    out = pd.concat(parts, ignore_index=True)
    return out[["compared", *(c for c in out.columns if c != "compared")]]


def _compare_templates(
    context: dg.AssetExecutionContext, database: ResultsDatabase, model: str, base: str, other: str
) -> tuple[dict[str, pd.DataFrame], Optional[pd.DataFrame]]:
    """One model's ``base`` and ``other`` partitions compared: the DRS and GRS change tables
    (metrics.base_vs_regional) and the component change (None where neither has the split)."""
    pair = [str(PartitionKey(model, t)) for t in (base, other)]
    grs_rows = database.read_rows(GRSCountry, pair)
    summaries = {  # the one table of each partition, typed (not every metric table through the long form)
        t: database.partition_tables(MetricRow, key, names=["drs_summary"])["drs_summary"]
        for t, key in zip((base, other), pair, strict=True)
    }
    grs_t = {t: grs_rows[grs_rows["partition_key"] == key] for t, key in zip((base, other), pair, strict=True)}
    out = metrics.base_vs_regional(summaries[base], summaries[other], grs_t[base], grs_t[other])
    del grs_rows
    return out, _component_change(context, database, model, pair, templates=(base, other))


def _component_change(
    context: dg.AssetExecutionContext,
    database: ResultsDatabase,
    model: str,
    pair: list[str],
    templates: tuple[str, str],
) -> Optional[pd.DataFrame]:
    """One model's contrasts, base vs other template, per component (core.statistics.component_change), from
    the stored statistics (behaviour_needs) and geography (geo_contrasts) of its two partitions only;
    None, with a line in the log, when neither template has them."""
    base, other = templates
    side = {}
    for template, key in zip((base, other), pair, strict=True):
        tables = {}
        for row_model, name in ((StatisticRow, "behaviour_needs"), (GeographyRow, "geo_contrasts")):
            table = database.partition_tables(row_model, key, names=[name]).get(name)
            if table is not None:
                tables[name] = table
        side[template] = tables
    if not side[base] and not side[other]:
        context.log.info(
            f"{model}: no behaviour / needs split stored for {base} or {other} (materialize "
            "audit_statistics and audit_geography): component change not computed"
        )
        return None
    change = cc.component_change(side[base], side[other], model=model)
    moved = change[(change["component"] == "behaviour") & (change["status"] == "moved")]
    context.log.info(
        f"{model}: {base} vs {other}: {len(moved)} behaviour part(s) moved of "
        f"{int(change[change['component'] == 'behaviour']['status'].isin(['moved', 'not moved']).sum())} "
        "tested"
    )
    return change
