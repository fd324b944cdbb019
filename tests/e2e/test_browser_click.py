"""tests/helpers/browser.click, the one click of every browser test, in headless Chromium on a small
page served from 127.0.0.1: an overlay like Dagster's (a Blueprint backdrop, the "Join the Dagster
community" dialog with its Skip button) over the button to click takes a plain selenium click (the
ElementClickInterceptedException of issue "The README's test command fails on a fresh machine");
``click`` waits for the overlay to leave, skips the community dialog whenever it opens (also after
``ui.open_page``'s look), clicks a button of the overlay's own dialog at once, finds a re-rendered
button anew, and names the overlay when it never leaves."""

from __future__ import annotations

import time
from http.server import BaseHTTPRequestHandler

import pytest

from tests.helpers import ui
from tests.helpers.browser import chromium, click
from tests.helpers.servers import LoopbackHTTPServer

# ?overlay=backdrop&ms=N: a backdrop over the whole page for N ms from the load; ?overlay=community&after=N:
# the community dialog (backdrop and dialog) opens N ms after the load and stays until its Skip is
# clicked; ?overlay=own: the button is in a dialog, above that dialog's backdrop; ?overlay=rerender: a
# backdrop for 1.5 s, the button replaced by a new one after 1 s. Each click of a #target button counts.
PAGE = b"""<!doctype html>
<html><head><style>
  .bp5-overlay-backdrop { position: fixed; inset: 0; z-index: 20; background: rgba(16, 22, 26, 0.7); }
  .bp5-dialog { position: fixed; top: 30%; left: 30%; z-index: 21; background: white; padding: 24px; }
</style></head>
<body>
  <h1>page</h1>
  <div id="place"><button id="target">Materialize</button></div>
  <script>
    window.clicks = 0;
    document.addEventListener("click", (e) => { if (e.target.id === "target") window.clicks += 1; });
    const q = new URLSearchParams(location.search);
    function overlay(inner) {
      const o = document.createElement("div");
      o.className = "bp5-overlay bp5-overlay-open";
      o.innerHTML = '<div class="bp5-overlay-backdrop dagster-backdrop"></div>' + inner;
      document.body.appendChild(o);
      return o;
    }
    const kind = q.get("overlay");
    if (kind === "backdrop") {
      const o = overlay("");
      setTimeout(() => o.remove(), Number(q.get("ms")));
    } else if (kind === "community") {
      setTimeout(() => {
        const o = overlay(
          '<div class="bp5-dialog" role="dialog">Join the Dagster community <button>Skip</button></div>');
        o.querySelector("button").onclick = () => o.remove();
      }, Number(q.get("after")));
    } else if (kind === "own") {
      overlay('<div class="bp5-dialog" role="dialog">Launch runs <button id="target">Cancel</button></div>');
      document.getElementById("place").remove();
    } else if (kind === "rerender") {
      const o = overlay("");
      setTimeout(() => {
        document.getElementById("place").innerHTML = '<button id="target">Materialize</button>';
      }, 1000);
      setTimeout(() => o.remove(), 1500);
    }
  </script>
</body></html>"""


class _Page(BaseHTTPRequestHandler):
    def do_GET(self):  # noqa: N802
        self.send_response(200)
        self.send_header("Content-Type", "text/html; charset=utf-8")
        self.end_headers()
        self.wfile.write(PAGE)

    def log_message(self, *args):
        pass


@pytest.fixture(scope="module")
def page(tmp_path_factory):
    """(driver, the page's base URL): one Chromium and one server for the module's tests."""
    with LoopbackHTTPServer(_Page, "/") as server, chromium(tmp_path_factory.mktemp("click")) as driver:
        yield driver, server.url


def _target(driver):
    return driver.find_element("css selector", "#target")


def _clicks(driver) -> int:
    return driver.execute_script("return window.clicks")


def test_a_plain_click_is_intercepted_and_click_waits_for_the_backdrop_to_leave(page):
    from selenium.common.exceptions import ElementClickInterceptedException

    driver, base = page
    driver.get(base + "?overlay=backdrop&ms=1500")
    with pytest.raises(ElementClickInterceptedException, match="bp5-overlay-backdrop"):
        _target(driver).click()  # what the browser tests did: the backdrop takes it
    started = time.time()
    click(driver, _target(driver))
    assert _clicks(driver) == 1
    assert time.time() - started < 10


def test_click_skips_the_community_dialog_that_opens_after_open_pages_look(page):
    driver, base = page
    ui.open_page(driver, base + "?overlay=community&after=2500")  # open_page looks after 2 s: not open yet
    time.sleep(1)
    assert driver.find_elements("xpath", "//*[@role='dialog']//button[normalize-space()='Skip']")
    click(driver, _target(driver))
    assert _clicks(driver) == 1
    assert not driver.find_elements("css selector", ".bp5-overlay")


def test_a_button_of_the_overlays_own_dialog_is_clicked_at_once(page):
    driver, base = page
    driver.get(base + "?overlay=own")
    started = time.time()
    click(driver, _target(driver))
    assert _clicks(driver) == 1
    assert time.time() - started < 2


def test_a_button_re_rendered_under_the_backdrop_is_found_anew(page):
    driver, base = page
    driver.get(base + "?overlay=rerender")
    click(driver, lambda: _target(driver))
    assert _clicks(driver) == 1


def test_an_overlay_that_never_leaves_is_named(page):
    driver, base = page
    driver.get(base + "?overlay=backdrop&ms=600000")
    with pytest.raises(AssertionError, match=r"could not click <button> 'Materialize' in 2 s: .*bp5-overlay-backdrop"):
        click(driver, _target(driver), timeout=2)
    assert _clicks(driver) == 0
