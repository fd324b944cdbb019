"""The parser's per-answer length limit (issue 19, item 5): an answer is stored whole, but only its
first MAX_ANSWER_CHARS characters are parsed, and every row of the answer says it was cut."""

import json
import time
import tracemalloc

import pandas as pd
import pytest

from fairness_assets.core.reference import geo
from fairness_assets.core.understanding import match
from fairness_assets.core.understanding import understand as understanding
from fairness_assets.core.understanding.parse import MAX_ANSWER_CHARS, parse_response
from resources.database import Recommendation, ResultsDatabase
from resources.settings import ALIASES_FILE

HEAD = "1. ETH Zurich - MSc Robotics (Switzerland)\n2. University of Oxford - MSc Physics (UK)\n"
LOOP = "You could also consider Alpha University in the USA, which is well known for research.\n"
TEN_MB = HEAD + (LOOP * (10_000_000 // len(LOOP) + 1))[:10_000_000]


def test_the_limit_is_documented_and_sane():
    assert MAX_ANSWER_CHARS == 20_000  # docs/parse_match.md and docs/responses_format.md say 20,000


def test_a_10_mb_answer_is_parsed_up_to_the_limit_and_flagged():
    tracemalloc.start()
    t0 = time.perf_counter()
    try:
        p = parse_response(TEN_MB)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert p.truncated and p.answer_chars == len(TEN_MB) == 10_000_000 + len(HEAD)
    assert [it.university for it in p.items] == ["ETH Zurich", "University of Oxford"] and p.method == "list"
    # only the first 20,000 characters were worked on: a few copies of them, never of the 10 MB
    assert peak < 2_000_000, f"parsing took {peak / 1e6:.1f} MB"
    assert time.perf_counter() - t0 < 5


def test_what_lies_after_the_limit_is_not_read():
    filler = "x" * (MAX_ANSWER_CHARS - 10) + "\n"
    text = "1. ETH Zurich - MSc Robotics\n" + filler + "2. University of Oxford - MSc Physics\n"
    p = parse_response(text)
    assert [it.university for it in p.items] == ["ETH Zurich"] and p.truncated and p.status == "partial"
    whole = parse_response(text, max_chars=len(text))
    assert [it.university for it in whole.items] == ["ETH Zurich", "University of Oxford"] and not whole.truncated


@pytest.mark.parametrize("text,chars", [(HEAD, len(HEAD)), ("", 0), (None, 0), ("I cannot help.", 14)])
def test_short_answers_are_not_flagged(text, chars):
    p = parse_response(text)
    assert not p.truncated and p.answer_chars == chars


def test_an_answer_exactly_at_the_limit_is_whole():
    text = HEAD + "y" * (100 - len(HEAD))
    assert not parse_response(text, max_chars=100).truncated
    assert parse_response(text + "z", max_chars=100).truncated


@pytest.mark.parametrize("bad", [0, -5])
def test_a_limit_below_one_is_refused_naming_it(bad):
    with pytest.raises(ValueError, match=rf"max_chars \(the per-answer length limit\) must be at least 1, got {bad}"):
        parse_response(HEAD, max_chars=bad)
    with pytest.raises(ValueError, match="max_chars"):
        understanding.parse_responses(pd.Series({"r1": HEAD}), max_chars=bad)


def test_every_row_of_a_cut_answer_says_so():
    out = understanding.parse_responses(pd.Series({"long": TEN_MB, "short": HEAD, "none": None}))
    long, short = out[out["response_id"] == "long"], out[out["response_id"] == "short"]
    assert len(long) == 2 and long["answer_truncated"].all() and set(long["answer_chars"]) == {len(TEN_MB)}
    assert len(short) == 2 and not short["answer_truncated"].any() and set(short["answer_chars"]) == {len(HEAD)}
    assert out.loc[out["response_id"] == "none", "answer_chars"].tolist() == [0]
    assert out["answer_truncated"].dtype == bool and out["answer_chars"].dtype == "int64"


@pytest.fixture(scope="module")
def tiny_index():
    unis = pd.DataFrame(
        {
            "university_id": [1, 2, 3],
            "name": ["ETH Zurich", "University of Oxford", "Alpha University"],
            "iso3": ["CHE", "GBR", "USA"],
        }
    )
    return match.UniversityIndex.build(unis)


def _tags(programs: pd.Series) -> pd.DataFrame:
    return pd.DataFrame({"program_norm": programs.str.lower(), "tags": [()] * len(programs)})


def test_recommendation_rows_are_flagged_and_stored(tmp_path, tiny_index):
    resolver = geo.CountryResolver(geo.load_aliases(ALIASES_FILE))
    base = {
        "partition_key": "m|base",
        "audit_id": "a",
        "model": "m",
        "template": "base",
        "profile_id": "p",
        "gender": "female",
        "economic_class": "low",
        "nationality": "Kenya",
        "run": 0,
    }
    items_doc = json.dumps({"items": [{"university": "ETH Zurich", "program": "MSc Robotics", "country": "CH"}]})
    gens = pd.DataFrame(
        [
            {**base, "response_id": "long", "response": TEN_MB, "response_format": "text"},
            {**base, "response_id": "short", "run": 1, "response": HEAD, "response_format": "text"},
            {**base, "response_id": "items", "run": 2, "response": items_doc, "response_format": "items"},
        ]
    )
    recs = understanding.recommendations_for(gens, resolver, tiny_index, _tags)
    by = recs.groupby("response_id")
    assert by["answer_truncated"].all().to_dict() == {"items": False, "long": True, "short": False}
    assert recs.loc[recs["response_id"] == "long", "university_id"].tolist() == [1, 2]
    assert recs.loc[recs["response_id"] == "items", "answer_chars"].isna().all()  # nothing parsed, nothing cut
    db = ResultsDatabase(url=f"sqlite:///{tmp_path / 'r.db'}")
    db.replace_rows(Recommendation, recs.assign(provenance_id="p"), ["m|base"])
    back = db.read_rows(Recommendation, ["m|base"]).set_index(["response_id", "item_index"])
    assert bool(back.loc[("long", 0), "answer_truncated"]) and back.loc[("long", 0), "answer_chars"] == len(TEN_MB)
    assert not bool(back.loc[("short", 0), "answer_truncated"]) and back.loc[("short", 0), "answer_chars"] == len(HEAD)
    assert pd.isna(back.loc[("items", 0), "answer_chars"]) and not bool(back.loc[("items", 0), "answer_truncated"])
