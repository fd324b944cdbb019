"""Two `fairness-audit score --database postgresql://...` runs started at once on different
partitions, as an operator would (issue 19.1): both succeed, and the shared reference tables hold
one copy each afterwards (before, one run failed with a duplicate provenance key, the other with
"Index contains duplicate entries", and the tables held two to eight copies)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from resources import database as D
from resources.settings import DEMO_CORPUS

ROOT = Path(__file__).resolve().parents[2]
DEMO_RESPONSES = ROOT / "data" / "examples" / "demo_responses.jsonl"


def _responses_as(tmp_path: Path, model: str) -> Path:
    rows = [json.loads(line) for line in DEMO_RESPONSES.read_text().splitlines() if line.strip()]
    path = tmp_path / f"{model}.jsonl"
    path.write_text("\n".join(json.dumps({**r, "model": model}) for r in rows) + "\n")
    return path


@pytest.mark.postgres
def test_two_score_runs_at_once_on_postgresql_leave_one_copy_of_the_reference_tables(tmp_path, postgres_url):
    D.ResultsDatabase(url=postgres_url).engine().dispose()  # the schema first: the race is on the rows
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    cli = [sys.executable, "-m", "fairness_assets.cli"]
    procs = []
    for model in ("model-a", "model-b"):
        procs.append(
            subprocess.Popen(
                cli
                + [
                    "score",
                    "--responses",
                    str(_responses_as(tmp_path, model)),
                    "--corpus",
                    str(DEMO_CORPUS),
                    "--out",
                    str(tmp_path / f"out-{model}"),
                    "--database",
                    postgres_url,
                ],
                cwd=ROOT,
                env=env,
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                text=True,
            )
        )
        time.sleep(0.2)
    for p in procs:
        out, err = p.communicate(timeout=900)
        assert p.returncode == 0, (out[-2000:], err[-3000:])
    db = D.ResultsDatabase(url=postgres_url)
    try:
        corpus = db.read_rows(D.CorpusUniversity)
        countries = db.read_rows(D.Country)
        distances = db.read_rows(D.CapitalDistance)
        assert not corpus.duplicated(["university_id"]).any()
        assert not countries.duplicated(["iso3"]).any()
        assert len(distances) == len(countries) ** 2
        assert not db.read_rows(D.Profile).duplicated(["profile_id"]).any()
        assert not db.read_rows(D.PromptRow).duplicated(["prompt_id"]).any()
        assert set(db.read_rows(D.DRSItem)["partition_key"]) == {"model-a|base", "model-b|base"}
    finally:
        db.dispose()
