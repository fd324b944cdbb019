"""The report's geography section (issue 15): metrics by region, the geographic contrasts (significant first), the
families of tests, the class-gap interactions and decomposition, home bias and its change, and the region figures."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable, Mapping, Optional, Sequence

import pandas as pd

from ...common import result_tables as rt
from ...statistics import geostats, stats
from .. import figures as fig
from .. import report as rep
from ._frames import _cols
from .partition import PartitionResult

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


def _keys(df: pd.DataFrame) -> list[str]:
    return [k for k in ("model", "template") if k in df.columns]


def _significant(values: pd.Series) -> pd.Series:
    """A ``significant`` column as booleans, whatever it was stored as (bool, 1.0/0.0, "True")."""
    return values.map(rep.truthy).eq(True)


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


# the inference columns a tested table shows after its own columns (of stats.INFERENCE_COLUMNS, in the report's order)
_INFERENCE_SHOWN = ("ci_low", "ci_high", "p_value", "p_adjusted", "family_size", "significant", "marking")


def _shown(columns: Sequence[str], drop: Sequence[str] = (), inference: Sequence[str] = _INFERENCE_SHOWN) -> list[str]:
    """The columns the report shows of a geostats table: its own columns (``columns`` less the inference block of
    ``stats.INFERENCE_COLUMNS`` and less ``drop``), in their order, then ``inference``."""
    return [c for c in columns if c not in stats.INFERENCE_COLUMNS and c not in drop] + list(inference)


CONTRASTS_SHOWN = _shown(
    geostats.CONTRAST_COLUMNS,
    drop=("attribute", "component", "n_units_excluded", "by_construction"),
    inference=(
        "ci_low",
        "ci_high",
        "p_value",
        "p_adjusted",
        "family_size",
        "p_min_attainable",
        "significant",
        "marking",
    ),
)
FAMILIES_SHOWN = (  # geostats.family_summary
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
)
INTERACTIONS_SHOWN = _shown(geostats.INTERACTION_COLUMNS, drop=("analysis", "kind", "component", "by_construction"))
GAPS_SHOWN = _shown(  # the gaps themselves: estimates, no test
    geostats.INTERACTION_COLUMNS,
    drop=("analysis", "kind", "value_b", "component", "by_construction"),
    inference=("ci_low", "ci_high"),
)
DECOMPOSITION_SHOWN = _shown(geostats.DECOMPOSITION_COLUMNS)
HOME_SHOWN = [c for c in geostats.HOME_COLUMNS if c != "student_iso3"]

Shown = tuple[dict[str, pd.DataFrame], list[str]]  # tables (title -> frame) and notes


def _region_metrics(rm: pd.DataFrame) -> Shown:
    if "unit" in rm and (rm["unit"] == "run").any():
        rm = rm[rm["unit"] == "run"]
    unit = str(rm["unit"].iloc[0]) if "unit" in rm and len(rm) else "run"
    return {rt.title("audit_geography", "region_metrics", unit=unit): region_metrics_wide(rm)}, []


def _contrasts(c: pd.DataFrame) -> Shown:
    shown, left = geography_contrasts_shown(c)
    corr = str(c["correction"].dropna().iloc[0]) if "correction" in c and c["correction"].notna().any() else "holm"
    title = rt.title("audit_geography", "geo_contrasts", correction=corr, shown=NON_SIGNIFICANT_SHOWN)
    n_sig = int(_significant(c["significant"]).sum())
    note = (
        f"Geographic contrasts: {n_sig} significant of "
        f"{int(pd.to_numeric(c['p_value'], errors='coerce').notna().sum())} tested"
        + (f"; {left} non-significant ones are not listed (all are in the audit_geography table)" if left else "")
        + "."
    )
    return {title: _cols(shown, CONTRASTS_SHOWN)}, [note]


def _families(f: pd.DataFrame) -> Shown:
    return {rt.title("audit_geography", "families"): _cols(f, FAMILIES_SHOWN)}, []


def _interactions(i: pd.DataFrame) -> Shown:
    tables: dict[str, pd.DataFrame] = {}
    inter = i[i["kind"] == "interaction"] if "kind" in i else i
    if len(inter):
        inter = (
            inter.assign(_s=~_significant(inter["significant"]))
            .sort_values(["_s"] + _keys(inter) + ["factor"], kind="stable")
            .drop(columns="_s")
        )
        tables[rt.title("audit_geography", "class_gap_interactions")] = _cols(inter, INTERACTIONS_SHOWN)
    gaps = i[i["kind"] == "gap"] if "kind" in i else i.iloc[0:0]
    if len(gaps):
        tables["Class gap (low - high) per gender and per region (estimates, 95% bootstrap interval)"] = _cols(
            gaps, GAPS_SHOWN
        ).rename(columns={"value_a": "group"})
    return tables, []


def _decomposition(d: pd.DataFrame) -> Shown:
    return {rt.title("audit_geography", "class_gap_decomposition"): _cols(d, DECOMPOSITION_SHOWN)}, []


def _home_bias(h: pd.DataFrame) -> Shown:
    h = h.sort_values(_keys(h) + [k for k in ("region", "nationality") if k in h], kind="stable")
    return {rt.title("audit_geography", "home_bias"): _round_km(_cols(h, HOME_SHOWN))}, []


def _home_bias_change(hc: pd.DataFrame) -> Shown:
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
    return {rt.title("audit_geography", "home_bias_change", other=other): _round_km(_cols(hc, cols))}, []


@dataclass(frozen=True)
class _GeoTable:
    """One table of :func:`geostats.geo_statistics` in the section: ``show`` turns it (present, not empty) into the
    tables and notes shown; ``absent`` is the note when it is missing or empty, given only when ``absent_if`` (another
    table) is present, if named."""

    key: str
    show: Callable[[pd.DataFrame], Shown]
    absent: str
    absent_if: str = ""


GEO_TABLES = (  # in reading order
    _GeoTable("region_metrics", _region_metrics, f"Metrics by region: not shown, the table is empty ({_WHY_EMPTY})."),
    _GeoTable(
        "geo_contrasts",
        _contrasts,
        f"Geographic contrasts: none could be tested ({_WHY_EMPTY}; a contrast needs two values "
        "of the attribute in at least two units).",
    ),
    _GeoTable("families", _families, "Families of tests: no family summary was given.", absent_if="geo_contrasts"),
    _GeoTable(
        "class_gap_interactions",
        _interactions,
        "Class-gap interactions: none could be computed (no low- and high-income profiles with a gender or a region).",
    ),
    _GeoTable(
        "class_gap_decomposition",
        _decomposition,
        "Behaviour vs needs: no class gap could be split (the profiles state no economic class, or no item is scored).",
    ),
    _GeoTable(
        "home_bias",
        _home_bias,
        f"Home bias: not shown, no located recommendation of a profile with a nationality ({_WHY_EMPTY}).",
    ),
    _GeoTable(
        "home_bias_change",
        _home_bias_change,
        "Home bias change: not shown, the audit has no base and regional template of the same model.",
        absent_if="home_bias",
    ),
)


def geography_tables(geography: Optional[Mapping[str, pd.DataFrame]]) -> tuple[dict[str, pd.DataFrame], list[str]]:
    """The geography section's tables (title -> frame, in reading order) and the notes saying
    which were not shown and why. Input: :func:`geostats.geo_statistics`'s dict."""
    tables: dict[str, pd.DataFrame] = {}
    notes: list[str] = []
    for spec in GEO_TABLES:
        t = _geo_table(geography, spec.key)
        if t is not None:
            shown, said = spec.show(t)
            tables.update(shown)
            notes += said
        elif not spec.absent_if or _geo_table(geography, spec.absent_if) is not None:
            notes.append(spec.absent)
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
