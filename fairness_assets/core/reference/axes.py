"""The axes of an audit, each declared once (issue 33.2), as core/common/metric_catalogue.py declares
the metrics: who the students are, and what each axis does to a student's position.

An axis's entry says:

- its **name**: the profile column (``economic_class``) and the profile set of the reduced context
  that states it alone (``class_only``);
- its **label** in tables and figures (``economic class``) and its **word** in sentences and in
  the prompt's placeholder (``income``);
- its **values**, in the order tables list them, or none where the audit chooses them (the
  nationalities of a grid);
- its **position** kind (METHOD.md §10-11): ``home`` -- the value sets the student's home country,
  capital and region (Acc's distance, the own-country and own-region shares); ``lambda`` -- each
  value has a distance decay lambda (Acc); ``none`` -- the value changes who the student is and
  nothing of where they stand. Only a ``home`` or ``lambda`` axis can move the needs part of a
  contrast; a ``none`` axis's gap is all behaviour.

Every tuple of profile attributes and every attribute label map of core reads this catalogue
(:func:`names`, :func:`labels`, :func:`words`). Pure data: no Dagster, no database.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal, Optional

Position = Literal["home", "lambda", "none"]
POSITIONS: tuple[str, ...] = ("home", "lambda", "none")


@dataclass(frozen=True)
class Axis:
    name: str
    label: str  # in tables and figures
    word: str  # in sentences and as the prompt's placeholder
    position: Position
    profile_set: str  # the reduced-context profile set that states this axis alone
    values: Optional[tuple[str, ...]] = None  # None: chosen by the audit's grid (any country)
    method: str = "§2"

    def __post_init__(self) -> None:
        if self.position not in POSITIONS:
            raise ValueError(f"axis {self.name!r}: unknown position kind {self.position!r} (the kinds: {POSITIONS})")


# in the order every derived tuple lists them
AXES: tuple[Axis, ...] = (
    Axis("gender", "gender", "gender", "none", "gender_only", ("male", "female", "transgender")),
    Axis("economic_class", "economic class", "income", "lambda", "class_only", ("high", "middle", "low")),
    Axis("nationality", "nationality", "nationality", "home", "nationality_only"),
)


def _check(axes: tuple[Axis, ...]) -> None:
    seen = [a.name for a in axes]
    twice = sorted({n for n in seen if seen.count(n) > 1})
    if twice:
        raise ValueError(f"axes declared twice: {twice}")


_check(AXES)
BY_NAME = {a.name: a for a in AXES}


def axis(name: str) -> Axis:
    """The entry of axis ``name``; ``KeyError`` naming the declared axes otherwise."""
    try:
        return BY_NAME[name]
    except KeyError:
        raise KeyError(f"no axis {name!r} is declared (core/reference/axes.py: {', '.join(BY_NAME)})") from None


def names(*, position: Optional[Position] = None, exclude: tuple[Position, ...] = ()) -> tuple[str, ...]:
    """The axes' names in catalogue order; with ``position``, only the axes of that kind; with
    ``exclude``, without the axes of those kinds."""
    for kind in ((position,) if position else ()) + tuple(exclude):
        if kind not in POSITIONS:
            raise ValueError(f"unknown position kind {kind!r} (the kinds: {', '.join(POSITIONS)})")
    return tuple(a.name for a in AXES if (position is None or a.position == position) and a.position not in exclude)


def labels() -> dict[str, str]:
    """{axis: its label in tables and figures}."""
    return {a.name: a.label for a in AXES}


def words() -> dict[str, str]:
    """{axis: its word in sentences and as the prompt's placeholder}."""
    return {a.name: a.word for a in AXES}


def values(name: str) -> tuple[str, ...]:
    """The declared values of axis ``name``; ``ValueError`` for an axis whose values the grid chooses."""
    a = axis(name)
    if a.values is None:
        raise ValueError(f"axis {name!r} has no declared values: the audit's grid chooses them")
    return a.values
