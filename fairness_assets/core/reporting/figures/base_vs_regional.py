"""The base-vs-regional figures of one model (METHOD.md §8.4): the change of DRS, Acc and Rep by group
(:func:`base_vs_regional_drs`) and GRS per country under both templates (:func:`base_vs_regional_grs`)."""

from __future__ import annotations

import numpy as np
import pandas as pd

from ...reference import axes
from .. import axis_words
from .shared import (
    BAR,
    BAR_2,
    FONT,
    Figure,
    _finish_hbar,
    _for_model,
    _group_label,
    _new_figure,
    _ordered_values,
    _png,
    _skip,
    _title,
    attribute_label,
    shorten,
)

STUDY_PAIR = ("base", "regional")  # the study's comparison (METHOD.md §8.4), where a table names none


def _n(word: str) -> str:
    """The article's ``n`` before a word that starts with a vowel ("a base", "an advisor")."""
    return "n" if word[:1].lower() in "aeiou" else ""


def base_vs_regional_figures(
    drs_change: pd.DataFrame,
    grs_change: pd.DataFrame,
    model: str = "",
    max_countries: int = 40,
    templates: tuple[str, str] = STUDY_PAIR,
) -> list[Figure]:
    """§8.4 for one model: percent change of DRS/Acc/Rep by group from the base to the regional
    template, and GRS per country under both (the tables of :func:`metrics.base_vs_regional`); ``templates``:
    the design's comparison drawn (base, other), the study's base and regional by default."""
    return [
        base_vs_regional_drs(drs_change, model, templates=templates),
        base_vs_regional_grs(grs_change, model, max_countries, templates=templates),
    ]


def comparison_pairs(table: pd.DataFrame | None) -> list[tuple[str, str]]:
    """The template comparisons of a base-vs-other table (its ``base_template`` / ``other_template``
    columns), in the order they appear; the study's base vs regional for a table without them."""
    if table is None or not {"base_template", "other_template"} <= set(table.columns):
        return [STUDY_PAIR]
    return [
        (str(b), str(o)) for b, o in dict.fromkeys(zip(table["base_template"], table["other_template"], strict=True))
    ]


def comparison_rows(df: pd.DataFrame | None, templates: tuple[str, str]) -> pd.DataFrame | None:
    """The rows of one comparison (all rows of a table without the template columns)."""
    if df is None or not {"base_template", "other_template"} <= set(df.columns):
        return df
    return df[(df["base_template"] == templates[0]) & (df["other_template"] == templates[1])]


def _pair_name(templates: tuple[str, str], what: str) -> str:
    """A comparison figure's name: ``base_vs_regional_drs`` for the study's."""
    return f"{templates[0]}_vs_{templates[1]}_{what}"


def base_vs_regional_drs(
    drs_change: pd.DataFrame, model: str = "", *, templates: tuple[str, str] = STUDY_PAIR
) -> Figure:
    base, other = templates
    df, model = _for_model(comparison_rows(drs_change, templates), model)
    name = _pair_name(templates, "drs")
    title = _title(f"{base[:1].upper()}{base[1:]} \u2192 {other} template: change in DRS, Acc, Rep", model, "")
    metrics = [m for m in ("drs", "acc", "rep") if f"{m}_change_pct" in df.columns]
    if df.empty or not metrics or df[[f"{m}_change_pct" for m in metrics]].isna().all().all():
        return _skip(name, title, f"no group has both a{_n(base)} {base} and a{_n(other)} {other} score", model, "")
    groups = axes.names(exclude=("home",))  # the breakdown axes of drs_summary, in the design's order
    order = {"overall": 0, **{a: i + 1 for i, a in enumerate(groups)}}
    df = df.assign(_o=df["group_by"].map(order).fillna(len(groups) + 1))
    within = {b: _ordered_values(df.loc[df["group_by"] == b, "group"], b) for b in df["group_by"].unique()}
    df = df.assign(
        _w=[within[b].index(g) if g in within[b] else 99 for b, g in zip(df["group_by"], df["group"], strict=False)]
    )
    df = df.sort_values(["_o", "group_by", "_w"], kind="stable").reset_index(drop=True)
    labels = [
        ("all students" if b == "overall" else f"{attribute_label(b)}: {_group_label(b, g)}")
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
        ax,
        labels,
        xlabel=f"change from {base} to {other} template (% of the {base} value)",
        title=title,
        legend_loc="best",
        label_size=FONT - 1,
        xlabel_size=FONT - 1,
    )
    by = axis_words.join(attribute_label(a) for a in groups)
    caption = (
        f"Percent change of the mean DRS, Accessibility and Reputation of {model or 'the model'}'s responses "
        f"from the {base} to the {other} template, overall{f' and by {by}' if by else ''}: "
        f"({other} - {base}) / |{base}| x 100. A missing bar: {base} value 0 or missing."
    )
    return Figure(name, title, caption, _png(fig), model, "")


def base_vs_regional_grs(
    grs_change: pd.DataFrame, model: str = "", max_countries: int = 40, *, templates: tuple[str, str] = STUDY_PAIR
) -> Figure:
    base, other = templates
    df, model = _for_model(comparison_rows(grs_change, templates), model)
    name = _pair_name(templates, "grs")
    title = _title(f"{base[:1].upper()}{base[1:]} \u2192 {other} template: GRS per country", model, "")
    need = {"grs_base", "grs_regional", "country"}
    if df.empty or not need <= set(df.columns):
        return _skip(name, title, f"no GRS table for both the {base} and the {other} template", model, "")
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
    ax.barh(y - 0.2, d["grs_base"], height=0.4, color=BAR, label=base)
    ax.barh(y + 0.2, d["grs_regional"], height=0.4, color=BAR_2, label=other)
    for yi, b, r in zip(y, d["grs_base"], d["grs_regional"], strict=False):
        txt = "new" if b == 0 else (f"{(r - b) / b * 100:+.0f}%")
        ax.text(max(b, r) + 0.01, yi, txt, va="center", fontsize=FONT - 3)
    ax.set_xlim(0, 1.18)
    _finish_hbar(
        ax,
        [shorten(c, 30) for c in d["country"]],
        xlabel="GRS",
        ylabel="university country",
        title=title,
        legend_loc="lower right",
    )
    caption = (
        f"GRS per country under {model or 'the model'}'s {base} and {other} templates, with the percent change "
        f"('new': GRS 0 under the {base} template). "
        + (
            f"The {max_countries} countries with the highest GRS under either template of {n_all} with GRS > 0. "
            if n_all > max_countries
            else f"All {n_all} countries with GRS > 0 under either template. "
        )
        + "Countries never recommended under either template (GRS 0) are not shown."
    )
    return Figure(name, title, caption, _png(fig), model, "")
