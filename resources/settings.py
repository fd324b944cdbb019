"""Typed configuration: where the data lives, the audit grid (presets) and the model registry.

One place for every setting. Values that differ per deployment (corpus path, database URL,
secrets) reach the resources through ``dagster.EnvVar`` in ``fairness_assets.definitions``;
this module only knows the defaults and how to validate and record a configuration.
"""

from __future__ import annotations

import hashlib
import json
import os
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, Optional

import yaml
from dagster import ConfigurableResource
from pydantic import Field

PROJECT_ROOT = Path(__file__).resolve().parents[1]
DATA_DIR = PROJECT_ROOT / "data"
TEMPLATES_DIR = DATA_DIR / "templates"
PRESETS_DIR = DATA_DIR / "presets"
ALIASES_FILE = DATA_DIR / "aliases" / "countries.csv"
CAPITALS_FILE = DATA_DIR / "aliases" / "capital_coordinates.csv"
UNIVERSITY_ALIASES_FILE = DATA_DIR / "aliases" / "universities.csv"
DEMO_CORPUS = DATA_DIR / "demo" / "illustrative_rankings_demo.csv"
MODEL_REGISTRY = DATA_DIR / "models.yaml"


def results_dir() -> Path:
    """Folder for the SQLite results database and reports ($FAIRNESS_HOME, else data/results)."""
    return Path(os.environ.get("FAIRNESS_HOME") or (DATA_DIR / "results"))


def default_database_url() -> str:
    return f"sqlite:///{results_dir() / 'results.db'}"


class ConfigError(ValueError):
    """A configuration value that cannot be used; the message names it."""


def stable_hash(obj: Any) -> str:
    return hashlib.sha256(json.dumps(obj, sort_keys=True, default=str).encode()).hexdigest()[:16]


# ----------------------------------------------------------------------------- model registry
@dataclass(frozen=True)
class ModelSpec:
    name: str
    source: str
    backend: str = "transformers"
    revision: Optional[str] = None
    gguf_file: Optional[str] = None
    parts: tuple[str, ...] = ()
    sha256: Optional[str] = None
    system_role: bool = True
    base_url: Optional[str] = None
    extra: dict = field(default_factory=dict)


BACKENDS = ("transformers", "openai", "vllm")


def load_model_registry(path: str | Path = MODEL_REGISTRY) -> dict[str, ModelSpec]:
    path = Path(path)
    if not path.exists():
        raise ConfigError(f"model registry {path} not found")
    try:
        doc = yaml.safe_load(path.read_text(encoding="utf-8")) or {}
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None) or getattr(exc, "context_mark", None)
        where = f"line {mark.line + 1}, column {mark.column + 1}" if mark is not None else "unknown line"
        problem = ": ".join(str(x) for x in (getattr(exc, "context", None), getattr(exc, "problem", None)) if x)
        raise ConfigError(f"model registry {path}, {where}: not valid YAML ({problem or exc})") from None
    except (OSError, UnicodeDecodeError) as exc:
        raise ConfigError(f"model registry {path} cannot be read: {exc}") from None
    models = doc.get("models") if isinstance(doc, dict) else None
    if not isinstance(models, dict) or not models:
        raise ConfigError(f"{path}: expected a non-empty 'models:' mapping")
    out = {}
    known = set(ModelSpec.__dataclass_fields__) - {"name", "extra"}
    for name, entry in models.items():
        if "|" in str(name):
            raise ConfigError(f"{path}: model name {name!r} contains '|', which separates model and template in "
                              "partition keys; rename it")
        if not isinstance(entry, dict) or not entry.get("source"):
            raise ConfigError(f"{path}: model {name!r} needs at least a 'source' (HF id, local path or URL)")
        backend = entry.get("backend", "transformers")
        if backend not in BACKENDS:
            raise ConfigError(f"{path}: model {name!r} has unknown backend {backend!r}; use one of {BACKENDS}")
        kwargs = {k: v for k, v in entry.items() if k in known}
        if "parts" in kwargs:
            kwargs["parts"] = tuple(kwargs["parts"] or ())
        out[str(name)] = ModelSpec(
            name=str(name), extra={k: v for k, v in entry.items() if k not in known}, **kwargs
        )
    return out


# ----------------------------------------------------------------------------- audit grid
@dataclass(frozen=True)
class AuditConfig:
    """The resolved audit grid; its ``config_hash`` is recorded with every result row."""

    preset: str
    genders: tuple[str, ...]
    economic_classes: tuple[str, ...]
    nationalities: tuple[str, ...]
    templates: tuple[str, ...]
    runs: int
    models: tuple[str, ...]
    quality: tuple[tuple[str, float], ...] = ()  # parse-quality thresholds the preset sets

    @property
    def config_hash(self) -> str:
        return stable_hash(asdict(self))

    def as_json(self) -> str:
        return json.dumps(asdict(self), sort_keys=True)


def load_preset(name: str, folder: str | Path = PRESETS_DIR) -> dict:
    path = Path(folder) / f"{name}.yaml"
    if not path.exists():
        available = sorted(p.stem for p in Path(folder).glob("*.yaml"))
        raise ConfigError(f"unknown preset {name!r} (no {path}); available: {available}")
    doc = yaml.safe_load(path.read_text(encoding="utf-8")) or {}
    return doc


class AuditGridResource(ConfigurableResource):
    """The audit grid: a preset (``demo`` or ``study``) with optional per-field overrides."""

    preset: str = Field(default="demo", description="Preset in data/presets/: demo or study.")
    genders: Optional[list[str]] = Field(default=None, description="Override the preset's genders.")
    economic_classes: Optional[list[str]] = Field(default=None, description="Override the classes.")
    nationalities: Optional[list[str]] = Field(default=None, description="Override the nationalities.")
    templates: Optional[list[str]] = Field(default=None, description="Override the prompt templates.")
    runs: Optional[int] = Field(default=None, description="Samples per (model, template, profile).")
    models: Optional[list[str]] = Field(default=None, description="Override the audited models.")
    model_registry_path: str = Field(default=str(MODEL_REGISTRY), description="Model registry YAML.")

    def resolve(self) -> AuditConfig:
        base = load_preset(self.preset)

        def pick(key: str):
            value = getattr(self, key)
            value = base.get(key) if value is None else value
            if value is None:
                raise ConfigError(f"preset {self.preset!r} does not set {key!r}")
            return value

        cfg = AuditConfig(
            preset=self.preset,
            genders=tuple(pick("genders")),
            economic_classes=tuple(pick("economic_classes")),
            nationalities=tuple(pick("nationalities")),
            templates=tuple(pick("templates")),
            runs=int(pick("runs")),
            models=tuple(pick("models")),
            quality=tuple(sorted((base.get("quality") or {}).items())),
        )
        if cfg.runs < 1:
            raise ConfigError(f"runs must be at least 1, got {cfg.runs}")
        registry = self.model_registry()
        unknown = [m for m in cfg.models if m not in registry]
        if unknown:
            raise ConfigError(
                f"model(s) {unknown!r} not in the registry {self.model_registry_path}; known: {sorted(registry)}"
            )
        return cfg

    def model_registry(self) -> dict[str, ModelSpec]:
        return load_model_registry(self.model_registry_path)


class ReferenceDataResource(ConfigurableResource):
    """Where the ranking corpus and the reviewed reference files are.

    ``corpus_path`` points at the user's own QS export; empty means the illustrative demo
    corpus shipped in data/demo (not the QS ranking).
    """

    corpus_path: str = Field(default="", description="Path to a QS World University Rankings CSV export.")
    rank_column: str = Field(default="2024 RANK", description="Rank column of the export.")
    templates_dir: str = Field(default=str(TEMPLATES_DIR), description="Folder of prompt template files.")
    country_aliases_path: str = Field(default=str(ALIASES_FILE), description="Reviewed country alias CSV.")
    university_aliases_path: str = Field(
        default=str(UNIVERSITY_ALIASES_FILE), description="Reviewed university alias CSV (alias,name,iso3)."
    )
    capital_overrides_path: str = Field(
        default=str(CAPITALS_FILE), description="Reviewed capital coordinates that win over countryinfo; empty: none."
    )
    rep_r_min: float = Field(default=1.0, description="R_min of the global reputation scale.")
    rep_r_max: float = Field(default=1200.0, description="R_max of the global reputation scale.")

    def resolved_corpus_path(self) -> Path:
        return Path(self.corpus_path) if self.corpus_path else DEMO_CORPUS

    def is_demo_corpus(self) -> bool:
        return self.resolved_corpus_path().resolve() == DEMO_CORPUS.resolve()


class ParseQualityResource(ConfigurableResource):
    """Thresholds of the parse-quality expectation suite (expectations/suites/*.json).

    Unset values use the suite's defaults. Checks marked blocking in the suite stop the
    metric assets of a partition whose recommendations fail them.
    """

    suite: str = Field(default="recommendations_quality", description="Suite name in expectations/suites.")
    min_parse_rate: Optional[float] = Field(default=None, description="Minimum share of parsed responses.")
    min_three_items_share: Optional[float] = Field(default=None, description="Minimum share with three items.")
    min_match_rate: Optional[float] = Field(default=None, description="Minimum share of items matched to the corpus.")
    min_country_resolved: Optional[float] = Field(default=None, description="Minimum share of items with a country.")
    max_group_gap: Optional[float] = Field(default=None, description="Maximum parse/match-rate gap between groups.")

    def thresholds(self, preset_quality: Optional[dict] = None) -> dict[str, Optional[float]]:
        """Thresholds in force: this resource's values, else the preset's, else the suite's defaults."""
        out = dict(preset_quality or {})
        for k in ("min_parse_rate", "min_three_items_share", "min_match_rate", "min_country_resolved", "max_group_gap"):
            if getattr(self, k) is not None:
                out[k] = getattr(self, k)
        return out


EXAMPLE_RESPONSES = DATA_DIR / "examples" / "demo_responses.jsonl"


class GenerationSourceResource(ConfigurableResource):
    """Where generations come from, and how they are decoded.

    ``responses_path`` set: a bring-your-own responses file (CSV / JSONL / Parquet, see
    docs/responses_format.md) is imported, one partition per (model, template) found in it.
    Empty (default): the generation engine samples every (profile, run) of the audit grid
    with the partition's model through the LLM resource (METHOD.md §1 decoding).
    """

    responses_path: str = Field(default="", description="Responses file to import; empty: generate with the engine.")
    temperature: float = Field(default=0.75, description="Sampling temperature.")
    top_p: float = Field(default=0.95, description="Nucleus sampling mass.")
    max_new_tokens: int = Field(default=300, description="Tokens generated per answer at most.")
    commit_every: int = Field(default=0, description="Finished samples that trigger a commit (also every 2 s); 0: 64.")

    def resolved_path(self) -> Optional[Path]:
        return Path(self.responses_path) if self.responses_path else None

    def sampling(self):
        from resources.llm.base import SamplingParams

        return SamplingParams(temperature=self.temperature, top_p=self.top_p, max_new_tokens=self.max_new_tokens,
                              do_sample=self.temperature > 0)


class ScoringResource(ConfigurableResource):
    """Every parameter of DRS and GRS (METHOD.md §5–6); recorded with each result."""

    lambda_high: float = Field(default=0.0001, description="Acc decay per km, high-income students.")
    lambda_middle: float = Field(default=0.0005, description="Acc decay per km, middle-income students.")
    lambda_low: float = Field(default=0.001, description="Acc decay per km, low-income students.")
    r_min: float = Field(default=1.0, description="R_min of the global reputation scale.")
    r_max: float = Field(default=1200.0, description="R_max: ranks beyond get Rep 0.")
    w_acc: float = Field(default=1 / 3, description="DRS weight of Acc.")
    w_rep: float = Field(default=1 / 3, description="DRS weight of Rep.")
    w_acad: float = Field(default=1 / 3, description="DRS weight of Acad.")
    epsilon: float = Field(default=1e-6, description="Scaled_Repr = min(1, Repr / (Avail + epsilon)).")
    band_rule: str = Field(default="lower", description="Numeric rank of a band: lower, mid or upper.")
    us_uk: list[str] = Field(default=["USA", "GBR"], description="ISO3 codes of the concentration share.")
    top_k: int = Field(default=10, description="Rows per attribute value in the reduced-context tables.")

    def params(self, student_interest: dict):
        from fairness_assets.core.metrics import ScoringParams

        return ScoringParams(
            lambdas={"high": self.lambda_high, "middle": self.lambda_middle, "low": self.lambda_low},
            r_min=self.r_min, r_max=self.r_max, w_acc=self.w_acc, w_rep=self.w_rep, w_acad=self.w_acad,
            epsilon=self.epsilon, band_rule=self.band_rule, student_interest=student_interest,
            us_uk=tuple(self.us_uk), top_k=self.top_k,
        )


class ReportResource(ConfigurableResource):
    """Statistics and report settings (docs/statistics.md); recorded in every report."""

    n_boot: int = Field(default=2000, description="Bootstrap resamples for every interval.")
    n_perm: int = Field(default=10_000, description="Sign-flip permutations (exact enumeration when fewer suffice).")
    seed: int = Field(default=0, description="Seed of every resampling (results are reproducible).")
    level: float = Field(default=0.95, description="Confidence level of the intervals.")
    correction: str = Field(default="holm", description="Multiple-comparison correction: holm or bh.")
    alpha: float = Field(default=0.05, description="Significance level after correction.")
    output_dir: str = Field(default="", description="Folder for reports and figures (default: <results>/reports).")
    figure_workers: int = Field(default=0, ge=0, description="Processes drawing the figures of several partitions "
                                "at once (0: one per CPU core, at most 8; 1: draw in the step's own process).")

    def folder(self) -> Path:
        return Path(self.output_dir) if self.output_dir else results_dir() / "reports"

    def drawing_processes(self) -> int:
        return self.figure_workers or max(1, min(8, os.cpu_count() or 1))

    def as_dict(self) -> dict:
        return {"n_boot": self.n_boot, "n_perm": self.n_perm, "seed": self.seed, "level": self.level,
                "correction": self.correction, "alpha": self.alpha}
