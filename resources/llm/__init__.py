"""LLM clients behind one interface (see :mod:`resources.llm.base`)."""

from .base import LLMClient, SamplingParams

__all__ = ["LLMClient", "SamplingParams"]
