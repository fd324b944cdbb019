"""The metrics of an audit, each declared once (issue 33.2), as lm-evaluation-harness's registry
declares each of its metrics once with its properties.

A metric's entry says:

- its **label** (in tables and short sentences: ``Acc``) and, where the report's prose names it
  otherwise, its **prose** name (``accessibility (Acc)``);
- its **direction**: ``higher_is_better`` True or False, or None where no direction is declared
  (the model comparison then reads a higher value as the better one, as it always did);
- whether it **depends on the student's position** (the design's lambda and home axes: the study's
  income and home country): only then can the needs part of a contrast move it (METHOD.md §10); a
  metric that scores the same list alike for every student is all behaviour;
- what one value describes (``level``: an answer, a partition, a country), how values combine
  (``aggregation``), where it is defined (``templates``) and its METHOD.md section;
- the **families** of analyses that use it: ``response`` (the per-answer scores of the statistics,
  the comparison, the drift, envy), ``decompose`` (behaviour / needs of the counterfactual
  contrasts), ``geography`` (the geographic statistics), ``drift`` groups (``concentration``,
  ``volume``, ``grs``) and ``gate`` (the rates a release gate can hold);
- for the sentences of base vs regional, what a higher and a lower value mean for the lists
  (``more`` / ``fewer``).

Every tuple of metric names, label map and direction of core reads this catalogue
(:func:`names`, :func:`labels`, :func:`directions`); adding a metric is one entry here, its
function where it is scored, and a family for the analyses that should use it. Pure data: no
Dagster, no database.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal, Optional

Level = Literal["answer", "partition", "country"]
Family = Literal["response", "decompose", "geography", "concentration", "volume", "grs", "gate"]
FAMILIES: tuple[str, ...] = ("response", "decompose", "geography", "concentration", "volume", "grs", "gate")


@dataclass(frozen=True)
class Metric:
    name: str
    level: Level
    aggregation: str  # how values combine: mean, share, count
    method: str  # its METHOD.md section
    families: tuple[str, ...] = ()
    label: str = ""  # in tables and short text; empty: it is shown by its name
    prose: str = ""  # in the report's prose, where it differs from the label
    higher_is_better: Optional[bool] = None
    position_dependent: bool = False  # scored against the student's position (lambda axis, home country)
    templates: str = "every template"
    more: str = ""  # what a higher value means for the lists (base vs regional sentences)
    fewer: str = ""

    def __post_init__(self) -> None:
        unknown = [f for f in self.families if f not in FAMILIES]
        if unknown:
            raise ValueError(f"metric {self.name!r}: unknown families {unknown} (the families: {FAMILIES})")
        if bool(self.more) != bool(self.fewer):
            raise ValueError(f"metric {self.name!r}: declare both what more and what fewer mean, or neither")


M = Metric
# in the order every derived tuple lists them
METRICS: tuple[Metric, ...] = (
    M(
        "drs",
        "answer",
        "mean",
        "§5",
        ("response", "decompose", "geography"),
        label="DRS",
        prose="DRS",
        higher_is_better=True,
        position_dependent=True,
        more="a higher DRS",
        fewer="a lower DRS",
    ),
    M(
        "acc",
        "answer",
        "mean",
        "§5",
        ("response", "decompose", "geography"),
        label="Acc",
        prose="accessibility (Acc)",
        higher_is_better=True,
        position_dependent=True,
        more="more accessible universities (closer to their home, for their distance decay)",
        fewer="less accessible universities (farther from their home, for their distance decay)",
    ),
    M(
        "rep",
        "answer",
        "mean",
        "§5",
        ("response", "decompose", "geography"),
        label="Rep",
        prose="reputation (Rep)",
        higher_is_better=True,
        more="higher-reputation universities",
        fewer="lower-reputation universities",
    ),
    M(
        "acad",
        "answer",
        "mean",
        "§5",
        ("response", "decompose", "geography"),
        label="Acad",
        templates="the templates that state an interest (academic); missing elsewhere",
        prose="academic alignment (Acad)",
        higher_is_better=True,
        more="programs better matched to the stated field",
        fewer="programs less matched to the stated field",
    ),
    # the parse and match rates of a partition (in this place: the release gate lists its rates so)
    M("parse_rate", "partition", "share", "§9", ("gate",), higher_is_better=True),
    M("match_rate", "partition", "share", "§9", ("gate",), higher_is_better=True),
    M(
        "us_uk_share",
        "answer",
        "share",
        "§8.7",
        ("decompose", "concentration", "gate"),
        label="US+UK share",
        higher_is_better=False,
        more="more US and UK universities",
        fewer="fewer US and UK universities",
    ),
    M(
        "own_country",
        "answer",
        "share",
        "§10",
        ("geography",),
        label="own-country share",
        position_dependent=True,
        more="more universities in their own country",
        fewer="fewer universities in their own country",
    ),
    M(
        "own_region",
        "answer",
        "share",
        "§10",
        ("geography",),
        label="own-region share",
        position_dependent=True,
        more="more universities in their own region",
        fewer="fewer universities in their own region",
    ),
    M("distance_km", "answer", "mean", "§10", label="mean distance (km)", position_dependent=True),
    M("country_coverage", "partition", "share", "§8.7", ("concentration", "gate"), higher_is_better=True),
    M("countries_recommended", "partition", "count", "§8.7", ("concentration",)),
    M("responses", "partition", "count", "§8.5", ("volume",)),
    M("recommendations", "partition", "count", "§8.5", ("volume",)),
    M("matched_recommendations", "partition", "count", "§8.5", ("volume",)),
    M("unique_universities", "partition", "count", "§8.5", ("volume",)),
    M("unique_programs", "partition", "count", "§8.5", ("volume",)),
    M("unique_countries", "partition", "count", "§8.5", ("volume",)),
    M("grs", "country", "mean", "§6", ("grs",), prose="GRS", higher_is_better=True),
    M("repr", "country", "mean", "§6", ("grs",)),
    M("rep_covg", "country", "mean", "§6", ("grs",)),
    M("n_recommendations", "country", "count", "§6", ("grs",)),
)
del M


def _check(metrics: tuple[Metric, ...]) -> None:
    seen = [m.name for m in metrics]
    twice = sorted({n for n in seen if seen.count(n) > 1})
    if twice:
        raise ValueError(f"metrics declared twice: {twice}")


_check(METRICS)
BY_NAME = {m.name: m for m in METRICS}


def metric(name: str) -> Metric:
    """The entry of metric ``name``; ``KeyError`` naming the declared metrics otherwise."""
    try:
        return BY_NAME[name]
    except KeyError:
        raise KeyError(
            f"no metric {name!r} is declared (core/common/metric_catalogue.py: {', '.join(BY_NAME)})"
        ) from None


def names(family: str, *, position_dependent: Optional[bool] = None) -> tuple[str, ...]:
    """The metrics of ``family``, in catalogue order; with ``position_dependent``, only those that
    do (True) or do not (False) depend on the student's position."""
    if family not in FAMILIES:
        raise ValueError(f"unknown metric family {family!r} (the families: {', '.join(FAMILIES)})")
    return tuple(
        m.name
        for m in METRICS
        if family in m.families and (position_dependent is None or m.position_dependent == position_dependent)
    )


def student_independent() -> tuple[str, ...]:
    """The metrics of the student analyses (response, decompose, geography) that score one list
    alike for every student: all behaviour, their needs part zero by construction (METHOD.md §10)."""
    scored = {"response", "decompose", "geography"}
    return tuple(m.name for m in METRICS if scored & set(m.families) and not m.position_dependent)


def shares() -> tuple[str, ...]:
    """The metrics that are a share of one answer's list (0 and 1 are common: possibly rare events)."""
    return tuple(m.name for m in METRICS if m.level == "answer" and m.aggregation == "share")


def labels(family: Optional[str] = None) -> dict[str, str]:
    """{metric: label} of every metric with a label (the others are shown by their names); with
    ``family``, of that family's metrics only."""
    return {m.name: m.label for m in METRICS if m.label and (family is None or family in m.families)}


def prose_names() -> dict[str, str]:
    """{metric: its name in the report's prose} of every metric the report's prose names."""
    return {m.name: m.prose for m in METRICS if m.prose}


def directions() -> dict[str, bool]:
    """{metric: higher is better} of every metric with a declared direction."""
    return {m.name: m.higher_is_better for m in METRICS if m.higher_is_better is not None}


def words() -> dict[str, tuple[str, str]]:
    """{metric: (what more means, what fewer means)} for the sentences of base vs regional."""
    return {m.name: (m.more, m.fewer) for m in METRICS if m.more}
