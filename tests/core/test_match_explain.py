"""Issue 21.3 (part): every match explains itself -- the rule family that matched, its score, the
runner-up candidate for completions and fuzzy matches, the candidates of an ``ambiguous`` text --
and ``match_universities`` keeps its old columns and adds these. Invented corpus."""

import pandas as pd
import pytest

from fairness_assets.core.understanding import match

NAMES = [  # (name, iso3)
    ("Massachusetts Institute of Technology (MIT)", "USA"),
    ("Brennholt University", "DEU"),
    ("Imperial College of Vandermark", "GBR"),
    ("Imperial Academy of Vandermark Arts", "GBR"),
    ("University of Ostrava Vale - North Campus", "CZE"),
    ("University of Ostrava Vale - South Campus", "CZE"),
    ("Quellbrook Technological University", "SGP"),
]


@pytest.fixture(scope="module")
def idx():
    unis = pd.DataFrame(
        {
            "university_id": [10 * (i + 1) for i in range(len(NAMES))],
            "name": [n for n, _ in NAMES],
            "iso3": [i for _, i in NAMES],
        }
    )
    aliases = {"mit": [(match.name_forms("Massachusetts Institute of Technology (MIT)")[0], "USA")]}
    return match.UniversityIndex.build(unis, aliases)


@pytest.mark.parametrize(
    "method,rule",
    [
        ("exact", "exact"),
        ("part", "exact"),
        ("alias", "alias"),
        ("historical", "alias"),
        ("acronym", "acronym"),
        ("structure", "structure"),
        ("translated", "structure"),
        ("prefix", "completion"),
        ("partial", "completion"),
        ("fuzzy", "fuzzy"),
        ("none", None),
        ("ambiguous", None),
        ("several", None),
        (None, None),
    ],
)
def test_rule_families(method, rule):
    assert match.rule_of(method) == rule


def test_every_method_the_matcher_can_return_has_a_family():
    import inspect
    import re

    src = "".join(inspect.getsource(m) for m in (match.index, match.rules, match.fast, match.fuzzy, match.entry))
    methods = set(re.findall(r'Match\([^()]*?,\s*[\d.]+,\s*"(\w+)"', src)) - {"none", "ambiguous", "several"}
    assert methods and methods <= set(match.RULE_FAMILIES)


def test_columns_explain_each_kind_of_match(idx):
    items = pd.DataFrame(
        {
            "university_text": [
                "MIT",
                "Brennholt University",
                "Imperial College",
                "Quellbrok Technological University",
                "University of Ostrava Vale",
                None,
            ],
            "stated_iso3": [None, None, None, None, None, None],
        }
    )
    out = match.match_universities(items, idx)
    for col in ("university_id", "matched_name", "match_score", "match_method", "university_iso3"):
        assert col in out  # the columns callers already store
    rows = out.to_dict("records")
    mit, exact, prefix, fuzzy, amb, missing = rows
    assert (mit["match_rule"], mit["match_method"]) == ("alias", "alias") and pd.isna(mit["runner_up_name"])
    assert exact["match_rule"] == "exact" and pd.isna(exact["runner_up_id"]) and pd.isna(exact["runner_up_score"])
    # a completion names what it was chosen over
    assert prefix["matched_name"] == "Imperial College of Vandermark" and prefix["match_rule"] == "completion"
    assert prefix["runner_up_name"] == "Imperial Academy of Vandermark Arts"
    assert prefix["runner_up_id"] == 40 and 0 < prefix["runner_up_score"] < 100
    assert fuzzy["matched_name"] == "Quellbrook Technological University" and fuzzy["match_rule"] == "fuzzy"
    assert fuzzy["match_score"] >= 92
    # an ambiguous text lists what it could be, and is no match
    assert amb["match_method"] == "ambiguous" and pd.isna(amb["university_id"]) and amb["match_rule"] is None
    assert set(amb["match_candidates"].split(" | ")) == {
        "University of Ostrava Vale - North Campus",
        "University of Ostrava Vale - South Campus",
    }
    assert missing["match_rule"] is None and missing["match_candidates"] is None


def test_fuzzy_runner_up_is_the_second_candidate(idx):
    m = match.match_one("Imperial Colege of Vandermark", "GBR", idx)
    if m.method == "fuzzy":
        assert m.runner_up is None or (m.runner_up != m.index and m.runner_up_score <= m.score)
    hits = [(2, 95.0), (3, 90.0)]  # two look-alikes in the stated country: the second is the runner-up
    picked = match._fuzzy_choice(hits, "GBR", idx, match.MatchParams())
    assert (picked.index, picked.runner_up, picked.runner_up_score) == (2, 3, 90.0)


def test_batched_and_single_agree_on_the_explanation(idx):
    for text in ("Imperial College", "University of Ostrava Vale", "Quellbrok Technological University"):
        one = match.match_one(text, None, idx)
        many = match._match_many([text], [None], idx, match.MatchParams())[0]
        assert (one.index, one.method, one.runner_up, one.candidates) == (
            many.index,
            many.method,
            many.runner_up,
            many.candidates,
        )
        assert one.score == pytest.approx(many.score, abs=1e-3)  # the batch scores in float32
