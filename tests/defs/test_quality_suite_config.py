"""``ParseQualityResource.suite`` and the declared asset checks cannot disagree (issue 25): the
checks of ``recommendations`` are declared from expectations/suites/recommendations_quality.json
when the code location loads; a configured suite that produces other checks, or other blocking
flags, fails the step before any work, naming the suite, the checks expected and the ones found.
One that produces the same checks (other thresholds) is the suite the checks run."""

from __future__ import annotations

import json
import re

import dagster as dg
import pytest

from expectations.runner import SUITES_DIR
from fairness_assets.core.common.partition import PartitionKey
from fairness_assets.defs.generation import assets as gen
from fairness_assets.defs.partitions import MODEL_PARTITIONS
from fairness_assets.defs.reference import assets as ref
from fairness_assets.defs.services import parse_quality_suite
from fairness_assets.defs.understanding import assets as und
from resources import database as D
from resources.llm.resource import LLMResource
from resources.settings import AuditGridResource, GenerationSourceResource, ParseQualityResource, ReferenceDataResource
from resources.tagger import SubjectTaggerResource

DEFAULT = json.loads((SUITES_DIR / "recommendations_quality.json").read_text(encoding="utf-8"))
GOOD = json.dumps(
    [
        {"university": "MIT", "program": "MSc Computer Science", "country": "USA"},
        {"university": "University of Lagos", "program": "MBA", "country": "Nigeria"},
        {"university": "UCL", "program": "MSc Public Health", "country": "UK"},
    ]
)


def _suite(tmp_path, name: str, edit) -> str:
    suite = json.loads(json.dumps(DEFAULT))
    edit(suite)
    path = tmp_path / f"{name}.json"
    path.write_text(json.dumps(suite), encoding="utf-8")
    return str(path)


def _drop(name):
    return lambda s: s.update(checks=[c for c in s["checks"] if c["name"] != name])


def _flip(name):
    return lambda s: [c.update(blocking=not c.get("blocking")) for c in s["checks"] if c["name"] == name]


def _add(s):
    s["checks"].append({**s["checks"][0], "name": "parse_rate_strict", "blocking": False})


def test_the_declared_checks_are_those_of_the_default_suite():
    assert und.DECLARED_CHECKS == {c["name"]: bool(c.get("blocking")) for c in DEFAULT["checks"]}
    assert [s.name for s in und.CHECK_SPECS] == list(und.DECLARED_CHECKS)
    assert parse_quality_suite(ParseQualityResource(), und.DECLARED_CHECKS)["name"] == DEFAULT["name"]


@pytest.mark.parametrize(
    "edit, difference",
    [
        (_drop("match_rate"), "missing: match_rate"),
        (_add, "not declared: parse_rate_strict"),
        (_flip("three_items_share"), "blocking differs: three_items_share"),
        (_flip("parse_rate"), "blocking differs: parse_rate"),
    ],
)
def test_a_suite_with_other_checks_is_refused_naming_the_suite_and_both_lists(tmp_path, edit, difference):
    path = _suite(tmp_path, "other", edit)
    with pytest.raises(ValueError) as err:
        parse_quality_suite(ParseQualityResource(suite=path), und.DECLARED_CHECKS)
    message = str(err.value)
    assert f"parse_quality.suite {path!r}" in message and difference in message
    expected = re.search(r"Expected: (.*?)\. Found: (.*?)\. Differences: ", message)
    assert expected, message
    assert expected.group(1).split(", ") == [f"{n} (blocking)" if b else n for n, b in und.DECLARED_CHECKS.items()]
    found = json.loads(open(path, encoding="utf-8").read())["checks"]
    assert expected.group(2).split(", ") == [
        f"{c['name']} (blocking)" if c.get("blocking") else c["name"] for c in found
    ]


def test_an_unknown_suite_is_named(tmp_path):
    with pytest.raises(ValueError, match=re.escape("parse_quality.suite 'no_such_suite': expectation suite ")):
        parse_quality_suite(ParseQualityResource(suite="no_such_suite"), und.DECLARED_CHECKS)


def _run(tmp_path, **quality):
    instance = dg.DagsterInstance.ephemeral()
    instance.add_dynamic_partitions(MODEL_PARTITIONS.name, ["m1"])
    rows = [
        {
            "model": "m1",
            "template": "base",
            "gender": ["male", "female", "transgender"][i % 3],
            "economic_class": ["high", "low"][(i // 3) % 2],
            "nationality": ["Nigeria", "India"][(i // 6) % 2],
            "run": i // 12,
            "response": GOOD,
        }
        for i in range(12)
    ]
    responses = tmp_path / "responses.jsonl"
    responses.write_text("\n".join(json.dumps(r) for r in rows))
    database = D.ResultsDatabase(url=f"sqlite:///{tmp_path / 'r.db'}")
    result = dg.materialize(
        [ref.qs_corpus, ref.profiles, ref.prompts, gen.generations, und.recommendations],
        instance=instance,
        partition_key=str(PartitionKey("m1", "base")),
        raise_on_error=False,
        resources={
            "database": database,
            "results_io": D.SQLResultsIOManager(database=database),
            "reference": ReferenceDataResource(),
            "audit_grid": AuditGridResource(),
            "generation_source": GenerationSourceResource(responses_path=str(responses)),
            "subject_tagger": SubjectTaggerResource(),
            "parse_quality": ParseQualityResource(**quality),
            "llm": LLMResource(),
        },
    )
    database.dispose()
    return result


def test_a_suite_of_the_declared_checks_with_other_thresholds_is_the_one_the_checks_run(tmp_path):
    # every answer has three items: a three-item share above 1 cannot be met (the default 0.5 is)
    path = _suite(tmp_path, "strict", lambda s: s["defaults"].update(min_three_items_share=1.01))
    result = _run(tmp_path, suite=path)
    assert result.success  # not blocking
    checks = {c.check_name: c for c in result.get_asset_check_evaluations()}
    assert sorted(checks) == sorted(und.DECLARED_CHECKS)
    assert checks["three_items_share"].passed is False
    assert checks["three_items_share"].metadata["threshold"].value == pytest.approx(1.01)
    assert all(c.passed for name, c in checks.items() if name != "three_items_share")


def test_a_run_with_a_suite_of_other_checks_fails_before_any_work_naming_it(tmp_path):
    path = _suite(tmp_path, "fewer", _drop("group_match_gap"))
    result = _run(tmp_path, suite=path)
    assert not result.success
    failure = next(e for e in result.all_events if e.is_step_failure and e.step_key == "recommendations")
    message = failure.step_failure_data.error.message
    assert f"parse_quality.suite {path!r}" in message and "missing: group_match_gap" in message
    assert "Expected: parse_rate (blocking), three_items_share" in message
    assert result.get_asset_check_evaluations() == []  # no check result of a suite that is not the declared one
    assert "recommendations" not in {e.asset_key.to_user_string() for e in result.get_asset_materialization_events()}
