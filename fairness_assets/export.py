"""The results of an audit as files: what ``fairness-audit score`` writes to ``--out``.

Everything is read back from the results database the assets wrote (one row source for the UI,
the report and the files): the recommendations, the DRS items with their components, GRS per
country, the analysis tables, base vs regional, the statistics (with ``behaviour_needs``: every
counterfactual pair split into behaviour and needs, column ``component`` valued ``total`` /
``behaviour`` / ``needs``, and ``envy``), the scoring parameters, and the
latest report (HTML, Markdown and its figures). Tables stored one partition per key get the
``model`` and ``template`` columns in front.
"""

from __future__ import annotations

import json
import math
import shutil
from pathlib import Path
from typing import Callable, Sequence

import pandas as pd

from fairness_assets.core import tables as tables_core
from fairness_assets.core.partition import PartitionKey, by_partition
from resources import database as D

ANALYSIS = ["drs_responses", "drs_summary", "academic_alignment", "volume_diversity", "concentration",
            "reduced_context_top"]
STATISTICS = ["run_variability", "counterfactual_disparity", "behaviour_needs", "envy"]
GEOGRAPHY = ["region_metrics", "geo_contrasts", "class_gap_interactions", "home_bias", "home_bias_change",
             "class_gap_decomposition", "families"]
TABLES = ["recommendations", "drs_items", "grs_by_country", *ANALYSIS]
_INTERNAL = ["id", "partition_key", "provenance_id", "params_hash"]


def _front(df: pd.DataFrame) -> pd.DataFrame:
    front = [c for c in ("model", "template") if c in df.columns]
    return df[front + [c for c in df.columns if c not in front]]


def _split_key(df: pd.DataFrame) -> pd.DataFrame:
    """``model`` and ``template`` from ``partition_key`` where the table does not carry them."""
    keys = [PartitionKey.parse(k) for k in df["partition_key"]]
    out = df.copy()
    for col in ("model", "template"):
        if col not in out.columns:
            out[col] = pd.Series([getattr(k, col) for k in keys], index=df.index, dtype=object)
    return out


def _wide(long: pd.DataFrame, names: list[str]) -> dict[str, pd.DataFrame]:
    """Long stored tables (MetricRow/StatisticRow) of every partition -> one wide table per name."""
    frames: dict[str, list[pd.DataFrame]] = {n: [] for n in names}
    for key, part in by_partition(long):
        model, template = key.model, key.template
        wide = tables_core.from_long(part)
        for n in names:
            if n in wide:
                frames[n].append(wide[n].assign(model=model, template=template))
    out = {}
    for n, fs in frames.items():
        kept = [f for f in fs if not f.empty] or fs[:1]
        out[n] = _front(pd.concat(kept, ignore_index=True)) if kept else pd.DataFrame(columns=["model", "template"])
    return out


def read_results(database: D.ResultsDatabase) -> dict[str, pd.DataFrame]:
    """Every exported table, by name, from the results database."""
    recs = _front(database.read_rows(D.Recommendation))
    items = database.read_rows(D.DRSItem)
    score_cols = [c for c in items.columns if c not in recs.columns or c in ("partition_key", "response_id", "item_index")]
    drs_items = recs.merge(items[[c for c in score_cols if c not in ("id", "provenance_id")]],
                           on=["partition_key", "response_id", "item_index"], how="inner", validate="one_to_one")
    out = {"recommendations": recs, "drs_items": _front(drs_items),
           "grs_by_country": _front(_split_key(database.read_rows(D.GRSCountry)))}
    metric_rows = database.read_rows(D.MetricRow)
    out.update(_wide(metric_rows, ANALYSIS))
    comparison = tables_core.from_long(metric_rows[metric_rows["partition_key"] == ""])
    for key in ("drs_change", "grs_change"):
        out[f"base_vs_regional_{key}"] = comparison.get(key, pd.DataFrame(columns=["model"]))
    stats = _wide(database.read_rows(D.StatisticRow), STATISTICS)
    for name in ("counterfactual_disparity", "behaviour_needs"):
        for flag in ("significant", "by_construction"):
            if flag in stats[name].columns:
                stats[name][flag] = stats[name][flag].astype(str) == "True"
    out.update(stats)
    geography = _wide(database.read_rows(D.GeographyRow), GEOGRAPHY)
    for name, df in geography.items():
        if "significant" in df.columns:
            df["significant"] = df["significant"].astype(str) == "True"
        out[f"geography_{name}"] = df
    return {k: v.drop(columns=[c for c in _INTERNAL if c in v.columns]) if k != "recommendations" else
            v.drop(columns=[c for c in ("id",) if c in v.columns]) for k, v in out.items()}


def scoring_parameters(database: D.ResultsDatabase) -> dict:
    """The parameters the scores were computed with (their provenance record)."""
    prov = database.read_rows(D.Provenance) if hasattr(database, "read_rows") else pd.DataFrame()
    prov = prov[prov["asset"] == "scores"].sort_values("created_at") if len(prov) else prov
    return json.loads(prov["config_json"].iloc[-1]) if len(prov) else {}


def export_results(database_url: str, outdir: Path, log: Callable[[str], None] = print) -> dict[str, pd.DataFrame]:
    """Write every table (CSV), ``params.json`` and the latest report (report.html, report.md,
    figures/) of the results database at ``database_url`` to ``outdir``; returns the tables."""
    database = D.ResultsDatabase(url=database_url)
    try:
        written = read_results(database)
        for name, df in written.items():
            df.to_csv(outdir / f"{name}.csv", index=False)
        (outdir / "params.json").write_text(json.dumps(scoring_parameters(database), indent=2, sort_keys=True))
        reports = database.read_rows(D.ReportFile)
    finally:
        database.dispose()
    if len(reports):
        folder = Path(reports.sort_values("created_at")["html_path"].iloc[-1]).parent
        for path in folder.rglob("*"):
            if path.is_file():
                target = outdir / path.relative_to(folder)
                target.parent.mkdir(parents=True, exist_ok=True)
                shutil.copyfile(path, target)
        log(f"report written to {outdir / 'report.html'} ({int(reports['figures'].iloc[-1])} figures)")
    else:
        log("no scored partition: no report written")
    return written


def notes_table(text_notes: pd.DataFrame, recommendations: pd.DataFrame) -> pd.DataFrame:
    """notes.csv: what was used but altered or cut. Rows of the responses file whose text was
    altered to be stored (``text``), and answers with more items than are scored (``items left
    out``: the first k scored, the rest counted; METHOD.md §9)."""
    rows = [{"kind": "text", "row": r.row, "response_id": None, "model": None, "template": None,
             "detail": f"{r.column}: {r.note}"} for r in text_notes.itertuples(index=False)] if len(text_notes) else []
    if len(recommendations) and "n_items_left_out" in recommendations:
        answers = recommendations.drop_duplicates("response_id")
        for a in answers[answers["n_items_left_out"] > 0].itertuples(index=False):
            kept = int(a.n_items_found) - int(a.n_items_left_out)
            rows.append({"kind": "items left out", "row": None, "response_id": a.response_id, "model": a.model,
                         "template": a.template, "detail": f"{int(a.n_items_found)} items found, the first {kept} "
                         f"distinct items scored, {int(a.n_items_left_out)} left out"})
    return pd.DataFrame(rows, columns=["kind", "row", "response_id", "model", "template", "detail"])


def _num(value, spec: str) -> str:
    """A number for the summary; 'n/a' where it is undefined (e.g. no recommendation at all)."""
    return "n/a" if value is None or (isinstance(value, float) and math.isnan(value)) else format(value, spec)


def _count(value) -> str:
    return "n/a" if value is None or (isinstance(value, float) and math.isnan(value)) else str(int(value))


def _escape_pipes(text: str) -> str:
    return str(text).replace("|", "\\|")


def summary_markdown(written: dict[str, pd.DataFrame], rows_read: int, n_rejected: int, corpus_path: str,
                     responses: str, failures: Sequence[str] = ()) -> str:
    """summary.md: one line per partition (responses, recommendations, matched, mean DRS, US+UK
    share, country coverage, countries with GRS > 0), then a "Failed" section with one line per
    failure (``failures``: what failed, which step, the cause) when anything failed."""
    lines = ["# Audit summary", "", f"- responses file: `{responses}` ({rows_read} rows, {n_rejected} not usable)",
             f"- corpus: `{corpus_path}`", "",
             "| model | template | responses | recommendations | matched | mean DRS | US+UK share | country coverage | countries with GRS > 0 |",
             "| --- | --- | --- | --- | --- | --- | --- | --- | --- |"]
    if failures:
        lines.insert(4, f"- **{len(failures)} failure(s)**: what could be scored is below and in the files; "
                        "see [Failed](#failed) and `score.log` for the stack traces")
    recs = written.get("recommendations", pd.DataFrame())
    if len(recs) and "n_items_left_out" in recs:
        answers = recs.drop_duplicates("response_id")
        cut = answers[answers["n_items_left_out"] > 0]
        if len(cut):
            lines.insert(4, f"- {len(cut)} answer(s) name more items than are scored: the first "
                            f"{int((cut['n_items_found'] - cut['n_items_left_out']).max())} distinct items of each are "
                            f"scored, {int(cut['n_items_left_out'].sum())} item(s) left out and counted "
                            "(`n_items_left_out`, notes.csv; METHOD.md §9)")
    empty = pd.DataFrame(columns=["model", "template"])
    vol, conc = written.get("volume_diversity", empty), written.get("concentration", empty)
    drs, grs = written.get("drs_responses", empty), written.get("grs_by_country", empty)
    for (model, template), v in vol.groupby(["model", "template"], sort=True):
        v = v.iloc[0]
        c = conc[(conc["model"] == model) & (conc["template"] == template)]
        c = c.iloc[0] if len(c) else {}
        d = drs[(drs["model"] == model) & (drs["template"] == template)]["drs"] if "drs" in drs else pd.Series(dtype=float)
        g = grs[(grs["model"] == model) & (grs["template"] == template)]["grs"] if "grs" in grs else pd.Series(dtype=float)
        lines.append(f"| {_escape_pipes(model)} | {_escape_pipes(template)} | {_count(v['responses'])} | {_count(v['recommendations'])} | "
                     f"{_count(v['matched_recommendations'])} | {_num(float(d.mean()) if len(d) else None, '.4f')} | "
                     f"{_num(c.get('us_uk_share'), '.1%')} | {_num(c.get('country_coverage'), '.1%')} | {int((g > 0).sum())} |")
    if failures:
        lines += ["", "## Failed", "",
                  "Each failure: what it covers, the step and its cause (stack traces in `score.log`). Tables of a "
                  "failed partition hold what its finished steps stored.", ""]
        lines += [f"- {_escape_pipes(f)}" for f in failures]
    return "\n".join(lines) + "\n"
