"""Every figure of one partition (:func:`all_partition_figures`, :func:`figure_names`), of many partitions
in worker processes (:func:`many_partition_figures`), and one partition's rows of the tables
(:func:`partition_tables`).

The figures follow the active design's axes (core/reference/axes.py), read when called: a top-20 figure
per value of each of :func:`axis_words.by_axes` (the study's ``_by_class`` and ``_by_gender``), the
heatmap of the home axis (the study's ``nationality_heatmap``). ``FIGURE_NAMES`` is read at access time
(:func:`figure_names`)."""

from __future__ import annotations

from typing import Mapping, Sequence

import pandas as pd

from ...reference import workers as workers_core
from .. import axis_words
from .counts import figure_suffix, recommended_locations, top_figure
from .heatmap import heatmap_name, home_heatmap
from .shared import TOP_N, Figure, _single
from .world import world_map


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
        for by in (None, *axis_words.by_axes()):
            figs.append(top_figure(items, kind, by, model=model, template=template, n=n))
    figs.append(recommended_locations(items, tables.get("grs_by_country"), model=model, template=template))
    figs.append(home_heatmap(items, model=model, template=template))
    figs.append(world_map(items, tables.get("grs_by_country"), model=model, template=template))
    return figs


def figure_names() -> tuple[str, ...]:
    """The names of the figures of a partition, a model and the comparisons, under the active design: the
    study's ``top_locations``, ``top_locations_by_class``, ``top_locations_by_gender``, ...,
    ``nationality_heatmap``, ``world_map``, the base-vs-regional figures, ``model_comparison``, ``drift``."""
    suffixes = ("", *(f"_by_{figure_suffix(a)}" for a in axis_words.by_axes()))
    return tuple(
        [f"top_{k}{s}" for k in ("locations", "universities", "programs") for s in suffixes]
        + [
            "recommended_locations",
            heatmap_name(),
            "world_map",
            "base_vs_regional_drs",
            "base_vs_regional_grs",
            "model_comparison",
            "drift",
        ]
    )


def __getattr__(name: str):
    # FIGURE_NAMES, read at access time: the active design's (callers outside core read it)
    if name == "FIGURE_NAMES":
        return figure_names()
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def _partition_job(job: tuple) -> list[Figure]:
    tables, model, template, n = job
    return all_partition_figures(tables, model, template, n)


def many_partition_figures(
    jobs: Sequence[tuple[Mapping[str, pd.DataFrame], str, str]], workers: int = 1, n: int = TOP_N
) -> list[list[Figure]]:
    """:func:`all_partition_figures` for each ``(tables, model, template)`` of ``jobs``, in order.

    Drawing is CPU-bound Python (matplotlib text layout), so with ``workers`` > 1 and more than
    one job the partitions are drawn in that many worker processes (core/reference/workers.py: started
    once a process, with ``spawn``, each job under the caller's design); the bytes are the same as
    drawn here."""
    return workers_core.map_partitions(_partition_job, [(dict(t), m, tp, n) for t, m, tp in jobs], workers=workers)
