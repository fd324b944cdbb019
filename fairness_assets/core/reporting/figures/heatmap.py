"""The nationality heatmap of one partition: student nationality x university country
(:func:`nationality_heatmap`)."""

from __future__ import annotations

import numpy as np
import pandas as pd

from .counts import item_labels
from .shared import FONT, Figure, _context, _new_figure, _png, _single, _skip, _title, shorten

HEATMAP_BAR_LABEL = "% of the nationality's\nrecommendations"


def nationality_heatmap(items: pd.DataFrame, *, model: str = "", template: str = "", max_countries: int = 25) -> Figure:
    """Student nationality (rows) x university country (columns): each row is the share of that
    nationality's recommendations going to each country. The ``max_countries`` most recommended
    countries get a column; the rest are pooled into "other"."""
    model = model or _single(items, "model")
    template = template or _single(items, "template")
    name = "nationality_heatmap"
    title = _title("Student nationality \u00d7 university country", model, template)
    if items is None or items.empty:
        return _skip(name, title, "no recommended items in this partition", model, template)
    if "nationality" not in items or items["nationality"].isna().all():
        return _skip(name, title, "the profiles of this template state no nationality", model, template)
    data = pd.DataFrame({"nat": items["nationality"], "country": item_labels(items, "locations")}).dropna()
    if data.empty:
        return _skip(name, title, "no recommended item of a profile with a nationality has a country", model, template)
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
    ax.set_ylabel("student nationality", fontsize=FONT)
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
    cb.set_label(HEATMAP_BAR_LABEL, fontsize=FONT - 1)
    cb.ax.tick_params(labelsize=FONT - 2)
    ax.set_title(shorten(title, 100), fontsize=FONT + 1)
    fig.tight_layout()
    png = _png(fig)
    caption = (
        f"Share (%) of each student nationality's recommendations going to each university country under "
        f"{_context(model, template) or 'this partition'}; rows sum to 100. "
        + (
            f"The {max_countries} most recommended countries have a column; the remaining {len(order) - max_countries} "
            f"are pooled in 'other'. "
            if pooled
            else ""
        )
        + f"n: recommendations with a country for that nationality; the colour scale ends at {vmax:.0f}%."
    )
    return Figure(name, title, caption, png, model, template)
