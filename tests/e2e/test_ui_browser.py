"""UI acceptance: the Dagster webserver, opened in headless Chromium after a demo audit, renders
the asset graph, the model x template partitions, the parse-quality check results and a figure
attached as metadata.
Screenshots go to docs/screenshots/ (linked from docs/operations.md)."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import pytest

from tests.helpers.browser import chromium, wait_for_text
from tests.helpers.pipeline import DEMO_MODEL, DEMO_RESPONSES, ROOT

SHOTS = ROOT / "docs" / "screenshots"


def _free_port() -> int:
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture
def audited_webserver(results_home, tmp_path):
    env = {**os.environ, "FAIRNESS_RESPONSES": str(DEMO_RESPONSES)}
    demo = subprocess.run([sys.executable, "-m", "fairness_assets.cli", "demo"], cwd=ROOT, env=env,
                          capture_output=True, text=True, timeout=600)
    assert demo.returncode == 0, demo.stdout[-2000:] + demo.stderr[-2000:]
    port = _free_port()
    web = subprocess.Popen([str(Path(sys.executable).parent / "dagster-webserver"), "-m", "fairness_assets.definitions",
                            "-h", "127.0.0.1", "-p", str(port)], cwd=ROOT, env=env, stdout=subprocess.DEVNULL,
                           stderr=subprocess.DEVNULL, start_new_session=True)
    try:
        deadline = time.time() + 120
        while True:
            try:
                urllib.request.urlopen(f"http://127.0.0.1:{port}/server_info", timeout=5)
                break
            except OSError:
                assert web.poll() is None, "dagster-webserver exited"
                assert time.time() < deadline, "dagster-webserver did not answer in 120 s"
                time.sleep(1)
        yield f"http://127.0.0.1:{port}"
    finally:
        os.killpg(web.pid, signal.SIGTERM)
        try:
            web.wait(timeout=30)
        except subprocess.TimeoutExpired:
            os.killpg(web.pid, signal.SIGKILL)


def _open(driver, url):
    from selenium.webdriver.common.by import By

    driver.get(url)
    time.sleep(2)
    for button in driver.find_elements(By.XPATH, "//button[normalize-space()='Skip']"):  # the community dialog
        button.click()


def test_ui_renders_graph_partitions_and_checks(audited_webserver, tmp_path):
    SHOTS.mkdir(parents=True, exist_ok=True)
    with chromium(tmp_path) as driver:
        _open(driver, audited_webserver + "/assets/audit_drift?view=lineage&lineageScope=upstream&lineageDepth=8")
        wait_for_text(driver, ["audit_drift", "analysis_tables", "grs_by_country", "recommendations", "generations",
                               "qs_corpus", "profiles", "prompts", "scoring", "understanding", "reference"])
        time.sleep(2)  # edges are drawn after the nodes
        driver.save_screenshot(str(SHOTS / "ui_asset_graph.png"))

        _open(driver, audited_webserver + "/assets/generations?view=partitions")
        text = wait_for_text(driver, [DEMO_MODEL, "base", "regional", "academic", "Materialized (1)"])
        assert "Failed (0)" in text
        driver.save_screenshot(str(SHOTS / "ui_partitions.png"))

        _open(driver, audited_webserver + "/assets/recommendations?view=checks")
        text = wait_for_text(driver, ["parse_rate", "match_rate", "no_duplicate_items", "group_parse_gap",
                                      "Succeeded", "Failed"])
        driver.save_screenshot(str(SHOTS / "ui_checks.png"))

        # a figure attached to audit_figures as metadata opens from its row
        from selenium.webdriver.common.by import By

        _open(driver, audited_webserver + "/assets/audit_figures")
        wait_for_text(driver, ["Metadata", "top_locations", "nationality_heatmap"])
        row = driver.find_element(By.XPATH, "//tr[.//*[contains(text(), 'top_locations')]]")
        row.find_element(By.XPATH, ".//*[contains(text(), 'Show Markdown')]").click()
        wait_for_text(driver, ["Top 20 recommended university locations"])
        time.sleep(1)
        widths = driver.execute_script(
            "return Array.from(document.images).filter(i => i.src.startsWith('data:image/png'))"
            ".map(i => i.naturalWidth)")
        assert widths and all(w > 200 for w in widths), widths
        driver.save_screenshot(str(SHOTS / "ui_figure.png"))
    for name in ("ui_asset_graph.png", "ui_partitions.png", "ui_checks.png", "ui_figure.png"):
        data = (SHOTS / name).read_bytes()
        assert data[:8] == b"\x89PNG\r\n\x1a\n" and len(data) > 20_000, name
