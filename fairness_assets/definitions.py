"""The Dagster code location, in Dagster's project layout (``[tool.dg]`` in pyproject.toml).

``defs`` is everything under ``fairness_assets/defs/``, loaded by ``dg.load_from_defs_folder``: the
assets and checks of the stage folders (``reference/``, ``generation/``, ``understanding/``,
``scoring/``, ``reporting/``), the jobs, schedule and sensors of ``operations/``, and the resources
and executor of ``defs/resources.py`` (a ``@dg.definitions`` function built from the settings
model; docs/configuration.md). Nothing lists modules: a module added under ``defs/`` is part of
the code location. The catalog (``defs/catalog.py``: kinds, owners, tags and method of each asset)
is applied here to every asset; an asset without a catalog entry fails the load.

``defs`` is built when this module is imported, as a ``Definitions`` object: Dagster's tools load
it (``dg dev``, ``dg check defs``, ``dg list defs``, ``dagster dev -w workspace.yaml``, the code
server ``dagster api grpc -m fairness_assets.definitions``) and the command line and the tests
use it as it is.

This module is the entry of every process that serves the code location, so importing it (and
only it: not ``import fairness_assets`` nor ``fairness_assets.core``) undoes an inherited "ignore
SIGINT/SIGTERM" (:mod:`fairness_assets._signals`), before Dagster copies SIGINT's handler onto
SIGTERM; ``fairness-audit ui`` does the same before it starts ``dagster dev``.
"""

from __future__ import annotations

from pathlib import Path

import dagster as dg

from ._signals import restore_inherited_signals
from .defs.catalog import catalogued
from .defs.resources import RESOURCE_CLASSES, build_resources

__all__ = ["RESOURCE_CLASSES", "build_resources", "defs", "load_definitions"]

restore_inherited_signals()  # the code server's entry (module docstring)


def load_definitions() -> dg.Definitions:
    """The defs folder, loaded now (the settings read from the environment as it is), every asset
    catalogued."""
    loaded = dg.load_from_defs_folder(path_within_project=Path(__file__).parent)
    # the same Definitions with the catalog's kinds, owners, tags and method note on every asset
    return dg.Definitions(
        assets=catalogued(loaded.assets or []), asset_checks=loaded.asset_checks, jobs=loaded.jobs,
        schedules=loaded.schedules, sensors=loaded.sensors, resources=loaded.resources,
        executor=loaded.executor, loggers=loaded.loggers, metadata=loaded.metadata,
        component_tree=loaded.component_tree)


defs = load_definitions()
