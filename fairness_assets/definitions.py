"""The Dagster code location, in Dagster's project layout (``[tool.dg]`` in pyproject.toml).

``defs`` is a ``@dg.definitions`` function, as ``dg scaffold project`` writes it: Dagster's tools
call it when they load the code location (``dg dev``, ``dg check defs``, ``dg list defs``,
``dagster dev -w workspace.yaml``, the code server ``dagster api grpc -m fairness_assets.definitions``,
each run's process), not when this module is imported; Python callers call ``defs()`` (the
settings of the environment as it is then) or :func:`load_definitions` with settings of their own.

The code location is everything under ``fairness_assets/defs/``, loaded by
``dg.load_from_defs_folder`` (the assets and checks of the stage folders ``reference/``,
``generation/``, ``understanding/``, ``scoring/``, ``reporting/``; the jobs and sensors of
``operations/``: nothing lists modules, a module added under ``defs/`` is part of it), and what the
settings make (:func:`settings_definitions`): every resource (``defs/resources.py``), the
executor, the run config of ``study_audit`` and the re-audit schedule. The catalog
(``defs/catalog.py``: kinds, owners, tags and method of each asset) is applied here to every
asset; an asset without a catalog entry fails the load. The settings model is read from the
environment once per load, in ``defs``, and passed to everything that needs it
(docs/configuration.md).

This module is the entry of every process that serves the code location, so importing it (and
only it: not ``import fairness_assets`` nor ``fairness_assets.core``) undoes an inherited "ignore
SIGINT/SIGTERM" (:mod:`fairness_assets._signals`), before Dagster copies SIGINT's handler onto
SIGTERM; ``fairness-audit ui`` does the same before it starts ``dagster dev``.
"""

from __future__ import annotations

from pathlib import Path

import dagster as dg

from resources.settings import FairnessSettings, load_settings

from ._signals import restore_inherited_signals
from .defs.catalog import catalogued
from .defs.operations.executors import executor_for
from .defs.operations.jobs import demo_audit_job, study_audit_job
from .defs.operations.schedules import reaudit_schedule_for
from .defs.reporting.comparison import gate_checks
from .defs.resources import RESOURCE_CLASSES, build_resources

__all__ = ["RESOURCE_CLASSES", "build_resources", "defs", "load_definitions", "settings_definitions"]

restore_inherited_signals()  # the code server's entry (module docstring)


def settings_definitions(settings: FairnessSettings) -> dg.Definitions:
    """What ``settings`` make of the code location: every resource, the executor
    (``FAIRNESS_EXECUTOR``), the ``study_audit`` job (its run config passes the grid on), the
    re-audit schedule (``FAIRNESS_REAUDIT_CRON``, ``FAIRNESS_REAUDIT_TIMEZONE``) and, only when a gate
    file is configured (``FAIRNESS_GATE_FILE``), the release gate's blocking checks."""
    return dg.Definitions(
        asset_checks=gate_checks(settings.gate_file),
        resources=build_resources(settings),
        executor=executor_for(settings),
        jobs=[demo_audit_job(settings), study_audit_job(settings)],
        schedules=[reaudit_schedule_for(settings)],
    )


def load_definitions(settings: FairnessSettings) -> dg.Definitions:
    """The code location with ``settings``: the defs folder loaded now, with what the settings make
    (:func:`settings_definitions`), every asset catalogued with the same settings. The configured design
    (``FAIRNESS_DESIGN``) is the axis catalogue of every step of this process (a step that uses the audit
    grid reads its run config's design)."""
    from resources.settings import design_of

    from .core.reference import axes

    design = design_of(settings.design, settings.templates_dir)
    axes.use_in_process(design.catalogue, design)
    loaded = dg.Definitions.merge(
        dg.load_from_defs_folder(path_within_project=Path(__file__).parent), settings_definitions(settings)
    )
    # the same Definitions with the catalog's kinds, owners, tags and method note on every asset
    return dg.Definitions(
        assets=catalogued(loaded.assets or [], settings),
        asset_checks=loaded.asset_checks,
        jobs=loaded.jobs,
        schedules=loaded.schedules,
        sensors=loaded.sensors,
        resources=loaded.resources,
        executor=loaded.executor,
        loggers=loaded.loggers,
        metadata=loaded.metadata,
        component_tree=loaded.component_tree,
    )


@dg.definitions
def defs() -> dg.Definitions:
    """The code location as Dagster's tools load it: the settings read from the environment now."""
    return load_definitions(load_settings())
