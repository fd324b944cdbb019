"""The re-audit schedule: a new audit round of every registered model x template, weekly.

Dagster cannot build a schedule from a job partitioned by a dynamic x static multi-partition
(no time dimension), so the schedule is written by hand: each tick yields one RunRequest per
partition, all tagged with the same audit round (the tick's time), which makes the run a new
audit (see partitions.AUDIT_ROUND_TAG) and lets audit_drift compare it with the previous one.

``FAIRNESS_REAUDIT_CRON`` (default ``0 6 * * 1``: Mondays 06:00) and ``FAIRNESS_REAUDIT_TIMEZONE``
(default ``UTC``) are read when the code location loads, through the settings model
(docs/configuration.md); reload it in the UI after a change.
"""

from __future__ import annotations

import dagster as dg

from resources.settings import AuditGridResource, load_settings
from resources.settings.model import DEFAULT_CRON  # noqa: F401  (re-exported: the documented default)

from fairness_assets.core.partition import PartitionKey
from ..partitions import AUDIT_ROUND_TAG, MODEL_PARTITIONS, TEMPLATE_PARTITIONS
from .jobs import reaudit


def reaudit_cron() -> str:
    """The schedule's cron string; an invalid one raises ConfigError naming FAIRNESS_REAUDIT_CRON."""
    return load_settings().reaudit_cron


def reaudit_requests(models: list[str], templates: list[str], round_id: str) -> list[dg.RunRequest]:
    """One run request per (model, template), all in audit round ``round_id``."""
    return [
        dg.RunRequest(
            run_key=f"reaudit-{round_id}-{PartitionKey(model, template)}",
            partition_key=dg.MultiPartitionKey({"model": model, "template": template}),
            tags={AUDIT_ROUND_TAG: round_id},
        )
        for model in models
        for template in templates
    ]


@dg.schedule(
    job=reaudit,
    cron_schedule=reaudit_cron(),
    execution_timezone=load_settings().reaudit_timezone,
    default_status=dg.DefaultScheduleStatus.STOPPED,
    description="Re-audit every model registered as a partition, on every template of the configured preset; "
    "each round is compared with the previous one (asset audit_drift).",
)
def reaudit_schedule(context: dg.ScheduleEvaluationContext, audit_grid: AuditGridResource):
    models = sorted(context.instance.get_dynamic_partitions(MODEL_PARTITIONS.name))
    if not models:
        return dg.SkipReason(f"no model is registered in the '{MODEL_PARTITIONS.name}' partitions yet: add one in the "
                             "UI (asset generations > partitions) or run an audit first")
    cfg = audit_grid.resolve()
    templates = [t for t in cfg.templates if t in TEMPLATE_PARTITIONS.get_partition_keys()]
    if not templates:
        return dg.SkipReason(f"preset {cfg.preset!r} names no known template ({cfg.templates})")
    tick = context.scheduled_execution_time
    round_id = (tick.strftime("%Y%m%dT%H%M") if tick is not None else "manual")
    return reaudit_requests(models, templates, round_id)


SCHEDULES = [reaudit_schedule]
