"""Typed configuration, one module per concern.

- ``model``       the settings model: every ``FAIRNESS_*`` variable (type, default, meaning,
                  where used, when read); docs/configuration.md is generated from it
- ``paths``       where the shipped data lives and where results go
- ``registry``    the model registry
- ``grid``        the audit grid (designs)
- ``reference``   the ranking corpus, reviewed reference files, the reputation scale
- ``quality``     parse-quality thresholds
- ``generation``  where generations come from and how they are decoded
- ``scoring``     the DRS and GRS parameters
- ``report``      statistics and report settings

``load_settings()`` reads the environment into one ``FairnessSettings`` object; its caller passes
it on (``fairness_assets.definitions`` when the code location loads: the resources through
``build_resources(settings)``, the executor, the schedule, the catalog). Deployment values that
Dagster can read at run time reach the resources as ``dagster.EnvVar``.
"""

from .base import ConfigError, stable_hash
from .generation import GenerationSourceResource
from .grid import AuditConfig, AuditGridResource, design_of, design_values, shipped_design
from .model import FairnessSettings, default_of, field_specs, load_settings
from .paths import (
    ALIASES_FILE,
    CAPITALS_FILE,
    DATA_DIR,
    DEMO_CORPUS,
    DESIGNS_DIR,
    EXAMPLE_RESPONSES,
    MODEL_REGISTRY,
    PROJECT_ROOT,
    TEMPLATES_DIR,
    UNIVERSITY_ALIASES_FILE,
    default_database_url,
    results_dir,
)
from .quality import ParseQualityResource
from .reference import ReferenceDataResource
from .registry import BACKENDS, ModelSpec, load_model_registry
from .report import ReportResource
from .scoring import ScoringResource

__all__ = [
    "ALIASES_FILE",
    "AuditConfig",
    "AuditGridResource",
    "BACKENDS",
    "CAPITALS_FILE",
    "ConfigError",
    "DATA_DIR",
    "DEMO_CORPUS",
    "EXAMPLE_RESPONSES",
    "FairnessSettings",
    "GenerationSourceResource",
    "MODEL_REGISTRY",
    "ModelSpec",
    "DESIGNS_DIR",
    "PROJECT_ROOT",
    "ParseQualityResource",
    "ReferenceDataResource",
    "ReportResource",
    "ScoringResource",
    "TEMPLATES_DIR",
    "UNIVERSITY_ALIASES_FILE",
    "default_database_url",
    "default_of",
    "field_specs",
    "load_model_registry",
    "design_of",
    "design_values",
    "shipped_design",
    "load_settings",
    "results_dir",
    "stable_hash",
]
