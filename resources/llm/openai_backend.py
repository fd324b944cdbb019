"""OpenAI-compatible HTTP backend: vLLM server, TGI, llama.cpp server, `transformers serve`,
hosted APIs.

Generation goes through the official SDK's ``AsyncOpenAI`` client: up to ``max_concurrency``
requests in flight (default 384: a serving engine needs hundreds of sequences to reach its
throughput), new requests started as others finish (``resources/llm/streaming.py``), answers
handed back as they complete so the generations asset commits them as they come. Retries,
backoff with jitter and ``Retry-After`` on 408/409/429/5xx, timeouts and connection errors are
the SDK's (``max_retries``); ``requests_per_s`` limits the request rate for hosted APIs. Each
sample sends its own seed. The API key never appears in an error or a log line (``_scrub``).
Listing the served models (``GET /models``, the registry check) is one plain request.

Time: each attempt may take ``timeout_s`` (``FAIRNESS_LLM_REQUEST_TIMEOUT_S``, default 300 s: to
connect, and for each wait on the answer's bytes, which for an answer that is not streamed is
its whole generation), and a request, its retries and their waits included, ``budget_s``
(``FAIRNESS_LLM_REQUEST_BUDGET_S``, default 1800 s): before each wait for a retry the time spent,
the wait and one more ``timeout_s`` are added up, and when that passes the budget the request
fails with :class:`RequestBudgetError` naming the request, its attempts, the time spent and both
settings. The SDK's retry loop asks at that point (``_calculate_retry_timeout``, the wait it is
about to sleep), so its backoff and ``Retry-After`` stay as they are.

Broken answers: a ``200`` whose body is not JSON (truncated, an HTML page from a proxy), has no
``choices``, or whose choice has no message content that its ``finish_reason`` explains
(``broken_answer``) is handed to the SDK as a ``502`` with ``x-should-retry: true``, so it is
retried exactly like a 5xx (same ``max_retries`` budget, same backoff, ``Retry-After`` honoured).
If every attempt is broken, the stream fails with :class:`BrokenAnswerError` naming the model, the
endpoint (password masked) and the sample (its label, e.g. the response id
``model|template|profile|run``, and seed); nothing is stored for that sample, so a rerun
generates it again.
"""

from __future__ import annotations

import contextvars
import json
import re
import sys
import time
import urllib.error
import urllib.request
from typing import Iterator, Optional, Sequence

from ..secrets import scrub
from .base import ModelUnavailableError, Sample, SamplingParams, TextsFromSamples

RETRY_STATUS = {408, 409, 425, 429, 500, 502, 503, 504}
# finish reasons that explain a choice without content: the token budget ran out, the provider's filter
# withheld the text; "stop" also explains an empty string (the model ended at once), not a missing content
EMPTY_EXPLAINED_BY = {"length", "content_filter"}
BROKEN = "fairness_broken_answer"  # response extension: why a 200 was turned into a retryable 502
# the request the SDK's retry loop is running in this task: what it is (named in errors) and when it started
_REQUEST: contextvars.ContextVar[tuple[str, float]] = contextvars.ContextVar("fairness_openai_request")


class BrokenAnswerError(RuntimeError):
    """An endpoint kept answering 200 with a body that holds no usable answer; the message names the
    model, the endpoint (password masked), the sample and what was wrong."""


class RequestBudgetError(ModelUnavailableError):
    """A request whose next retry could end past its time budget (``FAIRNESS_LLM_REQUEST_BUDGET_S``);
    the message names the request, its attempts, the time spent and both time settings."""


NOTHING_STORED = (
    ". Nothing is stored for this sample (what finished before is); launch the run again once the endpoint "
    "answers in time: it generates only the missing samples"
)


def snippet(body: bytes, limit: int = 120) -> str:
    text = re.sub(r"\s+", " ", body[: limit * 4].decode("utf-8", errors="replace")).strip()
    return repr(text[:limit]) + (" ..." if len(text) > limit else "")


def chat_messages(prompt, system_prompt: Optional[str], system_role: bool) -> list[dict]:
    """The chat messages of one prompt (a string, or a conversation's messages): the system text in the
    system role when ``system_role``, folded into the first user turn otherwise."""
    if isinstance(prompt, list):  # already a chat
        if prompt and prompt[0]["role"] == "system" and not system_role:
            rest = list(prompt[1:])
            rest[0] = {**rest[0], "content": f"{prompt[0]['content']}\n\n{rest[0]['content']}"}
            return rest
        return prompt
    if system_prompt and system_role:
        return [{"role": "system", "content": system_prompt}, {"role": "user", "content": prompt}]
    if system_prompt:
        return [{"role": "user", "content": f"{system_prompt}\n\n{prompt}"}]
    return [{"role": "user", "content": prompt}]


def sample_name(index: int, total: int, seed: int, labels: Optional[Sequence[str]]) -> str:
    """How an error names one sample: its label (the response id) or its place, and its seed."""
    if labels is not None:
        return f"sample {labels[index]} (seed {seed})"
    return f"sample {index + 1} of {total} (seed {seed})"


def broken_answer(body: bytes, content_type: str = "") -> Optional[str]:
    """Why a 200 answer of ``/chat/completions`` holds no usable answer, in words; ``None`` when it does.

    Broken: a body that is not JSON (truncated, an HTML page), no ``choices`` list, an empty one, a
    first choice without a message, or without content where its ``finish_reason`` does not explain
    it (``length``, ``content_filter``; ``stop`` explains an empty string, not a missing content; a
    ``refusal`` text explains it too)."""
    where = f"content-type {content_type or 'not given'}, {len(body)} bytes"
    try:
        doc = json.loads(body)
    except ValueError as exc:  # JSONDecodeError, or bytes that are not UTF-8
        what = f"{exc.msg} (character {exc.pos})" if isinstance(exc, json.JSONDecodeError) else str(exc)
        looks = "truncated or malformed JSON" if body.lstrip()[:1] in (b"{", b"[") else "not JSON"
        return f"the body is {looks}: {what}; {where}; it begins {snippet(body)}"
    if not isinstance(doc, dict) or not isinstance(doc.get("choices"), list):
        return f"no 'choices' list in the answer ({where}): {snippet(body)}"
    if not doc["choices"]:
        return f"no choices (an empty 'choices' list; {where}): {snippet(body)}"
    choice = doc["choices"][0]
    shown = snippet(json.dumps(choice, ensure_ascii=False).encode(), 200)
    message = choice.get("message") if isinstance(choice, dict) else None
    if not isinstance(message, dict):
        return f"the first choice has no message: {shown}"
    content, finish = message.get("content"), choice.get("finish_reason")
    if isinstance(content, str) and (content or finish in EMPTY_EXPLAINED_BY | {"stop"}):
        return None
    if content is None and (
        finish in EMPTY_EXPLAINED_BY or (isinstance(message.get("refusal"), str) and message["refusal"])
    ):
        return None
    kind = (
        "an empty message content"
        if content == ""
        else (
            "no message content"
            if content is None
            else f"a message content that is not text ({type(content).__name__})"
        )
    )
    return f"{kind} and finish_reason {finish!r} does not explain it; the first choice: {shown}"


class OpenAIClient(TextsFromSamples):
    backend = "openai"
    streams_requests = True  # answers come back one by one: the engine commits them in groups

    def __init__(
        self,
        base_url: str,
        model: str,
        *,
        name: Optional[str] = None,
        api_key: str = "",
        max_concurrency: int = 384,
        max_retries: int = 5,
        timeout_s: float = 300.0,
        budget_s: float = 1800.0,
        requests_per_s: float = 0.0,
        system_prompt: Optional[str] = None,
        system_role: bool = True,
        log=None,
    ):
        self.base_url = base_url.rstrip("/")
        self.model = model
        self.name = name or model
        self.api_key = api_key
        self.max_concurrency = max(1, max_concurrency)
        self.max_retries = max_retries
        self.timeout_s = timeout_s
        self.budget_s = budget_s
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

    def _check_budget(self, what: str, started: float, attempts: int, wait: float, then: str = "") -> None:
        """Raise :class:`RequestBudgetError` when one more attempt of the request ``what`` (begun at
        ``started``, ``time.monotonic()``; ``attempts`` made), after a wait of ``wait`` seconds and
        taking up to ``timeout_s``, could end past ``budget_s``; ``then``: what the caller should
        know next, appended to the message."""
        spent = time.monotonic() - started
        if spent + wait + self.timeout_s <= self.budget_s:
            return
        raise RequestBudgetError(
            self._scrub(
                f"{self.name}: {what} to {self.base_url} given up after {attempts} attempt(s) in {spent:.1f} s: "
                f"one more (after a wait of {wait:.1f} s, up to FAIRNESS_LLM_REQUEST_TIMEOUT_S={self.timeout_s:g} s "
                f"long) could end past the request's time budget, FAIRNESS_LLM_REQUEST_BUDGET_S={self.budget_s:g} s. "
                "Raise the budget to allow more retries, or the timeout when one answer needs longer to generate; "
                "the run's log names each failed attempt" + then
            )
        )

    def _request(self, method: str, path: str, body: Optional[dict] = None) -> dict:
        headers = {"content-type": "application/json"}
        if self.api_key:
            headers["authorization"] = f"Bearer {self.api_key}"
        data = json.dumps(body).encode() if body is not None else None
        delay = 0.5
        started = time.monotonic()
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
                    raise ModelUnavailableError(
                        self._scrub(f"{self.name}: endpoint {self.base_url} unreachable: {exc}")
                    ) from None
            self._check_budget(f"{method} {path}", started, attempt + 1, delay)
            self.log(
                self._scrub(f"{self.name}: request failed (attempt {attempt + 1}: {reason}); retrying in {delay:.1f} s")
            )
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
            raise ModelUnavailableError(
                self._scrub(
                    f"{self.name}: endpoint {self.base_url} did not list the models it serves (GET /models): {exc}"
                )
            ) from None
        data = listing.get("data") if isinstance(listing, dict) else None
        if not isinstance(data, list):
            raise ModelUnavailableError(
                self._scrub(f"{self.name}: endpoint {self.base_url}/models answered no 'data' list of models")
            )
        return [str(m.get("id", "")) for m in data if isinstance(m, dict)]

    def check(self) -> list[str]:
        """The models the endpoint serves (``served_models``)."""
        return self.served_models()

    # ------------------------------------------------------------------ generation
    def _messages(self, prompt) -> list[dict]:
        return chat_messages(prompt, self.system_prompt, self.system_role)

    def _body(self, prompt, seed: int, params: SamplingParams) -> dict:
        return {
            "model": self.model,
            "messages": self._messages(prompt),
            "max_tokens": params.max_new_tokens,
            "temperature": params.temperature if params.do_sample else 0.0,
            "top_p": params.top_p if params.do_sample else 1.0,
            "n": 1,
            "seed": int(seed),
        }

    def _sample_name(self, index: int, total: int, seed: int, labels: Optional[Sequence[str]]) -> str:
        return sample_name(index, total, seed, labels)

    async def _on_response(self, response) -> None:
        """The HTTP client's response hook: the SDK retries quietly, so say so in the run's log; a
        broken answer with HTTP 200 is turned into a 502 the SDK retries like any other."""
        if (
            response.status_code == 200
            and response.request.method == "POST"
            and response.request.url.path.endswith("/chat/completions")
        ):
            await response.aread()  # read here rather than by the SDK a moment later
            reason = broken_answer(response.content, response.headers.get("content-type", ""))
            if reason is not None:
                # the SDK's own path for a 5xx: its retries, backoff and Retry-After, its budget
                response.status_code = 502
                response.headers["x-should-retry"] = "true"
                response.extensions[BROKEN] = reason
                self.log(
                    self._scrub(
                        f"{self.name}: broken answer (HTTP 200) from {response.request.url}: "
                        f"{reason}; the client retries it like a 5xx (at most {self.max_retries} "
                        f"times within {self.budget_s:g} s, FAIRNESS_LLM_REQUEST_BUDGET_S; honouring "
                        "Retry-After)"
                    )
                )
                return
        if response.status_code >= 400:
            self.log(
                self._scrub(
                    f"{self.name}: HTTP {response.status_code} from {response.request.url}; "
                    f"the client retries retryable statuses (at most {self.max_retries} times within "
                    f"{self.budget_s:g} s, FAIRNESS_LLM_REQUEST_BUDGET_S; honouring Retry-After)"
                )
            )

    def stream_samples(
        self, prompts: list, seeds: list[int], params: SamplingParams, labels: Optional[Sequence[str]] = None
    ) -> Iterator[list[tuple[int, Sample]]]:
        """Lists of ``(index, sample)`` as requests finish, ``max_concurrency`` in flight.

        ``labels`` (optional, one per prompt: the generation engine's response id
        ``model|template|profile|run``) name a sample in an error; without them a sample is named by
        its position and seed."""
        if labels is not None and len(labels) != len(prompts):
            raise ValueError(f"{self.name}: {len(labels)} labels for {len(prompts)} prompts")
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

            owner = self

            class BudgetedAsyncOpenAI(openai.AsyncOpenAI):
                """The SDK's client, whose retry loop asks the request's time budget before each wait
                (module docstring) and says in the run's log why a request got no answer."""

                def _calculate_retry_timeout(self, remaining_retries, options, response_headers=None) -> float:
                    wait = super()._calculate_retry_timeout(remaining_retries, options, response_headers)
                    what, started = _REQUEST.get()
                    attempts = self.max_retries - remaining_retries + 1
                    owner._check_budget(what, started, attempts, wait, then=NOTHING_STORED)
                    if response_headers is None:  # a timeout or a connection error: on_response saw nothing
                        failure = sys.exc_info()[1]  # the SDK asks from inside its `except` of the attempt
                        owner.log(
                            owner._scrub(
                                f"{owner.name}: {what}: no answer on attempt {attempts} "
                                f"({type(failure).__name__ if failure else 'no response'}; each attempt may take "
                                f"{owner.timeout_s:g} s, FAIRNESS_LLM_REQUEST_TIMEOUT_S); retrying in {wait:.1f} s"
                            )
                        )
                    return wait

            http = openai.DefaultAsyncHttpxClient(
                limits=limits, timeout=self.timeout_s, event_hooks={"response": [self._on_response]}
            )
            return BudgetedAsyncOpenAI(
                base_url=self.base_url,
                api_key=self.api_key or "not-needed",
                max_retries=self.max_retries,
                timeout=self.timeout_s,
                http_client=http,
            )

        async def teardown(client) -> None:
            if client is not None:
                await client.close()

        total = len(prompts)

        async def call(item, client) -> Sample:
            index, prompt, seed = item
            t0 = time.perf_counter()
            _REQUEST.set(
                (f"POST /chat/completions for {self._sample_name(index, total, seed, labels)}", time.monotonic())
            )
            try:
                out = await client.chat.completions.create(**self._body(prompt, seed, params))
            except openai.APIStatusError as exc:
                sample = self._sample_name(index, total, seed, labels)
                reason = exc.response.extensions.get(BROKEN)
                if reason is not None:
                    raise BrokenAnswerError(
                        self._scrub(
                            f"model {self.name!r}: endpoint {self.base_url} gave a broken answer for {sample} on all "
                            f"{self.max_retries + 1} attempts (HTTP 200, retried like a 5xx): {reason}. Nothing is "
                            "stored for this sample (what finished before is); fix the endpoint or the proxy in front "
                            "of it and launch the run again: it generates only the missing samples"
                        )
                    ) from None
                detail = self._scrub(getattr(exc, "body", None) or exc.message)[:300]
                raise RuntimeError(
                    self._scrub(
                        f"{self.name}: {self.base_url}/chat/completions: HTTP "
                        f"{exc.status_code} for {sample} after {self.max_retries} retries: "
                        f"{detail}"
                    )
                ) from None
            except openai.APIConnectionError as exc:  # includes timeouts
                sample = self._sample_name(index, total, seed, labels)
                timed_out = (
                    f" (the last attempt got no answer within FAIRNESS_LLM_REQUEST_TIMEOUT_S={self.timeout_s:g} s)"
                    if isinstance(exc, openai.APITimeoutError)
                    else ""
                )
                raise ModelUnavailableError(
                    self._scrub(
                        f"{self.name}: endpoint {self.base_url} unreachable after "
                        f"{self.max_retries} retries ({sample}){timed_out}: {exc}"
                    )
                ) from None
            latency = time.perf_counter() - t0
            message = out.choices[0].message  # broken_answer checked that there is one
            text = message.content if isinstance(message.content, str) else (getattr(message, "refusal", None) or "")
            usage = out.usage
            return Sample(
                text, getattr(usage, "prompt_tokens", None), getattr(usage, "completion_tokens", None), latency
            )

        yield from stream_async(
            call,
            list(zip(range(total), prompts, seeds, strict=False)),
            concurrency=concurrency,
            requests_per_s=self.requests_per_s or None,
            setup=setup,
            teardown=teardown,
        )

    def generate_samples(
        self, prompts: list[str], seeds: list[int], params: SamplingParams, labels: Optional[Sequence[str]] = None
    ) -> list[Sample]:
        out: list[Optional[Sample]] = [None] * len(prompts)
        for finished in self.stream_samples(prompts, seeds, params, labels=labels):
            for i, sample in finished:
                out[i] = sample
        return out  # type: ignore[return-value]
