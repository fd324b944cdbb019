"""`fairness-audit gate` end to end (issue 22 item 2): a candidate scored with its baseline from one
responses file, then judged again from the database that holds both audits; exit codes 0 (pass),
1 (fail), 2 (inconclusive or bad input), the verdict in gate.md."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest

from resources.settings import DEMO_CORPUS
from tests.helpers.pipeline import DEMO_RESPONSES

pytestmark = pytest.mark.slow  # one score run of two models (about a minute)

ROOT = Path(__file__).resolve().parents[2]
CLI = ROOT / ".venv" / "bin" / "fairness-audit"


def _both_models(out: Path) -> Path:
    """The demo answers as model-a, and as model-b with every MIT, Stanford and Cambridge answer sent
    to the University of Lagos (a lower Rep for most students)."""
    rows = [json.loads(line) for line in DEMO_RESPONSES.read_text().splitlines() if line.strip()]
    worse = []
    for r in rows:
        text = r["response"]
        for name in (
            "Massachusetts Institute of Technology",
            "Stanford University",
            "University of Cambridge",
            "Imperial College London",
            "University of Oxford",
            "Harvard University",
        ):
            text = text.replace(name, "University of Lagos")
        worse.append({**r, "model": "model-b", "response": text})
    path = out / "both.jsonl"
    path.write_text("\n".join(json.dumps(r) for r in [*({**r, "model": "model-a"} for r in rows), *worse]) + "\n")
    return path


def _gate(path: Path, body: str) -> Path:
    path.write_text("baseline: model-a\ncandidate: model-b\n" + body, encoding="utf-8")
    return path


def _run(*args, home: Path):
    env = {**os.environ, "FAIRNESS_HOME": str(home), "DAGSTER_HOME": str(home / "dagster")}
    (home / "dagster").mkdir(parents=True, exist_ok=True)
    return subprocess.run([str(CLI), "gate", *map(str, args)], capture_output=True, text=True, env=env, timeout=600)


@pytest.fixture(scope="module")
def scored(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("gate")
    db = f"sqlite:///{tmp / 'results.db'}"
    gate = _gate(tmp / "loose.yaml", "lines:\n  - metric: rep\n    must_not_drop_by: 1.0\n")
    res = _run(
        "--gate",
        gate,
        "--responses",
        _both_models(tmp),
        "--corpus",
        DEMO_CORPUS,
        "--database",
        db,
        "--out",
        tmp / "out",
        home=tmp / "home",
    )
    return tmp, db, res


def test_a_loose_gate_passes_after_scoring_both_models(scored):
    tmp, db, res = scored
    assert res.returncode == 0, res.stdout[-2000:] + res.stderr[-2000:]
    md = (tmp / "out" / "gate.md").read_text()
    assert md.startswith("# Release gate: PASS") and "rep" in md
    assert (tmp / "out" / "model_comparison_differences.csv").exists()  # exported with the other tables
    assert (tmp / "out" / "gate.csv").exists() and "gate verdict: pass" in res.stdout
    # the sensitivity grid is exported too: the comparison under every setting (12 demo profiles x 1 run
    # make no difference significant, so there is no finding to mark robust or fragile here; see
    # tests/core/test_sensitivity.py for planted ones)
    import pandas as pd

    assert (tmp / "out" / "sensitivity_verdicts.csv").exists()
    by_setting = pd.read_csv(tmp / "out" / "sensitivity_comparison_by_setting.csv")
    assert set(by_setting["setting"]) == {"lambda x0.5", "lambda x2", "R_max 1000", "R_max 1500"}
    rep = by_setting[(by_setting["metric"] == "rep") & (by_setting["family"] == "metrics")]
    assert (rep["mean_diff"] < 0).all()  # model-b's lower Rep in every setting


def test_a_robust_gate_is_judged_under_every_setting(scored):
    tmp, db, _ = scored
    gate = _gate(tmp / "robust.yaml", "require_robust: true\nlines:\n  - metric: rep\n    must_not_drop_by: 1.0\n")
    res = _run("--gate", gate, "--database", db, "--out", tmp / "robust", home=tmp / "home")
    assert res.returncode == 0, res.stdout[-2000:] + res.stderr[-2000:]
    table = (tmp / "robust" / "gate.csv").read_text()
    assert "setting" in table.splitlines()[0]


def test_a_candidate_that_lowers_rep_fails_a_tight_gate(scored):
    tmp, db, _ = scored
    gate = _gate(tmp / "tight.yaml", "lines:\n  - metric: rep\n    must_not_drop_by: 0.01\n")
    res = _run("--gate", gate, "--database", db, "--out", tmp / "tight", home=tmp / "home")
    assert res.returncode == 1, res.stdout[-2000:] + res.stderr[-2000:]
    assert (tmp / "tight" / "gate.md").read_text().startswith("# Release gate: FAIL")


def test_a_template_not_audited_is_inconclusive(scored):
    tmp, db, _ = scored
    gate = _gate(tmp / "other.yaml", "templates: [regional]\nlines:\n  - metric: rep\n    must_not_drop_by: 1.0\n")
    res = _run("--gate", gate, "--database", db, "--out", tmp / "other", home=tmp / "home")
    assert res.returncode == 2, res.stdout[-2000:] + res.stderr[-2000:]
    md = (tmp / "other" / "gate.md").read_text()
    assert md.startswith("# Release gate: INCONCLUSIVE") and "not both audited on template 'regional'" in md


def test_a_model_the_database_does_not_hold_is_inconclusive(scored):
    tmp, db, _ = scored
    gate = tmp / "unknown.yaml"
    gate.write_text("baseline: model-a\ncandidate: model-z\nlines:\n  - metric: rep\n    must_not_drop_by: 1.0\n")
    res = _run("--gate", gate, "--database", db, "--out", tmp / "unknown", home=tmp / "home")
    assert res.returncode == 2 and "'model-z' is not among the audited models" in res.stdout


def test_a_bad_gate_file_is_named_with_its_line_and_exits_2(tmp_path):
    gate = _gate(tmp_path / "bad.yaml", "lines:\n  - metric: drs\n    must_not_drop_by: much\n")
    res = _run(
        "--gate", gate, "--database", f"sqlite:///{tmp_path / 'r.db'}", "--out", tmp_path / "o", home=tmp_path / "home"
    )
    assert res.returncode == 2
    assert "bad.yaml: line 5: must_not_drop_by must be a number" in res.stderr and "Traceback" not in res.stderr
    good = _gate(tmp_path / "good.yaml", "lines:\n  - metric: drs\n    must_not_drop_by: 0.1\n")
    missing = _run(
        "--gate", good, "--out", tmp_path / "o", home=tmp_path / "home"
    )  # neither --responses nor --database
    assert missing.returncode == 2 and "--responses FILE" in missing.stderr
