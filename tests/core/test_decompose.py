"""Behaviour / needs of every counterfactual pair, and envy (core.statistics.decompose; docs/statistics.md,
"Behaviour and needs of every counterfactual contrast").

Synthetic models on the study's grid (3 genders x 3 classes x 40 nationalities x 10 runs x 3
items, one academic-template partition), with a synthetic planar geography, and a tiny example
computed by hand."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from fairness_assets.core.scoring import metrics as mx
from fairness_assets.core.statistics import decompose as dc
from fairness_assets.core.statistics import stats as st
from fairness_assets.core.statistics.inference import InferenceParams
from tests.helpers.scripts import load_script

# the synthetic models shared with benchmarks/decompose_fpr.py (the null it measures over 20 seeds)
SYN = load_script("benchmarks/synthetic_models.py", "bench_synthetic_models")
PARAMS = mx.ScoringParams()
N_PERM, N_BOOT = 2000, 1000
DIST, ISO = SYN.geography()


def synthetic_items(kind: str = "blind", runs: int = 10, seed: int = 11) -> pd.DataFrame:
    """One academic-template partition of ``benchmarks/synthetic_models.py`` (``blind``,
    ``class_steering``, ``gender_steering``) on the planar geography DIST."""
    return SYN.synthetic_items(DIST, kind, runs=runs, seed=seed)


def _run(items, **kw):
    return dc.decompose(items, DIST, ISO, PARAMS, inference=InferenceParams(n_perm=N_PERM, n_boot=N_BOOT), **kw)


@pytest.fixture(scope="module")
def blind():
    items = synthetic_items("blind")
    return items, _run(items)


@pytest.fixture(scope="module")
def class_steering():
    items = synthetic_items("class_steering", seed=12)
    return items, _run(items, attributes=("economic_class",))


def _row(t, attribute, a, b, metric, component):
    r = t[
        (t["attribute"] == attribute)
        & (t["value_a"] == a)
        & (t["value_b"] == b)
        & (t["metric"] == metric)
        & (t["component"] == component)
    ]
    assert len(r) == 1, (attribute, a, b, metric, component, len(r))
    return r.iloc[0]


# ----------------------------------------------------------------------------- (a) profile-blind model
def test_blind_model_behaviour_not_significant_but_acc_class_gap_is(blind):
    items, out = blind
    t = out["behaviour_needs"]
    assert set(t["component"]) == {"total", "behaviour", "needs"}
    assert set(t["attribute"]) == {"gender", "economic_class", "nationality"}
    beh = t[t["component"] == "behaviour"]
    # Holm within each (attribute, component) family at 5%: at most one false positive in three families
    assert int(beh["significant"].sum()) <= 1, beh[beh["significant"]]
    # the outcome gap in Acc between classes is large and significant, and needs carries it
    for a, b in (("high", "low"), ("high", "middle"), ("low", "middle")):
        tot = _row(t, "economic_class", a, b, "acc", "total")
        needs = _row(t, "economic_class", a, b, "acc", "needs")
        bh = _row(t, "economic_class", a, b, "acc", "behaviour")
        assert tot["significant"] and needs["significant"] and not bh["significant"]
        assert abs(bh["mean_diff"]) < 0.1 * abs(tot["mean_diff"])
        assert needs["mean_diff"] == pytest.approx(tot["mean_diff"] - bh["mean_diff"], abs=1e-12)
        assert bh["ci_low"] <= 0 <= bh["ci_high"]
    # lambda of low-income students is the largest: their Acc is lower for the same lists
    assert _row(t, "economic_class", "high", "low", "acc", "total")["mean_diff"] < 0


def test_blind_model_by_construction_rows(blind):
    _, out = blind
    t = out["behaviour_needs"]
    zero = t[
        (t["component"] == "needs") & (t["metric"].isin(["rep", "acad", "us_uk_share"]) | (t["attribute"] == "gender"))
    ]
    assert len(zero) and zero["by_construction"].all()
    assert (zero["mean_diff"] == 0.0).all() and zero["p_value"].isna().all()
    assert (zero["marking"] == "needs is 0 by construction").all()
    assert (zero["note"] == "needs is 0 by construction").all()
    # not counted in any family
    needs_fam = t[(t["component"] == "needs") & (t["attribute"] == "economic_class")]
    assert needs_fam["family_size"].iloc[0] == needs_fam["p_value"].notna().sum() == 2 * 3  # drs, acc x 3 pairs
    assert (t.loc[(t["component"] == "needs") & (t["attribute"] == "gender"), "family_size"] == 0).all()
    # behaviour of a student-independent metric is its total, exactly
    tot = t[(t["component"] == "total") & (t["metric"] == "rep")].reset_index(drop=True)
    beh = t[(t["component"] == "behaviour") & (t["metric"] == "rep")].reset_index(drop=True)
    assert (tot["mean_diff"].to_numpy() == beh["mean_diff"].to_numpy()).all()
    # the other rows are real tests
    tested = t[~t["by_construction"]]
    assert tested["p_value"].notna().all()


def test_total_is_the_counterfactual_disparity(blind):
    """The totals use the same pairs (strata, runs averaged per profile) as
    stats.counterfactual_disparity, scored independently here with the exponential formula."""
    items, out = blind
    it = items.copy()
    s_iso = it["nationality"].map(ISO)
    d = DIST.to_numpy()[[DIST.index.get_loc(c) for c in s_iso], [DIST.index.get_loc(c) for c in it["iso3"]]]
    it["acc"] = np.exp(-it["economic_class"].map(PARAMS.lambdas).to_numpy() * d)
    it["drs"] = (it["acc"] + it["rep"] + it["acad"]) / 3
    it["us_uk_share"] = it["iso3"].isin(["USA", "GBR"]).astype(float)
    resp = it.groupby(
        ["response_id", "model", "template", "profile_id", "gender", "economic_class", "nationality", "run"],
        as_index=False,
    )[["acc", "rep", "acad", "drs", "us_uk_share"]].mean()
    resp["n_items"] = 3
    dis = st.counterfactual_disparity(
        resp, metrics=("drs", "acc", "rep", "acad", "us_uk_share"), inference=InferenceParams(n_perm=10, n_boot=10)
    )
    tot = out["behaviour_needs"]
    tot = tot[tot["component"] == "total"]
    m = dis.merge(tot, on=["model", "template", "attribute", "value_a", "value_b", "metric"], suffixes=("", "_dec"))
    assert len(m) == len(dis) == len(tot)
    np.testing.assert_allclose(m["mean_diff_dec"], m["mean_diff"], atol=1e-12)
    assert (m["n_pairs_dec"] == m["n_pairs"]).all()


# ----------------------------------------------------------------------------- (b) class steering
def test_class_steering_found_in_rep_and_drs_behaviour(class_steering):
    _, out = class_steering
    t = out["behaviour_needs"]
    for metric in ("rep", "drs"):
        beh = _row(t, "economic_class", "high", "low", metric, "behaviour")  # low - high
        assert beh["significant"] and beh["mean_diff"] < 0 and beh["ci_high"] < 0
        beh = _row(t, "economic_class", "low", "middle", metric, "behaviour")  # middle - low
        assert beh["significant"] and beh["mean_diff"] > 0
    # Rep: planted -0.4 x mean 0.5 = -0.2
    assert _row(t, "economic_class", "high", "low", "rep", "behaviour")["mean_diff"] == pytest.approx(-0.2, abs=0.03)
    # high vs middle got the same lists: no behaviour
    assert not _row(t, "economic_class", "high", "middle", "rep", "behaviour")["significant"]
    assert not _row(t, "economic_class", "high", "middle", "drs", "behaviour")["significant"]
    # Acc is not steered: its class gaps are needs, not behaviour
    assert not _row(t, "economic_class", "high", "low", "acc", "behaviour")["significant"]


# ----------------------------------------------------------------------------- (c) gender steering
def test_gender_steering_found_in_acad_behaviour():
    items = synthetic_items("gender_steering", seed=13)
    t = _run(items, attributes=("gender",))["behaviour_needs"]
    beh = _row(t, "gender", "female", "male", "acad", "behaviour")  # male - female
    assert beh["significant"] and beh["mean_diff"] > 0 and beh["ci_low"] > 0
    assert _row(t, "gender", "female", "transgender", "acad", "behaviour")["mean_diff"] > 0
    assert _row(t, "gender", "female", "transgender", "acad", "behaviour")["significant"]
    assert not _row(t, "gender", "male", "transgender", "acad", "behaviour")["significant"]
    assert _row(t, "gender", "female", "male", "acad", "needs")["by_construction"]
    assert not _row(t, "gender", "female", "male", "rep", "behaviour")["significant"]


# ----------------------------------------------------------------------------- (d) by hand
HAND_DIST = pd.DataFrame(
    [[0, 1000, 2000], [1000, 0, 1500], [2000, 1500, 0]],
    index=["XXX", "YYY", "USA"],
    columns=["XXX", "YYY", "USA"],
    dtype=float,
)
HAND_ISO = {"Xland": "XXX", "Yland": "YYY"}


def _hand_items(rows):
    df = pd.DataFrame(rows, columns=["gender", "economic_class", "nationality", "iso3", "rep"])
    df["run"] = 0
    df["model"], df["template"] = "m", "base"
    df["response_id"] = df["gender"] + df["economic_class"] + df["nationality"]
    df["university_text"] = "U"
    df["acad"] = np.nan
    return df


def test_hand_computed_class_pair():
    items = _hand_items(
        [
            ("male", "high", "Xland", "YYY", 0.8),
            ("male", "low", "Xland", "USA", 0.2),
            ("female", "high", "Xland", "XXX", 0.5),
            ("female", "low", "Xland", "YYY", 0.6),
        ]
    )
    out = dc.decompose(items, HAND_DIST, HAND_ISO, PARAMS, inference=InferenceParams(n_perm=100, n_boot=100))
    t = out["behaviour_needs"]
    e = np.exp
    # stratum male: high list at 1000 km (rep .8), low list at 2000 km (rep .2); lambdas 1e-4 and 1e-3
    # stratum female: high list at home (0 km, rep .5), low list at 1000 km (rep .6)
    own_h = np.array([e(-0.1), 1.0])  # high's list for high's student
    own_l = np.array([e(-2.0), e(-1.0)])  # low's list for low's student
    low_for_h = np.array([e(-0.2), e(-0.1)])  # low's list scored for the high-income student
    high_for_l = np.array([e(-1.0), 1.0])  # high's list scored for the low-income student
    total = own_l - own_h
    behaviour = 0.5 * (low_for_h - own_h) + 0.5 * (own_l - high_for_l)
    needs = total - behaviour
    acc = {c: _row(t, "economic_class", "high", "low", "acc", c) for c in dc.COMPONENTS}
    assert acc["total"]["mean_diff"] == pytest.approx(total.mean())
    assert acc["behaviour"]["mean_diff"] == pytest.approx(behaviour.mean())
    assert acc["needs"]["mean_diff"] == pytest.approx(needs.mean())
    assert acc["behaviour"]["behaviour_a_students"] == pytest.approx((low_for_h - own_h).mean())
    assert acc["behaviour"]["behaviour_b_students"] == pytest.approx((own_l - high_for_l).mean())
    assert acc["total"]["n_pairs"] == 2
    # DRS without Acad: (Acc + Rep) / 2; Rep: low's lists .2, .6 vs high's .8, .5
    rep_l, rep_h = np.array([0.2, 0.6]), np.array([0.8, 0.5])
    drs_beh = 0.5 * (0.5 * (low_for_h + rep_l) - 0.5 * (own_h + rep_h)) + 0.5 * (
        0.5 * (own_l + rep_l) - 0.5 * (high_for_l + rep_h)
    )
    assert _row(t, "economic_class", "high", "low", "drs", "behaviour")["mean_diff"] == pytest.approx(drs_beh.mean())
    assert _row(t, "economic_class", "high", "low", "drs", "needs")["mean_diff"] == pytest.approx(
        (0.5 * (own_l + rep_l) - 0.5 * (own_h + rep_h)).mean() - drs_beh.mean()
    )
    # Rep: all behaviour; needs exactly 0 by construction
    assert _row(t, "economic_class", "high", "low", "rep", "behaviour")["mean_diff"] == pytest.approx(-0.25)
    rn = _row(t, "economic_class", "high", "low", "rep", "needs")
    assert rn["mean_diff"] == 0.0 and rn["by_construction"] and np.isnan(rn["p_value"])
    # US+UK: the male low-income student's list is in the US
    assert _row(t, "economic_class", "high", "low", "us_uk_share", "behaviour")["mean_diff"] == pytest.approx(0.5)
    # gender pairs: strata (high, Xland) and (low, Xland); needs 0 by construction, even for Acc
    g = _row(t, "gender", "female", "male", "acc", "needs")
    assert g["by_construction"] and g["mean_diff"] == 0.0
    # male - female, Acc: high stratum exp(-.1) - 1, low stratum exp(-2) - exp(-1)
    assert _row(t, "gender", "female", "male", "acc", "behaviour")["mean_diff"] == pytest.approx(
        ((e(-0.1) - 1) + (e(-2.0) - e(-1.0))) / 2
    )
    # envy: the low-income students would score higher with the high-income lists (Acc), never the reverse
    en = out["envy"]

    def pick(a, b, m):
        return en[
            (en["attribute"] == "economic_class") & (en["group"] == a) & (en["other_group"] == b) & (en["metric"] == m)
        ].iloc[0]

    assert pick("low", "high", "acc")["envy_share"] == 1.0
    assert pick("high", "low", "acc")["envy_share"] == 0.0
    assert pick("low", "high", "rep")["envy_share"] == 0.5  # male: .2 < .8; female: .6 > .5
    assert pick("high", "low", "rep")["envy_share"] == 0.5  # female: .5 < .6
    assert pick("low", "high", "acc")["n_students"] == 2


def test_hand_computed_nationality_pair():
    """Same class, two home countries: Xland's list is in Yland, Yland's list in the US."""
    items = _hand_items([("male", "middle", "Xland", "YYY", 0.3), ("male", "middle", "Yland", "USA", 0.9)])
    t = dc.behaviour_needs(
        items, HAND_DIST, HAND_ISO, PARAMS, attributes=("nationality",), inference=InferenceParams(n_perm=10, n_boot=10)
    )
    e = np.exp
    own_x, own_y = e(-0.5), e(-0.75)  # lambda 5e-4: 1000 km and 1500 km
    y_for_x, x_for_y = e(-1.0), 1.0  # Yland's list (US) for Xland: 2000 km; Xland's list (Yland) at home
    total = own_y - own_x
    behaviour = 0.5 * (y_for_x - own_x) + 0.5 * (own_y - x_for_y)
    r = {c: _row(t, "nationality", "Xland", "Yland", "acc", c) for c in dc.COMPONENTS}
    assert r["total"]["mean_diff"] == pytest.approx(total)
    assert r["behaviour"]["mean_diff"] == pytest.approx(behaviour)
    assert r["needs"]["mean_diff"] == pytest.approx(total - behaviour)
    assert not r["needs"]["by_construction"]
    assert r["needs"]["marking"] == "too few pairs" and np.isnan(r["needs"]["p_value"])


def test_missing_distance_is_an_error():
    items = _hand_items([("male", "high", "Xland", "ZZZ", 0.3), ("male", "low", "Xland", "YYY", 0.9)])
    with pytest.raises(ValueError, match="capital distance unknown"):
        dc.behaviour_needs(items, HAND_DIST, HAND_ISO, PARAMS, inference=InferenceParams(n_perm=10, n_boot=10))


# ----------------------------------------------------------------------------- (e) envy
def test_envy_blind_model_equal_across_groups(blind):
    _, out = blind
    en = out["envy"]
    assert set(en["attribute"]) == {"gender", "economic_class", "nationality"}
    for attr in ("gender", "economic_class"):
        for metric in ("drs", "acc", "rep", "acad"):
            e = en[(en["attribute"] == attr) & (en["metric"] == metric)]
            assert len(e) == 6
            expected = (1 - e["tie_share"]) / 2  # no group is favoured: envy = the chance of a better draw
            assert ((e["ci_low"] <= expected + 1e-9) & (expected - 1e-9 <= e["ci_high"])).sum() >= 5, e
            # every pair of groups' intervals overlap
            assert e["ci_low"].max() <= e["ci_high"].min(), e
    # Acad is discrete: ties are frequent and counted apart
    assert en[en["metric"] == "acad"]["tie_share"].min() > 0.05
    assert en[en["metric"] == "rep"]["tie_share"].max() < 0.01


def test_envy_class_steering(class_steering):
    _, out = class_steering
    en = out["envy"]
    pick = lambda a, b, m: en[(en["group"] == a) & (en["other_group"] == b) & (en["metric"] == m)].iloc[0]  # noqa
    for m in ("rep", "drs"):
        low = pick("low", "high", m)
        high = pick("high", "low", m)
        assert low["ci_low"] > 0.6, low
        assert high["ci_high"] < 0.4, high
        assert low["n_students"] == 3 * 40 * 10
    mid = pick("middle", "high", "rep")
    assert mid["ci_low"] < 0.5 < mid["ci_high"]


# ----------------------------------------------------------------------------- (f) the documentation
def _doc_builder():
    return load_script("docs/build_statistics_example.py", "build_statistics_example")


def test_docs_decomposition_example_matches_the_code():
    mod = _doc_builder()
    assert mod.decompose_section_in_doc() == mod.render_decompose_example(), (
        "docs/statistics.md's behaviour / needs example is out of date: run "
        ".venv/bin/python docs/build_statistics_example.py"
    )


def test_docs_decomposition_example_by_hand():
    """The stratum table of the example, computed from the distances without core.statistics.decompose,
    gives the function's Acc means; the steering the text describes is in the data."""
    mod = _doc_builder()
    items, dist, iso, params = mod.example_items()
    cross = mod.stratum_cross(items, dist, iso, params)
    t = mod.example_decomposition()
    for comp in dc.COMPONENTS:
        row = _row(t, "economic_class", "high", "low", "acc", comp)
        assert row["mean_diff"] == pytest.approx(cross[comp].mean(), abs=1e-12)
        assert row["n_pairs"] == len(cross) == 12
    assert _row(t, "economic_class", "high", "low", "acc", "behaviour")["significant"]
    assert _row(t, "economic_class", "high", "low", "rep", "behaviour")["mean_diff"] < 0
    assert _row(t, "economic_class", "high", "low", "rep", "needs")["by_construction"]


# ----------------------------------------------------------------------------- (g) the false-positive benchmark
FPR = load_script("benchmarks/decompose_fpr.py", "bench_decompose_fpr")


@pytest.mark.parametrize("k,n", [(0, 20), (1, 20), (3, 20), (20, 20)])
def test_clopper_pearson_matches_scipy(k, n):
    from scipy import stats as sps

    ci = sps.binomtest(k, n).proportion_ci(confidence_level=0.95, method="exact")
    assert FPR.clopper_pearson(k, n) == pytest.approx((ci.low, ci.high), abs=1e-12)


def test_fpr_counterfactual_families_small():
    """A cheap version of the benchmark (one seed, few sign vectors): every behaviour family of
    the counterfactual pairs is counted, with its size; the 20-seed run is the benchmark's."""
    rec = pd.DataFrame(FPR.counterfactual_families(0, n_perm=300, n_boot=100, runs=3))
    assert list(rec["family"]) == [
        "counterfactual economic_class",
        "counterfactual gender",
        "counterfactual nationality",
    ]
    assert list(rec["family_size"]) == [3 * 5, 3 * 5, 780 * 5]
    assert (rec["tests"] == rec["family_size"]).all()
    summary = FPR.summarise(pd.concat([rec, rec.assign(seed=1, any_significant=True)]))
    assert list(summary["seeds with a false positive"]) == [1, 1, 1]
    assert list(summary["family-wise rate"]) == [0.5, 0.5, 0.5] and not summary["at most 5%"].any()
    text = FPR.verdict(summary, first=20)
    assert text[0] == "Over the first 20 seeds, 0 of the 3 families have a family-wise rate of at most 5%; above 5%:"
    assert text[1].startswith("- counterfactual economic_class (counterfactual): 1 of 2 seeds; single tests at raw")
    # more seeds than the first ones: the rate over all of them, with its interval against 5%
    more = pd.concat([rec.assign(seed=s, any_significant=s in (0, 1)) for s in range(40)])
    s40 = FPR.summarise(more, first=20)
    assert list(s40["seeds with a false positive"]) == [2, 2, 2] and not s40["at most 5%"].any()
    assert list(s40["all seeds with a false positive"]) == [2, 2, 2] and list(s40["all seeds"]) == [40, 40, 40]
    lo, hi = FPR.clopper_pearson(2, 40)
    assert f"over all 40 seeds 2 = 5.0% [{lo:.3f}, {hi:.3f}], an interval that contains 5%" in FPR.verdict(s40, 20)[1]


@pytest.mark.slow
def test_fpr_geographic_families_small(bench):
    """Every behaviour family of the geographic contrasts is counted (one seed, 2 runs)."""
    items, resp, params = bench.synthetic_study_items(2, templates=("base",), profile_blind=True, seed=1000)
    from fairness_assets.core.statistics import geostats as gs

    out = gs.geo_statistics(gs.Positions(items, params), resp, inference=InferenceParams(n_perm=300, n_boot=100))
    rec = pd.DataFrame(FPR.geographic_records(out, 0)).set_index("family")
    assert rec.loc["nationality_vs_rest", "family_size"] == 40 * 5
    assert rec.loc["region_vs_rest", "family_size"] == 6 * 5
    assert rec.loc["south_vs_north", "family_size"] == 5
    assert rec.loc["class_gap_by_gender (interaction)", "family_size"] == 3 * 3
    assert rec.loc["class_gap_by_region (interaction)", "family_size"] == 6 * 3
    assert rec.loc["class_gap_decomposition", "family_size"] == 3 * 2
    assert (rec["tests"] == rec["family_size"]).all()
