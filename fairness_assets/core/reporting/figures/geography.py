"""The geography figures of one partition (issue 15), for the report's geography section: student region
x university region (:func:`region_flow`) and the most recommended countries coloured by region
(:func:`locations_by_region`), with the regions' colours (:func:`region_color`)."""

from __future__ import annotations

from typing import Iterable, Optional, Sequence

import numpy as np
import pandas as pd

from ...reference import axes
from .. import axis_words
from .counts import item_labels
from .partition import partition_tables
from .shared import FONT, TOP_N, Figure, _context, _new_figure, _png, _single, _skip, _title, shorten

GEO_FIGURE_NAMES = ("region_flow", "locations_by_region")
REGION_COLORS = {
    "Africa": "#c8a24a",
    "Asia": "#b3432f",
    "Europe": "#3b6ea8",
    "North America": "#7a4fa0",
    "South America": "#2e7d4f",
    "Oceania": "#2a9bb0",
}
_EXTRA_COLORS = ("#d98c3a", "#8c6d31", "#e377c2", "#7f7f7f", "#17becf", "#bcbd22")
UNKNOWN_REGION = "region unknown"
UNKNOWN_COLOR = "#b8bec4"


def region_color(region, extra: Sequence[str] = ()) -> str:
    """The fixed colour of a region (the six of data/regions/regions.csv); other names get the
    next colour of a spare palette by their position in ``extra``; a missing region grey."""
    if _is_region_missing(region):
        return UNKNOWN_COLOR
    if region in REGION_COLORS:
        return REGION_COLORS[region]
    others = [e for e in extra if e not in REGION_COLORS]
    return _EXTRA_COLORS[others.index(region) % len(_EXTRA_COLORS)] if region in others else UNKNOWN_COLOR


def _is_region_missing(v) -> bool:
    return v is None or (isinstance(v, float) and np.isnan(v)) or v is pd.NA or str(v) in ("", UNKNOWN_REGION)


def _geo_partition(geo_items: Optional[pd.DataFrame], model: str, template: str) -> tuple[pd.DataFrame, str, str]:
    if geo_items is None:
        return pd.DataFrame(), model, template
    items = geo_items
    if (model or template) and len(items):
        items = partition_tables(
            {"i": items}, model or _single(items, "model"), template or _single(items, "template")
        )["i"]
    return items, model or _single(items, "model"), template or _single(items, "template")


def _region_order(values: Iterable) -> list:
    present = sorted({str(v) for v in values if not _is_region_missing(v)})
    known = [r for r in REGION_COLORS if r in present]
    return known + [r for r in present if r not in known]


def _no_region_reason() -> str:
    """Why no student has a region: the design has no home axis, or this template's profiles state none
    of its values (or none is in the region table)."""
    home = axes.home()
    if home is None:
        return f"no student region: {axis_words.no_home_reason()}"
    what = axis_words.label(home)
    return f"no student region: the profiles of this template state no {what} (or no {what} is in the region table)"


def region_flow(geo_items: Optional[pd.DataFrame], model: str = "", template: str = "") -> Figure:
    """Student region (rows) x university region (columns): each row is the share of that
    region's students' recommendations located in each region (rows sum to 100).

    ``geo_items``: :func:`geostats.item_geography`'s output (``region`` of the student,
    ``item_region`` of the recommended university), all partitions or one; rows of other
    partitions are left out when ``model``/``template`` are given. Recommendations without a
    located country are not counted; a located country missing from the region table is shown
    in a "region unknown" column."""
    items, model, template = _geo_partition(geo_items, model, template)
    name = "region_flow"
    title = _title("Student region \u00d7 university region", model, template)
    if items is None or items.empty:
        return _skip(name, title, "no recommended items with a geography in this partition", model, template)
    missing = [c for c in ("region", "item_region", "iso3") if c not in items.columns]
    if missing:
        return _skip(
            name,
            title,
            f"the items carry no {', '.join(missing)} column (pass geostats.item_geography's output)",
            model,
            template,
        )
    if items["region"].isna().all():
        return _skip(
            name,
            title,
            _no_region_reason(),
            model,
            template,
        )
    data = items[items["region"].notna() & items["iso3"].notna()]
    if data.empty:
        return _skip(
            name, title, "no recommendation of a profile with a region is located in a country", model, template
        )
    data = pd.DataFrame(
        {
            "row": data["region"].astype(str),
            "col": data["item_region"].astype(object).where(data["item_region"].notna(), UNKNOWN_REGION).astype(str),
        }
    )
    rows = _region_order(data["row"])
    cols = _region_order(data["col"]) + ([UNKNOWN_REGION] if (data["col"] == UNKNOWN_REGION).any() else [])
    tab = pd.crosstab(data["row"], data["col"]).reindex(index=rows, columns=cols, fill_value=0)
    share = tab.div(tab.sum(axis=1), axis=0).to_numpy(dtype=float)
    nr, nc = share.shape
    fig = _new_figure(3.4 + 0.75 * nc, 2.2 + 0.42 * nr)
    ax = fig.subplots()
    im = ax.imshow(share * 100, cmap="Blues", vmin=0, vmax=100, aspect="auto", interpolation="nearest")
    ax.set_xticks(np.arange(nc))
    ax.set_xticklabels([shorten(c, 22) for c in cols], rotation=35, ha="right", fontsize=FONT - 1)
    ax.set_yticks(np.arange(nr))
    ax.set_yticklabels(
        [f"{shorten(r, 22)} (n={int(t)})" for r, t in zip(tab.index, tab.sum(axis=1), strict=False)], fontsize=FONT - 1
    )
    for (i, j), v in np.ndenumerate(share):
        ax.text(
            j,
            i,
            f"{v * 100:.0f}",
            ha="center",
            va="center",
            fontsize=FONT - 1,
            color="white" if v > 0.6 else "black",
            fontweight="bold" if i < len(rows) and j < len(cols) and rows[i] == cols[j] else "normal",
        )
    ax.set_xlabel("university region", fontsize=FONT)
    ax.set_ylabel("student region", fontsize=FONT)
    cb = fig.colorbar(im, ax=ax, fraction=0.04, pad=0.02)
    cb.set_label("% of the region's recommendations", fontsize=FONT - 1)
    cb.ax.tick_params(labelsize=FONT - 2)
    ax.set_title(shorten(title, 100), fontsize=FONT + 1)
    fig.tight_layout()
    png = _png(fig)
    same = [r for r in rows if r in cols]
    diag = float(np.mean([share[rows.index(r), cols.index(r)] for r in same])) if same else float("nan")
    caption = (
        f"Share (%) of the recommendations made to students of each region (rows) located in each region "
        f"(columns) under {_context(model, template) or 'this partition'}; rows sum to 100, the diagonal "
        f"(bold) is the own-region share"
        + (f", {diag:.0%} on average over the {len(same)} student regions" if same else "")
        + ". "
        "n: recommendations located in a country. Regions: data/regions/regions.csv."
        + (" 'region unknown': a located country missing from the region table." if UNKNOWN_REGION in cols else "")
    )
    return Figure(name, title, caption, png, model, template)


def locations_by_region(
    geo_items: Optional[pd.DataFrame], model: str = "", template: str = "", n: int = TOP_N
) -> Figure:
    """The ``n`` most recommended university countries (share of the located recommendations,
    count beside the bar), each bar coloured by the country's region, with a legend: the
    recommended locations coloured by region (the per-country map is :func:`world_map`).

    ``geo_items``: :func:`geostats.item_geography`'s output (needs ``iso3`` and
    ``item_region``; the country's name is ``country`` where present, else its ISO3 code)."""
    items, model, template = _geo_partition(geo_items, model, template)
    name = "locations_by_region"
    title = _title(f"Top {n} recommended university countries by region", model, template)
    if items is None or items.empty:
        return _skip(name, title, "no recommended items with a geography in this partition", model, template)
    if "iso3" not in items.columns or "item_region" not in items.columns:
        return _skip(
            name,
            title,
            "the items carry no iso3 / item_region column (pass geostats.item_geography's output)",
            model,
            template,
        )
    data = items[items["iso3"].notna()]
    if data.empty:
        return _skip(name, title, "no recommended item is located in a country", model, template)
    label = item_labels(data, "locations").where(lambda s: s.notna(), data["iso3"]).astype(str)
    region = data["item_region"].astype(object).where(data["item_region"].notna(), UNKNOWN_REGION).astype(str)
    counts = (
        pd.DataFrame({"label": label, "region": region})
        .groupby("label", sort=True)
        .agg(count=("region", "size"), region=("region", "first"))
        .reset_index()
    )
    total = int(counts["count"].sum())
    counts = counts.sort_values(["count", "label"], ascending=[False, True], kind="stable").head(n)
    counts["share"] = counts["count"] / total
    regions_all = _region_order(counts["region"])
    colors = [region_color(r, regions_all) for r in counts["region"]]
    k = len(counts)
    fig = _new_figure(8.0, 1.5 + 0.24 * max(k, 4))
    ax = fig.subplots()
    y = np.arange(k)
    vals = counts["share"].to_numpy() * 100
    ax.barh(y, vals, color=colors, height=0.7)
    top = float(vals.max()) if k else 1.0
    for yi, v, c in zip(y, vals, counts["count"].to_numpy(), strict=False):
        ax.text(v + top * 0.01, yi, f"{int(c)}", va="center", fontsize=FONT - 2)
    ax.set_xlim(0, top * 1.15 if top > 0 else 1)
    from matplotlib.patches import Patch

    shown = _region_order(counts["region"]) + ([UNKNOWN_REGION] if (counts["region"] == UNKNOWN_REGION).any() else [])
    handles = [Patch(color=region_color(r, regions_all), label=r) for r in shown]
    ax.set_yticks(y)
    ax.set_yticklabels([shorten(s, 30) for s in counts["label"]], fontsize=FONT - 2)
    ax.invert_yaxis()
    ax.set_xlabel("share of the located recommendations (%)", fontsize=FONT)
    ax.set_ylabel("university country", fontsize=FONT)
    ax.grid(axis="x", alpha=0.3)
    ax.set_axisbelow(True)
    ax.legend(handles=handles, title="university region", fontsize=FONT - 1, title_fontsize=FONT - 1, loc="lower right")
    ax.set_title(shorten(title, 100), fontsize=FONT + 1)
    fig.tight_layout()
    png = _png(fig)
    by_region = (
        pd.DataFrame({"region": region})
        .value_counts(normalize=True)
        .rename("s")
        .reset_index()
        .sort_values(["s", "region"], ascending=[False, True])
    )
    caption = (
        f"The {k} most recommended university countries under {_context(model, template) or 'this partition'}"
        f" ({total} recommendations located in a country), coloured by the country's region; number beside a "
        f"bar: count. All located recommendations by region: "
        + ", ".join(f"{r} {s:.0%}" for r, s in zip(by_region["region"], by_region["s"], strict=False))
        + ". The world map (world_map) shows every country against its share of the corpus."
    )
    return Figure(name, title, caption, png, model, template)


def geography_figures(geo_items: Optional[pd.DataFrame], model: str = "", template: str = "") -> list[Figure]:
    """The geography figures of one partition (``GEO_FIGURE_NAMES``, in that order)."""
    return [region_flow(geo_items, model, template), locations_by_region(geo_items, model, template)]
