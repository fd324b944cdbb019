"""Benchmark: the whole pipeline after generation at the study's size, through Dagster.

A synthetic responses file of the study grid for three models (every template: 360 full
profiles x base/regional/academic + 46 reduced-context profiles, 10 runs: 33,780 answers),
written the ways models write (JSON, fenced JSON, numbered lists, Markdown tables, prose;
QS names skewed to the top, shortened, lower-cased, misspelt, 5% wrong countries; the
generator of benchmarks/parse_match_tag.py), is imported and materialized downstream in one
run of the ``study_audit`` job (every model x template partition: the assets' single-run
backfill policy) with the in-process executor: generations (import), recommendations (parse,
match, tag, the parse-quality checks), subject tags, scores, analysis tables, statistics,
figures, drift and the report. Reported: wall time per asset (from the run's step events), the
whole run, and the process's peak resident memory, on SQLite and (``--postgres URL``) on
PostgreSQL. Target (issue 12): <= 3 minutes end to end on 2 cores, peak RSS <= 4 GB.

    .venv/bin/python benchmarks/pipeline_study.py [--runs 10] [--postgres postgresql://...] [--no-write] [--keep DIR]
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import resource
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
MODELS = ("llama-3.1-8b-instruct", "gemma-7b-it", "mistral-7b-instruct-v0.3")  # the study preset's models


def synthetic_study_file(
    path: Path,
    corpus_path: Path,
    runs: int,
    models=MODELS,
    templates=("base", "regional", "academic", "gender_only", "class_only", "nationality_only"),
) -> int:
    """Write the study grid's answers for ``models`` x ``templates`` to ``path`` (JSONL); returns their number."""
    from parse_match_tag import synth_responses

    from fairness_assets.core.reference import corpus, geo, profiles
    from resources.settings import ALIASES_FILE, shipped_design

    table = profiles.design_profiles(shipped_design("study"))
    full, reduced = table[table["profile_set"] == "full"], table[table["profile_set"] != "full"]
    rows = []
    for model in models:
        for template in [t for t in ("base", "regional", "academic") if t in templates]:
            rows += [
                (model, template, run, p.gender, p.economic_class, p.nationality)
                for p in full.itertuples(index=False)
                for run in range(runs)
            ]
        rows += [
            (model, p.profile_set, run, p.gender, p.economic_class, p.nationality)
            for p in reduced.itertuples(index=False)
            for run in range(runs)
            if p.profile_set in templates
        ]
    unis, _, _ = corpus.load_corpus(str(corpus_path), geo.CountryResolver(geo.load_aliases(ALIASES_FILE)).resolve)
    texts = synth_responses(len(rows), unis)["response"]
    with path.open("w", encoding="utf-8") as fh:
        for (model, template, run, g, c, n), text in zip(rows, texts, strict=False):
            rec = {"model": model, "template": template, "run": run, "response": text}
            rec.update({k: v for k, v in (("gender", g), ("economic_class", c), ("nationality", n)) if v})
            fh.write(json.dumps(rec) + "\n")
    return len(rows)


def run_pipeline(
    responses: Path, corpus_path: Path, home: Path, database_url: str, models=MODELS, templates: tuple = ()
) -> dict:
    """One run of study_audit over every partition, in process; per-step wall times and the run's."""
    import dagster as dg

    os.environ.update(
        {
            "FAIRNESS_RESPONSES": str(responses),
            "FAIRNESS_QS_CORPUS": str(corpus_path),
            "FAIRNESS_HOME": str(home),
            "FAIRNESS_DESIGN": "study",
        }
    )
    if database_url:
        os.environ["FAIRNESS_DATABASE_URL"] = database_url
    else:
        os.environ.pop("FAIRNESS_DATABASE_URL", None)
    os.environ.pop("FAIRNESS_MODEL_REGISTRY", None)  # the study's models are in the default registry
    from fairness_assets.definitions import defs
    from fairness_assets.defs.partitions import MODEL_PARTITIONS

    job = defs().resolve_job_def("study_audit")
    instance = dg.DagsterInstance.ephemeral()
    instance.add_dynamic_partitions(MODEL_PARTITIONS.name, list(models))
    keys = [
        k
        for k in job.partitions_def.get_partition_keys(dynamic_partitions_store=instance)
        if not templates or k.keys_by_dimension["template"] in templates
    ]
    t0 = time.perf_counter()
    result = job.execute_in_process(
        instance=instance,
        raise_on_error=False,
        tags={"dagster/asset_partition_range_start": str(keys[0]), "dagster/asset_partition_range_end": str(keys[-1])},
    )
    wall = time.perf_counter() - t0
    if not result.success:
        failures = [e.message for e in result.all_events if e.is_failure]
        raise RuntimeError(f"study_audit failed: {failures[:3]}")
    steps = step_seconds(instance, result.run_id)
    return {"wall_s": wall, "steps": dict(sorted(steps.items(), key=lambda kv: -kv[1])), "partitions": len(keys)}


def step_seconds(instance, run_id: str) -> dict[str, float]:
    """{step: seconds from its STEP_START to its STEP_SUCCESS} of run ``run_id`` of ``instance``."""
    return {step: end - start for step, (start, end) in step_intervals(instance, run_id).items()}


def step_intervals(instance, run_id: str) -> dict[str, tuple[float, float]]:
    """{step: (the time of its STEP_START, of its STEP_SUCCESS)} of run ``run_id`` of ``instance``."""
    import dagster as dg

    starts, steps = {}, {}
    # only the step events: every event of a run of 162 partitions (each materialization's metadata, its PNG
    # previews included) read at once took the harness past 23 GB
    kinds = {dg.DagsterEventType.STEP_START, dg.DagsterEventType.STEP_SUCCESS}
    for record in instance.all_logs(run_id, of_type=kinds):
        ev = record.dagster_event
        if ev is None or not ev.step_key:
            continue
        if ev.event_type_value == "STEP_START":
            starts[ev.step_key] = record.timestamp
        elif ev.event_type_value == "STEP_SUCCESS" and ev.step_key in starts:
            steps[ev.step_key] = (starts[ev.step_key], record.timestamp)
    return steps


def peak_rss_gb() -> float:
    """This process's peak resident memory. /proc's VmHWM belongs to this program alone; getrusage's
    ru_maxrss can carry the high-water mark of the process that started this one (Linux keeps it
    across exec), e.g. a large test runner."""
    try:
        for line in Path("/proc/self/status").read_text().splitlines():
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) / 1024 / 1024
    except OSError:
        pass
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024 / 1024


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--runs", type=int, default=10)
    ap.add_argument("--corpus", default=str(DEFAULT_CORPUS))
    ap.add_argument("--postgres", default="", help="also run on this PostgreSQL database URL")
    ap.add_argument("--small", action="store_true", help="the tests' size: one model, the base template, one run")
    ap.add_argument("--no-write", action="store_true")
    ap.add_argument("--keep", default="", help="keep each database's home (its SQLite results file) under this folder")
    ap.add_argument(
        "--save",
        default="",
        help="also save the figures as JSON to this file (benchmarks/choosing_cost.py compares two such files)",
    )
    args = ap.parse_args()
    models, templates = (MODELS[:1], ("base",)) if args.small else (MODELS, ())
    if args.small:
        args.runs = 1
    out = {"runs": args.runs, "databases": {}}
    with tempfile.TemporaryDirectory() as tmp:
        tmp = Path(tmp)
        t0 = time.perf_counter()
        out["answers"] = synthetic_study_file(
            tmp / "responses.jsonl",
            Path(args.corpus),
            args.runs,
            models,
            templates or ("base", "regional", "academic", "gender_only", "class_only", "nationality_only"),
        )
        out["build_file_s"] = time.perf_counter() - t0
        targets = [("SQLite", "")] + ([("PostgreSQL", args.postgres)] if args.postgres else [])
        for name, url in targets:
            home = (Path(args.keep) if args.keep else tmp) / name
            home.mkdir(parents=True)
            out["databases"][name] = run_pipeline(
                tmp / "responses.jsonl", Path(args.corpus), home, url, models, templates
            )
            print(json.dumps({name: out["databases"][name]}, indent=2), flush=True)
    out["peak_rss_gb"] = peak_rss_gb()
    # the figures are drawn in worker processes (spawned: their peaks are their own); the largest one
    out["peak_child_rss_gb"] = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024 / 1024
    print(json.dumps({k: v for k, v in out.items() if k != "databases"}, indent=2))
    if args.save:
        Path(args.save).write_text(json.dumps(out, indent=2), encoding="utf-8")
    if not args.no_write:
        write_doc(out)


def write_doc(r: dict) -> None:
    from _doc import write_section

    lines = []
    walls = {name: d["wall_s"] for name, d in r["databases"].items()}
    for name, d in r["databases"].items():
        lines.append(
            f"**{name}**: {d['wall_s']:.1f} s for the run ({d['partitions']} partitions); per asset:\n\n"
            "| step | seconds |\n| --- | --- |\n" + "".join(f"| {k} | {v:.1f} |\n" for k, v in d["steps"].items())
        )
    write_section(
        "Pipeline at the study's size",
        (
            f"`benchmarks/pipeline_study.py`, {date.today().isoformat()}, {platform.machine()}, {os.cpu_count()} "
            f"cores, Python {platform.python_version()}. A synthetic responses file of the study grid for three models "
            f"({r['answers']:,} answers, {r['runs']} runs; five answer formats) imported and materialized downstream "
            "in one run of `study_audit` (every model x template partition, in-process executor). Peak resident memory "
            f"of the process: **{r['peak_rss_gb']:.2f} GB** (target <= 4 GB), of the largest figure-drawing worker "
            f"process at most {r.get('peak_child_rss_gb', 0):.2f} GB (getrusage's figure, an upper bound: Linux "
            "carries the parent's high-water mark into a forked child); target <= 3 minutes end to end.\n\n"
            + "\n".join(lines)
            + "\n**Targets:** "
            + "; ".join(
                f"{name} {w:.0f} s end to end ({'met' if w <= 180 else f'missed by {w - 180:.0f} s'})"
                for name, w in walls.items()
            )
            + f"; peak RSS {r['peak_rss_gb']:.2f} GB ({'met' if r['peak_rss_gb'] <= 4 else 'missed'}). The figures of "
            "the 18 partitions are drawn in worker processes (one per core: `ReportResource.figure_workers`); "
            "before that change the same benchmark measured 324 s on SQLite, 140 s of it in `audit_figures` "
            "(on a machine shared with test runs).\n"
        ),
    )


if __name__ == "__main__":
    main()
