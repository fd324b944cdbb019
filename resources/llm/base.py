"""The interface every LLM backend implements.

``generate_texts(prompts, ...)`` turns user prompts (plain strings; the backend applies the
model's own chat template) into one answer each. Backends: transformers (local weights or
GGUF), OpenAI-compatible HTTP endpoints, vLLM; the generation engine adds batched sampling
with n samples per prompt on top of the same interface.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Optional, Protocol, runtime_checkable


@dataclass(frozen=True)
class SamplingParams:
    """Decoding parameters (METHOD.md §1 defaults)."""

    temperature: float = 0.75
    top_p: float = 0.95
    max_new_tokens: int = 300
    do_sample: bool = True

    def as_dict(self) -> dict:
        return asdict(self)


@runtime_checkable
class LLMClient(Protocol):
    name: str

    def generate_texts(
        self,
        prompts: list[str],
        *,
        max_new_tokens: int = 32,
        temperature: float = 0.0,
        top_p: float = 1.0,
        seed: Optional[int] = None,
    ) -> list[str]:
        """One answer per prompt; temperature 0 means greedy decoding."""
        ...
