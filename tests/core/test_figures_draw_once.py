"""Each figure is drawn once when saved, and the PNG is the same bytes as with the double draw it replaces
(core/reporting/figures/shared.py ``_png``: the placeholder layout engine `tight_layout` leaves behind made
`savefig` run a whole draw before the real one)."""

from __future__ import annotations

import hashlib

import numpy as np
import pandas as pd
import pytest
from matplotlib.figure import Figure as MplFigure

from fairness_assets.core.reporting.figures import counts, shared

UNIVERSITIES = [f"University of Somewhere Number {i}" for i in range(40)]


@pytest.fixture(scope="module")
def items() -> pd.DataFrame:
    rng = np.random.default_rng(7)
    n = 300
    return pd.DataFrame(
        dict(
            model="m",
            template="base",
            economic_class=rng.choice(["high", "middle", "low"], n),
            gender=rng.choice(["male", "female"], n),
            university=rng.choice(UNIVERSITIES, n),
            matched_name=rng.choice(UNIVERSITIES, n),
            country=rng.choice(["Germany", "France", "India", "Kenya", "Brazil"], n),
            iso3=rng.choice(["DEU", "FRA", "IND", "KEN", "BRA"], n),
            program=rng.choice([f"MSc Program {i}" for i in range(25)], n),
        )
    )


def _draw_all(items: pd.DataFrame) -> tuple[list[str], int]:
    """The hashes of every figure drawn from ``items``, and how many times a figure was drawn in all."""
    drawn = {"n": 0}
    original = MplFigure.draw

    def counting(self, renderer):
        drawn["n"] += 1
        return original(self, renderer)

    MplFigure.draw = counting
    try:
        figures = [counts.top_figure(items, k, by) for k in ("universities", "locations") for by in (None, "gender")]
        figures.append(counts.recommended_locations(items))
    finally:
        MplFigure.draw = original
    assert all(f.png for f in figures), [f.skipped_reason for f in figures]
    return [hashlib.sha256(f.png).hexdigest() for f in figures], drawn["n"]


def test_each_figure_is_drawn_once_and_gives_the_bytes_of_the_double_draw(items, monkeypatch):
    once, draws = _draw_all(items)
    assert draws == len(once) == 5, draws  # one draw a figure

    class NotThePlaceholder:  # the code before: the placeholder engine kept, savefig draws twice
        pass

    monkeypatch.setattr(shared, "PlaceHolderLayoutEngine", NotThePlaceholder)
    twice, draws_before = _draw_all(items)
    assert draws_before == 2 * len(twice), draws_before
    assert once == twice
