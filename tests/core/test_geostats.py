"""core/statistics/geostats/: region contrasts with power, one-vs-rest, interactions, home bias,
behaviour-vs-needs decomposition (docs/statistics.md §7-11)."""

from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from scipy import stats as sps

from fairness_assets.core.reference import regions
from fairness_assets.core.reporting.sentences import geography as geography_sentences
from fairness_assets.core.statistics import geostats as gs
from fairness_assets.core.statistics import stats
from fairness_assets.core.statistics.inference import InferenceParams
from tests.helpers.scripts import load_script

ROOT = Path(__file__).resolve().parents[2]


def _null_responses(runs=10, seed=3, effect=None):
    """Study-sized responses whose scores depend on nothing but noise (and ``effect``)."""
    from resources.settings import design_values

    preset = design_values("study")
    rng = np.random.default_rng(seed)
    g = pd.MultiIndex.from_product(
        [preset["gender"], preset["economic_class"], preset["nationality"]],
        names=["gender", "economic_class", "nationality"],
    ).to_frame(index=False)
    g = g.loc[g.index.repeat(runs)].reset_index(drop=True)
    g["run"] = np.tile(np.arange(runs), len(g) // runs)
    g["profile_id"] = g["gender"] + ":" + g["economic_class"] + ":" + g["nationality"]
    g["response_id"] = g["profile_id"] + "#" + g["run"].astype(str)
    g["model"], g["template"], g["n_items"] = "m", "base", 3
    g = regions.attach_student_regions(g)
    for m in ("drs", "acc", "rep"):
        g[m] = 0.5 + rng.normal(0, 0.1, len(g))
    if effect:
        region, size = effect
        g.loc[g["region"] == region, "drs"] += size
    return g


def test_planted_region_effect_detected_and_null_not():
    planted = gs.geo_contrasts(_null_responses(effect=("Africa", -0.03)), metrics=("drs", "acc", "rep"))
    row = planted[
        (planted["analysis"] == "region_vs_rest") & (planted["value"] == "Africa") & (planted["metric"] == "drs")
    ]
    assert row["significant"].item() and row["ci_low"].item() < -0.03 < row["ci_high"].item()
    south = planted[(planted["analysis"] == "south_vs_north") & (planted["metric"] == "drs")]
    assert south["mean_diff"].item() < 0
    null = gs.geo_contrasts(_null_responses(seed=11), metrics=("drs", "acc", "rep"))
    assert not null["significant"].any()
    assert (null["n_units"] == 90).all() and set(null["unit"]) == {"gender x economic_class x run"}


def test_family_sizes_and_min_attainable_p():
    c = gs.geo_contrasts(
        _null_responses(seed=1), metrics=("drs", "acc", "rep"), inference=InferenceParams(n_perm=10_000)
    )
    fam = gs.family_summary(c).set_index("analysis")
    assert fam.loc["region_vs_rest", "family_size"] == 6 * 3
    assert fam.loc["south_vs_north", "family_size"] == 1 * 3
    assert fam.loc["nationality_vs_rest", "family_size"] == 40 * 3
    assert np.allclose(fam["p_min_attainable"], 1 / 10_001)
    assert fam["attainable"].all()  # 1/10,001 < 0.05/120
    # averaging the runs first: 9 strata, exact test, smallest p 2/2^9 cannot survive 120 tests
    s = gs.group_contrasts(_null_responses(seed=1), "nationality", ("drs", "acc", "rep"), replicates="strata")
    f2 = gs.family_summary(s).iloc[0]
    assert f2["n_units"] == 9 and f2["p_min_attainable"] == pytest.approx(2 / 512) and not f2["attainable"]


def test_a_contrast_is_named_by_its_attribute_or_a_one_vs_rest():
    """group_contrasts takes the attribute alone (every value, analysis "{attribute}_vs_rest") or a
    OneVsRest; geo_contrasts runs the three families of GEO_CONTRASTS in their order."""
    r = _null_responses(runs=2, seed=5)
    inf = InferenceParams(n_boot=50, n_perm=100)
    by_name = gs.group_contrasts(r, "region", ("drs",), inference=inf)
    by_spec = gs.group_contrasts(r, gs.OneVsRest("region"), ("drs",), inference=inf)
    pd.testing.assert_frame_equal(by_name, by_spec, check_exact=True)
    assert set(by_name["analysis"]) == {"region_vs_rest"}
    south = gs.group_contrasts(r, gs.OneVsRest("north_south", ("Global South",), "south"), ("drs",), inference=inf)
    assert south["value"].tolist() == ["Global South"] and south["analysis"].tolist() == ["south"]
    c = gs.geo_contrasts(r, ("drs",), inference=inf)
    assert list(pd.unique(c["analysis"])) == [f.analysis for f in gs.GEO_CONTRASTS]


def test_positions_fill_in_what_is_missing(bench):
    items, resp, params = bench.synthetic_study_items(1, templates=("base",), unis_per_country=3)
    geo = gs.response_geography(items, resp)
    p = gs.Positions(items, params)
    full = p.resolved(geo)
    assert p.student_iso3 is None and p.distances is None and p.table is None  # frozen: a new value
    assert (
        full.student_iso3
        == geo.dropna(subset=["student_iso3"]).groupby("nationality")["student_iso3"].first().to_dict()
    )
    assert set(full.student_iso3.values()) <= set(full.distances.index) and len(full.table)
    again = full.resolved(geo)
    assert again.distances is full.distances and again.table is full.table and again.student_iso3 == full.student_iso3


@pytest.mark.parametrize("n", [5, 8, 11])
def test_sign_flip_p_matches_scipy(n):
    rng = np.random.default_rng(n)
    d = rng.normal(0.3, 1, size=(n, 1))
    res = stats.paired_test(d, inference=InferenceParams(n_perm=10_000, n_boot=200, level=0.95, seed=0), key=("t",))
    ref = sps.permutation_test(
        (d[:, 0],), np.mean, permutation_type="samples", n_resamples=np.inf, alternative="two-sided"
    )
    assert res["method"][0] == "exact"
    assert res["p"][0] == pytest.approx(ref.pvalue, abs=1e-12)


def test_one_vs_rest_by_hand():
    """Two strata, two runs, three values: d = value - mean(rest) per unit."""
    rows = []
    for s in ("high", "low"):
        for run in (0, 1):
            for v, y in (("A", 1.0), ("B", 0.5), ("C", 0.0)):
                rows.append(
                    {
                        "economic_class": s,
                        "gender": "f",
                        "run": run,
                        "nationality": v,
                        "n_items": 3,
                        "drs": y + (0.1 if s == "low" else 0.0) + 0.01 * run,
                        "profile_id": f"{s}{v}",
                        "response_id": f"{s}{v}{run}",
                    }
                )
    c = gs.group_contrasts(pd.DataFrame(rows), "nationality", ("drs",))
    a = c[c["value"] == "A"].iloc[0]
    assert a["n_units"] == 4 and a["mean_diff"] == pytest.approx(1.0 - 0.25)
    assert a["p_method"] == "exact" and a["p_value"] == pytest.approx(2 / 16)


@pytest.mark.slow
def test_class_blind_model_has_no_behaviour_gap(bench):
    items, resp, params = bench.synthetic_study_items(runs=5, templates=("base",), class_blind=True)
    dec = gs.class_gap_decomposition(items, resp, params, inference=InferenceParams(n_boot=500, n_perm=2000))
    lh = dec[(dec["value_a"] == "high") & (dec["value_b"] == "low")].set_index(["metric", "component"])
    for m in ("acc", "drs"):
        total, beh, needs = (lh.loc[(m, c), "mean_diff"] for c in ("total", "behaviour", "needs"))
        assert total < -0.1 and abs(beh) < 0.03 and needs == pytest.approx(total - beh)
        assert lh.loc[(m, "behaviour"), "ci_low"] < 0 < lh.loc[(m, "behaviour"), "ci_high"]
        assert lh.loc[(m, "needs"), "significant"]
    # the total equals the counterfactual disparity of the existing statistics
    cf = stats.counterfactual_disparity(
        resp, attributes=("economic_class",), metrics=("acc", "drs"), inference=InferenceParams(n_boot=10, n_perm=10)
    )
    cf = cf[(cf["value_a"] == "high") & (cf["value_b"] == "low")].set_index("metric")
    assert lh.loc[("drs", "total"), "mean_diff"] == pytest.approx(cf.loc["drs", "mean_diff"])
    # a class-aware model (low-income students get more home universities) shows a behaviour part
    items2, resp2, _ = bench.synthetic_study_items(runs=5, templates=("base",), class_blind=False)
    dec2 = gs.class_gap_decomposition(items2, resp2, params, inference=InferenceParams(n_boot=500, n_perm=2000))
    b2 = dec2[
        (dec2["value_a"] == "high")
        & (dec2["value_b"] == "low")
        & (dec2["component"] == "behaviour")
        & (dec2["metric"] == "acc")
    ].iloc[0]
    assert b2["mean_diff"] > 0.05 and b2["significant"]
    text = " ".join(geography_sentences.summary_sentences({"class_gap_decomposition": dec}))
    assert "did not adapt its recommendations to the student's income" in text


@pytest.mark.slow
def test_geo_statistics_end_to_end(bench):
    items, resp, params = bench.synthetic_study_items(runs=3, planted_region="Africa", planted=0.3)
    out = gs.geo_statistics(gs.Positions(items, params), resp, inference=InferenceParams(n_boot=300, n_perm=2000))
    assert set(out) >= {
        "region_metrics",
        "geo_contrasts",
        "class_gap_interactions",
        "home_bias",
        "home_bias_change",
        "class_gap_decomposition",
        "families",
    }
    home = out["home_bias"]
    assert len(home) == 2 * 40 and home["own_country"].between(0, 1).all()
    ch = out["home_bias_change"]
    assert (ch["own_region_change"] > 0).mean() > 0.8  # the regional template brings recommendations home
    c = out["geo_contrasts"]
    assert set(c["component"]) == {"total", "behaviour", "needs"}
    afr = c[
        (c["template"] == "base") & (c["value"] == "Africa") & (c["metric"] == "rep") & (c["component"] == "total")
    ].iloc[0]
    assert afr["significant"] and afr["mean_diff"] < 0
    sentences = geography_sentences.summary_sentences(out)
    assert sentences and "adjusted p" in sentences[0]
    inter = out["class_gap_interactions"]
    assert set(inter["kind"]) == {"gap", "interaction"}
    assert set(inter["component"]) == {"total", "behaviour", "needs"}
    g = inter[(inter["factor"] == "gender") & (inter["kind"] == "interaction") & (inter["component"] == "total")]
    assert len(g) == 2 * 3 * 3 and g["p_value"].notna().all()


def test_interaction_recovers_a_planted_gender_by_class_effect():
    r = _null_responses(seed=4)
    r.loc[(r["gender"] == "female") & (r["economic_class"] == "low"), "drs"] -= 0.05
    i = gs.class_gap_interactions(r, "gender", metrics=("drs",))
    fm = i[(i["kind"] == "interaction") & (i["value_a"] == "female") & (i["value_b"] == "male")].iloc[0]
    assert fm["mean_diff"] == pytest.approx(0.05, abs=0.02) and fm["significant"]
    mt = i[(i["kind"] == "interaction") & (i["value_a"] == "male") & (i["value_b"] == "transgender")].iloc[0]
    assert not mt["significant"]
    reg = gs.class_gap_interactions(r, "region", metrics=("drs",))
    assert (reg[reg["kind"] == "interaction"]["value_b"] == "rest").all() and not reg["significant"].any()


def test_docs_geo_worked_example_matches_the_code():
    """docs/statistics.md's geographic worked example is what docs/build_geostats_example.py
    computes now (the builder is only read here: it returns the Markdown, nothing is written)."""
    mod = load_script("docs/build_geostats_example.py", "build_geostats_example")
    assert mod.render_example() == mod.section_in_doc(), (
        "docs/statistics.md's geographic worked example is out of date: run "
        ".venv/bin/python docs/build_geostats_example.py"
    )
