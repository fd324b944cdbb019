"""Benchmark: the pipeline after generation at three sizes of the study grid, and how each step grows.

Issue 36 item 1. The study is 18 partitions (3 models x 6 templates); designs of many models and
languages are hundreds. This runs the study grid's partitions for 3, 9 and 27 models (18, 54 and 162
partitions; ``--models``), each size in its own process (``benchmarks/pipeline_study.py``'s run: a
synthetic responses file written the ways models write, imported and materialized downstream in one
``study_audit`` run, in-process executor, SQLite), and reports per step:

- the wall time (the step's STEP_START to STEP_SUCCESS);
- the CPU time and the peak resident memory while the step ran: a sampler thread reads the process's CPU
  time (every thread; the figure workers' CPU is added when they exit, at the end of their step) and
  its resident memory every 0.1 s, and each sample is given to the step running then (the in-process
  executor runs one step at a time);
- the slope per added partition: a least-squares line through the three sizes (seconds =
  intercept + slope x partitions), its residual (root mean square, seconds), and the ratio of the last
  interval's slope to the first's: a step whose cost per partition grows (ratio above 1.3) grows faster
  than linearly, and is named.

Models beyond the study's three are synthetic registry entries (``synthetic-model-NN``, a registry file
written to the run's temporary folder): the answers are generated, never a model. ``--runs`` sets the
runs of every profile (10: the study's 33,780 answers at 3 models; fewer to keep the largest size within
a session: the docs say which was used).

    .venv/bin/python benchmarks/pipeline_scale.py [--models 3,9,27] [--runs 10] [--no-write] [--save FILE]
        [--keep-reports DIR]  # each size's report folder, for benchmarks/report_open.py
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import subprocess
import sys
import tempfile
import threading
import time
from datetime import date, datetime
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path[:] = [p for p in sys.path if Path(p or ".").resolve() != ROOT / "benchmarks"]  # statistics.py shadows stdlib
sys.path.insert(0, str(ROOT))
sys.path.insert(1, str(ROOT / "benchmarks"))

STUDY_MODELS = ("llama-3.1-8b-instruct", "gemma-7b-it", "mistral-7b-instruct-v0.3")
TEMPLATES = 6
SUPERLINEAR = 1.3  # the last interval's cost per partition over the first's, above which a step is named


def models_for(n: int) -> list[str]:
    return list(STUDY_MODELS[: min(n, 3)]) + [f"synthetic-model-{i:02d}" for i in range(1, n - 2)]


def write_registry(path: Path, models: list[str]) -> None:
    import yaml

    doc = yaml.safe_load((ROOT / "data" / "models.yaml").read_text(encoding="utf-8"))
    for m in models:
        if m not in doc["models"]:
            doc["models"][m] = {"source": f"synthetic/{m}", "backend": "transformers", "revision": None}
    path.write_text(yaml.safe_dump(doc, sort_keys=False), encoding="utf-8")


class Sampler(threading.Thread):
    """(time, process CPU seconds incl. finished children, resident GB) every ``every`` seconds."""

    def __init__(self, every: float = 0.1):
        super().__init__(daemon=True)
        self.every, self.samples, self.stop = every, [], threading.Event()

    @staticmethod
    def read() -> tuple[float, float, float]:
        t = os.times()
        rss = 0.0
        try:
            for line in Path("/proc/self/status").read_text().splitlines():
                if line.startswith("VmRSS:"):
                    rss = int(line.split()[1]) / 1024 / 1024
        except OSError:
            pass
        return time.time(), t.user + t.system + t.children_user + t.children_system, rss

    def run(self) -> None:
        while not self.stop.is_set():
            self.samples.append(self.read())
            time.sleep(self.every)


def one_size(n_models: int, runs: int, corpus: str, keep_reports: str = "") -> dict:
    """One size, in this process: the file, the run, and per step its wall, CPU and peak memory."""
    import dagster as dg
    from pipeline_study import peak_rss_gb, step_intervals, synthetic_study_file

    models = models_for(n_models)
    with tempfile.TemporaryDirectory() as tmp:
        tmp = Path(tmp)
        registry = tmp / "models.yaml"
        write_registry(registry, models)
        t0 = time.perf_counter()
        answers = synthetic_study_file(tmp / "responses.jsonl", Path(corpus), runs, models)
        build_s = time.perf_counter() - t0
        home = tmp / "home"
        home.mkdir()
        os.environ.update(
            {
                "FAIRNESS_RESPONSES": str(tmp / "responses.jsonl"),
                "FAIRNESS_QS_CORPUS": corpus,
                "FAIRNESS_HOME": str(home),
                "FAIRNESS_DESIGN": "study",
                "FAIRNESS_MODEL_REGISTRY": str(registry),
            }
        )
        os.environ.pop("FAIRNESS_DATABASE_URL", None)
        from fairness_assets.definitions import defs
        from fairness_assets.defs.partitions import MODEL_PARTITIONS

        job = defs().resolve_job_def("study_audit")
        instance = dg.DagsterInstance.ephemeral()
        instance.add_dynamic_partitions(MODEL_PARTITIONS.name, models)
        keys = job.partitions_def.get_partition_keys(dynamic_partitions_store=instance)
        sampler = Sampler()
        sampler.start()
        t0 = time.perf_counter()
        result = job.execute_in_process(
            instance=instance,
            raise_on_error=False,
            tags={
                "dagster/asset_partition_range_start": str(keys[0]),
                "dagster/asset_partition_range_end": str(keys[-1]),
            },
        )
        wall = time.perf_counter() - t0
        sampler.stop.set()
        sampler.join()
        if not result.success:
            failures = [e.message for e in result.all_events if e.is_failure]
            raise RuntimeError(f"study_audit failed at {n_models} models: {failures[:3]}")
        if keep_reports:  # the report folder, for benchmarks/report_open.py
            import shutil

            written = sorted(home.rglob("report.html"), key=lambda p: p.stat().st_mtime)
            target = Path(keep_reports) / f"{len(keys)}-partitions"
            shutil.rmtree(target, ignore_errors=True)
            shutil.copytree(written[-1].parent, target)
        steps = step_intervals(instance, result.run_id)
        samples = np.asarray(sampler.samples)
        out = {}
        for step, (a, b) in steps.items():
            inside = samples[(samples[:, 0] >= a) & (samples[:, 0] <= b)]
            before = samples[samples[:, 0] <= a]
            after = samples[samples[:, 0] >= b]
            cpu0 = before[-1, 1] if len(before) else (inside[0, 1] if len(inside) else np.nan)
            cpu1 = after[0, 1] if len(after) else (inside[-1, 1] if len(inside) else np.nan)
            out[step] = {
                "wall_s": b - a,
                "cpu_s": float(cpu1 - cpu0),
                "peak_gb": float(inside[:, 2].max()) if len(inside) else float("nan"),
            }
        return {
            "models": n_models,
            "partitions": len(keys),
            "answers": answers,
            "build_file_s": build_s,
            "wall_s": wall,
            "cpu_s": float(samples[-1, 1] - samples[0, 1]) if len(samples) else float("nan"),
            "peak_rss_gb": peak_rss_gb(),
            "steps": out,
        }


def fit(partitions: list[int], seconds: list[float]) -> dict:
    """Least-squares line through the sizes, its RMS residual, and the growth ratio: the last interval's slope over
    the first's (three sizes or more), or over the cost per partition at the smaller size (two sizes: a step with a
    fixed cost has a ratio under 1, one whose cost per partition grows above it)."""
    x, y = np.asarray(partitions, float), np.asarray(seconds, float)
    slope, intercept = np.polyfit(x, y, 1)
    resid = float(np.sqrt(np.mean((y - (intercept + slope * x)) ** 2)))
    first = (y[1] - y[0]) / (x[1] - x[0]) if len(x) > 2 else y[0] / x[0]
    last = (y[-1] - y[-2]) / (x[-1] - x[-2])
    ratio = float(last / first) if first > 0.05 else float("nan")
    return {"slope": float(slope), "intercept": float(intercept), "residual": resid, "growth_ratio": ratio}


def with_fits(report: dict) -> dict:
    """``report`` with ``fits``: each step's line through its sizes (two sizes or more), and the whole run's."""
    sizes = report["sizes"]
    parts = [s["partitions"] for s in sizes]
    fits = {}
    for step in sorted({k for s in sizes for k in s["steps"]}):
        if all(step in s["steps"] for s in sizes) and len(sizes) >= 2:
            fits[step] = fit(parts, [s["steps"][step]["wall_s"] for s in sizes])
    if len(sizes) >= 2:
        fits["(whole run)"] = fit(parts, [s["wall_s"] for s in sizes])
    return {**report, "fits": fits}


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--models", default="3,9,27")
    ap.add_argument("--runs", type=int, default=10)
    ap.add_argument("--corpus", default=str(ROOT.parent / "shared" / "data" / "qs_world_university_rankings_2024.csv"))
    ap.add_argument("--one", type=int, default=0, help=argparse.SUPPRESS)  # a child: one size, JSON on stdout
    ap.add_argument("--no-write", action="store_true")
    ap.add_argument("--save", default="", help="also write every figure as JSON to this file")
    ap.add_argument(
        "--before", default="", help="a --save file of the code before a change: its wall times beside these"
    )
    ap.add_argument("--from-saved", default="", help="write the docs from this --save file, running nothing")
    ap.add_argument("--keep-reports", default="", help="copy each size's report folder to DIR/<N>-partitions")
    args = ap.parse_args()
    if args.one:
        print("RESULT " + json.dumps(one_size(args.one, args.runs, args.corpus, args.keep_reports)), flush=True)
        return
    before = json.loads(Path(args.before).read_text(encoding="utf-8")) if args.before else None
    if args.from_saved:
        write_doc(with_fits(json.loads(Path(args.from_saved).read_text(encoding="utf-8"))), before)
        return
    load = os.getloadavg()[0]
    started = datetime.now().isoformat(timespec="minutes")
    sizes = []
    for n in (int(x) for x in args.models.split(",")):
        done = subprocess.run(
            [sys.executable, __file__, "--one", str(n), "--runs", str(args.runs), "--corpus", args.corpus]
            + (["--keep-reports", str(Path(args.keep_reports).resolve())] if args.keep_reports else []),
            capture_output=True,
            text=True,
            cwd=ROOT,
        )
        line = [x for x in done.stdout.splitlines() if x.startswith("RESULT ")]
        if done.returncode or not line:
            raise SystemExit(f"size {n}: exit {done.returncode}\n{done.stderr[-3000:]}")
        sizes.append(json.loads(line[0][7:]))
        s = sizes[-1]
        print(
            f"{s['partitions']} partitions: {s['wall_s']:.0f} s, CPU {s['cpu_s']:.0f} s, peak {s['peak_rss_gb']:.2f} GB"
        )
    report = with_fits({"started": started, "load_at_start": load, "runs": args.runs, "sizes": sizes})
    print(json.dumps(report["fits"], indent=2))
    if args.save:
        Path(args.save).write_text(json.dumps(report, indent=2), encoding="utf-8")
    if not args.no_write:
        write_doc(report, before)


def _ratio(f: dict) -> float:
    r = f.get("growth_ratio", float("nan"))
    return r if r == r else float("nan")


def write_doc(r: dict, before: dict | None = None) -> None:
    from _doc import write_section

    sizes = r["sizes"]
    head = " | ".join(f"{s['partitions']} partitions: wall / CPU / peak" for s in sizes)
    old = {s["partitions"]: s for s in (before or {}).get("sizes", [])}
    was = " | ".join(f"before, {p} partitions: wall" for p in old)
    lines = [
        f"| step | {head} | slope (s per partition) | residual (s) | growth ratio |" + (f" {was} |" if old else ""),
        "| --- " * (4 + len(sizes) + len(old)) + "|",
    ]
    steps = sorted(r["fits"], key=lambda k: -r["fits"][k].get("slope", 0) if k != "(whole run)" else 1e9)
    for step in steps:
        f = r["fits"][step]
        cells = []
        for s in sizes:
            if step == "(whole run)":
                cells.append(f"{s['wall_s']:.0f} s / {s['cpu_s']:.0f} s / {s['peak_rss_gb']:.2f} GB")
            else:
                m = s["steps"][step]
                cells.append(f"{m['wall_s']:.1f} s / {m['cpu_s']:.1f} s / {m['peak_gb']:.2f} GB")
        ratio = _ratio(f)
        if ratio > SUPERLINEAR:
            flag = f" **{ratio:.2f}: faster than linear**"
        else:
            flag = f" {ratio:.2f}" if ratio == ratio else " n/a (under 0.05 s a partition)"
        then = []
        for s in old.values():
            m = s["wall_s"] if step == "(whole run)" else s["steps"].get(step, {}).get("wall_s", float("nan"))
            then.append(f"{m:.1f} s")
        lines.append(
            f"| {step} | "
            + " | ".join(cells)
            + f" | {f['slope']:.2f} | {f['residual']:.1f} |{flag} |"
            + (" " + " | ".join(then) + " |" if then else "")
        )
    faster = [k for k, f in r["fits"].items() if _ratio(f) > SUPERLINEAR]
    counts = ", ".join(f"{s['answers']:,}" for s in sizes)
    body = (
        f"`benchmarks/pipeline_scale.py`, started {r['started']} ({date.today().isoformat()}), {platform.machine()}, "
        f"{os.cpu_count()} cores, Python {platform.python_version()}, SQLite; load average {r['load_at_start']:.1f} at "
        f"the start. The study grid's partitions for {', '.join(str(s['models']) for s in sizes)} models x 6 templates "
        f"({', '.join(str(s['partitions']) for s in sizes)} partitions; {counts} "
        f"synthetic answers, {r['runs']} run(s) a profile), each size one `study_audit` run in its own process. Per "
        "step: wall time, CPU time (the process's, figure workers included) and peak resident memory while it ran; "
        "the least-squares slope per added partition over the sizes, its residual, and the growth ratio (the cost per "
        "added partition of the last interval over the first's, or, with two sizes, over the cost per partition at "
        f"the smaller; above {SUPERLINEAR} the step grows faster than linearly)"
        + (f"; beside them, the wall times of the code before ({before.get('label', 'before')})" if before else "")
        + ".\n\n"
        + "\n".join(lines)
        + "\n\n"
        + (f"**Faster than linear:** {', '.join(faster)}.\n" if faster else "No step grows faster than linearly.\n")
    )
    write_section("Pipeline at three sizes", body)


if __name__ == "__main__":
    main()
