"""The Dagster code location: assets of every stage, resources, jobs.

Every deployment setting is a ``FAIRNESS_*`` environment variable, defined once in the settings
model (``resources.settings.model.FairnessSettings``) and listed with its type, default, meaning,
where it is used and when it is read in docs/configuration.md (generated from the model).
``build_resources()`` reads the environment when it is called: variables Dagster can read at run
time (strings, integers, and every secret) reach the resources as ``dagster.EnvVar`` (never shown
in the UI); floats and booleans, the executor, the schedule and the Kubernetes tags are read when
the code location loads.
"""

from __future__ import annotations

import dagster as dg

from resources.alerts import AlertResource
from resources.database import ResultsDatabase, SQLResultsIOManager
from resources.llm.resource import LLMResource
from resources.settings import (
    AuditGridResource,
    GenerationSourceResource,
    ParseQualityResource,
    ReferenceDataResource,
    ReportResource,
    ScoringResource,
    load_settings,
)
from resources.tagger import SubjectTaggerResource

from .defs.catalog import catalogued
from .defs.generation import assets as generation_assets
from .defs.operations.executors import executor_from_env
from .defs.operations.jobs import JOBS
from .defs.operations.schedules import SCHEDULES
from .defs.operations.sensors import SENSORS
from .defs.reference import assets as reference_assets
from .defs.scoring import assets as scoring_assets
from .defs.reporting import assets as reporting_assets
from .defs.reporting import comparison as comparison_assets
from .defs.reporting import geography as geography_assets
from .defs.scoring import drift as drift_assets
from .defs.understanding import assets as understanding_assets


ASSETS = catalogued(dg.load_assets_from_modules(  # kinds, owners and tags: defs/catalog.py
    [reference_assets, generation_assets, understanding_assets, scoring_assets, drift_assets, reporting_assets,
     geography_assets, comparison_assets]))

RESOURCE_CLASSES = {
    "database": ResultsDatabase,
    "reference": ReferenceDataResource,
    "audit_grid": AuditGridResource,
    "generation_source": GenerationSourceResource,
    "subject_tagger": SubjectTaggerResource,
    "parse_quality": ParseQualityResource,
    "scoring": ScoringResource,
    "report_settings": ReportResource,
    "llm": LLMResource,
    "alerts": AlertResource,
}


def build_resources() -> dict:
    """Every resource, configured from the environment as it is now (see the module docstring)."""
    settings = load_settings()
    built = {key: cls(**settings.resource_config(key)) for key, cls in RESOURCE_CLASSES.items()}
    built["results_io"] = SQLResultsIOManager(database=built["database"])
    return built


defs = dg.Definitions(
    assets=ASSETS,
    resources=build_resources(),
    jobs=JOBS,
    schedules=SCHEDULES,
    sensors=SENSORS,
    executor=executor_from_env(),
)
