"""The other subject taggers of the sensitivity grid (issue 22 item 3): the rules tagger when the
audit used an LLM tagger, and a cached tagger only where it covers every program."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd

from fairness_assets.core.understanding import tags as tags_core
from fairness_assets.defs.reporting import comparison
from resources import database as D


class FakeDatabase:
    """What the two helpers read: the tag cache and the recommendations' programs."""

    def __init__(self, cache: pd.DataFrame, recs: pd.DataFrame):
        self.tables = {D.SubjectTagCache: cache, D.Recommendation: recs}

    def read_rows(self, model, keys=None):
        return self.tables[model]


RECS = pd.DataFrame(
    {
        "response_id": ["r1", "r1", "r2"],
        "item_index": [0, 1, 0],
        "template": ["academic"] * 3,
        "program_text": ["MSc Mechanical Engineering", "MA History", "MSc Physics"],
    }
)
ITEMS = RECS[["response_id", "item_index"]].assign(acad=[0.5, 0.5, 0.5])
INTEREST = {"academic": ("Engineering & Technology",)}


def _cache(tagger: str, programs: list[str]) -> pd.DataFrame:
    return pd.DataFrame(
        {
            "program_norm": [tags_core.normalize_program(p) for p in programs],
            "tagger": tagger,
            "tags": [json.dumps(["Engineering & Technology"])] * len(programs),
        }
    )


def test_an_llm_audit_gets_the_rules_tagger_and_a_covering_cache_only():
    full = _cache("llm-2:other-model", list(RECS["program_text"]))
    partial = _cache("llm-2:third-model", ["MA History"])
    db = FakeDatabase(pd.concat([full, partial], ignore_index=True), RECS)
    taggers = comparison.other_taggers(db, "llm-2:audited-model", {})
    assert set(taggers) == {"rules", "llm-2:other-model", "llm-2:third-model"}
    items, used = comparison.with_other_tags(db, ITEMS, ["m|academic"], taggers, INTEREST)
    assert used == ["rules", "llm-2:other-model"]  # the third tagged one program of three: left out
    assert list(items["acad_rules"]) == [1.0, 0.0, 0.0]  # engineering / history / physics by the rules
    assert list(items["acad_llm-2:other-model"]) == [1.0, 1.0, 1.0]


def test_a_rules_audit_has_no_rules_setting_and_no_interest_means_no_acad():
    db = FakeDatabase(pd.DataFrame(columns=["program_norm", "tagger", "tags"]), RECS)
    assert comparison.other_taggers(db, tags_core.RULES_VERSION, {}) == {}
    taggers = comparison.other_taggers(db, "llm-2:audited-model", {})
    items, used = comparison.with_other_tags(db, ITEMS, ["m|base"], taggers, {"academic": ()})
    assert used == [] and "acad_rules" not in items and np.allclose(items["acad"], 0.5)
