"""The report one click from the UI (issue 23.1), in headless Chromium: after a demo audit,
`fairness-audit ui` serves the reports folder beside the Dagster UI; audit_report's asset page links
report.html, the link opens the report (the scorecard first) and every figure in it loads; the map
of audit_figures' metadata loads from the report server too."""

from __future__ import annotations

import time
from pathlib import Path

from tests.helpers import ui
from tests.helpers.browser import chromium, click, wait_for_text
from tests.helpers.journey import _images, _wait_images
from tests.helpers.servers import free_port


def test_the_report_link_of_the_asset_page_opens_the_report_with_its_figures(tmp_path):
    from selenium.webdriver.common.by import By

    env = ui.demo_env(tmp_path / "home")
    report_port = free_port()
    env["FAIRNESS_REPORT_PORT"] = str(report_port)  # the demo's links and the UI's server agree
    ui.run_demo(env)
    with ui.fairness_ui(env) as base, chromium(tmp_path) as driver:
        ui.open_page(driver, base + "/assets/audit_report")
        wait_for_text(driver, ["report_url", "scorecard", "summary"])
        links = [
            a
            for a in driver.find_elements(By.CSS_SELECTOR, "a[href]")
            if a.get_attribute("href").endswith("/report.html")
        ]
        assert links, [a.get_attribute("href") for a in driver.find_elements(By.CSS_SELECTOR, "a[href]")]
        href = links[0].get_attribute("href")
        assert href.startswith(f"http://127.0.0.1:{report_port}/report-"), href
        before = set(driver.window_handles)
        click(driver, links[0])  # as a user does: the link may open in a new tab
        deadline = time.time() + 30
        while (
            time.time() < deadline
            and not (set(driver.window_handles) - before)
            and not driver.current_url.endswith("/report.html")
        ):
            time.sleep(0.5)
        opened = set(driver.window_handles) - before
        if opened:
            driver.switch_to.window(opened.pop())
        wait_for_text(
            driver,
            ["Scorecard", "Per model and template", "Summary of the largest disparities", "Figures", ui.DEMO_MODEL],
            timeout=30,
        )
        assert driver.current_url == href
        images = _wait_images(driver, 11)
        assert len(images) >= 11 and all(done and width > 0 for done, width, _ in images), images
        first = driver.execute_script("return document.querySelector('section').id")
        assert first == "scorecard"

        # audit_figures: the partition's map, an image served by the report server, loads in its Markdown
        driver.switch_to.window(sorted(before)[0]) if opened else driver.back()
        ui.open_page(driver, base + "/assets/audit_figures")
        key = f"{ui.DEMO_MODEL}|base figures"
        wait_for_text(driver, ["Metadata", key])
        row = driver.find_element(By.XPATH, f"//tr[.//*[normalize-space(text())='{key}']]")
        click(driver, row.find_element(By.XPATH, ".//*[contains(text(), 'Show Markdown')]"))
        time.sleep(1)
        served = [img for img in _wait_images(driver, 1) if img[2].startswith(f"http://127.0.0.1:{report_port}/")]
        assert served and all(done and width > 0 for done, width, _ in served), _images(driver)
        assert Path(env["FAIRNESS_HOME"], "reports", "figures").is_dir()
