"""The home heatmap of one partition: the student's value of the design's home axis x university country
(:func:`home_heatmap`; the study's ``nationality_heatmap``: student nationality x university country). A
design without a home axis has none: the figure is skipped, saying so."""

from __future__ import annotations

import numpy as np
import pandas as pd

from ...reference import axes
from .. import axis_words
from .counts import item_labels
from .shared import FONT, Figure, _context, _new_figure, _png, _single, _skip, _title, shorten


def heatmap_name() -> str:
    """The heatmap's figure name: ``<home axis>_heatmap`` (the study's ``nationality_heatmap``);
    ``home_heatmap`` for a design without a home axis (then always skipped)."""
    return f"{axes.home() or 'home'}_heatmap"


def heatmap_bar_label() -> str:
    """The colour bar's label (the study's "% of the nationality's\\nrecommendations")."""
    home = axes.home()
    return f"% of the {axis_words.label(home) if home else 'home country'}'s\nrecommendations"


def __getattr__(name: str):
    # HEATMAP_BAR_LABEL, read at access time: the active design's
    if name == "HEATMAP_BAR_LABEL":
        return heatmap_bar_label()
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def home_heatmap(items: pd.DataFrame, *, model: str = "", template: str = "", max_countries: int = 25) -> Figure:
    """Student's value of the design's home axis (rows; the study's nationality) x university country
    (columns): each row is the share of that value's recommendations going to each country. The
    ``max_countries`` most recommended countries get a column; the rest are pooled into "other"."""
    model = model or _single(items, "model")
    template = template or _single(items, "template")
    home = axes.home()
    name = heatmap_name()
    what = axis_words.label(home) if home else "home country"
    title = _title(f"Student {what} \u00d7 university country", model, template)
    if home is None:
        return _skip(name, title, axis_words.no_home_reason(), model, template)
    if items is None or items.empty:
        return _skip(name, title, "no recommended items in this partition", model, template)
    if home not in items or items[home].isna().all():
        return _skip(name, title, f"the profiles of this template state no {what}", model, template)
    data = pd.DataFrame({"nat": items[home], "country": item_labels(items, "locations")}).dropna()
    if data.empty:
        return _skip(name, title, f"no recommended item of a profile with a {what} has a country", model, template)
    order = data["country"].value_counts().sort_index().sort_values(ascending=False, kind="stable")
    keep = list(order.index[:max_countries])
    pooled = len(order) > max_countries
    data["col"] = data["country"].where(data["country"].isin(keep), "other")
    tab = pd.crosstab(data["nat"], data["col"])
    cols = keep + (["other"] if pooled else [])
    tab = tab.reindex(columns=cols, fill_value=0).sort_index()
    share = tab.div(tab.sum(axis=1), axis=0).to_numpy(dtype=float)
    nr, nc = share.shape
    # tall enough for the colour bar's two-line label (a short heatmap of a few nationalities cut it off)
    fig = _new_figure(2.6 + 0.34 * nc, max(3.4, 1.9 + 0.3 * nr))
    ax = fig.subplots()
    vmax = max(10.0, float(np.ceil(share.max() * 10) * 10))  # contrast: the scale ends at the largest share
    im = ax.imshow(share * 100, cmap="Blues", vmin=0, vmax=vmax, aspect="auto", interpolation="nearest")
    ax.set_xticks(np.arange(nc))
    ax.set_xticklabels([shorten(c, 22) for c in cols], rotation=60, ha="right", fontsize=FONT - 2)
    ax.set_yticks(np.arange(nr))
    ax.set_yticklabels(
        [f"{shorten(r, 22)} (n={int(t)})" for r, t in zip(tab.index, tab.sum(axis=1), strict=False)], fontsize=FONT - 2
    )
    ax.set_xlabel("university country", fontsize=FONT)
    ax.set_ylabel(f"student {what}", fontsize=FONT)
    if nr * nc <= 400:
        for (i, j), v in np.ndenumerate(share):
            if v > 0:
                ax.text(
                    j,
                    i,
                    f"{v * 100:.0f}",
                    ha="center",
                    va="center",
                    fontsize=FONT - 3,
                    color="white" if v * 100 > vmax * 0.6 else "black",
                )
    cb = fig.colorbar(im, ax=ax, fraction=0.04, pad=0.02)
    cb.set_label(heatmap_bar_label(), fontsize=FONT - 1)
    cb.ax.tick_params(labelsize=FONT - 2)
    ax.set_title(shorten(title, 100), fontsize=FONT + 1)
    fig.tight_layout()
    png = _png(fig)
    caption = (
        f"Share (%) of each student {what}'s recommendations going to each university country under "
        f"{_context(model, template) or 'this partition'}; rows sum to 100. "
        + (
            f"The {max_countries} most recommended countries have a column; the remaining {len(order) - max_countries} "
            f"are pooled in 'other'. "
            if pooled
            else ""
        )
        + f"n: recommendations with a country for that {what}; the colour scale ends at {vmax:.0f}%."
    )
    return Figure(name, title, caption, png, model, template)


nationality_heatmap = home_heatmap  # the study's name of the figure function (callers and tests use it)
