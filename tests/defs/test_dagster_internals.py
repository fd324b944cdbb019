"""The Dagster APIs the sensors use that are not public (fairness_assets/defs/operations/dagster_internals.py),
each called on a real instance: a Dagster upgrade that moves, renames or changes one fails here,
naming the function. And the public replacements of what used to be private: the cron validation
of FAIRNESS_REAUDIT_CRON and the partition-name check."""

from __future__ import annotations

import re
import sys
import time
from pathlib import Path

import dagster as dg
import pytest

from fairness_assets.defs.operations import dagster_internals as internals

ROOT = Path(__file__).resolve().parents[2]
PRIVATE_PREFIX = "dagster._"


@dg.asset(check_specs=[dg.AssetCheckSpec("positive", asset="numbers", blocking=False)])
def numbers():
    yield dg.Output(1)
    yield dg.AssetCheckResult(passed=False, metadata={"observed": -1})


@pytest.fixture
def instance(tmp_path):
    """The default local instance, as `dagster dev` has it (run-sharded SQLite event log)."""
    with dg.DagsterInstance.local_temp(str(tmp_path)) as inst:
        yield inst


def test_check_execution_page_reads_the_history_newest_first_and_pages_by_id(instance):
    runs = [dg.materialize([numbers], instance=instance).run_id for _ in range(3)]
    key = dg.AssetCheckKey(dg.AssetKey("numbers"), "positive")
    newest = internals.check_execution_page(instance, key, 2, None)
    assert [r.run_id for r in newest] == runs[:0:-1]
    rest = internals.check_execution_page(instance, key, 10, newest[-1].id)
    assert [r.run_id for r in rest] == runs[:1] and rest[0].id < newest[-1].id
    record = newest[0]
    # what parse_quality_alert reads of a record
    assert record.status.value == "FAILED" and record.partition is None
    evaluation = record.evaluation
    assert evaluation.passed is False and evaluation.check_name == "positive" and not evaluation.blocking
    assert evaluation.asset_key == dg.AssetKey("numbers") and evaluation.metadata["observed"].value == -1
    assert evaluation.severity.value == "ERROR"


def test_code_location_origin_is_none_outside_the_daemon():
    with dg.build_sensor_context() as context:
        assert internals.code_location_origin(context) is None


def test_instigator_ids_stored_states_and_failed_ticks(instance):
    from dagster._core.remote_origin import ManagedGrpcPythonEnvCodeLocationOrigin, RemoteRepositoryOrigin
    from dagster._core.scheduler.instigation import (
        InstigatorState,
        InstigatorStatus,
        InstigatorType,
        ScheduleInstigatorData,
        TickData,
        TickStatus,
    )
    from dagster._core.types.loadable_target_origin import LoadableTargetOrigin
    from dagster._utils.error import serializable_error_info_from_exc_info

    try:
        raise ValueError("the tick's error")
    except ValueError:
        error = serializable_error_info_from_exc_info(sys.exc_info())
    origin = ManagedGrpcPythonEnvCodeLocationOrigin(
        LoadableTargetOrigin(
            executable_path=sys.executable, module_name="fairness_assets.definitions", working_directory=str(ROOT)
        ),
        "fairness-audit",
    )
    origin_id, selector_id = internals.instigator_ids(origin, "__repository__", "reaudit_schedule")
    # the ids Dagster stores a schedule's state (and its ticks) under
    state = InstigatorState(
        RemoteRepositoryOrigin(origin, "__repository__").get_instigator_origin("reaudit_schedule"),
        InstigatorType.SCHEDULE,
        InstigatorStatus.RUNNING,
        ScheduleInstigatorData("0 6 * * 1", time.time() - 86400),
    )
    assert (origin_id, selector_id) == (state.instigator_origin_id, state.selector_id) and origin_id != selector_id
    assert internals.instigator_ids(origin, "__repository__", "other") != (origin_id, selector_id)

    instance.add_instigator_state(state)
    stored = [s for s in internals.stored_instigators(instance) if s.instigator_name == "reaudit_schedule"]
    assert len(stored) == 1
    assert (stored[0].instigator_origin_id, stored[0].selector_id) == (origin_id, selector_id)
    assert stored[0].origin.location_name == "fairness-audit"
    assert stored[0].origin.repository_origin.repository_name == "__repository__"

    for status, when in ((TickStatus.FAILURE, 100.0), (TickStatus.SUCCESS, 200.0), (TickStatus.FAILURE, 300.0)):
        instance.create_tick(
            TickData(
                instigator_origin_id=origin_id,
                instigator_name="reaudit_schedule",
                instigator_type=InstigatorType.SCHEDULE,
                status=status,
                timestamp=when,
                selector_id=selector_id,
                run_ids=["r1"] if when == 300.0 else [],
                error=error if status == TickStatus.FAILURE else None,
            )
        )
    failed = internals.failed_ticks(instance, origin_id, selector_id, 10)
    assert [t.timestamp for t in failed] == [300.0, 100.0]  # newest first, failures only
    assert failed[0].tick_id > failed[1].tick_id and failed[0].tick_data.run_ids == ["r1"]
    assert failed[0].error.cls_name == "ValueError" and "the tick's error" in failed[0].error.message
    assert len(internals.failed_ticks(instance, origin_id, selector_id, 1)) == 1


def test_private_dagster_imports_are_only_in_dagster_internals():
    """Product code imports no ``dagster._`` module outside dagster_internals.py (local/ included: it
    reads a run's failures from the in-process result's public ``all_events``)."""
    allowed = {ROOT / "fairness_assets" / "defs" / "operations" / "dagster_internals.py"}
    found = []
    for folder in ("fairness_assets", "resources", "expectations"):
        for path in sorted((ROOT / folder).rglob("*.py")):
            if path in allowed:
                continue
            for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
                code = line.split("#", 1)[0]
                if PRIVATE_PREFIX in code and ("import" in code or "from" in code):
                    found.append(f"{path.relative_to(ROOT)}:{number}: {line.strip()}")
    assert not found, "private Dagster imports outside dagster_internals.py:\n" + "\n".join(found)


# instance methods and names Dagster does not mark public (they are not ``dagster._`` imports, so
# the test above cannot see them): each may be used in dagster_internals.py only
NOT_PUBLIC = (".all_logs(", ".get_runs(", "__ephemeral_asset_job__", ".event_log_storage", ".get_backfills(")


def test_non_public_dagster_methods_are_only_in_dagster_internals():
    """No product file outside dagster_internals.py calls a Dagster instance method that is not public
    (``all_logs``, ``get_runs``: use ``result.all_events`` and ``get_run_records``) or names Dagster's
    internal ephemeral job."""
    allowed = ROOT / "fairness_assets" / "defs" / "operations" / "dagster_internals.py"
    found = []
    for folder in ("fairness_assets", "resources", "expectations"):
        for path in sorted((ROOT / folder).rglob("*.py")):
            if path == allowed:
                continue
            for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
                code = line.split("#", 1)[0]
                found += [f"{path.relative_to(ROOT)}:{number}: {name}" for name in NOT_PUBLIC if name in code]
    assert not found, "non-public Dagster APIs outside dagster_internals.py:\n" + "\n".join(found)


@pytest.mark.parametrize(
    "cron, valid",
    [
        ("0 6 * * 1", True),
        ("0 6 * * mon", True),
        ("@daily", True),
        ("*/15 * * * *", True),
        ("61 * * * *", False),
        ("0 0 30 2 *", False),
        ("* * * * * *", False),
        ("every monday", False),
        ("", False),
    ],
)
def test_reaudit_cron_is_validated_as_a_dagster_schedule_accepts_it(monkeypatch, cron, valid):
    from resources.settings import ConfigError, load_settings

    monkeypatch.setenv("FAIRNESS_REAUDIT_CRON", cron)
    if not cron:  # empty counts as unset: the default
        assert load_settings().reaudit_cron == "0 6 * * 1"
        return
    if valid:
        assert load_settings().reaudit_cron == cron
        dg.ScheduleDefinition(name="s", cron_schedule=cron, job_name="j")  # Dagster accepts it too
    else:
        with pytest.raises(
            ConfigError, match=re.escape(f"FAIRNESS_REAUDIT_CRON={cron!r}: ") + ".*not a valid cron string"
        ):
            load_settings()


@pytest.mark.parametrize(
    "name, problem",
    [
        ("good-model", None),
        ("v1...v2", "'...'"),
        ("tab\there", "'\\t'"),
        ("nul\x00", "'\\x00'"),
        ("a|b", "separates model and template"),
    ],
)
def test_partition_names_dagster_refuses_are_named(name, problem):
    from fairness_assets.defs.partitions import dagster_refuses, partition_name_problem

    found = partition_name_problem(name)
    if problem is None:
        assert found is None and dagster_refuses(name) is None
    else:
        assert problem in found, found
    if "|" not in name and problem is not None:
        assert dagster_refuses(name)  # Dagster's own check is what decides
        with pytest.raises(dg.DagsterInvalidDefinitionError):
            dg.StaticPartitionsDefinition([name])
