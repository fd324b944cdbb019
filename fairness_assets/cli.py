"""Command line.

``fairness-audit demo``   runs the main job and says where the results are;
``fairness-audit run JOB`` runs any job of the code location;
``fairness-audit score --responses FILE --corpus QS.csv --out DIR`` scores a responses file
without a Dagster instance (same core functions as the assets).
"""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

from resources.settings import PROJECT_ROOT, results_dir


def _dagster_home() -> Path:
    home = Path(os.environ.get("DAGSTER_HOME") or (PROJECT_ROOT / "data" / "dagster_home"))
    home.mkdir(parents=True, exist_ok=True)
    os.environ["DAGSTER_HOME"] = str(home)
    config = home / "dagster.yaml"
    if not config.exists():  # a fresh instance: no telemetry on offline machines
        config.write_text("telemetry:\n  enabled: false\n")
    return home


def run_job(job_name: str) -> int:
    home = _dagster_home()
    from dagster import DagsterInstance

    from .defs.operations.jobs import JOB_PRESETS
    from .defs.partitions import MODEL_PARTITIONS
    from .definitions import defs

    instance = DagsterInstance.get()
    known = sorted(j.name for j in defs.resolve_all_job_defs() if not j.name.startswith("__"))
    if job_name not in known:
        raise UsageError(f"unknown job {job_name!r}; jobs of the code location: {', '.join(known)}")
    job = defs.resolve_job_def(job_name)
    partition_keys: list = [None]
    if job.partitions_def is not None:
        from resources.settings import MODEL_REGISTRY, AuditGridResource

        # the grid the job runs, from the same environment the definitions read (their EnvVars
        # cannot be read outside a run)
        cfg = AuditGridResource(
            preset=JOB_PRESETS.get(job_name) or os.environ.get("FAIRNESS_PRESET") or "demo",
            model_registry_path=os.environ.get("FAIRNESS_MODEL_REGISTRY") or str(MODEL_REGISTRY)).resolve()
        instance.add_dynamic_partitions(MODEL_PARTITIONS.name, list(cfg.models))
        partition_keys = [f"{m}|{t}" for m in cfg.models for t in cfg.templates]
    failed = 0
    for key in partition_keys:
        where = f" for partition {key}" if key else ""
        print(f"[fairness-audit] running job {job_name!r}{where} (Dagster instance: {home})", flush=True)
        result = job.execute_in_process(instance=instance, raise_on_error=False, partition_key=key)
        print("", flush=True)
        if not result.success:
            print(f"[fairness-audit] job {job_name!r}{where} failed (run id {result.run_id})", file=sys.stderr)
            for line in failure_causes(instance, result.run_id):  # last: the cause, not only "step X failed"
                print(f"[fairness-audit] {line}", file=sys.stderr)
            failed += 1
            continue
        print(f"[fairness-audit] job {job_name!r}{where} succeeded (run id {result.run_id})")
        for event in result.get_asset_materialization_events():
            rows = event.materialization.metadata.get("dagster/row_count")
            print(f"  {event.asset_key.to_user_string():<24} {getattr(rows, 'value', rows)} row(s)")
        for check in result.get_asset_check_evaluations():
            status = "pass" if check.passed else f"FAIL ({check.severity.value})"
            observed = check.metadata.get("observed")
            print(f"  check {check.check_name:<22} {status:<14} observed {getattr(observed, 'value', observed)}")
        for event in result.get_asset_materialization_events():
            if event.asset_key.to_user_string() == "audit_report":
                meta = event.materialization.metadata
                report = getattr(meta.get("report"), "value", None)
                print(f"[fairness-audit] audit report: {report} (and report.md beside it); "
                      f"{getattr(meta.get('significant_findings'), 'value', 0)} significant finding(s)")
    if failed:
        return 1
    from resources.database import redact
    from resources.settings import default_database_url

    # database.url is an EnvVar (not readable outside a run) when FAIRNESS_DATABASE_URL is set
    print(f"[fairness-audit] results database: {redact(os.environ.get('FAIRNESS_DATABASE_URL') or default_database_url())}")
    print(f"[fairness-audit] results folder:   {results_dir()}")
    print("[fairness-audit] browse the run and the assets with: .venv/bin/fairness-audit ui  (then http://127.0.0.1:3000)")
    return 0


class UsageError(ValueError):
    """A command line the CLI cannot run (unknown job, unusable --out); printed as one line."""


def _trim(text: str, limit: int = 600) -> str:
    text = text.strip()
    return text if len(text) <= limit else text[:limit].rstrip() + " …"


def _error_text(error) -> str:
    """The message of a step's error: the first cause below Dagster's own wrappers (the user
    code's exception), without the module path of its class, passwords masked."""
    import re

    from resources.secrets import redact

    chosen, err = error, error
    while err is not None:
        if not (err.cls_name or "").startswith("Dagster"):
            chosen = err
            break
        chosen, err = err, err.cause
    message = re.sub(r"^(?:[A-Za-z_][\w]*\.)+(?=[A-Za-z_]\w*: )", "", chosen.message.strip())
    return redact(_trim(message))


def failure_causes(instance, run_id: str) -> list[str]:
    """One line per distinct failure of a run, read from its STEP_FAILURE events (the run's
    failure message when no step failed)."""
    from dagster import DagsterEventType

    by_message: dict[str, list[str]] = {}
    for record in instance.all_logs(run_id, of_type=DagsterEventType.STEP_FAILURE):
        event = record.dagster_event
        data = event.step_failure_data if event else None
        text = _error_text(data.error) if data is not None and data.error is not None else "(no error recorded)"
        by_message.setdefault(text, []).append(event.step_key or "?")
    lines = []
    for text, steps in by_message.items():
        names = ", ".join(repr(s) for s in dict.fromkeys(steps))
        lines.append(f"cause: step{'s' if len(steps) > 1 else ''} {names} failed: {text}")
    if not lines:
        for record in instance.all_logs(run_id, of_type=DagsterEventType.RUN_FAILURE):
            event = record.dagster_event
            error = getattr(event.event_specific_data, "error", None) if event else None
            lines.append("cause: " + (_error_text(error) if error is not None else _trim(event.message or "run failed")))
    return lines


def _output_folder(out: str) -> Path:
    """``--out`` as a folder that can be written, made if missing; UsageError naming the path otherwise."""
    import tempfile

    path = Path(out).expanduser()
    if path.exists() and not path.is_dir():
        raise UsageError(f"--out {path} is an existing file, not a folder; give a folder (it is created if missing)")
    try:
        path.mkdir(parents=True, exist_ok=True)
        with tempfile.NamedTemporaryFile(dir=path, prefix=".write-test-"):
            pass
    except OSError as exc:
        raise UsageError(f"--out {path} cannot be written: {exc.strerror or exc}") from None
    return path


TABLES = ["recommendations", "drs_items", "drs_responses", "grs_by_country", "drs_summary", "academic_alignment",
          "volume_diversity", "concentration", "reduced_context_top"]


def score_file(responses: str, corpus_path: str, out: str, tagger: str = "rules", rank_column: str = "2024 RANK",
               log=print) -> dict:
    """The `score` command: parse -> match -> tag -> score a responses file, without Dagster.

    Runs the same core functions as the assets and writes every table as CSV to ``out``.
    """
    import json

    import pandas as pd

    from resources.settings import ReferenceDataResource, ScoringResource
    from resources.tagger import SubjectTaggerResource

    from .core import corpus as corpus_core
    from .core import geo, match, metrics, understanding
    from .core import prompts as prompts_core
    from .core import responses as responses_core
    from .core.generation import sample_ids
    from .core.corpus import file_sha256

    outdir = _output_folder(out)  # before any work
    reference = ReferenceDataResource(corpus_path=corpus_path, rank_column=rank_column)
    resolver = geo.CountryResolver(geo.load_aliases(reference.country_aliases_path))
    unis, _, report = corpus_core.load_corpus(
        corpus_path, lambda s: resolver.resolve(s, what=f"corpus country (in {corpus_path})"),
        corpus_core.RepParams(reference.rep_r_min, reference.rep_r_max), rank_column)
    for w in report.warnings:
        log(f"warning: {w}")
    log(f"corpus: {len(unis)} universities in {unis['iso3'].nunique()} countries ({corpus_path})")
    frame, rep = responses_core.read_responses(responses, resolver.iso3)
    templates = prompts_core.load_templates(reference.templates_dir)
    tagger_res = SubjectTaggerResource(method=tagger)
    index = match.UniversityIndex.build(unis, match.load_university_aliases(reference.university_aliases_path))
    tag_fn = lambda programs: tagger_res.tag(programs)  # noqa: E731
    sha = file_sha256(responses)
    if rep.split_items:
        known = frame["template"].isin(list(templates))
        rejects = pd.concat([rep.rejects, pd.DataFrame(
            [(r, "template", t, f"unknown template (known: {sorted(templates)})")
             for r, t in zip(frame.loc[~known, "source_row"], frame.loc[~known, "template"])],
            columns=["row", "column", "value", "reason"])], ignore_index=True)
        items_in = sample_ids(frame[known]).assign(audit_id=f"import-{sha[:12]}")
        recs = understanding.recommendations_from_items(items_in, resolver, index, tag_fn)
    else:
        gens, rejects2 = responses_core.to_generations(frame, templates, str(responses), sha)
        rejects = pd.concat([rep.rejects, rejects2], ignore_index=True)
        recs = understanding.build_recommendations(gens, resolver, index, tag_fn)
    n_rejected = int(rejects["row"].nunique()) if len(rejects) else 0
    log(f"responses: {rep.rows_read} row(s) read, {n_rejected} not usable (see rejects.csv), "
        f"{recs['response_id'].nunique()} response(s) scored")
    params = ScoringResource().params(prompts_core.student_interests(templates.values()))
    overrides = geo.load_capital_overrides(reference.capital_overrides_path)
    students = {n: resolver.iso3(n) for n in recs["nationality"].dropna().unique()}
    needed = set(unis["iso3"]) | set(recs["iso3"].dropna()) | {v for v in students.values() if v}
    dist = geo.distance_lookup(geo.capital_distance_matrix(geo.capitals_table(needed, overrides)))
    results: dict[str, list] = {name: [] for name in TABLES}
    per_partition = {}
    for (model, template), part in recs.groupby(["model", "template"], sort=True):
        t = metrics.score_partition(part, unis, dist, students, params)
        per_partition[(model, template)] = t
        results["recommendations"].append(part)
        for name in TABLES[1:]:
            results[name].append(t[name].assign(model=model, template=template))
    written = {}
    for name, frames in results.items():
        frames = [f for f in frames if not f.empty] or frames[:1]
        df = pd.concat(frames, ignore_index=True) if frames else pd.DataFrame()
        front = [c for c in ("model", "template") if c in df.columns]
        df = df[front + [c for c in df.columns if c not in front]]
        df.to_csv(outdir / f"{name}.csv", index=False)
        written[name] = df
    comparisons = []
    for model in sorted({m for m, _ in per_partition}):
        if (model, "base") in per_partition and (model, "regional") in per_partition:
            b, r = per_partition[(model, "base")], per_partition[(model, "regional")]
            cmp_ = metrics.base_vs_regional(b["drs_summary"], r["drs_summary"], b["grs_by_country"], r["grs_by_country"])
            comparisons.append({k: v.assign(model=model) for k, v in cmp_.items()})
    for key in ("drs_change", "grs_change"):
        df = pd.concat([c[key] for c in comparisons], ignore_index=True) if comparisons else pd.DataFrame(columns=["model"])
        df.to_csv(outdir / f"base_vs_regional_{key}.csv", index=False)
        written[f"base_vs_regional_{key}"] = df
    rejects.to_csv(outdir / "rejects.csv", index=False)
    (outdir / "params.json").write_text(json.dumps(params.as_dict(), indent=2, sort_keys=True))
    written.update(_write_report(outdir, recs, per_partition, comparisons, templates, tagger_res, params,
                                 {"responses file": str(responses), "responses sha256": sha,
                                  "corpus": str(corpus_path), "corpus sha256": file_sha256(corpus_path)}, log))
    summary = _summary(written, per_partition, n_rejected, rep.rows_read, corpus_path, responses)
    (outdir / "summary.md").write_text(summary, encoding="utf-8")
    log(summary)
    log(f"tables written to {outdir}")
    return written


def _write_report(outdir: Path, recs, per_partition, comparisons, templates, tagger_res, params, sources, log) -> dict:
    """report.html / report.md / figures/ and the statistics tables, as the audit_report asset
    builds them (core.audit_report), for the partitions of a scored file."""
    import pandas as pd

    from resources.settings import ParseQualityResource, ReportResource

    from .core import audit_report
    from .defs.services import quality_frame, quality_outcomes, software_provenance, write_report

    settings = ReportResource()
    parts = []
    for (model, template), t in per_partition.items():
        part = recs[(recs["model"] == model) & (recs["template"] == template)]
        parts.append(audit_report.PartitionResult(
            model=model, template=template, items=part, tables=t, grs=t["grs_by_country"],
            statistics=audit_report.partition_statistics(t["drs_responses"], **settings.as_dict())))
    if not parts:
        log("no scored partition: no report written")
        return {}
    _, per_key = quality_outcomes(recs.assign(partition_key=recs["model"] + "|" + recs["template"]),
                                  ParseQualityResource())
    quality = quality_frame(per_key)
    bvr = {key: pd.concat([c[key] for c in comparisons], ignore_index=True)
           for key in ("drs_change", "grs_change")} if comparisons else None
    provenance = {**sources, "template sha256": {name: tpl.sha256 for name, tpl in templates.items()},
                  **software_provenance(tagger_res.tagger_name(), params.as_dict(), settings.as_dict())}
    html, markdown, figures = audit_report.build_report(parts, provenance=provenance, quality=quality,
                                                        base_vs_regional=bvr)
    write_report(outdir, html, markdown, figures)
    out = {}
    for name in ("run_variability", "counterfactual_disparity"):
        df = pd.concat([p.statistics[name] for p in parts], ignore_index=True)
        df.to_csv(outdir / f"{name}.csv", index=False)
        out[name] = df
    log(f"report written to {outdir / 'report.html'} ({sum(not f.skipped for f in figures)} figures)")
    return out


def _num(value, spec: str) -> str:
    """A number for the summary; 'n/a' where it is undefined (e.g. no recommendation at all)."""
    import math

    return "n/a" if value is None or (isinstance(value, float) and math.isnan(value)) else format(value, spec)


def _summary(written, per_partition, n_rejected, rows_read, corpus_path, responses) -> str:
    import pandas as pd

    from .defs.metadata import _escape_pipes

    # '|' in a model (or template) name would split a column: escaped as in the UI's tables
    names = _escape_pipes(pd.DataFrame([{"model": str(m), "template": str(t)} for m, t in per_partition],
                                       columns=["model", "template"], dtype=object))
    lines = [f"# Audit summary", "", f"- responses file: `{responses}` ({rows_read} rows, {n_rejected} not usable)",
             f"- corpus: `{corpus_path}`", ""]
    lines += ["| model | template | responses | recommendations | matched | mean DRS | US+UK share | country coverage | countries with GRS > 0 |",
              "| --- | --- | --- | --- | --- | --- | --- | --- | --- |"]
    for (_, t), model, template in zip(per_partition.items(), names["model"], names["template"]):
        vol, conc = t["volume_diversity"].iloc[0], t["concentration"].iloc[0]
        drs = t["drs_responses"]["drs"].mean()
        lines.append(f"| {model} | {template} | {vol['responses']} | {vol['recommendations']} | "
                     f"{vol['matched_recommendations']} | {_num(drs, '.4f')} | {_num(conc['us_uk_share'], '.1%')} | "
                     f"{_num(conc['country_coverage'], '.1%')} | {(t['grs_by_country']['grs'] > 0).sum()} |")
    return "\n".join(lines) + "\n"


def start_ui(extra: list[str]) -> int:
    """Replace this process with ``dagster dev -w workspace.yaml``, its signals reset first.

    A process started in the background by a script inherits SIGINT as ignored, and Dagster maps
    SIGTERM to the SIGINT handler, so a plain ``dagster dev &`` ignores both SIGTERM and Ctrl-C (its
    code server and daemon too). Ignored signals survive ``exec`` and are inherited by children;
    restored defaults are what Dagster's own handlers then build on.
    """
    from ._signals import restore_inherited_signals

    restore_inherited_signals()
    home = _dagster_home()  # the instance `fairness-audit demo` and `run` use: their runs show in the UI
    print(f"[fairness-audit] Dagster UI on the instance {home}", flush=True)
    dagster = Path(sys.executable).parent / "dagster"
    command = [str(dagster) if dagster.exists() else "dagster", "dev", "-w", str(PROJECT_ROOT / "workspace.yaml"), *extra]
    os.chdir(PROJECT_ROOT)
    os.execv(command[0], command) if os.path.isabs(command[0]) else os.execvp(command[0], command)
    return 0  # not reached


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="fairness-audit", description=__doc__)
    sub = parser.add_subparsers(dest="command", required=True)
    score = sub.add_parser("score", help="score a responses file (CSV/JSONL/Parquet) without a Dagster instance")
    score.add_argument("--responses", required=True, help="responses file (docs/responses_format.md)")
    score.add_argument("--corpus", required=True, help="QS World University Rankings export (CSV)")
    score.add_argument("--out", required=True, help="folder for the tables (CSV) and summary.md")
    score.add_argument("--tagger", default="rules", choices=["rules"], help="subject tagger (rules)")
    score.add_argument("--rank-column", default="2024 RANK", help="rank column of the export")
    sub.add_parser("demo", help="run the demo audit (job demo_audit) on the configured preset")
    run = sub.add_parser("run", help="run a job of the code location by name")
    run.add_argument("job", help="job name, e.g. demo_audit or reference_data")
    ui = sub.add_parser("ui", help="start the Dagster UI (dagster dev on workspace.yaml); stops on SIGTERM or Ctrl-C "
                        "even when started in the background by a script")
    ui.add_argument("dagster_args", nargs=argparse.REMAINDER, help="passed on to `dagster dev` (e.g. -p 3001)")
    argv = list(sys.argv[1:] if argv is None else argv)
    if argv[:1] == ["ui"] and not {"-h", "--help"} & set(argv[1:]):
        return start_ui(argv[1:])  # everything after `ui` belongs to dagster dev
    args = parser.parse_args(argv)
    from resources.llm.base import ModelUnavailableError
    from resources.secrets import redact
    from resources.settings import ConfigError

    expected: tuple = (UsageError, ConfigError, ModelUnavailableError)
    if args.command == "score":
        from .core.corpus import CorpusError
        from .core.geo import CountryResolutionError
        from .core.responses import ResponsesFileError

        expected += (CorpusError, ResponsesFileError, CountryResolutionError)
    try:
        if args.command == "score":
            score_file(args.responses, args.corpus, args.out, args.tagger, args.rank_column)
            return 0
        if args.command == "demo":
            return run_job("demo_audit")
        if args.command == "run":
            return run_job(args.job)
    except expected as exc:  # a bad input or configuration: one line that names it, no traceback
        print(f"fairness-audit {args.command}: error: {redact(str(exc))}", file=sys.stderr)
        return 2
    parser.error(f"unknown command {args.command!r}")
    return 2


if __name__ == "__main__":
    sys.exit(main())
