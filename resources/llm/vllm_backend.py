"""vLLM backend (optional extra ``vllm``; used when installed): offline batched sampling.

Each sample is its own request with its own seed (``SamplingParams(seed=...)``), so results
do not depend on batch composition. vLLM is not installable on the CPU-only audit machines;
this module is imported only when a registry entry names ``backend: vllm``.

Prompts reach ``LLM.chat`` as conversations, rendered by the model's own chat template. A system
text (``system_prompt``, or the first message of a chat prompt such as the LLM tagger's few-shot
turns) uses the template's system role when the registry says ``system_role: true`` and is folded
into the first user turn when it says ``false`` (gemma, mistral). A template that rejects the system
role although the registry allows it (checked once on vLLM's tokenizer) is folded, and the log says so.
"""

from __future__ import annotations

import time
from typing import Optional

from .base import ModelUnavailableError, Sample, SamplingParams, TextsFromSamples


def fold_system(messages: list[dict]) -> list[dict]:
    """The chat with a leading system message folded into the first user turn (``system\\n\\nuser``)."""
    if not messages or messages[0].get("role") != "system":
        return list(messages)
    system, rest = messages[0]["content"], list(messages[1:])
    if not rest:
        return [{"role": "user", "content": system}]
    rest[0] = {**rest[0], "content": f"{system}\n\n{rest[0]['content']}"}
    return rest


class VLLMClient(TextsFromSamples):
    backend = "vllm"
    # prompts handed to the engine at once by stream_samples: enough to keep its continuous batching
    # full, few enough that a crash loses little (each chunk is committed when it finishes)
    stream_chunk = 2048

    def __init__(
        self,
        source: str,
        *,
        name: Optional[str] = None,
        revision: Optional[str] = None,
        system_prompt: Optional[str] = None,
        system_role: bool = True,
        log=None,
        **engine_kwargs,
    ):
        try:
            from vllm import LLM
        except ImportError as exc:
            raise ModelUnavailableError(
                f"{name or source}: backend vllm requested but vllm is not installed "
                "(pip install vllm on a GPU machine)"
            ) from exc
        self.llm = LLM(model=source, revision=revision, **engine_kwargs)
        self.tokenizer = self.llm.get_tokenizer()
        self.name = name or source
        self.model_source = source
        self.model_revision = revision
        self.system_prompt = system_prompt
        self.system_role = system_role
        self._template_checked = not system_role
        self.log = log or (lambda msg: None)

    def messages(self, prompt) -> list[dict]:
        """The conversation for one prompt (a string, or a list of chat messages): the system text in
        the system role when ``system_role``, folded into the first user turn otherwise."""
        if isinstance(prompt, list):
            chat = [dict(m) for m in prompt]
        elif self.system_prompt:
            chat = [{"role": "system", "content": self.system_prompt}, {"role": "user", "content": prompt}]
        else:
            chat = [{"role": "user", "content": prompt}]
        return chat if self.system_role else fold_system(chat)

    def _template_takes_system(self) -> bool:
        """Whether the model's chat template renders a system message (checked once, on the tokenizer vLLM
        uses). The registry allows a system role the template rejects: fold it in, as the transformers
        backend does, and say so once."""
        if self._template_checked:
            return self.system_role
        self._template_checked = True
        render = getattr(self.tokenizer, "apply_chat_template", None)
        if render is None:  # nothing to check against: the registry's word
            return self.system_role
        try:
            render(
                [{"role": "system", "content": "s"}, {"role": "user", "content": "u"}],
                tokenize=False,
                add_generation_prompt=True,
            )
        except Exception as exc:  # noqa: BLE001 - a chat template's error (jinja2) has no common type
            self.log(
                f"{self.name}: the chat template rejects a system role ({type(exc).__name__}: {str(exc)[:200]}) "
                f"although the model registry says system_role: true; the system text is folded into the "
                f"user turn; set system_role: false for {self.name} in the registry"
            )
            self.system_role = False
        return self.system_role

    def generate_samples(self, prompts: list, seeds: list[int], params: SamplingParams) -> list[Sample]:
        from vllm import SamplingParams as VSP

        msgs = [self.messages(p) for p in prompts]
        if (
            self.system_role
            and any(m and m[0].get("role") == "system" for m in msgs)
            and not self._template_takes_system()
        ):
            msgs = [fold_system(m) for m in msgs]
        sps = [
            VSP(
                n=1,
                temperature=params.temperature if params.do_sample else 0.0,
                top_p=params.top_p,
                max_tokens=params.max_new_tokens,
                seed=int(s),
            )
            for s in seeds
        ]
        t0 = time.perf_counter()
        outs = self.llm.chat(msgs, sps, use_tqdm=False)
        latency = time.perf_counter() - t0
        return [Sample(o.outputs[0].text, len(o.prompt_token_ids), len(o.outputs[0].token_ids), latency) for o in outs]
