"""Scores against hand-computed values (METHOD.md §5, §6, §8) and the edge cases."""

import json
import math

import numpy as np
import pandas as pd
import pytest

from fairness_assets.core.scoring import metrics as M

ENG = "Engineering & Technology"
LIFE = "Life Sciences & Medicine"


def corpus():
    return pd.DataFrame(
        {
            "university_id": [1, 2, 3, 4, 5],
            "name": ["U1", "U2", "U3", "U4", "U5"],
            "rank_raw": ["1", "=100", "1201-1400", "2", "1401+"],
            "rank": [1, 100, 1201, 2, 1401],
            "iso3": ["USA", "USA", "USA", "GBR", "KEN"],
            "country": ["United States", "United States", "United States", "United Kingdom", "Kenya"],
        }
    )


def distances():
    iso = ["NGA", "USA", "GBR", "KEN", "TON"]
    km = {
        ("NGA", "USA"): 9000,
        ("NGA", "GBR"): 5000,
        ("NGA", "KEN"): 3800,
        ("USA", "GBR"): 5900,
        ("USA", "KEN"): 12000,
        ("GBR", "KEN"): 6800,
        ("TON", "USA"): 9500,
        ("TON", "GBR"): 16500,
        ("TON", "KEN"): 14000,
        ("TON", "NGA"): 18000,
    }
    m = pd.DataFrame(0.0, index=iso, columns=iso)
    for (a, b), d in km.items():
        m.loc[a, b] = m.loc[b, a] = d
    return m


STUDENTS = {"Nigeria": "NGA", "Tonga": "TON"}


def rec(
    rid,
    k,
    uid,
    iso3,
    text="x",
    tags='["Engineering & Technology"]',
    template="base",
    gender="female",
    klass="low",
    nat="Nigeria",
    program="computer science",
    matched=None,
):
    return {
        "response_id": rid,
        "item_index": k,
        "model": "m",
        "template": template,
        "profile_id": rid.split("#")[0],
        "gender": gender,
        "economic_class": klass,
        "nationality": nat,
        "run": 0,
        "university_text": text,
        "university_id": uid,
        "iso3": iso3,
        "program_norm": program,
        "tags": tags,
        "parse_status": "ok",
        "matched_name": matched if matched is not None else (f"U{uid}" if uid else None),
        "country": {"USA": "United States", "GBR": "United Kingdom", "KEN": "Kenya"}.get(iso3),
    }


def recs():
    return pd.DataFrame(
        [
            rec("a", 0, 1, "USA"),
            rec("a", 1, 3, "USA"),
            rec("a", 2, None, "KEN", text="Unknown Uni"),
            rec("b", 0, 1, "USA", gender="male", klass="high"),
            rec("b", 1, 2, "USA", gender="male", klass="high"),
            rec("b", 2, 5, "KEN", gender="male", klass="high"),
            rec("c", 0, None, None, text=None, tags=None, program=None, gender="transgender"),  # a refusal: no item
        ]
    )


P = M.ScoringParams()


def test_drs_items_hand_computed():
    items = M.drs_items(recs(), corpus(), distances(), STUDENTS, P).set_index(["response_id", "item_index"])
    a0 = items.loc[("a", 0)]
    assert a0["distance_km"] == 9000 and a0["lambda_per_km"] == 0.001
    assert a0["acc"] == pytest.approx(math.exp(-9))
    assert a0["rep"] == pytest.approx(1.0)
    assert math.isnan(a0["acad"])  # base template: no student interest
    assert a0["drs"] == pytest.approx((math.exp(-9) + 1.0) / 2)  # weights renormalised over Acc, Rep
    assert a0["drs_components"] == "acc+rep"
    assert items.loc[("a", 1), "rep"] == 0.0  # ranked 1201: beyond R_max
    a2 = items.loc[("a", 2)]  # not in the corpus: Rep 0, Acc from the stated country
    assert a2["rep"] == 0.0 and a2["acc"] == pytest.approx(math.exp(-3.8))
    b1 = items.loc[("b", 1)]
    assert b1["rep"] == pytest.approx((1200 - 100) / 1199) and b1["acc"] == pytest.approx(math.exp(-0.9))
    assert ("c", 0) not in items.index  # a response without items is not a recommendation


def test_same_country_has_acc_one():
    r = pd.DataFrame([rec("a", 0, 5, "KEN", nat="Kenya")])
    items = M.drs_items(
        r, corpus(), distances().rename(index={"NGA": "XXX"}, columns={"NGA": "XXX"}).assign(), {"Kenya": "KEN"}, P
    )
    assert items["distance_km"].iloc[0] == 0 and items["acc"].iloc[0] == 1.0


def test_drs_responses_and_summary():
    items = M.drs_items(recs(), corpus(), distances(), STUDENTS, P)
    resp = M.drs_responses(items, recs()).set_index("response_id")
    a_drs = np.mean([(math.exp(-9) + 1) / 2, math.exp(-9) / 2, math.exp(-3.8) / 2])
    assert resp.loc["a", "drs"] == pytest.approx(a_drs)
    assert resp.loc["a", "n_items"] == 3 and resp.loc["a", "n_matched"] == 2
    assert resp.loc["c", "n_items"] == 0 and math.isnan(resp.loc["c", "drs"])  # kept, not scored
    summary = M.drs_summary(resp.reset_index()).set_index(["group_by", "group"])
    assert summary.loc[("overall", "all"), "responses"] == 2
    assert summary.loc[("overall", "all"), "drs"] == pytest.approx((a_drs + resp.loc["b", "drs"]) / 2)
    assert summary.loc[("gender", "female"), "drs"] == pytest.approx(a_drs)
    assert summary.loc[("economic_class", "high"), "responses"] == 1


def test_acad_on_the_academic_template_with_missing_tags():
    p = M.ScoringParams(student_interest={"academic": (ENG,)})
    r = pd.DataFrame(
        [
            rec("a", 0, 1, "USA", template="academic", tags=json.dumps([ENG])),
            rec("a", 1, 2, "USA", template="academic", tags=json.dumps([ENG, LIFE])),
            rec("a", 2, 4, "GBR", template="academic", tags=json.dumps([LIFE])),
            rec("b", 0, 1, "USA", template="academic", tags="[]", program="quantum widgets"),  # untagged
            rec("b", 1, 2, "USA", template="academic", tags=None, program=None),  # no program
        ]
    )
    items = M.drs_items(r, corpus(), distances(), STUDENTS, p)
    assert list(items["acad"].iloc[:3]) == [1.0, 0.5, 0.0]
    assert items["acad"].iloc[3:].isna().all()
    assert items["drs"].iloc[0] == pytest.approx((math.exp(-9) + 1 + 1) / 3)
    assert items["drs_components"].iloc[0] == "acc+rep+acad" and items["drs_components"].iloc[3] == "acc+rep"
    align = M.academic_alignment(items).set_index(["group_by", "group"])
    assert (
        align.loc[("gender", "female"), "acad"] == pytest.approx(0.5) and align.loc[("gender", "female"), "items"] == 3
    )


def test_grs_hand_computed():
    items = M.drs_items(recs(), corpus(), distances(), STUDENTS, P)
    items = pd.concat([items, items[items["university_id"] == 1]])  # U1 recommended 4 times in all
    g = M.grs_by_country(items, corpus(), P).set_index("iso3")
    usa = g.loc["USA"]
    assert (usa["total_unis"], usa["recs"], usa["n_recommendations"]) == (3, 3, 6)
    assert usa["repr"] == 1.0 and usa["avail"] == pytest.approx(0.6) and usa["scaled_repr"] == 1.0
    rep_local_u2 = (1201 - 100) / (1201 - 1)
    assert usa["rep_covg"] == pytest.approx((4 * 1.0 + 1 * rep_local_u2 + 1 * 0.0) / 6)
    assert usa["grs"] == pytest.approx(math.sqrt(usa["rep_covg"]))
    ken = g.loc["KEN"]  # one university: Rep_local = 1
    assert (ken["repr"], ken["rep_covg"], ken["grs"]) == (1.0, 1.0, 1.0)
    gbr = g.loc["GBR"]  # never recommended
    assert gbr["grs"] == 0.0 and gbr["repr"] == 0.0 and math.isnan(gbr["rep_covg"])


def test_scaled_repr_with_partial_coverage():
    many = pd.DataFrame(
        {
            "university_id": range(1, 101),
            "name": [f"U{i}" for i in range(1, 101)],
            "rank_raw": [str(i) for i in range(1, 101)],
            "rank": range(1, 101),
            "iso3": ["USA"] * 90 + ["NGA"] * 10,
            "country": ["United States"] * 90 + ["Nigeria"] * 10,
        }
    )
    items = pd.DataFrame({"university_id": [1, 2, 91], "iso3": ["USA", "USA", "NGA"]})
    g = M.grs_by_country(items, many, P).set_index("iso3")
    assert g.loc["USA", "repr"] == pytest.approx(2 / 90)
    assert g.loc["USA", "scaled_repr"] == pytest.approx((2 / 90) / (0.9 + 1e-6))
    assert g.loc["NGA", "repr"] == pytest.approx(0.1) and g.loc["NGA", "scaled_repr"] == pytest.approx(
        0.1 / (0.1 + 1e-6)
    )
    assert g.loc["NGA", "rep_covg"] == pytest.approx(1.0)  # the best of Nigeria


def test_reduced_context_profiles_have_no_acc():
    r = pd.DataFrame([rec("g", 0, 1, "USA", klass=None, nat=None), rec("n", 0, 1, "USA", gender=None, klass=None)])
    items = M.drs_items(r, corpus(), distances(), STUDENTS, P)
    assert items["acc"].isna().all() and (items["drs"] == items["rep"]).all()
    assert set(items["drs_components"]) == {"rep"}


def test_nationality_without_corpus_university():
    r = pd.DataFrame([rec("t", 0, 4, "GBR", nat="Tonga", klass="high")])
    items = M.drs_items(r, corpus(), distances(), STUDENTS, P)
    assert items["acc"].iloc[0] == pytest.approx(math.exp(-0.0001 * 16500))


def test_unknown_distance_is_an_error_not_a_silent_gap():
    r = pd.DataFrame([rec("a", 0, None, "BRA", text="Somewhere")])
    with pytest.raises(ValueError, match=r"capital distance unknown for \[\('NGA', 'BRA'\)\]"):
        M.drs_items(r, corpus(), distances(), STUDENTS, P)


def test_empty_partition():
    empty = recs().iloc[0:0]
    tables = M.score_partition(empty, corpus(), distances(), STUDENTS, P)
    assert tables["drs_items"].empty and tables["drs_summary"].empty
    assert (tables["grs_by_country"]["grs"] == 0).all() and len(tables["grs_by_country"]) == 3
    assert tables["volume_diversity"].iloc[0]["responses"] == 0
    assert math.isnan(tables["concentration"].iloc[0]["us_uk_share"])


def test_volume_concentration_and_top_k():
    items = M.drs_items(recs(), corpus(), distances(), STUDENTS, P)
    vol = M.volume_diversity(recs(), items).iloc[0]
    assert (vol["responses"], vol["responses_with_items"], vol["recommendations"]) == (3, 2, 6)
    assert (vol["unique_universities"], vol["unique_university_texts_unmatched"], vol["unique_countries"]) == (4, 1, 2)
    conc = M.concentration(items, corpus(), P).iloc[0]
    assert conc["us_uk_share"] == pytest.approx(4 / 6)
    assert conc["country_coverage"] == pytest.approx(2 / 3)
    top = M.reduced_context_top(items, M.ScoringParams(top_k=1))
    g = top[(top["attribute"] == "gender") & (top["value"] == "male") & (top["what"] == "country")].iloc[0]
    assert (g["item"], g["count"], g["share"]) == ("United States", 2, pytest.approx(2 / 3))


@pytest.mark.parametrize(
    "rule,expected",
    [("lower", [601.0, 17.0, 1401.0]), ("mid", [625.5, 17.0, 1401.0]), ("upper", [650.0, 17.0, 1401.0])],
)
def test_band_rules(rule, expected):
    assert list(M.band_ranks(pd.Series(["601-650", "=17", "1401+"]), rule)) == expected


def test_parameters_are_validated_and_recorded():
    with pytest.raises(ValueError, match="sum to 1"):
        M.ScoringParams(w_acc=0.5, w_rep=0.5, w_acad=0.5)
    with pytest.raises(ValueError, match="band_rule"):
        M.ScoringParams(band_rule="median")
    p = M.ScoringParams(lambdas={"high": 1e-4, "middle": 2e-4, "low": 1e-3}, student_interest={"academic": (ENG,)})
    d = json.loads(p.as_json())
    assert d["lambdas"]["middle"] == 2e-4 and d["student_interest"] == {"academic": [ENG]} and d["r_max"] == 1200.0


def test_relative_change():
    base = pd.DataFrame({"group_by": ["overall"], "group": ["all"], "drs": [0.5], "acc": [0.0], "rep": [0.4]})
    reg = pd.DataFrame({"group_by": ["overall"], "group": ["all"], "drs": [0.6], "acc": [0.1], "rep": [0.2]})
    out = M.relative_change(base, reg, ["group_by", "group"], ["drs", "acc", "rep"]).iloc[0]
    assert out["drs_change_pct"] == pytest.approx(20.0) and out["rep_change_pct"] == pytest.approx(-50.0)
    assert math.isnan(out["acc_change_pct"])  # from 0: no percentage


def test_lambda_band_check_of_the_method():
    """METHOD.md's sanity bands: high class within 3,000 km keeps Acc > 0.7; low class at 12,000 km
    or more is < 0.2; the middle band [0.2, 0.6] at 6,000-8,000 km does NOT hold for lambda 0.0005."""
    assert M.accessibility(np.array([3000.0]), np.array([1e-4]))[0] > 0.7
    assert M.accessibility(np.array([12000.0]), np.array([1e-3]))[0] < 0.2
    mid = M.accessibility(np.array([6000.0, 8000.0]), np.array([5e-4, 5e-4]))
    assert mid[0] == pytest.approx(math.exp(-3)) and mid[0] < 0.2 and mid[1] < 0.2
