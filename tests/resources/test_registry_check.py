"""`LLMResource.check` says which of local path / Hugging Face cache / Hub / endpoint a model comes
from, and fails before any work, naming the model (issue 11, item 6)."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest
import yaml

from resources.llm.base import ModelUnavailableError
from resources.llm.resource import LLMResource
from tests.helpers.servers import free_port


def _registry(tmp_path: Path, models: dict) -> str:
    path = tmp_path / "models.yaml"
    path.write_text(yaml.safe_dump({"models": models}))
    return str(path)


@pytest.fixture
def hub_env(tmp_path, monkeypatch):
    """An empty private Hugging Face cache, online unless a test sets HF_HUB_OFFLINE."""
    monkeypatch.setenv("HF_HUB_CACHE", str(tmp_path / "hf_cache"))
    monkeypatch.setenv("HF_HOME", str(tmp_path / "hf_home"))
    monkeypatch.delenv("HF_HUB_OFFLINE", raising=False)
    monkeypatch.chdir(tmp_path)
    return tmp_path / "hf_cache"


@pytest.mark.parametrize(
    "source",
    [
        "/nonexistent",
        "/nonexistent/org/tiny",
        "./weights/tiny",
        "../nowhere/tiny",
        "~/no-such-folder-for-fairness-tests/tiny",
    ],
)
def test_a_missing_local_path_fails_naming_the_model(tmp_path, hub_env, source):
    llm = LLMResource(registry_path=_registry(tmp_path, {"org/tiny": {"source": source}}))
    with pytest.raises(ModelUnavailableError) as err:
        llm.check("org/tiny")  # online: a path must never be taken for a Hub id
    text = str(err.value)
    assert "'org/tiny'" in text and "weights not found" in text
    assert f"local path {Path(source).expanduser()}" in text and "the source is a filesystem path" in text


def test_an_existing_local_path_is_used(tmp_path, hub_env):
    weights = tmp_path / "weights"
    weights.mkdir()
    llm = LLMResource(
        registry_path=_registry(tmp_path, {"tiny": {"source": str(weights)}, "rel": {"source": "weights"}})
    )
    assert llm.check("tiny") == f"local path {weights}"
    assert llm.check("rel") == "local path weights"  # relative, exists: a path


def test_a_missing_gguf_file_in_a_local_folder_fails(tmp_path, hub_env):
    (tmp_path / "weights").mkdir()
    llm = LLMResource(
        registry_path=_registry(tmp_path, {"g": {"source": str(tmp_path / "weights"), "gguf_file": "model.Q4.gguf"}})
    )
    with pytest.raises(ModelUnavailableError, match=r"model 'g': gguf_file 'model.Q4.gguf' not found"):
        llm.check("g")


def test_a_hub_id_comes_from_the_cache_else_the_hub(tmp_path, hub_env, monkeypatch):
    llm = LLMResource(registry_path=_registry(tmp_path, {"tiny": {"source": "org/tiny"}}))
    where = llm.check("tiny")
    assert where.startswith("Hugging Face Hub id org/tiny") and "downloaded from the Hub" in where
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    with pytest.raises(
        ModelUnavailableError,
        match=r"model 'tiny': weights not found; tried \['Hugging Face cache "
        r".*models--org--tiny'.*HF_HUB_OFFLINE is set",
    ):
        llm.check("tiny")
    cached = hub_env / "models--org--tiny"
    (cached / "refs").mkdir(parents=True)  # a folder without a downloaded snapshot is not the model
    with pytest.raises(ModelUnavailableError):
        llm.check("tiny")
    (cached / "snapshots" / "abc123").mkdir(parents=True)
    (cached / "snapshots" / "abc123" / "config.json").write_text("{}")
    assert llm.check("tiny") == f"Hugging Face cache {cached}"


def test_generation_stops_before_any_work_naming_the_model(tmp_path, hub_env):
    """A real materialization: the generations step fails at the check, naming the model and the
    path, and nothing is generated or loaded."""
    from resources import database as D
    from tests.helpers.engine import materialize

    url = f"sqlite:///{tmp_path / 'r.db'}"
    registry = _registry(tmp_path, {"tiny": {"source": "/nonexistent"}})
    result = materialize(url, Path(registry), runs=1, model="tiny")
    assert not result.success
    failure = [e for e in result.all_events if e.is_step_failure][0]
    error = failure.step_failure_data.error.to_string()
    assert "ModelUnavailableError" in error and "model 'tiny': weights not found" in error and "/nonexistent" in error
    assert D.ResultsDatabase(url=url).count(D.Generation) == 0


# ----------------------------------------------------------------------------- OpenAI-compatible endpoints
class ModelsEndpoint:
    """An endpoint on loopback whose GET /models lists ``served``."""

    def __init__(self, served: list[str]):
        class Handler(BaseHTTPRequestHandler):
            def do_GET(self):  # noqa: N802
                data = json.dumps({"object": "list", "data": [{"id": m, "object": "model"} for m in served]}).encode()
                self.send_response(200 if self.path == "/v1/models" else 404)
                self.send_header("content-length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def log_message(self, *args):
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}/v1"
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.server.shutdown()
        self.server.server_close()


def test_an_endpoint_that_does_not_serve_the_model_fails_the_check(tmp_path):
    with ModelsEndpoint(["meta-llama/Llama-3.1-8B-Instruct", "other"]) as endpoint:
        llm = LLMResource(
            registry_path=_registry(
                tmp_path,
                {
                    "gemma": {"source": "google/gemma-7b-it", "backend": "openai", "base_url": endpoint.url},
                    "llama": {
                        "source": "meta-llama/Llama-3.1-8B-Instruct",
                        "backend": "openai",
                        "base_url": endpoint.url,
                    },
                },
            )
        )
        with pytest.raises(ModelUnavailableError) as err:
            llm.check("gemma")
        assert "model 'gemma'" in str(err.value) and "does not serve 'google/gemma-7b-it'" in str(err.value)
        assert "it serves: meta-llama/Llama-3.1-8B-Instruct, other" in str(err.value)
        assert llm.check("llama") == f"endpoint {endpoint.url} serves meta-llama/Llama-3.1-8B-Instruct"


def test_an_endpoint_without_a_models_listing_fails_naming_the_model(tmp_path):
    with ModelsEndpoint([]) as endpoint:
        llm = LLMResource(
            registry_path=_registry(
                tmp_path, {"m": {"source": "m", "backend": "openai", "base_url": endpoint.url + "/nothing-here"}}
            )
        )
        with pytest.raises(
            ModelUnavailableError, match=r"^model 'm': endpoint .*/nothing-here did not list the models .*HTTP 404"
        ):
            llm.check("m")
        llm = LLMResource(
            registry_path=_registry(tmp_path, {"m": {"source": "m", "backend": "openai", "base_url": endpoint.url}})
        )
        with pytest.raises(ModelUnavailableError, match=r"does not serve 'm'.*it serves: no model"):
            llm.check("m")


@pytest.mark.slow
def test_check_against_a_real_transformers_serve_endpoint(tmp_path):
    """`transformers serve` lists the model it was started with; a registry entry naming another
    model fails the check before any generation."""
    pytest.importorskip("torch", reason="the llm extra (torch, transformers) is not installed")
    pytest.importorskip("fastapi", reason="`transformers serve` needs transformers[serving] (dev extra)")
    from tests.helpers.tiny_model import build_tiny_model

    tiny = build_tiny_model(tmp_path / "tiny")
    port = free_port()
    base = f"http://127.0.0.1:{port}/v1"
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
        llm = LLMResource(
            registry_path=_registry(
                tmp_path,
                {
                    "served": {"source": str(tiny), "backend": "openai", "base_url": base},
                    "not-served": {"source": "org/not-served", "backend": "openai", "base_url": base},
                },
            )
        )
        deadline = time.time() + 120
        while True:
            try:
                where = llm.check("served")
                break
            except ModelUnavailableError as exc:
                if "unreachable" not in str(exc) or time.time() > deadline:
                    raise
                time.sleep(1)
        assert where == f"endpoint {base} serves {tiny}"
        with pytest.raises(ModelUnavailableError) as err:
            llm.check("not-served")
        assert "model 'not-served'" in str(err.value) and "does not serve 'org/not-served'" in str(err.value)
        assert str(tiny) in str(err.value)
    finally:
        os.killpg(server.pid, signal.SIGTERM)
        server.wait(timeout=30)
