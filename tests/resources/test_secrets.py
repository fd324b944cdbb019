"""No secret in errors, logs or storage (issue 11, item 1).

The database password of a URL SQLAlchemy cannot parse, and an API key echoed back by an
OpenAI-compatible endpoint's error body, must not reach the printed output, the Dagster
instance's storage (event log, compute logs), the results database or the reports.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from http.server import BaseHTTPRequestHandler
from pathlib import Path

import dagster as dg
import pytest

from fairness_assets.local import OFFLINE_INSTANCE_YAML
from resources import database as D
from resources.database.connect import _with_driver
from resources.secrets import mask_secrets, redact
from tests.helpers.servers import LoopbackHTTPServer

ROOT = Path(__file__).resolve().parents[2]
SECRET = "S3cretPw"
BAD_URL = f"postgresql://user:{SECRET}@127.0.0.1:54x2/db"  # the port does not parse
API_KEY = "sk-test-Kq7Zp2Vb9Xw4Lm1N"


# ----------------------------------------------------------------------------- redact / mask_secrets
@pytest.mark.parametrize(
    "text, expected",
    [
        (BAD_URL, "postgresql://user:***@127.0.0.1:54x2/db"),
        (
            "postgresql+psycopg2://user:S3cretPw@db.example:5432/audit",
            "postgresql+psycopg2://user:***@db.example:5432/audit",
        ),
        ("postgresql//user:S3cretPw@host/db", "postgresql//user:***@host/db"),  # broken scheme
        ("postgresql://user:S3c@ret/Pw@host:5432/db", "postgresql://user:***@host:5432/db"),  # '@' and '/' in it
        ("redis://:S3cretPw@host", "redis://:***@host"),
        ("postgresql://host/db?sslmode=require&password=S3cretPw", "postgresql://host/db?sslmode=require&password=***"),
        ("user:S3cretPw@host", "user:***@host"),
    ],
)
def test_redact_masks_the_password_of_anything_url_shaped(text, expected):
    assert redact(text) == expected
    assert redact(f"could not connect to '{text}': refused") == f"could not connect to '{expected}': refused"
    assert D.redact(text) == expected  # the database module delegates


@pytest.mark.parametrize(
    "text",
    [
        "sqlite:////tmp/results.db",
        "postgresql://postgres@127.0.0.1:5432/db",
        "http://127.0.0.1:8000/v1",
        "no url here: 12:30",
    ],
)
def test_redact_leaves_text_without_a_password_alone(text):
    assert redact(text) == text


def test_mask_secrets_masks_every_form_of_the_key():
    key = "sk-a/b+c=="
    text = f"Bearer {key} {json.dumps(key)} sk-a%2Fb%2Bc%3D%3D"
    assert mask_secrets(text, [key, "", None]) == 'Bearer *** "***" ***'
    assert mask_secrets("nothing to hide", [""]) == "nothing to hide"


def test_unusable_database_error_carries_no_password():
    with pytest.raises(ConnectionError) as err:
        D.ResultsDatabase(url=BAD_URL).engine()
    assert SECRET not in str(err.value) and "user:***@127.0.0.1:54x2/db" in str(err.value)
    assert err.value.__cause__ is None  # the cause's text could quote the raw URL


# ----------------------------------------------------------------------------- a real run: CLI + instance storage
def _grep_tree(folder: Path, secret: str) -> list[str]:
    hits = []
    for path in folder.rglob("*"):
        if path.is_file() and secret.encode() in path.read_bytes():
            hits.append(str(path))
    return hits


def _cli(args, home: Path, **env):
    dagster_home = home / "dagster_home"
    dagster_home.mkdir(parents=True, exist_ok=True)
    (dagster_home / "dagster.yaml").write_text(OFFLINE_INSTANCE_YAML)
    full_env = {
        k: v
        for k, v in os.environ.items()
        if k not in ("FAIRNESS_DATABASE_URL", "FAIRNESS_RESPONSES", "FAIRNESS_DESIGN", "FAIRNESS_QS_CORPUS")
    }
    full_env.update(DAGSTER_HOME=str(dagster_home), FAIRNESS_HOME=str(home / "fairness_home"), **env)
    return subprocess.run(
        [sys.executable, "-m", "fairness_assets.cli", *args],
        cwd=ROOT,
        env=full_env,
        capture_output=True,
        text=True,
        timeout=600,
    )


def test_unparseable_database_url_is_not_printed_or_stored(tmp_path):
    out = _cli(["run", "reference_data"], tmp_path, FAIRNESS_DATABASE_URL=BAD_URL)
    assert out.returncode == 1, out.stdout[-2000:] + out.stderr[-2000:]
    printed = out.stdout + out.stderr
    assert SECRET not in printed
    assert "user:***@127.0.0.1:54x2/db" in printed  # the database is still named
    # the event log, the run storage and the compute logs of the instance
    stored = list((tmp_path / "dagster_home").rglob("*"))
    assert any("compute_logs" in str(p) for p in stored), "the run wrote no compute log to check"
    assert _grep_tree(tmp_path, SECRET) == []


@pytest.mark.slow
@pytest.mark.postgres
def test_database_password_not_in_output_instance_database_or_reports(tmp_path, postgres_url):
    """A whole audit (responses file, no model) on PostgreSQL with a password in the URL: the
    password is in none of the places a user or an attacker could read."""
    sa = pytest.importorskip("sqlalchemy")
    url = sa.engine.make_url(postgres_url).set(password=SECRET).render_as_string(hide_password=False)
    out = _cli(
        ["demo"],
        tmp_path,
        FAIRNESS_DATABASE_URL=url,
        FAIRNESS_RESPONSES=str(ROOT / "data" / "examples" / "demo_responses.jsonl"),
    )
    assert out.returncode == 0, out.stdout[-3000:] + out.stderr[-3000:]
    assert SECRET not in out.stdout + out.stderr
    assert "results database: postgresql://" in out.stdout and ":***@" in out.stdout
    assert list((tmp_path / "fairness_home" / "reports").rglob("report.html"))
    assert _grep_tree(tmp_path, SECRET) == []
    engine = sa.create_engine(_with_driver(postgres_url))
    with engine.connect() as conn:
        tables = [t for t in sa.inspect(conn).get_table_names()]
        assert "generation" in tables
        for table in tables:
            for row in conn.execute(sa.text(f'SELECT * FROM "{table}"')):
                assert SECRET not in repr(tuple(row)), f"{table} stores the database password"
    engine.dispose()


# ----------------------------------------------------------------------------- the API key of an OpenAI endpoint
class EchoingEndpoint(LoopbackHTTPServer):
    """An OpenAI-compatible endpoint on loopback that lists model ``m`` and answers every chat
    request with ``status`` and a body echoing the request's Authorization header (as some
    proxies do), after padding that puts the key across character 300, where the error text is cut."""

    def __init__(self, status: int, models_status: int = 200):
        outer = self
        self.requests = 0

        class Handler(BaseHTTPRequestHandler):
            def _answer(self, status, body: dict):
                data = json.dumps(body).encode()
                self.send_response(status)
                self.send_header("content-type", "application/json")
                self.send_header("content-length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def do_GET(self):  # noqa: N802
                if models_status == 200:
                    self._answer(200, {"object": "list", "data": [{"id": "m", "object": "model"}]})
                else:
                    self._answer(models_status, {"error": f"bad credentials: {self.headers.get('authorization')}"})

            def do_POST(self):  # noqa: N802
                outer.requests += 1
                self.rfile.read(int(self.headers.get("content-length") or 0))
                self._answer(status, {"error": {"message": "x" * 250 + f" got {self.headers.get('authorization')}"}})

            def log_message(self, *args):
                pass

        super().__init__(Handler, "/v1")


def _no_key(text: str) -> bool:
    return API_KEY not in text and API_KEY[:10] not in text


@pytest.mark.parametrize("status", [401, 500])
def test_api_key_echoed_by_an_error_body_is_not_raised_or_logged(status):
    from resources.llm.base import SamplingParams
    from resources.llm.openai_backend import OpenAIClient

    logs: list[str] = []
    with EchoingEndpoint(status) as endpoint:
        client = OpenAIClient(
            endpoint.url, "m", name="echo", api_key=API_KEY, max_retries=1, max_concurrency=1, log=logs.append
        )
        with pytest.raises(RuntimeError) as err:
            client.generate_samples(["hello"], [1], SamplingParams(max_new_tokens=4))
    text = str(err.value)
    assert f"HTTP {status}" in text and "got Bearer ***" in text  # the body is still shown, masked
    assert _no_key(text) and all(_no_key(m) for m in logs)
    if status == 500:
        assert logs and "HTTP 500" in logs[0]  # retried once, logged without the key


def test_api_key_in_a_models_listing_error_is_masked():
    from resources.llm.base import ModelUnavailableError
    from resources.llm.openai_backend import OpenAIClient

    with EchoingEndpoint(200, models_status=401) as endpoint:
        with pytest.raises(ModelUnavailableError) as err:
            OpenAIClient(endpoint.url, "m", name="echo", api_key=API_KEY, max_retries=0).served_models()
    assert "did not list the models" in str(err.value) and _no_key(str(err.value))


def test_api_key_not_in_the_dagster_event_log_or_compute_logs(tmp_path, monkeypatch):
    """A real materialization of the generations asset against the endpoint: the failure it
    records (event log, compute logs, on disk) holds no piece of the key."""
    import yaml

    from fairness_assets.defs.generation import assets as gen
    from fairness_assets.defs.partitions import MODEL_PARTITIONS
    from fairness_assets.defs.reference import assets as ref
    from resources.llm.resource import LLMResource
    from resources.settings import AuditGridResource, GenerationSourceResource, ReferenceDataResource

    monkeypatch.setenv("FAIRNESS_TEST_LLM_KEY", API_KEY)
    with EchoingEndpoint(401) as endpoint:
        registry = tmp_path / "models.yaml"
        registry.write_text(
            yaml.safe_dump({"models": {"echo": {"source": "m", "backend": "openai", "base_url": endpoint.url}}})
        )
        home = tmp_path / "dagster_home"
        home.mkdir()
        database = D.ResultsDatabase(url=f"sqlite:///{tmp_path / 'results.db'}")
        with dg.instance_for_test(temp_dir=str(home)) as instance:
            instance.add_dynamic_partitions(MODEL_PARTITIONS.name, ["echo"])
            result = dg.materialize(
                [ref.profiles, ref.prompts, gen.generations],
                instance=instance,
                partition_key="echo|base",
                raise_on_error=False,
                resources={
                    "database": database,
                    "results_io": D.SQLResultsIOManager(database=database),
                    "reference": ReferenceDataResource(),
                    "audit_grid": AuditGridResource(
                        design="demo", models=["echo"], runs=1, model_registry_path=str(registry)
                    ),
                    "generation_source": GenerationSourceResource(max_new_tokens=4),
                    # as in definitions.py: the key reaches the resource through an EnvVar
                    "llm": LLMResource(
                        registry_path=str(registry), api_key=dg.EnvVar("FAIRNESS_TEST_LLM_KEY"), max_concurrency=2
                    ),
                },
            )
            assert not result.success and endpoint.requests > 0
            failures = [
                e for e in instance.all_logs(result.run_id) if e.dagster_event and e.dagster_event.is_step_failure
            ]
            assert failures and "HTTP 401" in str(failures[0].dagster_event.step_failure_data.error.to_string())
            for record in instance.all_logs(result.run_id):
                assert _no_key(str(record)), record
    assert _grep_tree(tmp_path, API_KEY) == [] and _grep_tree(tmp_path, API_KEY[:10]) == []
