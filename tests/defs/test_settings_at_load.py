"""The settings are read when the definitions load, not when the package is imported (issue 25):
a process that sets ``FAIRNESS_*`` variables after importing the code location (a notebook, a
test) gets them in the definitions it loads next, and with the defaults the definitions are the
checked-in snapshot's. Run in a fresh process with every ``FAIRNESS_*`` variable unset, so that
the import sees the defaults whatever the calling shell or an earlier test set."""

from __future__ import annotations

import json
import os
import subprocess
import sys

from tests.defs.test_definitions_snapshot import ROOT, SNAPSHOT, differences

SCRIPT = """
import json, os
from fairness_assets.definitions import defs   # imported first, with no FAIRNESS_* variable set
from tests.defs.test_definitions_snapshot import describe

def state(loaded):
    schedule = loaded.resolve_schedule_def("reaudit_schedule")
    (study,) = [job for job in loaded.jobs if job.name == "study_audit"]
    return {"describe": describe(loaded), "executor": loaded.executor.name, "cron": schedule.cron_schedule,
            "timezone": schedule.execution_timezone, "study_grid": study.config["resources"]["audit_grid"]["config"]}

out = {"defaults": state(defs())}
os.environ.update({"FAIRNESS_REAUDIT_CRON": "0 2 1 * *", "FAIRNESS_REAUDIT_TIMEZONE": "Europe/Berlin",
                   "FAIRNESS_EXECUTOR": "multiprocess", "FAIRNESS_MODEL_REGISTRY": "/etc/fairness/models.yaml"})
out["set"] = state(defs())
for name in ("FAIRNESS_REAUDIT_CRON", "FAIRNESS_REAUDIT_TIMEZONE", "FAIRNESS_EXECUTOR", "FAIRNESS_MODEL_REGISTRY"):
    del os.environ[name]
out["unset_again"] = state(defs())
print(json.dumps(out))
"""


def _load_states() -> dict:
    env = {k: v for k, v in os.environ.items() if not k.startswith("FAIRNESS_")}
    proc = subprocess.run(
        [sys.executable, "-c", SCRIPT], cwd=ROOT, env=env, capture_output=True, text=True, timeout=240
    )
    assert proc.returncode == 0, f"the code location did not load:\n{proc.stderr[-4000:]}"
    return json.loads(proc.stdout.strip().splitlines()[-1])


def test_settings_set_after_the_import_reach_the_definitions_loaded_next():
    states = _load_states()
    assert {k: states["defaults"][k] for k in ("executor", "cron", "timezone", "study_grid")} == {
        "executor": "in_process",
        "cron": "0 6 * * 1",
        "timezone": "UTC",
        "study_grid": {"design": "study"},
    }
    changed = states["set"]
    assert changed["cron"] == "0 2 1 * *" and changed["timezone"] == "Europe/Berlin"
    assert changed["executor"] == "multiprocess"
    # the study job passes the configured registry on to its runs, as a variable they read themselves
    assert changed["study_grid"] == {"design": "study", "model_registry_path": {"env": "FAIRNESS_MODEL_REGISTRY"}}
    # the definitions' shape changes only where the settings say: the schedule's cron string and time zone
    assert differences(states["defaults"]["describe"], changed["describe"]) == [
        'schedules: reaudit_schedule changed: {"cron": "0 6 * * 1", "default_status": "STOPPED", "job": "reaudit", '
        '"timezone": "UTC"} -> {"cron": "0 2 1 * *", "default_status": "STOPPED", "job": "reaudit", '
        '"timezone": "Europe/Berlin"}'
    ]
    assert states["unset_again"] == states["defaults"]  # nothing of the earlier load is kept


def test_the_defaults_loaded_after_the_import_give_the_checked_in_snapshot():
    defaults = _load_states()["defaults"]["describe"]
    assert differences(json.loads(SNAPSHOT.read_text()), defaults) == []
