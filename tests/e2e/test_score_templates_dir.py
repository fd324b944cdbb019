"""`score` reads the templates the code location loads (FAIRNESS_TEMPLATES_DIR) when it checks and
stages the responses file, not the shipped folder: a template the folder lacks is a reject of the
file, and the runs score the rest."""

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pandas as pd

from resources.settings import DATA_DIR, DEMO_CORPUS, TEMPLATES_DIR

ROOT = Path(__file__).resolve().parents[2]
EXAMPLE = DATA_DIR / "examples" / "worked_example_responses.csv"


def test_score_stages_the_responses_with_the_configured_templates(tmp_path):
    folder = tmp_path / "templates"
    folder.mkdir()
    for name in ("base.yaml", "regional.yaml", "format_instruction.txt"):
        shutil.copy(TEMPLATES_DIR / name, folder / name)
    env = {**os.environ, "FAIRNESS_TEMPLATES_DIR": str(folder)}
    out = subprocess.run(
        [
            sys.executable,
            "-m",
            "fairness_assets.cli",
            "score",
            "--responses",
            str(EXAMPLE),
            "--corpus",
            str(DEMO_CORPUS),
            "--out",
            str(tmp_path / "o"),
        ],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=600,
        env=env,
    )
    assert out.returncode == 0, out.stderr[-3000:]
    examples = pd.read_csv(EXAMPLE)
    rejects = pd.read_csv(tmp_path / "o" / "rejects.csv")
    others = examples[~examples["template"].isin(["base", "regional"])]
    assert len(others) and len(rejects) == len(others)  # every row of another template, and no other row
    assert set(pd.read_csv(tmp_path / "o" / "drs_responses.csv")["template"]) == {"base", "regional"}
