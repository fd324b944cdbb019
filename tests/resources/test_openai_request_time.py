"""How long a request to an OpenAI-compatible endpoint may take: ``FAIRNESS_LLM_REQUEST_TIMEOUT_S``
(one attempt) and ``FAIRNESS_LLM_REQUEST_BUDGET_S`` (the request, its retries and their waits
included), against a real HTTP server on 127.0.0.1 that takes its time: an attempt longer than the
timeout is retried, the budget stops the retries within the stated time with an error naming the
request, its attempts, the time spent and both settings, and the settings reach the client."""

from __future__ import annotations

import json
import re
import threading
import time
from collections import Counter
from http.server import BaseHTTPRequestHandler

import openai  # noqa: F401 - imported here, so that no test's clock counts the SDK's import
import openai.resources.chat.completions  # noqa: F401
import pytest
import yaml

from resources.llm.base import ModelUnavailableError, SamplingParams
from resources.llm.openai_backend import OpenAIClient, RequestBudgetError
from resources.settings import ConfigError, field_specs, load_settings
from tests.helpers.servers import LoopbackHTTPServer

PARAMS = SamplingParams(max_new_tokens=20)
LABEL = "sim-model|base|full:female:low:nigeria|0"


class SlowEndpoint(LoopbackHTTPServer):
    """A real HTTP/1.1 server on 127.0.0.1 (random port) serving ``GET /v1/models`` and
    ``POST /v1/chat/completions``; ``delays`` maps a prompt (``"/models"`` for the listing) to the
    seconds its successive requests wait before answering (once used up: none). ``requests``
    counts the requests per prompt."""

    def __init__(self, delays: dict[str, list[float]] | None = None):
        self.delays = {k: list(v) for k, v in (delays or {}).items()}
        self.requests: Counter = Counter()
        self.lock = threading.Lock()
        endpoint = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args):  # quiet
                pass

            def _answer(self, key: str, body: bytes) -> None:
                with endpoint.lock:
                    endpoint.requests[key] += 1
                    queue = endpoint.delays.get(key)
                    delay = queue.pop(0) if queue else 0.0
                time.sleep(delay)
                try:
                    self.send_response(200)
                    self.send_header("content-type", "application/json")
                    self.send_header("content-length", str(len(body)))
                    self.end_headers()
                    self.wfile.write(body)
                except (BrokenPipeError, ConnectionResetError):
                    pass  # the client timed out and hung up: that is the point

            def do_GET(self):  # noqa: N802 - http.server's naming
                self._answer("/models", json.dumps({"data": [{"id": "m"}]}).encode())

            def do_POST(self):  # noqa: N802
                prompt = json.loads(self.rfile.read(int(self.headers.get("content-length", 0))))["messages"][-1]
                answer = {
                    "id": "cmpl-1",
                    "object": "chat.completion",
                    "created": 0,
                    "model": "m",
                    "choices": [
                        {
                            "index": 0,
                            "message": {"role": "assistant", "content": f"answer to {prompt['content']}"},
                            "finish_reason": "stop",
                        }
                    ],
                    "usage": {"prompt_tokens": 3, "completion_tokens": 4, "total_tokens": 7},
                }
                self._answer(prompt["content"], json.dumps(answer).encode())

        super().__init__(Handler, "/v1")
        self.server.daemon_threads = True


def _client(url: str, **kw) -> OpenAIClient:
    return OpenAIClient(url, "m", name="sim-model", max_concurrency=2, **kw)


def test_an_attempt_longer_than_the_timeout_is_retried():
    with SlowEndpoint({"p0": [1.0]}) as ep:
        logs: list[str] = []
        out = _client(ep.url, timeout_s=0.25, budget_s=10.0, max_retries=3, log=logs.append).generate_samples(
            ["p0", "p1"], [0, 1], PARAMS, labels=[LABEL, LABEL[:-1] + "1"]
        )
        assert ep.requests["p0"] == 2 and ep.requests["p1"] == 1
    assert [s.text for s in out] == ["answer to p0", "answer to p1"]
    said = [line for line in logs if "no answer on attempt 1" in line]
    assert len(said) == 1 and LABEL in said[0] and "FAIRNESS_LLM_REQUEST_TIMEOUT_S" in said[0], logs
    assert "Timeout" in said[0]  # the SDK's transport named the failure: a read timeout


def test_a_request_whose_retries_all_time_out_names_the_timeout():
    with SlowEndpoint({"p0": [3.0] * 5}) as ep:
        with pytest.raises(ModelUnavailableError) as caught:
            _client(ep.url, timeout_s=0.25, max_retries=1).generate_samples(["p0"], [0], PARAMS, labels=[LABEL])
        assert ep.requests["p0"] == 2
    assert not isinstance(caught.value, RequestBudgetError)  # the retries ran out, not the budget
    msg = str(caught.value)
    assert f"unreachable after 1 retries (sample {LABEL} (seed 0))" in msg
    assert "the last attempt got no answer within FAIRNESS_LLM_REQUEST_TIMEOUT_S=0.25 s" in msg, msg


def test_the_budget_stops_the_retries_within_the_stated_time():
    """Every attempt outlasts the timeout (0.25 s); the backoff waits about 0.5, 1, 2 s: the second
    retry could not end within the budget (1.5 s), so the request fails after two attempts, well
    before its ten retries, naming the sample, the attempts, the time spent and both settings."""
    with SlowEndpoint({"p0": [3.0] * 20}) as ep:
        client = _client(ep.url, timeout_s=0.25, budget_s=1.5, max_retries=10)
        started = time.monotonic()
        with pytest.raises(RequestBudgetError) as caught:
            client.generate_samples(["p0"], [0], PARAMS, labels=[LABEL])
        elapsed = time.monotonic() - started
        attempts = ep.requests["p0"]
    msg = str(caught.value)
    assert isinstance(caught.value, ModelUnavailableError)  # the command line reports it as such, no traceback
    assert 1 <= attempts <= 3 and f"after {attempts} attempt(s)" in msg, (attempts, msg)
    spent = float(re.search(r"attempt\(s\) in ([0-9.]+) s", msg).group(1))
    assert spent <= 1.5 and elapsed < 1.5 + 1.0, (spent, elapsed)
    for part in (
        "sim-model",
        f"POST /chat/completions for sample {LABEL} (seed 0)",
        ep.url,
        "FAIRNESS_LLM_REQUEST_TIMEOUT_S=0.25 s",
        "FAIRNESS_LLM_REQUEST_BUDGET_S=1.5 s",
        "Nothing is stored for this sample",
    ):
        assert part in msg, (part, msg)


def test_the_budget_holds_for_the_endpoint_check_too():
    """``GET /models`` (the check before any generation) retries by its own loop: the same budget
    stops it (waits of 0.5 s: two attempts of 0.25 s fit in 1.2 s, a third does not)."""
    with SlowEndpoint({"/models": [3.0] * 20}) as ep:
        client = _client(ep.url, timeout_s=0.25, budget_s=1.2, max_retries=10)
        started = time.monotonic()
        with pytest.raises(RequestBudgetError, match=r"GET /models to .* given up after \d attempt\(s\)") as caught:
            client.served_models()
        elapsed = time.monotonic() - started
        assert 1 <= ep.requests["/models"] <= 3
    assert elapsed < 1.2 + 1.0 and "FAIRNESS_LLM_REQUEST_BUDGET_S=1.2 s" in str(caught.value)


def test_the_settings_reach_the_client(monkeypatch, tmp_path):
    """FAIRNESS_LLM_REQUEST_TIMEOUT_S and FAIRNESS_LLM_REQUEST_BUDGET_S (floats: read when the code
    location loads) reach the llm resource, and from it the openai client and its endpoint check."""
    from fairness_assets import definitions
    from resources.llm.resource import LLMResource

    monkeypatch.setenv("FAIRNESS_LLM_REQUEST_TIMEOUT_S", "0.5")
    monkeypatch.setenv("FAIRNESS_LLM_REQUEST_BUDGET_S", "4")
    llm = definitions.build_resources(load_settings())["llm"]
    assert llm.request_timeout_s == 0.5 and llm.request_budget_s == 4.0
    assert LLMResource().request_timeout_s == 300.0 and LLMResource().request_budget_s == 1800.0
    assert field_specs()["llm_request_timeout_s"].default == 300.0

    with SlowEndpoint({"/models": [3.0]}) as ep:  # the first listing is slow, the next ones are not
        registry = tmp_path / "models.yaml"
        registry.write_text(
            yaml.safe_dump({"models": {"sim": {"source": "m", "backend": "openai", "base_url": ep.url}}})
        )
        slow = LLMResource(registry_path=str(registry), request_timeout_s=0.25, request_budget_s=0.6)
        with pytest.raises(ModelUnavailableError, match=r"model 'sim': .*FAIRNESS_LLM_REQUEST_BUDGET_S=0.6 s"):
            slow.check("sim")  # one attempt of 0.25 s, then a wait of 0.5 s would pass 0.6 s
        assert ep.requests["/models"] == 1
        client = LLMResource(registry_path=str(registry), request_timeout_s=0.5, request_budget_s=4.0).client("sim")
    assert client.timeout_s == 0.5 and client.budget_s == 4.0


@pytest.mark.parametrize(
    "env, says",
    [
        ({"FAIRNESS_LLM_REQUEST_TIMEOUT_S": "0"}, "FAIRNESS_LLM_REQUEST_TIMEOUT_S='0': Input should be greater than 0"),
        ({"FAIRNESS_LLM_REQUEST_BUDGET_S": "-5"}, "FAIRNESS_LLM_REQUEST_BUDGET_S='-5': Input should be greater than 0"),
        ({"FAIRNESS_LLM_REQUEST_TIMEOUT_S": "soon"}, "FAIRNESS_LLM_REQUEST_TIMEOUT_S='soon': Input should be a valid"),
        ({"FAIRNESS_LLM_REQUEST_BUDGET_S": "inf"}, "FAIRNESS_LLM_REQUEST_BUDGET_S='inf': Input should be a finite"),
        (
            {"FAIRNESS_LLM_REQUEST_TIMEOUT_S": "600", "FAIRNESS_LLM_REQUEST_BUDGET_S": "300"},
            "FAIRNESS_LLM_REQUEST_BUDGET_S (300) must be at least FAIRNESS_LLM_REQUEST_TIMEOUT_S (600)",
        ),
    ],
)
def test_bad_values_name_the_setting_and_the_value(monkeypatch, env, says):
    for name in ("FAIRNESS_LLM_REQUEST_TIMEOUT_S", "FAIRNESS_LLM_REQUEST_BUDGET_S"):
        monkeypatch.delenv(name, raising=False)
    for name, value in env.items():
        monkeypatch.setenv(name, value)
    with pytest.raises(ConfigError) as caught:
        load_settings()
    assert says in str(caught.value), str(caught.value)
