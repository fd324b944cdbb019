"""Benchmark: a run of the demo partition the way the UI launches one, per step executor.

The UI's Materialize button starts a run in a new process that executes the job with the
job's executor. This script does the same with `dagster job execute` (a fresh process, the
code location loaded from the module, the job's executor from FAIRNESS_EXECUTOR) for
``demo_audit`` on the demo partition with the example answers imported
(FAIRNESS_RESPONSES=data/examples/demo_responses.jsonl, no model), once with the multiprocess
executor (the previous default: a process per step, each importing the code location again)
and once with the in-process executor (the default now), interleaved ``--repeats`` times, and
reports the wall time of each, with the time of importing the code location once.

    .venv/bin/python benchmarks/run_startup.py [--repeats 2] [--no-write]
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
sys.path.insert(0, str(ROOT))

from fairness_assets.local import OFFLINE_INSTANCE_YAML  # noqa: E402

BIN = Path(sys.executable).parent
KEY = "qwen2.5-0.5b-demo|base"


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--repeats", type=int, default=2)
    ap.add_argument("--no-write", action="store_true")
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        home = Path(tmp) / "dagster_home"
        home.mkdir()
        (home / "dagster.yaml").write_text(OFFLINE_INSTANCE_YAML)
        env = {
            **os.environ,
            "DAGSTER_HOME": str(home),
            "FAIRNESS_HOME": str(Path(tmp) / "fairness_home"),
            "FAIRNESS_RESPONSES": str(ROOT / "data" / "examples" / "demo_responses.jsonl"),
            "DAGSTER_DISABLE_TELEMETRY": "1",
            "GX_ANALYTICS_ENABLED": "false",
        }
        env.pop("FAIRNESS_EXECUTOR", None)
        # registers the model partition and builds the reference data once
        subprocess.run([str(BIN / "fairness-audit"), "demo"], cwd=ROOT, env=env, check=True, capture_output=True)
        t0 = time.perf_counter()
        subprocess.run(
            [sys.executable, "-c", "from fairness_assets.definitions import defs; defs()"],
            cwd=ROOT,
            env=env,
            check=True,
        )  # import and load: the definitions load when defs() is called
        import_s = time.perf_counter() - t0
        times: dict[str, list[float]] = {"multiprocess": [], "in_process": []}
        for _ in range(args.repeats):
            for executor in times:
                t0 = time.perf_counter()
                proc = subprocess.run(
                    [
                        str(BIN / "dagster"),
                        "job",
                        "execute",
                        "-m",
                        "fairness_assets.definitions",
                        "-j",
                        "demo_audit",
                        "--tags",
                        json.dumps({"dagster/partition": KEY}),
                    ],
                    cwd=ROOT,
                    env={**env, "FAIRNESS_EXECUTOR": executor},
                    capture_output=True,
                    text=True,
                )
                if proc.returncode != 0:
                    raise RuntimeError(f"{executor}: {proc.stderr[-2000:]}")
                times[executor].append(time.perf_counter() - t0)
    r = {"import_s": import_s, **{f"{k}_s": min(v) for k, v in times.items()}, "all": times}
    r["ratio"] = r["multiprocess_s"] / r["in_process_s"]
    print(json.dumps(r, indent=2))
    if not args.no_write:
        sys.path.insert(0, str(ROOT / "benchmarks"))
        from _doc import write_section

        write_section(
            "Run start-up (a UI run of the demo partition)",
            (
                f"`benchmarks/run_startup.py`, {date.today().isoformat()}, {platform.machine()}, {os.cpu_count()} "
                "cores. `demo_audit` for the demo partition with the example answers imported, run the way the UI runs "
                "it (a new process executing the job with the job's executor: `dagster job execute`), best of "
                f"{args.repeats}, both executors interleaved in one run.\n\n"
                "| executor | run wall time |\n| --- | --- |\n"
                f"| multiprocess (the previous default: a process per step) | {r['multiprocess_s']:.1f} s |\n"
                f"| in_process (the default now) | **{r['in_process_s']:.1f} s** |\n\n"
                f"In-process / multiprocess: **{r['ratio']:.1f}x** faster. Importing the code location takes "
                f"{r['import_s']:.1f} s, paid once per step process by the multiprocess executor.\n"
            ),
        )


if __name__ == "__main__":
    main()
