"""A `score` or `gate` that lost a partition's lease exports and reports nothing of that partition as
its own (issue 32.1). Real processes on the real PostgreSQL server, as the issue found it:

- run A (``FAIRNESS_PARTITION_LEASE_TTL_S=3``) is stopped with SIGSTOP right after its console prints
  ``✓ generations``;
- run B scores another file holding the same model and partition, to the end;
- A is resumed with SIGCONT.

Before, A stopped with LeaseLostError in the database but went on with its cross-partition steps and
its export: its summary showed B's mean DRS, its recommendations.csv B's universities with B's audit
id, and `gate` printed B's FAIL. Now A lists the partition as not scored, taken over by B's run, and
exports none of B's rows; `gate` is inconclusive (exit 2).
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import pandas as pd
import pytest

from resources import database as D
from resources.settings import DEMO_CORPUS

ROOT = Path(__file__).resolve().parents[2]
DEMO_RESPONSES = ROOT / "data" / "examples" / "demo_responses.jsonl"
TTL_S = 3
CLI = [sys.executable, "-m", "fairness_assets.cli"]

# B's answers: every student is sent to the same three universities, none of which A's answers name
B_ANSWER = json.dumps(
    [
        {"university": "University of Lagos", "program": "MSc Computer Science", "country": "Nigeria"},
        {"university": "University of Ghana", "program": "MPhil Economics", "country": "Ghana"},
        {"university": "University of Nairobi", "program": "Master of Public Health", "country": "Kenya"},
    ]
)


def _responses(path: Path, models: list[str], answer: str | None = None) -> Path:
    rows = [json.loads(line) for line in DEMO_RESPONSES.read_text().splitlines() if line.strip()]
    out = [{**r, "model": m, **({"response": answer} if answer else {})} for m in models for r in rows]
    path.write_text("\n".join(json.dumps(r) for r in out) + "\n", encoding="utf-8")
    return path


class _Console:
    """A process's stderr read line by line in a thread, so that the test can wait for a line."""

    def __init__(self, proc: subprocess.Popen):
        self.lines: list[str] = []
        self._thread = threading.Thread(target=self._read, args=(proc,), daemon=True)
        self._thread.start()

    def _read(self, proc) -> None:
        for line in proc.stderr:
            self.lines.append(line)

    def wait_for(self, text: str, proc: subprocess.Popen, timeout: float = 600) -> None:
        end = time.monotonic() + timeout
        while time.monotonic() < end:
            if any(text in line for line in self.lines):
                return
            if proc.poll() is not None:
                break
            time.sleep(0.05)
        raise AssertionError(f"{text!r} never printed: {''.join(self.lines)[-3000:]}")

    def text(self) -> str:
        self._thread.join(timeout=30)
        return "".join(self.lines)


def _paused_past_the_ttl(command_a: list[str], command_b: list[str], env: dict) -> tuple[subprocess.Popen, str, str]:
    """Start A, SIGSTOP it after ``✓ generations``, run B to the end past the TTL, SIGCONT A; A's
    process (finished), A's console and B's console."""
    a = subprocess.Popen(CLI + command_a, cwd=ROOT, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    console = _Console(a)
    try:
        console.wait_for("✓ generations", a)
        os.kill(a.pid, signal.SIGSTOP)
        time.sleep(TTL_S + 1.5)  # past the TTL: B may take the partition over
        b = subprocess.run(CLI + command_b, cwd=ROOT, env=env, capture_output=True, text=True, timeout=900)
        assert b.returncode == 0, (b.stdout[-2000:], b.stderr[-3000:])
        os.kill(a.pid, signal.SIGCONT)
        a.wait(timeout=900)
    finally:
        if a.poll() is None:
            os.kill(a.pid, signal.SIGCONT)
            a.kill()
    return a, console.text(), b.stderr


def _run_ids(database_url: str, key: str) -> str:
    """The run that holds ``key``'s lease now."""
    from resources.partition_lease import holders

    db = D.ResultsDatabase(url=database_url)
    try:
        return holders(db.engine(), [key])[key]
    finally:
        db.dispose()


@pytest.mark.postgres
def test_a_score_that_lost_its_lease_exports_none_of_the_other_runs_rows(tmp_path, postgres_url):
    D.ResultsDatabase(url=postgres_url).engine().dispose()  # the schema first
    env = {**os.environ, "PYTHONPATH": str(ROOT), "FAIRNESS_PARTITION_LEASE_TTL_S": str(TTL_S)}
    file_a = _responses(tmp_path / "a.jsonl", ["model-x"])
    file_b = _responses(tmp_path / "b.jsonl", ["model-x"], answer=B_ANSWER)
    out_a, out_b = tmp_path / "out-a", tmp_path / "out-b"
    common = ["--corpus", str(DEMO_CORPUS), "--database", postgres_url]
    a, console_a, _ = _paused_past_the_ttl(
        ["score", "--responses", str(file_a), "--out", str(out_a), *common],
        ["score", "--responses", str(file_b), "--out", str(out_b), *common],
        env,
    )
    key = "model-x|base"
    taker = _run_ids(postgres_url, key)
    assert a.returncode == 1, console_a[-3000:]
    assert "LeaseLostError" in console_a and "took the partition over" in console_a
    summary = (out_a / "summary.md").read_text(encoding="utf-8")
    assert "## Not scored" in summary and f"taken over by run {taker}" in summary
    # none of B's rows: B's universities and B's audit id appear nowhere in A's files
    recs_b = pd.read_csv(out_b / "recommendations.csv")
    audit_b = str(recs_b["audit_id"].iloc[0])
    for name in ("recommendations", "drs_items", "grs_by_country", "drs_summary", "volume_diversity"):
        path = out_a / f"{name}.csv"
        frame = pd.read_csv(path) if path.exists() and path.stat().st_size else pd.DataFrame()
        assert frame.empty, (name, frame.head())
    for path in out_a.glob("*"):
        if path.is_file() and path.suffix in (".csv", ".md", ".html"):
            text = path.read_text(encoding="utf-8", errors="replace")
            assert audit_b not in text, path.name
            assert "University of Nairobi" not in text, path.name
    assert "| model-x | base | responses" not in summary  # no partition row of another run's numbers
    assert "0.2117" not in summary  # B's kind of mean DRS never shows as A's


@pytest.mark.postgres
def test_a_gate_that_lost_a_partition_is_inconclusive_whatever_the_lines_say(tmp_path, postgres_url):
    D.ResultsDatabase(url=postgres_url).engine().dispose()
    env = {**os.environ, "PYTHONPATH": str(ROOT), "FAIRNESS_PARTITION_LEASE_TTL_S": str(TTL_S)}
    gate = tmp_path / "gate.yaml"
    # B's candidate answers send everyone to three African universities: far lower Rep than A's, a FAIL
    gate.write_text(
        "baseline: model-base\ncandidate: model-new\nlines:\n  - metric: rep\n    must_not_drop_by: 0.05\n",
        encoding="utf-8",
    )
    file_a = _responses(tmp_path / "a.jsonl", ["model-base", "model-new"])
    file_b = _responses(tmp_path / "b.jsonl", ["model-new"], answer=B_ANSWER)
    common = ["--corpus", str(DEMO_CORPUS), "--database", postgres_url]
    a, console_a, _ = _paused_past_the_ttl(
        ["gate", "--gate", str(gate), "--responses", str(file_a), "--out", str(tmp_path / "out-a"), *common],
        ["score", "--responses", str(file_b), "--out", str(tmp_path / "out-b"), *common],
        env,
    )
    text = (tmp_path / "out-a" / "gate.md").read_text(encoding="utf-8")
    assert a.returncode == 2, console_a[-3000:]
    assert "inconclusive" in text.lower() and "FAIL" not in text.split("\n")[0], text[:2000]
    assert "the gate is inconclusive whatever its lines say" in text


def test_a_gate_names_a_missing_model_before_scoring_anything(tmp_path):
    """Issue 32.6: the baseline absent from the answers is named at once (exit 2), not after scoring."""
    gate = tmp_path / "gate.yaml"
    gate.write_text(
        "baseline: model-base\ncandidate: model-new\nlines:\n  - metric: rep\n    must_not_drop_by: 0.05\n",
        encoding="utf-8",
    )
    file_a = _responses(tmp_path / "a.jsonl", ["model-new"])
    started = time.monotonic()
    out = subprocess.run(
        CLI
        + [
            "gate",
            "--gate",
            str(gate),
            "--responses",
            str(file_a),
            "--corpus",
            str(DEMO_CORPUS),
            "--out",
            str(tmp_path / "o"),
        ],
        cwd=ROOT,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert out.returncode == 2, (out.stdout[-2000:], out.stderr[-2000:])
    assert "'model-base'" in out.stderr and "nothing was scored" in out.stderr, out.stderr[-2000:]
    assert "model-new" in out.stderr
    assert not (tmp_path / "o" / "recommendations.csv").exists()
    assert time.monotonic() - started < 60
