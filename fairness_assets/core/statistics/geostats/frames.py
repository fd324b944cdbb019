"""The geography of the responses and items, home bias and the family summary (issue 15;
docs/statistics.md §7-11), and the constants and column lists every module of ``geostats`` shares.

- :func:`response_geography` adds, per response, the student's region and the share of its
  recommendations located in the student's own country / region and their mean distance.
- :func:`region_metrics` DRS/Acc/Rep/Acad and the own-country / own-region shares by region
  and by North/South, with run intervals (``stats.run_variability``).
- :func:`item_geography`, :func:`home_bias` / :func:`home_bias_change` per value of the design's
  home axis (the study's nationality): own country, own region, abroad, mean distance, and the change
  from the base to the regional template.
- :func:`family_summary` family sizes and the smallest attainable p per family.

The home axis is the active design's (core/reference/axes.py, :func:`axes.home`), read at call time;
a design without one has no home country: the shares are missing and the home-bias tables empty.
"""

from __future__ import annotations

from typing import Literal, Mapping, Optional, Sequence, get_args

import numpy as np
import pandas as pd

from ...common import metric_catalogue as catalogue
from ...reference import axes
from ...reference import regions as rg
from .. import decompose as dc
from .. import stats as st
from ..inference import DEFAULT_INFERENCE, InferenceParams

GEO_METRICS = catalogue.names("geography")
Replicates = Literal["runs", "strata"]  # a unit per stratum and run, or per stratum (runs averaged)
REPLICATES: tuple[str, ...] = get_args(Replicates)
METRIC_LABELS = {**catalogue.labels("geography"), "distance_km": catalogue.metric("distance_km").label}

COMPONENTS = ("total", "behaviour", "needs")
STUDENT_INDEPENDENT = catalogue.student_independent()  # the same list scores the same for every student
CROSS_METRICS = catalogue.names("geography", position_dependent=True)  # rescored for another student's position
BY_CONSTRUCTION_NOTE = dc.BY_CONSTRUCTION_NOTE

CONTRAST_COLUMNS = [
    "model",
    "template",
    "analysis",
    "attribute",
    "value",
    "reference",
    "metric",
    "component",
    "unit",
    "n_units",
    "n_units_excluded",
    "mean_value",
    "mean_reference",
    "mean_diff",
    *st.INFERENCE_COLUMNS,
    "by_construction",
]
INTERACTION_COLUMNS = [
    "model",
    "template",
    "analysis",
    "factor",
    "kind",
    "value_a",
    "value_b",
    "metric",
    "component",
    "gap",
    "unit",
    "n_units",
    "mean_diff",
    *st.INFERENCE_COLUMNS,
    "by_construction",
]
DECOMPOSITION_COLUMNS = [
    "model",
    "template",
    "metric",
    "value_a",
    "value_b",
    "component",
    "n_pairs",
    "mean_diff",
    "share_of_total",
    *st.INFERENCE_COLUMNS,
]
_HOME_MEASURES = [
    "student_iso3",
    "region",
    "north_south",
    "n_items_located",
    "own_country",
    "own_region",
    "abroad",
    "outside_region",
    "mean_distance_km",
]


def strata() -> tuple[str, ...]:
    """The strata of the one-vs-rest contrasts: every axis of the active design but the home one (the
    study's gender x class)."""
    return axes.names(exclude=("home",))


def home_columns() -> list[str]:
    """The columns of :func:`home_bias`: model, template, the design's home axis (the study's
    ``nationality``; none without one), the student's country and region, and the shares."""
    home = axes.home()
    return ["model", "template", *([home] if home else []), *_HOME_MEASURES]


def __getattr__(name: str):
    # STRATA and HOME_COLUMNS, read at access time: the active design's (callers outside core read them)
    if name == "STRATA":
        return strata()
    if name == "HOME_COLUMNS":
        return home_columns()
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


# ----------------------------------------------------------------------------- per-response geography
def response_geography(
    items: pd.DataFrame,
    responses: pd.DataFrame,
    table: Optional[pd.DataFrame] = None,
    student_iso3: Optional[Mapping[str, str]] = None,
) -> pd.DataFrame:
    """``responses`` (the ``drs_responses`` table) with the student's ``student_iso3``,
    ``region``, ``north_south``, and per response, over its items with a known country:
    ``own_country`` (share located in the student's country), ``own_region`` (share in the
    student's region), ``distance_km`` (mean capital distance), ``n_located``.

    ``items``: the ``drs_items`` table (``response_id``, ``iso3``; ``distance_km`` when
    present). A response without located items has these shares missing. The student's country is
    their value of the design's home axis (:func:`axes.home`); without one, the student's country,
    region and own-country / own-region shares are missing (no home).
    """
    table = rg.load_regions() if table is None else table
    out = _student_regions(responses, table, student_iso3)
    it = items[items["iso3"].notna()][["response_id", "iso3"] + (["distance_km"] if "distance_km" in items else [])]
    it = rg.attach_regions(it, "iso3", "item_", ("region",), table, strict=False)
    s = out.set_index("response_id")
    it["_s_iso3"] = it["response_id"].map(s["student_iso3"])
    it["_s_region"] = it["response_id"].map(s["region"])
    it["own_country"] = (it["iso3"] == it["_s_iso3"]).astype(float).where(it["_s_iso3"].notna())
    it["own_region"] = (
        (it["item_region"] == it["_s_region"]).astype(float).where(it["_s_region"].notna() & it["item_region"].notna())
    )
    agg = {"own_country": ("own_country", "mean"), "own_region": ("own_region", "mean"), "n_located": ("iso3", "size")}
    if "distance_km" in it:
        agg["distance_km"] = ("distance_km", "mean")
    per = it.groupby("response_id").agg(**agg)
    out = out.drop(columns=[c for c in per.columns if c in out.columns]).merge(
        per, left_on="response_id", right_index=True, how="left"
    )
    out["n_located"] = out["n_located"].fillna(0).astype(np.int64)
    return out


def region_metrics(
    geo_responses: pd.DataFrame,
    *,
    metrics: Sequence[str] = (*GEO_METRICS, "distance_km"),
    by: Sequence[str] = ("region", "north_south"),
    inference: InferenceParams = DEFAULT_INFERENCE,
) -> pd.DataFrame:
    """Means by region and by North/South with run and profile intervals: the
    ``stats.run_variability`` table (same columns, same ``inference``) over ``response_geography``'s output."""
    mets = [m for m in metrics if m in geo_responses.columns]
    return st.run_variability(geo_responses, metrics=mets, by=tuple(by), inference=inference)


# ----------------------------------------------------------------------------- home bias and reach
def home_bias(geo_items: pd.DataFrame) -> pd.DataFrame:
    """Per model x template x value of the home axis (the study's nationality), over the located
    items (``iso3`` known): shares in the student's own country, own region, abroad (1 - own
    country), outside the region, and the mean capital distance. ``geo_items``: ``drs_items`` passed
    through :func:`item_geography`. Columns: :func:`home_columns`; no rows for a design without a
    home axis."""
    home = axes.home()
    if home is None or home not in geo_items.columns:
        cols = [c for c in home_columns() if c not in st.PARTITION_KEYS or c in geo_items.columns]
        return pd.DataFrame(columns=cols)
    it = geo_items[geo_items["iso3"].notna() & geo_items[home].notna()]
    keys = [k for k in st.PARTITION_KEYS if k in it.columns] + [home, "student_iso3", "region", "north_south"]
    agg = (
        it.groupby(keys, dropna=False)
        .agg(
            n_items_located=("iso3", "size"),
            own_country=("own_country", "mean"),
            own_region=("own_region", "mean"),
            mean_distance_km=("distance_km", "mean"),
        )
        .reset_index()
    )
    agg["abroad"] = 1.0 - agg["own_country"]
    agg["outside_region"] = 1.0 - agg["own_region"]
    return agg[[c for c in home_columns() if c in agg.columns]]


def item_geography(
    items: pd.DataFrame, table: Optional[pd.DataFrame] = None, student_iso3: Optional[Mapping[str, str]] = None
) -> pd.DataFrame:
    """``drs_items`` with the student's ``region`` / ``north_south``, the item's
    ``item_region``, and per item ``own_country`` / ``own_region`` (1/0, missing without a
    located country)."""
    table = rg.load_regions() if table is None else table
    out = items.copy()
    if "student_iso3" not in out.columns or student_iso3 is not None:
        out = _student_regions(out, table, student_iso3)
    else:
        out = rg.attach_regions(out, "student_iso3", "", ("region", "north_south"), table)
    out = rg.attach_regions(out, "iso3", "item_", ("region",), table, strict=False)
    located = out["iso3"].notna() & out["student_iso3"].notna()
    out["own_country"] = (out["iso3"] == out["student_iso3"]).astype(float).where(located)
    out["own_region"] = (
        (out["item_region"] == out["region"])
        .astype(float)
        .where(located & out["item_region"].notna() & out["region"].notna())
    )
    return out


def home_bias_change(home: pd.DataFrame, base: str = "base", other: str = "regional") -> pd.DataFrame:
    """From the ``base`` to the ``other`` template, per model x value of the home axis (the study's
    nationality): each of ``own_country, own_region, abroad, mean_distance_km`` as ``{m}_base``,
    ``{m}_{other}`` and ``{m}_change`` (other - base: percentage points / 100 for shares, km for
    distance)."""
    mets = ["own_country", "own_region", "abroad", "mean_distance_km"]
    axis = [axes.home()] if axes.home() else []
    keys = [k for k in ("model", *axis, "student_iso3", "region", "north_south") if k in home.columns]
    b = home[home["template"] == base][keys + mets]
    o = home[home["template"] == other][keys + mets]
    m = b.merge(o, on=keys, how="outer", suffixes=("_base", f"_{other}"))
    for k in mets:
        m[f"{k}_change"] = m[f"{k}_{other}"] - m[f"{k}_base"]
    return m.sort_values(keys).reset_index(drop=True)


def _student_regions(
    frame: pd.DataFrame, table: pd.DataFrame, student_iso3: Optional[Mapping[str, str]]
) -> pd.DataFrame:
    """``frame`` with the student's ``student_iso3``, ``region`` and ``north_south`` from the design's
    home axis (``core.reference.regions.attach_student_regions``); all missing for a design without a
    home axis (``student_iso3`` is then None, not looked up)."""
    home = axes.home()
    if home is not None:
        return rg.attach_student_regions(frame, home, table=table, iso3_of=student_iso3)
    out = frame.copy()
    out["student_iso3"] = None
    return rg.attach_regions(out, "student_iso3", "", ("region", "north_south"), table)


# ----------------------------------------------------------------------------- families
def family_summary(*tables: pd.DataFrame, inference: InferenceParams = DEFAULT_INFERENCE) -> pd.DataFrame:
    """One row per family of tests: ``analysis`` (with `` (behaviour)`` / `` (needs)`` appended
    for those components; ``class_gap_{component}`` for the decomposition),
    ``family_size`` m, ``unit``, ``n_units``, ``p_min_attainable``, ``holm_threshold``
    (alpha / m: what the smallest p must reach under Holm; alpha is ``inference.alpha``) and
    ``attainable`` (p_min <= alpha / m). Input: any of the tables above (and
    ``stats.counterfactual_disparity``)."""
    alpha = inference.alpha
    rows = []
    for t in tables:
        if t is None or not len(t) or "p_value" not in t:
            continue
        t = t[t["p_value"].notna()]
        if "analysis" in t:
            if "component" in t:  # the behaviour / needs families next to the totals
                comp = t["component"].astype(str)
                t = t.assign(
                    analysis=np.where(
                        comp == "total", t["analysis"].astype(str), t["analysis"].astype(str) + " (" + comp + ")"
                    )
                )
            fam = "analysis"
        elif "component" in t:
            t = t.assign(analysis="class_gap_" + t["component"].astype(str))
            fam = "analysis"
        else:
            t = t.assign(analysis="counterfactual_" + t["attribute"].astype(str))
            fam = "analysis"
        keys = [k for k in st.PARTITION_KEYS if k in t.columns] + [fam]
        n_col = next(c for c in ("n_units", "n_pairs") if c in t.columns)
        for k, g in t.groupby(keys, sort=True):
            k = k if isinstance(k, tuple) else (k,)
            m = int(g["family_size"].max())
            pmin = float(g["p_min_attainable"].min())
            rows.append(
                {
                    **dict(zip(keys, k, strict=False)),
                    "family_size": m,
                    "unit": g["unit"].iloc[0] if "unit" in g else "stratum",
                    "n_units": int(g[n_col].median()),
                    "p_min_attainable": pmin,
                    "holm_threshold": alpha / m,
                    "attainable": pmin <= alpha / m,
                    "n_significant": int(g["significant"].sum()),
                }
            )
    return pd.DataFrame(rows)
