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

The axes are the design's (issue 34; core/reference/design.py): a :class:`Catalogue` built from the
design file's ``axes``. The audit's catalogue is *active* (:func:`use`; :func:`current`), and every
tuple of profile attributes and every attribute label map of core reads it (:func:`names`,
:func:`labels`, :func:`words`, :func:`values`). Until a design is made active, the catalogue is the
study's, read from ``data/designs/study.yaml``: no axis is named in the code. Pure: no Dagster, no
database.
"""

from __future__ import annotations

import contextlib
import threading
from dataclasses import dataclass
from typing import Iterator, Literal, Optional

Position = Literal["home", "lambda", "none"]
POSITIONS: tuple[str, ...] = ("home", "lambda", "none")


@dataclass(frozen=True)
class Axis:
    name: str
    label: str  # in tables and figures
    word: str  # in sentences and as the prompt's placeholder
    position: Position
    profile_set: str  # the reduced-context profile set that states this axis alone
    values: tuple[str, ...] = ()
    method: str = "§2"
    wording: tuple[tuple[str, str], ...] = ()  # (value, the words it puts into the prompt)
    lambdas: tuple[tuple[str, float], ...] = ()  # (value, Acc decay per km) of a lambda axis
    aliases: tuple[str, ...] = ()  # other names of the axis's column in a responses file
    value_aliases: tuple[tuple[str, str], ...] = ()  # (another spelling in a responses file, the value)

    def __post_init__(self) -> None:
        if self.position not in POSITIONS:
            raise ValueError(f"axis {self.name!r}: unknown position kind {self.position!r} (the kinds: {POSITIONS})")

    def spellings(self) -> dict[str, str]:
        """{lower-case spelling: value} of the values: each value, its words and its aliases."""
        out = {v.lower(): v for v in self.values}
        out |= {w.lower(): v for v, w in self.wording if w.lower() not in out}
        out |= {a.lower(): v for a, v in self.value_aliases if a.lower() not in out}
        return out

    def words_of(self, value: str) -> str:
        """The words ``value`` puts into a prompt (the value itself where the design gives none)."""
        return dict(self.wording).get(value, value)

    @property
    def ordered(self) -> bool:
        """Whether tables list this axis's values in the design's order (a home axis's countries are
        listed by name)."""
        return self.position != "home"

    def as_dict(self) -> dict:
        return {
            "name": self.name,
            "label": self.label,
            "word": self.word,
            "position": self.position,
            "profile_set": self.profile_set,
            "values": list(self.values),
            "wording": [list(w) for w in self.wording],
            "lambdas": [list(x) for x in self.lambdas],
            "aliases": list(self.aliases),
            "value_aliases": [list(x) for x in self.value_aliases],
        }


@dataclass(frozen=True)
class Catalogue:
    """The axes of one design, in the order every derived tuple lists them."""

    axes: tuple[Axis, ...]

    def __post_init__(self) -> None:
        seen = [a.name for a in self.axes]
        twice = sorted({n for n in seen if seen.count(n) > 1})
        if twice:
            raise ValueError(f"axes declared twice: {twice}")
        for kind in ("home", "lambda"):
            of_kind = [a.name for a in self.axes if a.position == kind]
            if len(of_kind) > 1:
                raise ValueError(f"more than one {kind!r} axis: {of_kind} (a design has at most one)")

    def axis(self, name: str) -> Axis:
        for a in self.axes:
            if a.name == name:
                return a
        raise KeyError(f"no axis {name!r} in the design (its axes: {', '.join(a.name for a in self.axes)})")

    def by_position(self, kind: str) -> Optional[Axis]:
        """The design's axis of position ``kind`` (``home`` or ``lambda``: at most one), or None."""
        for a in self.axes:
            if a.position == kind:
                return a
        return None


_lock = threading.Lock()
_active: list[Catalogue] = []  # a stack: use() as a context manager pushes and pops
_default: list[Catalogue] = []


def _study() -> Catalogue:
    if not _default:
        from .design import SHIPPED_DIR, load_design

        design = load_design("study", templates_dir=SHIPPED_DIR.parent / "templates")
        _default.append(design.catalogue)
    return _default[0]


def current() -> Catalogue:
    """The active catalogue: the last one :func:`use` made active, else the study's."""
    with _lock:
        if _active:
            return _active[-1]
    return _study()


class _Using(contextlib.AbstractContextManager):
    def __init__(self, catalogue: Catalogue):
        self.catalogue = catalogue
        with _lock:
            _active.append(catalogue)

    def __exit__(self, *exc) -> None:
        with _lock:
            if _active and _active[-1] is self.catalogue:
                _active.pop()


def use(catalogue: Catalogue) -> contextlib.AbstractContextManager:
    """Make ``catalogue`` the active one (the audit's design). As a context manager, the earlier one is
    active again on exit; called plainly, it stays active."""
    if not isinstance(catalogue, Catalogue):
        raise TypeError(f"use() takes a Catalogue, got {type(catalogue).__name__}")
    return _Using(catalogue)


@contextlib.contextmanager
def using(catalogue: Optional[Catalogue]) -> Iterator[Catalogue]:
    """``use(catalogue)`` for a block; with None, the active catalogue unchanged."""
    if catalogue is None:
        yield current()
        return
    with use(catalogue) as _:
        yield catalogue


def axes_of() -> tuple[Axis, ...]:
    return current().axes


def axis(name: str) -> Axis:
    """The entry of axis ``name``; ``KeyError`` naming the declared axes otherwise."""
    return current().axis(name)


def names(*, position: Optional[Position] = None, exclude: tuple[Position, ...] = ()) -> tuple[str, ...]:
    """The axes' names in catalogue order; with ``position``, only the axes of that kind; with
    ``exclude``, without the axes of those kinds."""
    for kind in ((position,) if position else ()) + tuple(exclude):
        if kind not in POSITIONS:
            raise ValueError(f"unknown position kind {kind!r} (the kinds: {', '.join(POSITIONS)})")
    return tuple(
        a.name for a in axes_of() if (position is None or a.position == position) and a.position not in exclude
    )


def home() -> Optional[str]:
    """The name of the design's ``home`` axis (its value sets the student's country), or None."""
    a = current().by_position("home")
    return a.name if a else None


def lambda_axis() -> Optional[str]:
    """The name of the design's ``lambda`` axis (each value's Acc decay), or None."""
    a = current().by_position("lambda")
    return a.name if a else None


def labels() -> dict[str, str]:
    """{axis: its label in tables and figures}."""
    return {a.name: a.label for a in axes_of()}


def words() -> dict[str, str]:
    """{axis: its word in sentences and as the prompt's placeholder}."""
    return {a.name: a.word for a in axes_of()}


def values(name: str) -> tuple[str, ...]:
    """The values of axis ``name`` in the design's order."""
    return axis(name).values


def orders() -> dict[str, list[str]]:
    """{axis: its values in table order} for the axes tables list in the design's order."""
    return {a.name: list(a.values) for a in axes_of() if a.ordered}


def profile_sets() -> dict[str, str]:
    """{one-at-a-time profile set: the axis it states alone}."""
    return {a.profile_set: a.name for a in axes_of()}
