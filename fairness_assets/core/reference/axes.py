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
from typing import Iterator, Optional

from .catalogue import POSITIONS, Axis, Catalogue, Position

__all__ = ["POSITIONS", "Axis", "Catalogue", "Position"]

_lock = threading.Lock()
_local = threading.local()  # each thread's stack of active catalogues (two audits in two threads)
_process: list[Catalogue] = []  # the process's design (the code location's FAIRNESS_DESIGN), for every thread
_default: list[Catalogue] = []
_designs: list = []  # (catalogue, the design it came from), the latest last: current_design()


def _stack() -> list[Catalogue]:
    if not hasattr(_local, "stack"):
        _local.stack = []
    return _local.stack


def _study() -> Catalogue:
    if not _default:
        from .design import SHIPPED_DIR, load_design  # axes -> design -> catalogue: no cycle

        design = load_design("study", templates_dir=SHIPPED_DIR.parent / "templates")
        _default.append(design.catalogue)
        _remember(design)
    return _default[0]


def _remember(design) -> None:
    with _lock:
        _designs[:] = [(c, d) for c, d in _designs if d is not design][-31:] + [(design.catalogue, design)]


def use_design(design) -> contextlib.AbstractContextManager:
    """:func:`use` the catalogue of ``design`` (a :class:`~.design.Design`), and remember the design, so
    that :func:`current_design` gives its templates and grid to the code that reads only the axes."""
    _remember(design)
    return use(design.catalogue)


def current_design():
    """The design whose catalogue is active (:func:`use_design`), or None where the active catalogue was
    made active alone."""
    cat = current()
    with _lock:
        for c, d in reversed(_designs):
            if c == cat:
                return d
    return None


def current() -> Catalogue:
    """The active catalogue: the last one :func:`use` made active in this thread, else the process's
    (:func:`use_in_process`), else the study's."""
    stack = _stack()
    if stack:
        return stack[-1]
    with _lock:
        if _process:
            return _process[-1]
    return _study()


def reset() -> None:
    """Forget every design made active (this thread's and the process's): the study's catalogue is the
    active one again. For a fresh start between independent audits in one process (the tests)."""
    _stack().clear()
    with _lock:
        _process.clear()


def use_in_process(catalogue: Catalogue, design=None) -> None:
    """Make ``catalogue`` the process's design: every thread reads it unless it made another active."""
    if design is not None:
        _remember(design)
    with _lock:
        _process[:] = [catalogue]


class _Using(contextlib.AbstractContextManager):
    def __init__(self, catalogue: Catalogue):
        self.catalogue = catalogue
        stack = _stack()
        if stack and stack[-1] == catalogue:  # the same design again (each step of a run): not stacked
            self.pushed = False
        else:
            stack.append(catalogue)
            self.pushed = True

    def __enter__(self) -> Catalogue:
        return self.catalogue

    def __exit__(self, *exc) -> None:
        stack = _stack()
        if self.pushed and stack and stack[-1] is self.catalogue:
            stack.pop()


def use(catalogue: Catalogue) -> contextlib.AbstractContextManager:
    """Make ``catalogue`` the active one of this thread (the audit's design). As a context manager, the
    earlier one is active again on exit; called plainly, it stays active."""
    if not isinstance(catalogue, Catalogue):
        raise TypeError(f"use() takes a Catalogue, got {type(catalogue).__name__}")
    return _Using(catalogue)


@contextlib.contextmanager
def using(catalogue: Optional[Catalogue]) -> Iterator[Catalogue]:
    """``use(catalogue)`` for a block; with None, the active catalogue unchanged."""
    if catalogue is None:
        yield current()
        return
    with use(catalogue):
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
