"""The pieces every figure shares: :class:`Figure`, the size, fonts and colours, and the helpers that
draw and save a figure (:func:`_new_figure`, :func:`_png`), shorten its labels and write its title."""

from __future__ import annotations

import io
import re
import warnings
from dataclasses import dataclass
from typing import Iterable, Optional, Sequence

import numpy as np
import pandas as pd
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure as MplFigure
from matplotlib.layout_engine import PlaceHolderLayoutEngine

from ...common.naming import file_stem
from ...reference import axes
from .. import axis_words

DPI = 100
TOP_N = 20
LABEL_CHARS = 42
FONT = 9
_UNSAFE_NAME = re.compile(r"[^A-Za-z0-9._-]|^[.-]")  # a figure name that is not a file name as it is
SAVE_METADATA = {"Software": None}  # PNG: no "Software" chunk; matplotlib writes no time for PNG

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
    if isinstance(fig.get_layout_engine(), PlaceHolderLayoutEngine):
        # `fig.tight_layout()` leaves a placeholder engine behind, and with any engine set `savefig` first runs a
        # whole draw (text off) before the real one; the placeholder places nothing, so without it the bytes are
        # the same and each figure is drawn once (issue 36: the figures were a quarter of a small audit's time)
        fig.set_layout_engine(None)
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


def attribute_labels() -> dict[str, str]:
    """{axis: its label in figures}: the active design's (core/reference/axes.py), read when called."""
    return axes.labels()


def attribute_label(attr: Optional[str]) -> str:
    """Axis ``attr``'s label in figures (``attr`` itself where the design has no such axis)."""
    return axis_words.label(attr) if attr is not None else ""


def value_orders() -> dict[str, list[str]]:
    """{axis: its values in the design's order} of the axes drawn in that order; the home axis's values
    (the study's nationalities) are drawn in the order of the data."""
    return axes.orders()


def lambda_value_labels() -> dict[str, str]:
    """{value: its words} of the lambda axis (the study's high -> high-income); empty without one."""
    lam = axes.lambda_axis()
    return {v: axes.axis(lam).words_of(v) for v in axes.values(lam)} if lam else {}


def _ordered_values(values: Iterable, attr: str) -> list:
    present = list(dict.fromkeys(v for v in values if isinstance(v, str)))
    known = [v for v in value_orders().get(attr, []) if v in present]
    return known + sorted(v for v in present if v not in known)


def _group_label(attr: str, value) -> str:
    return axis_words.value_words(attr, value)


def _single(df: pd.DataFrame, col: str) -> str:
    if col not in df.columns:
        return ""
    vals = pd.unique(df[col].dropna().astype(str))
    return str(vals[0]) if len(vals) == 1 else ""


def _finish_hbar(
    ax,
    labels: Sequence[str],
    *,
    xlabel: str,
    title: str,
    legend_loc: str,
    ylabel: str = "",
    label_size: int = FONT - 2,
    xlabel_size: int = FONT,
) -> None:
    """Ticks, labels, grid, legend and title of a horizontal bar chart with a legend: one bar per label,
    at y = 0, 1, ... (the figure is the axes' own)."""
    fig: MplFigure = ax.figure
    y = np.arange(len(labels))
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
