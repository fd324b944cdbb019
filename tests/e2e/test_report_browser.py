"""The demo audit's report opens in headless Chromium: every section renders and every
figure loads from the one HTML file. Screenshots: docs/screenshots/report*.png (README)."""

from __future__ import annotations

import time
from pathlib import Path

import dagster as dg

from resources import database as D
from tests.helpers.browser import chromium, wait_for_text
from tests.helpers.pipeline import DEMO_RESPONSES, ROOT, audit

SHOTS = ROOT / "docs" / "screenshots"


def test_demo_report_renders_in_a_browser(tmp_path):
    db = D.ResultsDatabase(url=f"sqlite:///{tmp_path / 'results.db'}")
    result = audit(dg.DagsterInstance.ephemeral(), db, DEMO_RESPONSES)
    assert result.success
    html_path = Path(db.read_rows(D.ReportFile)["html_path"].iloc[-1])
    SHOTS.mkdir(parents=True, exist_ok=True)
    with chromium(tmp_path) as driver:
        driver.get(html_path.as_uri())
        wait_for_text(driver, ["Summary of the largest disparities", "Provenance", "Parse quality", "Tables",
                               "Figures", "Under model qwen2.5-0.5b-demo", "corpus sha256", "parse_rate",
                               "counterfactual disparity", "not significant"], timeout=30)
        images = driver.execute_script(
            "return Array.from(document.images).map(i => [i.complete, i.naturalWidth, i.src.slice(0, 22)])")
        assert len(images) >= 11
        assert all(done and width > 200 and src == "data:image/png;base64," for done, width, src in images), images
        driver.set_window_size(1400, 1100)
        driver.save_screenshot(str(SHOTS / "report.png"))
        driver.execute_script("document.getElementById('figures').scrollIntoView()")
        time.sleep(0.5)
        driver.save_screenshot(str(SHOTS / "report_figures.png"))
    for name in ("report.png", "report_figures.png"):
        data = (SHOTS / name).read_bytes()
        assert data[:8] == b"\x89PNG\r\n\x1a\n" and len(data) > 20_000
