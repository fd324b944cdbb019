"""The ``http`` backend (issue 34, item 4) against a real HTTP server on 127.0.0.1 (random port)
that is not OpenAI-compatible: its body template ({messages}, {seed}, {prompt}), a nested answer
path, retries (429 then an answer, a timeout), a 500 that persists and a missing path (errors
naming the model, the endpoint and the sample), secrets in the headers and the URL that never
reach an error, a log record or a repr, bounded concurrency and rate, ``${VAR}`` references that
are not set, the registry's checks, and the engine's commits and resume."""

from __future__ import annotations

import json
import logging
import threading
import time
from collections import Counter
from http.server import BaseHTTPRequestHandler
from pathlib import Path

import pytest
import yaml

from resources.llm.base import ModelUnavailableError, SamplingParams
from resources.llm.http_backend import HTTPClient, fill_template, read_field
from resources.llm.openai_backend import BrokenAnswerError, RequestBudgetError
from resources.llm.resource import LLMResource
from resources.llm.runner import GenerationRunner
from resources.settings import ConfigError
from resources.settings.registry import http_spec, load_model_registry, parse_field_path
from tests.helpers.servers import LoopbackHTTPServer

PARAMS = SamplingParams(max_new_tokens=40)
LABEL = "advisor|base|full:female:low:nigeria|0"
RESPONSE = "result.outputs[0].text"


def answer(text: str) -> dict:
    return {"result": {"outputs": [{"text": text, "score": 1}]}, "id": "r-1"}


class ProductAPI(LoopbackHTTPServer):
    """``POST /api/chat`` of a product that is not OpenAI-compatible: the prompt is the last
    ``conversation`` item (or ``prompt``); ``script`` maps a prompt to what its successive requests
    get: ``(status, body, headers)``, ``"echo500"``/``"echo200"`` (the request's headers and path
    echoed back, with that status; 200 without the answer's field), or ``("sleep", s)`` before a
    good answer; once used up, a good answer (``answer``) after ``delay_s``. It records each
    request (path, headers, body) and the most requests in flight at once."""

    def __init__(self, script: dict | None = None, delay_s: float = 0.0):
        self.script = {k: list(v) for k, v in (script or {}).items()}
        self.requests: Counter = Counter()
        self.seen: list[dict] = []
        self.in_flight = self.max_in_flight = 0
        self.lock = threading.Lock()
        api = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args):  # quiet
                pass

            def _send(self, status: int, body, headers=None) -> None:
                data = body if isinstance(body, bytes) else json.dumps(body).encode()
                try:
                    self.send_response(status)
                    for k, v in {"content-type": "application/json", **(headers or {})}.items():
                        self.send_header(k, v)
                    self.send_header("content-length", str(len(data)))
                    self.end_headers()
                    self.wfile.write(data)
                except (BrokenPipeError, ConnectionResetError):
                    pass  # the client gave up on this attempt

            def do_POST(self):  # noqa: N802 - http.server's naming
                body = json.loads(self.rfile.read(int(self.headers.get("content-length", 0))))
                prompt = body["conversation"][-1]["content"] if "conversation" in body else body.get("prompt")
                with api.lock:
                    api.requests[prompt] += 1
                    api.seen.append({"path": self.path, "headers": dict(self.headers), "body": body})
                    api.in_flight += 1
                    api.max_in_flight = max(api.max_in_flight, api.in_flight)
                    queue = api.script.get(prompt)
                    step = queue.pop(0) if queue else None
                try:
                    self._answer(step, prompt)
                finally:
                    with api.lock:
                        api.in_flight -= 1

            def _answer(self, step, prompt) -> None:
                if step in ("echo500", "echo200"):
                    echoed = {"error": "internal", "request_headers": dict(self.headers), "path": self.path}
                    self._send(500 if step == "echo500" else 200, echoed)
                elif isinstance(step, tuple) and step[0] == "sleep":
                    time.sleep(step[1])
                    self._send(200, answer(f"answer to {prompt}"))
                elif step is not None:
                    status, body, headers = step
                    self._send(status, body, headers)
                else:
                    time.sleep(api.delay_s)
                    self._send(200, answer(f"answer to {prompt}"))

        self.delay_s = delay_s
        super().__init__(Handler)
        self.server.daemon_threads = True


def spec_of(url: str, **entry):
    """An :class:`HTTPSpec` as the registry reads it (``entry`` overrides the defaults)."""
    request = {
        "url": url + "/api/chat",
        "method": "POST",
        "body": {"conversation": "{messages}", "temperature": 0.75, "seed": "{seed}"},
        **entry.pop("request", {}),
    }
    return http_spec(
        {"source": "advisor-api", "backend": "http", "request": request, "response": RESPONSE, **entry}, "t"
    )


def client_of(url: str, *, environ=None, log=None, **entry) -> HTTPClient:
    kw = {k: entry.pop(k) for k in ("max_retries", "backoff_s", "budget_s", "timeout_s", "system_role") if k in entry}
    return HTTPClient(
        spec_of(url, **entry),
        name="advisor",
        source="advisor-api",
        environ=environ or {},
        log=log,
        **{"max_retries": 2, "backoff_s": 0.01, **kw},
    )


def _registry(tmp_path: Path, entry: dict) -> str:
    path = tmp_path / "models.yaml"
    path.write_text(yaml.safe_dump({"models": {"advisor": {"source": "advisor-api", "backend": "http", **entry}}}))
    return str(path)


# ---------------------------------------------------------------------------- the request and the answer


def test_the_body_template_gets_the_messages_the_seed_and_the_prompt(tmp_path, monkeypatch):
    """Through the registry and the resource: {messages} a list, {seed} an int, {prompt} and {seed}
    inside a text, the header's ${VAR} from the environment, the answer read at a nested path."""
    monkeypatch.setenv("ADVISOR_TOKEN", "tok-abcdefgh-1234")
    with ProductAPI() as api:
        entry = {
            "system_role": True,
            "request": {
                "url": api.url + "/api/chat",
                "headers": {"Authorization": "Bearer ${ADVISOR_TOKEN}", "X-Client": "audit"},
                "body": {
                    "conversation": "{messages}",
                    "temperature": 0.75,
                    "seed": "{seed}",
                    "note": "seed {seed} for {prompt}",
                    "options": {"max": "{max_tokens}"},
                },
            },
            "response": RESPONSE,
            "max_concurrency": 2,
        }
        llm = LLMResource(registry_path=_registry(tmp_path, entry))
        assert "endpoint " + api.url + "/api/chat (backend http" in llm.check("advisor")
        client = llm.client("advisor")
        chat = [{"role": "system", "content": "You advise students."}, {"role": "user", "content": "p1"}]
        out = client.generate_samples(["p0", chat], [7, 8], PARAMS, labels=[LABEL, LABEL[:-1] + "1"])
    assert [s.text for s in out] == ["answer to p0", "answer to p1"]
    assert out[0].prompt_tokens is None and out[0].latency_s > 0
    assert client.backend == "http" and client.streams_requests
    assert client.model_source == f"{api.url}/api/chat (advisor-api)"
    bodies = sorted((r["body"] for r in api.seen), key=lambda b: b["seed"])
    assert bodies[0] == {
        "conversation": [{"role": "user", "content": "p0"}],
        "temperature": 0.75,
        "seed": 7,
        "note": "seed 7 for p0",
        "options": {"max": 40},
    }
    assert bodies[1]["conversation"] == chat and bodies[1]["seed"] == 8 and bodies[1]["note"] == "seed 8 for p1"
    headers = api.seen[0]["headers"]
    assert headers["Authorization"] == "Bearer tok-abcdefgh-1234" and headers["X-Client"] == "audit"
    assert headers["Content-Type"] == "application/json" and api.seen[0]["path"] == "/api/chat"


def test_a_prompt_that_holds_braces_is_sent_as_it_is():
    values = {"{prompt}": "say {seed} and {messages}", "{seed}": 3}
    assert fill_template({"p": "Q: {prompt}", "s": "{seed}", "n": None, "k": [1, "{seed}!"]}, values) == {
        "p": "Q: say {seed} and {messages}",
        "s": 3,
        "n": None,
        "k": [1, "3!"],
    }


def test_prompt_alone_folds_a_system_prompt_and_refuses_to_cut_a_conversation():
    chat = [{"role": "system", "content": "Be brief."}, {"role": "user", "content": "p0"}]
    with ProductAPI() as api:
        folded = client_of(api.url, system_role=False, request={"body": {"prompt": "{prompt}", "seed": "{seed}"}})
        assert folded.generate_samples([chat], [1], PARAMS)[0].text == "answer to Be brief.\n\np0"
        kept = client_of(api.url, request={"body": {"prompt": "{prompt}"}})
        with pytest.raises(ModelUnavailableError) as caught:
            kept.generate_samples(["p1", chat], [1, 2], PARAMS, labels=[LABEL, "advisor|base|x|1"])
        assert api.requests["p1"] == 0  # refused before any request
    msg = str(caught.value)
    assert "'advisor'" in msg and "advisor|base|x|1" in msg and "system, user" in msg and '"{messages}"' in msg


def test_read_field_says_where_the_path_ends():
    doc = {"a": [{"b": "x"}], "n": None}
    assert read_field(doc, parse_field_path("a[0].b")) == ("x", None)
    assert read_field(doc, parse_field_path("a[-1].b")) == ("x", None)
    assert read_field(doc, parse_field_path("a[1].b"))[1] == "a has 1 item(s), no [1]"
    assert read_field(doc, parse_field_path("a[0].c"))[1] == "a[0] has no key 'c' (its keys: b)"
    assert read_field(doc, parse_field_path("n.x"))[1] == "n is null, not an object"
    assert read_field([1], parse_field_path("a"))[1] == "the body is a list, not an object"


# ---------------------------------------------------------------------------- retries and failures


def test_a_429_is_retried_then_answered():
    with ProductAPI({"p0": [(429, {"error": "slow down"}, {"Retry-After": "0"})]}) as api:
        logs: list[str] = []
        out = client_of(api.url, log=logs.append).generate_samples(["p0", "p1"], [0, 1], PARAMS, labels=[LABEL, "b"])
        assert api.requests["p0"] == 2 and api.requests["p1"] == 1
    assert [s.text for s in out] == ["answer to p0", "answer to p1"]
    said = [line for line in logs if "attempt 1 got no answer" in line]
    assert len(said) == 1 and "HTTP 429" in said[0] and LABEL in said[0] and "retrying in 0.0 s" in said[0], logs


def test_an_attempt_longer_than_the_timeout_is_retried_and_the_budget_stops_the_retries():
    with ProductAPI({"p0": [("sleep", 1.0)], "p1": [("sleep", 2.0)] * 10}) as api:
        client = client_of(api.url, timeout_s=0.2, budget_s=5.0, max_retries=5)
        assert client.generate_samples(["p0"], [0], PARAMS)[0].text == "answer to p0"
        assert api.requests["p0"] == 2
        with pytest.raises(RequestBudgetError) as caught:
            client_of(api.url, timeout_s=0.2, budget_s=0.35, max_retries=5).generate_samples(
                ["p1"], [0], PARAMS, labels=[LABEL]
            )
    msg = str(caught.value)
    assert "'advisor'" in msg and LABEL in msg and "given up after 1 attempt(s)" in msg, msg
    assert "FAIRNESS_LLM_REQUEST_TIMEOUT_S=0.2 s" in msg and "FAIRNESS_LLM_REQUEST_BUDGET_S=0.35 s" in msg


def test_a_500_that_persists_names_the_model_the_endpoint_and_the_sample():
    with ProductAPI({"p0": [(500, {"error": "boom"}, {})] * 10}) as api:
        with pytest.raises(RuntimeError) as caught:
            client_of(api.url, max_retries=2).generate_samples(["p0"], [0], PARAMS, labels=[LABEL])
        assert api.requests["p0"] == 3  # the first attempt and two retries
    msg = str(caught.value)
    for part in ("model 'advisor'", f"endpoint {api.url}/api/chat", "HTTP 500", LABEL, "after 3 attempt(s)", "boom"):
        assert part in msg, (part, msg)
    assert "Nothing is stored for this sample" in msg


def test_a_400_is_not_retried():
    with ProductAPI({"p0": [(400, {"error": "bad field"}, {})]}) as api:
        with pytest.raises(RuntimeError, match=r"HTTP 400.*not retried.*after 1 attempt\(s\)"):
            client_of(api.url, max_retries=3).generate_samples(["p0"], [0], PARAMS)
        assert api.requests["p0"] == 1


def test_a_missing_path_names_the_path_and_shows_the_start_of_the_body():
    long_body = {"result": {"outputs": []}, "padding": "x" * 400}
    with ProductAPI({"p0": [(200, long_body, {})] * 10}) as api:
        with pytest.raises(BrokenAnswerError) as caught:
            client = client_of(api.url, request={"url": api.url + "/api/chat?debug=1"}, max_retries=1)
            client.generate_samples(["p0"], [0], PARAMS, labels=[LABEL])
        assert api.requests["p0"] == 2  # retried like a 5xx
    msg = str(caught.value)
    for part in (
        "model 'advisor'",
        f"endpoint {api.url}/api/chat?***",
        LABEL,
        RESPONSE,
        "outputs has 0 item(s), no [0]",
    ):
        assert part in msg, (part, msg)
    start = json.dumps(long_body)[:200]
    assert repr(start) + " ..." in msg and json.dumps(long_body)[:201] not in msg  # its first 200 characters


def test_an_answer_that_is_not_json_or_not_text_is_broken():
    with ProductAPI(
        {"p0": [(200, b"<html>proxy</html>", {})], "p1": [(200, {"result": {"outputs": [{"text": 3}]}}, {})]}
    ) as api:
        logs: list[str] = []
        out = client_of(api.url, log=logs.append).generate_samples(["p0", "p1"], [0, 1], PARAMS)
    assert [s.text for s in out] == ["answer to p0", "answer to p1"]
    assert any("the body is not JSON" in line and "<html>proxy</html>" in line for line in logs), logs
    assert any("it holds int, not text" in line for line in logs), logs


# ---------------------------------------------------------------------------- secrets


SECRETS = {"ADVISOR_TOKEN": "tok-SECRET-4f9a2c71", "URL_KEY": "urlkey-SECRET-88b1", "PATH_TOKEN": "pathtok-SECRET-0d3"}
LITERAL = "literal-SECRET-c0ffee42"


@pytest.mark.parametrize("step", ["echo500", "echo200"])
def test_no_header_value_or_url_secret_reaches_an_error_a_log_or_a_repr(step, caplog):
    """The endpoint echoes the request's headers and path in its answer (the worst case): the
    error, the run's log, every Python log record (the HTTP library's included, at DEBUG) and the
    reprs hold none of the secrets, in any form."""
    caplog.set_level(logging.DEBUG)
    with ProductAPI({"p0": [step] * 10}) as api:
        request = {
            "url": api.url + "/hooks/${PATH_TOKEN}/chat?api_key=${URL_KEY}&v=2",
            "headers": {"Authorization": "Bearer ${ADVISOR_TOKEN}", "X-Literal": LITERAL},
        }
        logs: list[str] = []
        client = client_of(api.url, request=request, environ=SECRETS, log=logs.append, max_retries=1)
        with pytest.raises((RuntimeError, BrokenAnswerError)) as caught:
            client.generate_samples(["p0"], [0], PARAMS, labels=[LABEL])
        assert api.seen[0]["headers"]["Authorization"] == "Bearer " + SECRETS["ADVISOR_TOKEN"]  # it was sent
        assert SECRETS["URL_KEY"] in api.seen[0]["path"] and SECRETS["PATH_TOKEN"] in api.seen[0]["path"]
    msg = str(caught.value)
    assert "model 'advisor'" in msg and f"{api.url}/hooks/***/chat?***" in msg and LABEL in msg, msg
    texts = [msg, repr(caught.value), *logs, caplog.text, *(r.getMessage() for r in caplog.records)]
    texts += [repr(client), repr(client.spec), client.model_source, client.check()]
    assert any("HTTP Request: POST" in r.getMessage() for r in caplog.records)  # the library's record was seen
    for secret in [*SECRETS.values(), LITERAL, "Bearer " + SECRETS["ADVISOR_TOKEN"]]:
        for text in texts:
            assert secret not in text, (secret, text)


def test_a_secret_cut_by_the_200_characters_leaves_no_piece():
    """The body is masked before it is cut: a header value straddling the cut leaves no prefix."""
    body = b'{"e": "' + b"x" * 185 + LITERAL.encode() + b'"}'
    with ProductAPI({"p0": [(500, body, {})] * 3}) as api:
        client = client_of(api.url, request={"headers": {"X-Literal": LITERAL}}, max_retries=0)
        with pytest.raises(RuntimeError) as caught:
            client.generate_samples(["p0"], [0], PARAMS)
    assert "HTTP 500" in str(caught.value) and LITERAL[:8] not in str(caught.value), str(caught.value)


def test_an_unset_variable_names_itself_the_model_and_the_header(tmp_path, monkeypatch):
    monkeypatch.delenv("ADVISOR_TOKEN_UNSET", raising=False)
    monkeypatch.setenv("OTHER_SECRET", "other-SECRET-value-77")
    entry = {
        "request": {
            "url": "https://advisor.example.edu/api/chat?k=${OTHER_SECRET}",
            "headers": {"X-Other": "${OTHER_SECRET}", "Authorization": "Bearer ${ADVISOR_TOKEN_UNSET}"},
            "body": {"conversation": "{messages}"},
        },
        "response": "answer",
    }
    llm = LLMResource(registry_path=_registry(tmp_path, entry))
    with pytest.raises(ModelUnavailableError) as caught:
        llm.check("advisor")
    msg = str(caught.value)
    assert "model 'advisor'" in msg and "'Authorization'" in msg and "${ADVISOR_TOKEN_UNSET}" in msg, msg
    assert "not set" in msg and "other-SECRET-value-77" not in msg
    monkeypatch.setenv("ADVISOR_TOKEN_UNSET", "")
    with pytest.raises(ModelUnavailableError, match="ADVISOR_TOKEN_UNSET is empty"):
        llm.client("advisor")
    entry["request"]["url"] = "${ADVISOR_URL_UNSET}"
    with pytest.raises(ModelUnavailableError, match=r"'advisor': request.url takes \$\{ADVISOR_URL_UNSET\}"):
        LLMResource(registry_path=_registry(tmp_path, entry)).check("advisor")


# ---------------------------------------------------------------------------- limits


def test_concurrency_is_bounded():
    with ProductAPI(delay_s=0.15) as api:
        client = client_of(api.url, max_concurrency=3)
        out = client.generate_samples([f"p{i}" for i in range(9)], list(range(9)), PARAMS)
        assert api.max_in_flight == 3  # reached, never passed
    assert [s.text for s in out] == [f"answer to p{i}" for i in range(9)]


def test_requests_per_minute_spaces_the_attempts():
    with ProductAPI() as api:
        client = client_of(api.url, max_concurrency=5, requests_per_minute=600)  # one every 0.1 s
        started = time.monotonic()
        client.generate_samples([f"p{i}" for i in range(5)], list(range(5)), PARAMS)
        elapsed = time.monotonic() - started
    assert 0.38 <= elapsed < 2.0, elapsed


# ---------------------------------------------------------------------------- the engine: commits and resume


def test_the_engine_commits_as_answers_come_and_a_rerun_generates_only_the_rest():
    prompts = [f"p{i}" for i in range(6)]
    labels = [f"advisor|base|x|{i}" for i in range(6)]
    with ProductAPI({"p5": [(404, {"error": "no such route"}, {})]}, delay_s=0.02) as api:
        client = client_of(api.url, max_concurrency=1)
        committed: list[list[tuple[int, str]]] = []
        runner = GenerationRunner(
            client, lambda f: committed.append([(i, s.text) for i, s in f]), label="k", commit_every=2
        )
        with pytest.raises(RuntimeError, match=r"HTTP 404.*advisor\|base\|x\|5"):
            runner.run(prompts, list(range(6)), PARAMS, labels=labels)
        stored = {i for batch in committed for i, _ in batch}
        assert stored == {0, 1, 2, 3, 4} and len(committed) >= 2  # in groups, each sample once
        todo = [i for i in range(6) if i not in stored]
        again: list = []
        stats = GenerationRunner(client, again.extend, label="k").run(
            [prompts[i] for i in todo], todo, PARAMS, labels=[labels[i] for i in todo]
        )
        assert api.requests["p5"] == 2 and api.requests["p0"] == 1
    assert [(i, s.text) for i, s in again] == [(0, "answer to p5")] and stats.samples == 1


# ---------------------------------------------------------------------------- the registry


BAD_ENTRIES = [
    ({"response": RESPONSE}, "field request: needed"),
    ({"request": {"url": "ftp://x/api", "body": {"m": "{messages}"}}, "response": "a"}, "field request.url"),
    (
        {"request": {"url": "https://x/api", "body": {"m": "{messages}"}, "method": "GET"}, "response": "a"},
        "request.method",
    ),
    ({"request": {"url": "https://x/api", "body": {"t": 1}}, "response": "a"}, "request.body: holds neither"),
    ({"request": {"url": "https://x/api", "body": {"m": "turns: {messages}"}}, "response": "a"}, "request.body.m"),
    ({"request": {"url": "https://x/api", "body": {"m": "{mesages}"}}, "response": "a"}, "unknown placeholder"),
    (
        {"request": {"url": "https://x/api", "body": {"m": "{messages}"}, "header": {}}, "response": "a"},
        "unknown field",
    ),
    ({"request": {"url": "https://x/api", "body": {"m": "{messages}"}}}, "field response: needed"),
    (
        {"request": {"url": "https://x/api", "body": {"m": "{messages}"}}, "response": "a..b"},
        "field response: field path",
    ),
    ({"request": {"url": "https://x/api", "body": {"m": "{messages}"}}, "response": "a", "timeout_s": 0}, "timeout_s"),
    (
        {"request": {"url": "https://x/api", "body": {"m": "{messages}"}}, "response": "a", "max_concurrency": 1.5},
        "max_concurrency",
    ),
    (
        {"request": {"url": "https://x/api", "body": {"m": "{messages}"}}, "response": "a", "requests_per_minute": -1},
        "requests_per_minute",
    ),
    (
        {
            "request": {"url": "https://x/a", "body": {"m": "{messages}"}, "headers": {"A": "${bad var}"}},
            "response": "a",
        },
        "request.headers.A",
    ),
    (
        {
            "request": {"url": "https://x/a", "body": {"m": "{messages}"}, "headers": {"A": {"v": LITERAL}}},
            "response": "a",
        },
        "request.headers.A",
    ),
    (
        {"base_url": "https://x", "request": {"url": "https://x/a", "body": {"m": "{messages}"}}, "response": "a"},
        "base_url",
    ),
]


@pytest.mark.parametrize(("entry", "field"), BAD_ENTRIES)
def test_the_registry_names_the_model_and_the_field(tmp_path, entry, field):
    with pytest.raises(ConfigError) as caught:
        load_model_registry(_registry(tmp_path, entry))
    msg = str(caught.value)
    assert "model 'advisor'" in msg and field in msg and LITERAL not in msg, msg


def test_the_registry_reads_the_example_of_the_docs(tmp_path):
    doc = (Path(__file__).resolve().parents[2] / "docs" / "operations.md").read_text(encoding="utf-8")
    example = doc.split("## Auditing a product's own HTTP API", 1)[1].split("```yaml", 1)[1].split("```", 1)[0]
    path = tmp_path / "models.yaml"
    path.write_text(example)
    spec = load_model_registry(path)["my-advisor"]
    assert spec.backend == "http" and spec.http is not None and spec.extra == {}
    assert spec.http.response_path == ("choices", 0, "message", "content") and spec.http.max_concurrency == 4
    assert spec.http.requests_per_minute == 120 and spec.http.timeout_s == 60
    assert spec.http.placeholders == {"{messages}", "{seed}"} and "ADVISOR_TOKEN" in spec.http.headers["Authorization"]
    assert "Bearer" not in repr(spec)  # the repr names the headers, never their values
