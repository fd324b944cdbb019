"""A database password holding '@' on the command line (issue 19, item 7): `fairness-audit run`
on a real instance folder with such a URL prints, stores and logs no piece of the password."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import dagster as dg
import pytest

from fairness_assets.local import OFFLINE_INSTANCE_YAML

ROOT = Path(__file__).resolve().parents[2]
URL = "postgresql://u:Super@Secret99@127.0.0.1:1/db"
PIECES = ["Secret99", "Super@"]


def _files_holding(folder: Path) -> list[str]:
    hits = []
    for path in folder.rglob("*"):
        if path.is_file():
            data = path.read_bytes()
            hits += [f"{path}: {p}" for p in PIECES if p.encode() in data]
    return hits


@pytest.mark.slow
def test_run_with_an_at_sign_in_the_password_stores_no_piece_of_it(tmp_path, monkeypatch):
    home = tmp_path / "dagster_home"
    home.mkdir()
    (home / "dagster.yaml").write_text(OFFLINE_INSTANCE_YAML)
    env = {
        k: v for k, v in os.environ.items() if k not in ("FAIRNESS_RESPONSES", "FAIRNESS_DESIGN", "FAIRNESS_QS_CORPUS")
    }
    env.update(DAGSTER_HOME=str(home), FAIRNESS_HOME=str(tmp_path / "fairness_home"), FAIRNESS_DATABASE_URL=URL)
    out = subprocess.run(
        [sys.executable, "-m", "fairness_assets.cli", "run", "reference_data"],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert out.returncode == 1, out.stdout[-3000:] + out.stderr[-3000:]
    printed = out.stdout + out.stderr
    assert "postgresql://u:***@127.0.0.1:1/db is not usable" in printed  # the database is still named
    assert "Connection refused" in printed  # the driver got the host meant, not 'Secret99@127.0.0.1'
    assert not [p for p in PIECES if p in printed], printed[-3000:]
    # the instance's run storage and event log, read through Dagster
    monkeypatch.setenv("DAGSTER_HOME", str(home))
    instance = dg.DagsterInstance.get()
    try:
        runs = instance.get_runs()
        assert runs, "no run was stored"
        for run in runs:
            assert not [p for p in PIECES if p in repr(run)]
            for record in instance.all_logs(run.run_id):
                text = repr(record)
                event = record.dagster_event
                if event is not None and event.is_step_failure:
                    text += event.step_failure_data.error.to_string()
                assert not [p for p in PIECES if p in text], text[-3000:]
    finally:
        instance.dispose()
    # every file under the instance folder (SQLite storages, compute logs) and the log file
    assert list(home.rglob("*.err")) or [p for p in home.rglob("*") if "compute_logs" in str(p)], (
        "the run wrote no compute log to check"
    )
    assert list((home / "logs").glob("reference_data-*.log"))
    assert _files_holding(tmp_path) == []
