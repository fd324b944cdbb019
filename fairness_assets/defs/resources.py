"""The definitions-level part of the code location: every resource and the executor, built from
the settings model when the code location loads (``dg.load_from_defs_folder`` calls
:func:`resources_and_executor` like any ``@dg.definitions`` function of the defs folder).

Every deployment setting is a ``FAIRNESS_*`` environment variable, defined once in the settings
model (``resources.settings.model.FairnessSettings``) and listed with its type, default, meaning,
where it is used and when it is read in docs/configuration.md (generated from the model).
:func:`build_resources` reads the environment when it is called: variables Dagster can read at
run time (strings, integers, and every secret) reach the resources as ``dagster.EnvVar`` (never
shown in the UI); floats and booleans, the executor, the schedule and the Kubernetes tags are read
when the code location loads.
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

from .operations.executors import executor_from_env

# resource key -> its class; the settings model's targets name these keys (docs/configuration.md)
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


@dg.definitions
def resources_and_executor() -> dg.Definitions:
    """The resources and the executor (``FAIRNESS_EXECUTOR``) of every job of the code location."""
    return dg.Definitions(resources=build_resources(), executor=executor_from_env())
