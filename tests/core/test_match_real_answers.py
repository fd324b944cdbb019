"""Precision and recall of the matcher on real answers of 13 open models with hand labels
(../shared/data/external, README.md there; never copied into the repository), through the path
of ``fairness-audit score`` on already-split items. Targets of issue 14, all 20 positions:
precision >= 99.98%, recall >= 99.5% of the items that have a QS 2024 entry. The figures are in
docs/parse_match.md (benchmarks/eval_parse_match.py)."""

import os
from pathlib import Path

import pytest

from benchmarks import evaluation
from fairness_assets.core.reference import corpus, geo
from fairness_assets.core.understanding import match, parse
from resources.settings import ALIASES_FILE, UNIVERSITY_ALIASES_FILE

ROOT = Path(__file__).resolve().parents[2]
EXTERNAL = Path(os.environ.get("FAIRNESS_TEST_EXTERNAL", ROOT.parent / "shared" / "data" / "external"))


@pytest.fixture(scope="module")
def external():
    if not (EXTERNAL / evaluation.EXTERNAL_ITEMS).exists():
        pytest.skip(
            f"the external model answers are not at {EXTERNAL} (they are never committed: no license); "
            "set FAIRNESS_TEST_EXTERNAL to a copy to run this test"
        )
    return EXTERNAL


@pytest.fixture(scope="module")
def scored(external, qs_export):
    resolver = geo.CountryResolver(geo.load_aliases(ALIASES_FILE))
    unis, _, _ = corpus.load_corpus(qs_export, resolver.resolve)
    idx = match.UniversityIndex.build(unis, match.load_university_aliases(UNIVERSITY_ALIASES_FILE))
    recs = evaluation.match_external(external, resolver, idx)
    summary, rows = evaluation.score_external(recs, evaluation.load_external_labels(external), unis["name"])
    return summary, rows, recs


def test_every_item_is_scored_and_labelled(scored):
    summary, _, recs = scored
    assert summary["items"] == 5720 and len(recs) == 5720
    assert summary["unlabelled"] == 0


def test_precision_target(scored):
    summary, rows, _ = scored
    wrong = rows[(rows["kind"] != "questionable") & rows["matched"] & ~rows["correct"]]
    assert summary["precision"] >= 0.9998, wrong.value_counts(
        ["university_text", "expected", "matched_name"], dropna=False
    )


def test_recall_target(scored):
    summary, rows, _ = scored
    missed = rows[(rows["kind"] == "target") & ~rows["correct"]]
    assert summary["recall"] >= 0.995, missed.value_counts(
        ["university_text", "expected", "matched_name"], dropna=False
    )


def test_parser_reads_the_real_answers_as_their_items(external):
    """The 286 whole answers parse into exactly their first three lines, without programs
    ("ETH Zurich - Swiss Federal Institute of Technology" is one name, not a name and a program)."""
    import json

    resolver = geo.CountryResolver(geo.load_aliases(ALIASES_FILE))
    is_country = lambda t: resolver.iso3(t) is not None  # noqa: E731
    answers = [
        json.loads(x)
        for x in (external / evaluation.EXTERNAL_RESPONSES).read_text(encoding="utf-8").splitlines()
        if x.strip()
    ]
    items = [
        json.loads(x)
        for x in (external / "biais_llm_rec_items.jsonl").read_text(encoding="utf-8").splitlines()
        if x.strip()
    ]
    first = {}
    for it in items:
        key = (it["model"], it["template"], it.get("nationality") or it.get("gender"), it["run"])
        if it["item_index"] < parse.MAX_ITEMS:
            first.setdefault(key, {})[it["item_index"]] = parse.clean(it["university"])
    bad = []
    for a in answers:
        key = (a["model"], a["template"], a.get("nationality") or a.get("gender"), a["run"])
        res = parse.parse_response(a["response"], is_country)
        want = [first[key][i] for i in sorted(first[key])]
        if [i.university for i in res.items] != want or any(i.program for i in res.items):
            bad.append((key, [(i.university, i.program) for i in res.items]))
    assert bad == []
