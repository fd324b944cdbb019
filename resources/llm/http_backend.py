"""The ``http`` backend: a product's own HTTP API that is not OpenAI-compatible (issue 34, item 4).

A registry entry ``backend: http`` holds a request template (``resources/settings/registry.py``,
:class:`HTTPSpec`): the URL, method, headers and JSON body to send for each sample, and the field
path of the answer's text in the JSON that comes back (``choices[0].message.content``: dotted
keys, ``[i]`` indices). Body placeholders: ``"{messages}"`` (the chat, a list of ``{role,
content}``), ``"{prompt}"`` (the last user turn; with ``system_role: false`` a system prompt is
folded into it), ``"{seed}"`` (the sample's seed, an int), and ``"{max_tokens}"``,
``"{temperature}"``, ``"{top_p}"`` (the audit's decoding) as whole values; ``{prompt}`` and
``{seed}`` also inside a text. A prompt that ``{prompt}`` alone would cut (earlier turns, a system
message) fails before any request when the body has no ``{messages}``.

Secrets: the URL and the header values may take ``${VAR}`` from the environment, read when the
client is built; an unset one is an error naming the variable, the model and the header (never a
value). No error, log line or repr holds a header value, a ``${VAR}`` value, the URL's userinfo
or its query string: the endpoint is shown as :func:`resources.settings.registry.shown_url` gives
it, and every text is masked (:func:`resources.secrets.scrub`) before it is cut or printed, the
records of the HTTP library's logger (which name the URL) included. Values shorter than 4
characters are not masked (they would mask digits of every message).

Requests: up to ``max_concurrency`` in flight (default 4: a product API, not a serving engine),
at most ``requests_per_minute`` attempts started per minute (retries included), answers handed
back as they finish (``resources/llm/streaming.py``), so the generations asset commits them as they
come and a rerun generates only the missing samples, as with ``openai``. Retries with backoff and
jitter (0.5 s doubling, at most 8 s; ``Retry-After`` up to 60 s honoured) on 408/409/425/429/5xx,
timeouts, connection errors and a 200 whose body holds no text at the field path; every attempt may
take ``timeout_s`` (the entry's, else ``FAIRNESS_LLM_REQUEST_TIMEOUT_S``) and a request in all
``FAIRNESS_LLM_REQUEST_BUDGET_S`` (:class:`RequestBudgetError`). When a sample's attempts run
out, the stream fails naming the model, the endpoint and the sample; what finished before is kept.
Token counts are not known (``None``); the latency is the request's, retries included.
"""

from __future__ import annotations

import asyncio
import email.utils
import json
import logging
import os
import random
import time
import urllib.parse
from dataclasses import dataclass
from datetime import datetime, timezone
from typing import Any, Iterator, Mapping, Optional, Sequence, Union

from ..secrets import scrub
from ..settings.registry import ENV_REFERENCE, INLINE_PLACEHOLDER, FieldPath, HTTPSpec, shown_url
from .base import ModelUnavailableError, Sample, SamplingParams, TextsFromSamples
from .openai_backend import (
    NOTHING_STORED,
    RETRY_STATUS,
    BrokenAnswerError,
    RequestBudgetError,
    chat_messages,
    sample_name,
    snippet,
)
from .streaming import RateLimiter, stream_async

MIN_SECRET = 4  # shorter values are not masked
MAX_RETRY_AFTER_S = 60.0
MAX_BACKOFF_S = 8.0
RERUN = (
    ". Nothing is stored for this sample (what finished before is); launch the run again once the endpoint "
    "answers: it generates only the missing samples"
)


def _httpx():
    try:
        import httpx2 as httpx  # the transport the openai SDK of this environment is built on
    except ImportError:  # pragma: no cover - older environments have httpx
        import httpx
    return httpx


class _ScrubRecords(logging.Filter):
    """Masks the secrets of every HTTP client built so far in the records of the HTTP library's
    logger (``HTTP Request: POST <url> ...`` names the URL, query string included)."""

    def __init__(self):
        super().__init__()
        self.secrets: set[str] = set()

    def filter(self, record: logging.LogRecord) -> bool:
        if self.secrets:
            text = record.getMessage()
            clean = scrub(text, self.secrets)
            if clean != text:
                record.msg, record.args = clean, ()
        return True


_RECORDS = _ScrubRecords()


def resolve_env(text: str, what: str, model: str, environ: Mapping[str, str]) -> tuple[str, list[str]]:
    """``text`` with each ``${VAR}`` replaced by its value in ``environ``, and the values used.
    Raises :class:`ModelUnavailableError` naming the variable, the model and ``what`` (never a value)."""
    used: list[str] = []

    def value(m) -> str:
        var = m.group(1)
        got = environ.get(var)
        if not got:
            raise ModelUnavailableError(
                f"model {model!r}: {what} takes ${{{var}}} from the environment, and {var} is "
                f"{'empty' if got == '' else 'not set'}; set it where the run starts (its value is never printed)"
            )
        used.append(got)
        return got

    return ENV_REFERENCE.sub(value, text), used


def fill_template(template: Any, values: Mapping[str, Any]) -> Any:
    """The body template with its placeholders replaced: a text that is exactly a placeholder
    (``"{messages}"``, ``"{seed}"``, ...) becomes the value itself (a list, an int); ``{prompt}``
    and ``{seed}`` inside a text become text, in one pass (a prompt holding ``{seed}`` stays as it is)."""
    if isinstance(template, dict):
        return {k: fill_template(v, values) for k, v in template.items()}
    if isinstance(template, list):
        return [fill_template(v, values) for v in template]
    if isinstance(template, str):
        if template in values:
            return values[template]
        return INLINE_PLACEHOLDER.sub(lambda m: str(values["{" + m.group(1) + "}"]), template)
    return template


def _kind(node: Any) -> str:
    return {dict: "an object", list: "a list", str: "a text", type(None): "null"}.get(type(node), type(node).__name__)


def read_field(doc: Any, path: FieldPath) -> tuple[Any, Optional[str]]:
    """``(value, None)`` at ``path`` in ``doc``, or ``(None, why)`` saying where the path ends."""
    node, walked = doc, ""
    for part in path:
        here = walked or "the body"
        if isinstance(part, int):
            if not isinstance(node, list):
                return None, f"{here} is {_kind(node)}, not a list"
            if not -len(node) <= part < len(node):
                return None, f"{here} has {len(node)} item(s), no [{part}]"
            node, walked = node[part], f"{walked}[{part}]"
        else:
            if not isinstance(node, dict):
                return None, f"{here} is {_kind(node)}, not an object"
            if part not in node:
                keys = sorted(map(str, node))
                shown = ", ".join(keys[:10]) + (", ..." if len(keys) > 10 else "")
                return None, f"{here} has no key {part!r} (its keys: {shown or 'none'})"
            node, walked = node[part], f"{walked}.{part}" if walked else part
    return node, None


def retry_after_s(headers: Mapping[str, str]) -> Optional[float]:
    """The wait an answer asks for (``retry-after-ms``, ``retry-after`` in seconds or as a date)."""
    ms = headers.get("retry-after-ms")
    try:
        if ms:
            return max(0.0, float(ms) / 1000.0)
    except ValueError:
        pass
    value = headers.get("retry-after")
    if not value:
        return None
    try:
        return max(0.0, float(value))
    except ValueError:
        pass
    try:
        when = email.utils.parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    if when.tzinfo is None:
        when = when.replace(tzinfo=timezone.utc)
    return max(0.0, (when - datetime.now(timezone.utc)).total_seconds())


@dataclass(frozen=True)
class _Failure:
    """One attempt that got no answer: ``kind`` status / unreachable / broken, ``reason`` in words
    (already masked), whether to retry, and the wait the endpoint asked for."""

    kind: str
    reason: str
    retry: bool
    retry_after: Optional[float] = None
    status: Optional[int] = None


class HTTPClient(TextsFromSamples):
    backend = "http"
    streams_requests = True  # answers come back one by one: the engine commits them in groups

    def __init__(
        self,
        spec: HTTPSpec,
        *,
        name: str,
        source: str = "",
        timeout_s: float = 300.0,
        budget_s: float = 1800.0,
        max_retries: int = 5,
        backoff_s: float = 0.5,
        requests_per_minute: float = 0.0,
        system_prompt: Optional[str] = None,
        system_role: bool = True,
        log=None,
        environ: Optional[Mapping[str, str]] = None,
    ):
        """``timeout_s``: per attempt, unless the entry has its own ``timeout_s``;
        ``requests_per_minute``: used when the entry sets none (0: no limit); ``environ``: where
        ``${VAR}`` values are read (``os.environ``)."""
        environ = os.environ if environ is None else environ
        self.spec, self.name, self.source = spec, name, source or name
        self.system_prompt, self.system_role = system_prompt, system_role
        self.max_retries, self.backoff_s, self.budget_s = max(0, max_retries), backoff_s, budget_s
        self.timeout_s = float(spec.timeout_s if spec.timeout_s is not None else timeout_s)
        self.timeout_setting = (
            f"timeout_s={self.timeout_s:g} s of the registry entry"
            if spec.timeout_s is not None
            else f"FAIRNESS_LLM_REQUEST_TIMEOUT_S={self.timeout_s:g} s"
        )
        self.max_concurrency = max(1, int(spec.max_concurrency))
        self.requests_per_minute = float(spec.requests_per_minute or requests_per_minute or 0.0)
        self.method = spec.method
        self.log = log or (lambda msg: None)
        secrets: list[str] = []
        self.url, used = resolve_env(spec.url, "request.url", name, environ)
        secrets += used
        self._headers: dict[str, str] = {}
        for header, template in spec.headers.items():
            value, used = resolve_env(template, f"request header {header!r}", name, environ)
            self._headers[header] = value
            secrets += [*used, value, *(w for w in value.split() if len(w) >= 8)]
        if not any(h.lower() == "content-type" for h in self._headers):
            self._headers["Content-Type"] = "application/json"
        secrets += self._url_secrets(self.url)
        self._secrets = sorted({s for s in secrets if len(s) >= MIN_SECRET}, key=len, reverse=True)
        self.shown = self._scrub(shown_url(self.url))  # the endpoint as every message names it
        if urllib.parse.urlsplit(self.url).scheme not in ("http", "https"):
            raise ModelUnavailableError(
                f"model {name!r}: request.url {self.shown!r} (after its ${{VAR}} references) is not an http:// or "
                "https:// URL"
            )
        self.model_source = f"{self.shown} ({self.source})"  # stored with every row: no secret
        self.model_revision: Optional[str] = None
        self._httpx = _httpx()
        for logger in ("httpx", "httpx2"):
            if _RECORDS not in logging.getLogger(logger).filters:
                logging.getLogger(logger).addFilter(_RECORDS)
        _RECORDS.secrets.update(self._secrets)

    def __repr__(self) -> str:
        return f"HTTPClient(name={self.name!r}, {self.method} {self.shown}, response {self.spec.response!r})"

    @staticmethod
    def _url_secrets(url: str) -> list[str]:
        """The URL's user name, password, query string and query values: never printed."""
        parts = urllib.parse.urlsplit(url)
        out = [parts.username or "", parts.password or "", parts.query]
        out += [v for _, v in urllib.parse.parse_qsl(parts.query, keep_blank_values=True)]
        return [s for s in out if s]

    def _scrub(self, text) -> str:
        """Text that may be logged or raised: header values, ``${VAR}`` values, the URL's userinfo
        and query, and any URL password masked."""
        return scrub(str(text), self._secrets)

    def _body_shown(self, content: bytes) -> str:
        """The first 200 characters of a body, masked before they are cut (no piece of a secret
        survives the cut)."""
        return snippet(self._scrub(content.decode("utf-8", errors="replace")).encode(), 200)

    def check(self) -> str:
        """What the endpoint is, in words (nothing is sent: a product API has no listing to ask;
        its first sample is its first request)."""
        rate = f", at most {self.requests_per_minute:g} requests per minute" if self.requests_per_minute else ""
        return (
            f"endpoint {self.shown} (backend http: {self.method}, the answer at {self.spec.response!r}, "
            f"{self.max_concurrency} request(s) in flight{rate}; first asked by the first sample)"
        )

    # ------------------------------------------------------------------ requests
    def _messages(self, prompt) -> list[dict]:
        return chat_messages(prompt, self.system_prompt, self.system_role)

    def _sample_name(self, index: int, total: int, seed: int, labels: Optional[Sequence[str]]) -> str:
        return sample_name(index, total, seed, labels)

    def _check_prompt(self, prompt, sample: str) -> None:
        """Without ``{messages}`` in the body, only the last user turn is sent: refuse a prompt
        that would lose earlier turns or a system message."""
        if "{messages}" in self.spec.placeholders:
            return
        messages = self._messages(prompt)
        if len(messages) > 1:
            roles = ", ".join(m["role"] for m in messages)
            raise ModelUnavailableError(
                f'model {self.name!r}: {sample} is a conversation ({roles}) but request.body has no "{{messages}}": '
                '{prompt} would send only its last user turn. Put "{messages}" in the body, or (a system prompt '
                "only) set system_role: false to fold it into the user text"
            )

    def body(self, prompt, seed: int, params: SamplingParams) -> Any:
        """The JSON body sent for one sample."""
        messages = self._messages(prompt)
        last_user = next((m["content"] for m in reversed(messages) if m.get("role") == "user"), "")
        values = {
            "{messages}": messages,
            "{prompt}": last_user,
            "{seed}": int(seed),
            "{max_tokens}": params.max_new_tokens,
            "{temperature}": params.temperature if params.do_sample else 0.0,
            "{top_p}": params.top_p if params.do_sample else 1.0,
        }
        return fill_template(self.spec.body, values)

    def _answer(self, content: bytes) -> tuple[Optional[str], Optional[str]]:
        """``(text, None)``, or ``(None, why)`` when the body holds no text at the field path."""
        try:
            doc = json.loads(content)
        except ValueError:
            return None, f"the body is not JSON ({len(content)} bytes); it begins {self._body_shown(content)}"
        value, missing = read_field(doc, self.spec.response_path)
        if missing is None and not isinstance(value, str):
            missing = f"it holds {_kind(value)}, not text"
        if missing is not None:
            return None, f"no text at {self.spec.response!r}: {missing}; the body begins {self._body_shown(content)}"
        return value, None

    async def _attempt(self, http, content: bytes) -> Union[str, _Failure]:
        httpx = self._httpx
        try:
            resp = await http.request(self.method, self.url, content=content, headers=self._headers)
        except httpx.TimeoutException as exc:
            why = f"no answer within {self.timeout_setting} ({type(exc).__name__})"
            return _Failure("unreachable", why, True)
        except httpx.RequestError as exc:
            return _Failure("unreachable", self._scrub(f"{type(exc).__name__}: {exc}")[:300], True)
        if not 200 <= resp.status_code < 300:
            return _Failure(
                "status",
                f"HTTP {resp.status_code}; the body begins {self._body_shown(resp.content)}",
                resp.status_code in RETRY_STATUS,
                retry_after_s(resp.headers),
                resp.status_code,
            )
        text, why = self._answer(resp.content)
        return text if why is None else _Failure("broken", why, True)

    def _wait(self, attempt: int, retry_after: Optional[float]) -> float:
        if retry_after is not None and retry_after <= MAX_RETRY_AFTER_S:
            return retry_after
        return min(self.backoff_s * 2 ** (attempt - 1), MAX_BACKOFF_S) * (1 - 0.25 * random.random())

    def _check_budget(self, what: str, started: float, attempts: int, wait: float) -> None:
        """Raise :class:`RequestBudgetError` when one more attempt, after ``wait`` and taking up to
        ``timeout_s``, could end past ``budget_s``."""
        spent = time.monotonic() - started
        if spent + wait + self.timeout_s <= self.budget_s:
            return
        raise RequestBudgetError(
            self._scrub(
                f"model {self.name!r}: {what} given up after {attempts} attempt(s) in {spent:.1f} s: one more (after a "
                f"wait of {wait:.1f} s, up to {self.timeout_setting} long) could end past the request's time budget, "
                f"FAIRNESS_LLM_REQUEST_BUDGET_S={self.budget_s:g} s. Raise the budget to allow more retries, or the "
                "timeout when one answer needs longer; the run's log names each failed attempt" + NOTHING_STORED
            )
        )

    def _given_up(self, failure: _Failure, sample: str, attempts: int) -> Exception:
        where = f"model {self.name!r}: endpoint {self.shown}"
        tried = f"{attempts} attempt(s)"
        if failure.kind == "broken":
            return BrokenAnswerError(
                self._scrub(
                    f"{where} gave no answer text for {sample} on {tried} (HTTP 200, retried like a 5xx): "
                    f"{failure.reason}. Nothing is stored for this sample (what finished before is); fix `response` "
                    f"of {self.name!r} in the model registry, or the endpoint, and launch the run again: it generates "
                    "only the missing samples"
                )
            )
        if failure.kind == "unreachable":
            return ModelUnavailableError(
                self._scrub(f"{where} unreachable for {sample} after {tried}: {failure.reason}{RERUN}")
            )
        hint = ""
        if failure.status in (401, 403):
            hint = " (refused: check the request's headers and their ${VAR}; their values are never printed)"
        elif failure.status is not None and failure.status not in RETRY_STATUS:
            hint = " (not retried: a status that says the request itself is wrong)"
        return RuntimeError(self._scrub(f"{where}: {failure.reason}{hint}, for {sample} after {tried}{RERUN}"))

    async def _sample(self, http, limiter: RateLimiter, content: bytes, sample: str) -> Sample:
        """One sample's request and its retries."""
        started, t0 = time.monotonic(), time.perf_counter()
        what = f"{self.method} {self.shown} for {sample}"
        for attempt in range(1, self.max_retries + 2):
            await limiter.wait()  # every attempt counts against requests_per_minute
            outcome = await self._attempt(http, content)
            if isinstance(outcome, str):
                return Sample(outcome, None, None, time.perf_counter() - t0)
            if not outcome.retry or attempt > self.max_retries:
                raise self._given_up(outcome, sample, attempt)
            wait = self._wait(attempt, outcome.retry_after)
            self._check_budget(what, started, attempt, wait)
            self.log(
                self._scrub(
                    f"{self.name}: {what}: attempt {attempt} got no answer ({outcome.reason}); retrying in "
                    f"{wait:.1f} s (at most {self.max_retries} retries within FAIRNESS_LLM_REQUEST_BUDGET_S="
                    f"{self.budget_s:g} s)"
                )
            )
            await asyncio.sleep(wait)
        raise AssertionError("unreachable")

    def stream_samples(
        self, prompts: list, seeds: list[int], params: SamplingParams, labels: Optional[Sequence[str]] = None
    ) -> Iterator[list[tuple[int, Sample]]]:
        """Lists of ``(index, sample)`` as requests finish, ``max_concurrency`` in flight; ``labels``
        (one per prompt: the response ids) name a sample in an error."""
        if labels is not None and len(labels) != len(prompts):
            raise ValueError(f"{self.name}: {len(labels)} labels for {len(prompts)} prompts")
        if len(seeds) != len(prompts):
            raise ValueError(f"{self.name}: {len(seeds)} seeds for {len(prompts)} prompts")
        total = len(prompts)
        for i, (prompt, seed) in enumerate(zip(prompts, seeds, strict=True)):
            self._check_prompt(prompt, self._sample_name(i, total, seed, labels))
        httpx = self._httpx
        concurrency = max(1, min(self.max_concurrency, total or 1))
        limiter = RateLimiter(self.requests_per_minute / 60.0 or None)

        async def setup():
            limits = httpx.Limits(max_connections=concurrency, max_keepalive_connections=concurrency)
            return httpx.AsyncClient(timeout=self.timeout_s, limits=limits, follow_redirects=False)

        async def teardown(http) -> None:
            if http is not None:
                await http.aclose()

        async def call(item, http) -> Sample:
            index, prompt, seed = item
            content = json.dumps(self.body(prompt, seed, params), ensure_ascii=False).encode("utf-8")
            return await self._sample(http, limiter, content, self._sample_name(index, total, seed, labels))

        yield from stream_async(
            call,
            list(zip(range(total), prompts, seeds, strict=True)),
            concurrency=concurrency,
            setup=setup,
            teardown=teardown,
        )

    def generate_samples(
        self, prompts: list, seeds: list[int], params: SamplingParams, labels: Optional[Sequence[str]] = None
    ) -> list[Sample]:
        out: list[Optional[Sample]] = [None] * len(prompts)
        for finished in self.stream_samples(prompts, seeds, params, labels=labels):
            for i, sample in finished:
                out[i] = sample
        return out  # type: ignore[return-value]
