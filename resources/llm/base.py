"""The interface every LLM backend implements.

``generate_samples(prompts, seeds, params)`` turns user prompts (plain strings, or lists of
chat messages for few-shot turns; the backend applies the model's own chat template) into one
sampled answer each, with token counts and timings. Each prompt carries its own seed, so a
sample does not depend on which other samples
share its batch (the generation engine derives the seed from model, template, profile and
run). ``generate_texts`` is the short form used by the LLM subject tagger.

Backends: ``transformers`` (local weights, Hugging Face ids, GGUF), ``openai`` (any
OpenAI-compatible HTTP endpoint), ``vllm`` (offline batches, when installed).
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Iterator, Optional, Protocol, Sequence, runtime_checkable


@dataclass(frozen=True)
class SamplingParams:
    """Decoding parameters (METHOD.md §1 defaults)."""

    temperature: float = 0.75
    top_p: float = 0.95
    max_new_tokens: int = 300
    do_sample: bool = True

    def as_dict(self) -> dict:
        return asdict(self)


@dataclass(frozen=True)
class Sample:
    text: str
    prompt_tokens: Optional[int]
    output_tokens: Optional[int]
    latency_s: float  # wall time of the batch or request that produced it


class ModelUnavailableError(RuntimeError):
    """A model that cannot be used; the message names the model and every place tried."""


@runtime_checkable
class LLMClient(Protocol):
    """What the generation engine (:class:`resources.llm.runner.GenerationRunner`), the
    ``generations`` asset and the LLM subject tagger use of a client.

    - ``name``: the registry's name of the model; ``backend``: ``transformers``, ``openai`` or
      ``vllm``; ``model_source`` and ``model_revision``: what is served, stored with every row
      (never a password);
    - ``streams_requests``: whether ``stream_samples`` hands samples back one by one as they finish
      (an endpoint, the continuous in-process engine: committed in groups) rather than whole
      batches (committed batch by batch);
    - ``stream_samples``: lists of ``(index, Sample)`` as they are ready (:class:`TextsFromSamples`
      gives it on top of ``generate_samples``).

    :func:`compute_kind` also reads ``model`` (a torch module) or ``devices`` where a client has them.
    """

    name: str
    backend: str
    model_source: str
    model_revision: Optional[str]
    streams_requests: bool

    def generate_samples(self, prompts: list[str], seeds: list[int], params: SamplingParams) -> list[Sample]: ...

    def stream_samples(
        self, prompts: list, seeds: list[int], params: SamplingParams, labels: Optional[Sequence[str]] = None
    ) -> Iterator[list[tuple[int, Sample]]]: ...

    def generate_texts(
        self,
        prompts: list[str],
        *,
        max_new_tokens: int = 32,
        temperature: float = 0.0,
        top_p: float = 1.0,
        seed: Optional[int] = None,
    ) -> list[str]: ...


class TextsFromSamples:
    """Mixin: ``generate_texts`` and ``stream_samples`` on top of ``generate_samples``; samples are
    handed back in whole chunks (``streams_requests`` false) unless a backend says otherwise."""

    streams_requests: bool = False

    def stream_samples(
        self, prompts: list, seeds: list[int], params: SamplingParams, labels: Optional[Sequence[str]] = None
    ) -> Iterator[list[tuple[int, Sample]]]:
        """Lists of ``(index, sample)`` as they are ready, for committing as they come. This default
        hands the backend ``stream_chunk`` (else ``batch_size``, else 16) prompts at a time and yields
        each chunk; backends that keep many requests in flight (``openai``) override it. ``labels``
        (optional, one per prompt, e.g. the response ids) name a sample in a backend's error about that
        one sample (``openai``: an answer that stays broken); in-process batches fail as a whole."""
        size = max(1, int(getattr(self, "stream_chunk", 0) or getattr(self, "batch_size", 0) or 16))
        for start in range(0, len(prompts), size):
            out = self.generate_samples(prompts[start : start + size], seeds[start : start + size], params)  # type: ignore[attr-defined]
            yield [(start + j, sample) for j, sample in enumerate(out)]

    def generate_texts(
        self,
        prompts: list[str],
        *,
        max_new_tokens: int = 32,
        temperature: float = 0.0,
        top_p: float = 1.0,
        seed: Optional[int] = None,
    ) -> list[str]:
        params = SamplingParams(
            temperature=temperature, top_p=top_p, max_new_tokens=max_new_tokens, do_sample=temperature > 0
        )
        seeds = [(seed or 0) + i for i in range(len(prompts))]
        return [s.text for s in self.generate_samples(prompts, seeds, params)]  # type: ignore[attr-defined]


def compute_kind(client) -> tuple[str, int]:
    """``(kind, devices)`` of a client for cost accounting: ``("endpoint", 0)`` for an HTTP server,
    ``("gpu", n)`` for a model on n CUDA devices, ``("cpu", 1)`` otherwise."""
    if getattr(client, "backend", "") in ("openai", "http"):  # a request-served endpoint
        return "endpoint", 0
    if getattr(client, "backend", "") == "vllm":
        return "gpu", int(getattr(client, "devices", 1) or 1)
    model = getattr(client, "model", None)
    try:
        devices = {p.device for p in model.parameters()} if model is not None else set()
    except Exception:  # noqa: BLE001 - not a torch module
        devices = set()
    cuda = {d for d in devices if getattr(d, "type", "") == "cuda"}
    return ("gpu", len(cuda)) if cuda else ("cpu", 1)
