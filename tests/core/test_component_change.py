"""core/statistics/component_change.py: base vs regional, component by component (issue 20, item 5).

Synthetic study-grid models (benchmarks/statistics.py, as test_geostats_behaviour loads it):
a model whose regional template makes it steer students toward their home country and region
(base: blind to the profile; regional: home picks follow the student's nationality) must show a
behaviour part that moved, upward, in the own-region share; a profile-blind model (both templates)
must show no behaviour part moving beyond chance, while its outcome can move through needs."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from fairness_assets.core.reporting.sentences import change as change_sentences
from fairness_assets.core.statistics import component_change as cc
from fairness_assets.core.statistics import decompose as dc
from fairness_assets.core.statistics import geostats as gs
from fairness_assets.core.statistics.inference import InferenceParams

ROOT = Path(__file__).resolve().parents[2]
N_BOOT, N_PERM = 300, 2000


def _template(bench, template, profile_blind, seed):
    items, resp, params = bench.synthetic_study_items(3, templates=(template,), profile_blind=profile_blind, seed=seed)
    geo = gs.response_geography(items, resp)
    contrasts = gs.geo_contrasts(
        geo, positions=gs.Positions(items, params), inference=InferenceParams(n_boot=N_BOOT, n_perm=N_PERM)
    )
    iso = geo.dropna(subset=["student_iso3"]).groupby("nationality")["student_iso3"].first().to_dict()
    dist = gs.cross._distances_for(items, iso)
    bn = dc.behaviour_needs(items, dist, iso, params, inference=InferenceParams(n_perm=N_PERM, n_boot=N_BOOT))
    return {"behaviour_needs": bn, "geo_contrasts": contrasts}


@pytest.fixture(scope="module")
def bench():
    """benchmarks/statistics.py (its ``synthetic_study_items``: the synthetic study-sized audit of
    the geographic tests, real capitals and regions, scored by core.scoring.metrics)."""
    spec = importlib.util.spec_from_file_location(
        "bench_statistics_component_change", ROOT / "benchmarks" / "statistics.py"
    )
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


@pytest.fixture(scope="module")
def steering(bench):
    """Base: blind to the profile; regional: steers each student toward their own country / region."""
    base = _template(bench, "base", True, 7)
    regional = _template(bench, "regional", False, 8)
    return cc.component_change(base, regional, model="model-a")


@pytest.fixture(scope="module")
def blind(bench):
    """Blind to the profile in both templates (the regional template changes where the lists go,
    for everyone alike)."""
    return cc.component_change(
        _template(bench, "base", True, 7), _template(bench, "regional", True, 8), model="model-b"
    )


def _rows(t, analysis, metric, component):
    return t[(t["analysis"] == analysis) & (t["metric"] == metric) & (t["component"] == component)]


# ----------------------------------------------------------------------------- the test itself
def _table(mean, sd, n, **extra):
    return pd.DataFrame(
        {
            "attribute": "economic_class",
            "value_a": "high",
            "value_b": "low",
            "metric": "acc",
            "component": "behaviour",
            "n_pairs": n,
            "mean_diff": mean,
            "sd_diff": sd,
            "ci_low": mean - 0.01,
            "ci_high": mean + 0.01,
            "p_adjusted": 0.5,
            "significant": False,
            "by_construction": False,
            **extra,
        },
        index=[0],
    )


def test_welch_change_matches_scipy():
    scipy_stats = pytest.importorskip("scipy.stats")
    out = cc.component_change(
        {"behaviour_needs": _table(0.10, 0.30, 12)}, {"behaviour_needs": _table(0.35, 0.20, 9)}, model="m"
    )
    r = out.iloc[0]
    ref = scipy_stats.ttest_ind_from_stats(0.35, 0.20, 9, 0.10, 0.30, 12, equal_var=False)
    assert r["change"] == pytest.approx(0.25)
    assert r["p_change"] == pytest.approx(ref.pvalue, rel=1e-9)
    se = np.sqrt(0.3**2 / 12 + 0.2**2 / 9)
    df = se**4 / ((0.3**2 / 12) ** 2 / 11 + (0.2**2 / 9) ** 2 / 8)
    q = scipy_stats.t.ppf(0.975, df)
    assert r["se_change"] == pytest.approx(se) and r["df_change"] == pytest.approx(df)
    assert r["ci_low_change"] == pytest.approx(0.25 - q * se, rel=1e-9)
    assert r["ci_high_change"] == pytest.approx(0.25 + q * se, rel=1e-9)
    assert r["family_size"] == 1 and r["p_change_adjusted"] == pytest.approx(ref.pvalue, rel=1e-9)
    assert r["rule"] == cc.RULE and r["moved"] == (ref.pvalue <= 0.05)
    assert list(out.columns) == cc.CHANGE_COLUMNS


def test_significant_in_one_template_only_is_not_a_change():
    # base significant (stored flag), regional not, but the two estimates are close: not moved
    base = _table(0.20, 0.30, 40, significant=True, p_adjusted=0.001)
    regional = _table(0.17, 0.30, 40, significant=False, p_adjusted=0.2)
    r = cc.component_change({"behaviour_needs": base}, {"behaviour_needs": regional}).iloc[0]
    assert bool(r["significant_base"]) and not bool(r["significant_regional"])
    assert r["status"] == "not moved" and not r["moved"] and r["p_change"] > 0.5
    # a real change with both significant: moved, direction lower
    r = cc.component_change({"behaviour_needs": base}, {"behaviour_needs": _table(-0.20, 0.30, 40)}).iloc[0]
    assert r["status"] == "moved" and r["direction"] == "lower" and r["intervals_overlap"] is False


def test_statuses_by_construction_missing_and_untestable():
    base = pd.concat(
        [
            _table(0.1, 0.2, 10),
            _table(0.0, 0.0, 10, component="needs", by_construction=True),
            _table(0.1, 0.2, 10, metric="rep"),
            _table(0.1, 0.2, 1, metric="drs"),
        ],
        ignore_index=True,
    )
    regional = pd.concat(
        [
            _table(0.1, 0.2, 10),
            _table(0.0, 0.0, 10, component="needs", by_construction=True),
            _table(0.1, 0.2, 10, metric="us_uk_share"),
            _table(0.3, 0.2, 10, metric="drs"),
        ],
        ignore_index=True,
    )
    out = cc.component_change({"behaviour_needs": base}, {"behaviour_needs": regional}).set_index(
        ["metric", "component"]
    )
    assert out.loc[("acc", "needs"), "status"] == "0 by construction"
    assert pd.isna(out.loc[("acc", "needs"), "p_change"])
    assert out.loc[("rep", "behaviour"), "status"] == "only in base"
    assert out.loc[("us_uk_share", "behaviour"), "status"] == "only in regional"
    assert (
        out.loc[("drs", "behaviour"), "status"] == "not testable"
        and "fewer than 2 units" in out.loc[("drs", "behaviour"), "note"]
    )
    # the family counts only the tested rows
    assert int(out.loc[("acc", "behaviour"), "family_size"]) == 1
    with pytest.raises(ValueError, match="lacks the column"):
        cc.component_change({"behaviour_needs": base.drop(columns=["value_b"])}, {})
    with pytest.raises(ValueError, match="alpha"):
        cc.component_change({}, {}, inference=InferenceParams(alpha=1.5))


def test_a_rare_share_with_no_own_item_is_not_tested():
    """A group with no own-country item at all in a template: its SD holds none of its sampling
    variation; the change of that contrast is not tested (every component)."""
    row = dict(
        analysis="nationality_vs_rest",
        value="Colombia",
        reference="rest",
        metric="own_country",
        unit="run",
        n_units=27,
        sd_diff=0.01,
        ci_low=-0.01,
        ci_high=-0.004,
        p_adjusted=0.5,
        significant=False,
        by_construction=False,
    )
    base = pd.DataFrame(
        [
            {**row, "component": "total", "mean_diff": -0.007, "mean_value": 0.0},
            {**row, "component": "behaviour", "mean_diff": -0.007, "mean_value": 0.0},
        ]
    )
    regional = base.assign(mean_diff=-0.02, mean_value=0.0)
    out = cc.component_change({"geo_contrasts": base}, {"geo_contrasts": regional})
    assert set(out["status"]) == {"not testable"} and out["p_change"].isna().all()
    assert out["note"].str.contains("0 or 1").all()
    # with own items in both templates, the same numbers are tested
    out = cc.component_change(
        {"geo_contrasts": base.assign(mean_value=0.05)}, {"geo_contrasts": regional.assign(mean_value=0.05)}
    )
    assert out["p_change"].notna().all()


# ----------------------------------------------------------------------------- synthetic models
@pytest.mark.slow
def test_home_steering_moves_the_behaviour_part_upward(steering):
    t = steering
    beh = _rows(t, "nationality_vs_rest", "own_region", "behaviour")
    assert len(beh) == 40
    # what the model did moved, for (almost) every nationality, toward the student's own region
    assert (beh["status"] == "moved").mean() >= 0.9
    assert set(beh.loc[beh["moved"], "direction"]) == {"higher"}
    assert (beh["mean_regional"] > 0.3).all() and beh["mean_base"].abs().max() < 0.15
    assert (beh["ci_low_change"] > 0).mean() >= 0.9
    # the same for Acc (lists closer to home) and for each region against the rest
    acc = _rows(t, "nationality_vs_rest", "acc", "behaviour")
    assert (acc["moved"] & (acc["direction"] == "higher")).mean() >= 0.9
    reg = _rows(t, "region_vs_rest", "own_region", "behaviour")
    assert reg["moved"].all() and (reg["change"] > 0).all()
    # the components' changes add up like the components
    geo = (
        t[t["source"] == "geo_contrasts"]
        .pivot_table(index=["analysis", "value_b", "metric"], columns="component", values="change", aggfunc="first")
        .dropna()
    )
    assert np.allclose(geo["total"], geo["behaviour"] + geo["needs"], atol=1e-9)
    # and the summary says so, with the metric's own words
    text = change_sentences.summary_sentences(t)
    assert text[0].startswith("model-a: the regional template moved what the model did:")
    assert any("more universities in their own region" in s and "behaviour part" in s for s in text[1:])
    v = cc.model_verdicts(t).iloc[0]
    assert v["behaviour_moved"] and v["behaviour_moved_n"] > 100


@pytest.mark.slow
def test_profile_blind_model_behaviour_does_not_move(blind):
    t = blind
    beh = t[(t["component"] == "behaviour") & t["status"].isin(["moved", "not moved"])]
    assert len(beh) > 3000
    assert not beh["moved"].any(), beh[beh["moved"]]
    # the unadjusted tests keep about their level (the rule is not anti-conservative)
    assert (beh["p_change"] < 0.05).mean() <= 0.08
    # the outcome still moves through where the students stand: the regional template sends more
    # items to the home regions of random nationalities, which reach students of populous regions
    needs = _rows(t, "region_vs_rest", "own_region", "needs")
    assert needs["moved"].any()
    text = change_sentences.summary_sentences(t)
    assert len(text) == 1 and text[0].startswith("model-b: the regional template did not move what the model did")
    assert "needs" in text[0]
    assert not cc.model_verdicts(t).iloc[0]["behaviour_moved"]
