"""Every resource of the code location, built from the settings model: :func:`build_resources`
takes the one ``FairnessSettings`` object that its caller read from the environment
(``fairness_assets.definitions`` when the code location loads, ``load_settings()``; the command
line with its own values in place) and reads nothing from the environment itself.

Every deployment setting is a ``FAIRNESS_*`` environment variable, defined once in the settings
model (``resources.settings.model.FairnessSettings``) and listed with its type, default, meaning,
where it is used and when it is read in docs/configuration.md (generated from the model).
Variables Dagster can read at run time (strings, integers, and every secret) reach the resources
as ``dagster.EnvVar`` (never shown in the UI; a secret is resolved by the run, never stored in
the definitions); floats and booleans, the executor, the schedule and the Kubernetes tags are
values fixed when the code location loads.
"""

from __future__ import annotations

from resources.alerts import AlertResource
from resources.database import ResultsDatabase, SQLResultsIOManager
from resources.llm.resource import LLMResource
from resources.settings import (
    AuditGridResource,
    FairnessSettings,
    GenerationSourceResource,
    ParseQualityResource,
    ReferenceDataResource,
    ReportResource,
    ScoringResource,
)
from resources.tagger import SubjectTaggerResource

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


def build_resources(settings: FairnessSettings, env_vars: bool = True) -> dict:
    """Every resource configured from ``settings``, and the ``results_io`` IO manager on its
    database. ``env_vars``: the variables Dagster can read at run time as ``dagster.EnvVar``
    (the code location); off, every value as ``settings`` hold it, so a run reads nothing from
    the environment (``fairness-audit score``: :meth:`FairnessSettings.resource_config`)."""
    built = {key: cls(**settings.resource_config(key, env_vars=env_vars)) for key, cls in RESOURCE_CLASSES.items()}
    built["results_io"] = SQLResultsIOManager(database=built["database"])
    return built
