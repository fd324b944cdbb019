"""An OpenAI-compatible endpoint's broken 200 answers (issue 19, item 6), against a real HTTP
server on 127.0.0.1: truncated JSON, an HTML body, ``{"choices": []}`` and a choice without
content are retried like a 5xx; when they persist, the step fails naming the model, the endpoint
(password masked) and the sample; a broken answer followed by a good one is stored normally; and
no asyncio "exception was never retrieved" is logged when one request of the stream fails."""

from __future__ import annotations

import gc
import json
import logging
import threading
from collections import Counter
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

from resources.llm.base import SamplingParams
from resources.llm.openai_backend import BrokenAnswerError, OpenAIClient

PARAMS = SamplingParams(max_new_tokens=50)
RETRIES = 2  # the SDK's backoff (0.5 s, 1 s, jittered): about 1.5 s per persistently broken sample

TRUNCATED = b'{"id": "cmpl-1", "object": "chat.completion", "choices": [{"index": 0, "message": {"role": "assi'
HTML = b"<html><head><title>502 Bad Gateway</title></head><body><h1>Bad Gateway</h1>nginx</body></html>"


def good_answer(prompt: str) -> str:
    return f"answer to {prompt}"


def _completion(content, finish_reason="stop") -> bytes:
    return json.dumps(
        {
            "id": "cmpl-1",
            "object": "chat.completion",
            "created": 0,
            "model": "m",
            "choices": [
                {"index": 0, "message": {"role": "assistant", "content": content}, "finish_reason": finish_reason}
            ],
            "usage": {"prompt_tokens": 3, "completion_tokens": 4, "total_tokens": 7},
        }
    ).encode()


ANSWERS = {  # what a scripted request answers: (content type, body)
    "truncated": ("application/json", TRUNCATED),
    "html": ("text/html; charset=utf-8", HTML),
    "empty_choices": ("application/json", b'{"choices": []}'),
    "null_content": ("application/json", _completion(None, "stop")),
    "null_content_length": ("application/json", _completion(None, "length")),
}


class ScriptedEndpoint:
    """A real HTTP/1.1 server on 127.0.0.1 (random port) answering POST /v1/chat/completions.

    ``script`` maps a prompt (the last user message) to the answers its successive requests get
    (names of ``ANSWERS``); once a prompt's script is used up, or for any other prompt, a good
    answer. ``requests`` counts the requests per prompt."""

    def __init__(self, script: dict[str, list[str]] | None = None):
        self.script = {k: list(v) for k, v in (script or {}).items()}
        self.requests: Counter = Counter()
        self.lock = threading.Lock()
        endpoint = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args):  # quiet
                pass

            def _send(self, status: int, ctype: str, body: bytes) -> None:
                self.send_response(status)
                self.send_header("content-type", ctype)
                self.send_header("content-length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def do_GET(self):  # noqa: N802 - http.server's naming
                self._send(200, "application/json", json.dumps({"data": [{"id": "m"}]}).encode())

            def do_POST(self):  # noqa: N802
                body = json.loads(self.rfile.read(int(self.headers.get("content-length", 0))))
                prompt = body["messages"][-1]["content"]
                with endpoint.lock:
                    endpoint.requests[prompt] += 1
                    queue = endpoint.script.get(prompt)
                    kind = queue.pop(0) if queue else "good"
                if kind == "good":
                    self._send(200, "application/json", _completion(good_answer(prompt)))
                else:
                    self._send(200, *ANSWERS[kind])

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        self.port = self.server.server_address[1]
        self.url = f"http://127.0.0.1:{self.port}/v1"
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)

    def __enter__(self) -> "ScriptedEndpoint":
        self.thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self.server.shutdown()
        self.server.server_close()


def _client(url: str, **kw) -> OpenAIClient:
    kw.setdefault("max_retries", RETRIES)
    return OpenAIClient(url, "m", name="sim-model", **kw)


PROMPTS = [f"p{i}" for i in range(8)]
LABELS = [f"sim-model|base|full:female:low:nigeria|{i}" for i in range(8)]


def _stream(client: OpenAIClient, prompts=PROMPTS, labels=LABELS) -> tuple[list, BaseException | None]:
    got, error = [], None
    try:
        for batch in client.stream_samples(prompts, list(range(len(prompts))), PARAMS, labels=labels):
            got.extend(batch)
    except Exception as exc:  # noqa: BLE001 - returned for the test to inspect
        error = exc
    return got, error


@pytest.mark.parametrize(
    "kind, says",
    [
        ("truncated", "truncated or malformed JSON"),
        ("html", "not JSON"),
        ("empty_choices", "no choices"),
        ("null_content", "no message content"),
    ],
)
def test_a_persistently_broken_answer_is_retried_then_fails_naming_model_endpoint_and_sample(kind, says, caplog):
    with ScriptedEndpoint({"p3": [kind] * 10}) as ep:
        url = f"http://auditor:s3cret-pw@127.0.0.1:{ep.port}/v1"  # the password must never be shown
        logs: list[str] = []
        with caplog.at_level(logging.DEBUG, logger="asyncio"):
            got, error = _stream(_client(url, log=logs.append, max_concurrency=2))
            gc.collect()  # a never-retrieved future reports itself when collected
        assert ep.requests["p3"] == 1 + RETRIES  # retried like a 5xx, with the same budget
    assert isinstance(error, BrokenAnswerError), repr(error)
    msg = str(error)
    assert "sim-model" in msg and f"http://auditor:***@127.0.0.1:{ep.port}/v1" in msg and "s3cret-pw" not in msg
    assert LABELS[3] in msg and says in msg and f"{1 + RETRIES} attempts" in msg
    assert not any("s3cret-pw" in line for line in logs)
    assert any("broken answer" in line and "retries it like a 5xx" in line for line in logs)  # said in the run's log
    # what finished before the failure was handed back, and nothing of the broken sample
    assert 3 not in {i for i, _ in got}
    assert all(s.text == good_answer(PROMPTS[i]) for i, s in got)
    never_retrieved = [r.getMessage() for r in caplog.records if "never retrieved" in r.getMessage()]
    assert never_retrieved == []


def test_without_labels_the_sample_is_named_by_its_position_and_seed():
    with ScriptedEndpoint({"p1": ["empty_choices"] * 10}) as ep:
        _, error = _stream(_client(ep.url), prompts=["p0", "p1"], labels=None)
    assert isinstance(error, BrokenAnswerError)
    assert "sample 2 of 2 (seed 1)" in str(error) and ep.url in str(error)


def test_broken_answers_followed_by_a_good_one_are_retried_and_stored_normally():
    script = {"p2": ["truncated", "html"], "p5": ["empty_choices"], "p6": ["null_content"]}
    with ScriptedEndpoint(script) as ep:
        logs: list[str] = []
        out = _client(ep.url, log=logs.append).generate_samples(PROMPTS, list(range(8)), PARAMS)
        assert ep.requests["p2"] == 3 and ep.requests["p5"] == 2 and ep.requests["p6"] == 2
        assert ep.requests["p0"] == 1
    assert [s.text for s in out] == [good_answer(p) for p in PROMPTS]
    assert all(s.prompt_tokens == 3 and s.output_tokens == 4 for s in out)
    assert sum("broken answer" in line for line in logs) == 4


def test_an_empty_content_the_finish_reason_explains_is_stored_without_retrying():
    """``finish_reason: length`` with no content: the token budget ran out; that is an answer (empty), not
    a broken one."""
    with ScriptedEndpoint({"p0": ["null_content_length"]}) as ep:
        out = _client(ep.url).generate_samples(["p0"], [0], PARAMS)
        assert ep.requests["p0"] == 1
    assert out[0].text == ""


def test_a_failing_request_leaves_no_never_retrieved_future(caplog):
    """One request of many in flight fails (a broken answer, no retries left): the other workers are
    cancelled and awaited, and asyncio logs nothing about futures whose exception was never retrieved.
    Only asyncio's records count: the collection below also finalises what earlier tests of the same worker left
    behind (SQLAlchemy logs an error for a SQLite connection of another thread), which is not this client's."""
    gc.collect()  # what earlier tests left is finalised before the client runs, not during its collection
    with ScriptedEndpoint({"p4": ["html"] * 10}) as ep:
        with caplog.at_level(logging.DEBUG, logger="asyncio"):
            for _ in range(3):
                _, error = _stream(_client(ep.url, max_retries=0, max_concurrency=8))
                assert isinstance(error, BrokenAnswerError)
            gc.collect()
    problems = [
        r.getMessage() for r in caplog.records if r.levelno >= logging.ERROR and r.name.split(".")[0] == "asyncio"
    ]
    assert problems == []
