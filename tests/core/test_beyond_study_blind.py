"""A profile-blind model gives no behaviour finding on any axis of ``data/designs/beyond_study.yaml``
(issue 34): the shipped design's eight axes, its seeded sample with pair coverage, the real scoring and
the real tests. The home axis's countries are the planar geography's of ``benchmarks/synthetic_models.py``
(the values override a home axis takes), so distances are known; every answer is drawn from one
distribution whoever asks.

Holm controls the error within each family (one per axis and component: docs/statistics.md), so over the
design's eight families a profile-blind model shows a family-wise finding now and then (about one
seed in three at alpha 0.05). "No finding on any axis" is therefore read at the design's level: no
adjusted p stays under alpha once the families are counted too (Bonferroni over the families)."""

from __future__ import annotations

import numpy as np
import pandas as pd

from fairness_assets.core.reference import axes
from fairness_assets.core.reference.design import with_values
from fairness_assets.core.reference.profiles import design_profiles
from fairness_assets.core.scoring import metrics as mx
from fairness_assets.core.statistics import decompose as dc
from fairness_assets.core.statistics import stats as st
from fairness_assets.core.statistics.inference import InferenceParams
from resources.settings import shipped_design
from tests.helpers.scripts import load_script

SYN = load_script("benchmarks/synthetic_models.py", "bench_synthetic_models")
DIST, ISO = SYN.geography()
NATIONS = list(SYN.NATIONALITIES[:8])
RUNS, UNIS = 2, 20
INFERENCE = InferenceParams(n_perm=1000, n_boot=200)


def _corpus(seed: int = 5) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    countries = list(DIST.index)
    c = pd.DataFrame({"iso3": np.repeat(countries, UNIS), "rank": rng.integers(1, 1201, len(countries) * UNIS)})
    c = c.sort_values(["iso3", "rank"], kind="stable").reset_index(drop=True)
    c["university_id"] = np.arange(len(c))
    c["rank_raw"] = c["rank"].astype(str)
    c["name"] = "U" + c["university_id"].astype(str)
    c["country"] = c["iso3"]
    return c


def _blind_answers(profiles: pd.DataFrame, seed: int) -> pd.DataFrame:
    """Three items per profile and run, every one from the same distribution (a profile-blind model)."""
    rng = np.random.default_rng(seed)
    g = profiles.loc[profiles.index.repeat(RUNS * 3)].reset_index(drop=True)
    n = len(g)
    g["run"] = np.tile(np.repeat(np.arange(RUNS), 3), len(profiles))
    g["item_index"] = np.tile(np.arange(3), len(profiles) * RUNS)
    g["model"], g["template"] = "model-x", "beyond_base"
    g["response_id"] = g["profile_id"] + "|" + g["run"].astype(str)
    countries = list(DIST.index)
    ci = rng.choice(len(countries), size=n)
    k = rng.integers(0, UNIS, n)
    g["university_id"] = ci * UNIS + k
    g["iso3"] = np.array(countries, dtype=object)[ci]
    g["university_text"] = "U" + g["university_id"].astype(str)
    g["tags"] = None
    g["parse_status"] = "ok"
    return g.drop(columns=["profile_set"])


def test_a_profile_blind_model_has_no_behaviour_finding_on_any_axis_of_beyond_study():
    design = shipped_design("beyond_study")
    design = with_values(design, {axes.home() or "nationality": NATIONS})
    with axes.use(design.catalogue):
        profiles = design_profiles(design)
        full = profiles[profiles["profile_set"] == "full"].reset_index(drop=True)
        recs = _blind_answers(full, seed=34)
        params = mx.ScoringParams()
        items = mx.drs_items(recs, _corpus(), DIST, ISO, params)
        responses = mx.drs_responses(items, recs)
        disparity = st.counterfactual_disparity(responses, inference=INFERENCE)
        split = dc.behaviour_needs(items, DIST, ISO, params, inference=INFERENCE)
        names = set(axes.names())
        none = set(axes.names(position="none"))
    assert len(names) == 8
    behaviour = split[split["component"] == "behaviour"]
    assert set(behaviour["attribute"]) == names, "every axis of the design is tested"
    assert (behaviour["n_pairs"] > 0).all(), "the sampled grid pairs every axis's values"
    families = behaviour["attribute"].nunique()
    found = behaviour[behaviour["p_adjusted"] * families < 0.05]
    assert found.empty, found
    none_axes = disparity[disparity["attribute"].isin(none)]
    assert len(none_axes) and none_axes["attribute"].nunique() == 6
    found = none_axes[none_axes["p_adjusted"] * none_axes["attribute"].nunique() < 0.05]
    assert found.empty, found
