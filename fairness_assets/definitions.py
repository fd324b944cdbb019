"""The Dagster code location: assets of every stage, resources, jobs.

Deployment-specific values come from the environment through ``dagster.EnvVar`` (read at
run time, never printed in the UI):

- ``FAIRNESS_QS_CORPUS``      path to the user's QS export (default: the illustrative demo corpus)
- ``FAIRNESS_DATABASE_URL``   results database URL (default: SQLite file in ``FAIRNESS_HOME``)
- ``FAIRNESS_PRESET``         audit grid preset, ``demo`` (default) or ``study``
- ``FAIRNESS_MODEL_REGISTRY`` model registry YAML (default: data/models.yaml)
- ``FAIRNESS_RESPONSES``      a bring-your-own responses file for the ``generations`` asset
- ``FAIRNESS_TAGGER``         subject tagger: ``rules`` (default) or ``llm``
- ``FAIRNESS_LLM_API_KEY``    API key for OpenAI-compatible endpoints
- ``FAIRNESS_LLM_MAX_CONCURRENCY``  requests in flight to an OpenAI-compatible endpoint (default 256)
- ``FAIRNESS_LLM_REQUESTS_PER_MINUTE``  request-rate limit for hosted APIs (default 0: none)
- ``FAIRNESS_DEVICE``         ``auto`` (default), ``cpu`` or ``cuda``
- ``FAIRNESS_ALERT_*``, ``FAIRNESS_SMTP_*``  alert channels (resources/alerts.py)
- ``FAIRNESS_EXECUTOR``       ``in_process`` (default), ``multiprocess``, ``celery`` or ``k8s``
- ``FAIRNESS_REAUDIT_CRON``   re-audit schedule (default weekly, Mondays 06:00 UTC)

docs/operations.md describes every one of them.
"""

from __future__ import annotations

import os

import dagster as dg

from resources.alerts import AlertResource
from resources.database import ResultsDatabase, SQLResultsIOManager
from resources.llm.resource import LLMResource
from resources.settings import (
    AuditGridResource,
    MODEL_REGISTRY,
    GenerationSourceResource,
    ParseQualityResource,
    ReferenceDataResource,
    ReportResource,
    ScoringResource,
)
from resources.tagger import SubjectTaggerResource

from .defs.generation import assets as generation_assets
from .defs.operations.executors import executor_from_env
from .defs.operations.jobs import JOBS
from .defs.operations.schedules import SCHEDULES
from .defs.operations.sensors import SENSORS
from .defs.reference import assets as reference_assets
from .defs.scoring import assets as scoring_assets
from .defs.reporting import assets as reporting_assets
from .defs.scoring import drift as drift_assets
from .defs.understanding import assets as understanding_assets


def _env(name: str, default: str = ""):
    """An ``EnvVar`` when the variable is set (resolved at run time), else the default."""
    return dg.EnvVar(name) if os.environ.get(name) else default


def _env_int(name: str, default: int):
    """An integer ``EnvVar`` when the variable is set (resolved at run time), else the default."""
    return dg.EnvVar.int(name) if os.environ.get(name) else default


def build_resources() -> dict:
    database = ResultsDatabase(url=_env("FAIRNESS_DATABASE_URL"))
    registry = _env("FAIRNESS_MODEL_REGISTRY", str(MODEL_REGISTRY))
    return {
        "database": database,
        "results_io": SQLResultsIOManager(database=database),
        "reference": ReferenceDataResource(corpus_path=_env("FAIRNESS_QS_CORPUS")),
        "audit_grid": AuditGridResource(preset=_env("FAIRNESS_PRESET", "demo"), model_registry_path=registry),
        "generation_source": GenerationSourceResource(responses_path=_env("FAIRNESS_RESPONSES")),
        "subject_tagger": SubjectTaggerResource(method=_env("FAIRNESS_TAGGER", "rules")),
        "parse_quality": ParseQualityResource(),
        "scoring": ScoringResource(),
        "report_settings": ReportResource(output_dir=_env("FAIRNESS_REPORTS_DIR")),
        "llm": LLMResource(api_key=_env("FAIRNESS_LLM_API_KEY"), device=_env("FAIRNESS_DEVICE", "auto"),
                           registry_path=registry,
                           max_concurrency=_env_int("FAIRNESS_LLM_MAX_CONCURRENCY", 256),
                           requests_per_minute=_env_int("FAIRNESS_LLM_REQUESTS_PER_MINUTE", 0)),
        "alerts": AlertResource(
            channels=_env("FAIRNESS_ALERT_CHANNELS", "log"),
            webhook_url=_env("FAIRNESS_ALERT_WEBHOOK_URL"),
            smtp_host=_env("FAIRNESS_SMTP_HOST"),
            smtp_port=_env_int("FAIRNESS_SMTP_PORT", 25),
            smtp_user=_env("FAIRNESS_SMTP_USER"),
            smtp_password=_env("FAIRNESS_SMTP_PASSWORD"),
            smtp_starttls=os.environ.get("FAIRNESS_SMTP_STARTTLS", "").lower() in ("1", "true", "yes"),
            email_from=_env("FAIRNESS_ALERT_EMAIL_FROM", "llm-advisor-fairness@localhost"),
            email_to=_env("FAIRNESS_ALERT_EMAIL_TO"),
            ui_base_url=_env("FAIRNESS_UI_URL", "http://127.0.0.1:3000"),
        ),
    }


defs = dg.Definitions(
    assets=dg.load_assets_from_modules(
        [reference_assets, generation_assets, understanding_assets, scoring_assets, drift_assets, reporting_assets]),
    resources=build_resources(),
    jobs=JOBS,
    schedules=SCHEDULES,
    sensors=SENSORS,
    executor=executor_from_env(),
)
