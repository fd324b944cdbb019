"""Benchmark: peak memory and wall time of ``fairness-audit score`` as the number of partitions grows.

Issue 19 item 5: a 205,200-row responses file (19 models x 3 templates x 360 profiles x 10
runs) took 15:42 and peaked at 12.2 GB; an 11 MB file holding one 10 MB answer peaked at
2.6 GB. Target: peak resident memory under 4 GB whatever the number of partitions.

Two kinds of file, both generated here at run time (nothing from the QS export or from real
answers is written into the repository):

- ``grid``: ``--models`` N synthetic models x the templates ``base``, ``regional``, ``academic``
  x the study's 360 full profiles x ``--runs`` runs (N = 19, 10 runs: 205,200 rows), the answers
  written the ways models write (the generator of benchmarks/parse_match_tag.py, QS names from
  ``--corpus``), streamed to the file chunk by chunk;
- ``long``: one answer of ``--answer-mb`` MB (a three-item list, then a model stuck in a loop
  repeating prose that names universities) among ordinary answers, ``--file-mb`` MB in all.

``fairness-audit score`` runs on the file as a subprocess; a sampler reads /proc every 0.2 s:
the resident memory of the process tree (the score process and its figure workers, summed),
each process's own high-water mark (``VmHWM``: exact, not sampled) and which step was running
(the step named by the last log line), so the peak can be placed. The largest single process's
peak is also read from ``getrusage(RUSAGE_CHILDREN)`` after the run.

    .venv/bin/python benchmarks/memory_partitions.py [--models 2] [--runs 10] [--long] [--keep DIR] [--write]
        [--profile]

``--profile`` also samples, inside the score process, the main thread's stack (the project's own
frames) with each resident-memory reading, and prints where the memory grew (file:line, summed
growth while that line was running) and the peak of each step (the asset function on the stack).

``--write`` writes the measured row to the table of docs/benchmarks.md (section "Memory as
partitions grow") under ``--label`` (e.g. ``before``/``after``).
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import re
import resource
import subprocess
import sys
import tempfile
import threading
import time
from datetime import date
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path[:] = [p for p in sys.path if Path(p or ".").resolve() != ROOT / "benchmarks"]  # statistics.py shadows stdlib
sys.path.insert(0, str(ROOT))
sys.path.insert(1, str(ROOT / "benchmarks"))

DEFAULT_CORPUS = ROOT.parent / "shared" / "data" / "qs_world_university_rankings_2024.csv"
TEMPLATES = ("base", "regional", "academic")
SECTION = "Memory as partitions grow"
MB = 1024 * 1024


def _universities(corpus_path: Path):
    from fairness_assets.core.reference import corpus, geo
    from resources.settings import ALIASES_FILE

    unis, _, _ = corpus.load_corpus(str(corpus_path), geo.CountryResolver(geo.load_aliases(ALIASES_FILE)).resolve)
    return unis


def _full_profiles():
    from fairness_assets.core.reference import profiles
    from resources.settings import shipped_design

    full = profiles.full_set(shipped_design("study"))
    return list(full[["gender", "economic_class", "nationality"]].itertuples(index=False))


def model_names(n: int) -> list[str]:
    return [f"synthetic-model-{i + 1:02d}" for i in range(n)]


def write_grid_file(path: Path, corpus_path: Path, n_models: int, runs: int) -> int:
    """``n_models`` x base/regional/academic x 360 profiles x ``runs`` answers, as JSONL; one
    (model, template) partition is generated and written at a time, so the file never sits in memory."""
    from parse_match_tag import synth_responses

    unis, people = _universities(corpus_path), _full_profiles()
    n = 0
    with path.open("w", encoding="utf-8") as fh:
        for m, model in enumerate(model_names(n_models)):
            for t, template in enumerate(TEMPLATES):
                texts = synth_responses(len(people) * runs, unis, seed=1000 + 10 * m + t)["response"].tolist()
                k = 0
                for g, c, nat in people:
                    for run in range(runs):
                        fh.write(
                            json.dumps(
                                {
                                    "model": model,
                                    "template": template,
                                    "run": run,
                                    "gender": g,
                                    "economic_class": c,
                                    "nationality": nat,
                                    "response": texts[k],
                                }
                            )
                            + "\n"
                        )
                        k += 1
                n += k
    return n


LONG_KINDS = ("loop", "list", "unicode")


def long_answer(unis, size: int, kind: str = "loop") -> str:
    """An answer of ``size`` bytes (UTF-8): three recommendations, then ``loop``: prose naming
    universities, repeated; ``list``: a numbered list of universities and programs that never ends;
    ``unicode``: the prose loop in languages beyond Latin-1 (4 bytes per character in memory)."""
    from parse_match_tag import synth_responses

    head = synth_responses(1, unis, seed=3)["response"].iloc[0]
    names = unis["name"].head(40).tolist()
    if kind == "list":
        loop = "".join(f"{k + 4}. {u} – MSc Data Science\n" for k, u in enumerate(names))
    elif kind == "unicode":
        loop = " ".join(f"Vous pourriez aussi considérer {u} — 東京大学も良い選択です 🎓." for u in names) + "\n"
    else:
        loop = " ".join(f"You could also consider {u}, which is well known for research." for u in names) + "\n"
    body = loop * (size // len(loop) + 1)
    return (head + "\n\n" + body).encode("utf-8")[:size].decode("utf-8", errors="ignore")  # size: UTF-8 bytes


def write_long_file(path: Path, corpus_path: Path, answer_mb: float, file_mb: float, kind: str = "loop") -> int:
    """One answer of ``answer_mb`` MB among ordinary answers (model ``synthetic-model-01``, base
    template, 10 runs of the 360 profiles at most) until the file holds ``file_mb`` MB."""
    from parse_match_tag import synth_responses

    unis, people = _universities(corpus_path), _full_profiles()
    rows = [(g, c, nat, run) for run in range(10) for g, c, nat in people]
    texts = synth_responses(len(rows), unis, seed=11)["response"].tolist()
    target = int(file_mb * MB)
    records, size = [], 0
    for k, (g, c, nat, run) in enumerate(rows):  # the long answer's size in the file: its UTF-8 bytes
        text = long_answer(unis, int(answer_mb * MB), kind) if k == 0 else texts[k]
        records.append(
            {
                "model": "synthetic-model-01",
                "template": "base",
                "run": run,
                "gender": g,
                "economic_class": c,
                "nationality": nat,
                "response": text,
            }
        )
        size += len(text.encode("utf-8")) + 120
        if size >= target:
            break
    if path.suffix == ".csv":
        import pandas as pd

        pd.DataFrame(records).to_csv(path, index=False)
    else:
        with path.open("w", encoding="utf-8") as fh:
            for rec in records:
                fh.write(json.dumps(rec, ensure_ascii=False) + "\n")
    return len(records)


# ----------------------------------------------------------------------------- measuring
_STEP = re.compile(r" - dagster - \w+ - [^ ]+ - [0-9a-f-]{36} - ([A-Za-z_][\w]*) - ")


def _status_kb(pid: int, key: str) -> int:
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith(key + ":"):
                return int(line.split()[1])
    except (OSError, ValueError, IndexError):
        pass
    return 0


def _tree(pid: int) -> list[int]:
    """``pid`` and all its descendants (from /proc/*/stat)."""
    parent = {}
    for d in Path("/proc").iterdir():
        if d.name.isdigit():
            try:
                stat = (d / "stat").read_text()
                parent[int(d.name)] = int(stat[stat.rindex(")") + 2 :].split()[1])
            except (OSError, ValueError, IndexError):
                continue
    out, todo = [], [pid]
    while todo:
        p = todo.pop()
        out.append(p)
        todo += [c for c, pp in parent.items() if pp == p]
    return out


def measure(cmd: list[str], log_path: Path, env: dict, interval: float = 0.2) -> dict:
    """Run ``cmd``; its wall time, the peak resident memory of its process tree (sampled sum) and of
    each of its processes (VmHWM), and the tree's peak per step (the step of the last log line)."""
    phase = ["import (command line)"]
    by_phase: dict[str, float] = {}
    hwm: dict[int, int] = {}
    tree_peak = [0, ""]
    t0 = time.perf_counter()
    proc = subprocess.Popen(
        cmd,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        env=env,
        text=True,
        encoding="utf-8",
        errors="replace",
        bufsize=1,
    )
    done = threading.Event()

    def sample() -> None:
        while not done.is_set():
            total = 0
            for p in _tree(proc.pid):
                rss = _status_kb(p, "VmRSS")
                total += rss
                hwm[p] = max(hwm.get(p, 0), _status_kb(p, "VmHWM"))
            by_phase[phase[0]] = max(by_phase.get(phase[0], 0), total)
            if total > tree_peak[0]:
                tree_peak[:] = [total, phase[0]]
            done.wait(interval)

    sampler = threading.Thread(target=sample, daemon=True)
    sampler.start()
    with log_path.open("w", encoding="utf-8") as log:
        for line in proc.stdout:
            log.write(f"{time.perf_counter() - t0:9.2f} {line}")
            log.flush()
            m = _STEP.search(line)
            if m:
                phase[0] = m.group(1)
            elif line.startswith("scoring partitions"):
                phase[0] = "run start"
            elif "tables written" in line or line.startswith("exported") or line.startswith("report written"):
                phase[0] = "export"
    rc = proc.wait()
    wall = time.perf_counter() - t0
    done.set()
    sampler.join()
    if rc:
        tail = log_path.read_text(encoding="utf-8").splitlines()[-15:]
        raise RuntimeError(f"{' '.join(cmd)} failed (exit {rc}):\n" + "\n".join(tail))
    main_peak = hwm.get(proc.pid, 0)
    workers = sorted((v for p, v in hwm.items() if p != proc.pid), reverse=True)
    return {
        "wall_s": round(wall, 1),
        "peak_tree_rss_gb": round(tree_peak[0] / MB, 2),
        "peak_phase": tree_peak[1],
        "peak_main_hwm_gb": round(main_peak / MB, 2),
        "peak_worker_hwm_gb": round(workers[0] / MB, 2) if workers else 0.0,
        "children_maxrss_gb": round(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / MB, 2),
        "by_phase_gb": {k: round(v / MB, 2) for k, v in sorted(by_phase.items(), key=lambda kv: -kv[1])},
    }


# ----------------------------------------------------------------------------- profiling
def _child(samples_path: str, argv: list[str]) -> int:
    """Run ``fairness-audit`` with ``argv`` in this process, sampling the resident memory and the main
    thread's stack (frames of the project, not of libraries) every 0.1 s into ``samples_path``."""
    for code in reversed([p for p in os.environ.get("PYTHONPATH", "").split(os.pathsep) if p]):
        sys.path.insert(0, code)  # --code: that checkout's modules, not this one's
    import fairness_assets
    from fairness_assets.cli import main as cli_main

    root = str(Path(fairness_assets.__file__).resolve().parents[1])
    main_id = threading.get_ident()
    venv = str(Path(sys.prefix).resolve())
    done = threading.Event()

    def frames() -> list[str]:
        frame, out = sys._current_frames().get(main_id), []
        while frame is not None:
            f = frame.f_code.co_filename
            if f.startswith(root) and not f.startswith(venv) and "/benchmarks/" not in f:
                out.append(f"{Path(f).relative_to(root)}:{frame.f_lineno} {frame.f_code.co_name}")
            frame = frame.f_back
        return out[::-1]

    def sample() -> None:
        t0 = time.perf_counter()
        with open(samples_path, "w", encoding="utf-8") as fh:
            while not done.is_set():
                fh.write(
                    json.dumps(
                        {
                            "t": round(time.perf_counter() - t0, 2),
                            "rss": _status_kb(os.getpid(), "VmRSS"),
                            "stack": frames(),
                        }
                    )
                    + "\n"
                )
                done.wait(0.1)

    thread = threading.Thread(target=sample, daemon=True)
    thread.start()
    try:
        return cli_main(argv)
    finally:
        done.set()
        thread.join()


STEP_FILES = ("fairness_assets/defs/", "fairness_assets/export.py", "fairness_assets/local.py")


def hotspots(samples_path: Path, top: int = 15) -> dict:
    """Where the score process's memory grew: the resident-memory growth between two samples is put
    on the innermost project line running at the second; per step (the innermost function of an
    asset module, of local.py or of export.py on the stack), the peak and the summed growth."""
    samples = [json.loads(line) for line in samples_path.read_text(encoding="utf-8").splitlines() if line.strip()]
    growth: dict[str, float] = {}
    peak_at: dict[str, float] = {}
    steps: dict[str, float] = {}
    step_growth: dict[str, float] = {}
    for prev, cur in zip(samples, samples[1:], strict=False):
        stack = cur["stack"]
        where = stack[-1] if stack else "(outside the project)"
        delta = cur["rss"] - prev["rss"]
        if delta > 0:
            growth[where] = growth.get(where, 0) + delta
        peak_at[where] = max(peak_at.get(where, 0), cur["rss"])
        frame = next((f for f in reversed(stack) if f.startswith(STEP_FILES)), None)
        step = (
            "(start-up)"
            if frame is None
            else frame.split(" ", 1)[1] + " (" + frame.split(" ", 1)[0].rsplit(":", 1)[0] + ")"
        )
        db = next((f for f in reversed(stack) if f.startswith("resources/database.py")), None)
        if db is not None and (frame is None or stack.index(db) > stack.index(frame)):
            step += " > database." + db.split(" ", 1)[1]  # the results database's reads and writes
        steps[step] = max(steps.get(step, 0), cur["rss"])
        if delta > 0:
            step_growth[step] = step_growth.get(step, 0) + delta
    gb = lambda kb: round(kb / MB, 3)  # noqa: E731
    return {
        "growth_gb": {k: gb(v) for k, v in sorted(growth.items(), key=lambda kv: -kv[1])[:top]},
        "peak_by_line_gb": {k: gb(v) for k, v in sorted(peak_at.items(), key=lambda kv: -kv[1])[:top]},
        "peak_by_step_gb": {k: gb(v) for k, v in sorted(steps.items(), key=lambda kv: -kv[1])},
        "growth_by_step_gb": {k: gb(v) for k, v in sorted(step_growth.items(), key=lambda kv: -kv[1])[:top]},
    }


def main() -> None:
    if sys.argv[1:2] == ["--profile-child"]:
        sys.exit(_child(sys.argv[2], sys.argv[3:]))
    ap = argparse.ArgumentParser()
    ap.add_argument("--models", type=int, default=2, help="synthetic models (19: the issue's 205,200-row file)")
    ap.add_argument("--runs", type=int, default=10)
    ap.add_argument("--long", action="store_true", help="the one-long-answer file instead of the grid")
    ap.add_argument("--answer-mb", type=float, default=10.0)
    ap.add_argument("--file-mb", type=float, default=11.0)
    ap.add_argument("--long-kind", choices=LONG_KINDS, default="loop", help="what the long answer holds")
    ap.add_argument("--format", choices=("jsonl", "csv"), default="jsonl", help="format of the long-answer file")
    ap.add_argument("--corpus", default=str(DEFAULT_CORPUS))
    ap.add_argument("--keep", default="", help="folder for the responses file, the log and the output (kept)")
    ap.add_argument("--label", default="", help="row label in docs/benchmarks.md, e.g. before / after")
    ap.add_argument(
        "--code",
        default="",
        help="run the score command from this checkout of the project (its "
        "folder first on PYTHONPATH; e.g. `git archive HEAD | tar -x -C DIR`) instead of this one",
    )
    ap.add_argument("--write", action="store_true", help="write the figures to docs/benchmarks.md")
    ap.add_argument(
        "--write-saved",
        nargs="+",
        default=[],
        metavar="JSON",
        help="write the rows of earlier runs (their printed JSON, saved to files) and exit",
    )
    ap.add_argument("--profile", action="store_true", help="also sample the score process's stack: where memory grows")
    args = ap.parse_args()
    for saved in args.write_saved:
        text = Path(saved).read_text(encoding="utf-8")
        write_row(json.loads(text[text.index("\n{") + 1 :] if not text.startswith("{") else text))
    if args.write_saved:
        return
    if not Path(args.corpus).exists():
        sys.exit(f"--corpus {args.corpus}: file not found (the QS 2024 export)")
    with tempfile.TemporaryDirectory(prefix="memory-partitions-") as tmp:
        work = Path(args.keep or tmp)
        work.mkdir(parents=True, exist_ok=True)
        responses = work / (
            f"long_answer_{args.long_kind}.{args.format}"
            if args.long
            else f"grid_{args.models}x3x360x{args.runs}.jsonl"
        )
        t0 = time.perf_counter()
        rows = (
            write_long_file(responses, Path(args.corpus), args.answer_mb, args.file_mb, args.long_kind)
            if args.long
            else write_grid_file(responses, Path(args.corpus), args.models, args.runs)
        )
        build_s = time.perf_counter() - t0
        size_mb = responses.stat().st_size / MB
        print(f"{responses}: {rows:,} rows, {size_mb:.1f} MB, written in {build_s:.1f} s", flush=True)
        exe = Path(sys.executable).parent / "fairness-audit"
        cmd = [str(exe), "score", "--responses", str(responses), "--corpus", args.corpus, "--out", str(work / "out")]
        if args.profile:
            cmd = [sys.executable, str(Path(__file__).resolve()), "--profile-child", str(work / "samples.jsonl")] + cmd[
                1:
            ]
        env = {**os.environ, "PYTHONUNBUFFERED": "1"}
        env.pop("FAIRNESS_DATABASE_URL", None)
        if args.code:
            env["PYTHONPATH"] = os.pathsep.join([str(Path(args.code).resolve()), env.get("PYTHONPATH", "")]).rstrip(
                os.pathsep
            )
        result = measure(cmd, work / "score.log", env)
        if args.profile:
            result["profile"] = hotspots(work / "samples.jsonl")
        result.update(
            {
                "kind": f"long ({args.long_kind}, {args.format})" if args.long else "grid",
                "models": 1 if args.long else args.models,
                "runs": args.runs,
                "rows": rows,
                "file_mb": round(size_mb, 1),
                "partitions": 1 if args.long else 3 * args.models,
                "date": date.today().isoformat(),
                "machine": f"{platform.machine()}, {os.cpu_count()} cores, Python {platform.python_version()}",
                "label": args.label,
                "code": args.code or str(ROOT),
            }
        )
        print(json.dumps(result, indent=2))
        if args.write:
            write_row(result)


HEADER = (
    "| code | file | rows | partitions | file MB | wall time | peak RSS, process tree | score process | "
    "largest worker |\n| --- | --- | --- | --- | --- | --- | --- | --- | --- |\n"
)


def write_row(r: dict) -> None:
    """Add (or replace: same label, file kind and rows) this measurement's row in the section's table;
    the section's text around the table is kept."""
    from _doc import DOC, write_section

    text = DOC.read_text(encoding="utf-8")
    start = text.find(f"## {SECTION}\n")
    body = ""
    if start >= 0:
        end = text.find("\n## ", start + 3)
        body = text[start + len(f"## {SECTION}\n") : end if end >= 0 else len(text)].strip("\n")
    intro, table, outro = body, "", ""
    if HEADER in body:
        intro, rest = body.split(HEADER, 1)
        lines = rest.split("\n")
        n = next((i for i, ln in enumerate(lines) if not ln.startswith("|")), len(lines))
        table, outro = "\n".join(lines[:n]), "\n".join(lines[n:]).strip("\n")
    kind = "grid" if r["kind"] == "grid" else f"one 10 MB answer, {r['kind'][6:-1]}"
    wall = f"{int(r['wall_s'] // 60)}:{r['wall_s'] % 60:04.1f}"
    label = r["label"] or r["date"]
    row = (
        f"| {label} | {kind} | {r['rows']:,} | {r['partitions']} | {r['file_mb']} | {wall} | "
        f"**{r['peak_tree_rss_gb']:.2f} GB** | {r['peak_main_hwm_gb']:.2f} GB | {r['peak_worker_hwm_gb']:.2f} GB |"
    )
    key = f"| {label} | {kind} | {r['rows']:,} |"
    lines = [ln for ln in table.split("\n") if ln and not ln.startswith(key)] + [row]
    if not intro.strip():
        intro = (
            f"`benchmarks/memory_partitions.py`, {r['date']}, {r['machine']}. `fairness-audit score` on a "
            "synthetic responses file (models x base/regional/academic x the study's 360 profiles x 10 runs; or "
            "one 10 MB answer in an 11 MB file), run as a subprocess; peak resident memory of its process tree "
            "(sampled every 0.2 s, figure workers included), the score process's own high-water mark (VmHWM) "
            "and the largest worker's.\n"
        )
    write_section(
        SECTION, intro.rstrip("\n") + "\n\n" + HEADER + "\n".join(lines) + "\n" + ("\n" + outro + "\n" if outro else "")
    )


if __name__ == "__main__":
    main()
