"""A custom design launched from the UI (issue 34 item 6): with ``fairness-audit ui`` running on a fresh
instance whose configured design is the default one, job ``reference_data`` launched with the run
config the Launchpad takes, ``resources: {audit_grid: {config: {design: <a custom design file>}}}``,
builds the custom design's profiles and prompts, not the configured design's.

The run is launched through the running UI's GraphQL API (``DagsterGraphQLClient.submit_job_execution``,
the mutation the Launchpad's "Launch run" button sends), not by typing the YAML into the Launchpad's
editor in a browser: no browser test of this project drives the Launchpad (tests/helpers/ui.py opens
and cancels the Materialize dialogs only, and launches nothing), and a test through the API runs
where Chromium is not installed. The queued run is launched by the UI's own daemon (``fairness-audit
ui`` is ``dg dev``), in a run worker of its code server, as a run from the Launchpad is."""

from __future__ import annotations

import itertools
import time

import dagster as dg
import pytest

from resources import database as D
from tests.helpers import ui

GENDERS = ("female", "male")
CLASSES = ("low", "high")
NATIONALITIES = ("Kenya", "Chile", "Vietnam")  # none of them in the default design (demo)
DESIGN = f"""\
name: ui-custom
description: The study's axes on three countries the demo does not ask about, launched from the UI.
axes:
  gender:
    position: none
    one_at_a_time: gender_only
    values: {{female: female, male: male}}
  economic_class:
    label: economic class
    placeholder: income
    position: lambda
    one_at_a_time: class_only
    values:
      low: {{words: low-income, lambda: 0.001}}
      high: {{words: high-income, lambda: 0.0001}}
  nationality:
    position: home
    one_at_a_time: nationality_only
    values: [{", ".join(NATIONALITIES)}]
grid:
  kind: factorial
  axes: [nationality, gender, economic_class]
  one_at_a_time: [gender]
templates: [base, gender_only]
runs: 1
models: [{ui.DEMO_MODEL}]
"""
# the profile ids: the set, then each stated value's slug in the design's axis order
FULL = {f"full:{g}:{c}:{n.lower()}" for n, g, c in itertools.product(NATIONALITIES, GENDERS, CLASSES)}
ONE_AT_A_TIME = {f"gender_only:{g}" for g in GENDERS}


def _wait(client, run_id: str, timeout: float = 300) -> dg.DagsterRunStatus:
    deadline = time.monotonic() + timeout
    status = client.get_run_status(run_id)
    while status not in (dg.DagsterRunStatus.SUCCESS, dg.DagsterRunStatus.FAILURE, dg.DagsterRunStatus.CANCELED):
        assert time.monotonic() < deadline, f"run {run_id} still {status.value} after {timeout} s"
        time.sleep(2)
        status = client.get_run_status(run_id)
    return status


def _failures(instance, run_id: str) -> str:
    events = instance.all_logs(run_id, of_type={dg.DagsterEventType.STEP_FAILURE, dg.DagsterEventType.RUN_FAILURE})
    return " | ".join(
        f"{e.step_key or 'run'}: {getattr(e.dagster_event.event_specific_data, 'error', None) or e.message}"
        for e in events
    )[-3000:]


@pytest.mark.filterwarnings("ignore::DeprecationWarning:gql")  # dagster_graphql's client on gql 4
def test_the_launchpad_run_config_design_is_the_runs_design(tmp_path):
    from dagster_graphql import DagsterGraphQLClient

    design = tmp_path / "designs" / "ui_custom.yaml"
    design.parent.mkdir()
    design.write_text(DESIGN, encoding="utf-8")
    env = ui.demo_env(tmp_path / "home")  # no FAIRNESS_DESIGN: the code location's design is the default
    assert "FAIRNESS_DESIGN" not in env
    url = f"sqlite:///{tmp_path / 'results.db'}"
    env["FAIRNESS_DATABASE_URL"] = url
    run_config = {"resources": {"audit_grid": {"config": {"design": str(design)}}}}

    with ui.fairness_ui(env, output=tmp_path / "ui.log") as base:
        host, port = base.removeprefix("http://").split(":")
        client = DagsterGraphQLClient(host, port_number=int(port))
        run_id = client.submit_job_execution("reference_data", run_config=run_config)
        status = _wait(client, run_id)
        with dg.DagsterInstance.from_config(env["DAGSTER_HOME"]) as instance:
            assert status == dg.DagsterRunStatus.SUCCESS, _failures(instance, run_id)
            run = instance.get_run_by_id(run_id)
            assert run.run_config["resources"]["audit_grid"]["config"]["design"] == str(design)
            event = instance.get_latest_materialization_event(dg.AssetKey("profiles"))
    assert event is not None and event.run_id == run_id
    meta = {k: getattr(v, "value", v) for k, v in event.asset_materialization.metadata.items()}
    assert meta["design"] == "ui-custom" and meta["design_file"] == str(design), meta
    assert meta["full_profiles"] == len(FULL) and meta["reduced_context_profiles"] == len(ONE_AT_A_TIME), meta

    database = D.ResultsDatabase(url=url)
    profiles = database.read_rows(D.Profile)
    assert set(profiles["profile_id"]) == FULL | ONE_AT_A_TIME, sorted(profiles["profile_id"])
    assert set(profiles["home_iso3"].dropna()) == {"KEN", "CHL", "VNM"}
    prompts = database.read_rows(D.PromptRow)
    assert prompts["template"].value_counts().to_dict() == {"base": len(FULL), "gender_only": len(ONE_AT_A_TIME)}
    kenyan = prompts.loc[prompts["profile_id"].eq("full:female:low:kenya"), "prompt"]
    assert len(kenyan) == 1 and "I am a female student from Kenya" in kenyan.iloc[0], kenyan.tolist()
