"""The report's parse-quality table is the recorded evaluations of the ``recommendations`` checks
(issue 25): read from the Dagster instance per partition, never recomputed, "not evaluated" where
the checks have not run; on the UI's runs of one partition and on the partition-range runs of
``fairness-audit score``. And ``dagster_internals.check_evaluation_page``, the private read it uses,
on a real instance."""

from __future__ import annotations

import re
from pathlib import Path

import dagster as dg
import pandas as pd
import pytest

from fairness_assets.defs.operations import dagster_internals as internals
from fairness_assets.defs.reporting import assets as reporting
from fairness_assets.defs.services import NOT_RUN, QUALITY_OUTCOMES_KEY, RecordedQuality
from fairness_assets.defs.understanding.assets import CHECK_SPECS
from resources import database as D
from resources.settings import DATA_DIR, DEMO_CORPUS, ParseQualityResource
from tests.helpers.pipeline import ASSETS, DEMO_KEY, DEMO_RESPONSES, audit, resources

CHECKS = [s.name for s in CHECK_SPECS]
PARTS = dg.StaticPartitionsDefinition(["a", "b", "c"])


@dg.asset(
    partitions_def=PARTS,
    backfill_policy=dg.BackfillPolicy.single_run(),
    check_specs=[dg.AssetCheckSpec("ok", asset="x", partitions_def=PARTS)],
)
def x(context) -> None:
    yield dg.MaterializeResult()
    yield dg.AssetCheckResult(
        passed=len(context.partition_keys) == 1, metadata={"keys": ",".join(context.partition_keys)}
    )


def _range(start: str, end: str) -> dict:
    return {"dagster/asset_partition_range_start": start, "dagster/asset_partition_range_end": end}


def test_check_evaluation_page_reads_one_partition_or_the_range_runs_evaluated_only(tmp_path):
    key = dg.AssetCheckKey(dg.AssetKey("x"), "ok")
    with dg.DagsterInstance.local_temp(str(tmp_path)) as instance:  # the run-sharded SQLite of `dagster dev`
        one = dg.materialize([x], instance=instance, partition_key="a").run_id
        span = dg.materialize([x], instance=instance, tags=_range("a", "c")).run_id
        single_range = dg.materialize([x], instance=instance, tags=_range("b", "b")).run_id
        own = internals.check_evaluation_page(instance, key, "a", 10, None)
        assert [(r.run_id, r.partition, r.status.value) for r in own] == [(one, "a", "SUCCEEDED")]
        assert own[0].evaluation.passed and own[0].event.timestamp > 0
        # a range run records its evaluation once, with no partition (its rows for a..c stay PLANNED)
        ranged = internals.check_evaluation_page(instance, key, None, 10, None)
        assert [r.run_id for r in ranged] == [single_range, span]  # newest first
        assert [r.evaluation.metadata["keys"].value for r in ranged] == ["b", "a,b,c"]
        assert [r.status.value for r in ranged] == ["SUCCEEDED", "FAILED"]
        assert internals.check_evaluation_page(instance, key, "b", 10, None) == []  # only PLANNED rows for b
        assert [r.run_id for r in internals.check_evaluation_page(instance, key, None, 1, ranged[0].id)] == [span]
        assert len(internals.check_evaluation_page(instance, key, None, 1, None)) == 1


def _quality_rows(markdown: str) -> pd.DataFrame:
    """The parse-quality table of a Markdown report."""
    section = reporting._markdown_section(markdown, "Parse quality").splitlines()
    lines = [line.strip()[1:-1] for line in section if line.startswith("|")]

    def cells(line: str) -> list[str]:  # split on the pipes Markdown does not escape, then unescape
        return [re.sub(r"\\(.)", r"\1", c).strip() for c in re.split(r"(?<!\\)\|", line)]

    return pd.DataFrame([cells(line) for line in lines[2:]], columns=cells(lines[0]))


def _report_markdown(database: D.ResultsDatabase) -> str:
    reports = database.read_rows(D.ReportFile).sort_values("created_at")
    return Path(reports["markdown_path"].iloc[-1]).read_text(encoding="utf-8")


@pytest.fixture(scope="module")
def audited(tmp_path_factory):
    """The demo partition audited with a three-item share threshold it fails (0.99; not blocking):
    its evaluations record the failure, which the suite's default threshold (0.5) would pass."""
    tmp = tmp_path_factory.mktemp("recorded")
    database = D.ResultsDatabase(url=f"sqlite:///{tmp / 'results.db'}")
    instance = dg.DagsterInstance.ephemeral()
    result = audit(instance, database, DEMO_RESPONSES, parse_quality=ParseQualityResource(min_three_items_share=0.99))
    assert result.success, [e.message for e in result.all_events if e.is_failure]
    yield instance, database, result, tmp
    database.dispose()


def test_the_report_shows_the_recorded_evaluations_not_a_recomputation(audited):
    instance, database, result, _ = audited
    recorded = {
        c.check_name: c for c in result.get_asset_check_evaluations() if c.asset_key == dg.AssetKey("recommendations")
    }
    assert sorted(recorded) == sorted(CHECKS)
    assert recorded["three_items_share"].passed is False  # recorded with the run's threshold
    table = _quality_rows(_report_markdown(database))
    assert list(table.columns) == ["partition", "check", "passed", "observed", "threshold", "blocking"]
    assert list(table["check"]) == CHECKS and set(table["partition"]) == {DEMO_KEY}
    for row in table.itertuples(index=False):
        evaluation = recorded[row.check]
        outcome = evaluation.metadata[QUALITY_OUTCOMES_KEY].value[DEMO_KEY]
        assert row.passed == ("PASS" if evaluation.passed else "**FAIL**"), row
        assert outcome["passed"] == evaluation.passed
        if outcome["threshold"] is not None:
            assert float(row.threshold) == pytest.approx(outcome["threshold"], rel=1e-3)
        if outcome["observed"] is not None:
            assert float(row.observed) == pytest.approx(outcome["observed"], rel=1e-3)
    three = table[table["check"] == "three_items_share"].iloc[0]
    assert three["passed"] == "**FAIL**" and float(three["threshold"]) == pytest.approx(0.99)
    meta = result.asset_materializations_for_node("audit_report")[0].metadata
    assert meta["quality_failures"].value == int((~pd.Series([c.passed for c in recorded.values()])).sum()) >= 1
    assert meta["quality_not_evaluated"].value == 0


def test_a_report_with_the_checks_not_run_says_not_evaluated(audited):
    _, database, _, _ = audited
    fresh = dg.DagsterInstance.ephemeral()  # the same results, an instance where no check ever ran
    report = [a for a in ASSETS if dg.AssetKey("audit_report") in a.keys]
    result = dg.materialize(report, instance=fresh, resources=resources(database, DEMO_RESPONSES))
    assert result.success
    table = _quality_rows(_report_markdown(database))
    assert list(table["check"]) == CHECKS and set(table["partition"]) == {DEMO_KEY}
    assert set(table["note"]) == {NOT_RUN}
    assert not table["passed"].str.contains("PASS|FAIL").any()  # neither a pass nor a failure is shown
    assert (table["observed"] == "\u2014").all() or (table["observed"] == "").all()
    meta = result.asset_materializations_for_node("audit_report")[0].metadata
    assert meta["quality_not_evaluated"].value == len(CHECKS) and meta["quality_failures"].value == 0


def test_a_later_evaluation_of_the_partition_replaces_the_earlier_one(audited):
    instance, database, _, _ = audited
    rerun = dg.materialize(
        ASSETS,
        instance=instance,
        partition_key=DEMO_KEY,
        selection=["recommendations"],
        resources=resources(database, DEMO_RESPONSES),
    )  # the default threshold (0.5)
    assert rerun.success
    now = {c.name: c for c in RecordedQuality(instance, CHECK_SPECS).of(DEMO_KEY)}
    assert {c.run_id for c in now.values()} == {rerun.run_id}
    assert now["three_items_share"].passed is True and now["three_items_share"].threshold == pytest.approx(0.5)


def test_checks_missing_for_one_partition_say_not_evaluated_beside_the_recorded_ones(tmp_path):
    """A check with no evaluation for the partition (one of the declared ones) is named as such."""
    from fairness_assets.defs.services import NOT_RECORDED

    key = dg.AssetCheckKey(dg.AssetKey("x"), "ok")
    other = dg.AssetCheckSpec("never", asset="x", partitions_def=PARTS)
    with dg.DagsterInstance.local_temp(str(tmp_path)) as instance:
        dg.materialize([x], instance=instance, partition_key="a")
        checks = [dg.AssetCheckSpec("ok", asset="x", partitions_def=PARTS), other]
        got = RecordedQuality(instance, checks).of("a")
        assert [(c.name, c.passed, c.note) for c in got] == [("ok", True, ""), ("never", None, NOT_RECORDED)]
        assert [c.note for c in RecordedQuality(instance, checks).of("b")] == [NOT_RUN, NOT_RUN]
        assert internals.check_evaluation_page(instance, key, "a", 1, None)[0].partition == "a"


def test_the_score_command_reports_the_evaluations_its_runs_recorded(tmp_path, monkeypatch):
    """``fairness-audit score`` scores in partition-range runs (no evaluation of a single partition):
    its report shows, for each partition, the outcome those runs recorded."""
    from fairness_assets.local import score_responses

    kept: list[dg.DagsterInstance] = []
    ephemeral = dg.DagsterInstance.ephemeral

    def keep(*args, **kwargs):
        kept.append(ephemeral(*args, **kwargs))
        return kept[-1]

    monkeypatch.setattr(dg.DagsterInstance, "ephemeral", staticmethod(keep))
    example = DATA_DIR / "examples" / "worked_example_responses.csv"
    score_responses(str(example), str(DEMO_CORPUS), str(tmp_path / "out"), log=lambda *_: None)
    (instance,) = kept
    table = _quality_rows((tmp_path / "out" / "report.md").read_text(encoding="utf-8"))
    keys = sorted(set(table["partition"]))
    assert keys and all(re.fullmatch(r"example-model\|\w+", k) for k in keys) and "note" not in table.columns
    for check in CHECK_SPECS:
        own = [r for k in keys for r in internals.check_evaluation_page(instance, check.key, k, 10, None)]
        assert own == []  # range runs only: nothing recorded for a single partition
        ranged = internals.check_evaluation_page(instance, check.key, None, 100, None)
        outcomes = {}
        for record in reversed(ranged):  # oldest first: the newest evaluation of a partition wins
            outcomes.update(record.evaluation.metadata[QUALITY_OUTCOMES_KEY].value)
        assert sorted(outcomes) == keys
        rows = table[table["check"] == check.name].set_index("partition")
        for key in keys:
            assert rows.loc[key, "passed"] == ("PASS" if outcomes[key]["passed"] else "**FAIL**"), (check.name, key)
            if outcomes[key]["threshold"] is not None:
                assert float(rows.loc[key, "threshold"]) == pytest.approx(outcomes[key]["threshold"], rel=1e-3)


def test_the_html_count_of_passed_checks_leaves_out_the_checks_not_evaluated():
    from fairness_assets.core.reporting import report as report_core
    from fairness_assets.defs.services import RecordedCheck, quality_frame

    checks = [
        RecordedCheck("parse_rate", True, 0.9, 0.8, True, run_id="r1"),
        RecordedCheck("match_rate", None, None, None, True, note=NOT_RUN),
    ]
    html, _ = report_core.render_report(title="t", quality=quality_frame({"m|base": checks}))
    assert "1 of 2 checks passed; 1 not evaluated." in html and "2 of 2 checks passed" not in html
