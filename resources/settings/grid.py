"""The audit grid: a preset (data/presets) with optional per-field overrides, and the model
registry it checks the audited models against."""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Optional

import yaml
from dagster import ConfigurableResource
from pydantic import Field

from .base import ConfigError, stable_hash
from .model import default_of
from .paths import PRESETS_DIR
from .registry import ModelSpec, load_model_registry


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

    preset: str = Field(
        default=default_of("preset"), description="Preset in data/presets/: demo or study (FAIRNESS_PRESET)."
    )
    genders: Optional[list[str]] = Field(default=None, description="Override the preset's genders.")
    economic_classes: Optional[list[str]] = Field(default=None, description="Override the classes.")
    nationalities: Optional[list[str]] = Field(default=None, description="Override the nationalities.")
    templates: Optional[list[str]] = Field(default=None, description="Override the prompt templates.")
    runs: Optional[int] = Field(default=None, description="Samples per (model, template, profile).")
    models: Optional[list[str]] = Field(default=None, description="Override the audited models.")
    model_registry_path: str = Field(
        default=default_of("model_registry"), description="Model registry YAML (FAIRNESS_MODEL_REGISTRY)."
    )
    max_items: int = Field(
        default=default_of("max_items"),
        description="k: the first k distinct items of "
        "an answer are scored, the rest counted (FAIRNESS_MAX_ITEMS; METHOD.md §9).",
    )

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
