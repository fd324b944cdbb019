"""``fairness-audit demo`` and ``fairness-audit run JOB``: a job of the code location, run in this
process on the persistent instance, one run per partition of the configured grid."""

from __future__ import annotations

import datetime as _dt
import os
import sys

from dagster import DagsterInstance

from resources.secrets import redact
from resources.settings import AuditGridResource, default_database_url, load_settings, results_dir

from ..core.common.partition import PartitionKey
from .failures import UsageError, failure_causes
from .instance import dagster_home
from .runlog import RunLog


def run_job(job_name: str, verbose: bool = False) -> int:
    """Run a job of the code location on the persistent instance, one run per partition of the
    configured grid; prints each asset's row count, each check and where the results are. The
    runs log one line per event (a failed step as its cause); every event in full, stack traces
    included, goes to ``$DAGSTER_HOME/logs/<job>-<time>.log`` (``verbose``: printed too)."""
    home = dagster_home()
    # lazy, and after dagster_home(): the code location reads the settings and the templates folder
    # on import (see the package docstring)
    from ..definitions import load_definitions
    from ..defs.operations.jobs import JOB_DESIGNS
    from ..defs.partitions import MODEL_PARTITIONS

    settings = load_settings()  # read once: the definitions and the grid below are built from it
    defs = load_definitions(settings)
    instance = DagsterInstance.get()
    known = sorted(j.name for j in defs.resolve_all_job_defs() if not j.name.startswith("__"))
    if job_name not in known:
        raise UsageError(f"unknown job {job_name!r}; jobs of the code location: {', '.join(known)}")
    stamp = _dt.datetime.now().strftime("%Y%m%d-%H%M%S-%f")
    run_log = RunLog(home / "logs" / f"{job_name}-{stamp}.log", verbose=verbose)  # a known job's name
    job = defs.resolve_job_def(job_name).with_logger_defs(run_log.logger_defs())
    partition_keys: list = [None]
    if job.partitions_def is not None:
        # the grid the job runs, from the settings the definitions were built with (their EnvVars
        # cannot be read outside a run)
        cfg = AuditGridResource(
            design=JOB_DESIGNS.get(job_name) or settings.design, model_registry_path=settings.model_registry
        ).resolve()
        instance.add_dynamic_partitions(MODEL_PARTITIONS.name, list(cfg.models))
        partition_keys = [str(PartitionKey(m, t)) for m in cfg.models for t in cfg.templates]
    print(f"[fairness-audit] log of the runs, stack traces included: {run_log.path}", flush=True)
    failed = 0
    for key in partition_keys:
        where = f" for partition {key}" if key else ""
        print(f"[fairness-audit] running job {job_name!r}{where} (Dagster instance: {home})", flush=True)
        run_log.note(f"running job {job_name!r}{where}")
        result = job.execute_in_process(
            instance=instance, raise_on_error=False, partition_key=key, run_config=run_log.run_config()
        )
        print("", flush=True)
        if not result.success:
            print(
                f"[fairness-audit] stack traces: {run_log.path}" + ("" if verbose else " (--verbose prints them)"),
                file=sys.stderr,
            )
            print(f"[fairness-audit] job {job_name!r}{where} failed (run id {result.run_id})", file=sys.stderr)
            for line in failure_causes(result):  # last: the cause, not only "step X failed"
                print(f"[fairness-audit] {line}", file=sys.stderr)
            failed += 1
            continue
        print(f"[fairness-audit] job {job_name!r}{where} succeeded (run id {result.run_id})")
        for event in result.get_asset_materialization_events():
            rows = getattr(event.materialization.metadata.get("dagster/row_count"), "value", None)
            counted = f"{rows} row(s)" if rows is not None else "materialized (not a table of rows)"
            print(f"  {event.asset_key.to_user_string():<24} {counted}")
        for check in result.get_asset_check_evaluations():
            status = "pass" if check.passed else f"FAIL ({check.severity.value})"
            observed = getattr(check.metadata.get("observed"), "value", None)
            verdict = getattr(check.metadata.get("verdict"), "value", None)
            said = f"observed {observed}" if observed is not None else f"verdict {verdict}" if verdict else ""
            print(f"  check {check.check_name:<22} {status:<14} {said}".rstrip())
        for event in result.get_asset_materialization_events():
            if event.asset_key.to_user_string() == "audit_report":
                meta = event.materialization.metadata
                report = getattr(meta.get("report"), "value", None)
                print(
                    f"[fairness-audit] audit report: {report} (and report.md beside it); "
                    f"{getattr(meta.get('significant_findings'), 'value', 0)} significant finding(s)"
                )
    if failed:
        return 1
    # database.url is an EnvVar (not readable outside a run) when FAIRNESS_DATABASE_URL is set
    print(
        "[fairness-audit] results database: "
        f"{redact(os.environ.get('FAIRNESS_DATABASE_URL') or default_database_url())}"
    )
    print(f"[fairness-audit] results folder:   {results_dir()}")
    print(
        "[fairness-audit] browse the run and the assets with: .venv/bin/fairness-audit ui  (then http://127.0.0.1:3000)"
    )
    return 0
