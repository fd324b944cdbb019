"""The rows of a design's crossed grid (METHOD.md §11): every combination of the crossed axes' values
(:func:`factorial_rows`), or a seeded sample of a stated size in which every pair of values of two axes
appears a stated number of times (:func:`sample_rows`). Plain rows ``{axis: value}``; the profiles
(core/reference/profiles.py) give them ids and sets."""

from __future__ import annotations

import itertools
from typing import Any

import numpy as np

from .catalogue import DesignError

Design = Any  # a core.reference.design.Design (not imported: design imports this module)


def factorial_rows(design: Design) -> list[dict]:
    """Every combination of the crossed axes' values, the first axis varying slowest."""
    crossed = design.grid.axes
    choices = [design.catalogue.axis(n).values for n in crossed]
    return [dict(zip(crossed, combo, strict=True)) for combo in itertools.product(*choices)]


def sample_rows(design: Design) -> list[dict]:
    """A seeded sample of ``size`` distinct crossed profiles in which every pair of values of two crossed
    axes appears at least ``pair_coverage`` times: the pairs short of it are filled first (each with a
    random profile holding the pair), then random profiles up to the size."""
    g = design.grid
    crossed = g.axes
    full = factorial_rows(design)
    rng = np.random.default_rng(g.seed)
    order = rng.permutation(len(full))
    chosen: list[int] = []
    taken = np.zeros(len(full), dtype=bool)
    # each axis's value as a code per profile of the factorial grid, so a pair's profiles are one comparison
    codes = {}
    for n in crossed:
        values = design.catalogue.axis(n).values
        at = {v: i for i, v in enumerate(values)}
        codes[n] = np.fromiter((at[r[n]] for r in full), dtype=np.int64, count=len(full))
    for a, b in itertools.combinations(crossed, 2):
        values_a, values_b = design.catalogue.axis(a).values, design.catalogue.axis(b).values
        for ia, va in enumerate(values_a):
            for ib, vb in enumerate(values_b):
                holds = (codes[a] == ia) & (codes[b] == ib)
                need = g.pair_coverage - int((holds & taken).sum())
                if need <= 0:
                    continue
                spare = order[holds[order] & ~taken[order]]  # in the seeded order
                if need > len(spare):
                    raise DesignError(
                        f"{design.path}: grid.pair_coverage: {g.pair_coverage} profiles with {a}={va} and "
                        f"{b}={vb} cannot be drawn: the grid has only {int(holds.sum())}"
                    )
                for i in spare[:need]:
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


def crossed_rows(design: Design) -> list[dict]:
    """The rows of the design's crossed grid: the sample's for a sampled grid, else every combination."""
    return sample_rows(design) if design.grid.kind == "sample" else factorial_rows(design)
