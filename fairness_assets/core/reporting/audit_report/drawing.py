"""The report's figures outside the geography section: each partition's §8.8 figures and its drift figure, the
models side by side and base vs regional per model."""

from __future__ import annotations

from typing import Mapping, Optional, Sequence

import pandas as pd

from ...reference import workers as workers_core
from ...scoring import drift as drift_core
from .. import figures as fig
from .partition import PartitionResult
from .tables import comparison_table


def partition_figures(p: PartitionResult) -> list[fig.Figure]:
    """Every §8.8 figure of one partition, plus its drift figure when it has a previous audit."""
    figures = fig.all_partition_figures({"drs_items": p.items, "grs_by_country": p.grs}, p.model, p.template)
    return figures + partition_figures_drift(p)


def partition_figures_drift(p: PartitionResult) -> list[fig.Figure]:
    """The drift figure of one partition (metrics that changed since its previous audit)."""
    if p.drift is None or not len(p.drift):
        return []
    d = p.drift[p.drift["status"] == "changed"]
    if "scope" in d:
        d = d[~drift_core.is_contrast(d)]  # the contrasts have their own table, not the figure
    if not len(d):
        return []
    return [
        _with_partition(
            fig.drift(d, model=p.model, previous_label=p.drift_labels[0], current_label=p.drift_labels[1]), p.template
        )
    ]


def _with_partition(f: fig.Figure, template: str) -> fig.Figure:
    return fig.Figure(f.name, f.title, f.caption, f.png, f.model, template, f.skipped_reason)


def _comparison_job(job: tuple) -> list[fig.Figure]:
    if job[0] == "models":
        _, sub, template = job
        return [fig.model_comparison(sub, template=template)]
    _, drs_change, grs_change, model, pair = job
    return list(fig.base_vs_regional_figures(drs_change, grs_change, model=model, templates=pair))


def comparison_figures(
    parts: Sequence[PartitionResult],
    base_vs_regional: Optional[Mapping[str, pd.DataFrame]] = None,
    *,
    workers: int = 1,
) -> list[fig.Figure]:
    """Models side by side (one figure per template with two or more models), and base vs
    regional per model; drawn in ``workers`` processes (core/reference/workers.py)."""
    jobs: list[tuple] = []
    table = comparison_table(parts)
    for template, sub in table.groupby("template", sort=True):
        if sub["model"].nunique() >= 2:
            jobs.append(("models", sub, str(template)))
    if base_vs_regional:
        drs_change, grs_change = base_vs_regional.get("drs_change"), base_vs_regional.get("grs_change")
        for pair in fig.comparison_pairs(drs_change):  # each template comparison of the design, per model
            rows = fig.comparison_rows(drs_change, pair)
            for model in sorted(set(rows["model"]) if rows is not None and "model" in rows else []):
                jobs.append(("base_vs_regional", drs_change, grs_change, model, pair))
    return [f for drawn in workers_core.map_partitions(_comparison_job, jobs, workers=workers) for f in drawn]
