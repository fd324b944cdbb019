"""Command line: ``fairness-audit demo`` runs the main job and says where the results are."""

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

    from .defs.partitions import MODEL_PARTITIONS
    from .definitions import defs

    database = defs.resources["database"]
    instance = DagsterInstance.get()
    job = defs.resolve_job_def(job_name)
    partition_keys: list = [None]
    if job.partitions_def is not None:
        cfg = defs.resources["audit_grid"].resolve()
        instance.add_dynamic_partitions(MODEL_PARTITIONS.name, list(cfg.models))
        partition_keys = [f"{m}|{t}" for m in cfg.models for t in cfg.templates]
    failed = 0
    for key in partition_keys:
        where = f" for partition {key}" if key else ""
        print(f"[fairness-audit] running job {job_name!r}{where} (Dagster instance: {home})", flush=True)
        result = job.execute_in_process(instance=instance, raise_on_error=False, partition_key=key)
        print("", flush=True)
        if not result.success:
            for event in result.all_events:
                if event.is_failure:
                    print(f"[fairness-audit] FAILED: {event.message}", file=sys.stderr)
            print(f"[fairness-audit] job {job_name!r}{where} failed (run id {result.run_id})", file=sys.stderr)
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
    if failed:
        return 1
    url = database.url if isinstance(database.url, str) else "$FAIRNESS_DATABASE_URL"
    print(f"[fairness-audit] results database: {url or database.resolved_url()}")
    print(f"[fairness-audit] results folder:   {results_dir()}")
    print("[fairness-audit] browse the run and the assets with: dagster dev  (then http://127.0.0.1:3000)")
    return 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="fairness-audit", description=__doc__)
    sub = parser.add_subparsers(dest="command", required=True)
    sub.add_parser("demo", help="run the demo audit (job demo_audit) on the configured preset")
    run = sub.add_parser("run", help="run a job of the code location by name")
    run.add_argument("job", help="job name, e.g. demo_audit or reference_data")
    args = parser.parse_args(argv)
    if args.command == "demo":
        return run_job("demo_audit")
    if args.command == "run":
        return run_job(args.job)
    parser.error(f"unknown command {args.command!r}")
    return 2


if __name__ == "__main__":
    sys.exit(main())
