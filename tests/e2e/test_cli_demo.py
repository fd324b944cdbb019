"""README command 1: `fairness-audit demo` runs the main job end to end."""

import os
import sqlite3
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def test_cli_demo_runs_the_main_job(results_home):
    out = subprocess.run(
        [sys.executable, "-m", "fairness_assets.cli", "demo"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=600,
        env={**os.environ},
    )
    assert out.returncode == 0, out.stdout[-3000:] + out.stderr[-3000:]
    assert "job 'demo_audit' for partition qwen2.5-0.5b-demo|base succeeded" in out.stdout
    for asset in ("qs_corpus", "profiles", "prompts", "generations", "recommendations", "subject_tags"):
        assert f"  {asset}" in out.stdout
    assert "check parse_rate" in out.stdout
    db = results_home / "results.db"
    assert f"sqlite:///{db}" in out.stdout
    with sqlite3.connect(db) as conn:
        n_gen = conn.execute("select count(*) from generation").fetchone()[0]
        n_resp = conn.execute("select count(distinct response_id) from recommendation").fetchone()[0]
    assert n_gen == n_resp == 12  # every response is kept, items or not
    with sqlite3.connect(db) as conn:  # the generation's cost, stored and in the report's provenance
        kind, samples, out_tokens = conn.execute(
            "select compute_kind, samples, output_tokens from generation_cost"
        ).fetchone()
        report_md = conn.execute("select markdown_path from audit_report order by id desc").fetchone()[0]
    assert kind == "cpu" and samples == 12 and out_tokens > 0
    assert "generation cost (per partition)" in open(report_md, encoding="utf-8").read()
    # provenance on every row: no stored result table has a row without a provenance id, and each
    # id names a recorded provenance
    with sqlite3.connect(db) as conn:
        tables = [r[0] for r in conn.execute("select name from sqlite_master where type = 'table'")]
        with_provenance = [
            t
            for t in tables
            if "provenance_id" in {c[1] for c in conn.execute(f"pragma table_info('{t}')")} and t != "provenance"
        ]
        assert {
            "generation",
            "recommendation",
            "subject_tag",
            "drs_item",
            "grs_country",
            "metric_row",
            "statistic_row",
            "audit_figure",
            "audit_report",
            "generation_cost",
            "audit_metric",
        } <= set(with_provenance)
        for table in with_provenance:
            rows = conn.execute(f"select count(*) from {table}").fetchone()[0]
            empty = conn.execute(
                f"select count(*) from {table} where provenance_id is null or provenance_id = ''"
            ).fetchone()[0]
            unknown = conn.execute(
                f"select count(*) from {table} where provenance_id not in (select provenance_id from provenance)"
            ).fetchone()[0]
            assert (empty, unknown) == (0, 0), (
                f"{table}: {empty} row(s) without and {unknown} with an unrecorded provenance id, of {rows}"
            )
