"""The report of a backfill in which some partitions failed (issue 32.5): a backfill is one run per
partition, and Dagster builds the assets that span partitions only once every partition is
materialized, so the ``backfill_report`` sensor asks for one ``audit_report_job`` run per such
backfill, over what is stored. Backfills and runs are stored on a real instance, as the daemon
stores them; the UI journey (tests/e2e/test_new_user_journey.py) sees the sensor's run end to end."""

from __future__ import annotations

import time

import dagster as dg
import pytest

from fairness_assets.defs.operations import dagster_internals as internals
from fairness_assets.defs.operations.sensors import BACKFILL_REPORT_TAG, backfill_report, backfill_report_requests


@pytest.fixture
def instance(tmp_path):
    with dg.DagsterInstance.local_temp(str(tmp_path)) as inst:
        yield inst


def add_backfill(instance, backfill_id: str, assets, status: str = "COMPLETED_FAILED"):
    from dagster._core.definitions.assets.graph.asset_graph_subset import AssetGraphSubset
    from dagster._core.execution.backfill import BulkActionStatus, PartitionBackfill

    backfill = PartitionBackfill.from_asset_graph_subset(
        backfill_id=backfill_id,
        backfill_timestamp=time.time(),
        tags={},
        dynamic_partitions_store=instance,
        asset_graph_subset=AssetGraphSubset.create_empty_subset(),
        title=None,
        description=None,
        run_config=None,
    )
    instance.add_backfill(
        backfill._replace(asset_selection=[dg.AssetKey(a) for a in assets], status=BulkActionStatus(status))
    )


def add_run(instance, backfill_id: str, assets, status: str, partition: str | None = None):
    from dagster._core.test_utils import create_run_for_test

    tags = {"dagster/backfill": backfill_id, **({"dagster/partition": partition} if partition else {})}
    return create_run_for_test(
        instance,
        job_name="__ASSET_JOB",
        tags=tags,
        status=dg.DagsterRunStatus(status),
        asset_selection=frozenset(dg.AssetKey(a) for a in assets),
    )


EVERYTHING = ["generations", "recommendations", "base_vs_regional", "audit_report"]


def test_a_backfill_whose_failed_partitions_left_the_report_unbuilt_gets_one_report_run(instance):
    add_backfill(instance, "partial", EVERYTHING)
    add_run(instance, "partial", ["generations", "recommendations"], "SUCCESS", "m|base")
    add_run(instance, "partial", ["generations", "recommendations"], "FAILURE", "m|academic")
    assert internals.backfills_with_failures(instance, 10) == [("partial", set(EVERYTHING))]
    requests, _ = backfill_report_requests(instance)
    assert [(r.run_key, r.tags) for r in requests] == [("backfill-report-partial", {BACKFILL_REPORT_TAG: "partial"})]
    # through the sensor as the daemon evaluates it
    with dg.build_sensor_context(instance=instance) as context:
        result = backfill_report(context)
    assert [r.run_key for r in result] == ["backfill-report-partial"]


@pytest.mark.parametrize(
    "case",
    [
        "report built in the backfill",
        "report failed in the backfill",
        "no partition stored",
        "no cross-partition asset targeted",
        "succeeded",
    ],
)
def test_no_report_run_when_the_backfill_built_it_stored_nothing_or_did_not_ask_for_it(instance, case):
    assets = EVERYTHING if case != "no cross-partition asset targeted" else ["generations", "recommendations"]
    add_backfill(instance, "b1", assets, "COMPLETED_SUCCESS" if case == "succeeded" else "COMPLETED_FAILED")
    add_run(instance, "b1", ["generations"], "FAILURE", "m|academic")
    if case != "no partition stored":
        add_run(instance, "b1", ["generations"], "SUCCESS", "m|base")
    if case.startswith("report"):  # its failure is the backfill's own: not run again
        add_run(instance, "b1", ["base_vs_regional", "audit_report"], "SUCCESS" if "built" in case else "FAILURE")
    requests, why = backfill_report_requests(instance)
    assert requests == []
    with dg.build_sensor_context(instance=instance) as context:
        skipped = backfill_report(context)
    assert isinstance(skipped, dg.SkipReason) and skipped.skip_message == why
    assert "without its report" in why
