"""OpenAI-compatible HTTP backend: vLLM server, TGI, llama.cpp server, `transformers serve`,
hosted APIs.

Generation goes through the official SDK's ``AsyncOpenAI`` client: up to ``max_concurrency``
requests in flight (default 256: a serving engine needs hundreds of sequences to reach its
throughput), new requests started as others finish (``resources/llm/streaming.py``), answers
handed back as they complete so the generations asset commits them as they come. Retries,
backoff with jitter and ``Retry-After`` on 408/409/429/5xx and connection errors, and the
per-request timeout are the SDK's (``max_retries``, ``timeout_s``); ``requests_per_s`` limits
the request rate for hosted APIs. Each sample sends its own seed. The API key never appears in
an error or a log line (``_scrub``). Listing the served models (``GET /models``, the registry
check) is one plain request.
"""

from __future__ import annotations

import json
import time
import urllib.error
import urllib.request
from typing import Iterator, Optional

from ..secrets import scrub
from .base import ModelUnavailableError, Sample, SamplingParams, TextsFromSamples

RETRY_STATUS = {408, 409, 425, 429, 500, 502, 503, 504}


class OpenAIClient(TextsFromSamples):
    backend = "openai"
    streams_requests = True  # answers come back one by one: the engine commits them in groups

    def __init__(self, base_url: str, model: str, *, name: Optional[str] = None, api_key: str = "",
                 max_concurrency: int = 256, max_retries: int = 5, timeout_s: float = 300.0,
                 requests_per_s: float = 0.0, system_prompt: Optional[str] = None, system_role: bool = True,
                 log=None):
        self.base_url = base_url.rstrip("/")
        self.model = model
        self.name = name or model
        self.api_key = api_key
        self.max_concurrency = max(1, max_concurrency)
        self.max_retries = max_retries
        self.timeout_s = timeout_s
        self.requests_per_s = requests_per_s
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

    def _body(self, prompt, seed: int, params: SamplingParams) -> dict:
        return {"model": self.model, "messages": self._messages(prompt), "max_tokens": params.max_new_tokens,
                "temperature": params.temperature if params.do_sample else 0.0,
                "top_p": params.top_p if params.do_sample else 1.0, "n": 1, "seed": int(seed)}

    def stream_samples(self, prompts: list, seeds: list[int],
                       params: SamplingParams) -> Iterator[list[tuple[int, Sample]]]:
        """Lists of ``(index, sample)`` as requests finish, ``max_concurrency`` in flight."""
        import openai
        import openai.resources.chat.completions  # noqa: F401 - the SDK loads these lazily: import them here,
        import openai.types.chat  # noqa: F401 - not in the request thread (CPython 3.11 can fail compiling in two threads)

        from .streaming import stream_async

        concurrency = max(1, min(self.max_concurrency, len(prompts) or 1))

        async def setup():
            try:
                import httpx2 as httpx  # the transport this openai release is built on
            except ImportError:  # pragma: no cover - older openai releases use httpx
                import httpx
            limits = httpx.Limits(max_connections=concurrency, max_keepalive_connections=concurrency)

            async def on_response(response) -> None:  # the SDK retries quietly: say so in the run's log
                if response.status_code >= 400:
                    self.log(self._scrub(f"{self.name}: HTTP {response.status_code} from {response.request.url}; "
                                         f"the client retries retryable statuses (at most {self.max_retries} times, "
                                         "honouring Retry-After)"))

            http = openai.DefaultAsyncHttpxClient(limits=limits, timeout=self.timeout_s,
                                                  event_hooks={"response": [on_response]})
            return openai.AsyncOpenAI(base_url=self.base_url, api_key=self.api_key or "not-needed",
                                      max_retries=self.max_retries, timeout=self.timeout_s, http_client=http)

        async def teardown(client) -> None:
            if client is not None:
                await client.close()

        async def call(item, client) -> Sample:
            prompt, seed = item
            t0 = time.perf_counter()
            try:
                out = await client.chat.completions.create(**self._body(prompt, seed, params))
            except openai.APIStatusError as exc:
                detail = self._scrub(getattr(exc, "body", None) or exc.message)[:300]
                raise RuntimeError(self._scrub(f"{self.name}: {self.base_url}/chat/completions: HTTP "
                                               f"{exc.status_code} after {self.max_retries} retries: {detail}")) from None
            except openai.APIConnectionError as exc:  # includes timeouts
                raise ModelUnavailableError(self._scrub(f"{self.name}: endpoint {self.base_url} unreachable after "
                                                        f"{self.max_retries} retries: {exc}")) from None
            latency = time.perf_counter() - t0
            choice = out.choices[0] if out.choices else None
            text = (choice.message.content if choice is not None and choice.message is not None else None) or ""
            usage = out.usage
            return Sample(text, getattr(usage, "prompt_tokens", None), getattr(usage, "completion_tokens", None), latency)

        yield from stream_async(call, list(zip(prompts, seeds)), concurrency=concurrency,
                                requests_per_s=self.requests_per_s or None, setup=setup, teardown=teardown)

    def generate_samples(self, prompts: list[str], seeds: list[int], params: SamplingParams) -> list[Sample]:
        out: list[Optional[Sample]] = [None] * len(prompts)
        for finished in self.stream_samples(prompts, seeds, params):
            for i, sample in finished:
                out[i] = sample
        return out  # type: ignore[return-value]
