"""The synthetic students of a design (METHOD.md §2, §11): the crossed grid (factorial, or a seeded sample
with pair coverage) and the one-at-a-time profiles of the reduced context, one column per axis of the
design's catalogue. An axis a profile set does not state is empty (unstated, METHOD.md §11)."""

from __future__ import annotations

import re
from typing import Mapping, Optional

import pandas as pd

from ..common.text import strip_accents
from . import axes
from .design import FULL_SET, Design, DesignError
from .grid_rows import factorial_rows, sample_rows


def slug(text: str) -> str:
    t = strip_accents(text).lower()
    return re.sub(r"[^a-z0-9]+", "-", t).strip("-")


def profile_columns() -> list[str]:
    """The profile table's columns: id, set, then one per axis of the active catalogue."""
    return ["profile_id", "profile_set", *axes.names()]


def profile_id(profile_set: str, values: Mapping[str, Optional[str]]) -> str:
    """The stable, readable id of a profile, e.g. ``full:female:low:nigeria``: its set, then the slug of
    each stated value in the catalogue's order."""
    stated = [slug(str(values[n])) for n in axes.names() if values.get(n) is not None]
    if not stated:
        raise ValueError(f"a profile of set {profile_set!r} states no axis")
    return ":".join([profile_set, *stated])


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
    data = [[profile_id(profile_set, r), profile_set, *(r.get(n) for n in axes.names())] for r in rows]
    return pd.DataFrame(data, columns=cols)


def design_profiles(design: Design) -> pd.DataFrame:
    """Every profile of the design: the crossed set (``full``) and each one-at-a-time set, in that order,
    one column per axis of the design (the design's catalogue is made active while they are built)."""
    _check_slugs(design)
    with axes.use(design.catalogue):
        frames = []
        g = design.grid
        if g.axes:
            frames.append(_frame(sample_rows(design) if g.kind == "sample" else factorial_rows(design), FULL_SET))
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
    """The axes a profile set states."""
    if profile_set == FULL_SET:
        return design.grid.axes
    for a in design.axes:
        if a.profile_set == profile_set:
            return (a.name,)
    raise KeyError(f"design {design.name!r} has no profile set {profile_set!r}")


def pair_counts(profiles: pd.DataFrame, a: str, b: str) -> pd.Series:
    """How many profiles hold each pair of values of axes ``a`` and ``b``."""
    sub = profiles.dropna(subset=[a, b])
    return sub.groupby([a, b]).size()
