"""The model registry: registered model name -> where its weights or endpoint are."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Optional

import yaml

from .base import ConfigError
from .paths import MODEL_REGISTRY


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
            raise ConfigError(
                f"{path}: model name {name!r} contains '|', which separates model and template in "
                "partition keys; rename it"
            )
        if not isinstance(entry, dict) or not entry.get("source"):
            raise ConfigError(f"{path}: model {name!r} needs at least a 'source' (HF id, local path or URL)")
        backend = entry.get("backend", "transformers")
        if backend not in BACKENDS:
            raise ConfigError(f"{path}: model {name!r} has unknown backend {backend!r}; use one of {BACKENDS}")
        kwargs = {k: v for k, v in entry.items() if k in known}
        if "parts" in kwargs:
            kwargs["parts"] = tuple(kwargs["parts"] or ())
        out[str(name)] = ModelSpec(name=str(name), extra={k: v for k, v in entry.items() if k not in known}, **kwargs)
    return out
