"""The count bars of one partition: the top-20 university countries, universities and programs
(:func:`top_figure`, from :func:`top_counts` of :func:`item_labels`) and every recommended country
beside its share of the corpus (:func:`recommended_locations`)."""

from __future__ import annotations

from typing import Optional, Sequence

import numpy as np
import pandas as pd

from .. import axis_words
from .shared import (
    BAR,
    BAR_2,
    FONT,
    TOP_N,
    Figure,
    _context,
    _finish_hbar,
    _group_label,
    _new_figure,
    _ordered_values,
    _png,
    _single,
    _skip,
    _title,
    attribute_label,
    shorten,
)

# ----------------------------------------------------------------------------- top-20 figures
_TOP_KINDS = {
    # name: (what is counted, label of the thing, title word)
    "locations": "university country",
    "universities": "university",
    "programs": "program",
}


def item_labels(items: pd.DataFrame, kind: str) -> pd.Series:
    """The label counted for each recommended item, aligned with ``items``; missing where none.

    - locations: the item's country (of the matched corpus university, else the country the
      model wrote when it resolves);
    - universities: the matched corpus name; an unmatched item keeps the model's text, marked
      ``(not in corpus)``;
    - programs: the normalised program name.
    """
    if kind == "locations":
        return (
            items["country"].where(items["country"].notna(), items.get("iso3")) if "country" in items else items["iso3"]
        )
    if kind == "universities":
        matched = items["matched_name"] if "matched_name" in items else pd.Series(None, index=items.index, dtype=object)
        text = items["university_text"].astype("string").str.strip() if "university_text" in items else None
        if text is None:
            return matched
        unmatched = text.where(text.str.len() > 0) + " (not in corpus)"
        return matched.astype(object).where(matched.notna(), unmatched.astype(object))
    if kind == "programs":
        prog = items["program_norm"].astype("string").str.strip() if "program_norm" in items else None
        return prog.where(prog.str.len() > 0).astype(object) if prog is not None else pd.Series(None, index=items.index)
    raise ValueError(f"unknown kind {kind!r}; use one of {sorted(_TOP_KINDS)}")


def top_counts(items: pd.DataFrame, kind: str, by: Optional[str] = None, n: int = TOP_N) -> pd.DataFrame:
    """The top-``n`` labels (by count, ties by name) overall or within each value of ``by``.

    Columns: [by], label, count, share (of the group's items that have a label), total."""
    labels = item_labels(items, kind)
    cols = {"label": labels}
    if by is not None:
        cols[by] = items[by]
    data = pd.DataFrame(cols).dropna()
    keys = [by] if by else []
    if data.empty:
        return pd.DataFrame(columns=keys + ["label", "count", "share", "total"])
    counts = data.groupby(keys + ["label"], sort=True).size().rename("count").reset_index()
    if by:
        counts["total"] = counts.groupby(by)["count"].transform("sum")
    else:
        counts["total"] = counts["count"].sum()
    counts["share"] = counts["count"] / counts["total"]
    counts = counts.sort_values(keys + ["count", "label"], ascending=[True] * len(keys) + [False, True], kind="stable")
    counts = counts.groupby(by, sort=False).head(n) if by else counts.head(n)
    return counts.reset_index(drop=True)


def _hbar(ax, labels: Sequence[str], values: np.ndarray, counts: np.ndarray, color: str = BAR) -> None:
    y = np.arange(len(labels))
    ax.barh(y, values, color=color, height=0.7)
    ax.set_yticks(y)
    ax.set_yticklabels([shorten(s) for s in labels], fontsize=FONT - 1)
    ax.invert_yaxis()
    top = float(np.nanmax(values)) if len(values) else 1.0
    ax.set_xlim(0, top * 1.18 if top > 0 else 1)
    for yi, v, c in zip(y, values, counts, strict=False):
        ax.text(v + top * 0.01, yi, f"{int(c)}", va="center", fontsize=FONT - 2)
    ax.tick_params(axis="x", labelsize=FONT - 1)
    ax.grid(axis="x", alpha=0.3)
    ax.set_axisbelow(True)


def figure_suffix(by: str) -> str:
    """The ``_by_`` part of a top-20 figure's name: the axis's short name, file-safe (the study's
    ``class`` for ``economic_class``, ``gender``)."""
    return axis_words.short(by).replace(" ", "_")


def top_figure(
    items: pd.DataFrame, kind: str, by: Optional[str] = None, *, model: str = "", template: str = "", n: int = TOP_N
) -> Figure:
    """Top-``n`` university countries / universities / programs, overall or one panel per value
    of axis ``by`` (one of :func:`axis_words.by_axes`: the study's ``economic_class`` or ``gender``);
    bars are shares of the panel's items, the number beside each bar its count. The figure is named
    ``top_<kind>_by_<the axis's short name>`` (the study's ``top_locations_by_class``)."""
    if kind not in _TOP_KINDS:
        raise ValueError(f"unknown kind {kind!r}; use one of {sorted(_TOP_KINDS)}")
    model = model or _single(items, "model")
    template = template or _single(items, "template")
    name = f"top_{kind}" + (f"_by_{figure_suffix(by)}" if by else "")
    what = {"locations": "university locations", "universities": "universities", "programs": "programs"}[kind]
    by_txt = f" by {attribute_label(by)}" if by else ""
    title = _title(f"Top {n} recommended {what}{by_txt}", model, template)
    if items is None or items.empty:
        return _skip(name, title, "no recommended items in this partition", model, template)
    if by is not None and (by not in items.columns or items[by].isna().all()):
        return _skip(name, title, f"the profiles of this template state no {attribute_label(by)}", model, template)
    top = top_counts(items, kind, by, n)
    if top.empty:
        missing = {"locations": "country", "universities": "university", "programs": "program"}[kind]
        return _skip(name, title, f"no recommended item has a {missing}", model, template)
    groups = _ordered_values(top[by], by) if by else [None]
    rows = max(len(top[top[by] == g]) for g in groups) if by else len(top)
    width = 4.6 * len(groups) + 0.6 if by else 7.5
    height = 1.3 + 0.24 * max(rows, 3)
    fig = _new_figure(width, height)
    axes = fig.subplots(1, len(groups), squeeze=False)[0]
    for ax, g in zip(axes, groups, strict=False):
        part = top if g is None else top[top[by] == g]
        _hbar(ax, part["label"].tolist(), part["share"].to_numpy() * 100, part["count"].to_numpy())
        total = int(part["total"].iloc[0])
        ax.set_title(
            (f"{_group_label(by, g)} (n={total})" if g is not None else f"all students (n={total})"), fontsize=FONT
        )
        ax.set_xlabel("share of recommendations (%)", fontsize=FONT - 1)
    axes[0].set_ylabel(_TOP_KINDS[kind], fontsize=FONT - 1)
    fig.suptitle(shorten(title, 110), fontsize=FONT + 2)
    fig.tight_layout()
    png = _png(fig)
    basis = {
        "locations": "Country of the matched corpus university, else the country the model wrote.",
        "universities": "Matched QS corpus name; an unmatched answer keeps the model's text, marked '(not in corpus)'.",
        "programs": "Normalised program name as parsed from the answer.",
    }[kind]
    caption = (
        f"The {n} most recommended {what}{by_txt} under {_context(model, template) or 'this partition'}. "
        f"Bars: share of the {'group' if by else 'partition'}'s recommendations (n = items with a "
        f"{_TOP_KINDS[kind]}); number beside a bar: count. {basis} Long names are cut with an ellipsis."
    )
    return Figure(name, title, caption, png, model, template)


# ----------------------------------------------------------------------------- all locations
def recommended_locations(
    items: pd.DataFrame, grs: Optional[pd.DataFrame] = None, *, model: str = "", template: str = ""
) -> Figure:
    """Every recommended country: its share of the recommendations beside its share of the
    corpus's universities (Avail of the GRS table, when given); counts annotated.

    The numbers behind :func:`world_map`, which shades the same ratio on a map."""
    model = model or _single(items, "model")
    template = template or _single(items, "template")
    name = "recommended_locations"
    title = _title("All recommended university locations", model, template)
    if items is None or items.empty:
        return _skip(name, title, "no recommended items in this partition", model, template)
    top = top_counts(items, "locations", None, n=len(items))
    if top.empty:
        return _skip(name, title, "no recommended item has a country", model, template)
    iso_of = (
        items.dropna(subset=["iso3"])
        .assign(label=item_labels(items, "locations"))
        .drop_duplicates("label")
        .set_index("label")["iso3"]
    )
    top["iso3"] = top["label"].map(iso_of)
    have_corpus = grs is not None and not grs.empty and {"iso3", "avail"} <= set(grs.columns)
    if have_corpus:
        avail = grs.drop_duplicates("iso3").set_index("iso3")["avail"]
        top["corpus_share"] = top["iso3"].map(avail).fillna(0.0)
    n = len(top)
    fig = _new_figure(8.5, 1.4 + 0.2 * max(n, 4))
    ax = fig.subplots()
    y = np.arange(n)
    h = 0.4 if have_corpus else 0.7
    rec = top["share"].to_numpy() * 100
    ax.barh(y - (h / 2 if have_corpus else 0), rec, height=h, color=BAR, label="share of recommendations")
    if have_corpus:
        ax.barh(
            y + h / 2, top["corpus_share"].to_numpy() * 100, height=h, color=BAR_2, label="share of corpus universities"
        )
    hi = float(max(rec.max(), (top["corpus_share"].max() * 100) if have_corpus else 0))
    for yi, v, c in zip(y, rec, top["count"].to_numpy(), strict=False):
        ax.text(v + hi * 0.01, yi - (h / 2 if have_corpus else 0), str(int(c)), va="center", fontsize=FONT - 3)
    ax.set_xlim(0, hi * 1.15 if hi > 0 else 1)
    _finish_hbar(
        ax,
        [shorten(s, 30) for s in top["label"]],
        xlabel="percent",
        ylabel="university country",
        title=title,
        legend_loc="lower right",
    )
    png = _png(fig)
    total = int(top["count"].sum())
    caption = (
        f"All {n} countries recommended under {_context(model, template) or 'this partition'} "
        f"({total} recommendations with a country), sorted by count (number beside the bar). "
        + (
            "Beside each, the country's share of the ranking corpus's universities (Avail), so over- and "
            "under-representation can be read off; the world map (world_map) shades each country by the "
            "ratio of the two shares."
            if have_corpus
            else ""
        )
    )
    return Figure(name, title, caption, png, model, template)
