"""core.scoring.drift with the behaviour / needs split (issue 20, item 5): the group contrasts of an audit
archived per component, compared with the previous audit, the behaviour part of every contrast
significant in either audit shown previous vs current; an audit archived before the split reads
"no previous record", not "new"."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from fairness_assets.core.scoring import drift
from fairness_assets.core.statistics import decompose as dc
from fairness_assets.core.statistics.inference import InferenceParams
from tests.core.test_decompose import DIST, ISO, PARAMS, synthetic_items


def _bn(rows):
    base = {
        "value_a": "female",
        "value_b": "male",
        "attribute": "gender",
        "metric": "rep",
        "component": "behaviour",
        "mean_diff": 0.0,
        "p_value": 0.5,
        "significant": False,
        "by_construction": False,
    }
    return pd.DataFrame([{**base, **r} for r in rows])


def _geo(rows):
    base = {
        "analysis": "nationality_vs_rest",
        "value": "Kenya",
        "reference": "rest",
        "metric": "own_region",
        "component": "behaviour",
        "mean_diff": 0.0,
        "p_value": 0.5,
        "significant": False,
        "by_construction": False,
    }
    return pd.DataFrame([{**base, **r} for r in rows])


def test_contrast_metrics_rows():
    nat = [
        {"attribute": "nationality", "value_a": f"N{i}", "value_b": f"N{j}", "metric": "acc"}
        for i in range(4)
        for j in range(i + 1, 7)
    ]  # 7 values: summarised by the geographic contrasts
    bn = _bn(
        [
            {"mean_diff": -0.2, "significant": True, "p_value": 0.001},
            {"component": "total", "mean_diff": -0.2, "significant": True, "p_value": 0.001},
            {"component": "needs", "mean_diff": 0.0, "by_construction": True, "p_value": np.nan},
            *nat,
        ]
    )
    geo = _geo(
        [
            {"mean_diff": 0.3, "significant": "True"},
            {"component": "needs", "mean_diff": -0.1, "p_value": np.nan, "significant": False},
        ]
    )
    h = drift.contrast_metrics(bn, geo)
    assert list(h.columns) == drift.HEADLINE_COLUMNS
    assert set(h["scope"]) == {"contrast_behaviour", "contrast_total", "contrast_needs"}
    assert set(h["group_by"]) == {"gender", "nationality_vs_rest"}  # no nationality pair
    beh = h.set_index(["scope", "group_by", "group", "metric"])["value"]
    assert beh[("contrast_behaviour", "gender", "male vs female", "rep")] == -0.2
    assert beh[("contrast_behaviour", "gender", "male vs female", "rep significant")] == 1.0
    assert beh[("contrast_behaviour", "nationality_vs_rest", "Kenya vs rest", "own_region significant")] == 1.0
    # by construction: not archived; untested (p missing): no significance row
    assert not ((h["scope"] == "contrast_needs") & (h["group_by"] == "gender")).any()
    assert ("contrast_needs", "nationality_vs_rest", "Kenya vs rest", "own_region significant") not in beh.index
    assert drift.contrast_metrics(None, None).empty
    with pytest.raises(ValueError, match="lacks the column"):
        drift.contrast_metrics(bn.drop(columns=["value_b"]))


def test_previous_audit_without_contrasts_reads_no_previous_record():
    headline = pd.DataFrame(
        {"scope": "group", "group_by": "overall", "group": "all", "metric": ["drs"], "value": [0.5]}
    )
    current = pd.concat([headline, drift.contrast_metrics(_bn([{"mean_diff": 0.1}]))], ignore_index=True)
    d = drift.compare(headline, current)
    assert set(d.loc[drift.is_contrast(d), "status"]) == {drift.NO_PREVIOUS_RECORD}
    assert d.loc[~drift.is_contrast(d), "status"].tolist() == ["unchanged"]
    assert drift.component_drift(d).empty  # nothing to compare, nothing significant before
    # a contrast new in an audit that archives contrasts is "new"
    previous = pd.concat([headline, drift.contrast_metrics(_bn([{"metric": "acc"}]))], ignore_index=True)
    d = drift.compare(previous, current)
    assert set(d.loc[drift.is_contrast(d) & d["metric"].str.startswith("rep"), "status"]) == {"new"}


def test_component_drift_puts_the_components_side_by_side():
    before = drift.contrast_metrics(_bn([{"mean_diff": 0.01}, {"component": "total", "mean_diff": 0.05}]))
    after = drift.contrast_metrics(
        _bn([{"mean_diff": -0.2, "significant": True, "p_value": 0.001}, {"component": "total", "mean_diff": -0.15}])
    )
    c = drift.component_drift(drift.compare(before, after))
    assert list(c.columns) == drift.COMPONENT_DRIFT_COLUMNS and len(c) == 1
    r = c.iloc[0]
    assert (r["analysis"], r["contrast"], r["metric"]) == ("gender", "male vs female", "rep")
    assert r["behaviour_previous"] == 0.01 and r["behaviour_current"] == -0.2
    assert r["behaviour_change"] == pytest.approx(-0.21)
    assert r["behaviour_significant_previous"] is False and r["behaviour_significant_current"] is True
    assert r["total_current"] == -0.15 and r["total_significant_current"] is False
    # nothing significant in either audit: not shown unless asked
    quiet = drift.compare(before, before)
    assert drift.component_drift(quiet).empty and len(drift.component_drift(quiet, only_significant=False)) == 1


@pytest.mark.slow
def test_a_model_that_starts_steering_low_income_students_shows_in_the_behaviour_drift():
    """Previous audit: a profile-blind model; current: low-income students get lower-reputation
    universities. The behaviour part of the income pairs' Rep turns significant and negative."""

    def audit(kind, seed):
        items = synthetic_items(kind, seed=seed)
        bn = dc.behaviour_needs(
            items, DIST, ISO, PARAMS, attributes=("economic_class",), inference=InferenceParams(n_perm=2000, n_boot=500)
        )
        return drift.contrast_metrics(bn)

    d = drift.compare(audit("blind", 11), audit("class_steering", 12))
    c = drift.component_drift(d).set_index(["contrast", "metric"])
    for contrast in ("low vs high", "middle vs low"):
        r = c.loc[(contrast, "rep")]
        assert r["behaviour_significant_current"] is True and r["behaviour_significant_previous"] is False
        sign = -1 if contrast == "low vs high" else 1  # low is value_b of (high, low), value_a of (low, middle)
        assert sign * r["behaviour_change"] > 0.1
    # high vs middle did not move: not significant in either audit, so not listed
    assert ("middle vs high", "rep") not in c.index
