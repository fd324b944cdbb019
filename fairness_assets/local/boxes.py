"""The partitions of a ``score`` cut into runs: the file's (model, template) pairs as few rectangles of
the partition grid as a simple rule gives (a run over a range of the two-dimensional partition set
covers a whole box), each cut to at most :data:`PARTITIONS_PER_RUN` partitions."""

from __future__ import annotations

from ..core.common.partition import PartitionKey


def partition_boxes(pairs: set[tuple[str, str]], models: list[str], templates: list[str]) -> list[tuple]:
    """The (model, template) ``pairs`` as few rectangles of the partition grid as a simple rule
    gives: a run over a range of this two-dimensional partition set covers the box model range x
    template range, so a box must hold only pairs that exist. Each box is
    ``(first model, last model, first template, last template)`` in the grid's order."""
    runs_by_model: dict[str, list[tuple[str, str]]] = {}
    for m in models:
        mine = [t for t in templates if (m, t) in pairs]
        spans, start, prev = [], None, None
        for t in mine:
            i = templates.index(t)
            if start is None:
                start = prev = i
            elif i == prev + 1:
                prev = i
            else:
                spans.append((templates[start], templates[prev]))
                start = prev = i
        if start is not None:
            spans.append((templates[start], templates[prev]))
        runs_by_model[m] = spans
    boxes: list[tuple] = []
    open_boxes: dict[tuple[str, str], int] = {}  # template span -> index of the box the previous model extends
    for m in models:
        spans = runs_by_model[m]
        extended = {}
        for span in spans:
            i = open_boxes.get(span)
            if i is not None and boxes[i][1] == models[models.index(m) - 1]:
                boxes[i] = (boxes[i][0], m, *span)
                extended[span] = i
            else:
                boxes.append((m, m, *span))
                extended[span] = len(boxes) - 1
        open_boxes = extended
    return boxes


# partitions materialized in one run by `score`: what a run holds in memory is bounded by this, not
# by the number of partitions in the file (issue 19.5: ~0.2 GB per study-size partition)
PARTITIONS_PER_RUN = 6


def bounded_boxes(
    boxes: list[tuple], models: list[str], templates: list[str], most: int = PARTITIONS_PER_RUN
) -> list[tuple]:
    """``boxes`` (as :func:`partition_boxes` gives them) cut so that none holds more than ``most``
    partitions: a box's template span is cut into runs of at most ``most`` templates, then its model
    span into runs of as many models as fit."""
    if most < 1:
        raise ValueError(f"partitions per run must be at least 1, got {most}")
    out: list[tuple] = []
    for m0, m1, t0, t1 in boxes:
        ms = models[models.index(m0) : models.index(m1) + 1]
        ts = templates[templates.index(t0) : templates.index(t1) + 1]
        step_t = min(len(ts), most)
        step_m = max(1, most // step_t)
        for i in range(0, len(ms), step_m):
            for j in range(0, len(ts), step_t):
                mm, tt = ms[i : i + step_m], ts[j : j + step_t]
                out.append((mm[0], mm[-1], tt[0], tt[-1]))
    return out


def _all_keys(pairs: set) -> list[str]:
    """Every partition key of the file's (model, template) ``pairs``, sorted."""
    return sorted(str(PartitionKey(m, t)) for m, t in pairs)


def _box_keys(pairs: set, models: list[str], templates: list[str], box: tuple) -> tuple[str, ...]:
    """The partition keys of the file's ``pairs`` inside ``box`` (first model, last model, first
    template, last template), in the grid's order."""
    m0, m1, t0, t1 = box
    ms = models[models.index(m0) : models.index(m1) + 1]
    ts = templates[templates.index(t0) : templates.index(t1) + 1]
    return tuple(str(PartitionKey(m, t)) for m in ms for t in ts if (m, t) in pairs)
