"""Model partitions that cannot be audited (issue 19 item 4): a name with '|' (the UI's "Add a
partition" accepts `bad|name`, but no partition key can hold it) or a model the audit's source
does not have (the responses file when one is set, else the registry). The re-audit schedule
skips them and runs the others, the invalid_partition_alert sensor alerts once on each with how
to delete it, and the deletion it
describes works (the Python one-liner, and the UI's Delete partitions dialog's GraphQL calls).

Everything runs on a real instance folder (SQLite storage, as `dagster dev` gets), never on
DagsterInstance.ephemeral(); the slow test runs the schedule and the sensor the way the daemons
do, from the code location in workspace.yaml served by a gRPC code server.
"""

from __future__ import annotations

import datetime as dt
import json
import logging
import os
import re
import subprocess

import dagster as dg
import pytest

from fairness_assets.defs.operations import schedules
from fairness_assets.defs.operations.sensors import invalid_partition_alert
from fairness_assets.defs.partitions import MODEL_PARTITIONS, invalid_models, known_models
from fairness_assets.local import OFFLINE_INSTANCE_YAML
from resources.alerts import AlertResource
from resources.settings import AuditGridResource, GenerationSourceResource
from tests.helpers.pipeline import DEMO_MODEL, DEMO_RESPONSES, ROOT
from tests.helpers.servers import Receiver

TICK = dt.datetime(2026, 11, 30, 6, 0, tzinfo=dt.timezone.utc)
BAD = "bad|name"


def write_registry(path, *models):
    path.write_text("models:\n" + "".join(f"  {m}:\n    source: org/{m}\n" for m in models), encoding="utf-8")
    return path


@pytest.fixture
def registry(tmp_path):
    """A model registry with 'good' (and the demo preset's model, which the preset needs)."""
    return write_registry(tmp_path / "models.yaml", DEMO_MODEL, "good")


@pytest.fixture
def home(tmp_path):
    folder = tmp_path / "dagster_home"
    folder.mkdir()
    (folder / "dagster.yaml").write_text(OFFLINE_INSTANCE_YAML)
    return folder


@pytest.fixture
def instance(home):
    with dg.DagsterInstance.from_config(str(home)) as inst:
        assert inst.event_log_storage.is_run_sharded  # the default local instance of `dagster dev`
        yield inst


def grid(registry, **overrides):
    return AuditGridResource(design="demo", model_registry_path=str(registry), **overrides)


def evaluate_schedule(instance, resources, log_key=None):
    """One tick of reaudit_schedule as the code server evaluates it (dagster/_grpc/impl.py): the
    function, then Dagster's resolution of every run request against the job's partitions (which
    failed on 'bad|name'); with ``log_key``, its log is captured as the daemon's tick log is."""
    from dagster._core.execution.build_resources import wrap_resources_for_execution

    from fairness_assets.definitions import defs

    loaded = defs()
    repository = loaded.get_repository_def()
    with dg.ScheduleEvaluationContext(
        instance.get_ref(),
        TICK,
        log_key=log_key,
        repository_name=repository.name,
        schedule_name="reaudit_schedule",
        repository_def=repository,
        resources=wrap_resources_for_execution(resources),
    ) as ctx:
        return loaded.resolve_schedule_def("reaudit_schedule").evaluate_tick(ctx)


def test_reaudit_schedule_runs_the_valid_models_and_names_the_skipped_partition(instance, registry):
    from dagster._core.definitions.instigation_logger import get_instigation_log_records

    instance.add_dynamic_partitions(MODEL_PARTITIONS.name, ["good", BAD])
    resources = {
        "audit_grid": grid(registry, templates=["base", "regional"]),
        "generation_source": GenerationSourceResource(),
    }
    log_key = ["__repository__", "reaudit_schedule", "1"]
    data = evaluate_schedule(instance, resources, log_key)
    assert data.skip_message is None and data.log_key == log_key
    assert sorted(r.partition_key for r in data.run_requests) == ["good|base", "good|regional"]
    for request in data.run_requests:
        assert request.tags["dagster/partition/model"] == "good"
        assert request.tags[schedules.SKIPPED_TAG] == repr(BAD)
    # the tick's log, as the UI shows it
    logged = [
        r["msg"]
        for r in get_instigation_log_records(instance, log_key)
        if BAD in r["msg"] and r["levelname"] == "WARNING"
    ]
    assert len(logged) == 1, get_instigation_log_records(instance, log_key)
    assert "skipped 1 model partition(s) that cannot be audited: 'bad|name': the name contains '|'" in logged[0]
    assert "delete_dynamic_partition('models', 'bad|name')" in logged[0] and "Delete partitions" in logged[0]


def test_reaudit_schedule_skips_when_no_partition_can_be_audited(instance, registry):
    instance.add_dynamic_partitions(MODEL_PARTITIONS.name, [BAD, "ghost"])
    data = evaluate_schedule(instance, {"audit_grid": grid(registry), "generation_source": GenerationSourceResource()})
    assert not data.run_requests
    assert data.skip_message.startswith("no model partition can be re-audited: skipped 2 model partition(s)")
    assert "'bad|name': the name contains '|'" in data.skip_message
    assert f"'ghost': the model is not in the model registry {registry}" in data.skip_message


def test_a_partition_is_valid_when_the_source_the_audit_uses_has_it(tmp_path, registry):
    """With a responses file configured the generations asset imports from the file only, so a
    registered model missing from the file is invalid too (its re-audit would fail there); without
    one, the registry decides."""
    only_good = grid(registry)
    from_file = GenerationSourceResource(responses_path=str(DEMO_RESPONSES))
    without_demo = grid(write_registry(tmp_path / "r2.yaml", "good"), models=["good"])
    known = known_models(without_demo, from_file)
    assert DEMO_MODEL not in known.registry and DEMO_MODEL in known.responses
    problems = invalid_models(["good", DEMO_MODEL, "ghost", BAD], known)
    assert sorted(problems) == [BAD, "ghost", "good"]  # only the demo model is in the file
    assert problems["ghost"] == f"the model is not in the responses file {DEMO_RESPONSES} (FAIRNESS_RESPONSES)"
    assert "it is in the model registry" in problems["good"]
    assert invalid_models(["good"], known_models(only_good, GenerationSourceResource())) == {}
    assert sorted(invalid_models(["good", "ghost"], known_models(only_good, GenerationSourceResource()))) == ["ghost"]
    missing = GenerationSourceResource(responses_path=str(tmp_path / "nope.jsonl"))
    with pytest.raises(ValueError, match="nope.jsonl: responses file not found"):
        known_models(only_good, missing)


def alert_posts(webhook):
    return [p["json"] for p in webhook.posts if p["json"]["kind"] == "invalid_partition"]


def evaluate_sensor(instance, registry, hook, cursor=None):
    alerts = AlertResource(channels="webhook", webhook_url=hook.url, ui_base_url="http://ui.example:3000")
    resources = {"alerts": alerts, "audit_grid": grid(registry), "generation_source": GenerationSourceResource()}
    with dg.build_sensor_context(instance=instance, cursor=cursor, resources=resources) as ctx:
        result = invalid_partition_alert(ctx)
        return result, ctx.cursor


def test_invalid_partition_alert_names_each_partition_once_with_the_delete_instructions(instance, registry):
    instance.add_dynamic_partitions(MODEL_PARTITIONS.name, ["good", BAD, "ghost"])
    with Receiver() as hook:
        result, cursor = evaluate_sensor(instance, registry, hook)
        posts = alert_posts(hook)
        assert sorted(p["partition"] for p in posts) == [BAD, "ghost"], result
        bad = next(p for p in posts if p["partition"] == BAD)
        assert bad["title"] == "model partition 'bad|name' cannot be audited"
        assert "the name contains '|'" in bad["summary"] and "re-audit schedule skips it" in bad["summary"]
        for text in (bad["summary"], bad["text"]):  # both ways to delete it, for this very name
            assert "Materialize… (top right) and choose Delete partitions" in text
            assert "delete_dynamic_partition('models', 'bad|name')" in text
        assert bad["url"] == "http://ui.example:3000/assets/generations"
        ghost = next(p for p in posts if p["partition"] == "ghost")
        assert f"the model is not in the model registry {registry}" in ghost["summary"]
        assert "2 model partition(s) cannot be audited ('bad|name', 'ghost'); 2 alert(s) sent" in result.skip_message

        result, cursor = evaluate_sensor(instance, registry, hook, cursor)  # the next tick: nothing again
        assert len(alert_posts(hook)) == 2 and "0 alert(s) sent" in result.skip_message

        # deleted, the partition is forgotten; added again (by mistake), it is alerted again, once
        instance.delete_dynamic_partition(MODEL_PARTITIONS.name, "ghost")
        _, cursor = evaluate_sensor(instance, registry, hook, cursor)
        assert json.loads(cursor)["alerted"] == [BAD]
        instance.add_dynamic_partitions(MODEL_PARTITIONS.name, ["ghost"])
        for _ in range(2):
            _, cursor = evaluate_sensor(instance, registry, hook, cursor)
        assert [p["partition"] for p in alert_posts(hook)] == [BAD, "ghost", "ghost"]


def test_an_undeliverable_partition_alert_fails_the_tick_and_is_sent_later(instance, registry):
    instance.add_dynamic_partitions(MODEL_PARTITIONS.name, [BAD])
    with Receiver(status=500) as down:
        with pytest.raises(Exception, match="not delivered on webhook: .*HTTP 500"):
            evaluate_sensor(instance, registry, down)
    with Receiver() as hook:
        evaluate_sensor(instance, registry, hook)
        assert [p["partition"] for p in alert_posts(hook)] == [BAD]


@pytest.mark.slow  # a Python process importing dagster: about 5 s here
def test_the_delete_command_of_the_alert_deletes_the_partition(home, instance, registry):
    instance.add_dynamic_partitions(MODEL_PARTITIONS.name, ["good", BAD])
    with Receiver() as hook:
        evaluate_sensor(instance, registry, hook)
        command = re.search(r"`(\.venv/bin/python -c .*?)`", alert_posts(hook)[0]["summary"]).group(1)
    done = subprocess.run(
        ["bash", "-c", command],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
        env={**os.environ, "DAGSTER_HOME": str(home)},
    )
    assert done.returncode == 0, done.stderr
    assert instance.get_dynamic_partitions(MODEL_PARTITIONS.name) == ["good"]


# --- as the daemons run them ------------------------------------------------------------------

HEALTH = """
query PartitionHealthQuery($assetKey: AssetKeyInput!) {
  assetNodeOrError(assetKey: $assetKey) {
    ... on AssetNode {
      partitionKeysByDimension { name partitionKeys }
      assetPartitionStatuses {
        ... on MultiPartitionStatuses { primaryDimensionName ranges { primaryDimStartKey primaryDimEndKey } }
      }
    }
  }
}
"""
# the mutation of the UI's "Delete partitions" dialog (Dagster 1.13, useDeleteDynamicPartitionsDialog)
DELETE = """
mutation DeleteDynamicPartitionsMutation($partitionKeys: [String!]!, $partitionsDefName: String!,
    $repositorySelector: RepositorySelector!, $wipeMaterializations: Boolean) {
  deleteDynamicPartitions(partitionKeys: $partitionKeys, partitionsDefName: $partitionsDefName,
      repositorySelector: $repositorySelector, wipeMaterializations: $wipeMaterializations) {
    __typename
    ... on UnauthorizedError { message }
    ... on UnsupportedOperationError { message }
    ... on PythonError { message }
  }
}
"""


@pytest.mark.slow
def test_in_the_daemon_the_schedule_runs_the_valid_models_and_the_ui_deletes_the_bad_one(
    tmp_path, home, registry, monkeypatch
):
    """reaudit_schedule ticked by the scheduler daemon's code (runs queued, not launched), the
    partition sensor by the sensor daemon's, then the partition deleted through the UI's GraphQL."""
    from dagster._core.scheduler.instigation import TickStatus
    from dagster._core.test_utils import create_test_daemon_workspace_context
    from dagster._core.workspace.load_target import WorkspaceFileTarget
    from dagster._scheduler.scheduler import launch_scheduled_runs
    from dagster_graphql.test.utils import execute_dagster_graphql

    from tests.defs.test_alert_sensors import LOCATION, tick

    (home / "dagster.yaml").write_text(
        OFFLINE_INSTANCE_YAML + "run_coordinator:\n"
        "  module: dagster.core.run_coordinator\n  class: QueuedRunCoordinator\n"
    )
    with Receiver() as hook:
        for var, value in {
            "DAGSTER_HOME": str(home),
            "FAIRNESS_MODEL_REGISTRY": str(registry),
            "FAIRNESS_ALERT_CHANNELS": "webhook",
            "FAIRNESS_ALERT_WEBHOOK_URL": hook.url,
            "FAIRNESS_HOME": str(tmp_path / "fairness_home"),
        }.items():
            monkeypatch.setenv(var, value)  # the code server reads them when it starts
        for var in ("FAIRNESS_RESPONSES", "FAIRNESS_DESIGN", "FAIRNESS_DATABASE_URL"):
            monkeypatch.delenv(var, raising=False)
        with (
            dg.DagsterInstance.from_config(str(home)) as instance,
            create_test_daemon_workspace_context(
                WorkspaceFileTarget([str(ROOT / "workspace.yaml")]), instance
            ) as daemon,
        ):
            instance.add_dynamic_partitions(MODEL_PARTITIONS.name, ["good", BAD])
            location = daemon.create_request_context().get_code_location(LOCATION)
            schedule = location.get_repository("__repository__").get_schedule("reaudit_schedule")
            instance.start_schedule(schedule)

            def schedule_tick(days):
                end = dt.datetime.now(dt.timezone.utc) + dt.timedelta(days=days)
                list(
                    launch_scheduled_runs(
                        daemon, logging.getLogger("scheduler-test"), end_datetime_utc=end, iteration_times={}
                    )
                )
                return instance.get_ticks(schedule.get_remote_origin_id(), schedule.selector_id, limit=1)[0]

            t = schedule_tick(7)
            assert t.status == TickStatus.SUCCESS, t.error
            runs = instance.get_runs()
            assert [r.tags["dagster/partition"] for r in runs] == ["good|base"]
            assert runs[0].tags[schedules.SKIPPED_TAG] == repr(BAD) and t.run_ids == [runs[0].run_id]
            log = instance.compute_log_manager.get_log_data(t.log_key)  # the tick's log in the UI
            assert "skipped 1 model partition(s) that cannot be audited: 'bad|name'" in log.stderr.decode()

            s = tick(daemon, instance, "invalid_partition_alert")
            assert s.status == TickStatus.SKIPPED, s.error
            assert [p["partition"] for p in alert_posts(hook)] == [BAD]
            assert tick(daemon, instance, "invalid_partition_alert").status == TickStatus.SKIPPED
            assert len(alert_posts(hook)) == 1  # once

            # the UI's Delete partitions dialog: its partition query and its mutation work with the name
            context = daemon.create_request_context()
            health = execute_dagster_graphql(context, HEALTH, {"assetKey": {"path": ["generations"]}})
            assert health.errors is None
            dims = {d["name"]: d["partitionKeys"] for d in health.data["assetNodeOrError"]["partitionKeysByDimension"]}
            # the sensor ticks of the daemon also ran model_partitions_sync, which added the registry's other model
            assert dims["model"] == ["good", BAD, DEMO_MODEL]
            deleted = execute_dagster_graphql(
                context,
                DELETE,
                {
                    "partitionKeys": [BAD],
                    "partitionsDefName": "models",
                    "wipeMaterializations": False,
                    "repositorySelector": {"repositoryLocationName": LOCATION, "repositoryName": "__repository__"},
                },
            )
            assert deleted.data["deleteDynamicPartitions"]["__typename"] == "DeleteDynamicPartitionsSuccess", deleted
            assert instance.get_dynamic_partitions(MODEL_PARTITIONS.name) == ["good", DEMO_MODEL]

            t = schedule_tick(14)  # the next week: nothing skipped any more
            assert t.status == TickStatus.SUCCESS, t.error
            newest = [instance.get_run_by_id(run_id) for run_id in t.run_ids]
            assert sorted(r.tags["dagster/partition"] for r in newest) == ["good|base", f"{DEMO_MODEL}|base"]
            assert not any(schedules.SKIPPED_TAG in r.tags for r in newest)
