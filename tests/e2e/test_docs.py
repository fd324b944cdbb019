"""The worked example in docs/ matches what the code produces now."""

from pathlib import Path

from fairness_assets.local import score_responses
from resources.settings import DATA_DIR, DEMO_CORPUS

ROOT = Path(__file__).resolve().parents[2]


def test_worked_example_summary_matches_a_fresh_run(tmp_path):
    score_responses(
        str(DATA_DIR / "examples" / "worked_example_responses.csv"),
        str(DEMO_CORPUS),
        str(tmp_path),
        log=lambda *_: None,
    )
    fresh = [ln for ln in (tmp_path / "summary.md").read_text().splitlines() if ln.startswith("| example-model")]
    doc = (ROOT / "docs" / "worked_example.md").read_text()
    assert len(fresh) == 12  # six partitions: the scorecard's rows and the partitions table's
    for line in fresh:
        assert line in doc, f"docs/worked_example.md is out of date: {line}"
