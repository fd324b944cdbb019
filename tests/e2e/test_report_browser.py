"""The demo audit's report opens in headless Chromium: every section renders and every
figure loads from the one HTML file. The test saves its screenshots under tmp_path and leaves
docs/screenshots/ as it found it; README's docs/screenshots/report*.png are made by
``.venv/bin/python docs/make_screenshots.py`` (the report opened from the UI's link,
tests/helpers/journey.py)."""

from __future__ import annotations

import hashlib
from pathlib import Path

import dagster as dg

from resources import database as D
from tests.helpers import ui
from tests.helpers.browser import chromium
from tests.helpers.pipeline import DEMO_RESPONSES, ROOT, audit

DOCS_SHOTS = ROOT / "docs" / "screenshots"


def _hashes(folder: Path) -> dict[str, str]:
    return (
        {
            str(p.relative_to(folder)): hashlib.sha256(p.read_bytes()).hexdigest()
            for p in sorted(folder.rglob("*"))
            if p.is_file()
        }
        if folder.exists()
        else {}
    )


def test_demo_report_renders_in_a_browser(tmp_path):
    before = _hashes(DOCS_SHOTS)
    db = D.ResultsDatabase(url=f"sqlite:///{tmp_path / 'results.db'}")
    result = audit(dg.DagsterInstance.ephemeral(), db, DEMO_RESPONSES)
    assert result.success
    html_path = Path(db.read_rows(D.ReportFile)["html_path"].iloc[-1])
    shots = tmp_path / "screenshots"
    with chromium(tmp_path) as driver:
        saved = ui.report(driver, html_path, shots / "report.png", shots / "report_figures.png")
    assert saved == [shots / "report.png", shots / "report_figures.png"]
    for shot in saved:
        data = shot.read_bytes()
        assert data[:8] == ui.PNG and len(data) > 20_000, shot
    assert _hashes(DOCS_SHOTS) == before, "the test changed docs/screenshots/ (make_screenshots.py makes those)"
