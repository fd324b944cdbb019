"""Alert sensors: a run failed, a parse-quality check failed, a model partition cannot be audited,
or a schedule or sensor tick failed; and ``model_partitions_sync``, which keeps the 'models'
partitions in step with the sources.

A failing *blocking* check fails its run, but a non-blocking one (the group-gap findings, or
any check with severity WARN) leaves the run green, so a run-failure sensor alone would miss
it (docs/operations.md). ``parse_quality_alert`` therefore reads the asset-check execution
records of the code location's checks, past a cursor, and alerts on every failed one;
``run_failure_alert`` alerts on every failed run, with the failed step's error. Both send
through the ``alerts`` resource.

The check records are read with ``get_asset_check_execution_history`` (not public in Dagster 1.13:
it and the tick reads below are the functions of ``dagster_internals.py``), which every event-log
storage serves from one cross-run table: the default SQLite instance of ``dagster dev`` (whose
event log is sharded per run, so an event-log query with a plain storage-id cursor fails there)
as well as PostgreSQL. Records are keyed by a per-check id that is assigned when a run *plans*
the check, so they are not evaluated in id order (two runs at once): the cursor keeps, per check,
the id below which every record is handled, plus the handled ids above it.

``invalid_partition_alert`` alerts once on each model partition that cannot be audited (a name
with ``|``, or a model neither the registry nor the responses file has; partitions.invalid_models),
saying how to delete it. ``failed_tick_alert`` alerts once on each failed tick of the code
location's schedules and sensors, with the tick's error: it reads the ticks from the instance's
schedule storage under the ids the daemon stores them by, rebuilt from the code location's origin,
which the daemon sends with every sensor evaluation (``context.code_location_origin``); see
:func:`code_location_instigators`.

``model_partitions_sync`` (every 30 s) adds the models of the source the audit uses (the model
registry; the responses file instead when FAIRNESS_RESPONSES is set, as partitions.KnownModels) that
are not partitions yet, through ``SensorResult(dynamic_partitions_requests=...)``. It never deletes:
partitions neither the registry nor the file has are named, with how to delete them, in the tick's
skip reason (and its log when they change), and ``invalid_partition_alert`` alerts on each of them
once. A source name no partition can hold (with ``|``, or ``...``) is not added and is alerted once.
A source that cannot be read is an error on the tick's log and in its skip reason, naming the file.
"""

from __future__ import annotations

import datetime as dt
import json
from dataclasses import dataclass
from urllib.parse import quote

import dagster as dg

from fairness_assets.core.common.partition import PartitionKey
from fairness_assets.core.common.text import trim, user_exception
from resources.alerts import Alert, AlertDeliveryError, AlertResource
from resources.settings import AuditGridResource, GenerationSourceResource

from ..partitions import (
    AUDIT_ROUND_TAG,
    MODEL_PARTITIONS,
    SYNC_INTERVAL_S,
    UI_DELETE,
    delete_hint,
    invalid_models,
    known_models,
    plan_model_sync,
    read_model_sources,
    remove_command,
)
from . import dagster_internals as internals
from .jobs import CROSS_PARTITION_ASSETS, audit_report_job

CHECK_BATCH = 200  # alerts sent per tick at most; the rest follow on the next ticks
HISTORY_PAGE = 200  # check execution records per storage query
ERROR_CHARS = 600  # a step's error message in an alert is trimmed to this length
CURSOR_VERSION = 2  # the cursor's format (JSON: per check, the watermark and the handled ids above it)

RANGE_START, RANGE_END = "dagster/asset_partition_range_start", "dagster/asset_partition_range_end"


def run_partition(tags) -> str:
    """The partition key of a run from its tags: the key, or ``start...end`` for a run of a
    range ('' for an unpartitioned run)."""
    if tags.get("dagster/partition"):
        return str(tags["dagster/partition"])
    if "dagster/partition/model" in tags:
        return str(PartitionKey(tags["dagster/partition/model"], tags.get("dagster/partition/template", "")))
    if tags.get(RANGE_START) or tags.get(RANGE_END):
        start, end = tags.get(RANGE_START, ""), tags.get(RANGE_END, "")
        return start if start == end else f"{start}...{end}"
    return ""


def run_subject(run, failed_steps=()) -> str:
    """What a run was, for an alert's title: its job's name, or for the UI's implicit job
    (``__ASSET_JOB``: "Materialize" on an asset page or the lineage) the assets it materialized."""
    name = str(run.job_name or "")
    if name and not name.startswith("__"):
        return f"job {name}"
    keys = sorted(k.to_user_string() for k in (run.asset_selection or ())) or list(failed_steps)
    if not keys:
        return "assets"
    shown = ", ".join(keys[:4]) + (f" (+{len(keys) - 4} more)" if len(keys) > 4 else "")
    return f"asset{'s' if len(keys) > 1 else ''} {shown}"


def error_message(error) -> str:
    """The cause of a failure from its ``SerializableErrorInfo``: the user's exception rather than
    Dagster's wrappers, as ``Class: message`` (a ``dg.Failure`` by its description), with the
    exception it was raised from, trimmed to ``ERROR_CHARS``."""
    error = user_exception(error)
    if error is None:
        return ""

    def one(err) -> str:
        text = (err.message or "").strip()
        head, sep, rest = text.partition(": ")
        if sep and head.rsplit(".", 1)[-1] == err.cls_name:  # "pkg.module.Class: message"
            text = rest.strip() if err.cls_name == "Failure" else f"{err.cls_name}: {rest.strip()}"
        return text or str(err.cls_name)

    text = one(error)
    if error.cause is not None:
        text += f" (caused by {one(error.cause)})"
    return trim(text, ERROR_CHARS)


def deliver(alerts: AlertResource, alert: Alert, log) -> str | None:
    """Send ``alert``; a channel that failed while another delivered is logged as an error (the
    alert counts as sent). Returns the failure message when no channel delivered, else None."""
    delivered, errors = alerts.deliver(alert, log=log.warning)
    if not delivered:
        return f"alert {alert.title!r} not delivered on " + "; ".join(errors)
    for error in errors:
        log.error(f"alert {alert.title!r}: channel {error}")
    return None


def check_failure_alert(record, alerts: AlertResource, run_tags=None) -> Alert | None:
    """The alert for one asset-check execution record, or None unless the check evaluated and failed."""
    evaluation = record.evaluation if record.status.value == "FAILED" else None
    if evaluation is None or evaluation.passed:
        return None
    meta = {k: getattr(v, "value", v) for k, v in (evaluation.metadata or {}).items()}
    # checks of a partitioned run are evaluated once for the run: its partition is in the run's tags
    partition = record.partition or getattr(evaluation, "partition", None) or run_partition(run_tags or {})
    asset = evaluation.asset_key.to_user_string()
    severity = evaluation.severity.value if evaluation.severity is not None else "ERROR"
    run_id = record.run_id
    details = {k: meta[k] for k in ("observed", "threshold", "finding", "description") if k in meta}
    if not details:
        details = {k: v for k, v in list(meta.items())[:6] if not isinstance(v, (dict, list))}
    return Alert(
        kind="check_failure",
        title=f"parse-quality check {evaluation.check_name} failed on {asset}"
        + (f" [{partition}]" if partition else ""),
        summary=f"The check {evaluation.check_name!r} of asset {asset!r} did not pass (severity {severity})."
        + (" It is blocking: downstream assets of the run were skipped." if evaluation.blocking else ""),
        severity=severity,
        run_id=run_id,
        partition=partition,
        asset=asset,
        check=evaluation.check_name,
        details=details,
        url=alerts.run_url(run_id),
    )


def code_location_checks(context) -> list[dg.AssetCheckKey]:
    """The asset checks of the sensor's code location (every parse-quality check)."""
    repository = context.repository_def
    if repository is None:
        raise dg.DagsterInvariantViolationError(
            "parse_quality_alert reads the asset checks of its code location: evaluate it in its code "
            "location (dagster dev, the daemon) or pass definitions= to build_sensor_context"
        )
    return sorted(repository.asset_graph.asset_check_keys, key=lambda k: k.to_user_string())


def executions_after(instance, key: dg.AssetCheckKey, done: int) -> list:
    """The execution records of check ``key`` with an id above ``done``, oldest first."""
    found, before = [], None
    while True:
        page = internals.check_execution_page(instance, key, HISTORY_PAGE, before)
        newer = [r for r in page if r.id > done]
        found.extend(newer)
        if len(page) < HISTORY_PAGE or len(newer) < len(page):
            return sorted(found, key=lambda r: r.id)
        before = page[-1].id


def read_cursor(context) -> dict[str, tuple[int, set[int]]]:
    """Per check, (id below which every record is handled, handled ids above it)."""
    data = versioned_cursor(context, CURSOR_VERSION, "parse_quality_alert", "reading the check history again")
    return {k: (int(done), {int(i) for i in seen}) for k, (done, seen) in data.get("checks", {}).items()}


def write_cursor(state: dict[str, tuple[int, set[int]]]) -> str:
    return json.dumps(
        {"v": CURSOR_VERSION, "checks": {k: [done, sorted(seen)] for k, (done, seen) in state.items()}}, sort_keys=True
    )


def _records_to_read(instance, key, done: int, run_of) -> tuple[list, set]:
    """The check's evaluations after the watermark ``done``, and the runs of those still PLANNED
    that have ended.

    A record still PLANNED whose run has ended was never evaluated (a skipped or failed step);
    the records are read again once those runs are known to have ended, so that an evaluation
    stored meanwhile is not taken for one."""
    records = executions_after(instance, key, done)
    ended = {
        r.run_id
        for r in records
        if r.status.value == "PLANNED" and (run_of(r.run_id) is None or run_of(r.run_id).is_finished)
    }
    if ended:
        records = executions_after(instance, key, done)
    return records, ended


def _alert_records(records, ended: set, handled: set, sent: int, alerts, run_of, log) -> tuple[int, int, object]:
    """Alert on each failed evaluation of ``records`` not yet ``handled`` (marked handled as it goes):
    (evaluations read, alerts sent so far, the delivery failure or None). Stops at the batch limit
    and at the first alert no channel took (the next tick retries from there)."""
    read = 0
    failure = None
    for record in records:
        if record.id in handled:
            continue
        if record.status.value == "PLANNED":
            if record.run_id in ended:
                handled.add(record.id)
            continue  # still to be evaluated: read again next tick
        read += 1
        run = run_of(record.run_id)
        alert = check_failure_alert(record, alerts, run.tags if run is not None else {})
        if alert is not None:
            if sent >= CHECK_BATCH:
                break
            failure = deliver(alerts, alert, log)
            if failure:  # no channel took it: stop here, the next tick retries from this alert
                break
            sent += 1
        handled.add(record.id)
    return read, sent, failure


def _watermark(records, handled: set, done: int) -> int:
    """The watermark moved over the handled records in id order, up to the first one still open."""
    for record in records:
        if record.id not in handled:
            break
        done = record.id
    return done


@dg.sensor(
    minimum_interval_seconds=60,
    default_status=dg.DefaultSensorStatus.RUNNING,
    description="Alerts (FAIRNESS_ALERT_CHANNELS) on every failed asset check, blocking or not: the parse-quality "
    "checks and the release gates (release_gate, release_gate_robust).",
)
def parse_quality_alert(context: dg.SensorEvaluationContext, alerts: AlertResource):
    state = read_cursor(context)
    instance = context.instance
    runs: dict[str, object] = {}

    def run_of(run_id):
        if run_id not in runs:
            runs[run_id] = instance.get_run_by_id(run_id) if run_id else None
        return runs[run_id]

    read = sent = 0
    failure = None
    for key in code_location_checks(context):
        name = key.to_user_string()
        done, handled = state.get(name, (0, set()))
        records, ended = _records_to_read(instance, key, done, run_of)
        n_read, sent, failure = _alert_records(records, ended, handled, sent, alerts, run_of, context.log)
        read += n_read
        done = _watermark(records, handled, done)
        state[name] = (done, {i for i in handled if i > done})
        if failure or sent >= CHECK_BATCH:
            break
    if failure and sent == 0:
        raise AlertDeliveryError(failure)  # the tick fails visibly, its cursor is not stored: nothing is lost
    context.update_cursor(write_cursor(state))
    if failure:
        context.log.error(failure)
        return dg.SkipReason(f"ALERT DELIVERY FAILED after {sent} alert(s): {failure}")
    if not read:
        return dg.SkipReason("no new asset-check evaluations")
    return dg.SkipReason(f"{read} check evaluation(s) read, {sent} alert(s) sent")


def run_failure_cause(context: dg.RunFailureSensorContext) -> tuple[dict[str, str], str]:
    """({failed step: its error message}, the run's own error when it failed outside a step)."""
    steps: dict[str, str] = {}
    for event in context.get_step_failure_events():
        if event.step_key and event.step_key not in steps:
            steps[event.step_key] = error_message(getattr(event.event_specific_data, "error", None))
    run_error = error_message(getattr(context.failure_event.event_specific_data, "error", None))
    return steps, run_error


@dg.run_failure_sensor(
    default_status=dg.DefaultSensorStatus.RUNNING,
    monitor_all_code_locations=False,
    description=(
        "Alerts (FAIRNESS_ALERT_CHANNELS) when a run of this code location fails, with the failed step's error."
    ),
)
def run_failure_alert(context: dg.RunFailureSensorContext, alerts: AlertResource):
    run = context.dagster_run
    steps, run_error = run_failure_cause(context)
    partition = run_partition(run.tags)
    if steps:
        first, cause = next(iter(steps.items()))
        summary = f"Step {first!r} failed: {cause or 'no error message'}"
        if len(steps) > 1:
            summary += f" (and {len(steps) - 1} more failed step(s))"
    else:
        cause = run_error or trim(context.failure_event.message or "the run failed", ERROR_CHARS)
        summary = f"The run failed outside a step: {cause}"
    details = {"failed steps": ", ".join(steps) or "none (the run failed outside a step)"}
    details.update({f"error in {step}": message for step, message in list(steps.items())[1:]})
    what = run_subject(run, steps)
    alert = Alert(
        kind="run_failure",
        title=f"run of {what} failed" + (f" [partition {partition}]" if partition else ""),
        summary=summary,
        error=cause,
        job=run.job_name,
        run_id=run.run_id,
        partition=partition,
        details=details,
        url=alerts.run_url(run.run_id),
    )
    failure = deliver(alerts, alert, context.log)
    if failure:  # the sensor fails and Dagster retries this run's alert on the next tick
        raise AlertDeliveryError(failure)


@dg.sensor(
    job=audit_report_job,
    minimum_interval_seconds=120,
    default_status=dg.DefaultSensorStatus.RUNNING,
    description="Builds the audit report once every run of a re-audit round has finished (one report per round).",
)
def reaudit_report(context: dg.SensorEvaluationContext):
    records = context.instance.get_run_records(filters=dg.RunsFilter(tags={"fairness/job": "reaudit"}), limit=1000)
    runs = [r.dagster_run for r in records]
    rounds: dict[str, list] = {}
    for run in runs:
        if run.tags.get(AUDIT_ROUND_TAG):
            rounds.setdefault(run.tags[AUDIT_ROUND_TAG], []).append(run)
    ready = sorted(
        r for r, rs in rounds.items() if all(run.is_finished for run in rs) and any(run.is_success for run in rs)
    )
    if not ready:
        return dg.SkipReason(f"no finished re-audit round ({len(rounds)} round(s) seen)")
    # run keys make Dagster launch each round's report once, however often the round is seen
    return [dg.RunRequest(run_key=f"reaudit-report-{r}", tags={AUDIT_ROUND_TAG: r}) for r in ready]


BACKFILL_REPORT_TAG = "fairness/report_of_backfill"  # run tag: the backfill whose report the run builds
BACKFILL_TAG = "dagster/backfill"  # the tag Dagster gives each run of a backfill: its id


def backfill_report_requests(instance, limit: int = 50) -> tuple[list[dg.RunRequest], str]:
    """A report run for each finished backfill that targeted the cross-partition assets, stored some
    partitions, and never ran them because other partitions failed (Dagster builds an asset
    that spans partitions only once every partition it depends on is materialized); and why none when
    there is none."""
    requests, seen = [], 0
    for backfill_id, targets in internals.backfills_with_failures(instance, limit):
        if not targets & set(CROSS_PARTITION_ASSETS):
            continue
        seen += 1
        runs = [
            r.dagster_run for r in instance.get_run_records(filters=dg.RunsFilter(tags={BACKFILL_TAG: backfill_id}))
        ]
        selected = [{k.to_user_string() for k in (r.asset_selection or ())} for r in runs]
        if any(s & set(CROSS_PARTITION_ASSETS) for s in selected):
            continue  # the backfill ran them itself (built, or failed with its own error: not run again)
        if not any(r.is_success and run_partition(r.tags) for r in runs):
            continue  # no partition was stored: nothing to report
        requests.append(
            dg.RunRequest(run_key=f"backfill-report-{backfill_id}", tags={BACKFILL_REPORT_TAG: backfill_id})
        )
    why = f"no finished backfill with failed partitions is left without its report ({seen} such backfill(s) seen)"
    return requests, why


@dg.sensor(
    job=audit_report_job,
    minimum_interval_seconds=30,
    default_status=dg.DefaultSensorStatus.RUNNING,
    description="Builds the report of a backfill in which some partitions failed: Dagster then leaves the assets "
    "that span partitions (base vs regional, the comparison, the sensitivity analysis, the report) unbuilt; this "
    "run builds them once over the partitions that are stored.",
)
def backfill_report(context: dg.SensorEvaluationContext):
    requests, why = backfill_report_requests(context.instance)
    # run keys make Dagster launch each backfill's report once, however often the backfill is seen
    return requests or dg.SkipReason(why)


# ---------------------------------------------------------------------------------------------
# model partitions that cannot be audited

PARTITION_CURSOR_VERSION = 1


def invalid_partition_alert_for(name: str, why: str, alerts: AlertResource) -> Alert:
    return Alert(
        kind="invalid_partition",
        title=f"model partition {name!r} cannot be audited",
        summary=f"The '{MODEL_PARTITIONS.name}' partition {name!r} cannot be audited: {why}. Runs of it fail and the "
        f"re-audit schedule skips it. Delete it: {delete_hint(name)}.",
        severity="WARN",
        partition=name,
        asset="generations",
        details={"reason": why, "delete in the UI": UI_DELETE, "delete from Python": remove_command(name)},
        url=f"{alerts.ui_base_url.rstrip('/')}/assets/generations",
    )


def versioned_cursor(context, version: int, sensor: str, then: str) -> dict:
    """The sensor's JSON cursor of format ``version``; {} (with a warning saying what follows) when
    there is none or it is of another format."""
    if not context.cursor:
        return {}
    try:
        data = json.loads(context.cursor)
    except ValueError:
        data = None
    if not isinstance(data, dict) or data.get("v") != version:
        context.log.warning(f"{sensor}: cursor {context.cursor!r} not understood; {then}")
        return {}
    return data


def read_alerted(context) -> set[str]:
    data = versioned_cursor(context, PARTITION_CURSOR_VERSION, "invalid_partition_alert", "alerting again")
    return {str(m) for m in data.get("alerted", [])}


@dg.sensor(
    minimum_interval_seconds=60,
    default_status=dg.DefaultSensorStatus.RUNNING,
    description="Alerts (FAIRNESS_ALERT_CHANNELS) once on every model partition that cannot be audited (a name "
    "with '|', or a model neither the registry nor the responses file has), saying how to delete it.",
)
def invalid_partition_alert(
    context: dg.SensorEvaluationContext,
    alerts: AlertResource,
    audit_grid: AuditGridResource,
    generation_source: GenerationSourceResource,
):
    models = context.instance.get_dynamic_partitions(MODEL_PARTITIONS.name)
    invalid = invalid_models(models, known_models(audit_grid, generation_source))
    # a partition deleted (or now known) is forgotten: added again later, it is alerted again
    alerted = {m for m in read_alerted(context) if m in invalid}
    sent, failure = 0, None
    for name, why in invalid.items():
        if name in alerted:
            continue
        failure = deliver(alerts, invalid_partition_alert_for(name, why, alerts), context.log)
        if failure:  # no channel took it: the next tick retries from here
            break
        alerted.add(name)
        sent += 1
    if failure and sent == 0:
        raise AlertDeliveryError(failure)
    context.update_cursor(json.dumps({"v": PARTITION_CURSOR_VERSION, "alerted": sorted(alerted)}))
    if failure:
        context.log.error(failure)
        return dg.SkipReason(f"ALERT DELIVERY FAILED after {sent} alert(s): {failure}")
    if not invalid:
        return dg.SkipReason(f"every model partition can be audited ({len(models)})")
    return dg.SkipReason(
        f"{len(invalid)} model partition(s) cannot be audited ({', '.join(map(repr, invalid))}); {sent} alert(s) sent"
    )


# ---------------------------------------------------------------------------------------------
# the models of the registry and of the responses file as partitions, without clicks

SYNC_CURSOR_VERSION = 1


def unusable_model_alert_for(name: str, why: str, source: str) -> Alert:
    return Alert(
        kind="unusable_model",
        title=f"model {name!r} of {source} cannot be a partition",
        summary=f"{source[0].upper() + source[1:]} names the model {name!r}, which cannot be a "
        f"'{MODEL_PARTITIONS.name}' partition: {why}. It is not added and its answers are not audited; "
        "rename it in its source.",
        severity="WARN",
        partition=name,
        asset="generations",
        details={"reason": why, "source": source},
    )


@dg.sensor(
    minimum_interval_seconds=SYNC_INTERVAL_S,
    default_status=dg.DefaultSensorStatus.RUNNING,
    description="Adds every model of the model registry (or, with FAIRNESS_RESPONSES set, of that responses file) "
    "to the 'models' partitions, so that no one has to click 'Add a partition'. Never deletes one: partitions "
    "neither source has are named in the tick's reason with how to delete them; a source name no partition can "
    "hold (with '|') is alerted (FAIRNESS_ALERT_CHANNELS) once, not added.",
)
def model_partitions_sync(
    context: dg.SensorEvaluationContext,
    audit_grid: AuditGridResource,
    generation_source: GenerationSourceResource,
    alerts: AlertResource,
):
    sources = read_model_sources(audit_grid, generation_source)
    plan = plan_model_sync(context.instance.get_dynamic_partitions(MODEL_PARTITIONS.name), sources)
    data = versioned_cursor(context, SYNC_CURSOR_VERSION, "model_partitions_sync", "reporting again")
    for error in sources.errors:
        context.log.error(f"model_partitions_sync: {error}")
    if plan.vanished and sorted(plan.vanished) != data.get("vanished"):  # logged when it changes, named every tick
        context.log.warning(f"model_partitions_sync: {plan.message()}")
    # a name that left its source is forgotten: back again, it is alerted again
    alerted = {m for m in data.get("alerted", []) if m in plan.unusable}
    failure = None
    for name, why in plan.unusable.items():
        if name in alerted:
            continue
        failure = deliver(alerts, unusable_model_alert_for(name, why, sources.source()), context.log)
        if failure:  # not raised: the partitions are still added; the next tick retries this alert
            context.log.error(failure)
            break
        alerted.add(name)
    if plan.add:
        context.log.info(
            f"model_partitions_sync: adding {list(plan.add)} to the '{MODEL_PARTITIONS.name}' "
            f"partitions ({sources.source()})"
        )
    cursor = json.dumps({"v": SYNC_CURSOR_VERSION, "vanished": sorted(plan.vanished), "alerted": sorted(alerted)})
    return dg.SensorResult(
        dynamic_partitions_requests=[MODEL_PARTITIONS.build_add_request(list(plan.add))] if plan.add else [],
        skip_reason=plan.message() + (f" ALERT DELIVERY FAILED: {failure}" if failure else ""),
        cursor=cursor,
    )


# ---------------------------------------------------------------------------------------------
# failed schedule and sensor ticks

TICK_CURSOR_VERSION = 1
TICK_HISTORY = 200  # failed ticks read per schedule or sensor and evaluation at most
TICK_ALERTS = 10  # alerts per schedule or sensor and evaluation; older failed ticks are summed up in one


@dataclass(frozen=True)
class Instigator:
    """A schedule or sensor of the code location, with the ids its ticks are stored under."""

    kind: str  # "schedule" or "sensor"
    name: str
    origin_id: str
    selector_id: str
    location: str
    repository: str


def code_location_instigators(context) -> list[Instigator]:
    """The code location's schedules and sensors with the ids the daemon stores their ticks under.

    The daemon identifies an instigator by its origin (``RemoteInstigatorOrigin``: the code
    location's origin, the repository name, the instigator name) and by its selector (location,
    repository and instigator names); ticks are stored with both and read by either. When the
    daemon evaluates a sensor it sends the code location's origin along (the code server builds
    the context with ``code_location_origin``), so both ids are rebuilt here exactly as the daemon
    computes them. A context built without it (``build_sensor_context``) has no origin: then the
    ids are taken from the instigator states stored in the instance for this repository's
    schedules and sensors (an instigator the daemon has never ticked has no state and no ticks).
    """
    repository = context.repository_def
    if repository is None:
        raise dg.DagsterInvariantViolationError(
            "failed_tick_alert reads the ticks of its code location's schedules and sensors: evaluate it in its "
            "code location (dagster dev, the daemon) or pass definitions= to build_sensor_context"
        )
    names = {s.name: "schedule" for s in repository.schedule_defs}
    names.update({s.name: "sensor" for s in repository.sensor_defs})
    origin = internals.code_location_origin(context)
    if origin is not None:
        return [
            Instigator(
                kind,
                name,
                *internals.instigator_ids(origin, repository.name, name),
                origin.location_name,
                repository.name,
            )
            for name, kind in sorted(names.items())
        ]
    found = []
    for state in internals.stored_instigators(context.instance):
        if state.instigator_name in names and state.origin.repository_origin.repository_name == repository.name:
            found.append(
                Instigator(
                    names[state.instigator_name],
                    state.instigator_name,
                    state.instigator_origin_id,
                    state.selector_id,
                    state.origin.location_name,
                    repository.name,
                )
            )
    return sorted(found, key=lambda i: (i.name, i.location))


def tick_error(error) -> str:
    """A failed tick's cause: the user's exception under Dagster's wrappers (the code server's
    ``SensorExecutionError`` / ``ScheduleExecutionError``, the daemon's process errors)."""
    while (
        error is not None
        and error.cause is not None
        and (
            error.cls_name in ("SensorExecutionError", "ScheduleExecutionError")
            or (error.cls_name or "").startswith("DagsterUserCode")
        )
    ):
        error = error.cause
    return error_message(error) if error is not None else ""


def tick_url(alerts: AlertResource, instigator: Instigator) -> str:
    """The schedule's or sensor's page in the UI (its ticks and their errors)."""
    address = (
        instigator.location
        if instigator.repository == "__repository__"
        else f"{instigator.repository}@{instigator.location}"
    )
    return f"{alerts.ui_base_url.rstrip('/')}/locations/{quote(address)}/{instigator.kind}s/{quote(instigator.name)}"


def tick_time(tick) -> str:
    return dt.datetime.fromtimestamp(tick.timestamp, dt.timezone.utc).isoformat(timespec="seconds")


def failed_tick_alert_for(instigator: Instigator, tick, alerts: AlertResource, earlier: list | None = None) -> Alert:
    """The alert for one failed tick; with ``earlier``, for those failed ticks too (one alert for many)."""
    cause = tick_error(tick.error) or "no error message"
    what = f"{instigator.kind} {instigator.name!r}"
    if earlier:
        summary = (
            f"The {what} failed {len(earlier) + 1} ticks from {tick_time(earlier[0])} to {tick_time(tick)}; "
            f"the last one with: {cause}"
        )
    else:
        summary = f"The {what} failed its tick at {tick_time(tick)}: {cause}"
    details = {instigator.kind: instigator.name, "tick": f"{tick.tick_id} at {tick_time(tick)}"}
    if earlier:
        details["earlier failed ticks"] = ", ".join(str(t.tick_id) for t in earlier[:50]) + (
            " ..." if len(earlier) > 50 else ""
        )
        first = tick_error(earlier[0].error)
        if first and first != cause:
            details["first error"] = first
    if tick.tick_data.run_ids:
        details["runs requested"] = ", ".join(tick.tick_data.run_ids)
    return Alert(
        kind="tick_failure",
        title=f"{what} tick failed" + (f" ({len(earlier) + 1} ticks)" if earlier else ""),
        summary=summary,
        error=cause,
        job=instigator.name if instigator.kind == "schedule" else "",
        details=details,
        url=tick_url(alerts, instigator),
    )


def read_tick_cursor(context) -> dict[str, int]:
    """{selector id: the newest tick id handled}."""
    data = versioned_cursor(context, TICK_CURSOR_VERSION, "failed_tick_alert", "reading the ticks again")
    return {str(k): int(v) for k, v in data.get("ticks", {}).items()}


@dg.sensor(
    minimum_interval_seconds=60,
    default_status=dg.DefaultSensorStatus.RUNNING,
    description="Alerts (FAIRNESS_ALERT_CHANNELS) once on every failed tick of this code location's schedules and "
    "sensors, with the tick's error.",
)
def failed_tick_alert(context: dg.SensorEvaluationContext, alerts: AlertResource):
    done = read_tick_cursor(context)
    instigators = code_location_instigators(context)
    if internals.code_location_origin(context) is None:
        context.log.warning(
            "failed_tick_alert: no code location origin in the context; reading the ticks of the "
            f"instigator states stored for {[i.name for i in instigators]}"
        )
    read = sent = 0
    failure = None
    for instigator in instigators:
        last = done.get(instigator.selector_id, 0)
        ticks = internals.failed_ticks(context.instance, instigator.origin_id, instigator.selector_id, TICK_HISTORY)
        new = sorted((t for t in ticks if t.tick_id > last), key=lambda t: t.tick_id)
        if len(ticks) == TICK_HISTORY and len(new) == len(ticks):
            context.log.warning(
                f"failed_tick_alert: more than {TICK_HISTORY} new failed ticks of {instigator.kind} "
                f"{instigator.name!r}; the older ones are not alerted"
            )
        read += len(new)
        # one alert per failed tick; past TICK_ALERTS, the oldest ones share one alert
        batches = (
            [[t] for t in new]
            if len(new) <= TICK_ALERTS
            else [new[: len(new) - TICK_ALERTS + 1]] + [[t] for t in new[len(new) - TICK_ALERTS + 1 :]]
        )
        for batch in batches:
            alert = failed_tick_alert_for(instigator, batch[-1], alerts, earlier=batch[:-1])
            failure = deliver(alerts, alert, context.log)
            if failure:
                break
            last = batch[-1].tick_id
            sent += 1
        done[instigator.selector_id] = last
        if failure:
            break
    if failure and sent == 0:
        raise AlertDeliveryError(failure)  # the tick fails visibly, its cursor is not stored: nothing is lost
    context.update_cursor(json.dumps({"v": TICK_CURSOR_VERSION, "ticks": done}, sort_keys=True))
    if failure:
        context.log.error(failure)
        return dg.SkipReason(f"ALERT DELIVERY FAILED after {sent} alert(s): {failure}")
    if not read:
        return dg.SkipReason(f"no new failed tick ({len(instigators)} schedules and sensors read)")
    return dg.SkipReason(f"{read} failed tick(s) read, {sent} alert(s) sent")
