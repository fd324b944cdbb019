"""A failed step on the command line (issue 19, item 9): `score`, `demo` and `run` print the
one-line cause and the path of a log file; the stack traces are in that file, and on the console
only with --verbose."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from fairness_assets.local import OFFLINE_INSTANCE_YAML
from resources.settings import DATA_DIR, DEMO_CORPUS

ROOT = Path(__file__).resolve().parents[2]
EXAMPLE = DATA_DIR / "examples" / "worked_example_responses.csv"
TRACE = re.compile(r"Traceback|Stack Trace|^\s*File \"", re.MULTILINE)


def _cli(*args, home: Path, env: dict | None = None):
    full = {
        k: v
        for k, v in os.environ.items()
        if k
        not in (
            "FAIRNESS_DATABASE_URL",
            "FAIRNESS_RESPONSES",
            "FAIRNESS_DESIGN",
            "FAIRNESS_QS_CORPUS",
            "FAIRNESS_MODEL_REGISTRY",
        )
    }
    (home / "dagster_home").mkdir(parents=True, exist_ok=True)
    (home / "dagster_home" / "dagster.yaml").write_text(OFFLINE_INSTANCE_YAML)
    full.update(DAGSTER_HOME=str(home / "dagster_home"), FAIRNESS_HOME=str(home / "fairness_home"), **(env or {}))
    return subprocess.run(
        [sys.executable, "-m", "fairness_assets.cli", *args],
        cwd=ROOT,
        env=full,
        capture_output=True,
        text=True,
        timeout=600,
    )


def _log_path(stderr: str) -> Path:
    paths = re.findall(r"stack traces: (\S+\.log)", stderr)
    assert paths, stderr[-3000:]
    return Path(paths[-1])


@pytest.mark.slow
@pytest.mark.parametrize("command", [["run", "reference_data"], ["demo"]])
def test_a_failed_job_prints_its_cause_and_the_log_path_not_the_traces(tmp_path, command):
    corpus = tmp_path / "corpus.csv"
    corpus.write_text("a,b\n1,2\n")
    env = {"FAIRNESS_QS_CORPUS": str(corpus), "FAIRNESS_RESPONSES": str(DATA_DIR / "examples" / "demo_responses.jsonl")}
    out = _cli(*command, home=tmp_path, env=env)
    assert out.returncode == 1, out.stdout[-3000:] + out.stderr[-3000:]
    assert not TRACE.search(out.stdout + out.stderr), (out.stdout + out.stderr)[-4000:]
    cause = "cause: step 'qs_corpus' failed: CorpusError: "
    assert out.stderr.strip().splitlines()[-1].startswith(f"[fairness-audit] {cause}")
    # the event's own line carries the cause too
    assert re.search(r"(✗|FAILED) qs_corpus failed after [0-9.]+ s; cause: CorpusError: ", out.stderr), out.stderr[
        -3000:
    ]
    log = _log_path(out.stderr)
    assert log.parent == tmp_path / "dagster_home" / "logs" and log.name.startswith(
        "demo_audit-" if command == ["demo"] else "reference_data-"
    )
    text = log.read_text(encoding="utf-8")
    assert "Stack Trace:" in text and 'File "' in text and "CorpusError" in text  # the full event
    assert f"log of the runs, stack traces included: {log}" in out.stdout

    verbose = _cli(*command, "--verbose", home=tmp_path, env=env)
    assert verbose.returncode == 1
    assert "Stack Trace:" in verbose.stderr and 'File "' in verbose.stderr
    assert verbose.stderr.strip().splitlines()[-1].startswith(f"[fairness-audit] {cause}")


@pytest.mark.slow
def test_a_failed_score_prints_the_failures_and_the_log_path_not_the_traces(tmp_path):
    """A results database that refuses connections: every step that opens it fails; score writes
    rejects.csv and summary.md with the failures, prints them with the log path, exit code 1."""
    url = "postgresql://u:Super@Secret99@127.0.0.1:1/db"
    args = ["score", "--responses", str(EXAMPLE), "--corpus", str(DEMO_CORPUS), "--database", url]
    out = _cli(*args, "--out", str(tmp_path / "o"), home=tmp_path)
    assert out.returncode == 1, out.stdout[-3000:] + out.stderr[-3000:]
    printed = out.stdout + out.stderr
    assert not TRACE.search(printed), printed[-4000:]
    assert "fairness-audit score: 2 failure(s)" in out.stderr
    assert re.search(
        r"^  reference data \(every partition\): steps 'profiles', 'qs_corpus' failed: ConnectionError: "
        r"results database postgresql://u:\*\*\*@127\.0\.0\.1:1/db is not usable: .*Connection refused",
        out.stderr,
        re.MULTILINE,
    ), out.stderr
    log = _log_path(out.stderr)
    assert log == tmp_path / "o" / "score.log"
    text = log.read_text(encoding="utf-8")
    assert "Stack Trace:" in text and 'File "' in text and "ConnectionError" in text
    summary = (tmp_path / "o" / "summary.md").read_text(encoding="utf-8")
    assert "## Failed" in summary and "- reference data (every partition): steps 'profiles', 'qs_corpus'" in summary
    assert (tmp_path / "o" / "rejects.csv").exists()
    # the password is nowhere: console, log, summary (issue 19, item 7)
    for where in (printed, text, summary):
        assert "Secret99" not in where and "Super" not in where

    verbose = _cli(*args, "--out", str(tmp_path / "v"), "--verbose", home=tmp_path)
    assert verbose.returncode == 1
    assert "Stack Trace:" in verbose.stderr and 'File "' in verbose.stderr
    assert "Secret99" not in verbose.stdout + verbose.stderr and "Super" not in verbose.stdout + verbose.stderr
