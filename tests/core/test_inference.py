"""The inference settings (core.statistics.inference, issue 33.3): one frozen, validated value with the
defaults of the report settings, taken as ``inference=`` by every statistics function."""

from __future__ import annotations

import dataclasses
import inspect
import typing

import pandas as pd
import pytest

from fairness_assets.core.reporting import audit_report
from fairness_assets.core.statistics import comparison, component_change, decompose, geostats, sensitivity, stats
from fairness_assets.core.statistics.inference import CORRECTIONS, DEFAULT_INFERENCE, InferenceParams
from resources.settings import ReportResource
from tests.core.test_stats import synth

SIX = ("n_perm", "n_boot", "level", "seed", "correction", "alpha")
TAKE_INFERENCE = (
    stats.run_variability,
    stats.counterfactual_disparity,
    decompose.behaviour_needs,
    decompose.envy,
    decompose.decompose,
    comparison.compare_models,
    comparison.leaderboard,
    comparison.tables_for,
    component_change.component_change,
    sensitivity.audit_findings,
    sensitivity.comparison_findings,
    geostats.geo_statistics,
    geostats.group_contrasts,
    geostats.geo_contrasts,
    geostats.class_gap_interactions,
    geostats.class_gap_decomposition,
    geostats.region_metrics,
    geostats.family_summary,
    audit_report.partition_statistics,
)


def test_defaults_are_the_report_settings_defaults():
    assert dataclasses.asdict(InferenceParams()) == ReportResource().as_dict()
    assert DEFAULT_INFERENCE == InferenceParams()
    assert [f.name for f in dataclasses.fields(InferenceParams)] == list(SIX)
    # the report setting accepts the same corrections
    assert typing.get_args(ReportResource.model_fields["correction"].annotation) == CORRECTIONS == ("holm", "bh")


def test_inference_of_reads_the_report_settings():
    from fairness_assets.defs.services import inference_of

    assert inference_of(ReportResource()) == DEFAULT_INFERENCE
    custom = ReportResource(n_perm=500, n_boot=300, level=0.9, seed=4, correction="bh", alpha=0.1)
    assert inference_of(custom) == InferenceParams(
        n_perm=500, n_boot=300, level=0.9, seed=4, correction="bh", alpha=0.1
    )


@pytest.mark.parametrize("function", TAKE_INFERENCE, ids=lambda f: f"{f.__module__}.{f.__name__}")
def test_every_statistics_function_takes_one_keyword_only_inference(function):
    params = inspect.signature(function).parameters
    assert not set(SIX) & set(params), f"{function.__name__} still takes {sorted(set(SIX) & set(params))}"
    p = params["inference"]
    assert p.kind is inspect.Parameter.KEYWORD_ONLY and p.default is DEFAULT_INFERENCE


@pytest.mark.parametrize(
    "field, value, message",
    [
        ("n_perm", 0, r"n_perm must be >= 1, got 0"),
        ("n_perm", -5, r"n_perm must be >= 1, got -5"),
        ("n_perm", True, r"n_perm must be an integer >= 1, got True"),
        ("n_perm", 10.0, r"n_perm must be an integer >= 1, got 10.0"),
        ("n_boot", 0, r"n_boot must be >= 1, got 0"),
        ("n_boot", False, r"n_boot must be an integer >= 1, got False"),
        ("n_boot", "2000", r"n_boot must be an integer >= 1, got '2000'"),
        ("level", 95, r"level must be in \(0, 1\), got 95"),
        ("level", 0.0, r"level must be in \(0, 1\), got 0.0"),
        ("level", 1.0, r"level must be in \(0, 1\), got 1.0"),
        ("level", float("nan"), r"level must be in \(0, 1\), got nan"),
        ("level", "0.9", r"level must be a number in \(0, 1\), got '0.9'"),
        ("seed", -1, r"seed must be a non-negative integer, got -1"),
        ("seed", 1.5, r"seed must be a non-negative integer, got 1.5"),
        ("seed", True, r"seed must be a non-negative integer, got True"),
        ("correction", "bonferroni", r"correction must be one of \('holm', 'bh'\), got 'bonferroni'"),
        ("correction", "Holm", r"correction must be one of \('holm', 'bh'\), got 'Holm'"),
        ("alpha", 0, r"alpha must lie in \(0, 1\), got 0"),
        ("alpha", 1.5, r"alpha must lie in \(0, 1\), got 1.5"),
        ("alpha", None, r"alpha must be a number in \(0, 1\), got None"),
    ],
)
def test_an_invalid_value_is_refused_naming_the_field(field, value, message):
    with pytest.raises(ValueError, match=f"^{message}$"):
        InferenceParams(**{field: value})
    with pytest.raises(ValueError, match=f"^{message}$"):  # replace() validates too
        dataclasses.replace(DEFAULT_INFERENCE, **{field: value})


def test_valid_values_are_kept():
    import numpy as np

    p = InferenceParams(n_perm=1, n_boot=np.int64(50), level=0.5, seed=0, correction="bh", alpha=0.2)
    assert (p.n_perm, p.n_boot, p.level, p.seed, p.correction, p.alpha) == (1, 50, 0.5, 0, "bh", 0.2)


def test_frozen_and_hashable():
    p = InferenceParams(seed=3)
    with pytest.raises(dataclasses.FrozenInstanceError):
        p.seed = 4  # type: ignore[misc]
    assert p == InferenceParams(seed=3) and hash(p) == hash(InferenceParams(seed=3))
    assert p != DEFAULT_INFERENCE and {p: 1}[InferenceParams(seed=3)] == 1


# ----------------------------------------------------------------------------- the figures themselves
def _disparity(inference: InferenceParams) -> pd.Series:
    df = synth(effect=0.02, n_nat=4, runs=3, seed=21)
    d = stats.counterfactual_disparity(df, attributes=("gender",), metrics=("drs",), inference=inference)
    return d[(d["value_a"] == "female") & (d["value_b"] == "male")].iloc[0]


def test_the_figures_are_those_of_the_six_separate_parameters():
    """Pinned: the values counterfactual_disparity and run_variability gave, with the six settings as
    separate parameters (n_boot=500, n_perm=200, seed=11), before they became one InferenceParams:
    same seeding, same order of draws. The interval bounds may differ in the last bits between BLAS
    builds (stats.blas_single_thread); the p-values are counts and do not."""
    inference = InferenceParams(n_boot=500, n_perm=200, seed=11)
    r = _disparity(inference)
    assert r["mean_diff"] == pytest.approx(0.024175684610381682, rel=1e-12)
    assert r["ci_low"] == pytest.approx(0.017184101398827478, rel=1e-9)
    assert r["ci_high"] == pytest.approx(0.03193293120471339, rel=1e-9)
    assert r["p_value"] == 1 / 201 and r["p_method"] == "monte_carlo" and r["n_perm"] == 200
    assert r["p_adjusted"] == 3 / 201  # Holm over the three gender pairs
    assert (r["n_boot"], r["level"], r["correction"], r["alpha"]) == (500, 0.95, "holm", 0.05)
    v = stats.run_variability(
        synth(effect=0.02, n_nat=4, runs=3, seed=21), metrics=("drs",), by=(None,), inference=inference
    )
    row = v[v["unit"] == "profile"].iloc[0]
    assert row["ci_low"] == pytest.approx(0.49146887926752414, rel=1e-9)
    assert row["ci_high"] == pytest.approx(0.5839917728982368, rel=1e-9)


def test_the_seed_moves_the_interval_and_the_same_settings_repeat_it():
    a = _disparity(InferenceParams(n_boot=500, n_perm=200, seed=11))
    again = _disparity(InferenceParams(n_boot=500, n_perm=200, seed=11))
    other = _disparity(InferenceParams(n_boot=500, n_perm=200, seed=0))
    pd.testing.assert_series_equal(a, again)
    assert (a["ci_low"], a["ci_high"]) != (other["ci_low"], other["ci_high"])
    assert a["mean_diff"] == other["mean_diff"]  # the estimate itself draws nothing
    assert other["ci_low"] == pytest.approx(0.01701994197460287, rel=1e-9)
    assert other["ci_high"] == pytest.approx(0.03218955448764651, rel=1e-9)
    assert other["p_value"] == 2 / 201


def test_the_settings_reach_the_table():
    r = _disparity(InferenceParams(n_boot=300, n_perm=100, level=0.9, correction="bh", alpha=0.1))
    assert (r["n_boot"], r["level"], r["correction"], r["alpha"]) == (300, 0.9, "bh", 0.1)
    assert r["n_perm"] == 100 and r["p_min_attainable"] == 1 / 101
