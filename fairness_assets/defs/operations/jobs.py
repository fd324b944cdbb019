"""Jobs users run from the UI, the command line or a schedule.

Every audit job selects the whole lineage and runs one model x template partition per run (a
backfill of many partitions too: the assets' backfill policy is one run per partition).

The jobs here are the same whatever the settings, except ``study_audit``, whose run config passes
on the configured audit grid: :func:`study_audit_job` builds it from the settings when the
definitions load (``fairness_assets.definitions``).
"""

from __future__ import annotations

import dagster as dg

from resources.settings import FairnessSettings

AUDIT_ASSETS = dg.AssetSelection.all()
# jobs that run a design other than the configured one (FAIRNESS_DESIGN)
JOB_DESIGNS = {"study_audit": "study"}


def grid_config(design: str, settings: FairnessSettings) -> dict:
    """Run config of the audit_grid resource for ``design``. Run config replaces the resource's
    configured values, so every field that ``settings`` set is passed on again."""
    config: dict = {**settings.run_config("audit_grid"), "design": design}
    return {"resources": {"audit_grid": {"config": config}}}


def size_line(design: str, settings: FairnessSettings) -> str:
    """What ``design`` asks, in one line for a job's description (shown in the UI before a launch): its
    prompts a model, runs and models, or why it cannot be read."""
    from resources.settings import ConfigError, design_of

    try:
        size = design_of(design, settings.templates_dir).size()
    except ConfigError as exc:
        return f"design {design!r} cannot be read: {exc}"
    return (
        f"design {design!r}: {size['prompts_per_model']:,} prompts a model x {size['runs']} run(s) x "
        f"{size['models']} model(s) = {size['samples']:,} samples; `fairness-audit design show {design}` "
        "adds the cost estimated from earlier audits"
    )


def demo_audit_job(settings: FairnessSettings):
    """The ``demo_audit`` job: the whole audit on the configured design, its size in the description."""
    return dg.define_asset_job(
        name="demo_audit",
        selection=AUDIT_ASSETS,
        tags={"fairness/job": "demo_audit"},
        description="The whole audit (reference data, generations, recommendations, scores, drift) on the "
        f"configured design (FAIRNESS_DESIGN, demo by default) for one model x template partition. Now: "
        f"{size_line(settings.design, settings)}.",
    )


def study_audit_job(settings: FairnessSettings):
    """The ``study_audit`` job (an asset job, as ``dg.define_asset_job`` returns it): the whole audit on the
    study design, the rest of the grid as ``settings`` set it."""
    return dg.define_asset_job(
        name="study_audit",
        selection=AUDIT_ASSETS,
        tags={"fairness/job": "study_audit"},
        config=grid_config(JOB_DESIGNS["study_audit"], settings),
        description="The study grid of METHOD.md (360 + 46 profiles, six templates, 10 runs, the study's models): "
        "backfill every model x template partition (one run, weights loaded once per model), or run "
        f"`fairness-audit run study_audit`. {size_line(JOB_DESIGNS['study_audit'], settings)}.",
    )


# what spans partitions: built once per round (by the reaudit_report sensor), not by every
# partition's run, so no report mixes two rounds
CROSS_PARTITION_ASSETS = ("base_vs_regional", "model_comparison", "sensitivity", "audit_report")
CROSS_PARTITION = dg.AssetSelection.assets(*CROSS_PARTITION_ASSETS)

reaudit = dg.define_asset_job(
    name="reaudit",
    selection=AUDIT_ASSETS - dg.AssetSelection.groups("reference") - CROSS_PARTITION,
    tags={"fairness/job": "reaudit"},
    description="A new audit round of one partition (started by the reaudit schedule with a fairness/audit_round "
    "tag): generates anew, scores, and stores the drift against the previous audit in audit_drift. The reference "
    "data stay as they are (rebuild them with reference_data); the report follows once the round's runs finish.",
)

audit_report_job = dg.define_asset_job(
    name="audit_report_job",
    selection=CROSS_PARTITION,
    tags={"fairness/job": "audit_report"},
    description="Base vs regional, the model comparison, the sensitivity analysis and the audit report over every "
    "scored partition (after a re-audit round, or a backfill in which some partitions failed).",
)

reference_data = dg.define_asset_job(
    name="reference_data",
    selection=dg.AssetSelection.groups("reference"),
    description="Rebuild the ranking corpus, countries, distances, profiles and prompts.",
)
