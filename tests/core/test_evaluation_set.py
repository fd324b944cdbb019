"""Parse + match accuracy on the hand-written evaluation sets (issue: at least 95% of items).

`eval_responses.jsonl` was written first and the parser tuned on it; `eval_holdout.jsonl` was
written independently afterwards and measured before any tuning on it (docs/parse_match.md).
`eval_builtin.jsonl` holds real answers of the built-in CPU model (qwen2.5-0.5b-demo) under the
`regional` and `academic` templates, collected by docs/build_builtin_eval.py and labelled by hand.
"""

import json
from pathlib import Path

import pandas as pd
import pytest

from benchmarks import evaluation
from fairness_assets.core.reference import corpus, geo
from fairness_assets.core.understanding import match
from fairness_assets.core.understanding import understand as understanding
from resources.settings import ALIASES_FILE, UNIVERSITY_ALIASES_FILE

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures"


@pytest.fixture(scope="module")
def pipeline(qs_export):
    resolver = geo.CountryResolver(geo.load_aliases(ALIASES_FILE))
    raw, rep = corpus.read_qs_export(qs_export)
    unis, _ = corpus.build_corpus(raw, rep, lambda s: resolver.resolve(s))
    idx = match.UniversityIndex.build(unis, match.load_university_aliases(UNIVERSITY_ALIASES_FILE))

    def run(records):
        texts = pd.Series({r["id"]: r["response"] for r in records})
        items = understanding.parse_responses(texts, understanding.is_country_fn(resolver))
        return understanding.match_items(items, resolver, idx)

    return run


@pytest.mark.parametrize(
    ("fixture", "min_responses", "min_items", "min_correct"),
    [
        ("eval_responses.jsonl", 60, 150, 0.95),
        ("eval_holdout.jsonl", 60, 150, 0.95),
        # the built-in model's own answers (30 prompts, hand-labelled): 86.6% when the set was added,
        # 97.6% after matcher match-3 fixed the causes of its errors (docs/parse_match.md)
        ("eval_builtin.jsonl", 30, 75, 0.95),
    ],
)
def test_accuracy_at_least_95_percent(pipeline, fixture, min_responses, min_items, min_correct):
    records = [
        json.loads(line) for line in (FIXTURES / fixture).read_text(encoding="utf-8").splitlines() if line.strip()
    ]
    assert len(records) >= min_responses
    items = pipeline(records)
    scored = evaluation.score_items(records, items)
    statuses = evaluation.score_statuses(records, items)
    assert len(scored) >= min_items
    assert scored["correct"].mean() >= min_correct, scored[~scored["correct"]].to_string()
    assert statuses["correct"].mean() >= 0.9, statuses[~statuses["correct"]].to_string()
