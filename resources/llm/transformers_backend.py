"""transformers backend: a local model directory, a Hugging Face id, or a GGUF file.

- the model's own chat template; a system text is folded into the user turn when the
  template rejects a system role (gemma) or the registry says so;
- continuous batching (:mod:`resources.llm.engine`, the default): a running batch from which
  finished rows leave at once and into which waiting prompts are prefilled, so no row is computed
  after its EOS; static left-padded batches (``model.generate``) where the engine does not support
  the model, or with ``continuous_batching=False``; fp32 on CPU, bf16 on GPU; ``device_map``
  through accelerate for models larger than one device;
- per-sample seeds: :class:`~resources.llm.sampling.CounterSampler` samples every row on the
  device with counter-based noise keyed by (seed, step) and exact top-p (no sort, no per-row
  loop, no host round-trip) and hands ``generate`` a one-hot choice, so a sample does not
  depend on which other samples share its batch;
- automatic batch size that halves on CUDA out-of-memory instead of failing.
Nothing touches CUDA at import time.
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import Optional

from .base import Sample, SamplingParams, TextsFromSamples


class TransformersClient(TextsFromSamples):
    """A causal LM loaded with transformers, answering plain prompts."""

    backend = "transformers"

    def __init__(
        self,
        model,
        tokenizer,
        name: str = "transformers",
        batch_size: int = 8,
        system_prompt: Optional[str] = None,
        system_role: bool = True,
        model_source: str = "",
        model_revision: Optional[str] = None,
        log=None,
        continuous_batching: bool = True,
    ):
        self.model = model
        self.continuous_batching = continuous_batching
        self._engine_checked = False
        self.tokenizer = tokenizer
        self.name = name
        self.batch_size = batch_size
        self.system_prompt = system_prompt
        self.system_role = system_role
        self.model_source = model_source or name
        self.model_revision = model_revision
        self.log = log or (lambda msg: None)
        if tokenizer.pad_token_id is None:
            tokenizer.pad_token = tokenizer.eos_token
        tokenizer.padding_side = "left"

    @classmethod
    def load(
        cls,
        path: str | Path,
        *,
        gguf_file: Optional[str] = None,
        device: Optional[str] = None,
        name: Optional[str] = None,
        batch_size: int = 8,
        revision: Optional[str] = None,
        system_role: bool = True,
        model_revision: Optional[str] = None,
        log=None,
        continuous_batching: bool = True,
    ) -> "TransformersClient":
        import torch
        from transformers import AutoModelForCausalLM, AutoTokenizer

        if device in (None, "auto"):
            device = "cuda" if torch.cuda.is_available() else "cpu"
        dtype = torch.bfloat16 if device.startswith("cuda") else torch.float32
        kwargs = {"gguf_file": gguf_file} if gguf_file else {}
        if revision:
            kwargs["revision"] = revision
        tokenizer = AutoTokenizer.from_pretrained(str(path), **kwargs)
        if device == "cuda" and torch.cuda.device_count() > 1:
            model = AutoModelForCausalLM.from_pretrained(str(path), dtype=dtype, device_map="auto", **kwargs)
        else:
            model = AutoModelForCausalLM.from_pretrained(str(path), dtype=dtype, **kwargs).to(device)
        model.eval()
        return cls(
            model,
            tokenizer,
            name=name or Path(str(path)).name,
            batch_size=batch_size,
            system_role=system_role,
            model_source=str(path),
            model_revision=model_revision or revision,
            log=log,
            continuous_batching=continuous_batching,
        )

    # ------------------------------------------------------------------ prompts
    def render(self, prompt) -> str:
        """The prompt (a string, or a list of chat messages) in the model's chat format."""
        tok = self.tokenizer
        if isinstance(prompt, list):
            return self._render_messages(prompt)
        if not getattr(tok, "chat_template", None):
            return f"{self.system_prompt}\n\n{prompt}" if self.system_prompt else prompt
        messages = [{"role": "user", "content": prompt}]
        if self.system_prompt and self.system_role:
            try:
                return tok.apply_chat_template(
                    [{"role": "system", "content": self.system_prompt}] + messages,
                    tokenize=False,
                    add_generation_prompt=True,
                )
            except Exception:  # noqa: BLE001 - the template rejects a system role: fold it in below
                pass
        if self.system_prompt:
            messages = [{"role": "user", "content": f"{self.system_prompt}\n\n{prompt}"}]
        return tok.apply_chat_template(messages, tokenize=False, add_generation_prompt=True)

    def _render_messages(self, messages: list[dict]) -> str:
        tok = self.tokenizer
        if not getattr(tok, "chat_template", None):
            return "\n\n".join(m["content"] for m in messages)
        if messages and messages[0]["role"] == "system" and not self.system_role:
            system, rest = messages[0]["content"], list(messages[1:])
            rest[0] = {**rest[0], "content": f"{system}\n\n{rest[0]['content']}"}
            messages = rest
        return tok.apply_chat_template(messages, tokenize=False, add_generation_prompt=True)

    # ------------------------------------------------------------------ generation
    @property
    def streams_requests(self) -> bool:
        """With the engine, samples finish one by one: the generation asset commits them every few
        seconds (as for an endpoint) instead of once per finished sample."""
        return self._uses_engine()

    def _uses_engine(self) -> bool:
        if not self.continuous_batching:
            return False
        if not self._engine_checked:
            from .engine import supports

            self._engine_checked = True
            ok, why = supports(self.model)
            if not ok:
                self.log(f"{self.name}: continuous batching not available for this model ({why}); static batches")
                self.continuous_batching = False
        return self.continuous_batching

    def generate_samples(self, prompts: list[str], seeds: list[int], params: SamplingParams) -> list[Sample]:
        if self._uses_engine():
            out: list[Optional[Sample]] = [None] * len(prompts)
            for chunk in self.stream_samples(prompts, seeds, params):
                for i, sample in chunk:
                    out[i] = sample
            return out  # type: ignore[return-value]
        return self._static(prompts, seeds, params)

    def stream_samples(self, prompts: list, seeds: list[int], params: SamplingParams, labels=None):
        """Lists of ``(index, sample)`` as they are ready: with the engine, each sample as it
        finishes; with static batches, each batch."""
        if not self._uses_engine():
            yield from super().stream_samples(prompts, seeds, params, labels)
            return
        yield from self._engine_stream(prompts, seeds, params)

    def _engine_stream(self, prompts: list, seeds: list[int], params: SamplingParams):
        from .engine import ContinuousEngine, eos_ids

        ids = [self.tokenizer(self.render(p), add_special_tokens=False).input_ids for p in prompts]
        left = list(range(len(prompts)))
        while left:
            engine = ContinuousEngine(
                self.model,
                pad_token_id=self.tokenizer.pad_token_id,
                eos_token_ids=eos_ids(self.model, self.tokenizer),
                batch_size=self.batch_size,
            )
            t0 = time.perf_counter()
            done: set[int] = set()
            try:
                for f in engine.run(
                    [ids[i] for i in left],
                    [int(seeds[i]) for i in left],
                    max_new_tokens=params.max_new_tokens,
                    temperature=params.temperature,
                    top_p=params.top_p,
                    do_sample=params.do_sample,
                ):
                    i = left[f.index]
                    done.add(i)
                    text = self.tokenizer.decode(f.tokens, skip_special_tokens=True)
                    yield [(i, Sample(text, f.prompt_tokens, len(f.tokens), time.perf_counter() - t0))]
                left = []
            except Exception as exc:  # noqa: BLE001
                size = self.batch_size
                if not _is_oom(exc) or size == 1:
                    raise
                # finished samples do not depend on the batch: only the unfinished ones run again
                left = [i for i in left if i not in done]
                self.batch_size = max(1, size // 2)
                self.log(
                    f"{self.name}: out of GPU memory at batch {size}; {len(left)} sample(s) continue with "
                    f"batch {self.batch_size}"
                )
                _empty_cuda_cache()

    def _static(self, prompts: list[str], seeds: list[int], params: SamplingParams) -> list[Sample]:
        out: list[Sample] = []
        start = 0
        while start < len(prompts):
            size = min(self.batch_size, len(prompts) - start)
            try:
                out.extend(self._batch(prompts[start : start + size], seeds[start : start + size], params))
                start += size
            except Exception as exc:  # noqa: BLE001
                if not _is_oom(exc) or size == 1:
                    raise
                self.batch_size = max(1, size // 2)
                self.log(f"{self.name}: out of GPU memory at batch {size}; retrying with batch {self.batch_size}")
                _empty_cuda_cache()
        return out

    def _batch(self, prompts: list[str], seeds: list[int], params: SamplingParams) -> list[Sample]:
        import torch
        from transformers import LogitsProcessorList

        from .sampling import CounterSampler  # imports torch: only where generation happens

        device = next(self.model.parameters()).device
        enc = self.tokenizer(
            [self.render(p) for p in prompts], return_tensors="pt", padding=True, add_special_tokens=False
        ).to(device)
        kwargs = dict(
            max_new_tokens=params.max_new_tokens,
            do_sample=False,
            pad_token_id=self.tokenizer.pad_token_id,
            temperature=None,
            top_p=None,
            top_k=None,
        )
        if params.do_sample and params.temperature > 0:
            sampler = CounterSampler(seeds, params.temperature, params.top_p, enc["input_ids"].shape[1], device=device)
            kwargs["logits_processor"] = LogitsProcessorList([sampler])
        t0 = time.perf_counter()
        with torch.inference_mode():
            gen = self.model.generate(**enc, **kwargs)
        latency = time.perf_counter() - t0
        new = gen[:, enc["input_ids"].shape[1] :]
        texts = self.tokenizer.batch_decode(new, skip_special_tokens=True)
        prompt_tokens = enc["attention_mask"].sum(dim=1).tolist()
        stop = {self.tokenizer.pad_token_id, self.tokenizer.eos_token_id}
        out_tokens = [int(sum(1 for t in row.tolist() if t not in stop)) for row in new]
        return [Sample(t, int(p), o, latency) for t, p, o in zip(texts, prompt_tokens, out_tokens, strict=False)]


def _is_oom(exc: Exception) -> bool:
    try:
        import torch

        if isinstance(exc, torch.cuda.OutOfMemoryError):
            return True
    except Exception:  # noqa: BLE001
        pass
    return "out of memory" in str(exc).lower() and "cuda" in str(exc).lower()


def _empty_cuda_cache() -> None:
    try:
        import torch

        if torch.cuda.is_available():
            torch.cuda.empty_cache()
    except Exception:  # noqa: BLE001
        pass
