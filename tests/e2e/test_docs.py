"""The worked example in docs/ matches what the code produces now."""

from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def test_worked_example_summary_matches_a_fresh_run(worked_example_scored):
    out, _ = worked_example_scored  # scored by this session's code (tests/conftest.py)
    fresh = [ln for ln in (out / "summary.md").read_text().splitlines() if ln.startswith("| example-model")]
    doc = (ROOT / "docs" / "worked_example.md").read_text()
    assert len(fresh) == 12  # six partitions: the scorecard's rows and the partitions table's
    for line in fresh:
        assert line in doc, f"docs/worked_example.md is out of date: {line}"
