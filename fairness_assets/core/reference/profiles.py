"""The synthetic students of a design (METHOD.md §2, §11): the crossed grid (factorial, or a seeded sample
with pair coverage) and the one-at-a-time profiles of the reduced context, one column per axis of the
design's catalogue. An axis a profile set does not state is empty (unstated, METHOD.md §11)."""

from __future__ import annotations

import itertools
import re
from typing import Mapping, Optional

import numpy as np
import pandas as pd

from ..common.text import strip_accents
from . import axes
from .design import FULL_SET, Design, DesignError


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


def _factorial(design: Design) -> list[dict]:
    crossed = design.grid.axes
    choices = [design.catalogue.axis(n).values for n in crossed]
    return [dict(zip(crossed, combo, strict=True)) for combo in itertools.product(*choices)]


def _sample(design: Design) -> list[dict]:
    """A seeded sample of ``size`` distinct crossed profiles in which every pair of values of two crossed
    axes appears at least ``pair_coverage`` times: the pairs short of it are filled first (each with a
    random profile holding the pair), then random profiles up to the size."""
    g = design.grid
    crossed = g.axes
    full = _factorial(design)
    rng = np.random.default_rng(g.seed)
    order = rng.permutation(len(full))
    chosen: list[int] = []
    taken = np.zeros(len(full), dtype=bool)
    index = {n: np.array([r[n] for r in full], dtype=object) for n in crossed}
    for a, b in itertools.combinations(crossed, 2):
        for va in design.catalogue.axis(a).values:
            for vb in design.catalogue.axis(b).values:
                holds = (index[a] == va) & (index[b] == vb)
                have = int((holds & taken).sum())
                spare = [i for i in order if holds[i] and not taken[i]]
                need = g.pair_coverage - have
                if need > len(spare):
                    raise DesignError(
                        f"{design.path}: grid.pair_coverage: {g.pair_coverage} profiles with {a}={va} and "
                        f"{b}={vb} cannot be drawn: the grid has only {int(holds.sum())}"
                    )
                for i in spare[: max(need, 0)]:
                    taken[i] = True
                    chosen.append(int(i))
    if len(chosen) > g.size:
        raise DesignError(
            f"{design.path}: grid.size: {g.size} profiles cannot cover every pair of values "
            f"{g.pair_coverage} times (that takes {len(chosen)}); raise the size or lower pair_coverage"
        )
    for i in order:
        if len(chosen) >= g.size:
            break
        if not taken[i]:
            taken[i] = True
            chosen.append(int(i))
    return [full[i] for i in sorted(chosen)]


def design_profiles(design: Design) -> pd.DataFrame:
    """Every profile of the design: the crossed set (``full``) and each one-at-a-time set, in that order,
    one column per axis of the design (the design's catalogue is made active while they are built)."""
    _check_slugs(design)
    with axes.use(design.catalogue):
        frames = []
        g = design.grid
        if g.axes:
            frames.append(_frame(_sample(design) if g.kind == "sample" else _factorial(design), FULL_SET))
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
