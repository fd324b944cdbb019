"""Benchmark: peak memory of the ``audit_report`` step as the number of stored partitions grows.

Issue 19 item 5: peak resident memory must stay under 4 GB whatever the number of partitions.
After the export and the per-box runs were bounded, the report was the one step whose memory still
grew with the partitions (about 20 MB a study-size partition: every partition's statistics held
until the HTML was written). This benchmark isolates that step:

1. a synthetic study-size responses file (one model x base/regional/academic x the study's 360
   profiles x ``--runs`` runs; the generator of benchmarks/memory_partitions.py, QS names from
   ``--corpus``; nothing of it is committed) is scored once with ``fairness-audit score
   --database sqlite:///...`` (three stored partitions with their statistics, geography, figures);
2. the stored rows of those three partitions are copied under new model names until the database
   holds N partitions (``--partitions``, e.g. 3 18 42: every table with a partition key, the
   long tables' model cells renamed too), each copy as large as a real study-size partition;
3. for each N, a fresh process materializes ``audit_report`` alone on that database (the code of
   this checkout, or of ``--code DIR``, e.g. a ``git archive`` of the previous commit) and reports
   its own high-water mark (``VmHWM``) and wall time.

    .venv/bin/python benchmarks/report_memory.py [--runs 10] [--partitions 3 18 42] [--code DIR --label before]
        [--write]

``--write`` adds the rows to the table of docs/benchmarks.md (section "Report memory as partitions
grow"), keeping the rows of other labels.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import subprocess
import sys
import tempfile
import time
from datetime import date
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path[:] = [p for p in sys.path if Path(p or ".").resolve() != ROOT / "benchmarks"]  # statistics.py shadows stdlib
sys.path.insert(0, str(ROOT))
sys.path.insert(1, str(ROOT / "benchmarks"))

DEFAULT_CORPUS = ROOT.parent / "shared" / "data" / "qs_world_university_rankings_2024.csv"
SECTION = "Report memory as partitions grow"
SEED_MODEL = "synthetic-model-01"

# run in a fresh process from the code under test: materialize audit_report alone on the database
CHILD = r"""
import json, os, resource, sys, time
code = sys.argv[1]
sys.path.insert(0, code)
import dagster as dg
from resources import database as D
from fairness_assets.defs.reporting import assets as reporting
from tests.helpers.pipeline import resources
db = D.ResultsDatabase(url=sys.argv[2])
t0 = time.perf_counter()
res = dg.materialize([reporting.audit_report_file], instance=dg.DagsterInstance.ephemeral(),
                     resources=resources(db, ""), raise_on_error=True)
wall = time.perf_counter() - t0
hwm = next(int(l.split()[1]) for l in open("/proc/self/status") if l.startswith("VmHWM:"))
mat = res.asset_materializations_for_node("audit_report")[0].metadata
print(json.dumps({"wall_s": round(wall, 1), "peak_gb": round(hwm / 1024 / 1024, 2),
                  "partitions": len(str(mat["partitions"].value).split(", ")),
                  "html_mb": round(os.path.getsize(mat["report"].value) / 1e6, 1)}))
"""


def score_seed(workdir: Path, corpus: Path, runs: int) -> str:
    """Score one synthetic model's three study-size partitions into a SQLite database; its URL."""
    from memory_partitions import write_grid_file

    responses = workdir / "responses.jsonl"
    n = write_grid_file(responses, corpus, 1, runs)
    url = f"sqlite:///{workdir / 'seed.db'}"
    env = {**os.environ, "FAIRNESS_HOME": str(workdir / "home"), "DAGSTER_HOME": str(workdir / "dagster_home")}
    (workdir / "dagster_home").mkdir(exist_ok=True)
    t0 = time.perf_counter()
    subprocess.run(
        [
            str(ROOT / ".venv" / "bin" / "fairness-audit"),
            "score",
            "--responses",
            str(responses),
            "--corpus",
            str(corpus),
            "--out",
            str(workdir / "out"),
            "--database",
            url,
        ],
        check=True,
        env=env,
        stdout=subprocess.DEVNULL,
    )
    print(f"scored {n:,} answers (3 partitions) in {time.perf_counter() - t0:.0f} s", flush=True)
    return url


def replicate(url: str, copies: int) -> int:
    """Copy the seed model's partitions under new model names until ``copies`` models are stored; the
    number of partitions now stored."""
    import sqlalchemy as sa

    from fairness_assets.core.common.partition import PartitionKey
    from resources import database as D

    db = D.ResultsDatabase(url=url)
    try:
        stored = [PartitionKey.parse(k) for k in db.distinct(D.MetricRow, ["partition_key"])["partition_key"] if k]
        seed_keys = sorted(str(k) for k in stored if k.model == SEED_MODEL)
        tables = [
            m
            for m in vars(D).values()
            if isinstance(m, type)
            and issubclass(m, D.SQLModel)
            and hasattr(m, "__table__")
            and "partition_key" in m.__table__.columns
            and "id" in m.__table__.columns
        ]
        have = sorted({k.model for k in stored if k.model.startswith(SEED_MODEL + "-copy")})
        keep = {f"{SEED_MODEL}-copy{i:02d}" for i in range(1, copies)}
        with db.engine().begin() as conn:  # fewer partitions than stored: the copies beyond are removed
            for model in [m for m in have if m not in keep]:
                for table in tables:
                    conn.execute(
                        table.__table__.delete().where(
                            table.__table__.c.partition_key.in_(
                                [str(PartitionKey(model, PartitionKey.parse(k).template)) for k in seed_keys]
                            )
                        )
                    )
        have = [m for m in have if m in keep]
        for i in range(len(have) + 1, copies):
            model = f"{SEED_MODEL}-copy{i:02d}"
            for table in tables:
                rows = db.read_rows(table, seed_keys)
                if rows.empty:
                    continue
                rows["partition_key"] = [
                    str(PartitionKey(model, PartitionKey.parse(k).template)) for k in rows["partition_key"]
                ]
                if "model" in rows:
                    rows["model"] = rows["model"].replace(SEED_MODEL, model)
                if "value_text" in rows:  # long tables: a model cell, or a packed row holding one
                    rows["value_text"] = rows["value_text"].str.replace(SEED_MODEL, model, regex=False)
                db.append_rows(table, rows)
        with db.engine().connect() as conn:
            return int(
                conn.execute(
                    sa.text("SELECT COUNT(DISTINCT partition_key) FROM metric_row WHERE partition_key <> ''")
                ).scalar()
            )
    finally:
        db.dispose()


def measure(code: Path, url: str, home: Path, corpus: Path) -> dict:
    env = {**os.environ, "FAIRNESS_HOME": str(home), "PYTHONPATH": str(code), "FAIRNESS_QS_CORPUS": str(corpus)}
    out = subprocess.run(
        [str(ROOT / ".venv" / "bin" / "python"), "-c", CHILD, str(code), url],
        env=env,
        cwd=code,
        capture_output=True,
        text=True,
    )
    if out.returncode:
        raise RuntimeError(f"the report step failed (exit {out.returncode}):\n{out.stderr[-3000:]}")
    return json.loads(out.stdout.strip().splitlines()[-1])


def write_doc(rows: list[dict], runs: int) -> None:
    from _doc import DOC, write_section

    text = DOC.read_text(encoding="utf-8") if DOC.exists() else ""
    old = []
    start = text.find(f"## {SECTION}\n")
    if start >= 0:
        body = text[start : text.find("\n## ", start + 3) if text.find("\n## ", start + 3) >= 0 else len(text)]
        measured = {(r["label"], str(r["partitions"])) for r in rows}  # rows measured again replace their old one
        old = [
            line
            for line in body.splitlines()
            if line.startswith("| ")
            and not line.startswith("| code")
            and not line.startswith("| ---")
            and (line.split("|")[1].strip(), line.split("|")[2].strip()) not in measured
        ]
    head = (
        f"`benchmarks/report_memory.py`, {date.today().isoformat()}, {platform.machine()}, {os.cpu_count()} "
        f"cores, Python {platform.python_version()}. One synthetic model's three study-size partitions (360 "
        f"profiles x {runs} runs each, base/regional/academic) are scored once with `fairness-audit score`, "
        "then their stored rows are copied under new model names until the database holds N partitions; for "
        "each N a fresh process materializes `audit_report` alone and reports its own high-water mark "
        "(VmHWM, exact). **before** = the code before the report digested its partitions, **after** = this "
        "checkout, both on the same databases in the same session."
    )
    table = ["| code | partitions | peak RSS (VmHWM) | wall time | report.html |", "| --- | --- | --- | --- | --- |"]
    new = [
        f"| {r['label']} | {r['partitions']} | **{r['peak_gb']:.2f} GB** | {r['wall_s']:.0f} s | "
        f"{r['html_mb']:.1f} MB |"
        for r in rows
    ]
    table += sorted(
        old + new, key=lambda line: (line.split("|")[1].strip() != "before", int(line.split("|")[2].strip()))
    )
    write_section(SECTION, head + "\n\n" + "\n".join(table) + "\n")


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--runs", type=int, default=10)
    ap.add_argument(
        "--partitions",
        type=int,
        nargs="+",
        default=[3, 18, 42],
        help="numbers of stored partitions to measure at (multiples of 3)",
    )
    ap.add_argument("--corpus", default=str(DEFAULT_CORPUS))
    ap.add_argument("--code", default="", help="run the report from this checkout (e.g. a git archive of main)")
    ap.add_argument("--label", default="after")
    ap.add_argument("--keep", default="", help="folder for the databases (kept; reused when it holds them)")
    ap.add_argument("--write", action="store_true")
    ap.add_argument("--saved", default="", help="a log of an earlier run (its JSON lines): write those rows too")
    a = ap.parse_args()
    work = Path(a.keep) if a.keep else Path(tempfile.mkdtemp(prefix="report-memory-"))
    work.mkdir(parents=True, exist_ok=True)
    code = Path(a.code).resolve() if a.code else ROOT
    url = f"sqlite:///{work / 'seed.db'}" if (work / "seed.db").exists() else score_seed(work, Path(a.corpus), a.runs)
    rows = []
    if a.saved:  # rows an earlier run printed (one JSON object a line), e.g. before it was stopped
        for line in Path(a.saved).read_text(encoding="utf-8").splitlines():
            if line.startswith("{"):
                r = json.loads(line)
                rows.append({k: r[k] for k in ("label", "wall_s", "peak_gb", "partitions", "html_mb")})
    for n in sorted(a.partitions):
        stored = replicate(url, n // 3)
        r = {"label": a.label, **measure(code, url, work / "home", Path(a.corpus))}
        print(json.dumps({"stored_partitions": stored, **r}), flush=True)
        rows.append(r)
    if a.write:
        write_doc(rows, a.runs)


if __name__ == "__main__":
    main()
