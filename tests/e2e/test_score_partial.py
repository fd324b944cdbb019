"""`fairness-audit score` writes what it could score (issue 19, item 3): a partition that fails
leaves the others scored and exported, summary.md lists it under "Failed" and the command exits 1
with the list; a 300-character model name scores end to end, figures included."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pandas as pd
import pytest

from fairness_assets import cli
from fairness_assets.core.reporting import figures as fig_core
from resources.settings import DATA_DIR, DEMO_CORPUS

ROOT = Path(__file__).resolve().parents[2]
EXAMPLE = DATA_DIR / "examples" / "worked_example_responses.csv"
LONG_MODEL = "org/" + "very-long-model-name-" * 14 + "v1"  # 300 characters


def _responses(tmp_path: Path, *models: str) -> Path:
    """The base-template rows of the worked example, once per model."""
    base = pd.read_csv(EXAMPLE)
    base = base[base["template"] == "base"]
    path = tmp_path / "responses.csv"
    pd.concat([base.assign(model=m) for m in models], ignore_index=True).to_csv(path, index=False)
    return path


@pytest.mark.slow
def test_a_failing_partition_leaves_the_others_exported_and_exits_1(tmp_path, monkeypatch, capsys):
    """The figures of one model cannot be drawn (provoked in process): the other model is scored,
    drawn and exported, the failing one's finished steps are exported too, and the command lists
    the failure and exits 1."""
    original = fig_core.many_partition_figures

    def fails_for_broken(jobs, workers=1):
        if any(model == "broken-model" for _, model, _ in jobs):
            raise ValueError("the figures of broken-model cannot be drawn")
        return original(jobs, workers)

    monkeypatch.setattr(fig_core, "many_partition_figures", fails_for_broken)
    out = tmp_path / "o"
    code = cli.main(
        [
            "score",
            "--responses",
            str(_responses(tmp_path, "good-model", "broken-model")),
            "--corpus",
            str(DEMO_CORPUS),
            "--out",
            str(out),
        ]
    )
    printed = capsys.readouterr()
    assert code == 1, printed.out[-3000:] + printed.err[-3000:]
    assert "fairness-audit score: 1 failure(s)" in printed.err
    line = (
        "partition broken-model|base: step 'audit_figures' failed: "
        "ValueError: the figures of broken-model cannot be drawn"
    )
    assert f"  {line}" in printed.err.splitlines()
    assert f"stack traces: {out / 'score.log'}" in printed.err and "Traceback" not in printed.err
    summary = (out / "summary.md").read_text(encoding="utf-8")
    assert "## Failed" in summary and line.replace("|", "\\|") in summary
    assert "| good-model | base | 9 | 24 |" in summary and "| broken-model | base | 9 | 24 |" in summary
    # every stored table is exported: both models' scores, the good one's figures and the report
    drs = pd.read_csv(out / "drs_responses.csv")
    assert set(drs["model"]) == {"good-model", "broken-model"}
    assert "good-model" in set(pd.read_csv(out / "counterfactual_disparity.csv")["model"])
    figures = [p.name for p in (out / "figures").iterdir()]
    assert any(n.startswith("good-model__base__top_locations-") for n in figures)
    assert "good-model" in (out / "report.md").read_text(encoding="utf-8")
    assert "the figures of broken-model cannot be drawn" in (out / "score.log").read_text(encoding="utf-8")


@pytest.mark.slow
def test_a_300_character_model_name_scores_end_to_end(tmp_path):
    """It failed audit_figures with 'File name too long': file names are bounded stems now."""
    assert len(LONG_MODEL) == 300
    responses = _responses(tmp_path, "example-model", LONG_MODEL)
    out = subprocess.run(
        [
            sys.executable,
            "-m",
            "fairness_assets.cli",
            "score",
            "--responses",
            str(responses),
            "--corpus",
            str(DEMO_CORPUS),
            "--out",
            str(tmp_path / "o"),
        ],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=600,
        env={**os.environ},
    )
    assert out.returncode == 0, out.stdout[-3000:] + out.stderr[-3000:]
    figures = sorted(p.name for p in (tmp_path / "o" / "figures").iterdir())
    long_figures = [n for n in figures if n.startswith("org-very-long-model-name")]
    assert len(long_figures) >= 10 and all(len(n) <= 84 for n in figures)
    assert {n.split("__")[-1].rsplit("-", 1)[0] for n in long_figures} >= {"top_locations", "nationality_heatmap"}
    report = (tmp_path / "o" / "report.md").read_text(encoding="utf-8")
    for name in long_figures:
        assert f"(figures/{name})" in report  # the report links the files it has
    summary = (tmp_path / "o" / "summary.md").read_text(encoding="utf-8")
    assert f"| {LONG_MODEL} | base | 9 | 24 |" in summary and "## Failed" not in summary
    assert set(pd.read_csv(tmp_path / "o" / "drs_responses.csv")["model"]) == {"example-model", LONG_MODEL}
