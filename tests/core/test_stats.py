"""Statistics (docs/statistics.md) against hand-computed values and known cases: a planted
disparity is found, a null case is not, p-values and corrections match hand calculations."""

from __future__ import annotations

import itertools
import time
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from fairness_assets.core.statistics import stats as S
from fairness_assets.core.statistics.inference import InferenceParams
from tests.helpers.scripts import load_script

ROOT = Path(__file__).resolve().parents[2]
GENDERS = ("male", "female", "transgender")
CLASSES = ("high", "middle", "low")


# ----------------------------------------------------------------------------- data builders
def response(
    model="m",
    template="base",
    gender="female",
    klass="low",
    nat="Nigeria",
    run=0,
    n_items=3,
    drs=0.5,
    acc=None,
    rep=None,
    acad=np.nan,
):
    pid = f"{template}:{gender}:{klass}:{nat}"
    return {
        "response_id": f"{model}|{pid}#{run}",
        "model": model,
        "template": template,
        "profile_id": pid,
        "gender": gender,
        "economic_class": klass,
        "nationality": nat,
        "run": run,
        "parse_status": "ok",
        "n_items": n_items,
        "acc": drs if acc is None else acc,
        "rep": drs if rep is None else rep,
        "acad": acad,
        "drs": drs,
        "n_matched": n_items,
    }


def synth(effect=0.0, n_nat=14, runs=10, seed=0, noise=0.02, model="m", template="base"):
    """Full grid 3 genders x 3 classes x n_nat nationalities (3 x n_nat strata per gender pair).

    Women's DRS and Acc are lower by ``effect``; Rep has no effect. Each nationality has its own
    level (a large between-stratum spread) and each response its own noise (sd ``noise``)."""
    rng = np.random.default_rng(seed)
    nats = [f"N{i:02d}" for i in range(n_nat)]
    level = dict(zip(nats, rng.normal(0.5, 0.1, n_nat), strict=False))
    g, c, n, r = (
        np.array(x, dtype=object).ravel() for x in np.meshgrid(GENDERS, CLASSES, nats, np.arange(runs), indexing="ij")
    )
    lv = np.array([level[x] for x in n], dtype=float)
    shift = np.where(g == "female", -effect, 0.0)
    drs = lv + shift + rng.normal(0, noise, len(g))
    acc = lv + shift + rng.normal(0, noise, len(g))
    rep = lv / 2 + rng.normal(0, noise, len(g))
    pid = [f"full:{a}:{b}:{x}" for a, b, x in zip(g, c, n, strict=False)]
    return pd.DataFrame(
        {
            "response_id": [f"{p}#{k}" for p, k in zip(pid, r, strict=False)],
            "model": model,
            "template": template,
            "profile_id": pid,
            "gender": g,
            "economic_class": c,
            "nationality": n,
            "run": r.astype(int),
            "parse_status": "ok",
            "n_items": 3,
            "acc": acc,
            "rep": rep,
            "acad": np.nan,
            "drs": drs,
            "n_matched": 3,
        }
    )


def paired(diffs, base=0.5):
    """Gender pairs (female, male) in len(diffs) strata (one nationality each), one run each,
    with male - female = diffs[i]."""
    rows = []
    for i, d in enumerate(diffs):
        rows.append(response(gender="female", klass="low", nat=f"N{i:02d}", drs=base))
        rows.append(response(gender="male", klass="low", nat=f"N{i:02d}", drs=base + d))
    return pd.DataFrame(rows)


def row(df, **kw):
    sel = np.ones(len(df), dtype=bool)
    for k, v in kw.items():
        sel &= (df[k] == v).to_numpy()
    out = df[sel]
    assert len(out) == 1, f"{kw}: {len(out)} rows"
    return out.iloc[0]


# ----------------------------------------------------------------------------- p-value adjustment
def test_holm_and_bh_against_hand_values():
    p = [0.01, 0.04, 0.03, 0.005]
    # Holm: sorted 0.005, 0.01, 0.03, 0.04 x 4, 3, 2, 1 = 0.02, 0.03, 0.06, 0.04 -> running max 0.02, 0.03, 0.06, 0.06
    np.testing.assert_allclose(S.adjust_pvalues(p, "holm"), [0.03, 0.06, 0.06, 0.02])
    # BH: x m/k = 0.02, 0.02, 0.04, 0.04 -> running min from the top: unchanged
    np.testing.assert_allclose(S.adjust_pvalues(p, "bh"), [0.02, 0.04, 0.04, 0.02])
    # BH's step-up: a later smaller value pulls earlier ones down
    np.testing.assert_allclose(S.adjust_pvalues([0.02, 0.03, 0.035], "bh"), [0.035, 0.035, 0.035])
    np.testing.assert_allclose(S.adjust_pvalues([0.5, 0.6], "holm"), [1.0, 1.0])  # capped at 1


def test_adjustment_leaves_nan_out_of_m():
    p = [0.02, np.nan, 0.03, np.nan]
    out = S.adjust_pvalues(p, "holm")  # m = 2, not 4: 0.04, max(0.04, 0.03)
    assert np.isnan(out[1]) and np.isnan(out[3])
    np.testing.assert_allclose(out[[0, 2]], [0.04, 0.04])
    np.testing.assert_allclose(S.adjust_pvalues(p, "bh")[[0, 2]], [0.03, 0.03])
    assert np.isnan(S.adjust_pvalues([np.nan, np.nan])).all()
    assert S.adjust_pvalues([]).shape == (0,)
    with pytest.raises(ValueError):
        S.adjust_pvalues([0.1], "bonferroni")
    with pytest.raises(ValueError):
        S.adjust_pvalues([1.2])


def test_bh_matches_scipy_on_random_p_values():
    scipy_stats = pytest.importorskip("scipy.stats")
    if not hasattr(scipy_stats, "false_discovery_control"):
        pytest.skip("scipy < 1.11")
    p = np.random.default_rng(3).uniform(0, 0.2, 50)
    np.testing.assert_allclose(S.adjust_pvalues(p, "bh"), scipy_stats.false_discovery_control(p, method="bh"))


def test_holm_matches_a_direct_step_down():
    p = np.random.default_rng(4).uniform(0, 0.1, 30)
    adj = S.adjust_pvalues(p, "holm")
    order = np.argsort(p)
    for alpha in (0.01, 0.05, 0.1):
        # Holm rejects the k smallest where k is the first index with p_(k) > alpha / (m - k + 1)
        fail = [p[order[i]] > alpha / (len(p) - i) for i in range(len(p))]
        k = fail.index(True) if True in fail else len(p)
        assert set(np.flatnonzero(adj <= alpha)) == set(order[:k])


# ----------------------------------------------------------------------------- permutation test
def test_exact_sign_flip_all_positive_is_two_over_two_to_the_n():
    d = S.counterfactual_disparity(paired([0.01, 0.02, 0.03, 0.04, 0.05]), attributes=("gender",), metrics=("drs",))
    r = row(d, attribute="gender")
    assert (r.value_a, r.value_b) == ("female", "male")
    assert r.p_method == "exact" and r.n_perm == 32
    assert r.p_value == pytest.approx(2 / 32)
    assert r.p_min_attainable == pytest.approx(2 / 32)
    assert r.mean_diff == pytest.approx(0.03) and r.sd_diff == pytest.approx(np.std([1, 2, 3, 4, 5], ddof=1) / 100)


def test_exact_sign_flip_mixed_signs_by_hand():
    # d = (1, 1, 1, 1, -1): |sum| = 3; the signed sums are 5, 3, 1, -1, -3, -5 for 5..0 plus signs;
    # |sum| >= 3 for 0, 1, 4 or 5 plus signs: 1 + 5 + 5 + 1 = 12 of 32
    d = S.counterfactual_disparity(paired([0.1, 0.1, 0.1, 0.1, -0.1]), attributes=("gender",), metrics=("drs",))
    assert row(d, attribute="gender").p_value == pytest.approx(12 / 32)
    # all differences zero: every sign vector ties, p = 1
    z = S.counterfactual_disparity(paired([0.0] * 4), attributes=("gender",), metrics=("drs",))
    assert row(z, attribute="gender").p_value == pytest.approx(1.0)


def test_monte_carlo_sign_flip_uses_the_plus_one_rule():
    diffs = np.linspace(0.01, 0.05, 20)  # all positive: no random sign vector but the identity is as extreme
    d = S.counterfactual_disparity(
        paired(diffs), attributes=("gender",), metrics=("drs",), inference=InferenceParams(n_perm=999)
    )
    r = row(d, attribute="gender")
    assert r.p_method == "monte_carlo" and r.n_perm == 999
    assert r.p_value >= 1 / 1000 and r.p_value <= 3 / 1000
    assert r.p_min_attainable == pytest.approx(1 / 1000)
    # the exact/Monte Carlo switch: 2^n <= n_perm
    e = S.counterfactual_disparity(
        paired(diffs[:10]), attributes=("gender",), metrics=("drs",), inference=InferenceParams(n_perm=1024)
    )
    assert row(e, attribute="gender").p_method == "exact"
    m = S.counterfactual_disparity(
        paired(diffs[:10]), attributes=("gender",), metrics=("drs",), inference=InferenceParams(n_perm=1023)
    )
    assert row(m, attribute="gender").p_method == "monte_carlo"


def test_monte_carlo_p_agrees_with_exact_enumeration():
    diffs = np.random.default_rng(8).normal(0.01, 0.03, 12)
    exact = row(
        S.counterfactual_disparity(
            paired(diffs), attributes=("gender",), metrics=("drs",), inference=InferenceParams(n_perm=4096)
        ),
        attribute="gender",
    )
    mc = row(
        S.counterfactual_disparity(
            paired(diffs), attributes=("gender",), metrics=("drs",), inference=InferenceParams(n_perm=4095)
        ),
        attribute="gender",
    )
    assert exact.p_method == "exact" and mc.p_method == "monte_carlo"
    assert mc.p_value == pytest.approx(exact.p_value, abs=0.02)


# ----------------------------------------------------------------------------- planted effect and null
def test_planted_disparity_is_detected_where_it_was_planted():
    # Under no effect, about 7% of seeds give some false positive among this table's null rows
    # (two families at alpha 0.05; measured over 200 seeds); the rate is tested below. This seed gives none.
    d = S.counterfactual_disparity(synth(effect=0.05, seed=3))
    for metric in ("drs", "acc"):
        for other in ("male", "transgender"):
            r = row(d, attribute="gender", value_a="female", value_b=other, metric=metric)
            # sorted values: female < male < transgender, so d = other - female = +0.05
            assert r.n_pairs == 42 and r.n_strata_excluded == 0
            assert r.significant and r.marking == "significant"
            assert r.ci_low > 0 and r.ci_low <= 0.05 <= r.ci_high
            assert r.mean_diff == pytest.approx(0.05, abs=0.01)
        r = row(d, attribute="gender", value_a="male", value_b="transgender", metric=metric)
        assert not r.significant and r.marking == "not significant"
    # Rep had no effect, nor has class
    assert not d[(d.attribute == "gender") & (d.metric == "rep")]["significant"].any()
    assert not d[d.attribute == "economic_class"]["significant"].any()
    assert (d[d.attribute == "economic_class"]["n_pairs"] == 42).all()


def test_planted_disparity_in_the_other_direction_and_with_bh():
    df = synth(effect=-0.03, seed=2)  # women higher by 0.03: male - female = -0.03
    d = S.counterfactual_disparity(df, attributes=("gender",), inference=InferenceParams(correction="bh"))
    r = row(d, value_a="female", value_b="male", metric="drs")
    assert r.significant and r.ci_high < 0 and r.ci_low <= -0.03 <= r.ci_high
    assert r.correction == "bh"


def test_null_case_is_not_significant_and_false_positives_are_rare():
    single = S.counterfactual_disparity(synth(effect=0.0, seed=0))
    assert (single["marking"] == "not significant").all()
    hits, covered, raw_p = 0, 0, []
    for seed in range(20):
        d = S.counterfactual_disparity(
            synth(effect=0.0, seed=100 + seed),
            attributes=("gender", "economic_class"),
            inference=InferenceParams(n_perm=2000, n_boot=1000),
        )
        hits += bool(d["significant"].any())
        r = row(d, attribute="gender", value_a="female", value_b="male", metric="drs")
        covered += r.ci_low <= 0 <= r.ci_high
        raw_p.extend(d.loc[d.metric == "drs", "p_value"])
    assert hits <= 2  # two families of 9 tests each, Holm: at most 10% expected
    assert covered >= 17  # the 95% interval covers the true 0
    assert 0.0 < np.mean(np.array(raw_p) < 0.05) < 0.15  # raw p-values are not wildly miscalibrated
    assert np.mean(np.array(raw_p) < 0.5) == pytest.approx(0.5, abs=0.2)


# ----------------------------------------------------------------------------- run variability
def test_sd_across_runs_and_profiles_by_hand():
    vals = {
        ("female", 0): 0.30,
        ("female", 1): 0.40,
        ("female", 2): 0.20,
        ("male", 0): 0.50,
        ("male", 1): 0.70,
        ("male", 2): 0.60,
    }
    df = pd.DataFrame([response(gender=g, run=r, drs=v) for (g, r), v in vals.items()])
    v = S.run_variability(df, metrics=("drs",), by=(None, "gender"))
    run_means = [0.40, 0.55, 0.40]
    r = row(v, group_by="overall", group="all", metric="drs", unit="run")
    assert r.n_units == 3 and r.n_responses == 6 and r.n_scored == 6
    assert r["mean"] == pytest.approx(0.45)
    assert r.sd == pytest.approx(np.std(run_means, ddof=1))
    assert r.ci_low >= 0.40 - 1e-12 and r.ci_high <= 0.55 + 1e-12 and r.ci_low < r.ci_high
    p = row(v, group_by="overall", group="all", metric="drs", unit="profile")
    assert p.n_units == 2 and p.sd == pytest.approx(np.std([0.30, 0.60], ddof=1))
    f = row(v, group_by="gender", group="female", metric="drs", unit="run")
    assert f.sd == pytest.approx(np.std([0.30, 0.40, 0.20], ddof=1)) and f["mean"] == pytest.approx(0.30)
    # one profile in the group: no spread across profiles, said in the note
    fp = row(v, group_by="gender", group="female", metric="drs", unit="profile")
    assert fp.n_units == 1 and np.isnan(fp.sd) and np.isnan(fp.ci_low) and "one profile" in fp.note


def test_bootstrap_interval_of_constant_data_is_the_constant():
    df = synth(seed=5, n_nat=3, runs=4)
    df["drs"] = 0.42
    v = S.run_variability(df, metrics=("drs",))
    assert (v["note"] == "").all()
    np.testing.assert_allclose(v[["mean", "ci_low", "ci_high"]].to_numpy(dtype=float), 0.42, atol=1e-12)
    np.testing.assert_allclose(v["sd"].to_numpy(dtype=float), 0.0, atol=1e-12)
    pairs = paired([0.1] * 6)
    r = row(S.counterfactual_disparity(pairs, attributes=("gender",), metrics=("drs",)), attribute="gender")
    assert r.ci_low == pytest.approx(0.1) and r.ci_high == pytest.approx(0.1) and r.sd_diff == pytest.approx(0.0)


def test_bootstrap_interval_resamples_runs():
    """With per-run means m_r, the bootstrap mean of R drawn runs lies between min and max of
    m_r, and its spread is about sd / sqrt(R)."""
    df = synth(seed=6, n_nat=5, runs=10, noise=0.05)
    v = S.run_variability(df, metrics=("drs",), by=(None,), inference=InferenceParams(n_boot=4000))
    r = row(v, unit="run")
    run_means = df.groupby("run")["drs"].mean()
    assert run_means.min() <= r.ci_low < r["mean"] < r.ci_high <= run_means.max()
    assert (r.ci_high - r.ci_low) == pytest.approx(
        2 * 1.96 * run_means.std(ddof=1) / np.sqrt(10) * np.sqrt(0.9), rel=0.25
    )


def test_mean_is_over_scored_responses_and_failures_keep_their_group():
    rows = [
        response(gender="female", run=0, drs=0.2),
        response(gender="female", run=1, drs=0.4),
        response(gender="female", run=1, nat="Kenya", drs=0.6),
        response(gender="female", run=0, nat="Kenya", n_items=0, drs=0.0),  # failed: a stale 0 must not count
        response(gender="male", run=0, n_items=0, drs=np.nan),
        response(gender="male", run=1, n_items=0, drs=np.nan),
    ]
    v = S.run_variability(pd.DataFrame(rows), metrics=("drs",), by=(None, "gender"))
    r = row(v, group_by="overall", unit="run")
    assert r.n_responses == 6 and r.n_scored == 3
    assert r["mean"] == pytest.approx(0.4)  # (0.2 + 0.4 + 0.6) / 3, not the mean of run means (0.2 + 0.5) / 2
    assert r.sd == pytest.approx(np.std([0.2, 0.5], ddof=1))
    for unit in ("run", "profile"):
        m = row(v, group_by="gender", group="male", unit=unit)
        assert m.n_responses == 2 and m.n_scored == 0 and m.n_units == 0
        assert np.isnan(m["mean"]) and m.note == "no scored responses"


def test_metric_without_values_is_skipped_and_academic_keeps_acad():
    base = synth(seed=7, n_nat=3, runs=3)
    academic = synth(seed=8, n_nat=3, runs=3, template="academic").assign(acad=0.8)
    df = pd.concat([base, academic], ignore_index=True)
    v = S.run_variability(df)
    assert set(v.loc[v.template == "base", "metric"]) == {"drs", "acc", "rep"}
    assert set(v.loc[v.template == "academic", "metric"]) == {"drs", "acc", "rep", "acad"}
    d = S.counterfactual_disparity(df)
    assert "acad" not in set(d.loc[d.template == "base", "metric"])
    acad = row(d, template="academic", attribute="gender", value_a="female", value_b="male", metric="acad")
    assert acad.mean_diff == pytest.approx(0.0) and acad.p_value == pytest.approx(1.0)


# ----------------------------------------------------------------------------- exclusions, reduced context
def test_strata_without_scored_responses_are_excluded_and_counted():
    df = synth(seed=9, n_nat=4, runs=2)
    fail = (df.gender == "male") & (df.nationality == "N00")
    df.loc[fail, "n_items"] = 0
    df.loc[fail, ["drs", "acc", "rep"]] = np.nan
    d = S.counterfactual_disparity(df, attributes=("gender",), metrics=("drs",))
    r = row(d, value_a="female", value_b="male")
    assert r.n_strata == 12 and r.n_pairs == 9 and r.n_strata_excluded == 3
    t = row(d, value_a="female", value_b="transgender")
    assert t.n_pairs == 12 and t.n_strata_excluded == 0
    # one failed run of a profile does not exclude its stratum: the other run carries the mean
    df2 = synth(seed=9, n_nat=4, runs=2)
    one = (df2.gender == "male") & (df2.nationality == "N00") & (df2.run == 0)
    df2.loc[one, "n_items"] = 0
    r2 = row(
        S.counterfactual_disparity(df2, attributes=("gender",), metrics=("drs",)), value_a="female", value_b="male"
    )
    assert r2.n_pairs == 12


def test_fewer_than_two_pairs_is_too_few_pairs():
    df = synth(seed=10, n_nat=1, runs=2)
    df = df[df.economic_class == "high"]  # one stratum per gender pair
    d = S.counterfactual_disparity(df, attributes=("gender",), metrics=("drs",))
    assert (d["n_pairs"] == 1).all() and d["p_value"].isna().all() and d["p_adjusted"].isna().all()
    assert (d["marking"] == "too few pairs").all() and not d["significant"].any()
    assert d["mean_diff"].notna().all() and d["ci_low"].isna().all()
    assert (d["family_size"] == 0).all()


def test_reduced_context_template_gives_only_its_attribute():
    rows = [
        response(template="nationality_only", gender=None, klass=None, nat=n, run=r, drs=0.3 + 0.1 * i)
        for i, n in enumerate(["Kenya", "India", "Chile"])
        for r in range(3)
    ]
    df = pd.DataFrame(rows)
    d = S.counterfactual_disparity(df)
    assert set(d["attribute"]) == {"nationality"}
    assert len(d) == 3 * 3  # 3 pairs x drs, acc, rep
    assert (d["marking"] == "too few pairs").all()
    r = row(d, value_a="Chile", value_b="India", metric="drs")  # sorted: Chile < India < Kenya
    assert r.mean_diff == pytest.approx(0.4 - 0.5)
    v = S.run_variability(df)
    assert set(v["group_by"]) == {"overall"}
    v2 = S.run_variability(df, by=(None, "gender", "nationality"))
    assert set(v2["group_by"]) == {"overall", "nationality"}


# ----------------------------------------------------------------------------- families, reproducibility, API
def test_family_scope():
    df = synth(effect=0.05, seed=11, n_nat=5, runs=3)
    d = S.counterfactual_disparity(df)
    sizes = d.groupby("attribute")["family_size"].unique()
    assert list(sizes["gender"]) == [9] and list(sizes["economic_class"]) == [9]
    assert list(sizes["nationality"]) == [10 * 3]  # C(5, 2) pairs x 3 metrics
    wide = S.counterfactual_disparity(df, family=("model", "template"))
    assert (wide["family_size"] == 48).all()
    assert (wide["p_adjusted"] >= d["p_adjusted"] - 1e-12).all()
    np.testing.assert_allclose(wide["p_value"], d["p_value"])
    with pytest.raises(ValueError):
        S.counterfactual_disparity(df, family=("run",))


def test_seeded_reproducible_and_independent_of_other_partitions():
    a = synth(effect=0.02, seed=12, n_nat=14, runs=3)
    d1 = S.counterfactual_disparity(a, attributes=("gender",))
    d2 = S.counterfactual_disparity(a, attributes=("gender",))
    pd.testing.assert_frame_equal(d1, d2)
    both = pd.concat([synth(seed=13, n_nat=14, runs=3, model="another"), a], ignore_index=True)
    d3 = S.counterfactual_disparity(both, attributes=("gender",))
    pd.testing.assert_frame_equal(d3[d3.model == "m"].reset_index(drop=True), d1)
    v1 = S.run_variability(a)
    v3 = S.run_variability(both)
    pd.testing.assert_frame_equal(v3[v3.model == "m"].reset_index(drop=True), v1)
    d4 = S.counterfactual_disparity(a, attributes=("gender",), inference=InferenceParams(seed=1))
    assert not np.allclose(d4["ci_low"], d1["ci_low"])
    np.testing.assert_allclose(d4["mean_diff"], d1["mean_diff"])


def test_output_columns_and_empty_input():
    df = synth(seed=14, n_nat=2, runs=2)
    assert list(S.run_variability(df).columns) == S.VARIABILITY_COLUMNS
    assert list(S.counterfactual_disparity(df).columns) == S.DISPARITY_COLUMNS
    assert list(S.run_variability(df.iloc[:0]).columns) == S.VARIABILITY_COLUMNS
    assert list(S.counterfactual_disparity(df.iloc[:0]).columns) == S.DISPARITY_COLUMNS
    assert S.counterfactual_disparity(df.iloc[:0]).empty
    no_keys = S.counterfactual_disparity(df.drop(columns=["model", "template"]))
    assert "model" not in no_keys.columns and len(no_keys) == len(S.counterfactual_disparity(df))
    with pytest.raises(ValueError):
        S.counterfactual_disparity(df, attributes=("religion",))
    with pytest.raises(ValueError, match="correction must be one of"):
        S.counterfactual_disparity(df, inference=InferenceParams(correction="bonferroni"))
    with pytest.raises(ValueError):
        S.run_variability(df.drop(columns=["n_items"]))
    with pytest.raises(ValueError, match="level must be in"):
        S.run_variability(df, inference=InferenceParams(level=95))


def test_display_marks_significance():
    d = S.counterfactual_disparity(synth(effect=0.05, seed=15), attributes=("gender",), metrics=("drs",))
    shown = S.disparity_display(d)
    r = row(shown, comparison="male - female")
    assert r.marking == "* significant" and r.p_adjusted == "<0.001"
    assert r.difference.startswith("+0.05") and "[" in r.difference
    assert row(shown, comparison="transgender - male").marking == "not significant"
    too_few = S.disparity_display(S.counterfactual_disparity(paired([0.1]), attributes=("gender",), metrics=("drs",)))
    assert too_few.iloc[0].marking == "too few pairs" and too_few.iloc[0].p_adjusted == ""


# ----------------------------------------------------------------------------- speed
def test_fast_enough():
    # 40 profiles (2 genders x 2 classes x 10 nationalities) x 10 runs x 4 metrics x 3 attributes
    nats = [f"N{i}" for i in range(10)]
    rng = np.random.default_rng(16)
    df = pd.DataFrame(
        [
            response(template="academic", gender=g, klass=c, nat=n, run=r, drs=x, acc=x, rep=x, acad=x)
            for g, c, n, r in itertools.product(("female", "male"), ("high", "low"), nats, range(10))
            for x in [float(rng.uniform())]
        ]
    )
    t = time.perf_counter()
    d = S.counterfactual_disparity(df)
    v = S.run_variability(df)
    elapsed = time.perf_counter() - t
    assert len(d) == (1 + 1 + 45) * 4 and set(v["metric"]) == {"drs", "acc", "rep", "acad"}
    assert elapsed < 2.0, f"{elapsed:.2f} s"


def test_study_sized_partition_is_fast():
    df = synth(effect=0.0, n_nat=40, runs=10, seed=17)  # 360 profiles x 10 runs
    t = time.perf_counter()
    d = S.counterfactual_disparity(df)
    S.run_variability(df)
    elapsed = time.perf_counter() - t
    assert len(d) == (3 + 3 + 780) * 3
    assert elapsed < 5.0, f"{elapsed:.2f} s"


# ----------------------------------------------------------------------------- the documentation
def _example_builder():
    mod = load_script("docs/build_statistics_example.py", "build_statistics_example")
    return mod


def test_docs_worked_example_matches_the_code():
    mod = _example_builder()
    fresh = mod.render_example()
    assert mod.section_in_doc() == fresh, (
        "docs/statistics.md is out of date: run .venv/bin/python docs/build_statistics_example.py"
    )


def test_worked_example_numbers_by_hand():
    """The example's gender test is exact over 8 strata, all differences positive: p = 2/256;
    Holm over the partition's two tests doubles the smaller p."""
    mod = _example_builder()
    resp = mod.example_responses()
    assert len(resp) == 48 and (resp["n_items"] == 0).sum() == 1
    d = S.counterfactual_disparity(
        resp, attributes=("gender", "economic_class"), metrics=("drs",), family=("model", "template")
    )
    g = row(d, attribute="gender")
    prof = resp.groupby(["economic_class", "nationality", "gender"])["drs"].mean().unstack("gender")
    diffs = (prof["male"] - prof["female"]).to_numpy()
    assert (diffs > 0).all() and g.p_value == pytest.approx(2 / 256)
    assert g.mean_diff == pytest.approx(diffs.mean()) and g.sd_diff == pytest.approx(diffs.std(ddof=1))
    c = row(d, attribute="economic_class")
    assert g.p_adjusted == pytest.approx(min(1.0, 2 * g.p_value)) and c.p_adjusted == pytest.approx(
        max(c.p_value, g.p_adjusted)
    )
    assert g.marking == "significant" and c.marking == "not significant"
