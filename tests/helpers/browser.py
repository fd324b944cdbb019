"""Headless Chromium (Debian's chromium + chromedriver) driven by selenium, for UI tests."""

from __future__ import annotations

import contextlib
import os
import re
import shutil
import time

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


# the "Skip" button of Dagster's "Join the Dagster community" dialog: on a fresh browser profile and an
# instance without ``nux: {enabled: false}``, served from 127.0.0.1, it opens over any page about 1 s
# after the page's first query answers (later on a busy machine)
COMMUNITY_SKIP = "//*[@role='dialog']//button[normalize-space()='Skip']"

# ``arguments[0]`` scrolled into the window's middle unless it is in view already (Chromium's
# scrollIntoViewIfNeeded), then what covers it where a click lands (the centre of its first box inside
# the window, as chromedriver picks it): null when the element itself (or a child) is there, or when
# what is there is not an overlay; else the opening tag of the element of an overlay (a Blueprint
# backdrop, another dialog) that is not the target's own dialog
_SCROLL_AND_LOOK = """
const el = arguments[0];
el.scrollIntoViewIfNeeded(true);
const box = el.getClientRects()[0];
if (!box) return null;
const x = (Math.max(box.left, 0) + Math.min(box.right, window.innerWidth)) / 2;
const y = (Math.max(box.top, 0) + Math.min(box.bottom, window.innerHeight)) / 2;
const hit = document.elementFromPoint(x, y);
if (!hit || el.contains(hit)) return null;
const overlay = hit.closest('.bp5-overlay, .bp5-overlay-backdrop, [role=dialog]');
if (!overlay || overlay.contains(el)) return null;
return hit.outerHTML.slice(0, hit.outerHTML.indexOf('>') + 1).slice(0, 300);"""


def skip_community_dialog(driver) -> bool:
    """Click "Skip" in Dagster's community dialog if it is shown; whether it was."""
    from selenium.common.exceptions import WebDriverException
    from selenium.webdriver.common.by import By

    shown = False
    for skip in driver.find_elements(By.XPATH, COMMUNITY_SKIP):
        try:
            if skip.is_displayed():
                skip.click()
                shown = True
        except WebDriverException:  # still fading in, or gone already: the next look tries again
            pass
    return shown


def click(driver, target, timeout: float = 30) -> None:
    """Click ``target`` (an element, or a function of no argument that finds it: then an element the
    page re-rendered is found anew) once nothing covers it, as every browser test clicks. Until
    ``timeout``: dismisses Dagster's community dialog whenever it shows, scrolls the element into the
    window if it is not there, waits while an overlay that is not the element's own dialog (a closing
    dialog's backdrop, another dialog) is over it, and tries again when the click is intercepted or
    the element went stale; then raises AssertionError naming what took the click. One look for the
    dialog before clicking is not enough: it opens about 1 s after the page's query answers, whenever
    that is."""
    from selenium.common.exceptions import (
        ElementClickInterceptedException,
        ElementNotInteractableException,
        StaleElementReferenceException,
    )

    deadline = time.time() + timeout
    element = None
    while True:
        try:
            skip_community_dialog(driver)
            element = target() if callable(target) else target
            over = driver.execute_script(_SCROLL_AND_LOOK, element)
            if over:
                why = f"the overlay element {over} is over it"
            else:
                element.click()
                return
        except ElementClickInterceptedException as exc:
            intercepted = re.search(r"Other element would receive the click: (.*)", exc.msg or "")
            why = f"the click went to {intercepted.group(1)}" if intercepted else (exc.msg or "").splitlines()[0]
        except StaleElementReferenceException:
            if not callable(target):
                raise AssertionError(
                    f"{driver.current_url}: the element to click left the page (re-rendered) before the "
                    "click; pass a function that finds it"
                ) from None
            why = "the element went stale (re-rendered) each time"
        except ElementNotInteractableException as exc:
            why = f"the element cannot be clicked: {(exc.msg or '').splitlines()[0]}"
        if time.time() > deadline:
            raise AssertionError(f"{driver.current_url}: could not click {_describe(element)} in {timeout} s: {why}")
        time.sleep(0.5)


def _describe(element) -> str:
    """The element's tag and text, for an error message."""
    from selenium.common.exceptions import WebDriverException

    if element is None:
        return "the element"
    try:
        return f"<{element.tag_name}> {element.text.strip()[:80]!r}"
    except WebDriverException:
        return "the element (gone from the page)"
