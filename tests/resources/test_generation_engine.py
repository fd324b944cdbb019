"""The generation engine with a tiny random model: seeds, resume after a crash, registry errors,
the OpenAI-compatible backend against a real local server."""

import os
import signal
import socket
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import pytest

torch = pytest.importorskip("torch", reason="the llm extra (torch, transformers) is not installed")

from fairness_assets.core.generation.samples import sample_seed  # noqa: E402
from resources import database as D  # noqa: E402
from resources.llm.base import ModelUnavailableError, SamplingParams  # noqa: E402
from resources.llm.openai_backend import OpenAIClient  # noqa: E402
from resources.llm.resource import LLMResource  # noqa: E402
from resources.llm.transformers_backend import TransformersClient  # noqa: E402
from tests.helpers.engine import materialize, write_registry  # noqa: E402
from tests.helpers.tiny_model import build_tiny_model  # noqa: E402

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def tiny(tmp_path_factory):
    return build_tiny_model(tmp_path_factory.mktemp("tiny") / "model")


def test_same_seed_same_text(tiny):
    client = TransformersClient.load(tiny, device="cpu", batch_size=3)
    params = SamplingParams(temperature=0.9, top_p=0.95, max_new_tokens=12)
    a = client.generate_samples(["hello", "world", "again"], [1, 2, 3], params)
    b = client.generate_samples(["hello", "world", "again"], [1, 2, 3], params)
    assert [s.text for s in a] == [s.text for s in b]
    assert all(s.output_tokens is not None and s.prompt_tokens > 0 for s in a)


@pytest.mark.slow
def test_engine_generates_the_grid_with_seeds(tmp_path, tiny):
    registry = write_registry(tmp_path, tiny)
    url = f"sqlite:///{tmp_path / 'r.db'}"
    result = materialize(url, registry, runs=2)
    assert result.success
    rows = D.ResultsDatabase(url=url).read_rows(D.Generation, ["tiny|base"])
    assert len(rows) == 12 * 2 and rows["response_id"].is_unique
    r = rows.iloc[0]
    assert r["seed"] == sample_seed("tiny", "base", r["profile_id"], r["run"])
    assert r["backend"] == "transformers" and r["model_source"] == str(tiny)
    assert r["prompt"].endswith('"university", "program" and "country".') and r["output_tokens"] >= 0
    assert '"temperature": 0.75' in r["decoding_json"] and '"max_new_tokens": 8' in r["decoding_json"]
    # the cost of the partition: stored, and shown on the asset's page
    cost = D.ResultsDatabase(url=url).read_rows(D.GenerationCost, ["tiny|base"])
    assert len(cost) == 1 and cost["samples"].iloc[0] == 24 and cost["compute_kind"].iloc[0] == "cpu"
    assert cost["output_tokens"].iloc[0] == rows["output_tokens"].sum() and cost["prompt_tokens"].iloc[0] > 0
    assert cost["compute_s"].iloc[0] == cost["wall_s"].iloc[0] > 0 and cost["output_tokens_per_s"].iloc[0] > 0
    meta = result.asset_materializations_for_node("generations")[0].metadata
    assert "output_tokens_per_s" in meta["generation_cost"].value
    # a rerun generates nothing new
    assert materialize(url, registry, runs=2).success
    assert len(D.ResultsDatabase(url=url).read_rows(D.Generation, ["tiny|base"])) == 24


@pytest.mark.slow
def test_crash_midway_then_resume_without_duplicates(tmp_path, tiny):
    registry = write_registry(tmp_path, tiny)
    db = tmp_path / "r.db"
    url = f"sqlite:///{db}"
    # 12 profiles x 12 runs = 144 answers: long enough that the kill lands midway also on a busy machine
    # (with 48 the whole grid was once stored between two looks: issue 32.4's loaded runs)
    runs = 12
    total = 12 * runs
    cmd = [sys.executable, "-m", "tests.helpers.engine", url, str(registry), str(runs)]
    proc = subprocess.Popen(cmd, cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True)
    stored = 0
    deadline = time.time() + 240
    while time.time() < deadline and proc.poll() is None:
        try:
            with sqlite3.connect(db) as conn:
                stored = conn.execute("select count(*) from generation").fetchone()[0]
        except sqlite3.OperationalError:
            stored = 0
        if stored >= 5:
            os.killpg(proc.pid, signal.SIGKILL)  # a crash, not a clean stop
            break
        time.sleep(0.05)
    proc.wait(timeout=30)
    with sqlite3.connect(db) as conn:
        before = dict(conn.execute("select response_id, response from generation").fetchall())
    assert 5 <= len(before) < total, f"the run was not killed midway ({len(before)} of {total} rows)"
    assert subprocess.run(cmd, cwd=ROOT, capture_output=True, timeout=600).returncode == 0
    with sqlite3.connect(db) as conn:
        after = conn.execute(
            "select response_id, response from generation where partition_key = 'tiny|base'"
        ).fetchall()
    ids = [r[0] for r in after]
    assert len(ids) == total and len(set(ids)) == total
    assert all(dict(after)[k] == v for k, v in before.items())  # nothing regenerated


def test_registry_errors_name_the_model_and_the_places_tried(tmp_path, tiny):
    registry = write_registry(
        tmp_path,
        tiny,
        {
            "gone": {"source": str(tmp_path / "nowhere"), "backend": "transformers"},
            "endpoint": {"source": "m", "backend": "openai", "base_url": "http://127.0.0.1:9/v1"},
        },
    )
    llm = LLMResource(registry_path=str(registry))
    with pytest.raises(ModelUnavailableError, match="'nope' is not in the registry"):
        llm.check("nope")
    os.environ["HF_HUB_OFFLINE"] = "1"
    try:
        with pytest.raises(
            ModelUnavailableError,
            match=r"'gone': weights not found; tried \['local path .*nowhere', 'Hugging Face cache",
        ):
            llm.check("gone")
    finally:
        del os.environ["HF_HUB_OFFLINE"]
    with pytest.raises(ModelUnavailableError, match="endpoint http://127.0.0.1:9/v1 unreachable"):
        llm.check("endpoint")
    # the engine refuses before generating anything
    url = f"sqlite:///{tmp_path / 'r.db'}"
    result = materialize(url, registry, model="endpoint")
    assert not result.success
    assert D.ResultsDatabase(url=url).count(D.Generation) == 0


def _free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.mark.slow
def test_openai_backend_against_a_real_local_server(tmp_path, tiny):
    pytest.importorskip("fastapi", reason="`transformers serve` needs transformers[serving] (dev extra)")
    port = _free_port()
    server = subprocess.Popen(
        [
            str(Path(sys.executable).parent / "transformers"),
            "serve",
            str(tiny),
            "--host",
            "127.0.0.1",
            "--port",
            str(port),
        ],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,
    )
    try:
        client = OpenAIClient(
            f"http://127.0.0.1:{port}/v1", str(tiny), name="tiny-http", max_concurrency=3, max_retries=8
        )
        deadline = time.time() + 120
        while True:
            try:
                assert str(tiny) in client.check()
                break
            except ModelUnavailableError:
                if time.time() > deadline:
                    raise
                time.sleep(1)
        samples = client.generate_samples(
            ["hello", "world", "third", "fourth"], [1, 2, 3, 4], SamplingParams(temperature=0.7, max_new_tokens=6)
        )
        assert len(samples) == 4 and all(isinstance(s.text, str) for s in samples)
        assert all(s.output_tokens == 6 or s.output_tokens is None or s.output_tokens <= 6 for s in samples)
        registry = write_registry(
            tmp_path,
            tiny,
            {"tiny-http": {"source": str(tiny), "backend": "openai", "base_url": f"http://127.0.0.1:{port}/v1"}},
        )
        url = f"sqlite:///{tmp_path / 'r.db'}"
        assert materialize(url, registry, runs=1, model="tiny-http").success
        rows = D.ResultsDatabase(url=url).read_rows(D.Generation, ["tiny-http|base"])
        assert len(rows) == 12 and set(rows["backend"]) == {"openai"}
    finally:
        os.killpg(server.pid, signal.SIGTERM)
        server.wait(timeout=30)


@pytest.mark.slow
def test_openai_backend_against_transformers_serve_with_the_built_in_model(tmp_path):
    """The streaming OpenAI-compatible engine against a real server on loopback serving the
    built-in model (`transformers serve`): the generations asset stores real answers."""
    pytest.importorskip("fastapi", reason="`transformers serve` needs transformers[serving] (dev extra)")
    from resources.llm.builtin import builtin_checkpoint
    from resources.settings import load_model_registry

    spec = load_model_registry()["qwen2.5-0.5b-demo"]
    checkpoint = builtin_checkpoint("qwen2.5-0.5b-demo", list(spec.parts), spec.sha256, spec.gguf_file)
    port = _free_port()
    server = subprocess.Popen(
        [
            str(Path(sys.executable).parent / "transformers"),
            "serve",
            str(checkpoint),
            "--host",
            "127.0.0.1",
            "--port",
            str(port),
        ],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,
    )
    try:
        base_url = f"http://127.0.0.1:{port}/v1"
        client = OpenAIClient(base_url, str(checkpoint), name="builtin-http")
        deadline = time.time() + 180
        while True:
            try:
                assert str(checkpoint) in client.check()
                break
            except ModelUnavailableError:
                assert time.time() < deadline, "transformers serve did not list the model in 180 s"
                time.sleep(2)
        registry = write_registry(
            tmp_path,
            checkpoint,
            {"builtin-http": {"source": str(checkpoint), "backend": "openai", "base_url": base_url}},
        )
        url = f"sqlite:///{tmp_path / 'r.db'}"
        result = materialize(url, registry, runs=1, model="builtin-http", max_new_tokens=12)
        assert result.success
        rows = D.ResultsDatabase(url=url).read_rows(D.Generation, ["builtin-http|base"])
        assert len(rows) == 12 and set(rows["backend"]) == {"openai"} and rows["response_id"].is_unique
        assert (rows["response"].str.len() > 0).all() and (rows["output_tokens"] <= 12).all()
        cost = D.ResultsDatabase(url=url).read_rows(D.GenerationCost, ["builtin-http|base"])
        assert cost["compute_kind"].tolist() == ["endpoint"] and cost["compute_s"].iloc[0] > 0
    finally:
        os.killpg(server.pid, signal.SIGTERM)
        server.wait(timeout=30)


def test_a_backend_that_returns_fewer_samples_fails_the_partition_and_keeps_what_it_returned(tmp_path):
    """No silently short partition: the answers that came back are committed, the step fails
    naming how many are missing, and a rerun generates only those."""
    from types import SimpleNamespace

    import dagster as dg
    import pandas as pd

    from fairness_assets.defs.generation.assets import PartitionJob, _run_job
    from resources.llm.base import Sample

    class ShortBackend:
        backend, model_source, model_revision, streams_requests = "openai", "http://x/v1 (m)", None, True

        def stream_samples(self, prompts, seeds, params, labels=None):
            yield [(i, Sample(f"answer {i}", 3, 5, 0.1)) for i in range(len(prompts) - 2)]  # two never come back

    plan = pd.DataFrame(
        {
            "response_id": [f"m|base|p{i}|0" for i in range(6)],
            "prompt": ["q"] * 6,
            "seed": range(6),
            "partition_key": "m|base",
            "model": "m",
            "template": "base",
            "template_hash": "h",
            "profile_id": [f"p{i}" for i in range(6)],
            "run": 0,
        }
    )
    database = D.ResultsDatabase(url=f"sqlite:///{tmp_path / 'r.db'}")
    context = SimpleNamespace(
        log=SimpleNamespace(info=lambda m: None, warning=lambda m: None),
        run=SimpleNamespace(run_id="run-1"),
        instance=None,
    )
    from resources.partition_lease import claim

    claim(database.engine(), ["m|base"], "run-1")  # as the asset does before it generates: commits are fenced
    job = PartitionJob("m|base", plan, "a1", "{}", "prov-1")
    with pytest.raises(dg.Failure, match=r"returned 4 of 6 samples \(2 missing\)"):
        _run_job(context, database, [("m", "base")], ShortBackend(), job, SamplingParams(), 0)
    stored = database.read_rows(D.Generation, ["m|base"])
    assert sorted(stored["response_id"]) == sorted(plan["response_id"][:4])
    assert set(stored["provenance_id"]) == {"prov-1"}
