"""Alert sensors: a run failed, or a parse-quality check failed.

A failing *blocking* check fails its run, but a non-blocking one (the group-gap findings, or
any check with severity WARN) leaves the run green, so a run-failure sensor alone would miss
it (docs/operations.md). ``parse_quality_alert`` therefore reads the asset-check evaluations
from the event log, past a cursor, and alerts on every failed one; ``run_failure_alert``
alerts on every failed run. Both send through the ``alerts`` resource.
"""

from __future__ import annotations

import dagster as dg
from dagster import DagsterEventType, EventRecordsFilter

from resources.alerts import Alert, AlertDeliveryError, AlertResource

from ..partitions import AUDIT_ROUND_TAG
from .jobs import audit_report_job

CHECK_BATCH = 200


def run_partition(tags) -> str:
    """The partition key of a run from its tags ('' for an unpartitioned run)."""
    if tags.get("dagster/partition"):
        return str(tags["dagster/partition"])
    if "dagster/partition/model" in tags:
        return f"{tags['dagster/partition/model']}|{tags.get('dagster/partition/template', '')}"
    return ""


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
    """The alert for one ASSET_CHECK_EVALUATION event record, or None when the check passed."""
    evaluation = record.event_log_entry.dagster_event.event_specific_data
    if evaluation.passed:
        return None
    meta = {k: getattr(v, "value", v) for k, v in (evaluation.metadata or {}).items()}
    # checks of a partitioned run are evaluated once for the run: its partition is in the run's tags
    partition = getattr(evaluation, "partition", None) or run_partition(run_tags or {})
    asset = evaluation.asset_key.to_user_string()
    severity = evaluation.severity.value if evaluation.severity is not None else "ERROR"
    run_id = record.event_log_entry.run_id
    details = {k: meta[k] for k in ("observed", "threshold", "finding", "description") if k in meta}
    if not details:
        details = {k: v for k, v in list(meta.items())[:6] if not isinstance(v, (dict, list))}
    return Alert(
        kind="check_failure",
        title=f"parse-quality check {evaluation.check_name} failed on {asset}" + (f" [{partition}]" if partition else ""),
        summary=f"The check {evaluation.check_name!r} of asset {asset!r} did not pass (severity {severity})."
        + (" It is blocking: downstream assets of the run were skipped." if evaluation.blocking else ""),
        severity=severity, run_id=run_id, partition=partition, asset=asset, check=evaluation.check_name,
        details=details, url=alerts.run_url(run_id),
    )


@dg.sensor(
    minimum_interval_seconds=60,
    default_status=dg.DefaultSensorStatus.RUNNING,
    description="Alerts (FAIRNESS_ALERT_CHANNELS) on every failed parse-quality asset check, blocking or not.",
)
def parse_quality_alert(context: dg.SensorEvaluationContext, alerts: AlertResource):
    after = int(context.cursor) if context.cursor else None
    records = context.instance.get_event_records(
        EventRecordsFilter(event_type=DagsterEventType.ASSET_CHECK_EVALUATION, after_cursor=after),
        limit=CHECK_BATCH, ascending=True,
    )
    if not records:
        return dg.SkipReason("no new asset-check evaluations")
    sent, tags = 0, {}
    for record in records:
        run_id = record.event_log_entry.run_id
        if run_id not in tags:
            run = context.instance.get_run_by_id(run_id)
            tags[run_id] = run.tags if run is not None else {}
        alert = check_failure_alert(record, alerts, tags[run_id])
        if alert is not None:
            failure = deliver(alerts, alert, context.log)
            if failure:  # no channel took it: stop here, the next tick retries from this alert
                if sent == 0:
                    raise AlertDeliveryError(failure)  # the tick fails visibly; nothing is sent twice
                context.log.error(failure)
                return dg.SkipReason(f"ALERT DELIVERY FAILED after {sent} alert(s): {failure}")
            sent += 1
        context.update_cursor(str(record.storage_id))
    return dg.SkipReason(f"{len(records)} check evaluation(s) read, {sent} alert(s) sent")


@dg.run_failure_sensor(
    default_status=dg.DefaultSensorStatus.RUNNING,
    monitor_all_code_locations=False,
    description="Alerts (FAIRNESS_ALERT_CHANNELS) when a run of this code location fails.",
)
def run_failure_alert(context: dg.RunFailureSensorContext, alerts: AlertResource):
    run = context.dagster_run
    steps = [e.step_key for e in context.get_step_failure_events() if e.step_key]
    partition = run_partition(run.tags)
    alert = Alert(
        kind="run_failure",
        title=f"run of {run.job_name} failed" + (f" [{partition}]" if partition else ""),
        summary=context.failure_event.message or "the run failed",
        job=run.job_name, run_id=run.run_id, partition=partition,
        details={"failed steps": ", ".join(steps) or "none (the run failed outside a step)"},
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
    runs = context.instance.get_runs(filters=dg.RunsFilter(tags={"fairness/job": "reaudit"}), limit=1000)
    rounds: dict[str, list] = {}
    for run in runs:
        if run.tags.get(AUDIT_ROUND_TAG):
            rounds.setdefault(run.tags[AUDIT_ROUND_TAG], []).append(run)
    ready = sorted(r for r, rs in rounds.items()
                   if all(run.is_finished for run in rs) and any(run.is_success for run in rs))
    if not ready:
        return dg.SkipReason(f"no finished re-audit round ({len(rounds)} round(s) seen)")
    # run keys make Dagster launch each round's report once, however often the round is seen
    return [dg.RunRequest(run_key=f"reaudit-report-{r}", tags={AUDIT_ROUND_TAG: r}) for r in ready]


SENSORS = [parse_quality_alert, run_failure_alert, reaudit_report]
