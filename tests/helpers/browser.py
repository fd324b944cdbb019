"""Headless Chromium (Debian's chromium + chromedriver) driven by selenium, for UI tests."""

from __future__ import annotations

import contextlib
import os
import shutil

import pytest

CHROMIUM = os.environ.get("FAIRNESS_TEST_CHROMIUM") or shutil.which("chromium") or "/usr/bin/chromium"
CHROMEDRIVER = os.environ.get("FAIRNESS_TEST_CHROMEDRIVER") or shutil.which("chromedriver") or "/usr/bin/chromedriver"
# no background networking: this machine's network is closed, and Chromium would retry forever
FLAGS = [
    "--headless=new",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--disable-dev-shm-usage",
    "--window-size=1600,1000",
]


@contextlib.contextmanager
def chromium(tmp_path):
    """A selenium driver of headless Chromium, or a skip that says what is missing."""
    pytest.importorskip("selenium.webdriver", reason="selenium is in the dev extra (pip install -e .[dev])")

    missing = [p for p in (CHROMIUM, CHROMEDRIVER) if not os.path.exists(p)]
    if missing:
        if os.environ.get("CI"):
            raise RuntimeError(f"{missing} not installed; .ci/run installs Debian's chromium and chromium-driver")
        pytest.skip(f"{missing} not installed: apt-get install chromium chromium-driver (as .ci/run does)")
    from tests.helpers.ui import chromium_driver  # the driver itself, shared with docs/make_screenshots.py

    with chromium_driver(tmp_path / "chromium-profile") as driver:
        yield driver


def wait_for_text(driver, texts, timeout: float = 60) -> str:
    """Wait until the page body shows every string of ``texts``; returns the body text."""
    from selenium.common.exceptions import TimeoutException
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support.ui import WebDriverWait

    body = {"text": ""}

    def shown(d):
        body["text"] = d.find_element(By.TAG_NAME, "body").text
        return all(t in body["text"] for t in texts)

    try:
        WebDriverWait(driver, timeout, poll_frequency=0.5).until(shown)
    except TimeoutException:
        missing = [t for t in texts if t not in body["text"]]
        raise AssertionError(
            f"{driver.current_url}: {missing} not shown after {timeout} s; page text: {body['text'][:1500]!r}"
        ) from None
    return body["text"]
