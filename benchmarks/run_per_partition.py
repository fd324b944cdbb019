"""Benchmark: what one run per partition costs beside one run of many partitions (issue 32.5).

A backfill launched from the UI runs one run per model x template partition (the assets' backfill
policy, ``defs/partitions.PER_PARTITION``), so that Dagster records each partition's
materialization, failure and check results as its own. Each run is a new process that loads the
code location, builds the resources, claims its lease and reads its partition. This script
measures that start-up at the study's size: a synthetic responses file of the study grid for
``--models`` models (every template, 10 runs: 11,260 answers per model; the generator of
benchmarks/pipeline_study.py) on a persistent instance (SQLite), the reference data built once,
then the partitioned assets of the audit (the ``reaudit`` job: generations to audit_geography, no
reference data, no cross-partition assets) run, interleaved ``--repeats`` times:

- as **one run of every partition** (a partition-range run: what the single-run backfill policy
  launched before), and
- as **one run per partition**, one after another (what a backfill launches now, with the run
  queue's limit at 1: the most start-up a user can pay), and
- as **one run per partition, two at a time** (the local instance's run limit, ``max_concurrent_runs: 2``).

Each run goes the way the daemon launches one: a new process executing the job
(``dagster job execute``). Reported: each way's wall time (best of the repeats), the start-up each
run adds (the difference over the extra runs), and the in-step time of both from the runs' step
events, so the start-up is seen apart from the work.

    .venv/bin/python benchmarks/run_per_partition.py [--models 1] [--runs 10] [--repeats 1] [--no-write]
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
from concurrent.futures import ThreadPoolExecutor
from datetime import date
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path[:] = [p for p in sys.path if Path(p or ".").resolve() != ROOT / "benchmarks"]  # statistics.py shadows stdlib
sys.path.insert(0, str(ROOT))
sys.path.insert(1, str(ROOT / "benchmarks"))

from pipeline_study import DEFAULT_CORPUS, MODELS, step_seconds, synthetic_study_file  # noqa: E402

from fairness_assets.local import OFFLINE_INSTANCE_YAML  # noqa: E402

BIN = Path(sys.executable).parent
TEMPLATES = ("academic", "base", "class_only", "gender_only", "nationality_only", "regional")


def execute(env: dict, job: str, tags: dict | None = None) -> float:
    """``dagster job execute`` of ``job`` in a new process; its wall time. Raises naming the job on failure."""
    cmd = [str(BIN / "dagster"), "job", "execute", "-m", "fairness_assets.definitions", "-j", job]
    if tags:
        cmd += ["--tags", json.dumps(tags)]
    t0 = time.perf_counter()
    proc = subprocess.run(cmd, cwd=ROOT, env=env, capture_output=True, text=True)
    wall = time.perf_counter() - t0
    if proc.returncode != 0:
        raise RuntimeError(f"dagster job execute -j {job} {tags}: exit {proc.returncode}\n{proc.stderr[-3000:]}")
    return wall


def in_step_seconds(home: Path, since: int) -> tuple[float, list[str]]:
    """The summed step time (STEP_START to STEP_SUCCESS) of the runs after the first ``since``
    runs of the instance at ``home``, and those runs' ids."""
    import dagster as dg

    total, ids = 0.0, []
    with dg.DagsterInstance.from_config(str(home)) as instance:
        runs = sorted(instance.get_runs(), key=lambda r: instance.get_run_record_by_id(r.run_id).create_timestamp)
        for run in runs[since:]:
            ids.append(run.run_id)
            total += sum(step_seconds(instance, run.run_id).values())
    return total, ids


def run_count(home: Path) -> int:
    import dagster as dg

    with dg.DagsterInstance.from_config(str(home)) as instance:
        return len(instance.get_runs())


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--models", type=int, default=1, help="how many of the study's three models (6 partitions each)")
    ap.add_argument("--runs", type=int, default=10)
    ap.add_argument("--repeats", type=int, default=1)
    ap.add_argument("--corpus", default=str(DEFAULT_CORPUS))
    ap.add_argument("--no-write", action="store_true")
    args = ap.parse_args()
    models = MODELS[: args.models]
    keys = [f"{m}|{t}" for m in models for t in TEMPLATES]  # the multi-partition key order: model, then template
    with tempfile.TemporaryDirectory() as tmp:
        tmp = Path(tmp)
        home = tmp / "dagster_home"
        home.mkdir()
        (home / "dagster.yaml").write_text(OFFLINE_INSTANCE_YAML)
        answers = synthetic_study_file(tmp / "responses.jsonl", Path(args.corpus), args.runs, models)
        env = {
            **os.environ,
            "DAGSTER_HOME": str(home),
            "FAIRNESS_HOME": str(tmp / "fairness_home"),
            "FAIRNESS_RESPONSES": str(tmp / "responses.jsonl"),
            "FAIRNESS_QS_CORPUS": str(args.corpus),
            "FAIRNESS_DESIGN": "study",
            "DAGSTER_DISABLE_TELEMETRY": "1",
            "GX_ANALYTICS_ENABLED": "false",
        }
        for name in ("FAIRNESS_DATABASE_URL", "FAIRNESS_MODEL_REGISTRY", "FAIRNESS_EXECUTOR"):
            env.pop(name, None)
        import dagster as dg

        with dg.DagsterInstance.from_config(str(home)) as instance:
            instance.add_dynamic_partitions("models", list(models))
        execute(env, "reference_data")
        # the file is imported into the results database by its first run: import it once before timing
        execute(env, "reaudit", {"dagster/partition": keys[0]})
        walls: dict[str, list[float]] = {"one_run": [], "per_partition": [], "two_at_a_time": []}
        in_step: dict[str, list[float]] = {"one_run": [], "per_partition": [], "two_at_a_time": []}
        for _ in range(args.repeats):
            before = run_count(home)
            walls["one_run"].append(
                execute(
                    env,
                    "reaudit",
                    {"dagster/asset_partition_range_start": keys[0], "dagster/asset_partition_range_end": keys[-1]},
                )
            )
            in_step["one_run"].append(in_step_seconds(home, before)[0])
            before = run_count(home)
            walls["per_partition"].append(sum(execute(env, "reaudit", {"dagster/partition": k}) for k in keys))
            in_step["per_partition"].append(in_step_seconds(home, before)[0])
            before = run_count(home)
            t0 = time.perf_counter()
            with ThreadPoolExecutor(2) as pool:  # as the run queue starts them: two at once
                list(pool.map(lambda k: execute(env, "reaudit", {"dagster/partition": k}), keys))
            walls["two_at_a_time"].append(time.perf_counter() - t0)
            in_step["two_at_a_time"].append(in_step_seconds(home, before)[0])
            print(json.dumps({"walls": walls, "in_step": in_step}), flush=True)
    best = {k: min(v) for k, v in walls.items()}
    r = {
        "models": len(models),
        "partitions": len(keys),
        "answers": answers,
        "walls": walls,
        "in_step": in_step,
        "one_run_s": best["one_run"],
        "per_partition_s": best["per_partition"],
        "two_at_a_time_s": best["two_at_a_time"],
        "two_at_a_time_ratio": best["two_at_a_time"] / best["one_run"],
        "added_per_run_s": (best["per_partition"] - best["one_run"]) / (len(keys) - 1),
        "ratio": best["per_partition"] / best["one_run"],
    }
    print(json.dumps(r, indent=2))
    if not args.no_write:
        write_doc(r, args.repeats)


def write_doc(r: dict, repeats: int) -> None:
    from _doc import write_section

    one_step, per_step = min(r["in_step"]["one_run"]), min(r["in_step"]["per_partition"])
    write_section(
        "One run per partition (the UI's backfills)",
        (
            f"`benchmarks/run_per_partition.py`, {date.today().isoformat()}, {platform.machine()}, {os.cpu_count()} "
            f"cores, SQLite. The partitioned assets of the audit (the `reaudit` job) on {r['answers']:,} synthetic "
            f"answers of the study grid ({r['models']} model(s), {r['partitions']} partitions), each run a new "
            "process as the daemon launches it (`dagster job execute`), best of "
            f"{repeats}, both ways interleaved in one run.\n\n"
            "| runs | wall time | of it in steps |\n| --- | --- | --- |\n"
            f"| one run of every partition (the single-run backfill before) | {r['one_run_s']:.1f} s | "
            f"{one_step:.1f} s |\n"
            f"| one run per partition, one at a time (a backfill now, run limit 1) | {r['per_partition_s']:.1f} s | "
            f"{per_step:.1f} s |\n"
            f"| one run per partition, two at a time (a backfill now, the local run limit 2) | "
            f"{r['two_at_a_time_s']:.1f} s | {min(r['in_step']['two_at_a_time']):.1f} s (summed over runs) |\n\n"
            f"Each extra run adds **{r['added_per_run_s']:.1f} s** one at a time: the process, the code location and "
            "the resources before the first step, and inside the steps what each run pays once (reading its "
            "inputs back, the parse-quality suite, the figure workers, the leases). One run per partition takes "
            f"**{r['ratio']:.2f}x** the time of one run one at a time, **{r['two_at_a_time_ratio']:.2f}x** two at a "
            "time. It is what makes each partition's state in the UI its own (docs/architecture.md, \"One run per "
            "partition\"); `fairness-audit score` keeps boxes of up to 6 partitions per run. A model's weights "
            "load once per run as well (not measured here: the answers are imported).\n"
        ),
    )


if __name__ == "__main__":
    main()
