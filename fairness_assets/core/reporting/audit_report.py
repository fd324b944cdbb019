"""One audit's report, assembled from its tables: statistics, comparisons, figures, text.

The Dagster assets (defs/reporting) and the command line (``fairness-audit score``) both call
these functions, so a report from either path is built the same way. Pure: no Dagster, no
database, no files (the callers write the returned text and PNG bytes).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Mapping, Optional, Sequence

import pandas as pd

from ..common import metric_catalogue as catalogue
from ..common import result_tables as rt
from ..common.partition import PartitionKey
from ..scoring import drift as drift_core
from ..statistics import component_change as cc
from ..statistics import decompose, geostats, stats
from . import figures as fig
from . import report as rep
from . import scorecard as sc

HEADLINE_METRICS = catalogue.names("response")


@dataclass
class PartitionResult:
    """What one model x template produced (tables as ``metrics.score_partition`` names them)."""

    model: str
    template: str
    items: pd.DataFrame  # recommendations: one row per item (texts, match, country)
    tables: Mapping[str, pd.DataFrame]  # drs_responses, drs_summary, concentration, volume_diversity, ...
    grs: pd.DataFrame  # grs_by_country
    statistics: Mapping[str, pd.DataFrame] = field(default_factory=dict)  # partition_statistics()
    drift: Optional[pd.DataFrame] = None  # core.scoring.drift.compare() against the previous audit
    drift_labels: tuple[str, str] = ("previous", "current")

    @property
    def key(self) -> str:
        return str(PartitionKey(self.model, self.template))


def partition_statistics(
    drs_responses: pd.DataFrame,
    n_boot: int = 2000,
    n_perm: int = 10_000,
    seed: int = 0,
    correction: str = "holm",
    alpha: float = 0.05,
    level: float = 0.95,
    *,
    items: Optional[pd.DataFrame] = None,
    distances: Optional[pd.DataFrame] = None,
    student_iso3: Optional[Mapping[str, str]] = None,
    params: Any = None,
) -> dict[str, pd.DataFrame]:
    """Run-to-run variability and paired counterfactual disparity of one partition's responses.

    Given the partition's scored ``items`` (the ``drs_items`` table), the square capital
    ``distances`` (ISO3), the students' ``student_iso3`` and the scoring ``params``, also the
    behaviour / needs split of every counterfactual pair (``behaviour_needs``, with a
    ``component`` column valued ``total`` / ``behaviour`` / ``needs``) and ``envy``
    (:func:`decompose.decompose`, same resamples, permutations, seed and correction)."""
    out = {
        "run_variability": stats.run_variability(drs_responses, n_boot=n_boot, level=level, seed=seed),
        "counterfactual_disparity": stats.counterfactual_disparity(
            drs_responses, n_perm=n_perm, n_boot=n_boot, level=level, seed=seed, correction=correction, alpha=alpha
        ),
    }
    if items is not None and distances is not None and params is not None and len(items):
        out.update(
            decompose.decompose(
                items,
                distances,
                dict(student_iso3 or {}),
                params,
                n_perm=n_perm,
                n_boot=n_boot,
                level=level,
                seed=seed,
                correction=correction,
                alpha=alpha,
            )
        )
    return out


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


def partition_figures(p: PartitionResult) -> list[fig.Figure]:
    """Every §8.8 figure of one partition, plus its drift figure when it has a previous audit."""
    figures = fig.all_partition_figures({"drs_items": p.items, "grs_by_country": p.grs}, p.model, p.template)
    return figures + partition_figures_drift(p)


def partition_figures_drift(p: PartitionResult) -> list[fig.Figure]:
    """The drift figure of one partition (metrics that changed since its previous audit)."""
    if p.drift is None or not len(p.drift):
        return []
    d = p.drift[p.drift["status"] == "changed"]
    if "scope" in d:
        d = d[~drift_core.is_contrast(d)]  # the contrasts have their own table, not the figure
    if not len(d):
        return []
    return [
        _with_partition(
            fig.drift(d, model=p.model, previous_label=p.drift_labels[0], current_label=p.drift_labels[1]), p.template
        )
    ]


def _with_partition(f: fig.Figure, template: str) -> fig.Figure:
    return fig.Figure(f.name, f.title, f.caption, f.png, f.model, template, f.skipped_reason)


def comparison_figures(
    parts: Sequence[PartitionResult], base_vs_regional: Optional[Mapping[str, pd.DataFrame]] = None
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
            elif df is not None and len(df):
                tables[rt.title("base_vs_regional", name)] = df
    return tables


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


# ----------------------------------------------------------------------------- one partition, digested (issue 19.5)
@dataclass
class PartitionDigest:
    """What the report shows of one partition, computed from its full tables by :func:`digest`:
    its summary sentences, its tables cut to the rows the report shows (each remembering how many
    rows it had, ``attrs["total_rows"]``), its behaviour and envy tables, its figures, and a light
    :class:`PartitionResult` holding only the headline rows the comparison across partitions needs.
    A caller that digests each partition as it reads it holds, for the whole report, what the
    report shows, not every partition's statistics (issue 19.5: memory bounded by design)."""

    part: PartitionResult
    behaviour_lines: list[str]
    outcome_lines: list[str]
    tables: dict[str, pd.DataFrame]
    behaviour_tables: dict[str, pd.DataFrame]
    figures: list[fig.Figure]
    significant: int
    audit_ids: list[str]
    scorecard_row: pd.DataFrame = field(default_factory=lambda: pd.DataFrame(columns=list(sc.ROW_COLUMNS)))
    scorecard_findings: pd.DataFrame = field(default_factory=lambda: pd.DataFrame(columns=list(sc.FINDING_COLUMNS)))

    @property
    def key(self) -> str:
        return self.part.key

    @property
    def model(self) -> str:
        return self.part.model

    @property
    def template(self) -> str:
        return self.part.template


def cut_rows(df: Optional[pd.DataFrame], max_rows: int = rep.MAX_ROWS) -> Optional[pd.DataFrame]:
    """The first ``max_rows`` rows of a report table, remembering how many rows it had (the
    report says "Showing the first 200 of 16,000 rows" from ``attrs["total_rows"]``)."""
    if df is None or len(df) <= max_rows:
        return df
    out = df.head(max_rows).copy()
    out.attrs["total_rows"] = int(df.attrs.get("total_rows", len(df)))
    return out


def _light(p: Any) -> PartitionResult:
    """A partition's headline rows only: what :func:`comparison_table` and the comparison
    figures read (the overall, per-run variability rows, the overall DRS row, the concentration)."""
    if isinstance(p, PartitionDigest):
        return p.part
    var = p.statistics.get("run_variability")
    stats_light = {}
    if var is not None and len(var):
        stats_light["run_variability"] = var[(var["group_by"] == "overall") & (var["unit"] == "run")]
    summary = p.tables.get("drs_summary")
    tables = {
        k: v
        for k, v in (
            (
                "drs_summary",
                summary[summary["group_by"] == "overall"]
                if summary is not None and len(summary) and "group_by" in summary
                else summary,
            ),
            ("concentration", p.tables.get("concentration")),
        )
        if v is not None
    }
    keep = [c for c in ("partition_key", "audit_id") if c in p.items.columns]
    items = p.items[keep].drop_duplicates() if keep else p.items.iloc[0:0, 0:0]
    return PartitionResult(p.model, p.template, items, tables, p.grs.iloc[0:0], stats_light)


def digest(
    p: PartitionResult, figures: Optional[Sequence[fig.Figure]] = None, max_rows: int = rep.MAX_ROWS
) -> PartitionDigest:
    """Everything the report shows of partition ``p``, computed from its full tables (the summary
    sentences see every row; only the shown rows of each table are kept). ``figures``: the
    partition's §8.8 figures already drawn (``None``: drawn here from its items)."""
    dis = p.statistics.get("counterfactual_disparity")
    behaviour_lines = rep.behaviour_findings(p.statistics.get("behaviour_needs"), model=p.model, template=p.template)
    outcome_lines = rep.disparity_summary(
        p.tables.get("drs_summary", pd.DataFrame()),
        dis,
        p.grs,
        concentration=p.tables.get("concentration"),
        model=p.model,
        template=p.template,
        metrics=("drs", "acc", "rep"),
        decomposition=p.statistics.get("behaviour_needs"),
    )
    drawn = partition_figures(p) if figures is None else list(figures) + partition_figures_drift(p)
    audit_ids = sorted({str(a) for a in p.items["audit_id"].unique()}) if "audit_id" in p.items else []
    return PartitionDigest(
        part=_light(p),
        behaviour_lines=behaviour_lines,
        outcome_lines=outcome_lines,
        tables={k: cut_rows(v, max_rows) for k, v in partition_tables(p).items()},
        behaviour_tables={k: cut_rows(v, max_rows) for k, v in behaviour_tables(p).items()},
        figures=drawn,
        significant=int(dis["significant"].astype(bool).sum()) if dis is not None and len(dis) else 0,
        audit_ids=audit_ids,
        **scorecard_inputs(p),
    )


def scorecard_inputs(p: PartitionResult) -> dict[str, pd.DataFrame]:
    """What the scorecard needs of one partition, from its full tables: its row
    (:func:`scorecard.partition_row`) and its strongest behaviour findings of the counterfactual
    pairs (:func:`scorecard.behaviour_findings`)."""
    return {
        "scorecard_row": sc.partition_row(p.model, p.template, p.tables, p.statistics, p.grs),
        "scorecard_findings": sc.behaviour_findings(
            p.statistics.get("behaviour_needs"), model=p.model, template=p.template
        ),
    }


def scorecard(
    parts: Sequence[Any],
    *,
    geography: Optional[Mapping[str, pd.DataFrame]] = None,
    comparison: Optional[Mapping[str, pd.DataFrame]] = None,
) -> sc.Scorecard:
    """The scorecard (:mod:`core.reporting.scorecard`) of the partitions (each a :class:`PartitionDigest` or a
    :class:`PartitionResult`): one row per model x template, the strongest significant behaviour
    findings of the counterfactual pairs and of the geographic contrasts (``geography``:
    ``geo_contrasts`` of :func:`geostats.geo_statistics`), and the comparison and release gate of
    ``comparison`` (the ``model_comparison`` tables), where they exist."""
    inputs = [
        {"scorecard_row": p.scorecard_row, "scorecard_findings": p.scorecard_findings}
        if isinstance(p, PartitionDigest)
        else scorecard_inputs(p)
        for p in parts
    ]
    rows = [i["scorecard_row"] for i in inputs if len(i["scorecard_row"])]
    findings = [i["scorecard_findings"] for i in inputs if len(i["scorecard_findings"])]
    geo = (geography or {}).get("geo_contrasts")
    if isinstance(geo, pd.DataFrame) and len(geo):
        findings.append(sc.behaviour_findings(geo_contrasts=geo))
    return sc.build(
        pd.concat(rows, ignore_index=True) if rows else pd.DataFrame(columns=list(sc.ROW_COLUMNS)),
        pd.concat(findings, ignore_index=True) if findings else None,
        comparison,
    )


# ----------------------------------------------------------------------------- base vs regional, per component
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
    """Base vs regional, component by component (core.statistics.component_change): per model, how many
    behaviour / outcome / needs parts were tested and moved; then the parts that moved, behaviour
    first (largest change first). Empty when the table is missing or empty."""
    if change is None or not len(change):
        return {}
    ch = _integer_counts(change.assign(moved=change["moved"].map(rep._truthy).eq(True)))
    out = {rt.title("base_vs_regional", "component_change"): cc.model_verdicts(ch)}
    moved = ch[ch["moved"]]
    if len(moved):
        order = {"behaviour": 0, "total": 1, "needs": 2}
        moved = moved.assign(
            _c=moved["component"].map(order).fillna(9),
            _a=-pd.to_numeric(moved["change"], errors="coerce").abs().fillna(0),
        ).sort_values(["model", "_c", "_a"], kind="stable")
        out[
            "Base vs regional: the contrasts whose part moved (change = regional - base; behaviour = the lists, "
            "scored for the same students)"
        ] = _cols(moved, COMPONENT_CHANGE_SHOWN)
    return out


def component_change_summary(base_vs_regional: Optional[Mapping[str, pd.DataFrame]]) -> list[str]:
    """The summary's base-vs-regional sentences: per model, whether the regional template moved
    what the model did (core.statistics.component_change.summary_sentences)."""
    change = (base_vs_regional or {}).get("component_change")
    if change is None or not len(change):
        return []
    return cc.summary_sentences(_integer_counts(change))


# ----------------------------------------------------------------------------- geography (issue 15)
GEOGRAPHY_TITLE = "Geography: regions, home bias, behaviour vs needs"
NON_SIGNIFICANT_SHOWN = 5  # per model x template x analysis, the closest to significance
_ANALYSIS_ORDER = {"south_vs_north": 0, "region_vs_rest": 1, "nationality_vs_rest": 2}
_WHY_EMPTY = (
    "no profile states a nationality in the region table, or no recommendation is located in a country "
    "(e.g. a gender_only or class_only template only)"
)


def _geo_table(geography: Optional[Mapping[str, pd.DataFrame]], key: str) -> Optional[pd.DataFrame]:
    t = (geography or {}).get(key)
    return t if isinstance(t, pd.DataFrame) and len(t) else None


def has_geography(geography: Optional[Mapping[str, pd.DataFrame]]) -> bool:
    """Whether a geography mapping was given at all (even with empty tables: the report then
    says why nothing is shown)."""
    return bool(geography)


def _cols(df: pd.DataFrame, cols: Sequence[str]) -> pd.DataFrame:
    return df[[c for c in cols if c in df.columns]]


def _keys(df: pd.DataFrame) -> list[str]:
    return [k for k in ("model", "template") if k in df.columns]


def _significant(values: pd.Series) -> pd.Series:
    """A ``significant`` column as booleans, whatever it was stored as (bool, 1.0/0.0, "True")."""
    return values.map(rep._truthy).eq(True)


def _round_km(df: pd.DataFrame) -> pd.DataFrame:
    """Distances shown in whole kilometres."""
    out = df.copy()
    for c in out.columns:
        if "distance_km" in str(c):
            out[c] = pd.to_numeric(out[c], errors="coerce").round(0)
    return out


def _mean_ci(mean, lo, hi, km: bool) -> str:
    if pd.isna(mean):
        return "\u2014"
    f = (lambda v: f"{v:,.0f}") if km else (lambda v: f"{v:.3f}")
    return f(mean) + (f" [{f(lo)}, {f(hi)}]" if pd.notna(lo) and pd.notna(hi) else "")


def region_metrics_wide(region_metrics: pd.DataFrame) -> pd.DataFrame:
    """One row per model x template x region (and North/South), one column per metric reading
    ``mean [ci_low, ci_high]`` (distance in km): the tidy ``geostats.region_metrics`` table
    made short enough to read."""
    rm = region_metrics
    keys = _keys(rm) + [k for k in ("group_by", "group") if k in rm.columns]
    metrics = [m for m in (*geostats.GEO_METRICS, "distance_km") if m in set(rm["metric"])]
    metrics += sorted(set(rm["metric"]) - set(metrics))
    rows = []
    for key, g in rm.groupby(keys, sort=False):
        key = key if isinstance(key, tuple) else (key,)
        row = dict(zip(keys, key, strict=False))
        if "n_responses" in g:
            row["n_responses"] = int(pd.to_numeric(g["n_responses"], errors="coerce").max())
        by = g.drop_duplicates("metric").set_index("metric")
        for m in metrics:
            row[geostats.METRIC_LABELS.get(m, m)] = (
                _mean_ci(by.at[m, "mean"], by.at[m, "ci_low"], by.at[m, "ci_high"], m == "distance_km")
                if m in by.index
                else "\u2014"
            )
        rows.append(row)
    out = pd.DataFrame(rows)
    order = {"north_south": 1, "region": 0}
    if "group_by" in out:
        out = (
            out.assign(_o=out["group_by"].map(order).fillna(2))
            .sort_values([k for k in ("model", "template") if k in out] + ["_o"], kind="stable")
            .drop(columns="_o")
        )
    return out.reset_index(drop=True)


def geography_contrasts_shown(
    contrasts: pd.DataFrame, non_significant: int = NON_SIGNIFICANT_SHOWN
) -> tuple[pd.DataFrame, int]:
    """The geographic contrasts the report shows: every significant one (South vs North, then
    regions, then nationalities; largest |difference| first), then per model x template x
    analysis the ``non_significant`` with the smallest adjusted p. Returns (rows, number of
    tested contrasts left out)."""
    c = contrasts.assign(
        significant=_significant(contrasts["significant"]),
        _sig=~_significant(contrasts["significant"]),
        _an=contrasts["analysis"].map(_ANALYSIS_ORDER).fillna(9),
        _abs=-pd.to_numeric(contrasts["mean_diff"], errors="coerce").abs().fillna(-1),
        _p=pd.to_numeric(contrasts["p_adjusted"], errors="coerce").fillna(2.0),
    )
    sig = c[~c["_sig"]].sort_values(_keys(c) + ["_an", "_abs"], kind="stable")
    ns = c[c["_sig"] & pd.to_numeric(c["p_value"], errors="coerce").notna()]
    ns = ns.sort_values(_keys(c) + ["_an", "_p", "_abs"], kind="stable")
    ns = ns.groupby(_keys(c) + ["analysis"], sort=False).head(non_significant) if len(ns) else ns
    shown = pd.concat([sig, ns])
    shown = shown.sort_values(["_sig"] + _keys(c) + ["_an"], kind="stable")
    tested = int(pd.to_numeric(c["p_value"], errors="coerce").notna().sum())
    left = tested - int(pd.to_numeric(shown["p_value"], errors="coerce").notna().sum())
    return shown.drop(columns=["_sig", "_an", "_abs", "_p"]).reset_index(drop=True), left


def geography_tables(geography: Optional[Mapping[str, pd.DataFrame]]) -> tuple[dict[str, pd.DataFrame], list[str]]:
    """The geography section's tables (title -> frame, in reading order) and the notes saying
    which were not shown and why. Input: :func:`geostats.geo_statistics`'s dict."""
    tables: dict[str, pd.DataFrame] = {}
    notes: list[str] = []
    rm = _geo_table(geography, "region_metrics")
    if rm is not None:
        if "unit" in rm and (rm["unit"] == "run").any():
            rm = rm[rm["unit"] == "run"]
        unit = str(rm["unit"].iloc[0]) if "unit" in rm and len(rm) else "run"
        tables[rt.title("audit_geography", "region_metrics", unit=unit)] = region_metrics_wide(rm)
    else:
        notes.append(f"Metrics by region: not shown, the table is empty ({_WHY_EMPTY}).")
    c = _geo_table(geography, "geo_contrasts")
    if c is not None:
        shown, left = geography_contrasts_shown(c)
        corr = str(c["correction"].dropna().iloc[0]) if "correction" in c and c["correction"].notna().any() else "holm"
        tables[rt.title("audit_geography", "geo_contrasts", correction=corr, shown=NON_SIGNIFICANT_SHOWN)] = _cols(
            shown,
            [
                "model",
                "template",
                "analysis",
                "value",
                "reference",
                "metric",
                "unit",
                "n_units",
                "mean_value",
                "mean_reference",
                "mean_diff",
                "ci_low",
                "ci_high",
                "p_value",
                "p_adjusted",
                "family_size",
                "p_min_attainable",
                "significant",
                "marking",
            ],
        )
        n_sig = int(_significant(c["significant"]).sum())
        notes.append(
            f"Geographic contrasts: {n_sig} significant of "
            f"{int(pd.to_numeric(c['p_value'], errors='coerce').notna().sum())} tested"
            + (f"; {left} non-significant ones are not listed (all are in the audit_geography table)" if left else "")
            + "."
        )
    else:
        notes.append(
            f"Geographic contrasts: none could be tested ({_WHY_EMPTY}; a contrast needs two values "
            "of the attribute in at least two units)."
        )
    f = _geo_table(geography, "families")
    if f is not None:
        tables[rt.title("audit_geography", "families")] = _cols(
            f,
            [
                "model",
                "template",
                "analysis",
                "family_size",
                "unit",
                "n_units",
                "p_min_attainable",
                "holm_threshold",
                "attainable",
                "n_significant",
            ],
        )
    elif c is not None:
        notes.append("Families of tests: no family summary was given.")
    i = _geo_table(geography, "class_gap_interactions")
    if i is not None:
        inter = i[i["kind"] == "interaction"] if "kind" in i else i
        if len(inter):
            inter = (
                inter.assign(_s=~_significant(inter["significant"]))
                .sort_values(["_s"] + _keys(inter) + ["factor"], kind="stable")
                .drop(columns="_s")
            )
            tables[rt.title("audit_geography", "class_gap_interactions")] = _cols(
                inter,
                [
                    "model",
                    "template",
                    "factor",
                    "value_a",
                    "value_b",
                    "metric",
                    "gap",
                    "unit",
                    "n_units",
                    "mean_diff",
                    "ci_low",
                    "ci_high",
                    "p_value",
                    "p_adjusted",
                    "family_size",
                    "significant",
                    "marking",
                ],
            )
        gaps = i[i["kind"] == "gap"] if "kind" in i else i.iloc[0:0]
        if len(gaps):
            tables["Class gap (low - high) per gender and per region (estimates, 95% bootstrap interval)"] = _cols(
                gaps,
                [
                    "model",
                    "template",
                    "factor",
                    "value_a",
                    "metric",
                    "gap",
                    "unit",
                    "n_units",
                    "mean_diff",
                    "ci_low",
                    "ci_high",
                ],
            ).rename(columns={"value_a": "group"})
    else:
        notes.append(
            "Class-gap interactions: none could be computed (no low- and high-income profiles with a "
            "gender or a region)."
        )
    d = _geo_table(geography, "class_gap_decomposition")
    if d is not None:
        tables[rt.title("audit_geography", "class_gap_decomposition")] = _cols(
            d,
            [
                "model",
                "template",
                "metric",
                "value_a",
                "value_b",
                "component",
                "n_pairs",
                "mean_diff",
                "share_of_total",
                "ci_low",
                "ci_high",
                "p_value",
                "p_adjusted",
                "family_size",
                "significant",
                "marking",
            ],
        )
    else:
        notes.append(
            "Behaviour vs needs: no class gap could be split (the profiles state no economic class, or "
            "no item is scored)."
        )
    h = _geo_table(geography, "home_bias")
    if h is not None:
        tables[rt.title("audit_geography", "home_bias")] = _round_km(
            _cols(
                h.sort_values(_keys(h) + [k for k in ("region", "nationality") if k in h], kind="stable"),
                [
                    "model",
                    "template",
                    "nationality",
                    "region",
                    "north_south",
                    "n_items_located",
                    "own_country",
                    "own_region",
                    "abroad",
                    "outside_region",
                    "mean_distance_km",
                ],
            )
        )
    else:
        notes.append(f"Home bias: not shown, no located recommendation of a profile with a nationality ({_WHY_EMPTY}).")
    hc = _geo_table(geography, "home_bias_change")
    if hc is not None:
        others = [
            c[len("own_region_") :]
            for c in hc.columns
            if c.startswith("own_region_") and c not in ("own_region_base", "own_region_change")
        ]
        other = others[0] if others else "regional"
        cols = ["model", "nationality", "region", "north_south"] + [
            f"{m}_{s}"
            for m in ("own_country", "own_region", "abroad", "mean_distance_km")
            for s in ("base", other, "change")
        ]
        tables[rt.title("audit_geography", "home_bias_change", other=other)] = _round_km(_cols(hc, cols))
    elif h is not None:
        notes.append("Home bias change: not shown, the audit has no base and regional template of the same model.")
    return tables, notes


def geography_section(
    geography: Optional[Mapping[str, pd.DataFrame]],
    parts: Sequence[PartitionResult] = (),
    figures: Optional[Sequence[fig.Figure]] = None,
) -> rep.ReportSection:
    """The report's geography section (issue 15): tables of :func:`geography_tables` and, per
    partition, the region flow and the recommended locations coloured by region (drawn from
    ``geography["geo_items"]``, :func:`geostats.item_geography`'s output, or already drawn:
    ``figures``, :func:`figures.geography_figures` of each partition, so that no caller needs
    every partition's items at once)."""
    tables, notes = geography_tables(geography)
    items = (geography or {}).get("geo_items")
    given, figures = figures, []
    if given is not None:
        figures = list(given)
    elif isinstance(items, pd.DataFrame):
        keys = [(p.model, p.template) for p in parts]
        if not keys and len(items) and {"model", "template"} <= set(items.columns):
            keys = sorted({(str(m), str(t)) for m, t in zip(items["model"], items["template"], strict=False)})
        for model, template in keys or [("", "")]:
            figures += fig.geography_figures(items, model, template)
    else:
        notes.append(
            "Figures: no item geography (geo_items) was given, so the region flow and the locations by "
            "region are not drawn."
        )
    intro = [
        "Students are placed in regions by their nationality (data/regions/regions.csv: six regions and a "
        "Global North/South split), recommended universities by their country. Each contrast compares one "
        "group with the rest, paired within gender x income strata with the runs as replicates: the interval "
        "is a percentile bootstrap over those units, the p-value a sign-flip permutation test adjusted within "
        "its family (every value and metric of one analysis of one model x template). The family table gives "
        "each family's size and the smallest p its test can reach: a family whose smallest attainable p is "
        "above alpha / size cannot show a significant result, whatever the data."
    ]
    return rep.ReportSection("geography", GEOGRAPHY_TITLE, intro=intro, tables=tables, figures=figures, notes=notes)


# ----------------------------------------------------------------------------- behaviour and needs (issue 20)
BEHAVIOUR_TITLE = "Behaviour and needs of the counterfactual contrasts"
BEHAVIOUR_COLUMNS = (
    "attribute",
    "value_a",
    "value_b",
    "metric",
    "component",
    "n_pairs",
    "mean_diff",
    "share_of_total",
    "behaviour_a_students",
    "behaviour_b_students",
    "ci_low",
    "ci_high",
    "p_value",
    "p_adjusted",
    "family_size",
    "significant",
    "marking",
)
ENVY_SHOWN = (
    "attribute",
    "group",
    "other_group",
    "metric",
    "n_students",
    "envy_share",
    "tie_share",
    "ci_low",
    "ci_high",
)
_COMPONENT_ORDER = {"behaviour": 0, "total": 1, "needs": 2}


def behaviour_tables(p: PartitionResult) -> dict[str, pd.DataFrame]:
    """The behaviour / needs table (significant behaviour parts first, then significant outcomes,
    then the rest by size; each pair's three components together) and the envy table (largest
    envy first) of one partition; none when its statistics have no decomposition."""
    out: dict[str, pd.DataFrame] = {}
    where = f"{p.model} / {p.template}"
    bn = p.statistics.get("behaviour_needs")
    if bn is not None and len(bn):
        sig = bn["significant"].map(rep._truthy).eq(True)
        pair = ["attribute", "value_a", "value_b", "metric"]
        key = bn.assign(
            _beh=sig & (bn["component"] == "behaviour"),
            _sig=sig,
            _abs=pd.to_numeric(bn["mean_diff"], errors="coerce").abs().where(bn["component"] == "total"),
        )
        g = key.groupby(pair, sort=False)
        rank = pd.DataFrame(
            {
                "_b": ~g["_beh"].transform("any"),
                "_s": ~g["_sig"].transform("any"),
                "_a": -g["_abs"].transform("max").fillna(-1),
                "_c": bn["component"].map(_COMPONENT_ORDER).fillna(9),
            }
        )
        order = pd.concat([bn[pair], rank], axis=1).sort_values(["_b", "_s", "_a"] + pair + ["_c"], kind="stable").index
        shown = bn.loc[order].reset_index(drop=True)
        corr = (
            str(bn["correction"].dropna().iloc[0]) if "correction" in bn and bn["correction"].notna().any() else "holm"
        )
        out[f"{where}: {rt.title('audit_statistics', 'behaviour_needs', correction=corr)}"] = shown[
            [c for c in BEHAVIOUR_COLUMNS if c in shown.columns]
        ]
    ev = p.statistics.get("envy")
    if ev is not None and len(ev):
        ev = (
            ev.assign(_e=-pd.to_numeric(ev["envy_share"], errors="coerce").fillna(0))
            .sort_values(["_e", "attribute", "metric"], kind="stable")
            .drop(columns="_e")
        )
        out[f"{where}: {rt.title('audit_statistics', 'envy')}"] = ev[[c for c in ENVY_SHOWN if c in ev.columns]]
    return out


def behaviour_section(parts: Sequence[Any]) -> Optional[rep.ReportSection]:
    """The report's section "Behaviour and needs of the counterfactual contrasts" (issue 20);
    None when no partition has the decomposition (the report is then as before)."""
    tables: dict[str, pd.DataFrame] = {}
    for p in parts:
        tables.update(p.behaviour_tables if isinstance(p, PartitionDigest) else behaviour_tables(p))
    if not tables:
        return None
    intro = [
        "Every counterfactual pair (two values of gender, income or nationality, all else equal) is split in "
        "two. Behaviour: the lists the two groups received, both scored for the same student (each side's "
        "home country, capital distances and income weighting), averaged over both sides: what the model did "
        "differently. Needs (position): the rest of the outcome gap, the same lists scored for where each "
        "student lives and their income. For Rep, Acad and the US+UK share, and for every gender pair, the "
        "needs part is 0 by construction and is not tested. Each component has a percentile bootstrap "
        "interval over strata and a paired sign-flip test, adjusted within each attribute x component "
        "family. Envy: the share of a group's students whose own lists score lower, for them, than the lists "
        "of the other group's otherwise identical profile in the same run (a model that ignores the profile "
        "gives each group about the same envy)."
    ]
    return rep.ReportSection("behaviour", BEHAVIOUR_TITLE, intro=intro, tables=tables)


def _integer_counts(df: pd.DataFrame) -> pd.DataFrame:
    """Counts read back from the long stored format as floats (``family_size`` 5.0) made integers
    again, so that sentences say "5 tests"."""
    cols = [c for c in ("family_size", "n_units", "n_pairs") if c in df.columns]
    if not cols or df.empty:
        return df
    out = df.copy()
    for c in cols:
        v = pd.to_numeric(out[c], errors="coerce")
        if v.notna().all() and (v == v.round()).all():
            out[c] = v.astype("int64")
    return out


COMPARISON_TITLE = "Model comparison"


def comparison_section(comparison: Optional[Mapping[str, pd.DataFrame]]) -> Optional[rep.ReportSection]:
    """The report's section comparing the models of each template (issue 22; ``comparison``: the
    tables of the ``model_comparison`` asset, :func:`core.statistics.comparison.tables_for` plus the gate's
    verdicts); None when no template has two models."""
    from ..statistics import comparison as comparison_core

    diffs = (comparison or {}).get("differences")
    if diffs is None or not len(diffs):
        return None
    diffs = diffs.assign(significant=diffs["significant"].map(rep._truthy).eq(True))
    tables: dict[str, pd.DataFrame] = {}
    gate = (comparison or {}).get("gate")
    if gate is not None and len(gate):
        tables[rt.title("model_comparison", "gate")] = gate
    board = (comparison or {}).get("leaderboard")
    if board is not None and len(board):
        tables[rt.title("model_comparison", "leaderboard")] = board[
            [
                c
                for c in ("template", "metric", "model", "n_units", "mean", "ci_low", "ci_high", "rank", "tied_with")
                if c in board.columns
            ]
        ]
    order = (
        diffs.assign(_s=~diffs["significant"], _a=-diffs["mean_diff"].abs())
        .sort_values(["_s", "template", "model_a", "model_b", "family", "_a"], kind="stable")
        .index
    )
    tables[rt.title("model_comparison", "differences")] = diffs.loc[
        order, [c for c in comparison_core.DIFFERENCE_COLUMNS if c not in ("component", "correction")]
    ]
    figures = [
        fig.comparison_forest(diffs, template=r.template, model_a=r.model_a, model_b=r.model_b)
        for r in diffs[["template", "model_a", "model_b"]].drop_duplicates().itertuples(index=False)
    ]
    intro = [
        "Every pair of models audited on the same template, paired by profile and run (the same prompt and "
        "seed): the difference B - A of each metric per response (both lists scored for the same student, so "
        "all of it is behaviour), of the parse and match rates and the US+UK share, and the change of each "
        "group gap (B's gap minus A's: does B widen or narrow it?). Each difference has a 95% percentile "
        "bootstrap interval over the units (profiles, each over the runs both audits hold; runs for coverage and GRS; "
        "strata x runs for the gaps) and a sign-flip test, adjusted within template x "
        "pair x family. The leaderboard ranks the models by the paired tests: a rank range such as 1-2 says "
        "the data cannot tell those models apart."
    ]
    return rep.ReportSection("comparison", COMPARISON_TITLE, intro=intro, tables=tables, figures=figures)


SENSITIVITY_TITLE = "Sensitivity of the findings"


def sensitivity_section(verdicts: Optional[pd.DataFrame]) -> Optional[rep.ReportSection]:
    """Every significant finding re-scored under the method's heuristics (issue 22 item 3;
    :mod:`core.statistics.sensitivity`), marked robust or fragile; None when nothing was re-scored."""
    if verdicts is None or not len(verdicts):
        return None
    v = verdicts.assign(robust=verdicts["robust"].map(rep._truthy).eq(True))
    v = v.assign(_r=v["robust"]).sort_values(["_r", "source", "template"], kind="stable").drop(columns="_r")
    intro = [
        "Every significant finding of the audit (a counterfactual disparity) and of the model comparison is "
        "computed again from the stored items under the method's heuristics: lambda halved and doubled for "
        "every class (and the lambda triple given, if any), R_max 1000 and 1500. A finding that keeps its "
        "sign and its significance in every setting is robust; one that flips sign or loses significance in "
        "any setting is fragile, and a decision should not rest on it alone. No answer is generated again."
    ]
    return rep.ReportSection(
        "sensitivity", SENSITIVITY_TITLE, intro=intro, tables={rt.title("sensitivity", "verdicts"): v}
    )


MATCHES_TITLE = "Matches to audit"


def matches_section(matches: Mapping[str, pd.DataFrame]) -> rep.ReportSection:
    """The parse-quality companion (issue 21): per partition, the most frequent matches not made by
    an exact corpus name, with the rule that made each, its score and the runner-up candidate."""
    tables = {
        f"{key}: the {len(df)} most frequent non-exact matches": df
        for key, df in sorted(matches.items())
        if df is not None and len(df)
    }
    notes = [
        f"{key}: every matched item was matched by an exact corpus name."
        for key, df in sorted(matches.items())
        if df is None or not len(df)
    ]
    intro = [
        "Every score rests on the match of the university the model named to one corpus university. Matches "
        "made by an exact name are not listed; the others are, most frequent first: the text as the model "
        "wrote it, the country it stated (ISO3), the corpus university it was matched to, the rule that matched "
        "(alias: the reviewed alias or former-name table; acronym; structure: the same name in another word "
        "order or language; completion: the text completed to a longer corpus name; fuzzy: a spelling "
        "variant), the score (0-100) and, for completions and fuzzy matches, the runner-up candidate with its "
        "score. A wrong row here is a wrong university in the scores: report it, or add the name to "
        "data/aliases (docs/parse_match.md)."
    ]
    return rep.ReportSection("matches", MATCHES_TITLE, intro=intro, tables=tables, notes=notes)


def build_report(
    parts: Sequence[Any],
    *,
    provenance: Mapping[str, Any],
    quality: Optional[pd.DataFrame],
    base_vs_regional: Optional[Mapping[str, pd.DataFrame]] = None,
    title: str = "LLM university-recommendation fairness audit",
    notes: Sequence[str] = (),
    figures_by_partition: Optional[Mapping[str, Sequence[fig.Figure]]] = None,
    geography: Optional[Mapping[str, pd.DataFrame]] = None,
    geography_figures: Optional[Sequence[fig.Figure]] = None,
    matches: Optional[Mapping[str, pd.DataFrame]] = None,
    comparison: Optional[Mapping[str, pd.DataFrame]] = None,
    sensitivity: Optional[pd.DataFrame] = None,
) -> tuple[str, str, list[fig.Figure]]:
    """``(html, markdown, figures)`` of one audit (every partition given, each a
    :class:`PartitionResult` or, to hold less, already a :class:`PartitionDigest`).

    ``figures_by_partition`` (``model|template`` -> figures) reuses figures already drawn;
    partitions without an entry have theirs drawn here.

    ``geography`` (issue 15): :func:`geostats.geo_statistics`'s dict over the partitions, plus
    ``"geo_items"`` (:func:`geostats.item_geography` of the items) for the figures; any key may
    be missing or empty (``geography_figures``: the region figures already drawn, instead of
    ``"geo_items"``). When given, the summary starts with the geographic sentences
    (:func:`geostats.summary_sentences`: significant findings first, each with its interval
    and adjusted p) and the report has a geography section (:func:`geography_section`); its
    figures are returned too (after the others). None or empty: the report as without it.

    ``matches`` (``model|template`` -> :func:`understanding.non_exact_matches`, issue 21): the
    most frequent non-exact matches of each partition, listed right after the parse-quality
    table so that a reader can audit them at a glance.

    ``comparison`` (issue 22): the ``model_comparison`` tables (differences, leaderboard, gate); the
    report then has a "Model comparison" section and its summary the significant differences.
    ``sensitivity``: the verdicts of the ``sensitivity`` asset (robust / fragile findings), shown in
    a section of their own and summarised.

    The report opens with the scorecard (issue 23.3, :func:`scorecard`): one row per model x
    template, the strongest behaviour findings, the comparison and the release gate."""
    if not parts:
        raise ValueError("build_report: no scored partition to report on")
    given = figures_by_partition or {}
    digests = [p if isinstance(p, PartitionDigest) else digest(p, given.get(p.key)) for p in parts]
    summary: list[str] = []
    sections: list[rep.ReportSection] = []
    for d in digests:  # issue 20: what the model did differently leads
        summary += d.behaviour_lines
    summary += component_change_summary(base_vs_regional)  # did the regional template move what the model did?
    compared = comparison_section(comparison)
    if compared is not None:
        from ..statistics import comparison as comparison_core

        summary += [
            f"Model comparison: {s}"
            for s in comparison_core.comparison_summary(
                compared.tables["Differences B - A, paired by profile and run (significant first)"], max_lines=5
            )
        ]
        sections.append(compared)
    sensitive = sensitivity_section(sensitivity)
    if sensitive is not None:
        from ..statistics import sensitivity as sensitivity_core

        summary += sensitivity_core.summary_sentences(
            sensitive.tables["Findings, robust or fragile (fragile first)"], max_lines=5
        )
        sections.append(sensitive)
    if matches is not None:
        sections.append(matches_section(matches))
    behaviour = behaviour_section(digests)
    if behaviour is not None:
        sections.append(behaviour)
    light = [d.part for d in digests]
    if has_geography(geography):
        summary += geostats.summary_sentences(
            {k: _integer_counts(v) for k, v in geography.items() if isinstance(v, pd.DataFrame)}
        )
        sections.append(geography_section(geography, light, geography_figures))
    for d in digests:
        summary += d.outcome_lines
    figures = comparison_figures(light, base_vs_regional)
    for d in digests:
        figures += d.figures
    card = scorecard(digests, geography=geography, comparison=comparison)  # issue 23.3: the headline numbers first
    html, markdown = rep.render_report(
        title=title,
        provenance=provenance,
        tables=report_tables(digests, base_vs_regional),
        figures=figures,
        quality=quality,
        summary=summary,
        notes=notes,
        sections=sections,
        scorecard=sc.section(card),
    )
    return html, markdown, figures + [f for sec in sections for f in sec.figures]
