"""The OpenAI-compatible backend against a loopback serving-engine simulator
(benchmarks/serving_simulator.py, a real HTTP server): hundreds of requests in flight, answers
streamed back as they finish, Retry-After honoured, a request-rate limit, per-sample seeds, and
a failure that keeps what finished before it."""

from __future__ import annotations

import subprocess
import sys
import time
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "benchmarks"))

from serving_simulator import ServingSimulator, answer_for  # noqa: E402

from resources.llm.base import SamplingParams  # noqa: E402
from resources.llm.openai_backend import OpenAIClient  # noqa: E402

PARAMS = SamplingParams(max_new_tokens=300)


def _client(sim, **kw) -> OpenAIClient:
    return OpenAIClient(sim.url, "sim-model", name="sim", **kw)


@pytest.mark.slow
def test_hundreds_in_flight_and_every_answer_in_its_place():
    # each request lives 1.2-3 s, longer than the client takes to start hundreds of them on a loaded machine
    with ServingSimulator(capacity_tps=400_000, per_request_tps=100, prefill_s=0.01) as sim:
        seeds = list(range(5000, 5400))
        finished_batches = list(_client(sim).stream_samples([f"p{s}" for s in seeds], seeds, PARAMS))
        assert sim.stats.peak_in_flight >= 200  # default concurrency 384: the engine is kept busy
        stats = sim.stats
        # the clock's decoded-token integral is every answer's tokens, no more (a job stops at its length)
        assert stats.decoded_tokens == pytest.approx(stats.completion_tokens, rel=1e-9)
        assert 0 < stats.decoded_at_last_request < stats.decoded_tokens  # the drain came after the last request
        assert 0 < sim.steady_tps() <= 400_000 * 1.01
    pairs = [p for batch in finished_batches for p in batch]
    assert sorted(i for i, _ in pairs) == list(range(400))
    assert len(finished_batches) > 1  # handed back as they finish, not all at the end
    for i, sample in pairs:
        assert sample.text == answer_for(seeds[i], sample.output_tokens)  # the sample's own seed was sent
        assert 120 <= sample.output_tokens <= 300 and sample.prompt_tokens == 1


def test_retry_after_is_honoured_and_nothing_is_lost():
    with ServingSimulator(
        capacity_tps=200_000, per_request_tps=5_000, prefill_s=0.0, fail_every=4, retry_after_s=0.05
    ) as sim:
        logs: list[str] = []
        out = _client(sim, log=logs.append).generate_samples([f"p{i}" for i in range(40)], list(range(40)), PARAMS)
        assert sim.stats.rejected >= 10 and sim.stats.requests == 40
    assert all(s is not None and s.text for s in out)
    assert any("HTTP 429" in line for line in logs)


def test_request_rate_limit():
    with ServingSimulator(capacity_tps=1_000_000, per_request_tps=100_000, prefill_s=0.0) as sim:
        t0 = time.perf_counter()
        _client(sim, requests_per_s=40).generate_samples([f"p{i}" for i in range(20)], list(range(20)), PARAMS)
        assert time.perf_counter() - t0 >= 19 / 40 * 0.95


def test_a_failed_request_stops_the_stream_after_handing_back_what_finished():
    with ServingSimulator(
        capacity_tps=1_000_000, per_request_tps=20_000, prefill_s=0.0, fail_every=30, fail_status=400
    ) as sim:  # 400: not retried
        got = []
        with pytest.raises(RuntimeError, match="HTTP 400"):
            for batch in _client(sim, max_concurrency=4).stream_samples(
                [f"p{i}" for i in range(200)], list(range(200)), PARAMS
            ):
                got.extend(batch)
    assert 20 <= len(got) < 200  # what finished before the failure was handed back


@pytest.mark.slow
def test_serving_benchmark_small_variant():
    proc = subprocess.run(
        [
            sys.executable,
            str(ROOT / "benchmarks" / "serving_throughput.py"),
            "--small",
            "--no-write",
            "--max-concurrency",
            "16",
        ],
        capture_output=True,
        text=True,
        timeout=600,
        cwd=ROOT,
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    import json

    r = json.loads(proc.stdout[proc.stdout.index("{\n") :])
    assert r["asset_rows"] == r["asset_requests"] == 360 and r["previous_requests"] == 48
    assert r["asset_peak_in_flight"] > 64 and r["ratio"] > 1  # far more in flight than the previous 8
    assert r["asset_cost_kind"] == "endpoint" and r["asset_request_s"] > 0  # request-seconds stored per partition
    # the simulator ran in its own process (its figures read over /_sim/stats) and the extra setting reached the client
    assert r["simulator"] == "a child process"
    # 384 may be in flight: where all 360 were at once nothing was left to send after the burst and the share is
    # None; on a busy machine the first answers come back before the last requests leave, and it is measured
    all_at_once = r["asset_peak_in_flight"] >= r["asset_requests"]
    assert (r["asset_steady_fraction"] is None) == all_at_once, r
    (extra,) = r["settings"]
    assert extra["max_concurrency"] == 16 and extra["rows"] == 360 and extra["peak_in_flight"] <= 16
    assert 0 < extra["steady"] <= 1.01  # 16 in flight: requests were left to send, the share is measured
    assert r["default_concurrency"] == 384


def test_concurrency_and_rate_limit_come_from_the_environment(monkeypatch):
    """FAIRNESS_LLM_MAX_CONCURRENCY and FAIRNESS_LLM_REQUESTS_PER_MINUTE reach the client of an
    openai-backend model through the code location's resources."""
    import dagster as dg

    monkeypatch.setenv("FAIRNESS_LLM_MAX_CONCURRENCY", "32")
    monkeypatch.setenv("FAIRNESS_LLM_REQUESTS_PER_MINUTE", "600")
    from fairness_assets import definitions
    from resources.settings import load_settings

    llm = definitions.build_resources(load_settings())["llm"]  # the environment read when called
    with dg.build_resources({"llm": llm}) as built:  # the EnvVars resolved as at run time
        assert built.llm.max_concurrency == 32 and built.llm.requests_per_minute == 600
    from resources.llm.resource import LLMResource

    with ServingSimulator(models=("sim-model",)) as sim:
        import yaml

        registry = Path(__import__("tempfile").mkdtemp()) / "models.yaml"
        registry.write_text(
            yaml.safe_dump({"models": {"sim": {"source": "sim-model", "backend": "openai", "base_url": sim.url}}})
        )
        client = LLMResource(registry_path=str(registry), max_concurrency=32, requests_per_minute=600).client("sim")
    assert client.max_concurrency == 32 and client.requests_per_s == 10.0
