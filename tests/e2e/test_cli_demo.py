"""README command 1: `fairness-audit demo` runs the main job end to end."""

import os
import re
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
    assert not printed_contradictions(out.stdout + "\n" + out.stderr)
    assert "release_gate" not in out.stdout  # no gate file: no gate verdict
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
            "drs_summary",
            "run_variability",
            "result_table",
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


def printed_contradictions(text: str) -> list[str]:
    """The printed lines a reader could not take at their word: a ``None`` / ``nan`` where a value
    belongs, and an asset that says it stored nothing while a row count for it is above zero."""
    problems = [line for line in text.splitlines() if re.search(r"\b(None|nan|NaN)\b", line)]
    quiet = set(re.findall(r"\b(\w+): [^\n]*nothing stored", text))
    for asset in quiet:
        counts = re.findall(rf"rows stored: ([\d,]+) {asset}\b", text) + re.findall(
            rf"^\s+{asset}\s+([\d,]+) row\(s\)", text, flags=re.M
        )
        problems += [f"{asset}: says nothing stored, then {n} row(s)" for n in counts if int(n.replace(",", ""))]
    return problems


def test_the_scan_of_printed_lines_finds_what_a_reader_would_misread():
    """The scan above fails on the lines the demo printed before issue 32 (so it can fail)."""
    before = (
        "00:47:35 WARNING base_vs_regional: no model has both partitions scored; nothing to compare, nothing stored\n"
        "00:47:35 ✓ base_vs_regional (0.2 s): rows stored: 39 base_vs_regional\n"
        "  audit_report             None row(s)\n"
        "  check release_gate           pass           observed None\n"
    )
    assert len(printed_contradictions(before)) == 3
    assert (
        printed_contradictions(
            "  base_vs_regional: nothing to compare, nothing stored\n  base_vs_regional   0 row(s)\n"
        )
        == []
    )
