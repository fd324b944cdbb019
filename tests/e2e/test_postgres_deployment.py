"""The demo audit end to end with the production storage: the Dagster instance on PostgreSQL
(deploy/dagster.yaml) and the results database on PostgreSQL, both on the real server."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import sqlalchemy as sa

from resources.database.connect import _with_driver
from tests.helpers.pipeline import DEMO_KEY, DEMO_MODEL, DEMO_RESPONSES, ROOT

pytestmark = pytest.mark.postgres


def test_demo_audit_on_postgres_instance_and_results(tmp_path, postgres_databases):
    instance_url, results_url = postgres_databases(), postgres_databases()
    home = tmp_path / "dagster_home"
    home.mkdir()
    shutil.copy(ROOT / "deploy" / "dagster.yaml", home / "dagster.yaml")
    env = {
        **os.environ,
        "DAGSTER_HOME": str(home),
        "DAGSTER_PG_URL": instance_url,
        "FAIRNESS_DATABASE_URL": results_url,
        "FAIRNESS_RESPONSES": str(DEMO_RESPONSES),
        "FAIRNESS_HOME": str(tmp_path / "fairness_home"),
    }
    for var in ("FAIRNESS_QS_CORPUS", "FAIRNESS_DESIGN", "FAIRNESS_EXECUTOR"):
        env.pop(var, None)
    out = subprocess.run(
        [sys.executable, "-m", "fairness_assets.cli", "demo"],
        env=env,
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert out.returncode == 0, out.stdout[-3000:] + out.stderr[-3000:]
    assert f"job 'demo_audit' for partition {DEMO_KEY} succeeded" in out.stdout
    report = next(line for line in out.stdout.splitlines() if line.startswith("[fairness-audit] audit report: "))
    report_path = report.split("audit report: ", 1)[1].split(" (and report.md", 1)[0]
    assert report_path.startswith(str(tmp_path / "fairness_home" / "reports")) and Path(report_path).exists()

    # the instance's runs, events and partitions live in PostgreSQL
    instance_db = sa.create_engine(_with_driver(instance_url))
    with instance_db.connect() as conn:
        runs = conn.execute(sa.text("SELECT status FROM runs")).scalars().all()
        mats = conn.execute(
            sa.text("SELECT count(*) FROM event_logs WHERE dagster_event_type = 'ASSET_MATERIALIZATION'")
        ).scalar()
        checks = conn.execute(
            sa.text("SELECT count(*) FROM event_logs WHERE dagster_event_type = 'ASSET_CHECK_EVALUATION'")
        ).scalar()
        partitions = conn.execute(sa.text("SELECT partition FROM dynamic_partitions")).scalars().all()
    instance_db.dispose()
    assert runs == ["SUCCESS"]
    assert mats >= 12 and checks >= 3
    assert partitions == [DEMO_MODEL]

    # and so do the results, with provenance
    results_db = sa.create_engine(_with_driver(results_url))
    with results_db.connect() as conn:
        counts = {
            t: conn.execute(sa.text(f"SELECT count(*) FROM {t}")).scalar()
            for t in (
                "generation",
                "recommendation",
                "drs_item",
                "grs_country",
                "drs_summary",
                "run_variability",
                "result_table",
                "audit_metric",
                "provenance",
            )
        }
        keys = conn.execute(sa.text("SELECT DISTINCT partition_key FROM drs_item")).scalars().all()
    results_db.dispose()
    assert all(n > 0 for n in counts.values()), counts
    assert counts["generation"] == len([line for line in DEMO_RESPONSES.read_text().splitlines() if line.strip()])
    assert keys == [DEMO_KEY]

    # the instance reads its pool limit from the same file: one GPU step at a time
    probe = subprocess.run(
        [
            sys.executable,
            "-c",
            (
                "from dagster import DagsterInstance; i = DagsterInstance.get(); "
                "print(type(i.run_storage).__name__, i.get_concurrency_config().pool_config.default_pool_limit)"
            ),
        ],
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert probe.stdout.split() == ["PostgresRunStorage", "1"], probe.stdout + probe.stderr
