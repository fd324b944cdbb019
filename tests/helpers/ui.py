"""The Dagster UI after a demo audit, driven in headless Chromium: the demo run, the webserver and
the pages (with the controls) that README.md and docs/operations.md describe.

Shared by ``tests/e2e/test_ui_browser.py`` (screenshots into the test's tmp_path) and
``docs/make_screenshots.py`` (screenshots into docs/screenshots/, after the new user's journey of
tests/helpers/journey.py). Every page function checks that what the docs name is there and raises
AssertionError otherwise; none of them launches a run. ``report`` does the same for the demo's
report.html opened from disk (``tests/e2e/test_report_browser.py``).
Labels are the ones Dagster 1.13 shows (``Materialize…`` and ``Materialize all…`` end in the
one-character ellipsis U+2026)."""

from __future__ import annotations

import contextlib
import os
import re
import signal
import subprocess
import sys
import time
from pathlib import Path

from fairness_assets.local import OFFLINE_INSTANCE_YAML
from tests.helpers.browser import CHROMEDRIVER, CHROMIUM, FLAGS, click, skip_community_dialog, wait_for_text
from tests.helpers.servers import wait_for_http

ROOT = Path(__file__).resolve().parents[2]
DEMO_RESPONSES = ROOT / "data" / "examples" / "demo_responses.jsonl"
DEMO_MODEL = "qwen2.5-0.5b-demo"
BIN = Path(sys.executable).parent

MATERIALIZE = "Materialize…"  # the asset page's button (top right)
MATERIALIZE_ALL = "Materialize all…"  # the Lineage tab's button
ADD_PARTITION = "Add a partition"  # in the launch dialog, under the dynamic `models` dimension
# generations and everything downstream of it: what "Materialize all…" launches from the Lineage tab
GENERATIONS_AND_DOWNSTREAM = (
    "generations",
    "recommendations",
    "subject_tags",
    "drs_scores",
    "grs_by_country",
    "analysis_tables",
    "base_vs_regional",
    "audit_drift",
    "audit_statistics",
    "audit_figures",
    "audit_geography",
    "model_comparison",
    "sensitivity",
    "audit_report",
)
PNG = b"\x89PNG\r\n\x1a\n"
TEMPLATES = sorted(p.stem for p in (ROOT / "data" / "templates").glob("*.yaml"))  # the static `template` dimension


# ---------------------------------------------------------------- the demo and the webserver

from tests.helpers.servers import free_port  # noqa: E402


def demo_env(home: Path) -> dict:
    """The environment of a private demo: DAGSTER_HOME and FAIRNESS_HOME under ``home``, the example
    answers as the responses file, nothing else from the caller's FAIRNESS_* settings."""
    dagster_home = home / "dagster_home"
    dagster_home.mkdir(parents=True, exist_ok=True)
    (dagster_home / "dagster.yaml").write_text(OFFLINE_INSTANCE_YAML)
    env = {k: v for k, v in os.environ.items() if not k.startswith("FAIRNESS_")}
    env.update(
        DAGSTER_HOME=str(dagster_home),
        FAIRNESS_HOME=str(home / "fairness_home"),
        FAIRNESS_RESPONSES=str(DEMO_RESPONSES),
    )
    return env


def run_demo(env: dict, timeout: float = 600) -> str:
    """``fairness-audit demo`` in ``env`` (the demo audit over the responses file); returns its stdout."""
    cli = BIN / "fairness-audit"
    cmd = [str(cli), "demo"] if cli.exists() else [sys.executable, "-m", "fairness_assets.cli", "demo"]
    demo = subprocess.run(cmd, cwd=ROOT, env=env, capture_output=True, text=True, timeout=timeout)
    assert demo.returncode == 0, demo.stdout[-2000:] + demo.stderr[-2000:]
    return demo.stdout


def demo_report(demo_stdout: str, env: dict) -> Path:
    """The report.html the demo wrote: the path it printed ("audit report: ..."), else the newest
    report.html under ``$FAIRNESS_HOME/reports``."""
    printed = re.search(r"audit report: (\S+report\.html)", demo_stdout)
    if printed and Path(printed.group(1)).is_file():
        return Path(printed.group(1))
    found = sorted((Path(env["FAIRNESS_HOME"]) / "reports").rglob("report.html"), key=lambda p: p.stat().st_mtime)
    assert found, f"the demo wrote no report.html under {env['FAIRNESS_HOME']}/reports: {demo_stdout[-2000:]}"
    return found[-1]


@contextlib.contextmanager
def webserver(env: dict, startup_timeout: float = 120):
    """``dagster-webserver -m fairness_assets.definitions`` on a free port, in its own process group;
    yields its base URL. Stopped with SIGTERM to the group, SIGKILL after 30 s."""
    port = free_port()
    web = subprocess.Popen(
        [str(BIN / "dagster-webserver"), "-m", "fairness_assets.definitions", "-h", "127.0.0.1", "-p", str(port)],
        cwd=ROOT,
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,
    )
    try:
        wait_for_http(f"http://127.0.0.1:{port}/server_info", web, startup_timeout, "dagster-webserver")
        yield f"http://127.0.0.1:{port}"
    finally:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(web.pid, signal.SIGTERM)
        try:
            web.wait(timeout=30)
        except subprocess.TimeoutExpired:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(web.pid, signal.SIGKILL)
            web.wait()


@contextlib.contextmanager
def fairness_ui(env: dict, startup_timeout: float = 240, output: Path | None = None):
    """``fairness-audit ui`` (``dg dev``: webserver, daemon and code server) on a free port, in
    its own process group, as a new user starts it; yields its base URL. Stopped with SIGTERM to the
    group, SIGKILL after 30 s. ``output``: a file that gets what it prints (stdout and stderr)."""
    port = free_port()
    cli = BIN / "fairness-audit"
    cmd = [str(cli)] if cli.exists() else [sys.executable, "-m", "fairness_assets.cli"]
    sink = open(output, "w", encoding="utf-8") if output is not None else subprocess.DEVNULL  # noqa: SIM115
    proc = subprocess.Popen(
        cmd + ["ui", "--host", "127.0.0.1", "-p", str(port)],
        cwd=ROOT,
        env=env,
        stdout=sink,
        stderr=subprocess.STDOUT if output is not None else subprocess.DEVNULL,
        start_new_session=True,
    )
    if output is not None:
        sink.close()  # the child holds its own copy
    try:
        wait_for_http(f"http://127.0.0.1:{port}/server_info", proc, startup_timeout, "fairness-audit ui")
        yield f"http://127.0.0.1:{port}"
    finally:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(proc.pid, signal.SIGTERM)
        try:
            proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()


@contextlib.contextmanager
def chromium_driver(profile_dir: Path):
    """Headless Chromium with tests/helpers/browser.py's flags, outside pytest (no skip: raises when
    Chromium, chromedriver or selenium is missing)."""
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service

    missing = [p for p in (CHROMIUM, CHROMEDRIVER) if not os.path.exists(p)]
    if missing:
        raise RuntimeError(f"{missing} not installed: apt-get install chromium chromium-driver")
    options = webdriver.ChromeOptions()
    options.binary_location = CHROMIUM
    for flag in FLAGS + [f"--user-data-dir={profile_dir}"]:
        options.add_argument(flag)
    driver = webdriver.Chrome(service=Service(CHROMEDRIVER), options=options)
    try:
        yield driver
    finally:
        driver.quit()


# ---------------------------------------------------------------- page helpers


def open_page(driver, url: str) -> None:
    """Open ``url`` and give the page 2 s to render; Dagster's community dialog is skipped if it is
    shown by then (``click`` skips it whenever it shows later)."""
    driver.get(url)
    time.sleep(2)
    skip_community_dialog(driver)


def button(driver, label: str, within=None, timeout: float = 60):
    """The visible button whose text is exactly ``label`` (in ``within``, else the page)."""
    from selenium.common.exceptions import TimeoutException
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support.ui import WebDriverWait

    def find(d):
        found = (within or d).find_elements(By.XPATH, f".//button[normalize-space()='{label}']")
        shown = [b for b in found if b.is_displayed()]
        return shown[0] if shown else False

    try:
        return WebDriverWait(driver, timeout, poll_frequency=0.5).until(find)
    except TimeoutException:
        labels = [b.text for b in driver.find_elements(By.TAG_NAME, "button") if b.text.strip()]
        raise AssertionError(
            f"{driver.current_url}: no button {label!r} after {timeout} s; buttons: {labels}"
        ) from None


def dialog(driver, title_start: str, timeout: float = 60, containing: tuple[str, ...] = ()):
    """The open dialog whose text starts with ``title_start`` (and, once drawn, holds every text of
    ``containing``: the dialog fills in after it opens, slowly on a busy machine)."""
    from selenium.common.exceptions import TimeoutException
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support.ui import WebDriverWait

    def find(d):
        shown = [
            x
            for x in d.find_elements(By.CSS_SELECTOR, "[role=dialog]")
            if x.is_displayed() and x.text.startswith(title_start) and all(t in x.text for t in containing)
        ]
        return shown[-1] if shown else False

    try:
        return WebDriverWait(driver, timeout, poll_frequency=0.5).until(find)
    except TimeoutException:
        held = f" holding {list(containing)}" if containing else ""
        raise AssertionError(f"{driver.current_url}: no dialog {title_start!r}{held} after {timeout} s") from None


def save(driver, path: Path) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    driver.save_screenshot(str(path))
    data = path.read_bytes()
    assert data[:8] == PNG and len(data) > 20_000, path
    return path


def _collapse_warnings(driver, launch) -> None:
    """Fold the launch dialog's Warnings section (the webserver runs without the daemon here; with
    ``dagster dev`` it runs and the warning is not shown); its header stays, with the count."""
    from selenium.webdriver.common.by import By

    for header in launch.find_elements(By.XPATH, ".//span[normalize-space()='Warnings']"):
        click(driver, header)
        time.sleep(1)


def _in_view(driver, names) -> list[str]:
    """Those of ``names`` not drawn inside the window (graph nodes are found by their exact text)."""
    return driver.execute_script(
        """
        const names = arguments[0], out = [];
        const w = window.innerWidth, h = window.innerHeight;
        for (const name of names) {
          const xp = `//*[normalize-space(text())='${name}']`;
          const it = document.evaluate(xp, document, null, XPathResult.ORDERED_NODE_SNAPSHOT_TYPE, null);
          let ok = false;
          for (let i = 0; i < it.snapshotLength; i++) {
            const r = it.snapshotItem(i).getBoundingClientRect();
            if (r.width > 0 && r.left >= 0 && r.top >= 0 && r.right <= w && r.bottom <= h) ok = true;
          }
          if (!ok) out.push(name);
        }
        return out;""",
        list(names),
    )


# ---------------------------------------------------------------- the pages the docs show


def asset_graph(driver, base: str, path: Path) -> Path:
    """The asset graph: audit_drift's Lineage tab, upstream, whole depth."""
    open_page(driver, base + "/assets/audit_drift?view=lineage&lineageScope=upstream&lineageDepth=8")
    wait_for_text(
        driver,
        [
            "audit_drift",
            "analysis_tables",
            "grs_by_country",
            "recommendations",
            "generations",
            "qs_corpus",
            "profiles",
            "prompts",
            "scoring",
            "understanding",
            "reference",
        ],
    )
    time.sleep(2)  # edges are drawn after the nodes
    return save(driver, path)


def materialize_dialog(driver, base: str, path: Path, add_partition_path: Path | None = None) -> list[Path]:
    """generations' page → "Materialize…" → the launch dialog, whose model dimension has "Add a partition";
    with ``add_partition_path``, also that control's own dialog ("Add a partition for models", a
    name typed, not saved). Cancels everything: nothing is added, no run is launched."""
    from selenium.webdriver.common.by import By

    open_page(driver, base + "/assets/generations")
    click(driver, lambda: button(driver, MATERIALIZE))
    launch = dialog(driver, "Launch runs to materialize generations")
    wait_for_text(driver, ["Partition selection", "model", "template", ADD_PARTITION, "Launch backfill"])
    add = button(driver, ADD_PARTITION, within=launch)
    # the control sits under the `model` dimension (the only dynamic one), not under `template`
    section = launch.text.split("Partition selection", 1)[1]
    assert section.index("model") < section.index(ADD_PARTITION) < section.index("template"), section[:300]
    assert len(launch.find_elements(By.XPATH, f".//button[normalize-space()='{ADD_PARTITION}']")) == 1
    _collapse_warnings(driver, launch)
    shots = [save(driver, path)]
    if add_partition_path is not None:
        click(driver, add)
        small = dialog(driver, "Add a partition for")
        assert "models" in small.text and "Partition name" in small.text, small.text
        small.find_element(By.TAG_NAME, "input").send_keys("my-model")
        time.sleep(1)
        shots.append(save(driver, add_partition_path))
        click(driver, button(driver, "Cancel", within=small))
        time.sleep(1)
    click(driver, lambda: button(driver, "Cancel", within=dialog(driver, "Launch runs to materialize generations")))
    return shots


SELECT_PARTITION = "Select a partition or create one"  # the placeholder of each dimension's picker


def _open_launch_dialog(driver, base: str):
    """generations' page → "Materialize…" → the launch dialog (confirming "Are you sure?", which a
    fresh instance shows because the reference assets upstream are not materialized yet)."""
    open_page(driver, base + "/assets/generations")
    click(driver, lambda: button(driver, MATERIALIZE))
    for _ in range(20):
        shown = [d for d in driver.find_elements("css selector", "[role=dialog]") if d.is_displayed()]
        if any(d.text.startswith("Launch runs to materialize generations") for d in shown):
            break
        sure = [d for d in shown if d.text.startswith("Are you sure?")]
        if sure:
            click(driver, button(driver, "Confirm", within=sure[0]))
        time.sleep(0.5)
    return dialog(driver, "Launch runs to materialize generations")


def _picker_items(driver, launch, index: int) -> tuple[object, list[str]]:
    """Open the partition picker of dimension ``index`` (0: model, 1: template); (its popover, the
    partition names it lists)."""
    from selenium.webdriver.common.by import By

    pickers = launch.find_elements(By.XPATH, f".//*[normalize-space(text())='{SELECT_PARTITION}']")
    assert len(pickers) == 2, launch.text[:500]
    click(driver, pickers[index])
    time.sleep(1)
    shown = [
        p for p in driver.find_elements(By.CSS_SELECTOR, "[data-radix-popper-content-wrapper]") if p.is_displayed()
    ]
    assert shown, f"the picker of dimension {index} did not open: {launch.text[:500]}"
    lines = [ln.strip() for ln in shown[-1].text.splitlines()]
    return shown[-1], [ln for ln in lines if ln and ln != "Add partition" and not ln.startswith("Select all (")]


def _close_picker(driver) -> None:
    from selenium.webdriver.common.by import By
    from selenium.webdriver.common.keys import Keys

    driver.find_element(By.TAG_NAME, "body").send_keys(Keys.ESCAPE)
    time.sleep(1)


def launch_registered_model(driver, base: str, model: str, path: Path, timeout: float = 120) -> list[str]:
    """A new user's first launch: generations' page → "Materialize…" → in the launch dialog the
    ``model`` picker already lists ``model`` (no "Add a partition" click; the page is opened again
    until it does, up to ``timeout``): tick it, click template "All", and the dialog is ready to
    "Launch backfill" (screenshot at ``path``). Cancels: no run is launched. Returns the models
    the picker listed."""
    from selenium.webdriver.common.by import By

    deadline = time.time() + timeout
    while True:
        launch = _open_launch_dialog(driver, base)
        popover, models = _picker_items(driver, launch, 0)
        if model in models or time.time() > deadline:
            break
        _close_picker(driver)
        click(driver, button(driver, "Cancel", within=launch))
        time.sleep(3)
    assert model in models, f"after {timeout} s the model picker lists {models}, not {model!r}"
    click(driver, popover.find_element(By.XPATH, f".//*[normalize-space(text())='{model}']"))
    time.sleep(1)
    _close_picker(driver)
    launch = dialog(driver, "Launch runs to materialize generations")
    button(driver, "All", within=launch)  # two "All" buttons: model's, then template's
    alls = [b for b in launch.find_elements(By.XPATH, ".//button[normalize-space()='All']") if b.is_displayed()]
    assert len(alls) == 2, launch.text[:500]
    click(driver, alls[1])
    time.sleep(1)
    templates = len(TEMPLATES)
    text = wait_for_text(driver, [f"{templates} partitions", "Launch backfill"])
    assert "Could not find partition" not in text, text[-1500:]
    launch = dialog(driver, "Launch runs to materialize generations")
    assert button(driver, "Launch backfill", within=launch).is_enabled()
    _collapse_warnings(driver, launch)
    save(driver, path)
    click(driver, button(driver, "Cancel", within=launch))
    time.sleep(1)
    return models


def lineage_materialize_all(driver, base: str, path: Path, dialog_path: Path | None = None) -> list[Path]:
    """generations' Lineage tab → "Downstream" → graph depth "All": generations and every asset
    downstream, with the tab's "Materialize all…" button; with ``dialog_path``, also the dialog that
    button opens (cancelled, no run)."""
    open_page(driver, base + "/assets/generations?view=lineage")
    click(driver, lambda: button(driver, "Downstream"))
    time.sleep(1)
    click(driver, lambda: button(driver, "All"))
    size = driver.get_window_size()
    driver.set_window_size(size["width"], 1300)  # a taller window for the whole lineage
    try:
        # the graph draws only the nodes in the window: wait for the tab, zoom out until every node of
        # the lineage is drawn, then require them all
        wait_for_text(driver, ["generations", "recommendations", MATERIALIZE_ALL])
        assert "lineageScope=downstream" in driver.current_url, driver.current_url
        time.sleep(2)
        from selenium.webdriver.common.by import By

        zoom_out = driver.find_elements(By.XPATH, "//button[.//*[@aria-label='zoom_out']]")
        for _ in range(10):
            if not _in_view(driver, GENERATIONS_AND_DOWNSTREAM) or not zoom_out:
                break
            click(driver, zoom_out[0])
            time.sleep(1)
        wait_for_text(driver, list(GENERATIONS_AND_DOWNSTREAM) + [MATERIALIZE_ALL])
        time.sleep(1)
        shots = [save(driver, path)]
        click(driver, lambda: button(driver, MATERIALIZE_ALL))
        launch = dialog(driver, "Launch runs to materialize", containing=(ADD_PARTITION, "Launch backfill"))
        title = launch.text.splitlines()[0]
        assert re.fullmatch(rf"Launch runs to materialize {len(GENERATIONS_AND_DOWNSTREAM)} assets", title), title
        assert ADD_PARTITION in launch.text and "Launch backfill" in launch.text, launch.text[:500]
        if dialog_path is not None:
            _collapse_warnings(driver, launch)
            shots.append(save(driver, dialog_path))
        click(driver, button(driver, "Cancel", within=launch))
        time.sleep(1)
    finally:
        driver.set_window_size(size["width"], size["height"])
    return shots


def partitions(driver, base: str, path: Path) -> Path:
    """generations' Partitions tab: the model × template grid of the demo partition."""
    open_page(driver, base + "/assets/generations?view=partitions")
    text = wait_for_text(driver, [DEMO_MODEL, "base", "regional", "academic", "Materialized (1)"])
    assert "Failed (0)" in text
    return save(driver, path)


def checks(driver, base: str, path: Path) -> Path:
    """recommendations' Checks tab: the parse-quality checks and their results."""
    open_page(driver, base + "/assets/recommendations?view=checks")
    wait_for_text(driver, ["parse_rate", "match_rate", "no_duplicate_items", "group_parse_gap", "Succeeded", "Failed"])
    return save(driver, path)


def figure(driver, base: str, path: Path) -> Path:
    """A figure attached to audit_figures as metadata, opened from its row ("Show Markdown")."""
    from selenium.webdriver.common.by import By

    open_page(driver, base + "/assets/audit_figures")
    wait_for_text(driver, ["Metadata", "top_locations", "nationality_heatmap"])
    row = driver.find_element(By.XPATH, "//tr[.//*[contains(text(), 'top_locations')]]")
    click(driver, row.find_element(By.XPATH, ".//*[contains(text(), 'Show Markdown')]"))
    wait_for_text(driver, ["Top 20 recommended university locations"])
    time.sleep(1)
    widths = driver.execute_script(
        "return Array.from(document.images).filter(i => i.src.startsWith('data:image/png')).map(i => i.naturalWidth)"
    )
    assert widths and all(w > 200 for w in widths), widths
    return save(driver, path)


# ---------------------------------------------------------------- the demo's report (not the UI)

REPORT_TEXTS = [
    "Summary of the largest disparities",
    "Provenance",
    "Parse quality",
    "Tables",
    "Figures",
    f"Under model {DEMO_MODEL}",
    "corpus sha256",
    "parse_rate",
    "counterfactual disparity",
    "not significant",
]


def report(driver, html_path: Path, path: Path, figures_path: Path) -> list[Path]:
    """The demo's report.html opened from disk: every section renders and every figure (at least 11)
    loads from the one file as an inline PNG. Saves the top of the report (``path``, README's
    report.png) and its Figures section (``figures_path``) in a 1400 × 1100 window; the window's
    size is put back afterwards."""
    driver.get(Path(html_path).as_uri())
    wait_for_text(driver, REPORT_TEXTS, timeout=30)
    images = driver.execute_script(
        "return Array.from(document.images).map(i => [i.complete, i.naturalWidth, i.src.slice(0, 22)])"
    )
    assert len(images) >= 11, images
    assert all(done and width > 200 and src == "data:image/png;base64," for done, width, src in images), images
    size = driver.get_window_size()
    driver.set_window_size(1400, 1100)
    try:
        shots = [save(driver, path)]
        driver.execute_script("document.getElementById('figures').scrollIntoView()")
        time.sleep(0.5)
        shots.append(save(driver, figures_path))
    finally:
        driver.set_window_size(size["width"], size["height"])
    return shots
