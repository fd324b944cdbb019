"""`dagster dev` serves the code location: the assets are listed and a run launched through the
webserver's GraphQL API (what the UI's Materialize button calls) succeeds."""

import json
import os
import signal
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import pytest

from tests.helpers.servers import free_port

ROOT = Path(__file__).resolve().parents[2]


def _gql(port, query):
    req = urllib.request.Request(
        f"http://127.0.0.1:{port}/graphql",
        data=json.dumps({"query": query}).encode(),
        headers={"content-type": "application/json"},
    )
    with urllib.request.urlopen(req, timeout=30) as resp:
        return json.loads(resp.read())["data"]


@pytest.fixture
def dagster_dev(results_home):
    port = free_port()
    proc = subprocess.Popen(
        [str(Path(sys.executable).parent / "dagster"), "dev", "-w", str(ROOT / "workspace.yaml"), "-p", str(port)],
        cwd=ROOT,
        env={**os.environ},
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,
    )
    try:
        deadline = time.time() + 180
        while time.time() < deadline:
            try:
                if _gql(port, "{ assetNodes { id } }")["assetNodes"]:
                    break
            except Exception:  # noqa: BLE001 - not up yet
                time.sleep(2)
        else:
            pytest.fail("dagster dev did not serve the code location within 180 s")
        yield port
    finally:
        os.killpg(proc.pid, signal.SIGTERM)
        try:
            proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)


def test_ui_lists_assets_and_materializes_reference_data(dagster_dev):
    port = dagster_dev
    nodes = _gql(port, "{ assetNodes { assetKey { path } groupName isPartitioned hasAssetChecks } }")["assetNodes"]
    by_name = {n["assetKey"]["path"][0]: n for n in nodes}
    assert {
        "qs_corpus",
        "country_geography",
        "capital_distances",
        "profiles",
        "prompts",
        "generations",
        "recommendations",
        "subject_tags",
    } <= set(by_name)
    assert by_name["recommendations"]["isPartitioned"] and by_name["recommendations"]["hasAssetChecks"]
    launched = _gql(
        port,
        "mutation { launchRun(executionParams: {selector: {repositoryLocationName: "
        '"fairness-audit", repositoryName: "__repository__", jobName: "reference_data"}, '
        "runConfigData: {}}) { __typename ... on LaunchRunSuccess { run { runId } } } }",
    )["launchRun"]
    assert launched["__typename"] == "LaunchRunSuccess", launched
    run_id = launched["run"]["runId"]
    status = None
    deadline = time.time() + 240
    while time.time() < deadline:
        status = _gql(port, f'{{ runOrError(runId: "{run_id}") {{ ... on Run {{ status }} }} }}')["runOrError"][
            "status"
        ]
        if status in ("SUCCESS", "FAILURE", "CANCELED"):
            break
        time.sleep(3)
    if status != "SUCCESS":
        logs = _gql(
            port,
            f'{{ logsForRun(runId: "{run_id}") {{ ... on EventConnection {{ events {{ __typename '
            "... on MessageEvent { message } "
            "... on ExecutionStepFailureEvent { error { message causes { message } } } } } } }",
        )["logsForRun"]["events"]
        pytest.fail(
            f"run {status}: "
            + " | ".join(
                e.get("message", "") + str(e.get("error") or "")
                for e in logs
                if "rror" in e["__typename"] or "Failure" in e["__typename"]
            )[-3000:]
        )
