"""The figures across models or runs: headline metrics side by side (:func:`model_comparison`), one pair
of models' differences (:func:`comparison_forest`) and the changes between two audit runs (:func:`drift`)."""

from __future__ import annotations

import numpy as np
import pandas as pd

from .shared import (
    BAR,
    BAR_2,
    FONT,
    NEG,
    POS,
    Figure,
    _for_model,
    _group_label,
    _new_figure,
    _png,
    _skip,
    _title,
    attribute_label,
    shorten,
)


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
            else f"{attribute_label(b)}: {_group_label(b, g)}"
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
