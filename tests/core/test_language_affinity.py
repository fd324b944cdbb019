"""Language-country affinity (issue 35 item 2; METHOD.md §11), validated on synthetic models with known
effects: a model that answers French prompts with universities of French-speaking countries shows affinity
with the right sign, significant after Holm; a language-blind model shows none, and its tests keep their level;
unpaired students are counted, never dropped silently; the language-country table is CLDR's."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from fairness_assets.core.statistics import language_affinity as la
from fairness_assets.core.statistics.inference import InferenceParams

FAST = InferenceParams(n_boot=400, n_perm=2000)
POOL = ["USA", "GBR", "CAN", "AUS", "DEU", "CHN", "JPN", "NLD", "FRA", "CHE", "BEL", "ESP", "MEX", "BRA", "IND"]
FRENCH = {"FRA", "BEL", "CHE", "CAN", "SEN"}


def synthetic(*, steer: dict[str, float], seed: int, n_students: int = 60, runs: int = 2, languages=("en", "fr", "es")):
    """Students (gender x nationality x run) each asked in every language; 3 recommendations an answer drawn
    from POOL, except that in language L a share ``steer[L]`` of them is drawn from L's own countries."""
    rng = np.random.default_rng(seed)
    own = {"fr": sorted(FRENCH & set(POOL)), "es": ["ESP", "MEX"]}
    responses, items = [], []
    for s in range(n_students):
        for run in range(runs):
            for language in languages:
                rid = f"s{s}-r{run}-{language}"
                responses.append({"response_id": rid, "language": language, "student": f"s{s}", "run": run})
                for k in range(3):
                    if language in steer and rng.random() < steer[language]:
                        iso3 = rng.choice(own[language])
                    else:
                        iso3 = rng.choice(POOL)
                    items.append({"response_id": rid, "item_index": k, "iso3": iso3})
    return pd.DataFrame(items), pd.DataFrame(responses)


def test_a_model_that_answers_french_prompts_with_french_universities_shows_affinity():
    items, responses = synthetic(steer={"fr": 0.6}, seed=1)
    out = la.language_affinity(items, responses, language_axis="language", unit_keys=["student", "run"], inference=FAST)
    fr = out.set_index("language").loc["fr"]
    assert fr["mean_diff"] > 0.3 and fr["ci_low"] > 0 and bool(fr["significant"])
    assert fr["share_language"] > fr["share_reference"]
    assert fr["n_pairs"] == 120 and fr["n_pairs_excluded"] == 0 and fr["component"] == "behaviour"
    es = out.set_index("language").loc["es"]  # not steered: no finding
    assert not bool(es["significant"]) and es["ci_low"] < 0 < es["ci_high"]
    assert set(out["family_size"]) == {2} and (out["p_adjusted"] >= out["p_value"]).all()


def test_the_sign_follows_the_effect():
    items, responses = synthetic(steer={"en": 0.0, "fr": 0.0}, seed=2)
    # a model that avoids French-speaking countries when asked in French
    items = items.copy()
    fr_rows = items["response_id"].str.endswith("-fr") & items["iso3"].isin(FRENCH)
    items.loc[fr_rows, "iso3"] = "USA"
    out = la.language_affinity(items, responses, language_axis="language", unit_keys=["student", "run"], inference=FAST)
    fr = out.set_index("language").loc["fr"]
    assert fr["mean_diff"] < 0 and fr["ci_high"] < 0 and bool(fr["significant"])


def test_a_language_blind_model_shows_no_affinity_and_the_tests_keep_their_level():
    rejected = []
    for seed in range(20):
        items, responses = synthetic(steer={}, seed=100 + seed, n_students=30, runs=1)
        out = la.language_affinity(
            items, responses, language_axis="language", unit_keys=["student", "run"], inference=FAST
        )
        rejected += list(out["p_value"] < 0.05)
    assert np.mean(rejected) <= 0.125, np.mean(rejected)  # 40 tests at the 5% level


def test_the_profile_blind_model_of_one_seed_has_no_significant_language():
    items, responses = synthetic(steer={}, seed=7)
    out = la.language_affinity(items, responses, language_axis="language", unit_keys=["student", "run"], inference=FAST)
    assert not out["significant"].any(), out


def test_unpaired_and_unlocated_students_are_counted_not_dropped():
    items, responses = synthetic(steer={"fr": 0.5}, seed=3, n_students=10, runs=1)
    responses = responses[responses["response_id"] != "s0-r0-fr"]  # s0 asked only in English
    items = items.assign(iso3=items["iso3"].where(~items["response_id"].eq("s1-r0-en")))  # no located item
    out = la.language_affinity(items, responses, language_axis="language", unit_keys=["student", "run"], inference=FAST)
    fr = out.set_index("language").loc["fr"]
    assert fr["n_pairs"] == 8 and fr["n_pairs_excluded"] == 2


def test_bad_inputs_are_named():
    items, responses = synthetic(steer={}, seed=4, n_students=4, runs=2)
    with pytest.raises(la.AffinityError, match="include the run"):
        la.language_affinity(items, responses, language_axis="language", unit_keys=["student"])
    with pytest.raises(la.AffinityError, match=r"lack column\(s\) \['cohort'\]"):
        la.language_affinity(items, responses, language_axis="language", unit_keys=["cohort"])
    with pytest.raises(la.AffinityError, match="reference language 'de'"):
        la.language_affinity(items, responses, language_axis="language", unit_keys=["student", "run"], reference="de")


def test_the_language_countries_are_cldr_territory_languages():
    assert {"FRA", "BEL", "CHE", "CAN", "SEN", "CIV"} <= set(la.language_countries("fr"))
    assert {"ESP", "MEX", "ARG", "COL"} <= set(la.language_countries("es"))
    assert {"BRA", "PRT", "AGO", "MOZ"} <= set(la.language_countries("pt"))
    assert {"DEU", "AUT", "CHE"} <= set(la.language_countries("de"))
    assert {"EGY", "SAU", "ARE", "MAR"} <= set(la.language_countries("ar"))
    assert la.language_countries("hi") == ("IND",)
    assert {"CHN", "TWN", "HKG", "SGP"} <= set(la.language_countries("zh"))
    assert la.language_countries("zh_Hant") == la.language_countries("zh")  # the script is not the language
    assert "USA" not in la.language_countries("fr") and "FRA" not in la.language_countries("es")
    with pytest.raises(la.AffinityError, match="'xx'"):
        la.language_countries("xx")


def test_the_affinity_of_a_designs_comparisons_across_languages_and_its_report():
    from fairness_assets.core.reporting import audit_report
    from fairness_assets.core.reporting.sentences import change as change_sentences

    items, responses = synthetic(steer={"fr": 0.6}, seed=5)
    template = {"en": "base", "fr": "base_fr", "es": "base_es"}
    responses = responses.assign(template=responses["language"].map(template), profile_id=responses["student"]).drop(
        columns=["language", "student"]
    )
    items = items.merge(responses[["response_id", "template"]], on="response_id")
    out = la.comparison_affinity(
        items,
        responses,
        languages={"base": "en", "base_fr": "fr", "base_es": "es", "regional": "en"},
        comparisons=[("base", "base_fr"), ("base", "base_es"), ("base", "regional")],  # regional: same language
        model="m",
        inference=FAST,
    )
    assert list(out["template"]) == ["base_fr", "base_es"] and set(out["reference_template"]) == {"base"}
    assert list(out["significant"]) == [True, False] and (out["model"] == "m").all()
    text = change_sentences.affinity_sentences(out)
    assert text[0].startswith("m: the language moved the lists toward the countries where it is spoken")
    assert "no language-country affinity beyond chance" in text[1]
    tables = audit_report.headline_tables([], {"language_affinity": out})
    (title,) = tables
    assert title.startswith("Language-country affinity") and "holm across the languages" in title
    assert audit_report.component_change_summary({"language_affinity": out}) == text
    # two templates of one language compared with the same reference cannot be told apart: refused by name
    with pytest.raises(la.AffinityError, match="two of them in one language"):
        la.comparison_affinity(
            items,
            responses,
            languages={"base": "en", "base_fr": "fr", "base_es": "fr"},
            comparisons=[("base", "base_fr"), ("base", "base_es")],
            model="m",
        )
