"""Scale-out on Celery for real: a RabbitMQ broker on loopback, a dagster-celery worker process
started here, and the demo partition's whole lineage executed step by step on that worker.

The Dagster instance is on PostgreSQL (deploy/dagster.yaml): the worker and the run process
write to the same instance concurrently, which SQLite instance storage does not support.
"""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
import time
import uuid
from pathlib import Path

import pytest

from tests.helpers.pipeline import DEMO_KEY, DEMO_MODEL, DEMO_RESPONSES, ROOT

pytestmark = pytest.mark.postgres
BROKER = os.environ.get("FAIRNESS_TEST_CELERY_BROKER", "pyamqp://guest:guest@127.0.0.1:5672//")


def _broker_or_skip():
    kombu = pytest.importorskip("kombu", reason="dagster-celery (dev extra) brings kombu")
    try:
        with kombu.Connection(BROKER, connect_timeout=5) as conn:
            conn.ensure_connection(max_retries=1)
            try:  # tasks left by an interrupted earlier run would be executed by our worker
                conn.default_channel.queue_purge("dagster")
            except Exception:  # noqa: BLE001 - the queue does not exist yet
                pass
    except Exception as exc:  # noqa: BLE001
        if os.environ.get("CI"):
            raise RuntimeError(f"the Celery broker {BROKER} is required in CI: {exc}") from exc
        pytest.skip(f"no Celery broker at {BROKER} ({exc}); start RabbitMQ with `rabbitmq-server -detached`")


def test_partitioned_audit_runs_on_a_celery_worker(tmp_path, postgres_databases):
    _broker_or_skip()
    home = tmp_path / "dagster_home"
    home.mkdir()
    shutil.copy(ROOT / "deploy" / "dagster.yaml", home / "dagster.yaml")
    bin_dir = str(Path(sys.executable).parent)
    env = {
        **os.environ,
        "PATH": bin_dir + os.pathsep + os.environ.get("PATH", ""),
        "DAGSTER_HOME": str(home),
        "DAGSTER_PG_URL": postgres_databases(),
        "FAIRNESS_DATABASE_URL": postgres_databases(),
        "FAIRNESS_EXECUTOR": "celery",
        "FAIRNESS_CELERY_BROKER": BROKER,
        "FAIRNESS_CELERY_BACKEND": "rpc://",
        "FAIRNESS_RESPONSES": str(DEMO_RESPONSES),
        "FAIRNESS_HOME": str(tmp_path / "fairness_home"),
    }
    for var in ("FAIRNESS_QS_CORPUS", "FAIRNESS_DESIGN"):
        env.pop(var, None)
    worker_name = f"audit-test-{uuid.uuid4().hex[:6]}"
    log = open(tmp_path / "worker.log", "w")
    worker = subprocess.Popen(
        [
            os.path.join(bin_dir, "dagster-celery"),
            "worker",
            "start",
            "-A",
            "dagster_celery.app",
            "-y",
            str(ROOT / "deploy" / "celery" / "worker.yaml"),
            "-n",
            worker_name,
            "-l",
            "info",
            "--",
            "-c",
            "2",
        ],
        cwd=ROOT,
        env=env,
        stdout=log,
        stderr=subprocess.STDOUT,
        start_new_session=True,
    )
    try:
        deadline = time.time() + 90
        while " ready." not in (tmp_path / "worker.log").read_text():
            assert worker.poll() is None, "celery worker exited:\n" + (tmp_path / "worker.log").read_text()[-3000:]
            assert time.time() < deadline, (
                "celery worker not ready in 90 s:\n" + (tmp_path / "worker.log").read_text()[-3000:]
            )
            time.sleep(1)
        register = subprocess.run(
            [
                sys.executable,
                "-c",
                (
                    "from dagster import DagsterInstance; "
                    f"DagsterInstance.get().add_dynamic_partitions('models', [{DEMO_MODEL!r}])"
                ),
            ],
            env=env,
            capture_output=True,
            text=True,
            timeout=120,
        )
        assert register.returncode == 0, register.stderr
        run = subprocess.run(
            [
                os.path.join(bin_dir, "dagster"),
                "asset",
                "materialize",
                "-m",
                "fairness_assets.definitions",
                "--select",
                "*",
                "--partition",
                DEMO_KEY,
            ],
            cwd=ROOT,
            env=env,
            capture_output=True,
            text=True,
            timeout=600,
        )
        assert run.returncode == 0, run.stdout[-3000:] + run.stderr[-3000:]

        probe = subprocess.run(
            [
                sys.executable,
                "-c",
                (
                    "from dagster import DagsterInstance\n"
                    "i = DagsterInstance.get()\n"
                    "r = i.get_runs(limit=1)[0]\n"
                    "print('STATUS', r.status.value, r.tags.get('dagster/partition'))\n"
                    "for e in i.all_logs(r.run_id):\n"
                    "    d = e.dagster_event\n"
                    "    if d and d.event_type_value == 'STEP_SUCCESS': print('DONE', d.step_key)\n"
                    "    if d and d.event_type_value == 'ENGINE_EVENT' and 'in celery worker' in (d.message or ''):\n"
                    "        print('CELERY', d.step_key, d.event_specific_data.metadata['Celery worker'].value)\n"
                ),
            ],
            env=env,
            capture_output=True,
            text=True,
            timeout=120,
        )
        lines = probe.stdout.splitlines()
        assert f"STATUS SUCCESS {DEMO_KEY}" in lines, probe.stdout + probe.stderr
        done = {line.split()[1] for line in lines if line.startswith("DONE")}
        on_worker = {line.split()[1]: line.split()[2] for line in lines if line.startswith("CELERY")}
        assert {"qs_corpus", "generations", "recommendations", "scores", "audit_drift"} <= done
        assert set(on_worker) == done  # every step ran on the worker ...
        assert all(w.startswith(worker_name + "@") for w in on_worker.values())  # ... the one started here
    finally:
        os.killpg(worker.pid, signal.SIGTERM)
        try:
            worker.wait(timeout=30)
        except subprocess.TimeoutExpired:
            os.killpg(worker.pid, signal.SIGKILL)
        log.close()
