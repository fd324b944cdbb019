"""Which pairs of models are compared (issue 36 item 2): every pair up to 8 models on a template (the study's
three: the tables as before), each model with a reference model beyond (M - 1 pairs: linear in the models), or
either one on demand (FAIRNESS_COMPARISON_PAIRS); the leaderboard's ranks rest on the pairs compared."""

from __future__ import annotations

import itertools

import pandas as pd
import pytest

from fairness_assets.core.statistics import comparison as C
from fairness_assets.core.statistics.inference import InferenceParams

from .test_comparison import model

INFERENCE = InferenceParams(n_boot=200, n_perm=500)


def test_every_pair_up_to_eight_models_and_the_reference_beyond():
    eight = [f"m{i}" for i in range(8)]
    assert C.model_pairs(eight) == list(itertools.combinations(eight, 2))  # auto: 28 pairs
    nine = [f"m{i}" for i in range(9)]
    assert C.model_pairs(nine) == [("m0", m) for m in nine[1:]]  # auto beyond 8: the first in name order
    assert len(C.model_pairs(nine, C.PairChoice("all"))) == 36
    # a release gate's baseline is the preferred reference where it is scored
    assert C.model_pairs(nine, C.PairChoice(prefer=("zz", "m5")))[0] == ("m0", "m5")
    assert C.model_pairs(nine, C.PairChoice("reference", "m4")) == sorted(
        (min("m4", m), max("m4", m)) for m in nine if m != "m4"
    )
    assert C.model_pairs(["b", "a"], C.PairChoice("reference")) == [("a", "b")]


def test_a_bad_mode_or_an_unscored_reference_is_refused_naming_it():
    with pytest.raises(ValueError, match="pairs must be one of"):
        C.model_pairs(["a", "b"], C.PairChoice("some"))
    with pytest.raises(ValueError, match=r"reference model 'zz' has no scored partition here \(models: \['a', 'b'\]\)"):
        C.model_pairs(["a", "b"], C.PairChoice("reference", "zz"))


def test_the_reference_mode_compares_each_model_with_the_reference_and_finds_the_better_one():
    frames = [model(f"model-{i}", i, drs_shift=0.04 if i == 3 else 0.0) for i in range(5)]
    responses = pd.concat(frames, ignore_index=True)
    out = C.tables_for(responses, inference=INFERENCE, pairs=C.PairChoice("reference", "model-0"))
    d, board = out["differences"], out["leaderboard"]
    assert set(zip(d["model_a"], d["model_b"], strict=True)) == {("model-0", f"model-{i}") for i in range(1, 5)}
    drs = d[(d["metric"] == "drs") & (d["family"] == "metrics") & (d["gap"] == "")].set_index("model_b")
    assert drs.loc["model-3", "significant"] and drs.loc["model-3", "mean_diff"] > 0.03
    assert not drs.drop(index="model-3")["significant"].any()
    # ranks from the pairs compared: model-3 beats the reference; the others are tied with everyone they were
    # not compared with, so their rank ranges stay wide (every pair: FAIRNESS_COMPARISON_PAIRS=all)
    ranks = board[(board["metric"] == "drs")].set_index("model")
    assert ranks.loc["model-3", "rank_best"] == 1 and ranks.loc["model-0", "rank_worst"] == 5


def test_three_models_compare_every_pair_as_before():
    responses = pd.concat([model(f"model-{i}", i) for i in range(3)], ignore_index=True)
    auto = C.tables_for(responses, inference=INFERENCE)
    every = C.tables_for(responses, inference=INFERENCE, pairs=C.PairChoice("all"))
    pd.testing.assert_frame_equal(auto["differences"], every["differences"])
    pd.testing.assert_frame_equal(auto["leaderboard"], every["leaderboard"])
    assert len(auto["differences"][["model_a", "model_b"]].drop_duplicates()) == 3
