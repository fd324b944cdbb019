"""The report's "Tables" section, in reading order: the models side by side, base vs regional (component by
component too), then each partition's tables (summary, statistics, GRS, drift)."""

from __future__ import annotations

from typing import Any, Mapping, Optional, Sequence

import pandas as pd

from ...common import result_tables as rt
from ...scoring import drift as drift_core
from ...statistics import component_change as cc
from ...statistics import language_affinity as la
from ...statistics import signalled as sig
from ...statistics import stats
from .. import report as rep
from ._frames import _cols, _integer_counts
from .partition import HEADLINE_METRICS, PartitionDigest, PartitionResult, _light


def comparison_table(parts: Sequence[PartitionResult]) -> pd.DataFrame:
    """Headline metrics of every partition side by side: ``model, template, metric, value,
    ci_low, ci_high`` (the interval resamples runs; US+UK share and coverage have none)."""
    rows = []
    for p in parts:
        var = p.statistics.get("run_variability")
        if var is not None and len(var):
            overall = var[
                (var["group_by"] == "overall") & (var["unit"] == "run") & var["metric"].isin(HEADLINE_METRICS)
            ]
            for r in overall.itertuples(index=False):
                rows.append((p.model, p.template, r.metric, r.mean, r.ci_low, r.ci_high))
        else:
            summary = p.tables.get("drs_summary")
            if summary is not None and len(summary):
                row = summary[summary["group_by"] == "overall"]
                for m in HEADLINE_METRICS:
                    if len(row) and m in row and pd.notna(row[m].iloc[0]):
                        rows.append((p.model, p.template, m, float(row[m].iloc[0]), float("nan"), float("nan")))
        conc = p.tables.get("concentration")
        if conc is not None and len(conc):
            for m in ("us_uk_share", "country_coverage"):
                rows.append((p.model, p.template, m, float(conc[m].iloc[0]), float("nan"), float("nan")))
    return pd.DataFrame(rows, columns=["model", "template", "metric", "value", "ci_low", "ci_high"])


def headline_tables(
    parts: Sequence[Any], base_vs_regional: Optional[Mapping[str, pd.DataFrame]] = None
) -> dict[str, pd.DataFrame]:
    """The report's tables over every partition: models side by side, then base vs regional."""
    tables: dict[str, pd.DataFrame] = {}
    if len(parts) > 1:
        tables["Models side by side (headline metrics, 95% bootstrap interval over runs)"] = comparison_table(
            [_light(p) for p in parts]
        )
    if base_vs_regional:
        for name, df in base_vs_regional.items():
            if name == "component_change":
                tables.update(component_change_tables(df))
            elif name in ("language_affinity", "signalled"):
                if df is not None and len(df):
                    title = rt.title("base_vs_regional", name, correction=str(df["correction"].iloc[0]))
                    tables[title] = _cols(df, la.SHOWN if name == "language_affinity" else sig.SHOWN)
            elif df is not None and len(df):
                for (base, other), part in cc.by_comparison(df):
                    shown = part.drop(columns=["base_template", "other_template"], errors="ignore")
                    tables[rt.title("base_vs_regional", name, **compared_fields(base, other))] = shown
    return tables


def compared_fields(base: str, other: str) -> dict[str, str]:
    """The fields of a template comparison's titles: ``{compared}`` ("Base vs regional"), ``{base}``, ``{other}``."""
    return {"compared": f"{base[:1].upper()}{base[1:]} vs {other}", "base": base, "other": other}


def report_tables(
    parts: Sequence[Any], base_vs_regional: Optional[Mapping[str, pd.DataFrame]] = None
) -> dict[str, pd.DataFrame]:
    """The report's tables, in reading order: comparison first, then each partition's
    (:class:`PartitionResult` or :class:`PartitionDigest`)."""
    tables = headline_tables(parts, base_vs_regional)
    for p in parts:
        tables.update(p.tables if isinstance(p, PartitionDigest) else partition_tables(p))
    return tables


def partition_tables(p: PartitionResult) -> dict[str, pd.DataFrame]:
    """One partition's tables of the report's "Tables" section, in reading order (uncut)."""
    tables: dict[str, pd.DataFrame] = {}
    t = p.tables
    where = f"{p.model} / {p.template}"
    for name in ("drs_summary", "academic_alignment", "volume_diversity", "concentration"):
        if t.get(name) is not None and len(t[name]):
            tables[f"{where}: {rt.title('analysis_tables', name)}"] = t[name]
    var = p.statistics.get("run_variability")
    if var is not None and len(var):
        tables[f"{where}: {rt.title('audit_statistics', 'run_variability')}"] = var[
            ["group_by", "group", "metric", "unit", "n_units", "mean", "sd", "ci_low", "ci_high", "note"]
        ]
    dis = p.statistics.get("counterfactual_disparity")
    if dis is not None and len(dis):
        # significant rows first, then by the size of the difference: a long table (40
        # nationalities) is cut at the report's row limit, never before a significant row
        order = (
            dis.assign(_sig=~dis["significant"].astype(bool), _size=-dis["mean_diff"].abs().fillna(-1))
            .sort_values(["_sig", "_size"], kind="stable")
            .index
        )
        dis = dis.loc[order].reset_index(drop=True)
        shown = stats.disparity_display(dis).drop(columns=["model", "template"], errors="ignore")
        shown["significant"] = dis["significant"].to_numpy()
        tables[
            f"{where}: {rt.title('audit_statistics', 'counterfactual_disparity', correction=dis['correction'].iloc[0])}"
        ] = shown
    grs = p.grs[p.grs["n_recommendations"] > 0] if "n_recommendations" in p.grs else p.grs
    if len(grs):
        tables[f"{where}: {rt.title('grs_by_country', 'grs_by_country')}"] = grs.sort_values("grs", ascending=False)[
            [
                c
                for c in (
                    "country",
                    "iso3",
                    "total_unis",
                    "recs",
                    "n_recommendations",
                    "avail",
                    "repr",
                    "scaled_repr",
                    "rep_covg",
                    "grs",
                )
                if c in grs.columns
            ]
        ]
    top = t.get("reduced_context_top")
    if top is not None and len(top):
        tables[f"{where}: {rt.title('analysis_tables', 'reduced_context_top')}"] = top
    if p.drift is not None and len(p.drift):
        headline = p.drift[~drift_core.is_contrast(p.drift)] if "scope" in p.drift else p.drift
        changed = headline[headline["status"] != "unchanged"]
        tables[f"{where}: drift since {p.drift_labels[0]}"] = changed.head(60) if len(changed) else headline.head(0)
        components = drift_core.component_drift(p.drift) if "scope" in p.drift else pd.DataFrame()
        if len(components):
            tables[
                f"{where}: drift since {p.drift_labels[0]}, behaviour part (what the model did) and outcome "
                "(total) of every contrast significant in either audit"
            ] = components
    return tables


COMPONENT_CHANGE_SHOWN = (
    "model",
    "source",
    "analysis",
    "value_a",
    "value_b",
    "metric",
    "component",
    "mean_base",
    "ci_low_base",
    "ci_high_base",
    "mean_regional",
    "ci_low_regional",
    "ci_high_regional",
    "change",
    "ci_low_change",
    "ci_high_change",
    "p_change_adjusted",
    "family_size",
    "status",
)


def component_change_tables(change: Optional[pd.DataFrame]) -> dict[str, pd.DataFrame]:
    """Base vs regional (and each other template comparison of the design), component by component
    (core.statistics.component_change): per model, how many behaviour / outcome / needs parts were tested and
    moved; then the parts that moved, behaviour first (largest change first). Empty when the table is missing
    or empty."""
    if change is None or not len(change):
        return {}
    out: dict[str, pd.DataFrame] = {}
    for (base, other), part in cc.by_comparison(change):
        fields = compared_fields(base, other)
        ch = _integer_counts(part.assign(moved=part["moved"].map(rep.truthy).eq(True)))
        out[rt.title("base_vs_regional", "component_change", **fields)] = cc.model_verdicts(ch)
        moved = ch[ch["moved"]]
        if len(moved):
            order = {"behaviour": 0, "total": 1, "needs": 2}
            moved = moved.assign(
                _c=moved["component"].map(order).fillna(9),
                _a=-pd.to_numeric(moved["change"], errors="coerce").abs().fillna(0),
            ).sort_values(["model", "_c", "_a"], kind="stable")
            out[
                f"{fields['compared']}: the contrasts whose part moved (change = {other} - {base}; behaviour = the "
                "lists, scored for the same students)"
            ] = _cols(moved, COMPONENT_CHANGE_SHOWN)
    return out
