"""One audit's report, assembled from its tables: statistics, comparisons, figures, text.

The Dagster assets (defs/reporting) and the command line (``fairness-audit score``) both call
these functions, so a report from either path is built the same way. Pure: no Dagster, no
database, no files (the callers write the returned text and PNG bytes).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Mapping, Optional, Sequence

import pandas as pd

from .partition import PartitionKey
from . import figures as fig
from . import report as rep
from . import stats

HEADLINE_METRICS = ("drs", "acc", "rep", "acad")


@dataclass
class PartitionResult:
    """What one model x template produced (tables as ``metrics.score_partition`` names them)."""

    model: str
    template: str
    items: pd.DataFrame                      # recommendations: one row per item (texts, match, country)
    tables: Mapping[str, pd.DataFrame]       # drs_responses, drs_summary, concentration, volume_diversity, ...
    grs: pd.DataFrame                        # grs_by_country
    statistics: Mapping[str, pd.DataFrame] = field(default_factory=dict)  # partition_statistics()
    drift: Optional[pd.DataFrame] = None     # core.drift.compare() against the previous audit
    drift_labels: tuple[str, str] = ("previous", "current")

    @property
    def key(self) -> str:
        return str(PartitionKey(self.model, self.template))


def partition_statistics(drs_responses: pd.DataFrame, n_boot: int = 2000, n_perm: int = 10_000, seed: int = 0,
                         correction: str = "holm", alpha: float = 0.05, level: float = 0.95) -> dict[str, pd.DataFrame]:
    """Run-to-run variability and paired counterfactual disparity of one partition's responses."""
    return {
        "run_variability": stats.run_variability(drs_responses, n_boot=n_boot, level=level, seed=seed),
        "counterfactual_disparity": stats.counterfactual_disparity(
            drs_responses, n_perm=n_perm, n_boot=n_boot, level=level, seed=seed, correction=correction, alpha=alpha),
    }


def comparison_table(parts: Sequence[PartitionResult]) -> pd.DataFrame:
    """Headline metrics of every partition side by side: ``model, template, metric, value,
    ci_low, ci_high`` (the interval resamples runs; US+UK share and coverage have none)."""
    rows = []
    for p in parts:
        var = p.statistics.get("run_variability")
        if var is not None and len(var):
            overall = var[(var["group_by"] == "overall") & (var["unit"] == "run")
                          & var["metric"].isin(HEADLINE_METRICS)]
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


def partition_figures(p: PartitionResult) -> list[fig.Figure]:
    """Every §8.8 figure of one partition, plus its drift figure when it has a previous audit."""
    figures = fig.all_partition_figures({"drs_items": p.items, "grs_by_country": p.grs}, p.model, p.template)
    return figures + partition_figures_drift(p)


def partition_figures_drift(p: PartitionResult) -> list[fig.Figure]:
    """The drift figure of one partition (metrics that changed since its previous audit)."""
    if p.drift is None or not len(p.drift):
        return []
    d = p.drift[p.drift["status"] == "changed"]
    if not len(d):
        return []
    return [_with_partition(fig.drift(d, model=p.model, previous_label=p.drift_labels[0],
                                      current_label=p.drift_labels[1]), p.template)]


def _with_partition(f: fig.Figure, template: str) -> fig.Figure:
    return fig.Figure(f.name, f.title, f.caption, f.png, f.model, template, f.skipped_reason)


def comparison_figures(parts: Sequence[PartitionResult], base_vs_regional: Optional[Mapping[str, pd.DataFrame]] = None
                       ) -> list[fig.Figure]:
    """Models side by side (one figure per template with two or more models), and base vs
    regional per model."""
    out = []
    table = comparison_table(parts)
    for template, sub in table.groupby("template", sort=True):
        if sub["model"].nunique() >= 2:
            out.append(fig.model_comparison(sub, template=str(template)))
    if base_vs_regional:
        drs_change, grs_change = base_vs_regional.get("drs_change"), base_vs_regional.get("grs_change")
        models = sorted(set(drs_change["model"]) if drs_change is not None and "model" in drs_change else [])
        for model in models:
            out.extend(fig.base_vs_regional_figures(drs_change, grs_change, model=model))
    return out


def report_tables(parts: Sequence[PartitionResult], base_vs_regional: Optional[Mapping[str, pd.DataFrame]] = None
                  ) -> dict[str, pd.DataFrame]:
    """The report's tables, in reading order: comparison first, then each partition's."""
    tables: dict[str, pd.DataFrame] = {}
    if len(parts) > 1:
        tables["Models side by side (headline metrics, 95% bootstrap interval over runs)"] = comparison_table(parts)
    if base_vs_regional:
        for name, df in base_vs_regional.items():
            if df is not None and len(df):
                tables[f"Base vs regional: {name.replace('_', ' ')} (%)"] = df
    for p in parts:
        t = p.tables
        where = f"{p.model} / {p.template}"
        for name, title in (("drs_summary", "DRS, Acc, Rep, Acad overall and by group"),
                            ("academic_alignment", "Academic alignment by group"),
                            ("volume_diversity", "Volume and diversity"),
                            ("concentration", "US+UK share and country coverage")):
            if t.get(name) is not None and len(t[name]):
                tables[f"{where}: {title}"] = t[name]
        var = p.statistics.get("run_variability")
        if var is not None and len(var):
            tables[f"{where}: run-to-run variability"] = var[
                ["group_by", "group", "metric", "unit", "n_units", "mean", "sd", "ci_low", "ci_high", "note"]]
        dis = p.statistics.get("counterfactual_disparity")
        if dis is not None and len(dis):
            # significant rows first, then by the size of the difference: a long table (40
            # nationalities) is cut at the report's row limit, never before a significant row
            order = (dis.assign(_sig=~dis["significant"].astype(bool), _size=-dis["mean_diff"].abs().fillna(-1))
                     .sort_values(["_sig", "_size"], kind="stable").index)
            dis = dis.loc[order].reset_index(drop=True)
            shown = stats.disparity_display(dis).drop(columns=["model", "template"], errors="ignore")
            shown["significant"] = dis["significant"].to_numpy()
            tables[f"{where}: counterfactual disparity (paired; {dis['correction'].iloc[0]} correction)"] = shown
        grs = p.grs[p.grs["n_recommendations"] > 0] if "n_recommendations" in p.grs else p.grs
        if len(grs):
            tables[f"{where}: GRS of the countries recommended"] = grs.sort_values("grs", ascending=False)[
                [c for c in ("country", "iso3", "total_unis", "recs", "n_recommendations", "avail", "repr",
                             "scaled_repr", "rep_covg", "grs") if c in grs.columns]]
        top = t.get("reduced_context_top")
        if top is not None and len(top):
            tables[f"{where}: reduced context, top items per attribute value"] = top
        if p.drift is not None and len(p.drift):
            changed = p.drift[p.drift["status"] != "unchanged"]
            tables[f"{where}: drift since {p.drift_labels[0]}"] = (
                changed.head(60) if len(changed) else p.drift.head(0))
    return tables


def build_report(parts: Sequence[PartitionResult], *, provenance: Mapping[str, Any], quality: Optional[pd.DataFrame],
                 base_vs_regional: Optional[Mapping[str, pd.DataFrame]] = None,
                 title: str = "LLM university-recommendation fairness audit",
                 notes: Sequence[str] = (),
                 figures_by_partition: Optional[Mapping[str, Sequence[fig.Figure]]] = None,
                 ) -> tuple[str, str, list[fig.Figure]]:
    """``(html, markdown, figures)`` of one audit (every partition given).

    ``figures_by_partition`` (``model|template`` -> figures) reuses figures already drawn;
    partitions without an entry have theirs drawn here."""
    if not parts:
        raise ValueError("build_report: no scored partition to report on")
    summary: list[str] = []
    for p in parts:
        summary += rep.disparity_summary(
            p.tables.get("drs_summary", pd.DataFrame()), p.statistics.get("counterfactual_disparity"), p.grs,
            concentration=p.tables.get("concentration"), model=p.model, template=p.template,
            metrics=("drs", "acc", "rep"))
    figures = comparison_figures(parts, base_vs_regional)
    for p in parts:
        given = (figures_by_partition or {}).get(p.key)
        if given is None:
            figures += partition_figures(p)
        else:
            figures += list(given) + [f for f in partition_figures_drift(p)]
    html, markdown = rep.render_report(title=title, provenance=provenance, tables=report_tables(parts, base_vs_regional),
                                       figures=figures, quality=quality, summary=summary, notes=notes)
    return html, markdown, figures
