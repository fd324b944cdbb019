"""The report's geography section (issue 15): metrics by region, the geographic contrasts (significant first), the
families of tests, the class-gap interactions and decomposition, home bias and its change, and the region figures.

The section names the active design's axes (core/reference/axes.py), read when it is built: its home axis (the
study's nationality) places the students in regions, its lambda axis has the gap (the study's class gap, low -
high). A design without a home axis has no student geography: the section says so and draws no region figure; a
design without a lambda axis has no gap, and says so too."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable, Mapping, Optional, Sequence

import pandas as pd

from ...common import result_tables as rt
from ...reference import axes
from ...statistics import geostats, stats
from .. import axis_words
from .. import figures as fig
from .. import report as rep
from ._frames import _cols
from .partition import PartitionResult

GEOGRAPHY_TITLE = "Geography: regions, home bias, behaviour vs needs"
NON_SIGNIFICANT_SHOWN = 5  # per model x template x analysis, the closest to significance


def _analysis_order() -> dict[str, int]:
    """South vs North, then regions, then each value of the design's home axis (the study's nationalities)."""
    home = axes.home()
    return {"south_vs_north": 0, "region_vs_rest": 1, **({f"{home}_vs_rest": 2} if home else {})}


def _why_empty() -> str:
    """Why a geography table is empty (the study's: no profile states a nationality in the region table, or
    no recommendation is located in a country, e.g. a gender_only or class_only template only)."""
    home = axes.home()
    if home is None:
        return axis_words.no_home_reason()
    others = [axes.axis(a).profile_set for a in axes.names(exclude=("home",))]
    return (
        f"no profile states a {axis_words.label(home)} in the region table, or no recommendation is located in "
        f"a country" + (f" (e.g. a {axis_words.join(others, 'or')} template only)" if others else "")
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
        _an=contrasts["analysis"].map(_analysis_order()).fillna(9),
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


def _home_shown() -> list[str]:
    """The columns of the home-bias table the report shows (:func:`geostats.home_columns`, the active
    design's, less ``student_iso3``)."""
    return [c for c in geostats.home_columns() if c != "student_iso3"]


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
        tables[_gaps_title()] = _cols(gaps, GAPS_SHOWN).rename(columns={"value_a": "group"})
    return tables, []


def _factors() -> list[str]:
    """The factors the lambda axis's gap is split by, in words: every axis but the home and the lambda
    one, then the region where the design has a home axis (the study's gender and region)."""
    return [axis_words.word(a) for a in axes.names(exclude=("home", "lambda"))] + (["region"] if axes.home() else [])


def _gaps_title() -> str:
    """The title of the gaps table: the lambda axis's gap per value of each factor (the study's "Class gap
    (low - high) per gender and per region (estimates, 95% bootstrap interval)")."""
    gap = axis_words.lambda_gap()
    head = axis_words.gap_name().capitalize() + " gap" + (f" ({gap[1]} - {gap[0]})" if gap else "")
    per = axis_words.join(f"per {f}" for f in _factors())
    return f"{head}{f' {per}' if per else ''} (estimates, 95% bootstrap interval)"


def _decomposition(d: pd.DataFrame) -> Shown:
    return {rt.title("audit_geography", "class_gap_decomposition"): _cols(d, DECOMPOSITION_SHOWN)}, []


def _home_label() -> str:
    """The label of the design's home axis in the tables' titles (the study's "nationality"); "home country"
    without one."""
    home = axes.home()
    return axis_words.label(home) if home else "home country"


def _home_bias(h: pd.DataFrame) -> Shown:
    home = axes.home()
    h = h.sort_values(_keys(h) + [k for k in ("region", home) if k and k in h], kind="stable")
    return {rt.title("audit_geography", "home_bias", home=_home_label()): _round_km(_cols(h, _home_shown()))}, []


def _home_bias_change(hc: pd.DataFrame) -> Shown:
    others = [
        c[len("own_region_") :]
        for c in hc.columns
        if c.startswith("own_region_") and c not in ("own_region_base", "own_region_change")
    ]
    other = others[0] if others else "regional"
    cols = ["model", *([axes.home()] if axes.home() else []), "region", "north_south"] + [
        f"{m}_{s}"
        for m in ("own_country", "own_region", "abroad", "mean_distance_km")
        for s in ("base", other, "change")
    ]
    title = rt.title("audit_geography", "home_bias_change", other=other, home=_home_label())
    return {title: _round_km(_cols(hc, cols))}, []


@dataclass(frozen=True)
class _GeoTable:
    """One table of :func:`geostats.geo_statistics` in the section: ``show`` turns it (present, not empty) into the
    tables and notes shown; ``absent`` is the note when it is missing or empty, given only when ``absent_if`` (another
    table) is present, if named."""

    key: str
    show: Callable[[pd.DataFrame], Shown]
    absent: str
    absent_if: str = ""


def _no_gap(what: str) -> str:
    """Why the lambda axis's gap has no ``what`` (interactions, a split): the study's "(no low- and
    high-income profiles with a gender or a region)"; a design without a lambda axis has no gap at all."""
    gap, lam = axis_words.lambda_gap(), axes.lambda_axis()
    if gap is None:
        return f"{what}: not computed, the design has no lambda axis with two values (no gap to split)."
    if what.startswith("Behaviour"):
        return (
            f"{what}: no {axis_words.gap_name()} gap could be split (the profiles state no "
            f"{axis_words.label(lam)}, or no item is scored)."
        )
    both = axis_words.elided(axis_words.value_words(lam, gap[1]), axis_words.value_words(lam, gap[0]))
    factors = _factors()
    with_ = f" with {axis_words.join((f'a {f}' for f in factors), 'or')}" if factors else ""
    return f"{what}: none could be computed (no {both} profiles{with_})."


def geo_tables() -> tuple[_GeoTable, ...]:
    """The tables of the section in reading order, with the notes of the active design's axes."""
    why = _why_empty()
    home = axes.home()
    gap = axis_words.gap_name().capitalize()
    return (
        _GeoTable(
            "region_metrics",
            _region_metrics,
            f"Metrics by region: not shown, the table is empty ({why})."
            if home
            else f"Metrics by region: skipped, {axis_words.no_home_reason()}.",
        ),
        _GeoTable(
            "geo_contrasts",
            _contrasts,
            f"Geographic contrasts: none could be tested ({why}; a contrast needs two values "
            "of the attribute in at least two units)."
            if home
            else f"Geographic contrasts: skipped, {axis_words.no_home_reason()}.",
        ),
        _GeoTable("families", _families, "Families of tests: no family summary was given.", absent_if="geo_contrasts"),
        _GeoTable("class_gap_interactions", _interactions, _no_gap(f"{gap}-gap interactions")),
        _GeoTable("class_gap_decomposition", _decomposition, _no_gap("Behaviour vs needs")),
        _GeoTable(
            "home_bias",
            _home_bias,
            f"Home bias: not shown, no located recommendation of a profile with a {axis_words.label(home)} ({why})."
            if home
            else f"Home bias: skipped, {axis_words.no_home_reason()}.",
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
    for spec in geo_tables():
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
    if axes.home() is None:  # no student has a home country: the region figures have nothing to draw
        notes.append(
            f"Figures: the region flow and the locations by region are not drawn: {axis_words.no_home_reason()}."
        )
    elif given is not None:
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
    intro = [geography_intro()]
    return rep.ReportSection("geography", GEOGRAPHY_TITLE, intro=intro, tables=tables, figures=figures, notes=notes)


def geography_intro() -> str:
    """The section's introduction, naming the active design's axes: its home axis places the students in
    regions (the study's nationality), the other axes are the strata (the study's gender x income)."""
    home = axes.home()
    if home is None:
        return (
            "This design has no home axis: no student has a home country, capital or region, so the regional "
            "contrasts, the home bias and the region figures are skipped; recommended universities are placed "
            "by their country only. What the section shows does not need a student's home: the gap of the "
            "lambda axis and its behaviour / needs split, where the design has one."
        )
    strata = " x ".join(axis_words.word(a) for a in axes.names(exclude=("home",)))
    paired = f"paired within {strata} strata" if strata else "paired"
    tests = (
        f"Each contrast compares one group with the rest, {paired} with the runs as replicates: the interval "
        "is a percentile bootstrap over those units, the p-value a sign-flip permutation test adjusted within "
        "its family (every value and metric of one analysis of one model x template). The family table gives "
        "each family's size and the smallest p its test can reach: a family whose smallest attainable p is "
        "above alpha / size cannot show a significant result, whatever the data."
    )
    return (
        f"Students are placed in regions by their {axis_words.label(home)} (data/regions/regions.csv: six regions "
        "and a Global North/South split), recommended universities by their country. " + tests
    )
