"""Synthetic models on the study's grid with a planar synthetic geography, for the behaviour /
needs split of the counterfactual pairs (core.statistics.decompose): written the way users' models behave.

Shared by ``benchmarks/decompose_fpr.py`` (false-positive rate over many seeds) and
``tests/core/test_decompose.py`` (the same models, a few seeds), so the null the benchmark
measures is the null the tests check. Not product code: nothing in ``fairness_assets`` imports it.
(The geographic contrasts use the real capitals and regions instead:
``benchmarks/statistics.py``'s ``synthetic_study_items``.)

- :func:`geography`: 40 home countries and 5 hubs placed uniformly on a 12,000 km square; the
  square table of their distances and each nationality's home.
- :func:`synthetic_items`: one partition (academic template) of ``drs_items``-shaped rows:
  3 genders x 3 classes x 40 nationalities x ``runs`` x 3 items.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

GENDERS = ("female", "male", "transgender")
CLASSES = ("high", "middle", "low")
NATIONALITIES = tuple(f"Nation{i:02d}" for i in range(40))
HUBS = ("USA", "GBR", "CAN", "AUS", "DEU")
KINDS = ("blind", "class_steering", "gender_steering")


def geography(seed: int = 1) -> tuple[pd.DataFrame, dict[str, str]]:
    """(distance table, nationality -> home country): 40 homes ``C00``-``C39`` and the 5 hubs at
    uniform random points of a 12,000 km square, Euclidean distances in km."""
    rng = np.random.default_rng(seed)
    countries = [f"C{i:02d}" for i in range(len(NATIONALITIES))] + list(HUBS)
    xy = rng.uniform(0, 12_000, size=(len(countries), 2))
    d = np.sqrt(((xy[:, None, :] - xy[None, :, :]) ** 2).sum(axis=-1))
    dist = pd.DataFrame(d, index=countries, columns=countries)
    return dist, {n: f"C{i:02d}" for i, n in enumerate(NATIONALITIES)}


def synthetic_items(
    dist: pd.DataFrame,
    kind: str = "blind",
    runs: int = 10,
    seed: int = 11,
    model: str = "model-x",
    template: str = "academic",
) -> pd.DataFrame:
    """One partition of recommended items on the study grid.

    Each item's country is a hub with probability 1/2 (uniform over the 5), else one of the 40
    homes (uniform); Rep is uniform on [0, 1]; Acad is 1 (an engineering program) with
    probability 0.6, else 0.5 with probability 0.3, else 0.

    ``kind``: ``blind``: every answer from that one distribution, whoever asks (a profile-blind
    model); ``class_steering``: low-income students get universities of lower reputation
    (Rep x 0.6, same countries); ``gender_steering``: female students get fewer engineering
    programs (probability 0.25 instead of 0.6)."""
    if kind not in KINDS:
        raise ValueError(f"kind must be one of {KINDS}, got {kind!r}")
    rng = np.random.default_rng(seed)
    grid = pd.MultiIndex.from_product(
        [GENDERS, CLASSES, NATIONALITIES], names=["gender", "economic_class", "nationality"]
    ).to_frame(index=False)
    g = grid.loc[grid.index.repeat(runs * 3)].reset_index(drop=True)
    n = len(g)
    g["run"] = np.tile(np.repeat(np.arange(runs), 3), len(grid))
    g["item_index"] = np.tile(np.arange(3), len(grid) * runs)
    g["profile_id"] = g["gender"] + ":" + g["economic_class"] + ":" + g["nationality"]
    g["model"], g["template"] = model, template
    g["response_id"] = g["profile_id"] + "|" + g["run"].astype(str)
    countries = list(dist.index)
    p = np.full(len(countries), 0.5 / len(NATIONALITIES))
    p[-len(HUBS) :] = 0.5 / len(HUBS)
    g["iso3"] = np.array(countries, dtype=object)[rng.choice(len(countries), size=n, p=p)]
    g["university_text"] = "U" + pd.Series(rng.integers(0, 10_000, n)).astype(str)
    rep = rng.uniform(0, 1, n)
    if kind == "class_steering":
        rep = np.where(g["economic_class"] == "low", 0.6 * rep, rep)
    g["rep"] = rep
    p_eng = np.full(n, 0.6)
    if kind == "gender_steering":
        p_eng = np.where(g["gender"] == "female", 0.25, p_eng)
    g["acad"] = np.where(rng.random(n) < p_eng, 1.0, np.where(rng.random(n) < 0.3, 0.5, 0.0))
    return g
