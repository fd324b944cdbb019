"""Two `score` calls in one process at once (a library user's threads, issue 25.2): each runs with
its own settings (its responses, corpus and database), none reads or writes the environment, and
each gets its own results. Both calls are held at the same point (their first run, the reference
data) until the other has reached it, so a `score` that swapped `os.environ` without a lock would
run one call's assets with the other's files and database, and this test fails on it."""

from __future__ import annotations

import hashlib
import json
import os
import threading
from pathlib import Path

import pandas as pd

from fairness_assets.local import score_responses
from resources import database as D
from resources.settings import DEMO_CORPUS

ROOT = Path(__file__).resolve().parents[2]
DEMO_RESPONSES = ROOT / "data" / "examples" / "demo_responses.jsonl"


def _inputs(tmp_path: Path, model: str, drop_last: int) -> tuple[Path, Path]:
    rows = [json.loads(line) for line in DEMO_RESPONSES.read_text().splitlines() if line.strip()]
    responses = tmp_path / f"{model}.jsonl"
    responses.write_text("\n".join(json.dumps({**r, "model": model}) for r in rows) + "\n")
    lines = DEMO_CORPUS.read_bytes().splitlines(keepends=True)
    corpus = tmp_path / f"corpus-{model}.csv"  # a corpus of its own: fewer universities, another SHA-256
    corpus.write_bytes(b"".join(lines[: len(lines) - drop_last]))
    return responses, corpus


def test_two_score_calls_in_two_threads_each_get_their_own_results(tmp_path):
    environ = {k: v for k, v in os.environ.items() if k.startswith("FAIRNESS_")}
    barrier = threading.Barrier(2, timeout=120)
    calls = {"model-a": 3, "model-b": 7}  # universities left out of each one's corpus
    results: dict[str, object] = {}

    def score(model: str) -> None:
        def log(line: str) -> None:
            if line.startswith("reference data"):  # both calls are past their settings and at their first run
                barrier.wait()

        responses, corpus = _inputs(tmp_path, model, calls[model])
        try:
            results[model] = score_responses(
                str(responses),
                str(corpus),
                str(tmp_path / f"out-{model}"),
                database_url=f"sqlite:///{tmp_path / f'{model}.db'}",
                log=log,
            )
        except BaseException as exc:  # noqa: BLE001 - reported by the assertions below
            results[model] = exc

    threads = [threading.Thread(target=score, args=(m,), name=f"score-{m}") for m in calls]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=600)
    assert not any(t.is_alive() for t in threads), "a score call did not finish"
    assert {k: v for k, v in os.environ.items() if k.startswith("FAIRNESS_")} == environ  # never changed
    for model, dropped in calls.items():
        assert not isinstance(results[model], BaseException), (model, results[model])
        corpus = tmp_path / f"corpus-{model}.csv"
        database = D.ResultsDatabase(url=f"sqlite:///{tmp_path / f'{model}.db'}")
        try:
            generations = database.read_rows(D.Generation)
            universities = database.read_rows(D.CorpusUniversity)
        finally:
            database.dispose()
        assert set(generations["model"]) == {model}  # its own responses, in its own database
        assert set(universities["corpus_sha256"]) == {hashlib.sha256(corpus.read_bytes()).hexdigest()}
        assert len(universities) == 49 - dropped  # its own corpus (the demo file: 2 header rows, 49 universities)
        recommendations = pd.read_csv(tmp_path / f"out-{model}" / "recommendations.csv")
        assert set(recommendations["model"]) == {model}
        assert set(results[model]["drs_items"]["model"]) == {model}
