"""The synthetic students of a design (METHOD.md §2, §11): the crossed grid (factorial, or a seeded sample
with pair coverage) and the one-at-a-time profiles of the reduced context, one column per axis of the
design's catalogue. An axis a profile set does not state is empty (unstated, METHOD.md §11)."""

from __future__ import annotations

from typing import Mapping, Optional

import pandas as pd

from ..common.text import slug
from . import axes
from .design import FULL_SET, Design, DesignError
from .grid_rows import crossed_rows
from .names import NAME_COLUMN, name_key, named_rows


def profile_columns() -> list[str]:
    """The profile table's columns: id, set, then one per axis of the active catalogue."""
    return ["profile_id", "profile_set", *axes.names()]


def profile_id(profile_set: str, values: Mapping[str, Optional[str]], name: Optional[str] = None) -> str:
    """The stable, readable id of a profile, e.g. ``full:female:low:nigeria``: its set, then the slug of
    each stated value in the catalogue's order; a named profile's name last (names.name_key)."""
    stated = [slug(str(values[n])) for n in axes.names() if values.get(n) is not None]
    if not stated:
        raise ValueError(f"a profile of set {profile_set!r} states no axis")
    return ":".join([profile_set, *stated, *([name_key(name)] if name else [])])


def _check_slugs(design: Design) -> None:
    for a in design.axes:
        slugs = [slug(v) for v in a.values]
        if len(set(slugs)) != len(slugs) or not all(slugs):
            raise DesignError(
                f"{design.path}: axes.{a.name}.values: the values must stay distinct and non-empty as ids "
                f"(letters and digits): {list(a.values)!r}"
            )


def _frame(rows: list[dict], profile_set: str) -> pd.DataFrame:
    cols = profile_columns()
    data = [
        [profile_id(profile_set, r, r.get(NAME_COLUMN)), profile_set, *(r.get(n) for n in axes.names())] for r in rows
    ]
    out = pd.DataFrame(data, columns=cols)
    if any(NAME_COLUMN in r for r in rows):
        out[NAME_COLUMN] = [r.get(NAME_COLUMN) for r in rows]
    return out


def design_profiles(design: Design) -> pd.DataFrame:
    """Every profile of the design: the crossed set (``full``) and each one-at-a-time set, in that order,
    one column per axis of the design (the design's catalogue is made active while they are built)."""
    _check_slugs(design)
    with axes.use(design.catalogue):
        frames = []
        g = design.grid
        if g.axes:
            crossed = crossed_rows(design)
            frames.append(_frame(crossed, FULL_SET))
            if design.names is not None:  # each crossed profile once per name drawn for it (names.py)
                frames.append(_frame(named_rows(design.names, crossed), design.names.profile_set))
        for n in g.one_at_a_time:
            a = design.catalogue.axis(n)
            frames.append(_frame([{n: v} for v in a.values], a.profile_set))
        out = pd.concat(frames, ignore_index=True)
    dup = out["profile_id"][out["profile_id"].duplicated()]
    if len(dup):
        raise DesignError(f"{design.path}: profile ids collide: {sorted(set(dup))[:5]}")
    return out


def full_set(design: Design) -> pd.DataFrame:
    """The crossed profiles of the design (its ``full`` set)."""
    table = design_profiles(design)
    return table[table["profile_set"] == FULL_SET].reset_index(drop=True)


def stated_axes(profile_set: str, design: Design) -> tuple[str, ...]:
    """The axes a profile set states (a named profile's signalled axes: the values its name signals)."""
    if profile_set == FULL_SET or (design.names is not None and profile_set == design.names.profile_set):
        return design.grid.axes
    for a in design.axes:
        if a.profile_set == profile_set:
            return (a.name,)
    raise KeyError(f"design {design.name!r} has no profile set {profile_set!r}")


def pair_counts(profiles: pd.DataFrame, a: str, b: str) -> pd.Series:
    """How many profiles hold each pair of values of axes ``a`` and ``b``."""
    sub = profiles.dropna(subset=[a, b])
    return sub.groupby([a, b]).size()
