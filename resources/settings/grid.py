"""The audit grid: a design (data/designs, or a user's own file; issue 34) with optional per-field
overrides, and the model registry it checks the audited models against."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Optional

from dagster import ConfigurableResource
from pydantic import Field

from fairness_assets.core.reference import axes
from fairness_assets.core.reference.design import Design, DesignError, check_size, load_design, with_values

from .base import ConfigError, stable_hash
from .model import default_of
from .paths import DESIGNS_DIR
from .registry import ModelSpec, load_model_registry


@dataclass(frozen=True)
class AuditConfig:
    """The resolved audit grid; its ``config_hash`` (of the design's content and the overrides) is
    recorded with every result row."""

    design_name: str
    values: tuple[tuple[str, tuple[str, ...]], ...]  # (axis, its values), the design's order
    templates: tuple[str, ...]
    runs: int
    models: tuple[str, ...]
    quality: tuple[tuple[str, float], ...] = ()  # parse-quality thresholds the design sets
    design_json: str = ""  # the design's content (axes, wordings, lambdas, grid, template hashes)
    design: Optional[Design] = field(default=None, compare=False, repr=False)

    @property
    def preset(self) -> str:
        """The design's name (the audit id's prefix, as the preset's name was)."""
        return self.design_name

    def _content(self) -> dict:
        return {
            "design": self.design_name,
            "values": [[a, list(v)] for a, v in self.values],
            "templates": list(self.templates),
            "runs": self.runs,
            "models": list(self.models),
            "quality": [list(q) for q in self.quality],
            "design_json": self.design_json,
        }

    @property
    def config_hash(self) -> str:
        return stable_hash(self._content())

    def as_json(self) -> str:
        return json.dumps(self._content(), sort_keys=True)

    def values_of(self, axis: str) -> tuple[str, ...]:
        return dict(self.values)[axis]


def design_of(name_or_path: str, templates_dir: str | Path) -> Design:
    """The design ``name_or_path`` (a shipped design's name, or a file), validated; ConfigError otherwise."""
    try:
        return load_design(name_or_path, templates_dir=templates_dir, folder=DESIGNS_DIR)
    except DesignError as exc:
        raise ConfigError(str(exc)) from None


class AuditGridResource(ConfigurableResource):
    """The audit grid: a design (``demo``, ``study``, another shipped one, or a path to a user's own
    file) with optional per-field overrides. Resolving it makes the design's axes the active catalogue
    of the process (core.reference.axes.use)."""

    design: str = Field(
        default=default_of("design"),
        description="Design: a name in data/designs (demo, study, beyond_study, advisor) or a path to a "
        "design file (FAIRNESS_DESIGN).",
    )
    values: Optional[dict[str, list[str]]] = Field(
        default=None, description="Override the values of some axes: {axis: [values]} (a subset, or countries)."
    )
    templates: Optional[list[str]] = Field(default=None, description="Override the design's templates (a subset).")
    runs: Optional[int] = Field(default=None, description="Samples per (model, template, profile).")
    models: Optional[list[str]] = Field(default=None, description="Override the audited models.")
    templates_dir: str = Field(
        default=default_of("templates_dir"),
        description="Folder of the template files a design names (FAIRNESS_TEMPLATES_DIR).",
    )
    max_prompts: int = Field(
        default=default_of("max_prompts"),
        description="The largest grid a design may ask one model, in prompts (FAIRNESS_MAX_PROMPTS).",
    )
    model_registry_path: str = Field(
        default=default_of("model_registry"), description="Model registry YAML (FAIRNESS_MODEL_REGISTRY)."
    )
    max_items: int = Field(
        default=default_of("max_items"),
        description="k: the first k distinct items of "
        "an answer are scored, the rest counted (FAIRNESS_MAX_ITEMS; METHOD.md §9).",
    )

    def load(self) -> Design:
        """The design with this resource's overrides, validated (nothing is generated before)."""
        from dataclasses import replace

        design = design_of(self.design, self.templates_dir)
        try:
            if self.values:
                design = with_values(design, self.values)
            if self.templates is not None:
                design = replace(design, templates=self._chosen_templates(design))
            check_size(design, self.max_prompts)
        except DesignError as exc:
            raise ConfigError(str(exc)) from None
        return design

    def _chosen_templates(self, design: Design) -> tuple:
        """The templates override: each a template of the design, or a template file of ``templates_dir``
        whose profile set the design's grid has (checked against the design's axes)."""
        from fairness_assets.core.reference.design import set_sizes
        from fairness_assets.core.reference.prompts import TemplateError, load_templates

        own = {t.name: t for t in design.templates}
        files = [t for t in self.templates if t not in own]
        try:
            with axes.use(design.catalogue):
                found = load_templates(self.templates_dir, files) if files else {}
        except TemplateError as exc:
            raise DesignError(
                f"{design.path}: templates override: {exc} (the design's templates: {design.template_names()})"
            ) from None
        sets = set_sizes(design)
        misfit = [n for n, t in found.items() if t.profile_set not in sets]
        if misfit:
            raise DesignError(
                f"{design.path}: templates override names {misfit}, whose profile set the design's grid does not "
                f"have (it has {', '.join(sets)})"
            )
        return tuple(own.get(n) or found[n] for n in self.templates)

    def resolve(self) -> AuditConfig:
        design = self.load()
        axes.use_design(design)  # the axes every step of this thread reads
        cfg = AuditConfig(
            design_name=design.name,
            values=tuple((a.name, tuple(a.values)) for a in design.axes),
            templates=tuple(design.template_names()),
            runs=int(self.runs if self.runs is not None else design.runs),
            models=tuple(self.models if self.models is not None else design.models),
            quality=design.quality,
            design_json=design.as_json(),
            design=design,
        )
        if cfg.runs < 1:
            raise ConfigError(f"runs must be at least 1, got {cfg.runs}")
        if not cfg.models:
            raise ConfigError(f"design {design.name!r} ({design.path}) names no model, and no models override is set")
        registry = self.model_registry()
        unknown = [m for m in cfg.models if m not in registry]
        if unknown:
            raise ConfigError(
                f"model(s) {unknown!r} not in the registry {self.model_registry_path}; known: {sorted(registry)}"
            )
        return cfg

    def setup_for_execution(self, context) -> None:  # noqa: ARG002 - Dagster's hook
        """Each step that uses the grid reads the design's axes (a design that cannot be read fails
        where it is used, with its message)."""
        try:
            axes.use_design(self.load())
        except ConfigError:
            pass

    @classmethod
    def of_run_config(cls, run_config: Optional[dict]) -> Optional["AuditGridResource"]:
        """The audit grid a run's config sets (``resources.audit_grid.config``; ``{"env": VAR}`` values read
        from the environment), or None where the run config sets no design."""
        import os

        config = ((run_config or {}).get("resources") or {}).get("audit_grid", {}).get("config") or {}
        if not isinstance(config, dict) or not config.get("design"):
            return None
        plain = {
            k: (os.environ.get(v["env"]) if isinstance(v, dict) and set(v) == {"env"} else v) for k, v in config.items()
        }
        return cls(**{k: v for k, v in plain.items() if v is not None and k in cls.model_fields})

    def model_registry(self) -> dict[str, ModelSpec]:
        return load_model_registry(self.model_registry_path)


def design_values(name_or_path: str, templates_dir: str | Path | None = None) -> dict[str, list[str]]:
    """{axis: its values} of a design (a shipped name or a file), in the design's order."""
    from .paths import TEMPLATES_DIR

    design = design_of(name_or_path, templates_dir or TEMPLATES_DIR)
    return {a.name: list(a.values) for a in design.axes}


def shipped_design(name_or_path: str, templates_dir: str | Path | None = None) -> Design:
    """A design (a shipped name or a file) read with the shipped templates folder by default."""
    from .paths import TEMPLATES_DIR

    return design_of(name_or_path, templates_dir or TEMPLATES_DIR)
