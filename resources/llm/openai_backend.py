"""OpenAI-compatible HTTP backend: vLLM server, TGI, llama.cpp server, `transformers serve`,
hosted APIs. Requests run concurrently (a bounded thread pool), failed requests are retried
with exponential backoff, and each sample sends its own seed.
"""

from __future__ import annotations

import json
import time
import urllib.error
import urllib.request
from concurrent.futures import ThreadPoolExecutor
from typing import Optional

from ..secrets import scrub
from .base import ModelUnavailableError, Sample, SamplingParams, TextsFromSamples

RETRY_STATUS = {408, 409, 425, 429, 500, 502, 503, 504}


class OpenAIClient(TextsFromSamples):
    backend = "openai"

    def __init__(self, base_url: str, model: str, *, name: Optional[str] = None, api_key: str = "",
                 max_concurrency: int = 8, max_retries: int = 5, timeout_s: float = 300.0,
                 system_prompt: Optional[str] = None, system_role: bool = True, log=None):
        self.base_url = base_url.rstrip("/")
        self.model = model
        self.name = name or model
        self.api_key = api_key
        self.max_concurrency = max(1, max_concurrency)
        self.max_retries = max_retries
        self.timeout_s = timeout_s
        self.system_prompt = system_prompt
        self.system_role = system_role
        self.model_source = scrub(f"{self.base_url} ({model})")  # stored with every row: no URL password
        self.model_revision: Optional[str] = None
        self.log = log or (lambda msg: None)

    # ------------------------------------------------------------------ http
    def _scrub(self, text) -> str:
        """Text that may be logged or raised: the API key and any URL password masked (an error body
        can echo the request's Authorization header)."""
        return scrub(str(text), [self.api_key])

    def _request(self, method: str, path: str, body: Optional[dict] = None) -> dict:
        headers = {"content-type": "application/json"}
        if self.api_key:
            headers["authorization"] = f"Bearer {self.api_key}"
        data = json.dumps(body).encode() if body is not None else None
        delay = 0.5
        for attempt in range(self.max_retries + 1):
            req = urllib.request.Request(self.base_url + path, data=data, headers=headers, method=method)
            try:
                with urllib.request.urlopen(req, timeout=self.timeout_s) as resp:
                    return json.loads(resp.read())
            except urllib.error.HTTPError as exc:
                # masked before it is cut, so no piece of the key survives the cut
                detail = self._scrub(exc.read().decode(errors="replace"))[:300]
                reason = f"HTTP {exc.code}"
                if exc.code not in RETRY_STATUS or attempt == self.max_retries:
                    raise RuntimeError(self._scrub(f"{self.base_url}{path}: HTTP {exc.code}: {detail}")) from None
            except (urllib.error.URLError, TimeoutError, ConnectionError) as exc:
                reason = self._scrub(exc)[:200]
                if attempt == self.max_retries:
                    raise ModelUnavailableError(self._scrub(f"{self.name}: endpoint {self.base_url} unreachable: {exc}")) from None
            self.log(self._scrub(f"{self.name}: request failed (attempt {attempt + 1}: {reason}); retrying in {delay:.1f} s"))
            time.sleep(delay)
            delay = min(delay * 2, 30.0)
        raise AssertionError("unreachable")

    def served_models(self) -> list[str]:
        """The model ids the endpoint serves (GET {base_url}/models); raises ModelUnavailableError
        naming the endpoint when it does not answer or does not list its models."""
        try:
            listing = self._request("GET", "/models")
        except (RuntimeError, ValueError) as exc:  # HTTP error, or not JSON
            if isinstance(exc, ModelUnavailableError):
                raise
            raise ModelUnavailableError(self._scrub(f"{self.name}: endpoint {self.base_url} did not list the models "
                                                    f"it serves (GET /models): {exc}")) from None
        data = listing.get("data") if isinstance(listing, dict) else None
        if not isinstance(data, list):
            raise ModelUnavailableError(self._scrub(f"{self.name}: endpoint {self.base_url}/models answered no 'data' "
                                                    "list of models"))
        return [str(m.get("id", "")) for m in data if isinstance(m, dict)]

    def check(self) -> list[str]:
        """The models the endpoint serves (``served_models``)."""
        return self.served_models()

    # ------------------------------------------------------------------ generation
    def _messages(self, prompt) -> list[dict]:
        if isinstance(prompt, list):  # already a chat
            if prompt and prompt[0]["role"] == "system" and not self.system_role:
                rest = list(prompt[1:])
                rest[0] = {**rest[0], "content": f"{prompt[0]['content']}\n\n{rest[0]['content']}"}
                return rest
            return prompt
        if self.system_prompt and self.system_role:
            return [{"role": "system", "content": self.system_prompt}, {"role": "user", "content": prompt}]
        if self.system_prompt:
            return [{"role": "user", "content": f"{self.system_prompt}\n\n{prompt}"}]
        return [{"role": "user", "content": prompt}]

    def _one(self, prompt: str, seed: int, params: SamplingParams) -> Sample:
        body = {"model": self.model, "messages": self._messages(prompt), "max_tokens": params.max_new_tokens,
                "temperature": params.temperature if params.do_sample else 0.0,
                "top_p": params.top_p if params.do_sample else 1.0, "n": 1, "seed": int(seed)}
        t0 = time.perf_counter()
        out = self._request("POST", "/chat/completions", body)
        latency = time.perf_counter() - t0
        choice = (out.get("choices") or [{}])[0]
        text = (choice.get("message") or {}).get("content") or choice.get("text") or ""
        usage = out.get("usage") or {}
        return Sample(text, usage.get("prompt_tokens"), usage.get("completion_tokens"), latency)

    def generate_samples(self, prompts: list[str], seeds: list[int], params: SamplingParams) -> list[Sample]:
        with ThreadPoolExecutor(max_workers=self.max_concurrency) as pool:
            return list(pool.map(lambda ps: self._one(ps[0], ps[1], params), zip(prompts, seeds)))
