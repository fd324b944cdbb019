"""The alert sensors as `dagster dev` runs them: the code location loaded from workspace.yaml in a
gRPC code server, its sensors ticked by Dagster's sensor daemon code, on a real instance — the
default SQLite instance folder (its event log sharded per run) and PostgreSQL instance storage
(deploy/dagster.yaml) — after real pipeline runs, alerts delivered to a real HTTP receiver.

Each `tick` is one iteration of the sensor daemon. The daemon evaluates a sensor at most once a
minimum interval (60 s for parse_quality_alert); instead of waiting, the daemon's record of the
previous tick is moved back past that interval before each iteration.

failed_tick_alert is tested both ways: on tick records stored in a real instance folder under the
ids Dagster derives from an instigator's state (fast), and on ticks the scheduler and sensor daemons
themselves recorded as failed (slow).
"""

from __future__ import annotations

import datetime as dt
import json
import logging
import shutil
import sys
import time

import dagster as dg
import pytest
from dagster._core.scheduler.instigation import InstigatorType, TickStatus
from dagster._core.test_utils import create_test_daemon_workspace_context
from dagster._core.workspace.load_target import WorkspaceFileTarget
from dagster._daemon.run_coordinator.queued_run_coordinator_daemon import QueuedRunCoordinatorDaemon
from dagster._daemon.sensor import execute_sensor_iteration

from fairness_assets.local import OFFLINE_INSTANCE_YAML
from resources import database as D
from tests.helpers.pipeline import DEMO_KEY, DEMO_MODEL, DEMO_RESPONSES, ROOT, audit
from tests.helpers.servers import Receiver

LOCATION = "fairness-audit"  # workspace.yaml
UI_URL = "http://audit-ui.example.org:3000/dagster"


@pytest.fixture
def webhook():
    with Receiver() as receiver:
        yield receiver


@pytest.fixture
def alert_env(monkeypatch, tmp_path, webhook):
    """The alert settings of the code location, read from the environment like in production."""
    monkeypatch.setenv("FAIRNESS_ALERT_CHANNELS", "webhook")
    monkeypatch.setenv("FAIRNESS_ALERT_WEBHOOK_URL", webhook.url)
    monkeypatch.setenv("FAIRNESS_UI_URL", UI_URL + "/")
    monkeypatch.setenv("FAIRNESS_HOME", str(tmp_path / "fairness_home"))
    for var in ("FAIRNESS_DATABASE_URL", "FAIRNESS_QS_CORPUS", "FAIRNESS_DESIGN", "FAIRNESS_RESPONSES"):
        monkeypatch.delenv(var, raising=False)
    return webhook


def sqlite_home(tmp_path, monkeypatch):
    home = tmp_path / "dagster_home"
    home.mkdir()
    (home / "dagster.yaml").write_text(OFFLINE_INSTANCE_YAML)  # else the default local instance
    monkeypatch.setenv("DAGSTER_HOME", str(home))
    return home


def postgres_home(tmp_path, monkeypatch, url):
    home = tmp_path / "dagster_home"
    home.mkdir()
    shutil.copy(ROOT / "deploy" / "dagster.yaml", home / "dagster.yaml")
    monkeypatch.setenv("DAGSTER_HOME", str(home))
    monkeypatch.setenv("DAGSTER_PG_URL", url)
    return home


@pytest.fixture(params=["sqlite", pytest.param("postgres", marks=pytest.mark.postgres)])
def instance(request, tmp_path, monkeypatch, alert_env):
    if request.param == "sqlite":
        home = sqlite_home(tmp_path, monkeypatch)
    else:
        home = postgres_home(tmp_path, monkeypatch, request.getfixturevalue("postgres_databases")())
    with dg.DagsterInstance.from_config(str(home)) as inst:
        storage = type(inst.event_log_storage).__name__
        if request.param == "sqlite":  # what `dagster dev` and `fairness-audit demo` get
            assert inst.event_log_storage.is_run_sharded, storage
        else:
            assert storage == "PostgresEventLogStorage", storage
        yield inst


@pytest.fixture
def daemon(instance):
    """The code location from workspace.yaml, served by a gRPC code server as `dagster dev` does."""
    with create_test_daemon_workspace_context(WorkspaceFileTarget([str(ROOT / "workspace.yaml")]), instance) as ctx:
        entry = ctx.create_request_context().get_code_location_entries()[LOCATION]
        assert entry.code_location is not None, entry.load_error
        yield ctx


def tick(daemon, instance, sensor_name):
    """One sensor-daemon iteration over every running sensor; returns `sensor_name`'s newest tick."""
    for state in instance.all_instigator_state(instigator_type=InstigatorType.SENSOR):
        data = state.instigator_data
        if data is not None and (data.last_tick_timestamp or data.last_tick_start_timestamp):
            earlier = {
                f: getattr(data, f) - 3600
                for f in ("last_tick_timestamp", "last_tick_start_timestamp")
                if getattr(data, f)
            }
            instance.update_instigator_state(state.with_data(data._replace(**earlier)))
    list(execute_sensor_iteration(daemon, logging.getLogger("sensor-daemon-test"), None, None))
    state = next(
        s
        for s in instance.all_instigator_state(instigator_type=InstigatorType.SENSOR)
        if s.instigator_name == sensor_name
    )
    return instance.get_ticks(state.instigator_origin_id, state.selector_id, limit=1)[0]


def check_posts(webhook, run_id=None):
    return [
        p["json"]
        for p in webhook.posts
        if p["json"]["kind"] == "check_failure" and (run_id is None or p["json"]["run_id"] == run_id)
    ]


def failed_checks(run) -> list[str]:
    return sorted(c.check_name for c in run.get_asset_check_evaluations() if not c.passed)


@pytest.mark.slow
def test_parse_quality_alert_fires_on_every_tick_in_the_daemon(tmp_path, instance, daemon, webhook):
    db = D.ResultsDatabase(url=f"sqlite:///{tmp_path / 'results.db'}")
    first = audit(instance, db, DEMO_RESPONSES, tags={"fairness/audit_round": "r1"})
    assert first.success and failed_checks(first)  # the demo answers leave a non-blocking gap finding

    # tick 1: the whole history, the first run's failed checks
    t1 = tick(daemon, instance, "parse_quality_alert")
    assert t1.status == TickStatus.SKIPPED, t1.error
    assert sorted(p["check"] for p in check_posts(webhook)) == failed_checks(first)

    # tick 2, after another run whose group_parse_gap check failed: its alert is delivered. A
    # third run failed before its checks ran: they stay planned, never evaluated, and are passed over
    second = audit(instance, db, DEMO_RESPONSES, tags={"fairness/audit_round": "r2"})
    assert "group_parse_gap" in failed_checks(second)
    unchecked = audit(instance, db, DEMO_RESPONSES, key="not-in-the-responses-file|base")
    assert not unchecked.success and not unchecked.get_asset_check_evaluations()
    t2 = tick(daemon, instance, "parse_quality_alert")
    assert t2.status == TickStatus.SKIPPED, t2.error  # not FAILURE (the run-sharded cursor error)
    posts = check_posts(webhook, second.run_id)
    assert sorted(p["check"] for p in posts) == failed_checks(second), t2.skip_reason
    gap = next(p for p in posts if p["check"] == "group_parse_gap")
    assert gap["partition"] == DEMO_KEY and gap["asset"] == "recommendations" and gap["severity"] == "WARN"
    assert gap["url"] == f"{UI_URL}/runs/{second.run_id}"
    assert "group_parse_gap" in gap["text"] and f"partition: {DEMO_KEY}" in gap["text"]
    assert len(check_posts(webhook)) == len(failed_checks(first)) + len(failed_checks(second))

    # tick 3: nothing new, nothing sent again
    t3 = tick(daemon, instance, "parse_quality_alert")
    assert t3.status == TickStatus.SKIPPED and t3.skip_reason == "no new asset-check evaluations", t3.error
    assert len(check_posts(webhook)) == len(failed_checks(first)) + len(failed_checks(second))
    # the cursor holds, per check, the newest record: nothing is left open, not even the planned ones
    cursor = json.loads(t3.cursor)["checks"]
    # every check of the code location: the seven parse-quality checks (no gate file: no release gate checks)
    assert len(cursor) == 7 and not {"model_comparison:release_gate", "sensitivity:release_gate_robust"} & set(cursor)
    for key, state in cursor.items():
        newest = instance.event_log_storage.get_asset_check_execution_history(
            dg.AssetCheckKey.from_user_string(key), limit=1
        )[0]
        assert newest.run_id == unchecked.run_id and newest.status.value == "PLANNED"
        assert state == [newest.id, []], (key, state)


LAUNCH = """
mutation Launch($executionParams: ExecutionParams!) {
  launchPipelineExecution(executionParams: $executionParams) {
    __typename
    ... on LaunchRunSuccess { run { runId } }
    ... on PythonError { message }
    ... on RunConfigValidationInvalid { errors { message } }
  }
}
"""


def launch_from_the_ui(daemon, job: str, tags: dict) -> str:
    """Launch `job` the way the UI's Launchpad does: the GraphQL mutation queues the run, the
    run-queue daemon launches it in a run worker process of the code server. Returns the run id."""
    from dagster_graphql.test.utils import execute_dagster_graphql

    params = {
        "selector": {"repositoryLocationName": LOCATION, "repositoryName": "__repository__", "pipelineName": job},
        "runConfigData": {},
        "executionMetadata": {"tags": [{"key": k, "value": v} for k, v in tags.items()]},
    }
    result = execute_dagster_graphql(daemon.create_request_context(), LAUNCH, {"executionParams": params})
    launched = result.data["launchPipelineExecution"]
    assert launched["__typename"] == "LaunchRunSuccess", launched
    with QueuedRunCoordinatorDaemon(interval_seconds=1) as queue:
        list(queue.run_iteration(daemon))
    return launched["run"]["runId"]


def wait_for(instance, run_id, timeout=300):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        run = instance.get_run_by_id(run_id)
        if run.is_finished:
            return run
        time.sleep(1)
    raise AssertionError(f"run {run_id} did not finish in {timeout} s")


def step_error(instance, run_id) -> tuple[str, str]:
    """(failed step, the first line of its exception's message) of a failed run, from the instance."""
    failures = instance.all_logs(run_id, of_type=dg.DagsterEventType.STEP_FAILURE)
    assert failures, "the run failed outside a step"
    error = failures[0].dagster_event.event_specific_data.error
    return failures[0].dagster_event.step_key, error.message.strip().split(": ", 1)[-1].splitlines()[0]


def run_failure_posts(webhook):
    return [p["json"] for p in webhook.posts if p["json"]["kind"] == "run_failure"]


@pytest.mark.parametrize("instance", ["sqlite"], indirect=True)
@pytest.mark.slow
def test_run_failure_alert_carries_the_error_the_link_and_the_partition(monkeypatch, instance, daemon, webhook):
    monkeypatch.setenv("FAIRNESS_RESPONSES", str(DEMO_RESPONSES))  # the run worker reads it at run time
    monkeypatch.setenv("FAIRNESS_EXECUTOR", "in_process")
    model = "not-in-the-responses-file"
    instance.add_dynamic_partitions("models", [model])
    first = tick(daemon, instance, "run_failure_alert")  # the run-status sensor starts from now
    assert first.status != TickStatus.FAILURE, first.error

    run_id = launch_from_the_ui(daemon, "demo_audit", {"dagster/partition": f"{model}|base"})
    assert wait_for(instance, run_id).status == dg.DagsterRunStatus.FAILURE
    step, cause = step_error(instance, run_id)

    t = tick(daemon, instance, "run_failure_alert")
    assert t.status != TickStatus.FAILURE, t.error
    assert len(run_failure_posts(webhook)) == 1, webhook.posts
    alert = run_failure_posts(webhook)[0]
    assert alert["run_id"] == run_id and alert["job"] == "demo_audit"
    assert alert["partition"] == f"{model}|base"
    assert alert["title"] == f"run of job demo_audit failed [partition {model}|base]"
    assert alert["url"] == f"{UI_URL}/runs/{run_id}"
    assert cause[:200] in alert.get("error", "") and len(alert["error"]) <= 600, alert["text"]
    assert alert["summary"].startswith(f"Step '{step}' failed: ") and cause[:200] in alert["text"]
    assert f"open: {UI_URL}/runs/{run_id}" in alert["text"] and f"partition: {model}|base" in alert["text"]

    again = tick(daemon, instance, "run_failure_alert")  # the next tick does not send it again
    assert again.status != TickStatus.FAILURE, again.error
    assert len(run_failure_posts(webhook)) == 1

    # a backfill of a range of partitions in one run (the assets' single-run backfill policy)
    # carries the range, not one partition: the alert names it
    backfill = launch_from_the_ui(
        daemon,
        "demo_audit",
        {
            "dagster/asset_partition_range_start": f"{model}|base",
            "dagster/asset_partition_range_end": f"{model}|regional",
        },
    )
    assert wait_for(instance, backfill).status == dg.DagsterRunStatus.FAILURE
    t = tick(daemon, instance, "run_failure_alert")
    assert t.status != TickStatus.FAILURE, t.error
    alert = run_failure_posts(webhook)[-1]
    assert alert["run_id"] == backfill and alert["partition"] == f"{model}|base...{model}|regional"
    assert step_error(instance, backfill)[1][:200] in alert["error"]


# --- failed schedule and sensor ticks ------------------------------------------------------------


def tick_posts(webhook):
    return [p["json"] for p in webhook.posts if p["json"]["kind"] == "tick_failure"]


def location_origin(location=LOCATION):
    """The origin the daemon gives the code location of workspace.yaml (a gRPC server it manages)."""
    from dagster._core.remote_origin import ManagedGrpcPythonEnvCodeLocationOrigin
    from dagster._core.types.loadable_target_origin import LoadableTargetOrigin

    return ManagedGrpcPythonEnvCodeLocationOrigin(
        LoadableTargetOrigin(
            executable_path=sys.executable, module_name="fairness_assets.definitions", working_directory=str(ROOT)
        ),
        location,
    )


def schedule_state(instance, origin, name="reaudit_schedule"):
    from dagster._core.remote_origin import RemoteRepositoryOrigin
    from dagster._core.scheduler.instigation import InstigatorState, InstigatorStatus, ScheduleInstigatorData

    state = InstigatorState(
        RemoteRepositoryOrigin(origin, "__repository__").get_instigator_origin(name),
        InstigatorType.SCHEDULE,
        InstigatorStatus.RUNNING,
        ScheduleInstigatorData("0 6 * * 1", time.time() - 86400),
    )
    instance.add_instigator_state(state)
    return state


def record_tick(instance, state, status, when, error=None):
    """A tick as the scheduler daemon stores it (under the state's origin and selector ids)."""
    from dagster._core.scheduler.instigation import TickData

    return instance.create_tick(
        TickData(
            instigator_origin_id=state.instigator_origin_id,
            instigator_name=state.instigator_name,
            instigator_type=state.instigator_type,
            status=status,
            timestamp=when,
            selector_id=state.selector_id,
            run_ids=[],
            error=error,
        )
    )


def schedule_error(key="bad|name|base"):
    """The error of the issue's failed tick as the scheduler daemon stored it: Dagster's own
    DagsterUnknownPartitionError, raised resolving the run request (a Dagster error passes the code
    server's user-code boundary unwrapped)."""
    from dagster._core.errors import DagsterUnknownPartitionError
    from dagster._utils.error import serializable_error_info_from_exc_info

    try:
        raise DagsterUnknownPartitionError(f"Could not find a partition with key `{key}`.")
    except DagsterUnknownPartitionError:
        return serializable_error_info_from_exc_info(sys.exc_info())


def evaluate_tick_sensor(instance, webhook, cursor=None, origin=None):
    """failed_tick_alert evaluated as the code server does (dagster/_grpc/impl.py), with the code
    location's origin the daemon sends; without ``origin`` as build_sensor_context builds it."""
    from dagster._core.execution.build_resources import wrap_resources_for_execution

    from fairness_assets.definitions import defs
    from fairness_assets.defs.operations.sensors import failed_tick_alert
    from resources.alerts import AlertResource

    loaded = defs()
    repository = loaded.get_repository_def()
    alerts = AlertResource(channels="webhook", webhook_url=webhook.url, ui_base_url=UI_URL + "/")
    if origin is None:
        ctx = dg.build_sensor_context(
            instance=instance, cursor=cursor, definitions=loaded, resources={"alerts": alerts}
        )
    else:
        ctx = dg.SensorEvaluationContext(
            instance.get_ref(),
            cursor=cursor,
            repository_name=repository.name,
            repository_def=repository,
            sensor_name="failed_tick_alert",
            resources=wrap_resources_for_execution({"alerts": alerts}),
            code_location_origin=origin,
        )
    with ctx:
        result = failed_tick_alert(ctx)
        return result, ctx.cursor


def test_failed_tick_alert_alerts_once_per_failed_tick_with_its_error(tmp_path, monkeypatch, webhook):
    from dagster._core.scheduler.instigation import TickStatus as Status

    home = sqlite_home(tmp_path, monkeypatch)
    with dg.DagsterInstance.from_config(str(home)) as instance:
        state = schedule_state(instance, location_origin())
        other = schedule_state(instance, location_origin("another_location"))  # same name, another code location
        now = time.time()
        record_tick(instance, state, Status.SUCCESS, now - 700)
        failed = record_tick(instance, state, Status.FAILURE, now - 600, schedule_error())
        record_tick(instance, other, Status.FAILURE, now - 500, schedule_error("x|y|base"))

        result, cursor = evaluate_tick_sensor(instance, webhook, origin=location_origin())
        assert [p["title"] for p in tick_posts(webhook)] == ["schedule 'reaudit_schedule' tick failed"], result
        alert = tick_posts(webhook)[0]
        when = dt.datetime.fromtimestamp(now - 600, dt.timezone.utc).isoformat(timespec="seconds")
        cause = "DagsterUnknownPartitionError: Could not find a partition with key `bad|name|base`."
        assert alert["summary"] == f"The schedule 'reaudit_schedule' failed its tick at {when}: {cause}"
        assert alert["error"] == cause
        assert alert["url"] == f"{UI_URL}/locations/{LOCATION}/schedules/reaudit_schedule"
        assert alert["details"]["tick"].startswith(f"{failed.tick_id} at ")
        assert result.skip_message == "1 failed tick(s) read, 1 alert(s) sent"

        result, cursor = evaluate_tick_sensor(instance, webhook, cursor, origin=location_origin())
        assert len(tick_posts(webhook)) == 1 and result.skip_message.startswith("no new failed tick")

        # a burst of failures: one alert each for the newest ones, the older ones in one alert
        burst = [
            record_tick(instance, state, Status.FAILURE, now - 400 + i, schedule_error(f"m{i}|x|base"))
            for i in range(12)
        ]
        result, cursor = evaluate_tick_sensor(instance, webhook, cursor, origin=location_origin())
        posts = tick_posts(webhook)[1:]
        assert len(posts) == 10, result
        assert posts[0]["title"] == "schedule 'reaudit_schedule' tick failed (3 ticks)"
        assert posts[0]["details"]["earlier failed ticks"] == ", ".join(str(t.tick_id) for t in burst[:2])
        assert "`m2|x|base`" in posts[0]["error"] and "`m0|x|base`" in posts[0]["details"]["first error"]
        assert [f"`m{i}|x|base`" in p["error"] for i, p in zip(range(3, 12), posts[1:], strict=False)] == [True] * 9
        _, cursor = evaluate_tick_sensor(instance, webhook, cursor, origin=location_origin())
        assert len(tick_posts(webhook)) == 11

        # without the code location's origin (build_sensor_context) the ids come from the stored
        # states named like this repository's instigators: the other location's state too
        with Receiver() as fresh:
            evaluate_tick_sensor(instance, fresh)
            titles = [p["title"] for p in tick_posts(fresh)]
            assert len(titles) == 10 + 1 and titles.count("schedule 'reaudit_schedule' tick failed (4 ticks)") == 1
            assert sum("`x|y|base`" in p["error"] for p in tick_posts(fresh)) == 1


@pytest.fixture
def registry_env(tmp_path, monkeypatch):
    """A model registry the code server reads from FAIRNESS_MODEL_REGISTRY (set before it starts)."""
    path = tmp_path / "models.yaml"
    path.write_text(f"models:\n  {DEMO_MODEL}:\n    source: org/demo\n  good:\n    source: org/good\n")
    monkeypatch.setenv("FAIRNESS_MODEL_REGISTRY", str(path))
    return path


@pytest.mark.slow
def test_failed_tick_alert_reports_the_daemons_failed_schedule_and_sensor_ticks(
    registry_env, instance, daemon, webhook
):
    """The registry breaks: the re-audit schedule's tick (scheduler daemon) and the partition
    sensor's ticks (sensor daemon) fail; failed_tick_alert alerts on each failed tick once, with
    the error, however often it is ticked."""
    from dagster._scheduler.scheduler import launch_scheduled_runs

    instance.add_dynamic_partitions("models", ["good"])
    first = tick(daemon, instance, "failed_tick_alert")
    assert first.status == TickStatus.SKIPPED and not tick_posts(webhook), first.error

    registry_env.write_text("models: [unclosed\n")
    location = daemon.create_request_context().get_code_location(LOCATION)
    schedule = location.get_repository("__repository__").get_schedule("reaudit_schedule")
    instance.start_schedule(schedule)
    list(
        launch_scheduled_runs(
            daemon,
            logging.getLogger("scheduler-test"),
            iteration_times={},
            end_datetime_utc=dt.datetime.now(dt.timezone.utc) + dt.timedelta(days=7),
        )
    )
    failed_schedule = instance.get_ticks(schedule.get_remote_origin_id(), schedule.selector_id, limit=1)[0]
    assert failed_schedule.status == TickStatus.FAILURE and "not valid YAML" in str(failed_schedule.error)
    assert not instance.get_runs()
    failed_sensor = tick(daemon, instance, "invalid_partition_alert")
    assert failed_sensor.status == TickStatus.FAILURE

    t = tick(daemon, instance, "failed_tick_alert")
    assert t.status == TickStatus.SKIPPED, t.error
    schedule_alerts = [p for p in tick_posts(webhook) if p["details"].get("schedule") == "reaudit_schedule"]
    assert len(schedule_alerts) == 1
    assert schedule_alerts[0]["details"]["tick"].startswith(f"{failed_schedule.tick_id} at ")
    # the cause, not the code server's ScheduleExecutionError around it
    assert schedule_alerts[0]["error"].startswith(
        f"ConfigError: model registry {registry_env}, line 2, column 1: not valid YAML"
    ), schedule_alerts[0]
    assert schedule_alerts[0]["url"] == f"{UI_URL}/locations/{LOCATION}/schedules/reaudit_schedule"
    sensor_alerts = [p for p in tick_posts(webhook) if p["details"].get("sensor") == "invalid_partition_alert"]
    assert sensor_alerts and all(p["error"].startswith("ConfigError: model registry") for p in sensor_alerts)

    # the registry repaired: once every failure is alerted, nothing is sent again
    registry_env.write_text(f"models:\n  {DEMO_MODEL}:\n    source: org/demo\n")
    for _ in range(3):
        t = tick(daemon, instance, "failed_tick_alert")
        assert t.status == TickStatus.SKIPPED, t.error
    state = next(
        s
        for s in instance.all_instigator_state(instigator_type=InstigatorType.SENSOR)
        if s.instigator_name == "invalid_partition_alert"
    )
    failures = instance.get_ticks(state.instigator_origin_id, state.selector_id, statuses=[TickStatus.FAILURE])
    alerted = [
        p["details"]["tick"].split(" ")[0]
        for p in tick_posts(webhook)
        if p["details"].get("sensor") == "invalid_partition_alert"
    ]
    assert sorted(alerted) == sorted(str(f.tick_id) for f in failures)  # each failed tick once
    assert len([p for p in tick_posts(webhook) if p["details"].get("schedule")]) == 1


def test_an_alert_names_the_assets_of_a_ui_materialization_not_the_implicit_job():
    """'Materialize' in the UI runs Dagster's implicit __ASSET_JOB: the alert names the assets (issue 23.6)."""
    from fairness_assets.defs.operations.sensors import run_subject

    def run(job, keys=None):
        return dg.DagsterRun(job_name=job, run_id="r", asset_selection=keys)

    assert run_subject(run("demo_audit")) == "job demo_audit"
    assert run_subject(run("__ASSET_JOB", {dg.AssetKey("recommendations")})) == "asset recommendations"
    keys = {dg.AssetKey(k) for k in ("generations", "recommendations", "drs_scores", "audit_report", "sensitivity")}
    assert (
        run_subject(run("__ASSET_JOB", keys))
        == "assets audit_report, drs_scores, generations, recommendations (+1 more)"
    )
    assert run_subject(run("__ASSET_JOB"), ["qs_corpus"]) == "asset qs_corpus"
