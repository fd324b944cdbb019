"""vLLM backend (optional extra ``vllm``; used when installed): offline batched sampling.

Each sample is its own request with its own seed (``SamplingParams(seed=...)``), so results
do not depend on batch composition. vLLM is not installable on the CPU-only audit machines;
this module is imported only when a registry entry names ``backend: vllm``.
"""

from __future__ import annotations

import time
from typing import Optional

from .base import ModelUnavailableError, Sample, SamplingParams, TextsFromSamples


class VLLMClient(TextsFromSamples):
    backend = "vllm"
    # prompts handed to the engine at once by stream_samples: enough to keep its continuous batching
    # full, few enough that a crash loses little (each chunk is committed when it finishes)
    stream_chunk = 2048

    def __init__(self, source: str, *, name: Optional[str] = None, revision: Optional[str] = None,
                 system_prompt: Optional[str] = None, **engine_kwargs):
        try:
            from vllm import LLM
        except ImportError as exc:
            raise ModelUnavailableError(f"{name or source}: backend vllm requested but vllm is not installed "
                                        "(pip install vllm on a GPU machine)") from exc
        self.llm = LLM(model=source, revision=revision, **engine_kwargs)
        self.tokenizer = self.llm.get_tokenizer()
        self.name = name or source
        self.model_source = source
        self.model_revision = revision
        self.system_prompt = system_prompt

    def generate_samples(self, prompts: list[str], seeds: list[int], params: SamplingParams) -> list[Sample]:
        from vllm import SamplingParams as VSP

        msgs = [[{"role": "user", "content": f"{self.system_prompt}\n\n{p}" if self.system_prompt else p}] for p in prompts]
        sps = [VSP(n=1, temperature=params.temperature if params.do_sample else 0.0, top_p=params.top_p,
                   max_tokens=params.max_new_tokens, seed=int(s)) for s in seeds]
        t0 = time.perf_counter()
        outs = self.llm.chat(msgs, sps, use_tqdm=False)
        latency = time.perf_counter() - t0
        return [Sample(o.outputs[0].text, len(o.prompt_token_ids), len(o.outputs[0].token_ids), latency) for o in outs]
