"""The few Dagster APIs the sensors need that are not public in Dagster 1.13, each used in one
function here and nowhere else, with why no public one does.

The alert sensors read what Dagster's public API does not expose: the execution history of the
asset checks (``parse_quality_alert``) and the failed ticks of the code location's schedules and
sensors (``failed_tick_alert``). The audit report reads the recorded evaluations of the
parse-quality checks of each partition it reports (``check_evaluation_page``).
``tests/defs/test_dagster_internals.py`` calls every function here on a real instance and fails,
naming the function, when a Dagster upgrade moves, renames or changes one of them
(``check_evaluation_page``: ``tests/defs/test_quality_recorded.py``); the daemon tests
(tests/defs/test_alert_sensors.py) check the sensors end to end.
"""

from __future__ import annotations

from typing import Any, Sequence

import dagster as dg


def check_execution_page(
    instance: dg.DagsterInstance, key: dg.AssetCheckKey, limit: int, before: int | None
) -> Sequence[Any]:
    """Up to ``limit`` execution records of check ``key`` with an id below ``before`` (None: the
    newest), newest first; each has ``id``, ``run_id``, ``status``, ``evaluation``, ``event``,
    ``partition``.

    Private: ``instance.event_log_storage``. No public method reads a check's execution history, and
    the event-record queries page by a storage id, which is not global on the run-sharded SQLite
    event log of ``dagster dev`` (a cursor of one fails every tick after the first there); every
    event-log storage serves this history from one cross-run table.
    """
    return instance.event_log_storage.get_asset_check_execution_history(key, limit=limit, cursor=before)


def code_location_origin(context: dg.SensorEvaluationContext):
    """The origin of the code location the daemon evaluates the sensor in (None in a context built by
    ``build_sensor_context``).

    Private: the context's ``code_location_origin`` property (not marked public). The daemon sends
    the origin with every sensor evaluation; nothing public names it.
    """
    return context.code_location_origin


def instigator_ids(origin, repository_name: str, name: str) -> tuple[str, str]:
    """(origin id, selector id): the two ids the daemon stores the ticks of schedule or sensor
    ``name`` of repository ``repository_name`` in the code location of ``origin`` under.

    Private: ``RemoteRepositoryOrigin`` and ``InstigatorSelector``, the classes the daemon computes
    them with; Dagster exposes no public way to name an instigator's stored ticks.
    """
    from dagster._core.definitions.selector import InstigatorSelector
    from dagster._core.remote_origin import RemoteRepositoryOrigin

    repository_origin = RemoteRepositoryOrigin(code_location_origin=origin, repository_name=repository_name)
    selector = InstigatorSelector(location_name=origin.location_name, repository_name=repository_name, name=name)
    return repository_origin.get_instigator_origin(name).get_id(), selector.get_id()


def stored_instigators(instance: dg.DagsterInstance) -> Sequence[Any]:
    """Every schedule and sensor state the instance stores; each has ``instigator_name``,
    ``instigator_origin_id``, ``selector_id`` and ``origin`` (with ``location_name`` and
    ``repository_origin.repository_name``).

    Private: ``instance.all_instigator_state`` (no public method lists the stored states).
    """
    return instance.all_instigator_state()


def failed_ticks(instance: dg.DagsterInstance, origin_id: str, selector_id: str, limit: int) -> Sequence[Any]:
    """Up to ``limit`` failed ticks of one schedule or sensor, newest first; each has ``tick_id``,
    ``timestamp``, ``error`` and ``tick_data.run_ids``.

    Private: ``instance.get_ticks`` and ``TickStatus`` (no public method reads ticks).
    """
    from dagster._core.scheduler.instigation import TickStatus

    return instance.get_ticks(origin_id, selector_id, statuses=[TickStatus.FAILURE], limit=limit)


def check_evaluation_page(
    instance: dg.DagsterInstance, key: dg.AssetCheckKey, partition: str | None, limit: int, before: int | None
) -> Sequence[Any]:
    """Up to ``limit`` *evaluated* execution records (status SUCCEEDED or FAILED) of check ``key``
    whose partition is ``partition``, with an id below ``before`` (None: the newest), newest first;
    each has ``id``, ``run_id``, ``status``, ``partition``, ``event`` (``event.timestamp``: when it was
    evaluated) and ``evaluation`` (``passed``, ``blocking``, ``metadata``). ``partition`` None reads the
    evaluations that carry no partition: those of a run of a partition range (a box of
    ``fairness-audit score``), which Dagster 1.13 records once per check for the run as a whole (the
    run's per-partition rows stay PLANNED).

    Private: ``instance.event_log_storage`` and its ``PartitionKeyFilter`` / status filter. The public
    ``DagsterInstance`` has no method for the evaluations of one (check, partition): its
    ``get_latest_asset_check_evaluation_record`` (not marked public either) ignores partitions, and
    ``get_latest_asset_check_execution_by_key`` (storage) returns PLANNED records too, which a
    range run leaves behind for every partition it evaluated as a whole.
    """
    from dagster._core.event_api import PartitionKeyFilter
    from dagster._core.storage.asset_check_execution_record import AssetCheckExecutionRecordStatus as Status

    return instance.event_log_storage.get_asset_check_execution_history(
        key,
        limit=limit,
        cursor=before,
        status={Status.SUCCEEDED, Status.FAILED},
        partition_filter=PartitionKeyFilter(key=partition),
    )


def backfills_with_failures(instance: dg.DagsterInstance, limit: int) -> Sequence[tuple[str, set[str]]]:
    """Of the newest ``limit`` backfills, the asset backfills that completed with failed runs
    (``COMPLETED_FAILED``): (backfill id, the user strings of the asset keys it targets).

    Private: ``instance.get_backfills`` and ``PartitionBackfill`` (``dagster._core.execution.backfill``).
    The public API has no way to list backfills; the sensor that builds the report of a backfill whose
    failed partitions kept Dagster from building it (``backfill_report``) needs them.
    """
    from dagster._core.execution.backfill import BulkActionStatus

    return [
        (b.backfill_id, {k.to_user_string() for k in (b.asset_selection or ())})
        for b in instance.get_backfills(status=BulkActionStatus.COMPLETED_FAILED, limit=limit)
        if b.is_asset_backfill
    ]
