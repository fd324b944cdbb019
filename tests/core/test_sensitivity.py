"""Sensitivity of the findings (issue 22 item 3): a finding planted so that it depends on lambda is
marked fragile (it flips sign when lambda doubles), one that depends on R_max loses significance
when R_max is 1000, and a finding that does not depend on either holds."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from fairness_assets.core.reporting.sentences import sensitivity as sensitivity_sentences
from fairness_assets.core.scoring import metrics as mx
from fairness_assets.core.statistics import sensitivity as S
from fairness_assets.core.statistics import stats as st
from fairness_assets.core.statistics.inference import InferenceParams

KW = dict(inference=InferenceParams(n_perm=2000, n_boot=300))
PARAMS = mx.ScoringParams()


def _items(seed: int = 3, runs: int = 6) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Students of 3 genders x {high, low} x 6 nationalities x ``runs``; three items each.

    - High-income students get one item at home (0 km) and two 10,000 km away; low-income students
      three items 490 km away: with the study's lambdas the low-income students' Acc is higher, with
      lambda doubled it is lower (the mixture of a near and a far item bends the other way).
    - Low-income students' universities are ranked 1,050-1,150 and the others' 1,250: Rep is higher
      for them under R_max 1200, and 0 for everyone under R_max 1000."""
    rng = np.random.default_rng(seed)
    rows, resp = [], []
    for g in ("male", "female", "transgender"):
        for c in ("high", "low"):
            for n in ("Nigeria", "India", "Brazil", "France", "Japan", "Chile"):
                for run in range(runs):
                    rid = f"m|base|full:{g}:{c}:{n.lower()}|{run}"
                    pid = f"full:{g}:{c}:{n.lower()}"
                    dists = [0.0, 10_000.0, 10_000.0] if c == "high" else [490.0, 490.0, 490.0]
                    for k, d in enumerate(dists):
                        d = d + rng.normal(0, 20) if d else 0.0
                        rank = 1250.0 if c == "high" else 1100.0 + rng.normal(0, 20)
                        rows.append(
                            {
                                "response_id": rid,
                                "item_index": k,
                                "model": "m",
                                "template": "base",
                                "profile_id": pid,
                                "gender": g,
                                "economic_class": c,
                                "nationality": n,
                                "run": run,
                                "university_id": 1,
                                "iso3": "USA",
                                "distance_km": max(d, 0.0),
                                "lambda_per_km": PARAMS.lambdas[c],
                                "rank": rank,
                                "acad": np.nan,
                            }
                        )
                    resp.append(
                        {
                            "response_id": rid,
                            "model": "m",
                            "template": "base",
                            "profile_id": pid,
                            "gender": g,
                            "economic_class": c,
                            "nationality": n,
                            "run": run,
                            "parse_status": "ok",
                        }
                    )
    items = pd.DataFrame(rows)
    items["rep"] = S.global_rep(items["rank"].to_numpy(), S.RepParams(PARAMS.r_min, PARAMS.r_max))
    items = S.rescore_items(items, S.Setting("as audited"), PARAMS)
    return items, pd.DataFrame(resp)


@pytest.fixture(scope="module")
def verdicts():
    items, resp = _items()
    base = st.counterfactual_disparity(mx.drs_responses(items, resp), **KW)
    per = S.audit_findings(items, resp, S.settings_grid(), PARAMS, **KW)
    return base, S.judge(base, per, "audit")


def _class_row(table, metric):
    r = table[(table["attribute"] == "economic_class") & (table["metric"] == metric)]
    assert len(r) == 1
    return r.iloc[0]


def test_the_planted_findings_are_significant_as_audited(verdicts):
    base, _ = verdicts
    acc, rep = _class_row(base, "acc"), _class_row(base, "rep")
    assert acc["significant"] and acc["mean_diff"] > 0  # low-income students' Acc is higher ...
    assert rep["significant"] and rep["mean_diff"] > 0


def test_a_finding_that_depends_on_lambda_is_fragile(verdicts):
    _, v = verdicts
    acc = v[v["finding"].str.endswith(", acc") & v["finding"].str.startswith("economic_class")].iloc[0]
    assert acc["verdict"] == "flips sign" and not acc["robust"] and "lambda x2" in acc["settings_flipping"]
    assert acc["worst_estimate"] < 0


def test_a_finding_that_depends_on_r_max_loses_significance(verdicts):
    _, v = verdicts
    rep = v[v["finding"].str.endswith(", rep") & v["finding"].str.startswith("economic_class")].iloc[0]
    assert rep["verdict"] == "loses significance" and "R_max 1000" in rep["settings_losing"]
    assert "lambda x2" in rep["settings_holding"]  # Rep does not depend on lambda


def test_a_finding_that_depends_on_neither_holds():
    items, resp = _items()
    # every low-income item one rank band better whatever the setting: Rep under 1000 too
    items = items.assign(rank=np.where(items["economic_class"] == "low", 100.0, 600.0))
    items["rep"] = S.global_rep(items["rank"].to_numpy(), S.RepParams(PARAMS.r_min, PARAMS.r_max))
    items = S.rescore_items(items, S.Setting("as audited"), PARAMS)
    base = st.counterfactual_disparity(mx.drs_responses(items, resp), **KW)
    v = S.judge(base, S.audit_findings(items, resp, S.settings_grid(), PARAMS, **KW), "audit")
    rep = v[v["finding"].str.endswith(", rep") & v["finding"].str.startswith("economic_class")].iloc[0]
    assert rep["verdict"] == "holds" and rep["robust"]
    assert any(s.startswith("Fragile") for s in sensitivity_sentences.summary_sentences(v))  # Acc is still fragile


def test_the_grid_and_the_triple_are_validated():
    names = [s.name for s in S.settings_grid((0.0002, 0.001, 0.002))]
    assert names == ["lambda x0.5", "lambda x2", "lambda 0.0002/0.001/0.002", "R_max 1000", "R_max 1500"]
    assert S.parse_triple("") is None and S.parse_triple("1e-4, 5e-4, 1e-3") == (1e-4, 5e-4, 1e-3)
    for bad in ("0.1,0.2", "a,b,c", "0.1,-1,0.2"):
        with pytest.raises(ValueError, match="lambda triple"):
            S.parse_triple(bad)


def test_another_taggers_tags_rescore_acad():
    items = pd.DataFrame(
        {
            "template": ["academic", "academic", "base"],
            "program_text": ["MSc Mechanical Engineering", "MA History", "MSc Physics"],
        }
    )
    interest = {"academic": ("Engineering & Technology",)}
    tags_of = {"msc mechanical engineering": ("Engineering & Technology",), "ma history": ("Arts & Humanities",)}
    from fairness_assets.core.understanding.tags import normalize_program

    tags_of = {normalize_program(k): v for k, v in tags_of.items()}
    acad = S.acad_with_tags(items, tags_of, interest)
    assert acad[0] == 1.0 and acad[1] == 0.0 and np.isnan(acad[2])  # no interest on base: missing
    setting = S.settings_grid(taggers=("rules",))[-1]
    assert setting.name == "tagger rules" and setting.acad_column == "acad_rules"
    frame = pd.DataFrame(
        {
            "distance_km": [0.0] * 3,
            "lambda_per_km": [1e-4] * 3,
            "rep": [0.5] * 3,
            "acad": [0.0, 1.0, np.nan],
            "acad_rules": acad,
        }
    )
    out = S.rescore_items(frame, setting, PARAMS)
    assert list(out["acad"][:2]) == [1.0, 0.0] and out["drs"].iloc[0] == pytest.approx((1 + 0.5 + 1) / 3)
