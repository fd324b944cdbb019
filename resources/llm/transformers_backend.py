"""transformers backend: a local model directory (safetensors) or a GGUF file.

Applies the model's own chat template (folding a system text into the user turn when the
template rejects a system role), pads on the left, and generates in batches. fp32 on CPU,
bf16 on GPU. Does not touch CUDA at import time.
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import Optional


class TransformersClient:
    """A causal LM loaded with transformers, answering plain prompts."""

    def __init__(self, model, tokenizer, name: str = "transformers", batch_size: int = 8, system_prompt: Optional[str] = None):
        self.model = model
        self.tokenizer = tokenizer
        self.name = name
        self.batch_size = batch_size
        self.system_prompt = system_prompt
        if tokenizer.pad_token_id is None:
            tokenizer.pad_token = tokenizer.eos_token
        tokenizer.padding_side = "left"

    @classmethod
    def load(cls, path: str | Path, *, gguf_file: Optional[str] = None, device: Optional[str] = None,
             name: Optional[str] = None, batch_size: int = 8) -> "TransformersClient":
        import torch
        from transformers import AutoModelForCausalLM, AutoTokenizer

        device = device or ("cuda" if torch.cuda.is_available() else "cpu")
        dtype = torch.bfloat16 if device.startswith("cuda") else torch.float32
        kwargs = {"gguf_file": gguf_file} if gguf_file else {}
        tokenizer = AutoTokenizer.from_pretrained(str(path), **kwargs)
        model = AutoModelForCausalLM.from_pretrained(str(path), dtype=dtype, **kwargs).to(device)
        model.eval()
        return cls(model, tokenizer, name=name or Path(path).name, batch_size=batch_size)

    def render(self, prompt: str) -> str:
        """The prompt in the model's chat format (plain text when it has no template)."""
        tok = self.tokenizer
        if not getattr(tok, "chat_template", None):
            return prompt
        messages = [{"role": "user", "content": prompt}]
        if self.system_prompt:
            messages.insert(0, {"role": "system", "content": self.system_prompt})
        try:
            return tok.apply_chat_template(messages, tokenize=False, add_generation_prompt=True)
        except Exception:  # noqa: BLE001 - templates that reject a system role (gemma) get it folded in
            if not self.system_prompt:
                raise
            folded = [{"role": "user", "content": f"{self.system_prompt}\n\n{prompt}"}]
            return tok.apply_chat_template(folded, tokenize=False, add_generation_prompt=True)

    def generate_texts(self, prompts: list[str], *, max_new_tokens: int = 32, temperature: float = 0.0,
                       top_p: float = 1.0, seed: Optional[int] = None) -> list[str]:
        import torch

        if seed is not None:
            torch.manual_seed(seed)
        out: list[str] = []
        device = next(self.model.parameters()).device
        for start in range(0, len(prompts), self.batch_size):
            chunk = [self.render(p) for p in prompts[start : start + self.batch_size]]
            enc = self.tokenizer(chunk, return_tensors="pt", padding=True, add_special_tokens=False).to(device)
            sample = temperature > 0
            kwargs = dict(max_new_tokens=max_new_tokens, do_sample=sample, pad_token_id=self.tokenizer.pad_token_id)
            if sample:
                kwargs.update(temperature=temperature, top_p=top_p)
            t0 = time.perf_counter()
            with torch.inference_mode():
                gen = self.model.generate(**enc, **kwargs)
            self.last_latency_s = time.perf_counter() - t0
            new = gen[:, enc["input_ids"].shape[1]:]
            out.extend(self.tokenizer.batch_decode(new, skip_special_tokens=True))
        return out
