"""The figures of the audit (METHOD.md §8.8), as PNG bytes: pure, no Dagster, no database.

Every figure function takes plain frames (the tables of :func:`metrics.score_partition`, of
:func:`metrics.base_vs_regional`, or a tidy comparison table) and returns a :class:`Figure`:
its name, title, caption and PNG bytes. Where the input has nothing to draw (no economic
class in a ``gender_only`` template, no nationality in ``class_only``, ...), the figure is
returned with ``png=None`` and ``skipped_reason`` saying why: never a blank image.

Figures are drawn on :class:`matplotlib.figure.Figure` objects with the Agg canvas (no pyplot,
no global state: safe in threads) at a fixed size and DPI, and saved without software or
time metadata, so identical input gives identical bytes.

Per partition (model x template), from :func:`all_partition_figures`:

- ``top_locations``, ``top_locations_by_class``, ``top_locations_by_gender``       top-20 countries
- ``top_universities``, ``top_universities_by_class``, ``top_universities_by_gender``
- ``top_programs``, ``top_programs_by_class``, ``top_programs_by_gender``
- ``recommended_locations``   every recommended country: share of recommendations vs. share of
                              the corpus (a sorted bar chart: the exact numbers behind the map)
- ``nationality_heatmap``     student nationality x university country
- ``world_map``               every country shaded by its share of recommendations against its
                              share of corpus universities; the students' countries marked
                              (Natural Earth shapes shipped in a package: :mod:`.world_shapes`)

Per partition, for the report's geography section only (:func:`geography_figures`, from the
items of :func:`geostats.item_geography`; not part of :func:`all_partition_figures`):

- ``region_flow``             student region x university region (row shares)
- ``locations_by_region``     the most recommended university countries, coloured by region

Per model: ``base_vs_regional_drs`` and ``base_vs_regional_grs`` (:func:`base_vs_regional_figures`).
Across models or runs: ``model_comparison`` and ``drift``.
"""

from __future__ import annotations

import io
import re
import warnings
from dataclasses import dataclass
from typing import Iterable, Mapping, Optional, Sequence

import numpy as np
import pandas as pd
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure as MplFigure

from ..common.naming import file_stem

DPI = 100
TOP_N = 20
LABEL_CHARS = 42
FONT = 9
_UNSAFE_NAME = re.compile(r"[^A-Za-z0-9._-]|^[.-]")  # a figure name that is not a file name as it is
SAVE_METADATA = {"Software": None}  # PNG: no "Software" chunk; matplotlib writes no time for PNG

ATTRIBUTE_LABELS = {"gender": "gender", "economic_class": "economic class", "nationality": "nationality"}
ORDER = {
    "gender": ["male", "female", "transgender"],
    "economic_class": ["high", "middle", "low"],
}
CLASS_LABELS = {"high": "high-income", "middle": "middle-income", "low": "low-income"}
BAR = "#3b6ea8"
BAR_2 = "#c8a24a"
POS = "#2e7d4f"
NEG = "#b3432f"


@dataclass(frozen=True)
class Figure:
    """One figure: PNG bytes, or ``png=None`` with the reason it was not drawn."""

    name: str  # e.g. "top_locations_by_class"
    title: str
    caption: str
    png: Optional[bytes]
    model: str = ""
    template: str = ""
    skipped_reason: Optional[str] = None

    @property
    def skipped(self) -> bool:
        return self.png is None

    @property
    def slug(self) -> str:
        """A file-name-safe unique name: ``<model>__<template>__<name>-<hash>`` (empty parts left out),
        at most 80 characters (:func:`fairness_assets.core.common.naming.file_stem`).

        Making a name file-safe drops characters (``llama 3`` and ``llama-3`` would both become
        ``llama-3``), some file systems ignore case and a model name may be longer than a file name
        can be, so the readable part is cut to fit and the name ends with a short hash of the exact
        model, template and figure name: one file per (model, template, figure).
        """
        if not (self.model or self.template):
            return file_stem(self.name) if _UNSAFE_NAME.search(self.name) or len(self.name) > 80 else self.name
        return file_stem(self.model, self.template, self.name)


# ----------------------------------------------------------------------------- helpers
def shorten(text, limit: int = LABEL_CHARS) -> str:
    """A label no longer than ``limit`` characters, cut with an ellipsis."""
    s = " ".join(str(text).split())
    return s if len(s) <= limit else s[: limit - 1].rstrip() + "\u2026"


def _context(model: str, template: str) -> str:
    if model and template:
        return f"{model} \u00b7 {template} template"
    return model or (f"{template} template" if template else "")


def _title(what: str, model: str, template: str) -> str:
    ctx = _context(model, template)
    return f"{what} \u2014 {ctx}" if ctx else what


def _new_figure(width: float, height: float) -> MplFigure:
    fig = MplFigure(figsize=(round(width, 2), round(height, 2)), dpi=DPI)
    FigureCanvasAgg(fig)
    return fig


def _png(fig: MplFigure) -> bytes:
    buf = io.BytesIO()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # missing glyphs in model-written names: drawn as boxes
        fig.savefig(buf, format="png", dpi=DPI, metadata=SAVE_METADATA)
    fig.clear()
    return buf.getvalue()


def _skip(name: str, title: str, reason: str, model: str, template: str) -> Figure:
    return Figure(
        name=name,
        title=title,
        caption=f"Not drawn: {reason}",
        png=None,
        model=model,
        template=template,
        skipped_reason=reason,
    )


def _ordered_values(values: Iterable, attr: str) -> list:
    present = list(dict.fromkeys(v for v in values if isinstance(v, str)))
    known = [v for v in ORDER.get(attr, []) if v in present]
    return known + sorted(v for v in present if v not in known)


def _group_label(attr: str, value) -> str:
    if attr == "economic_class":
        return CLASS_LABELS.get(value, str(value))
    return str(value)


def _single(df: pd.DataFrame, col: str) -> str:
    if col not in df.columns:
        return ""
    vals = pd.unique(df[col].dropna().astype(str))
    return str(vals[0]) if len(vals) == 1 else ""


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


def _finish_hbar(
    fig: MplFigure,
    ax,
    y,
    labels: Sequence[str],
    *,
    xlabel: str,
    title: str,
    legend_loc: str,
    ylabel: str = "",
    label_size: int = FONT - 2,
    xlabel_size: int = FONT,
) -> None:
    """Ticks, labels, grid, legend and title of a horizontal bar chart with a legend."""
    ax.set_yticks(y)
    ax.set_yticklabels(labels, fontsize=label_size)
    ax.invert_yaxis()
    ax.set_xlabel(xlabel, fontsize=xlabel_size)
    if ylabel:
        ax.set_ylabel(ylabel, fontsize=FONT)
    ax.grid(axis="x", alpha=0.3)
    ax.set_axisbelow(True)
    ax.legend(fontsize=FONT - 1, loc=legend_loc)
    ax.set_title(shorten(title, 100), fontsize=FONT + 1)
    fig.tight_layout()


def top_figure(
    items: pd.DataFrame, kind: str, by: Optional[str] = None, *, model: str = "", template: str = "", n: int = TOP_N
) -> Figure:
    """Top-``n`` university countries / universities / programs, overall or one panel per value
    of ``by`` (``gender`` or ``economic_class``); bars are shares of the panel's items, the
    number beside each bar its count."""
    if kind not in _TOP_KINDS:
        raise ValueError(f"unknown kind {kind!r}; use one of {sorted(_TOP_KINDS)}")
    model = model or _single(items, "model")
    template = template or _single(items, "template")
    name = f"top_{kind}" + (f"_by_{'class' if by == 'economic_class' else by}" if by else "")
    what = {"locations": "university locations", "universities": "universities", "programs": "programs"}[kind]
    by_txt = f" by {ATTRIBUTE_LABELS.get(by, by)}" if by else ""
    title = _title(f"Top {n} recommended {what}{by_txt}", model, template)
    if items is None or items.empty:
        return _skip(name, title, "no recommended items in this partition", model, template)
    if by is not None and (by not in items.columns or items[by].isna().all()):
        return _skip(
            name, title, f"the profiles of this template state no {ATTRIBUTE_LABELS.get(by, by)}", model, template
        )
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
        fig,
        ax,
        y,
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


# ----------------------------------------------------------------------------- heatmap
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


# ----------------------------------------------------------------------------- world map (issue 23)
WORLD_MAP_BOUND = 2.0  # log2 of the share ratio: the colour scale ends at 4x fewer / 4x more
WORLD_MAP_CMAP = "PuOr"  # ColorBrewer's orange-purple diverging scheme: colour-blind safe, symmetric
NOT_RECOMMENDED = "#4a4a4a"  # corpus universities, no recommendation: dark grey, white hatch
NO_CORPUS = "#dcdcdc"  # no corpus university: light grey
NO_CORPUS_HATCH = "#5e3c99"  # recommended although no corpus university: light grey, purple dots
STUDENT_MARKER = "^"
SMALL_COUNTRY_PX2 = 20.0  # a country drawn smaller than this many square pixels also gets a dot
WORLD_MAP_STATUSES = ("recommended", "not recommended", "no corpus university")


def _countries(n: int, what: str = "") -> str:
    return f"{n} {what + ' ' if what else ''}{'country' if n == 1 else 'countries'}"


def _ratio_word(ratio: float) -> str:
    return f"{ratio:.1f}\u00d7" if ratio >= 1 else f"{ratio:.2f}\u00d7"


def country_share_ratios(items: pd.DataFrame, grs: Optional[pd.DataFrame]) -> pd.DataFrame:
    """What :func:`world_map` shades: per country, its share of the partition's located
    recommendations against its share of the corpus's universities.

    ``items``: ``drs_items`` (or the recommendations) with ``iso3``, the country of each item
    (the matched corpus university's, else the one the model wrote, as in
    :func:`recommended_locations`); items without a country are not counted. ``grs``:
    ``grs_by_country`` (``iso3``, ``country``, ``avail`` = the country's share of the corpus's
    universities, ``total_unis``).

    One row per country that is recommended or has corpus universities, sorted by ISO3:
    ``iso3``, ``country``, ``recommendations``, ``rec_share``, ``corpus_universities``,
    ``corpus_share``, ``ratio`` (rec_share / corpus_share; 0 when not recommended, NaN without
    corpus universities), ``log2_ratio`` (-inf when not recommended), ``shade`` (log2_ratio
    clipped to +-:data:`WORLD_MAP_BOUND`, NaN where the ratio is 0 or undefined) and ``status``
    (one of :data:`WORLD_MAP_STATUSES`).
    """
    if grs is None or not {"iso3", "avail"} <= set(grs.columns):
        raise ValueError("country_share_ratios needs the grs_by_country table (columns iso3 and avail)")
    if "iso3" not in items.columns:
        raise ValueError("country_share_ratios needs the items' iso3 column (the country of each item)")
    located = items["iso3"].dropna().astype(str)
    located = located[located.str.len() > 0]
    counts = located.value_counts().rename("recommendations")
    total = int(counts.sum())
    corpus = grs.dropna(subset=["iso3"]).drop_duplicates("iso3").set_index("iso3")
    share = pd.to_numeric(corpus["avail"], errors="coerce").fillna(0.0)
    if "total_unis" in corpus:
        unis = pd.to_numeric(corpus["total_unis"], errors="coerce").fillna(0).astype(np.int64)
    else:
        unis = pd.Series(np.where(share > 0, 1, 0), index=corpus.index)  # only whether it has any
    codes = sorted(set(counts.index) | set(share.index[share > 0]))
    out = pd.DataFrame({"iso3": codes})
    names = corpus["country"] if "country" in corpus else pd.Series(dtype=object)
    if "country" in items.columns:
        item_names = items.dropna(subset=["iso3", "country"]).drop_duplicates("iso3").set_index("iso3")["country"]
        names = names.combine_first(item_names) if len(names) else item_names
    out["country"] = out["iso3"].map(names).where(lambda s: s.notna(), out["iso3"]).astype(str)
    out["recommendations"] = out["iso3"].map(counts).fillna(0).astype(np.int64)
    out["rec_share"] = out["recommendations"] / total if total else 0.0
    out["corpus_universities"] = out["iso3"].map(unis).fillna(0).astype(np.int64)
    out["corpus_share"] = out["iso3"].map(share).fillna(0.0).astype(float)
    has_corpus = out["corpus_share"].to_numpy() > 0
    with np.errstate(divide="ignore", invalid="ignore"):
        ratio = np.where(has_corpus, out["rec_share"].to_numpy(dtype=float) / out["corpus_share"].to_numpy(), np.nan)
        out["ratio"] = ratio
        out["log2_ratio"] = np.log2(ratio)
    out["shade"] = np.where(ratio > 0, np.clip(out["log2_ratio"], -WORLD_MAP_BOUND, WORLD_MAP_BOUND), np.nan)
    out["status"] = np.select(
        [has_corpus & (out["recommendations"] > 0), has_corpus],
        ["recommended", "not recommended"],
        default="no corpus university",
    )
    return out


def _student_countries(items: pd.DataFrame) -> tuple[list[str], list[str]]:
    """The ISO3 codes of the students' nationalities (``student_iso3`` of ``drs_items``, else the
    ``nationality`` names resolved), and the nationalities that resolve to no country."""
    if "nationality" not in items.columns or items["nationality"].isna().all():
        return [], []
    if "student_iso3" in items.columns:
        pairs = items[["nationality", "student_iso3"]].dropna(subset=["nationality"]).drop_duplicates()
        codes = pairs["student_iso3"]
    else:
        from ..reference.geo import CountryResolver

        pairs = items[["nationality"]].dropna().drop_duplicates()
        resolver = CountryResolver()
        codes = pairs["nationality"].map(resolver.iso3)
    unresolved = sorted(
        {str(n) for n, c in zip(pairs["nationality"], codes, strict=False) if not isinstance(c, str) or not c}
    )
    return sorted({str(c) for c in codes if isinstance(c, str) and c}), unresolved


def world_map_colors(table: pd.DataFrame) -> pd.DataFrame:
    """The colour of each country of :func:`country_share_ratios`' table: ``face`` (RGBA tuple),
    ``hatch`` ('' or a matplotlib hatch) and ``edge`` (hatch and border colour), by ``iso3``."""
    from matplotlib import colormaps
    from matplotlib.colors import Normalize, to_rgba

    cmap, norm = colormaps[WORLD_MAP_CMAP], Normalize(-WORLD_MAP_BOUND, WORLD_MAP_BOUND)
    faces, hatches, edges = [], [], []
    for status, shade in zip(table["status"], table["shade"], strict=False):
        if status == "recommended":
            faces.append(tuple(float(v) for v in cmap(norm(float(shade)))))
            hatches.append("")
            edges.append("white")
        elif status == "not recommended":
            faces.append(to_rgba(NOT_RECOMMENDED))
            hatches.append("////")
            edges.append("white")
        else:
            faces.append(to_rgba(NO_CORPUS))
            hatches.append("....")
            edges.append(NO_CORPUS_HATCH)
    return pd.DataFrame({"iso3": table["iso3"].to_numpy(), "face": faces, "hatch": hatches, "edge": edges})


def _world_map_figure(table: pd.DataFrame, students: Sequence[str], title: str, shapes) -> tuple[MplFigure, dict]:
    """Draws the map; returns the figure and what it drew (``dots``: countries drawn as dots,
    ``missing``: countries of the table or students without a shape, ``axes``)."""
    from matplotlib import colormaps
    from matplotlib.cm import ScalarMappable
    from matplotlib.collections import PatchCollection
    from matplotlib.colors import Normalize
    from matplotlib.lines import Line2D
    from matplotlib.patches import Patch, PathPatch

    width = 11.0
    fig = _new_figure(width, 6.0)
    ax = fig.add_axes((0.01, 0.2, 0.98, 0.72))
    ax.set_xlim(*shapes.xlim)
    ax.set_ylim(*shapes.ylim)
    ax.set_aspect("equal")
    ax.set_axis_off()
    ax.add_patch(PathPatch(shapes.outline, facecolor="none", edgecolor="#b0b0b0", linewidth=0.6, zorder=0))
    colors = world_map_colors(table).set_index("iso3")
    # the country outlines: one collection per kind of fill (a collection has one hatch)
    groups: dict[tuple, list] = {}
    for iso, shape in sorted(shapes.countries.items()):
        if shape.path is None:
            continue
        if iso in colors.index:
            c = colors.loc[iso]
            key = (c["hatch"], c["edge"])
            face = c["face"]
        else:
            key, face = ("", "white"), NO_CORPUS
        groups.setdefault(key, []).append((PathPatch(shape.path), face))
    for (hatch, edge), members in sorted(groups.items()):
        coll = PatchCollection(
            [p for p, _ in members],
            facecolors=[f for _, f in members],
            edgecolors=edge,
            linewidths=0.25,
            hatch=hatch or None,
            zorder=1,
        )
        ax.add_collection(coll)
    # countries too small to see: a dot in their colour
    ax.apply_aspect()  # the axes' final box (equal aspect)
    px_per_unit = ax.get_position().width * width * DPI / (shapes.xlim[1] - shapes.xlim[0])
    dots, missing = [], []
    for iso in table["iso3"]:
        shape = shapes.countries.get(iso)
        if shape is None:
            missing.append(iso)
        elif shape.area * px_per_unit**2 < SMALL_COUNTRY_PX2:
            dots.append(iso)
    for iso in dots:
        c = colors.loc[iso]
        x, y = shapes.countries[iso].anchor
        ax.plot(
            [x],
            [y],
            marker="o",
            markersize=5.0,
            markerfacecolor=c["face"],
            markeredgecolor="#222222",
            markeredgewidth=0.6,
            linestyle="none",
            zorder=3,
        )
    student_drawn = [s for s in students if s in shapes.countries]
    missing += [s for s in students if s not in shapes.countries and s not in missing]
    if student_drawn:
        xs, ys = zip(*(shapes.countries[s].anchor for s in student_drawn), strict=False)
        ax.plot(
            xs,
            ys,
            marker=STUDENT_MARKER,
            markersize=6.5,
            markerfacecolor="white",
            markeredgecolor="black",
            markeredgewidth=0.9,
            linestyle="none",
            zorder=4,
        )
    # colour bar and legend below the map
    cax = fig.add_axes((0.05, 0.115, 0.42, 0.035))
    sm = ScalarMappable(norm=Normalize(-WORLD_MAP_BOUND, WORLD_MAP_BOUND), cmap=colormaps[WORLD_MAP_CMAP])
    cb = fig.colorbar(sm, cax=cax, orientation="horizontal", extend="both")
    b = int(round(2**WORLD_MAP_BOUND))
    ticks = np.arange(-WORLD_MAP_BOUND, WORLD_MAP_BOUND + 0.5)
    cb.set_ticks(ticks)
    cb.set_ticklabels(
        [
            f"{b}\u00d7 less"
            if t == -WORLD_MAP_BOUND
            else f"{int(2**-t)}\u00d7 less"
            if t < 0
            else "as many"
            if t == 0
            else f"{int(2**t)}\u00d7 more"
            for t in ticks
        ]
    )
    cb.ax.tick_params(labelsize=FONT - 1)
    cb.set_label(
        f"recommended ({b}\u00d7 less \u2026 {b}\u00d7 more) than its share of corpus universities; "
        f"log scale, clipped at {b}\u00d7",
        fontsize=FONT - 1,
    )
    counts = table["status"].value_counts()
    handles = [
        Patch(
            facecolor=NOT_RECOMMENDED,
            edgecolor="white",
            hatch="////",
            label=f"corpus universities, not recommended ({int(counts.get('not recommended', 0))})",
        ),
        Patch(facecolor=NO_CORPUS, edgecolor=NO_CORPUS, label="no corpus university"),
    ]
    if counts.get("no corpus university", 0):
        handles.append(
            Patch(
                facecolor=NO_CORPUS,
                edgecolor=NO_CORPUS_HATCH,
                hatch="....",
                label=f"recommended, no corpus university ({int(counts['no corpus university'])})",
            )
        )
    if student_drawn:
        handles.append(
            Line2D(
                [],
                [],
                marker=STUDENT_MARKER,
                markersize=6.5,
                markerfacecolor="white",
                markeredgecolor="black",
                linestyle="none",
                label=f"students' nationality ({len(student_drawn)} countries)",
            )
        )
    if dots:
        handles.append(
            Line2D(
                [],
                [],
                marker="o",
                markersize=5.0,
                markerfacecolor="#bbbbbb",
                markeredgecolor="#222222",
                linestyle="none",
                label="small country (dot in its colour)",
            )
        )
    fig.legend(
        handles=handles,
        loc="lower left",
        bbox_to_anchor=(0.53, 0.02),
        ncol=1,
        fontsize=FONT - 1,
        frameon=False,
        handlelength=1.6,
    )
    fig.suptitle(shorten(title, 120), fontsize=FONT + 2, y=0.965)
    return fig, {"dots": dots, "missing": missing, "axes": ax, "students": student_drawn}


def world_map(
    items: pd.DataFrame, grs: Optional[pd.DataFrame] = None, *, model: str = "", template: str = ""
) -> Figure:
    """A world map of one partition: each country shaded by its share of the recommendations
    against its share of the corpus's universities (:func:`country_share_ratios`: log2 of the
    ratio, clipped at +-:data:`WORLD_MAP_BOUND`, on ColorBrewer's PuOr: orange fewer, purple more);
    corpus countries never recommended dark grey and hatched; countries without corpus
    universities light grey (dotted when recommended anyway); the countries of the students'
    nationalities marked with a triangle; countries too small to see also drawn as a dot.

    Shapes: Natural Earth admin-0 countries shipped inside a package (:mod:`.world_shapes`),
    joined on ISO3; nothing is downloaded."""
    from .world_shapes import WorldShapesError, world_shapes

    if items is not None:
        model = model or _single(items, "model")
        template = template or _single(items, "template")
    name = "world_map"
    title = _title("Recommended against corpus universities, by country", model, template)
    if items is None or items.empty:
        return _skip(name, title, "no recommended items in this partition", model, template)
    if "iso3" not in items.columns or not items["iso3"].notna().any():
        return _skip(name, title, "no recommended item is located in a country", model, template)
    if grs is None or grs.empty or not {"iso3", "avail"} <= set(grs.columns):
        return _skip(
            name, title, "no corpus table (grs_by_country) to compare the recommendations with", model, template
        )
    table = country_share_ratios(items, grs)
    try:
        shapes = world_shapes()
    except WorldShapesError as exc:
        return _skip(name, title, str(exc), model, template)
    if not table["iso3"].isin(list(shapes.countries)).any():
        return _skip(
            name,
            title,
            f"none of the {len(table)} countries ({', '.join(table['iso3'][:5])}"
            f"{', ...' if len(table) > 5 else ''}) has a shape in {shapes.source}",
            model,
            template,
        )
    students, unresolved = _student_countries(items)
    fig, drawn = _world_map_figure(table, students, title, shapes)
    png = _png(fig)
    rec = table[table["status"] == "recommended"].sort_values(["ratio", "iso3"], ascending=[False, True])
    corpus_n = int((table["corpus_share"] > 0).sum())
    extra = table[table["status"] == "no corpus university"]
    total = int(table["recommendations"].sum())
    b = int(round(2**WORLD_MAP_BOUND))
    over = ", ".join(f"{c} {_ratio_word(r)}" for c, r in zip(rec["country"][:3], rec["ratio"][:3], strict=False))
    under = rec[rec["ratio"] < 1].sort_values(["ratio", "iso3"]).head(3)
    under_txt = ", ".join(f"{c} {_ratio_word(r)}" for c, r in zip(under["country"], under["ratio"], strict=False))
    caption = (
        f"Each country shaded by its share of the {total} recommendations located in a country under "
        f"{_context(model, template) or 'this partition'} (the matched corpus university's country, else the "
        f"country the model wrote) divided by its share of the corpus's universities: log scale, symmetric, "
        f"clipped at {b}\u00d7 (orange: recommended less than its corpus share, purple: more; ColorBrewer PuOr, "
        f"readable with colour-blindness). {len(rec)} of the {_countries(corpus_n, 'corpus')} "
        f"{'was' if len(rec) == 1 else 'were'} recommended; {_countries(corpus_n - len(rec), 'corpus')} got no "
        f"recommendation (dark grey, hatched)"
        + (
            f"; {_countries(len(extra), 'recommended')} {'has' if len(extra) == 1 else 'have'} no corpus university "
            f"(dotted: "
            + ", ".join(shorten(c, 30) for c in extra["country"][:5])
            + (", ..." if len(extra) > 5 else "")
            + ")"
            if len(extra)
            else ""
        )
        + ". Light grey: no corpus university. "
        + (f"Most over-represented: {over}. " if over else "")
        + (f"Most under-represented among the recommended: {under_txt}. " if under_txt else "")
        + (
            f"Triangles: the {_countries(len(drawn['students']))} of the students' nationalities. "
            if drawn["students"]
            else "The profiles of this template state no nationality. "
        )
        + (f"Nationalities that name no country: {', '.join(unresolved[:5])}. " if unresolved else "")
        + (
            "Dots: countries too small to see ("
            f"{', '.join(shorten(c, 24) for c in table.set_index('iso3').loc[drawn['dots'], 'country'][:8])}"
            f"{', ...' if len(drawn['dots']) > 8 else ''}). "
            if drawn["dots"]
            else ""
        )
        + (f"Not on the map (no shape): {', '.join(drawn['missing'][:8])}. " if drawn["missing"] else "")
        + f"Shapes: {shapes.source}, Equal Earth projection; Antarctica left out."
    )
    return Figure(name, title, caption, png, model, template)


# ----------------------------------------------------------------------------- base vs regional
def base_vs_regional_figures(
    drs_change: pd.DataFrame, grs_change: pd.DataFrame, model: str = "", max_countries: int = 40
) -> list[Figure]:
    """§8.4 for one model: percent change of DRS/Acc/Rep by group from the base to the regional
    template, and GRS per country under both (the tables of :func:`metrics.base_vs_regional`)."""
    return [base_vs_regional_drs(drs_change, model), base_vs_regional_grs(grs_change, model, max_countries)]


def _for_model(df: Optional[pd.DataFrame], model: str) -> tuple[pd.DataFrame, str]:
    if df is None:
        return pd.DataFrame(), model
    if "model" in df.columns and len(df):
        models = pd.unique(df["model"].dropna().astype(str))
        if model:
            df = df[df["model"].astype(str) == model]
        elif len(models) > 1:
            raise ValueError(f"the table holds several models {sorted(models)}: pass model=")
        else:
            model = str(models[0]) if len(models) else ""
    return df, model


def base_vs_regional_drs(drs_change: pd.DataFrame, model: str = "") -> Figure:
    df, model = _for_model(drs_change, model)
    name = "base_vs_regional_drs"
    title = _title("Base \u2192 regional template: change in DRS, Acc, Rep", model, "")
    metrics = [m for m in ("drs", "acc", "rep") if f"{m}_change_pct" in df.columns]
    if df.empty or not metrics or df[[f"{m}_change_pct" for m in metrics]].isna().all().all():
        return _skip(name, title, "no group has both a base and a regional score", model, "")
    order = {"overall": 0, "gender": 1, "economic_class": 2}
    df = df.assign(_o=df["group_by"].map(order).fillna(3))
    within = {b: _ordered_values(df.loc[df["group_by"] == b, "group"], b) for b in df["group_by"].unique()}
    df = df.assign(
        _w=[within[b].index(g) if g in within[b] else 99 for b, g in zip(df["group_by"], df["group"], strict=False)]
    )
    df = df.sort_values(["_o", "group_by", "_w"], kind="stable").reset_index(drop=True)
    labels = [
        ("all students" if b == "overall" else f"{ATTRIBUTE_LABELS.get(b, b)}: {_group_label(b, g)}")
        for b, g in zip(df["group_by"], df["group"], strict=False)
    ]
    fig = _new_figure(8.0, 1.6 + 0.42 * len(df))
    ax = fig.subplots()
    y = np.arange(len(df))
    h = 0.8 / len(metrics)
    colors = {"drs": BAR, "acc": "#5aa27c", "rep": BAR_2}
    vals_all = []
    for k, m in enumerate(metrics):
        v = df[f"{m}_change_pct"].to_numpy(dtype=float)
        vals_all.append(v)
        off = (k - (len(metrics) - 1) / 2) * h
        ax.barh(y + off, np.nan_to_num(v), height=h, color=colors[m], label=m.upper() if m == "drs" else m.capitalize())
        for yi, vi in zip(y, v, strict=False):
            if np.isfinite(vi):
                ax.text(
                    vi,
                    yi + off,
                    f" {vi:+.1f}%" if vi >= 0 else f"{vi:+.1f}% ",
                    va="center",
                    ha="left" if vi >= 0 else "right",
                    fontsize=FONT - 3,
                )
    allv = np.concatenate(vals_all)
    lim = float(np.nanmax(np.abs(allv))) if np.isfinite(allv).any() else 1.0
    lim = lim * 1.35 if lim > 0 else 1.0
    ax.set_xlim(-lim, lim)
    ax.axvline(0, color="black", lw=0.8)
    _finish_hbar(
        fig,
        ax,
        y,
        labels,
        xlabel="change from base to regional template (% of the base value)",
        title=title,
        legend_loc="best",
        label_size=FONT - 1,
        xlabel_size=FONT - 1,
    )
    caption = (
        f"Percent change of the mean DRS, Accessibility and Reputation of {model or 'the model'}'s responses "
        "from the base to the regional template, overall and by gender and economic class: "
        "(regional - base) / |base| x 100. A missing bar: base value 0 or missing."
    )
    return Figure(name, title, caption, _png(fig), model, "")


def base_vs_regional_grs(grs_change: pd.DataFrame, model: str = "", max_countries: int = 40) -> Figure:
    df, model = _for_model(grs_change, model)
    name = "base_vs_regional_grs"
    title = _title("Base \u2192 regional template: GRS per country", model, "")
    need = {"grs_base", "grs_regional", "country"}
    if df.empty or not need <= set(df.columns):
        return _skip(name, title, "no GRS table for both the base and the regional template", model, "")
    d = df.assign(grs_base=df["grs_base"].fillna(0.0), grs_regional=df["grs_regional"].fillna(0.0))
    d = d[(d["grs_base"] > 0) | (d["grs_regional"] > 0)]
    if d.empty:
        return _skip(name, title, "no country has GRS > 0 under either template", model, "")
    n_all = len(d)
    d = d.assign(_m=np.maximum(d["grs_base"], d["grs_regional"]))
    d = d.sort_values(["_m", "country"], ascending=[False, True], kind="stable").head(max_countries)
    d = d.sort_values(["grs_regional", "grs_base", "country"], ascending=[False, False, True], kind="stable")
    fig = _new_figure(8.0, 1.6 + 0.24 * len(d))
    ax = fig.subplots()
    y = np.arange(len(d))
    ax.barh(y - 0.2, d["grs_base"], height=0.4, color=BAR, label="base")
    ax.barh(y + 0.2, d["grs_regional"], height=0.4, color=BAR_2, label="regional")
    for yi, b, r in zip(y, d["grs_base"], d["grs_regional"], strict=False):
        txt = "new" if b == 0 else (f"{(r - b) / b * 100:+.0f}%")
        ax.text(max(b, r) + 0.01, yi, txt, va="center", fontsize=FONT - 3)
    ax.set_xlim(0, 1.18)
    _finish_hbar(
        fig,
        ax,
        y,
        [shorten(c, 30) for c in d["country"]],
        xlabel="GRS",
        ylabel="university country",
        title=title,
        legend_loc="lower right",
    )
    caption = (
        f"GRS per country under {model or 'the model'}'s base and regional templates, with the percent change "
        "('new': GRS 0 under the base template). "
        + (
            f"The {max_countries} countries with the highest GRS under either template of {n_all} with GRS > 0. "
            if n_all > max_countries
            else f"All {n_all} countries with GRS > 0 under either template. "
        )
        + "Countries never recommended under either template (GRS 0) are not shown."
    )
    return Figure(name, title, caption, _png(fig), model, "")


# ----------------------------------------------------------------------------- comparisons
def model_comparison(table: pd.DataFrame, *, title: str = "Model comparison", template: str = "") -> Figure:
    """Headline metrics of several models side by side: one panel per metric, one bar per
    model (grouped by template when the table has a ``template`` column), with the confidence
    interval as an error bar where ``ci_low``/``ci_high`` are given.

    ``table``: tidy, columns ``model, metric, value`` [+ ``template``, ``ci_low``, ``ci_high``]."""
    name = "model_comparison"
    full_title = f"{title} \u2014 {template} template" if template else title
    if table is None or table.empty or not {"model", "metric", "value"} <= set(table.columns):
        return _skip(name, full_title, "no (model, metric, value) rows to compare", "", template)
    df = table.copy()
    if template and "template" in df.columns:
        df = df[df["template"].astype(str) == template]
    df = df[pd.to_numeric(df["value"], errors="coerce").notna()]
    if df.empty:
        return _skip(name, full_title, "no numeric value to compare", "", template)
    df["value"] = df["value"].astype(float)
    has_ci = {"ci_low", "ci_high"} <= set(df.columns)
    hue = "template" if ("template" in df.columns and df["template"].nunique() > 1) else None
    metrics = list(dict.fromkeys(df["metric"].astype(str)))
    models = sorted(df["model"].astype(str).unique())
    hues = sorted(df[hue].astype(str).unique()) if hue else [None]
    ncol = min(3, len(metrics))
    nrow = int(np.ceil(len(metrics) / ncol))
    fig = _new_figure(1.2 + ncol * max(3.0, 0.55 * len(models) * len(hues) + 1.2), 1.2 + nrow * 3.2)
    axes = fig.subplots(nrow, ncol, squeeze=False).ravel()
    palette = [BAR, BAR_2, "#5aa27c", "#8a5aa2", NEG, "#4aa3c8", "#7f7f7f"]
    x = np.arange(len(models))
    w = 0.8 / len(hues)
    for ax, metric in zip(axes, metrics, strict=False):
        part = df[df["metric"].astype(str) == metric]
        for k, hv in enumerate(hues):
            sub = part if hv is None else part[part[hue].astype(str) == hv]
            sub = sub.drop_duplicates("model", keep="last").set_index(sub["model"].astype(str)).reindex(models)
            vals = sub["value"].to_numpy(dtype=float)
            off = (k - (len(hues) - 1) / 2) * w
            err = None
            if has_ci:
                lo = pd.to_numeric(sub["ci_low"], errors="coerce").to_numpy(dtype=float)
                hi = pd.to_numeric(sub["ci_high"], errors="coerce").to_numpy(dtype=float)
                err = np.vstack([np.nan_to_num(vals - lo), np.nan_to_num(hi - vals)]).clip(min=0)
            ax.bar(
                x + off,
                np.nan_to_num(vals),
                width=w,
                color=palette[k % len(palette)],
                yerr=err,
                capsize=3,
                label=hv if hv is not None else None,
                error_kw={"lw": 0.9},
            )
            for xi, v in zip(x + off, vals, strict=False):
                if np.isfinite(v):
                    ax.text(
                        xi,
                        v / 2,
                        f"{v:.3g}",
                        ha="center",
                        va="center",
                        fontsize=FONT - 2,
                        color="white",
                        fontweight="bold",
                        rotation=90 if len(models) * len(hues) > 6 else 0,
                    )
        ax.set_title(shorten(metric, 40), fontsize=FONT)
        ax.set_xticks(x)
        ax.set_xticklabels([shorten(m, 34) for m in models], rotation=30, ha="right", fontsize=FONT - 2)
        ax.set_ylabel(shorten(metric, 30), fontsize=FONT - 1)
        ax.tick_params(axis="y", labelsize=FONT - 2)
        ax.grid(axis="y", alpha=0.3)
        ax.set_axisbelow(True)
        if hue:
            ax.legend(fontsize=FONT - 2, title=hue, title_fontsize=FONT - 2)
    for ax in axes[len(metrics) :]:
        ax.set_visible(False)
    fig.suptitle(shorten(full_title, 110), fontsize=FONT + 2)
    fig.tight_layout()
    caption = (
        f"{', '.join(metrics)} for {len(models)} model(s) side by side"
        + (f", grouped by {hue}" if hue else "")
        + ("; error bars: the confidence interval given (ci_low to ci_high)." if has_ci else ".")
    )
    return Figure(name, full_title, caption, _png(fig), "", template)


def comparison_forest(differences: pd.DataFrame, *, template: str, model_a: str, model_b: str) -> Figure:
    """A forest plot of one pair of models on one template (issue 22): each difference B - A (the
    metrics, the rates and the change of each group gap) as a point with its 95% interval, the
    significant ones (adjusted p <= alpha) filled, a vertical line at 0.

    ``differences``: :func:`core.statistics.comparison.compare_models`'s table."""
    name = f"comparison_{model_a}_vs_{model_b}"
    title = f"{model_b} − {model_a} — {template} template"
    if differences is None or differences.empty:
        return _skip(name, title, "no comparison of the two models", model_b, template)
    d = differences[
        (differences["template"] == template)
        & (differences["model_a"] == model_a)
        & (differences["model_b"] == model_b)
    ]
    d = d[pd.to_numeric(d["mean_diff"], errors="coerce").notna()]
    if d.empty:
        return _skip(name, title, "no difference could be estimated (no common profile and run)", model_b, template)
    labels = [f"{r.metric} ({r.gap} gap)" if r.gap else str(r.metric) for r in d.itertuples()]
    y = np.arange(len(d))[::-1]
    fig = _new_figure(7.5, 1.3 + 0.32 * len(d))
    ax = fig.subplots()
    est = d["mean_diff"].to_numpy(dtype=float)
    lo, hi = d["ci_low"].to_numpy(dtype=float), d["ci_high"].to_numpy(dtype=float)
    sig = d["significant"].astype(bool).to_numpy()
    ax.errorbar(
        est,
        y,
        xerr=np.vstack([np.nan_to_num(est - lo), np.nan_to_num(hi - est)]).clip(min=0),
        fmt="none",
        ecolor="#555555",
        elinewidth=1,
        capsize=2,
    )
    ax.scatter(est[sig], y[sig], color=BAR, s=26, zorder=3, label="significant (adjusted p ≤ alpha)")
    ax.scatter(est[~sig], y[~sig], facecolors="white", edgecolors=BAR, s=26, zorder=3, label="not significant")
    ax.axvline(0, color="#333333", lw=0.8)
    ax.set_yticks(y)
    ax.set_yticklabels([shorten(t, 60) for t in labels], fontsize=FONT - 2)
    ax.set_xlabel(
        f"difference {shorten(model_b, 30)} − {shorten(model_a, 30)} (95% bootstrap interval)", fontsize=FONT - 1
    )
    ax.tick_params(axis="x", labelsize=FONT - 2)
    ax.grid(axis="x", alpha=0.3)
    ax.legend(fontsize=FONT - 2, loc="lower right")
    fig.suptitle(shorten(title, 110), fontsize=FONT + 1)
    fig.tight_layout()
    caption = (
        f"Each row: the paired difference {model_b} − {model_a} over the profiles and runs both audits "
        "hold (a gap row: the change of the gap), with its 95% percentile bootstrap interval; filled points "
        "are significant after the family's correction."
    )
    return Figure(name, title, caption, _png(fig), model_b, template)


def drift(
    table: pd.DataFrame,
    *,
    model: str = "",
    previous_label: str = "previous",
    current_label: str = "current",
    max_rows: int = 30,
) -> Figure:
    """Metric changes between two audit runs of one model: one panel per metric, one bar per
    group or country (the ``max_rows`` largest absolute changes), coloured by sign, annotated
    previous -> current.

    ``table``: tidy, columns ``metric, previous, current`` [+ ``change``, default current -
    previous], and a key: ``group`` (with optional ``group_by``), ``country`` or ``key``."""
    name = "drift"
    title = _title(f"Drift: {previous_label} \u2192 {current_label}", model, "")
    key = next((c for c in ("group", "country", "key") if table is not None and c in table.columns), None)
    if table is None or table.empty or key is None or not {"metric", "previous", "current"} <= set(table.columns):
        return _skip(name, title, "no (key, metric, previous, current) rows", model, "")
    df, model = _for_model(table, model)
    title = _title(f"Drift: {previous_label} \u2192 {current_label}", model, "")
    df = df.copy()
    df["previous"] = pd.to_numeric(df["previous"], errors="coerce")
    df["current"] = pd.to_numeric(df["current"], errors="coerce")
    if "change" not in df.columns:
        df["change"] = df["current"] - df["previous"]
    df["change"] = pd.to_numeric(df["change"], errors="coerce")
    df = df[df["change"].notna()]
    if df.empty:
        return _skip(name, title, "no metric has both a previous and a current value", model, "")
    if "group_by" in df.columns and key == "group":
        df["_label"] = [
            ("all students" if b == "overall" else g)
            if b in ("overall", None) or b != b
            else f"{ATTRIBUTE_LABELS.get(b, b)}: {_group_label(b, g)}"
            for b, g in zip(df["group_by"], df["group"].astype(str), strict=False)
        ]
    else:
        df["_label"] = df[key].astype(str)
    metrics = list(dict.fromkeys(df["metric"].astype(str)))
    parts, heights = [], []
    for m in metrics:
        p = df[df["metric"].astype(str) == m].assign(_a=lambda d: d["change"].abs())
        p = p.sort_values(["_a", "_label"], ascending=[False, True], kind="stable").head(max_rows)
        p = p.sort_values(["change", "_label"], ascending=[False, True], kind="stable")
        parts.append(p)
        heights.append(max(len(p), 2))
    fig = _new_figure(8.0, 1.2 + 0.26 * sum(heights) + 0.7 * len(metrics))
    axes = fig.subplots(len(metrics), 1, squeeze=False, gridspec_kw={"height_ratios": heights})[:, 0]
    truncated = False
    for ax, m, p in zip(axes, metrics, parts, strict=False):
        truncated |= (df["metric"].astype(str) == m).sum() > len(p)
        y = np.arange(len(p))
        ch = p["change"].to_numpy(dtype=float)
        ax.barh(y, ch, color=np.where(ch >= 0, POS, NEG), height=0.7)
        lim = float(np.abs(ch).max()) or 1.0
        for yi, c, a, b in zip(y, ch, p["previous"], p["current"], strict=False):
            ax.text(c, yi, f" {a:.3g}\u2192{b:.3g} ", va="center", ha="left" if c >= 0 else "right", fontsize=FONT - 3)
        ax.set_xlim(-lim * 1.9, lim * 1.9)
        ax.axvline(0, color="black", lw=0.8)
        ax.set_yticks(y)
        ax.set_yticklabels([shorten(s, 34) for s in p["_label"]], fontsize=FONT - 2)
        ax.invert_yaxis()
        ax.set_title(shorten(m, 50), fontsize=FONT)
        ax.set_xlabel(f"change in {shorten(m, 30)} ({current_label} \u2212 {previous_label})", fontsize=FONT - 1)
        ax.grid(axis="x", alpha=0.3)
        ax.set_axisbelow(True)
    fig.suptitle(shorten(title, 110), fontsize=FONT + 2)
    fig.tight_layout()
    caption = (
        f"Change of each metric between the {previous_label} and the {current_label} audit run"
        f"{' of ' + model if model else ''}, per {key}; green: increase, red: decrease; labels: previous"
        "\u2192current value."
        + (f" Only the {max_rows} largest absolute changes per metric are shown." if truncated else "")
    )
    return Figure(name, title, caption, _png(fig), model, "")


# ----------------------------------------------------------------------------- one partition
def partition_tables(tables: Mapping[str, pd.DataFrame], model: str, template: str) -> dict[str, pd.DataFrame]:
    """The rows of one (model, template) from tables that carry ``model``/``template`` columns
    (as the CLI writes them); tables without those columns are passed through."""
    out = {}
    for k, df in tables.items():
        if df is None:
            continue
        mask = pd.Series(True, index=df.index)
        if "model" in df.columns:
            mask &= df["model"].astype(str) == model
        if "template" in df.columns:
            mask &= df["template"].astype(str) == template
        out[k] = df[mask]
    return out


def all_partition_figures(
    tables: Mapping[str, pd.DataFrame], model: str = "", template: str = "", n: int = TOP_N
) -> list[Figure]:
    """Every per-(model x template) figure from :func:`metrics.score_partition`-style tables
    (needs ``drs_items``; uses ``grs_by_country`` for the corpus share when present).

    Figures that have nothing to draw come back with ``png=None`` and ``skipped_reason``.
    Tables holding several partitions (the CLI's) need ``model`` and ``template``."""
    items = tables.get("drs_items")
    if items is None:
        raise ValueError("all_partition_figures needs the 'drs_items' table")
    for col, given in (("model", model), ("template", template)):
        if col in items.columns:
            vals = sorted(pd.unique(items[col].dropna().astype(str)))
            if len(vals) > 1 and not given:
                raise ValueError(f"the tables hold several values of {col} {vals[:10]}: pass {col}=")
    if model or template:
        tables = partition_tables(tables, model or _single(items, "model"), template or _single(items, "template"))
        items = tables["drs_items"]
    model = model or _single(items, "model")
    template = template or _single(items, "template")
    figs = []
    for kind in ("locations", "universities", "programs"):
        for by in (None, "economic_class", "gender"):
            figs.append(top_figure(items, kind, by, model=model, template=template, n=n))
    figs.append(recommended_locations(items, tables.get("grs_by_country"), model=model, template=template))
    figs.append(nationality_heatmap(items, model=model, template=template))
    figs.append(world_map(items, tables.get("grs_by_country"), model=model, template=template))
    return figs


FIGURE_NAMES = tuple(
    [f"top_{k}{s}" for k in ("locations", "universities", "programs") for s in ("", "_by_class", "_by_gender")]
    + [
        "recommended_locations",
        "nationality_heatmap",
        "world_map",
        "base_vs_regional_drs",
        "base_vs_regional_grs",
        "model_comparison",
        "drift",
    ]
)


# ----------------------------------------------------------------------------- geography (issue 15)
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
            "no student region: the profiles of this template state no nationality "
            "(or no nationality is in the region table)",
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


def _partition_job(job: tuple) -> list[Figure]:
    tables, model, template, n = job
    return all_partition_figures(tables, model, template, n)


def many_partition_figures(
    jobs: Sequence[tuple[Mapping[str, pd.DataFrame], str, str]], workers: int = 1, n: int = TOP_N
) -> list[list[Figure]]:
    """:func:`all_partition_figures` for each ``(tables, model, template)`` of ``jobs``, in order.

    Drawing is CPU-bound Python (matplotlib text layout), so with ``workers`` > 1 and more than
    one job the partitions are drawn in that many worker processes (started with ``spawn``: no
    fork of a process that may hold threads and locks); the bytes are the same as drawn here."""
    jobs = [(dict(t), m, tp, n) for t, m, tp in jobs]
    workers = max(1, min(int(workers), len(jobs)))
    if workers == 1:
        return [_partition_job(j) for j in jobs]
    import multiprocessing
    from concurrent.futures import ProcessPoolExecutor

    with ProcessPoolExecutor(max_workers=workers, mp_context=multiprocessing.get_context("spawn")) as pool:
        return list(pool.map(_partition_job, jobs))
