"""The re-audit schedule: a new audit round of every registered model x template, weekly.

Dagster cannot build a schedule from a job partitioned by a dynamic x static multi-partition
(no time dimension), so the schedule is written by hand: each tick yields one RunRequest per
partition, all tagged with the same audit round (the tick's time), which makes the run a new
audit (see partitions.AUDIT_ROUND_TAG) and lets audit_drift compare it with the previous one.

A model partition that cannot be audited (a name with ``|``, which no partition key can hold, or a
model neither the registry nor the responses file has: partitions.invalid_models) is skipped: the
tick requests the other models' runs, names the skipped ones with the reason in its log and in
each run's ``fairness/reaudit_skipped`` tag, and skips with a reason naming them when none is left.
No key of a skipped model is ever built, so one bad name cannot fail the tick for every model
(the invalid_partition_alert sensor says how to delete it). A Dagster schedule cannot return run
requests and a skip reason together (ScheduleExecutionData refuses both), hence the log and tag.

``FAIRNESS_REAUDIT_CRON`` (default ``0 6 * * 1``: Mondays 06:00) and ``FAIRNESS_REAUDIT_TIMEZONE``
(default ``UTC``) are read when the code location loads: ``fairness_assets.definitions`` reads the
settings model once (docs/configuration.md) and builds the schedule with
:func:`reaudit_schedule_for`; reload the code location in the UI after a change. What a tick does
is :func:`reaudit_tick`, whatever the settings.
"""

from __future__ import annotations

import dagster as dg

from fairness_assets.core.common.partition import PartitionKey
from resources.settings import AuditGridResource, FairnessSettings, GenerationSourceResource
from resources.settings.model import DEFAULT_CRON  # noqa: F401  (re-exported: the documented default)

from ..partitions import (
    AUDIT_ROUND_TAG,
    MODEL_PARTITIONS,
    TEMPLATE_PARTITIONS,
    delete_hint,
    invalid_models,
    known_models,
)
from .jobs import reaudit

SKIPPED_TAG = "fairness/reaudit_skipped"  # run tag: the model partitions the tick skipped (names, comma separated)
SKIPPED_TAG_CHARS = 1000


def reaudit_requests(
    models: list[str], templates: list[str], round_id: str, skipped: list[str] = ()
) -> list[dg.RunRequest]:
    """One run request per (model, template), all in audit round ``round_id``; ``skipped`` (model
    partitions left out of the round) goes in each run's SKIPPED_TAG."""
    tags = {AUDIT_ROUND_TAG: round_id}
    if skipped:
        listed = ", ".join(repr(m) for m in skipped)
        tags[SKIPPED_TAG] = listed if len(listed) <= SKIPPED_TAG_CHARS else listed[: SKIPPED_TAG_CHARS - 1] + "\u2026"
    return [
        dg.RunRequest(
            run_key=f"reaudit-{round_id}-{PartitionKey(model, template).check()}",
            partition_key=dg.MultiPartitionKey({"model": model, "template": template}),
            tags=dict(tags),
        )
        for model in models
        for template in templates
    ]


def skipped_message(invalid: dict[str, str]) -> str:
    """The tick's words for the model partitions it skips, each with its reason."""
    return (
        f"skipped {len(invalid)} model partition(s) that cannot be audited: "
        + "; ".join(f"{m!r}: {why}" for m, why in invalid.items())
        + ". To delete a wrong one: "
        + " / ".join(f"{m!r}: {delete_hint(m)}" for m in invalid)
    )


def reaudit_tick(
    context: dg.ScheduleEvaluationContext, audit_grid: AuditGridResource, generation_source: GenerationSourceResource
):
    """One tick of the re-audit schedule: a run request per valid model partition x template of the
    grid, or a skip reason (the module docstring)."""
    # names only: a key of the multi-partition set is never built or listed for a model before it is checked
    models = sorted(context.instance.get_dynamic_partitions(MODEL_PARTITIONS.name))
    if not models:
        return dg.SkipReason(
            f"no model is registered in the '{MODEL_PARTITIONS.name}' partitions yet: the "
            "model_partitions_sync sensor adds the models of the registry (or of FAIRNESS_RESPONSES) "
            "within 30 s once the daemon runs it"
        )
    cfg = audit_grid.resolve()
    templates = [t for t in cfg.templates if t in TEMPLATE_PARTITIONS.get_partition_keys()]
    if not templates:
        return dg.SkipReason(f"design {cfg.design_name!r} names no known template ({cfg.templates})")
    invalid = invalid_models(models, known_models(audit_grid, generation_source))
    valid = [m for m in models if m not in invalid]
    if invalid:
        context.log.warning(skipped_message(invalid))
    if not valid:
        return dg.SkipReason(f"no model partition can be re-audited: {skipped_message(invalid)}")
    tick = context.scheduled_execution_time
    round_id = tick.strftime("%Y%m%dT%H%M") if tick is not None else "manual"
    if invalid:
        context.log.info(f"re-auditing {valid} on {templates} (round {round_id})")
    return reaudit_requests(valid, templates, round_id, skipped=sorted(invalid))


def reaudit_schedule_for(settings: FairnessSettings) -> dg.ScheduleDefinition:
    """The ``reaudit_schedule`` of the code location: :func:`reaudit_tick` on the cron string and
    time zone of ``settings`` (``FAIRNESS_REAUDIT_CRON``, ``FAIRNESS_REAUDIT_TIMEZONE``; the settings
    model refuses a cron string Dagster's schedules refuse, naming the variable)."""
    return dg.schedule(
        name="reaudit_schedule",
        job=reaudit,
        cron_schedule=settings.reaudit_cron,
        execution_timezone=settings.reaudit_timezone,
        default_status=dg.DefaultScheduleStatus.STOPPED,
        description="Re-audit every model registered as a partition, on every template of the configured design; "
        "each round is compared with the previous one (asset audit_drift).",
    )(reaudit_tick)
