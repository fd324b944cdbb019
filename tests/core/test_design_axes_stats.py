"""Statistics and scoring follow the design's axes (issue 34): a design with a fourth axis, ``disability``
(position kind ``none``: values none, blind, wheelchair user), next to the study's three, is scored,
tested and decomposed like any other axis; a design without a home or a lambda axis skips what needs
them.

The data are synthetic, on the planar geography of ``benchmarks/synthetic_models.py``: 8 nationalities
x 3 genders x 3 classes x 3 disabilities x 4 runs x 3 items, every item a university of a synthetic
corpus (20 per country, ranks 1-1200), scored by the real ``metrics.drs_items``. ``steered``: half of
a blind student's items are drawn from the worse-ranked half of the country's universities (a lower
Rep, hence DRS), the countries as for everyone; ``blind``: every answer from one distribution,
whoever asks (a profile-blind model)."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from fairness_assets.core.reference import axes
from fairness_assets.core.reference.axes import Axis, Catalogue
from fairness_assets.core.scoring import metrics as mx
from fairness_assets.core.statistics import comparison as cmp
from fairness_assets.core.statistics import decompose as dc
from fairness_assets.core.statistics import geostats as gs
from fairness_assets.core.statistics import sensitivity as sens
from fairness_assets.core.statistics import stats as st
from fairness_assets.core.statistics.inference import InferenceParams
from fairness_assets.core.understanding import quality
from tests.helpers.scripts import load_script

SYN = load_script("benchmarks/synthetic_models.py", "bench_synthetic_models")
DIST, ISO = SYN.geography()
NATIONS = SYN.NATIONALITIES[:8]
RUNS, UNIS = 4, 20
INFERENCE = InferenceParams(n_perm=2000, n_boot=500)

GENDER = Axis("gender", "gender", "gender", "none", "gender_only", ("male", "female", "transgender"))
CLASS = Axis(
    "economic_class",
    "economic class",
    "income",
    "lambda",
    "class_only",
    ("high", "middle", "low"),
    lambdas=(("high", 0.0001), ("middle", 0.0005), ("low", 0.001)),
)
NATIONALITY = Axis("nationality", "nationality", "nationality", "home", "nationality_only", NATIONS)
DISABILITY = Axis(
    "disability", "disability", "disability", "none", "disability_only", ("none", "blind", "wheelchair user")
)
FOUR_AXES = Catalogue((GENDER, CLASS, NATIONALITY, DISABILITY))
NO_POSITION = Catalogue((GENDER, DISABILITY))  # neither a home nor a lambda axis


def _corpus(seed: int = 5) -> pd.DataFrame:
    """20 universities per country of DIST, ranked 1-1200 at random, the best first in each country."""
    rng = np.random.default_rng(seed)
    countries = list(DIST.index)
    c = pd.DataFrame({"iso3": np.repeat(countries, UNIS), "rank": rng.integers(1, 1201, len(countries) * UNIS)})
    c = c.sort_values(["iso3", "rank"], kind="stable").reset_index(drop=True)
    c["university_id"] = np.arange(len(c))
    c["rank_raw"] = c["rank"].astype(str)
    c["name"] = "U" + c["university_id"].astype(str)
    c["country"] = c["iso3"]
    return c


CORPUS = _corpus()


def _recs(kind: str, catalogue: Catalogue, seed: int) -> pd.DataFrame:
    """One base-template partition of recommendations on ``catalogue``'s grid (every axis's values)."""
    rng = np.random.default_rng(seed)
    names = [a.name for a in catalogue.axes]
    grid = pd.MultiIndex.from_product([a.values for a in catalogue.axes], names=names).to_frame(index=False)
    g = grid.loc[grid.index.repeat(RUNS * 3)].reset_index(drop=True)
    n = len(g)
    g["run"] = np.tile(np.repeat(np.arange(RUNS), 3), len(grid))
    g["item_index"] = np.tile(np.arange(3), len(grid) * RUNS)
    g["profile_id"] = g[names].astype(str).agg(":".join, axis=1)
    g["model"], g["template"] = "model-x", "base"
    g["response_id"] = g["profile_id"] + "|" + g["run"].astype(str)
    countries = list(DIST.index)
    homes = [ISO[v] for v in NATIONS]
    p = np.array([0.5 / len(homes) if c in homes else 0.0 for c in countries])
    p[-len(SYN.HUBS) :] = 0.5 / len(SYN.HUBS)
    ci = rng.choice(len(countries), size=n, p=p / p.sum())
    k = rng.integers(0, UNIS, n)
    if kind == "steered":  # half of a blind student's items: the worse-ranked half of the country's
        hit = (g["disability"] == "blind").to_numpy() & (rng.random(n) < 0.5)
        k = np.where(hit, UNIS // 2 + k % (UNIS // 2), k)
    g["university_id"] = ci * UNIS + k
    g["iso3"] = np.array(countries, dtype=object)[ci]
    g["university_text"] = "U" + g["university_id"].astype(str)
    g["tags"] = None
    g["parse_status"] = "ok"
    return g


def _scored(kind: str, catalogue: Catalogue, seed: int):
    """(items, responses, params) scored by core.scoring.metrics with ``catalogue`` active."""
    with axes.use(catalogue):
        recs = _recs(kind, catalogue, seed)
        params = mx.ScoringParams()
        items = mx.drs_items(recs, CORPUS, DIST, ISO, params)
        return items, mx.drs_responses(items, recs), params


def _one(t: pd.DataFrame, **where) -> pd.Series:
    sel = t
    for col, value in where.items():
        sel = sel[sel[col] == value]
    assert len(sel) == 1, (where, len(sel))
    return sel.iloc[0]


@pytest.fixture(scope="module")
def steered():
    items, resp, params = _scored("steered", FOUR_AXES, seed=21)
    with axes.use(FOUR_AXES):
        out = {
            "disparity": st.counterfactual_disparity(resp, inference=INFERENCE),
            **dc.decompose(items, DIST, ISO, params, inference=INFERENCE),
        }
    return items, resp, params, out


def test_the_fourth_axis_is_scored_and_tested_like_the_others(steered):
    items, resp, params, out = steered
    assert params.lambdas == {"high": 0.0001, "middle": 0.0005, "low": 0.001}  # the design's lambda axis
    assert {"disability", "gender", "economic_class", "nationality"} <= set(resp.columns)
    for table in ("disparity", "behaviour_needs", "envy"):
        assert set(out[table]["attribute"]) == {"gender", "economic_class", "nationality", "disability"}, table
    dis = out["disparity"]
    pairs = dis[(dis["attribute"] == "disability") & (dis["metric"] == "rep")]
    assert list(zip(pairs["value_a"], pairs["value_b"], strict=True)) == [
        ("blind", "none"),
        ("blind", "wheelchair user"),
        ("none", "wheelchair user"),
    ]
    assert (pairs["n_pairs"] == 3 * 3 * len(NATIONS)).all()  # strata: gender x class x nationality
    # its own Holm family per component, as every axis: 3 pairs x the 4 metrics defined here
    beh = out["behaviour_needs"]
    fam = beh[(beh["attribute"] == "disability") & (beh["component"] == "behaviour")]
    assert set(fam["metric"]) == {"drs", "acc", "rep", "us_uk_share"} and (fam["family_size"] == 12).all()


def test_steering_blind_students_is_found_as_behaviour_with_its_sign(steered):
    _, _, _, out = steered
    dis, beh = out["disparity"], out["behaviour_needs"]
    for metric in ("rep", "drs"):
        # value_b - value_a = none - blind: blind students get lower Rep and DRS
        d = _one(dis, attribute="disability", value_a="blind", value_b="none", metric=metric)
        assert d["significant"] and d["mean_diff"] > 0 and d["ci_low"] > 0, d
        b = _one(beh, attribute="disability", value_a="blind", value_b="none", metric=metric, component="behaviour")
        assert b["significant"] and b["mean_diff"] > 0 and b["ci_low"] > 0, b
        assert b["mean_diff"] == pytest.approx(d["mean_diff"], abs=1e-12)  # all of it behaviour
        # the unsteered pair: nothing
        w = _one(
            beh, attribute="disability", value_a="none", value_b="wheelchair user", metric=metric, component="behaviour"
        )
        assert not w["significant"]
    # Rep: half of a blind student's items from the worse half (mean Rep about 0.25 instead of 0.5): about 0.125
    rep = _one(beh, attribute="disability", value_a="blind", value_b="none", metric="rep", component="behaviour")
    assert 0.05 < rep["mean_diff"] < 0.2
    # a none axis moves no position: its needs part is 0 by construction for every metric (Acc too), untested
    needs = beh[(beh["attribute"] == "disability") & (beh["component"] == "needs")]
    assert len(needs) and needs["by_construction"].all()
    assert (needs["mean_diff"] == 0.0).all() and needs["p_value"].isna().all() and (needs["family_size"] == 0).all()
    assert (needs["marking"] == dc.BY_CONSTRUCTION_NOTE).all()
    # the lambda axis still has a tested needs part (Acc, DRS)
    lam = beh[(beh["attribute"] == "economic_class") & (beh["component"] == "needs") & (beh["metric"] == "acc")]
    assert not lam["by_construction"].any() and lam["p_value"].notna().all()
    # envy: blind students would score higher with the lists the others received
    en = out["envy"]
    e = _one(en, attribute="disability", group="blind", other_group="none", metric="rep")
    assert e["ci_low"] > 0.5 and e["n_students"] == 3 * 3 * len(NATIONS) * RUNS
    e = _one(en, attribute="disability", group="none", other_group="blind", metric="rep")
    assert e["ci_high"] < 0.5


def test_the_breakdowns_gaps_and_interactions_include_the_fourth_axis(steered):
    items, resp, params, _ = steered
    with axes.use(FOUR_AXES):
        summary = mx.drs_summary(resp)
        var = st.run_variability(resp, inference=InferenceParams(n_boot=50))
        rates = quality.group_rates(quality.response_frame(items), quality.item_frame(items))
        gaps = cmp.gaps()
        factors = gs.interaction_factors()
        inter = gs.class_gap_interactions(
            resp, "disability", positions=gs.Positions(items, params), inference=INFERENCE
        )
        grid = [s.name for s in sens.settings_grid((0.0002, 0.001, 0.002))]
    assert list(pd.unique(summary["group_by"])) == ["overall", "gender", "economic_class", "disability"]
    by = summary[summary["group_by"] == "disability"].set_index("group")
    assert by.loc["blind", "rep"] < by.loc["none", "rep"] and by.loc["blind", "rep"] < by.loc["wheelchair user", "rep"]
    assert list(pd.unique(var["group_by"])) == ["overall", "gender", "economic_class", "disability"]
    assert set(rates["attribute"]) == {"gender", "economic_class", "nationality", "disability"}
    assert gaps == (
        ("economic_class", "low", "high"),
        ("gender", "female", "male"),
        ("gender", "transgender", "male"),
        ("disability", "blind", "none"),
        ("disability", "wheelchair user", "none"),
        ("north_south", "Global South", "Global North"),
    )
    assert factors == ("gender", "disability", "region")
    # the lambda axis's gap (low - high) by disability: one gap per value, three interactions, split
    assert set(inter["factor"]) == {"disability"} and set(inter["gap"]) == {"low - high"}
    g = inter[(inter["kind"] == "gap") & (inter["component"] == "total") & (inter["metric"] == "acc")]
    assert sorted(g["value_a"]) == ["blind", "none", "wheelchair user"]
    assert set(inter["component"]) == {"total", "behaviour", "needs"}
    acc = _one(inter, kind="gap", component="needs", metric="acc", value_a="none")
    assert acc["mean_diff"] < 0  # low-income students' larger lambda: lower Acc for the same lists
    assert grid[2] == "lambda 0.0002/0.001/0.002"


def test_a_profile_blind_model_has_no_behaviour_finding_on_any_axis():
    items, resp, params = _scored("blind", FOUR_AXES, seed=22)
    with axes.use(FOUR_AXES):
        dis = st.counterfactual_disparity(resp, inference=INFERENCE)
        beh = dc.behaviour_needs(items, DIST, ISO, params, inference=INFERENCE)
    beh = beh[beh["component"] == "behaviour"]
    assert set(beh["attribute"]) == {"gender", "economic_class", "nationality", "disability"}
    assert not beh["significant"].any(), beh[beh["significant"]]
    # the none axes' gaps are all behaviour: their totals show nothing either
    none_axes = dis[dis["attribute"].isin(["gender", "disability"])]
    assert len(none_axes) and not none_axes["significant"].any(), none_axes[none_axes["significant"]]


def test_a_design_without_home_or_lambda_axis_skips_what_needs_them():
    items, resp, params = _scored("steered", NO_POSITION, seed=23)
    assert params.lambdas == {} and items["acc"].isna().all() and items["student_iso3"].isna().all()
    # DRS without Acc: the mean of the available components (here Rep alone)
    np.testing.assert_allclose(items["drs"], items["rep"])
    with axes.use(NO_POSITION):
        out = dc.decompose(items, DIST, ISO, params, inference=InferenceParams(n_perm=500, n_boot=100))
        geo = gs.geo_statistics(gs.Positions(items, params, distances=DIST), resp, inference=INFERENCE)
        grid = [s.name for s in sens.settings_grid()]
        with pytest.raises(ValueError, match="no lambda axis"):
            sens.parse_triple("0.1,0.2,0.3")
        gaps = cmp.gaps()
    beh = out["behaviour_needs"]
    assert set(beh["attribute"]) == {"gender", "disability"}
    assert beh.loc[beh["component"] == "needs", "by_construction"].all()  # nothing moves a position
    b = _one(beh, attribute="disability", value_a="blind", value_b="none", metric="rep", component="behaviour")
    assert b["mean_diff"] > 0 and b["n_pairs"] == 3  # strata: the genders
    for name in ("geo_contrasts", "class_gap_interactions", "class_gap_decomposition", "home_bias"):
        assert geo[name].empty and len(geo[name].columns), name  # skipped: an empty table with its columns
    assert "nationality" not in geo["home_bias"].columns
    assert geo["geo_responses"]["student_iso3"].isna().all()
    assert grid == ["R_max 1000", "R_max 1500"]  # no lambda to vary
    assert gaps == (
        ("gender", "female", "male"),
        ("gender", "transgender", "male"),
        ("disability", "blind", "none"),
        ("disability", "wheelchair user", "none"),
    )
