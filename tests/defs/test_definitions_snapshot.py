"""The code location's shape, checked in: asset keys with their deps, groups and partitions, asset
checks (blocking or not), jobs with the assets they select, schedules and sensors. A change to any
of them fails here until the snapshot is regenerated, so it is seen in review:

    UPDATE_SNAPSHOT=1 .venv/bin/python -m pytest -q -p no:cacheprovider -n 0 tests/defs/test_definitions_snapshot.py

The definitions are loaded in a fresh process with every ``FAIRNESS_*`` variable unset: the
snapshot is the code location as it loads with the defaults (the shipped templates folder, the
default cron string), whatever the calling shell or an earlier test set.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import dagster as dg

ROOT = Path(__file__).resolve().parents[2]
SNAPSHOT = Path(__file__).with_name("definitions_snapshot.json")
UPDATE = (
    "UPDATE_SNAPSHOT=1 .venv/bin/python -m pytest -q -p no:cacheprovider -n 0 tests/defs/test_definitions_snapshot.py"
)


def partitions(definition) -> dict | None:
    """A partitions definition as data: what its keys are made of."""
    if definition is None:
        return None
    if isinstance(definition, dg.MultiPartitionsDefinition):
        return {"multi": {dim.name: partitions(dim.partitions_def) for dim in definition.partitions_defs}}
    if isinstance(definition, dg.DynamicPartitionsDefinition):
        return {"dynamic": definition.name}
    if isinstance(definition, dg.StaticPartitionsDefinition):
        return {"static": list(definition.get_partition_keys())}
    if isinstance(definition, dg.TimeWindowPartitionsDefinition):
        return {
            "time_window": {
                "cron": definition.cron_schedule,
                "timezone": definition.timezone,
                "start": definition.start.isoformat(),
                "format": definition.fmt,
            }
        }
    return {"other": type(definition).__name__}


def describe(defs: dg.Definitions) -> dict:
    """What the snapshot holds of ``defs``."""
    repository = defs.get_repository_def()
    graph = repository.asset_graph
    assets = {}
    for key in sorted(graph.get_all_asset_keys()):
        node = graph.get(key)
        assets[key.to_user_string()] = {
            "deps": sorted(k.to_user_string() for k in node.parent_keys),
            "group": node.group_name,
            "partitions": partitions(node.partitions_def),
            # how a backfill splits into runs (issue 32.5: one run per partition, each tagged with its key)
            "backfill": (
                str(node.backfill_policy)
                if node.backfill_policy
                else "one run per partition"
                if node.partitions_def
                else None
            ),
        }
    checks = {
        key.to_user_string(): {"blocking": bool(graph.get(key).blocking)}
        for key in sorted(graph.asset_check_keys, key=lambda k: k.to_user_string())
    }
    jobs = {}
    for job in defs.jobs or []:  # asset jobs (define_asset_job): what their selection resolves to
        selection = getattr(job, "selection", None)
        jobs[job.name] = (
            {
                "assets": sorted(k.to_user_string() for k in selection.resolve(graph)),
                "checks": sorted(k.to_user_string() for k in selection.resolve_checks(graph)),
            }
            if selection is not None
            else {"ops": sorted(n.name for n in job.graph.nodes)}
        )
    jobs = dict(sorted(jobs.items()))
    schedules = {
        s.name: {
            "cron": s.cron_schedule,
            "timezone": s.execution_timezone,
            "job": s.job_name,
            "default_status": s.default_status.value,
        }
        for s in sorted(repository.schedule_defs, key=lambda s: s.name)
    }
    sensors = {
        s.name: {
            "default_status": s.default_status.value,
            "minimum_interval_seconds": s.minimum_interval_seconds,
            "jobs": sorted(t.job_name for t in s.targets),
        }
        for s in sorted(repository.sensor_defs, key=lambda s: s.name)
    }
    return {"assets": assets, "asset_checks": checks, "jobs": jobs, "schedules": schedules, "sensors": sensors}


LOAD = (
    "import json; from fairness_assets.definitions import defs; "
    "from tests.defs.test_definitions_snapshot import describe; print(json.dumps(describe(defs())))"
)


def current() -> dict:
    """The snapshot of the code location as it loads now with the defaults (a fresh process)."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("FAIRNESS_")}
    proc = subprocess.run([sys.executable, "-c", LOAD], cwd=ROOT, env=env, capture_output=True, text=True, timeout=240)
    assert proc.returncode == 0, f"the code location did not load:\n{proc.stderr[-4000:]}"
    return json.loads(proc.stdout.strip().splitlines()[-1])


def differences(old: dict, new: dict) -> list[str]:
    """One line per entry added, removed or changed, section by section."""
    lines = []
    for section in sorted(set(old) | set(new)):
        before, after = old.get(section, {}), new.get(section, {})
        for name in sorted(set(before) | set(after)):
            if name not in after:
                lines.append(f"{section}: {name} removed")
            elif name not in before:
                lines.append(f"{section}: {name} added: {json.dumps(after[name], sort_keys=True)}")
            elif before[name] != after[name]:
                lines.append(
                    f"{section}: {name} changed: {json.dumps(before[name], sort_keys=True)} -> "
                    f"{json.dumps(after[name], sort_keys=True)}"
                )
    return lines


def test_definitions_match_the_checked_in_snapshot():
    now = current()
    if os.environ.get("UPDATE_SNAPSHOT") == "1":
        SNAPSHOT.write_text(json.dumps(now, indent=2, sort_keys=True) + "\n")
    assert SNAPSHOT.exists(), f"{SNAPSHOT.relative_to(ROOT)} is missing; write it with:\n  {UPDATE}"
    saved = json.loads(SNAPSHOT.read_text())
    changed = differences(saved, now)
    assert not changed, (
        "the code location differs from tests/defs/definitions_snapshot.json:\n  "
        + "\n  ".join(changed)
        + f"\nIf the change is meant, regenerate the snapshot and commit it with the change:\n  {UPDATE}"
    )


def test_the_comparison_names_what_changed():
    old = {"assets": {"a": {"deps": []}, "b": {"deps": ["a"]}}, "jobs": {"j": {"assets": ["a"]}}}
    new = {"assets": {"a": {"deps": []}, "c": {"deps": ["a"]}}, "jobs": {"j": {"assets": ["a", "c"]}}}
    assert differences(old, new) == [
        "assets: b removed",
        'assets: c added: {"deps": ["a"]}',
        'jobs: j changed: {"assets": ["a"]} -> {"assets": ["a", "c"]}',
    ]
    assert differences(old, old) == []
