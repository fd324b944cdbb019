"""The world map of one partition (issue 23): every country shaded by its share of the recommendations
against its share of the corpus's universities (:func:`country_share_ratios`, :func:`world_map_colors`,
:func:`world_map`), with its colours and legend constants (``WORLD_MAP_*``)."""

from __future__ import annotations

from typing import Optional, Sequence

import numpy as np
import pandas as pd
from matplotlib.figure import Figure as MplFigure

from ...reference import axes
from .. import axis_words
from .shared import DPI, FONT, Figure, _context, _new_figure, _png, _single, _skip, _title, shorten

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
    """The ISO3 codes of the students' home countries (``student_iso3`` of ``drs_items``, else the values
    of the design's home axis resolved: the study's nationalities), and the values that resolve to no
    country. None of either for a design without a home axis."""
    home = axes.home()
    if home is None or home not in items.columns or items[home].isna().all():
        return [], []
    if "student_iso3" in items.columns:
        pairs = items[[home, "student_iso3"]].dropna(subset=[home]).drop_duplicates()
        codes = pairs["student_iso3"]
    else:
        from ...reference.geo import CountryResolver

        pairs = items[[home]].dropna().drop_duplicates()
        resolver = CountryResolver()
        codes = pairs[home].map(resolver.iso3)
    unresolved = sorted({str(n) for n, c in zip(pairs[home], codes, strict=False) if not isinstance(c, str) or not c})
    return sorted({str(c) for c in codes if isinstance(c, str) and c}), unresolved


def _home_label() -> str:
    """The label of the design's home axis (the study's "nationality"), "home country" without one."""
    home = axes.home()
    return axis_words.label(home) if home else "home country"


def _no_students() -> str:
    """The caption's sentence when no student country is marked."""
    if axes.home() is None:
        return f"No student country is marked: {axis_words.no_home_reason()}. "
    return f"The profiles of this template state no {_home_label()}. "


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
                label=f"students' {_home_label()} ({len(student_drawn)} countries)",
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
    home countries (the values of the design's home axis: the study's nationalities) marked with a
    triangle; countries too small to see also drawn as a dot.

    Shapes: Natural Earth admin-0 countries shipped inside a package (:mod:`..world_shapes`),
    joined on ISO3; nothing is downloaded."""
    from ..world_shapes import WorldShapesError, world_shapes

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
            f"Triangles: the {_countries(len(drawn['students']))} of the students' {axis_words.plural(_home_label())}. "
            if drawn["students"]
            else _no_students()
        )
        + (
            f"{axis_words.plural(_home_label()).capitalize()} that name no country: {', '.join(unresolved[:5])}. "
            if unresolved
            else ""
        )
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
