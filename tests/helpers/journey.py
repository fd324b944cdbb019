"""The new user's journey (issue 23 item 7), driven in headless Chromium on ``fairness-audit ui``:

1. an empty instance (no run, no partition) started with a responses file that holds only some
   templates of the demo model;
2. the file's model is a partition on the first page: the model picker of the launch dialog lists
   it, with no "Add a partition" click and no "Could not find partition" popup;
3. *Lineage* (the left menu) → **Materialize all…** (every asset, the reference data included) for
   that model and every template: one run per partition (issue 32.5). The templates of the file are
   materialized; each missing one's run fails in ``generations`` naming it as missing from the file,
   and that partition is *Failed*, never green: on the backfill page, the *Partitions* tab, the
   Catalog and the partition's own page (which shows no other partition's numbers); each
   parse-quality check's *Partitions* view shows its verdict per partition;
4. the ``backfill_report`` sensor builds the assets that span partitions over the stored ones, and
   ``audit_report``'s page links the report, which opens from the report server with the scorecard
   first and every image loaded;
5. ``audit_figures``' page shows the world map, loaded.

Shared by ``tests/e2e/test_new_user_journey.py`` (screenshots into the test's tmp_path) and
``docs/make_screenshots.py`` (screenshots into docs/screenshots/). Each page function checks what
the docs say is there and raises AssertionError naming what is not.
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from urllib.parse import quote

from tests.helpers import ui
from tests.helpers.browser import click, wait_for_text
from tests.helpers.servers import free_port, wait_for_http

REFERENCE = ("qs_corpus", "country_geography", "capital_distances", "profiles", "prompts")
EVERY_ASSET = REFERENCE + ui.GENERATIONS_AND_DOWNSTREAM  # what *Lineage* → "Materialize all…" launches
GROUPS = ("generation", "reference", "reporting", "scoring", "understanding")
CROSS_PARTITION = ("base_vs_regional", "model_comparison", "sensitivity", "audit_report")  # span partitions
PARTITIONED = tuple(a for a in ui.GENERATIONS_AND_DOWNSTREAM if a not in CROSS_PARTITION)
MISSING_FROM_FILE = "has no usable row for model"  # the start of generations' reason (defs/generation/assets.py)


# ---------------------------------------------------------------- the instance and the UI


def partial_responses(path: Path, templates: tuple[str, ...] = ("base", "regional")) -> Path:
    """The demo model's example answers (data/examples/demo_responses.jsonl, template base) written
    once per template of ``templates`` (each of them takes the full profiles of the base template):
    a responses file that holds some templates of the model and lacks the others."""
    rows = [json.loads(line) for line in ui.DEMO_RESPONSES.read_text().splitlines() if line.strip()]
    assert rows and {r["template"] for r in rows} == {"base"}, "the demo answers are expected under template base"
    unknown = sorted(set(templates) - set(ui.TEMPLATES))
    assert not unknown, f"templates {unknown} are not templates of data/templates/ ({ui.TEMPLATES})"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(json.dumps({**r, "template": t}) + "\n" for t in templates for r in rows))
    return path


def journey_env(home: Path, responses: Path) -> dict:
    """A fresh instance: DAGSTER_HOME and FAIRNESS_HOME under ``home`` (empty), ``responses`` as
    FAIRNESS_RESPONSES, a free FAIRNESS_REPORT_PORT; nothing else from the caller's FAIRNESS_*."""
    env = ui.demo_env(home)
    env.update(
        FAIRNESS_RESPONSES=str(responses),
        FAIRNESS_REPORT_PORT=str(free_port()),
        GX_ANALYTICS_ENABLED="false",
        DAGSTER_DISABLE_TELEMETRY="1",
    )
    return env


def _group_members(pgid: int) -> list[int]:
    """The live processes of process group ``pgid`` (zombies left out)."""
    found = []
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rsplit(")", 1)[1].split()
        except (FileNotFoundError, ProcessLookupError, IndexError):
            continue
        if int(fields[2]) == pgid and fields[0] != "Z":
            found.append(int(stat.parent.name))
    return found


@contextlib.contextmanager
def fairness_ui(env: dict, log_path: Path, startup_timeout: float = 240):
    """``fairness-audit ui`` on a free port in its own process group (its webserver, daemon, code
    server, report server and the runs the daemon launches are in that group); yields its base URL.
    On exit, even after a failure, SIGTERM to the group, then SIGKILL to whatever of it is left after
    30 s; raises AssertionError if a process of the group still lives after that."""
    port = free_port()
    cli = ui.BIN / "fairness-audit"
    cmd = [str(cli)] if cli.exists() else [sys.executable, "-m", "fairness_assets.cli"]
    log_path.parent.mkdir(parents=True, exist_ok=True)
    with open(log_path, "wb") as log:
        proc = subprocess.Popen(
            cmd + ["ui", "--host", "127.0.0.1", "-p", str(port)],
            cwd=ui.ROOT,
            env=env,
            stdout=log,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
    try:
        wait_for_http(
            f"http://127.0.0.1:{port}/server_info", proc, startup_timeout, f"fairness-audit ui (log: {log_path})"
        )
        yield f"http://127.0.0.1:{port}"
    finally:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(proc.pid, signal.SIGTERM)
        deadline = time.time() + 30
        while _group_members(proc.pid) and time.time() < deadline:
            proc.poll()
            time.sleep(0.5)
        left = _group_members(proc.pid)
        if left:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(proc.pid, signal.SIGKILL)
        proc.wait(timeout=30)
        time.sleep(0.5)
        assert not _group_members(proc.pid), (
            f"processes of fairness-audit ui outlived SIGKILL: {_group_members(proc.pid)}"
        )


# ---------------------------------------------------------------- the lineage and the launch


def _expanded_lineage_url(base: str) -> str:
    return base + "/asset-groups?expanded=" + quote(",".join(f"global@global:{g}" for g in GROUPS))


def _outside_graph(driver, names) -> list[str]:
    """Those of ``names`` whose node is not drawn inside the graph's area (below its toolbar, inside
    the window)."""
    return driver.execute_script(
        """
        const names = arguments[0], out = [];
        const bar = document.querySelector("input[placeholder='Search and filter assets']");
        const top = bar ? bar.getBoundingClientRect().bottom : 0;
        const w = window.innerWidth, h = window.innerHeight;
        for (const name of names) {
          const xp = `//*[normalize-space(text())='${name}']`;
          const it = document.evaluate(xp, document, null, XPathResult.ORDERED_NODE_SNAPSHOT_TYPE, null);
          let ok = false;
          for (let i = 0; i < it.snapshotLength; i++) {
            const r = it.snapshotItem(i).getBoundingClientRect();
            if (r.width > 0 && r.left >= 0 && r.top >= top && r.right <= w && r.bottom <= h) ok = true;
          }
          if (!ok) out.push(name);
        }
        return out;""",
        list(names),
    )


def _zoom_to_fit(driver, names) -> None:
    """Zoom the graph out until every node of ``names`` (and its group's header) is drawn inside the
    graph's area."""
    from selenium.webdriver.common.by import By

    zoom_out = driver.find_elements(By.XPATH, "//button[.//*[@aria-label='zoom_out']]")
    for _ in range(10):
        if not _outside_graph(driver, list(names) + list(GROUPS)) or not zoom_out:
            break
        click(driver, zoom_out[0])
        time.sleep(1)


def _launch_dialog(driver, base: str):
    """*Lineage* with every group expanded → "Materialize all…" → its dialog."""
    ui.open_page(driver, _expanded_lineage_url(base))
    click(driver, lambda: ui.button(driver, ui.MATERIALIZE_ALL))
    return ui.dialog(driver, "Launch runs to materialize")


def lineage(driver, base: str, path: Path) -> Path:
    """The global lineage (*Lineage* in the left menu), every group expanded, its side panel folded,
    zoomed to show every asset, with "Materialize all…" (top right)."""
    from selenium.webdriver.common.by import By

    size = driver.get_window_size()
    driver.set_window_size(size["width"], 1150)  # before the page loads: the graph fits the window it opens in
    try:
        ui.open_page(driver, _expanded_lineage_url(base))
        wait_for_text(driver, ["Global asset lineage", ui.MATERIALIZE_ALL, *EVERY_ASSET])
        panel = [
            b
            for b in driver.find_elements(By.XPATH, "//button[.//*[@aria-label='panel_show_right']]")
            if b.is_displayed()
        ]
        if len(panel) > 1:  # the first folds the main navigation, the last the lineage's group list
            click(driver, panel[-1])
            time.sleep(1)
        # the graph was fitted to the page before its toolbar took the top rows: one step out shows it whole
        click(driver, lambda: driver.find_element(By.XPATH, "//button[.//*[@aria-label='zoom_out']]"))
        time.sleep(1)
        _zoom_to_fit(driver, EVERY_ASSET)
        missing = _outside_graph(driver, list(EVERY_ASSET) + list(GROUPS))
        assert not missing, f"the lineage does not draw {missing} inside the graph's area"
        time.sleep(1)  # edges are drawn after the nodes
        return ui.save(driver, path)
    finally:
        driver.set_window_size(size["width"], size["height"])


def materialize_all(
    driver, base: str, model: str, picker_path: Path, dialog_path: Path, timeout: float = 120
) -> list[str]:
    """*Lineage* → "Materialize all…": the dialog launches every asset; its model picker lists
    ``model`` already (the page is opened again until it does, up to ``timeout``; screenshot of the
    open picker at ``picker_path``); tick it, template "All", and "Launch backfill" (screenshot of the
    dialog ready to launch at ``dialog_path``). Returns the models the picker listed."""
    from selenium.webdriver.common.by import By

    deadline = time.time() + timeout
    while True:
        launch = _launch_dialog(driver, base)
        title = launch.text.splitlines()[0]
        assert title == f"Launch runs to materialize {len(EVERY_ASSET)} assets", title
        popover, models = ui._picker_items(driver, launch, 0)
        if model in models or time.time() > deadline:
            break
        ui._close_picker(driver)
        click(driver, ui.button(driver, "Cancel", within=launch))
        time.sleep(3)
    assert model in models, f"after {timeout} s the model picker lists {models}, not {model!r}"
    ui.save(driver, picker_path)
    click(driver, popover.find_element(By.XPATH, f".//*[normalize-space(text())='{model}']"))
    time.sleep(1)
    ui._close_picker(driver)
    launch = ui.dialog(driver, "Launch runs to materialize")
    ui.button(driver, "All", within=launch)
    alls = [b for b in launch.find_elements(By.XPATH, ".//button[normalize-space()='All']") if b.is_displayed()]
    assert len(alls) == 2, launch.text[:500]  # model's, then template's
    click(driver, alls[1])
    time.sleep(1)
    text = wait_for_text(driver, [f"{len(ui.TEMPLATES)} partitions", "Launch backfill"])
    assert "Could not find partition" not in text, text[-1500:]
    launch = ui.dialog(driver, "Launch runs to materialize")
    launch_button = ui.button(driver, "Launch backfill", within=launch)
    assert launch_button.is_enabled()
    ui.save(driver, dialog_path)
    click(driver, launch_button)
    deadline = time.time() + 30

    def launch_dialog_open() -> bool:
        from selenium.common.exceptions import StaleElementReferenceException

        try:
            return any(
                d.is_displayed() and d.text.startswith("Launch runs to materialize")
                for d in driver.find_elements(By.CSS_SELECTOR, "[role=dialog]")
            )
        except StaleElementReferenceException:  # the dialog left the page while it was read: look again
            return True

    while launch_dialog_open():
        assert time.time() < deadline, "the launch dialog is still open 30 s after 'Launch backfill'"
        time.sleep(0.5)
    shown = driver.find_element(By.TAG_NAME, "body").text
    assert "Could not find partition" not in shown, shown[-1500:]
    return models


# ---------------------------------------------------------------- the backfill


def wait_for_backfill(dagster_home: str, timeout: float = 420):
    """The instance's one backfill once it and every run of it have finished: (backfill, runs)."""
    import dagster as dg
    from dagster._core.execution.backfill import BulkActionStatus
    from dagster._core.storage.dagster_run import FINISHED_STATUSES, RunsFilter

    deadline = time.time() + timeout
    while True:
        with dg.DagsterInstance.from_config(dagster_home) as instance:
            backfills = instance.get_backfills()
            assert len(backfills) <= 1, [b.backfill_id for b in backfills]
            runs = (
                instance.get_runs(RunsFilter(tags={"dagster/backfill": backfills[0].backfill_id})) if backfills else []
            )
        if (
            backfills
            and backfills[0].status != BulkActionStatus.REQUESTED
            and all(r.status in FINISHED_STATUSES for r in runs)
        ):
            return backfills[0], runs
        assert time.time() < deadline, f"the backfill has not finished after {timeout:.0f} s: " + (
            f"{backfills[0].status}, runs {[(r.run_id[:8], r.status.value) for r in runs]}"
            if backfills
            else "no backfill was launched"
        )
        time.sleep(3)


def wait_for_report_run(dagster_home: str, backfill_id: str, timeout: float = 300):
    """The run the backfill_report sensor launched for backfill ``backfill_id``, once it has finished."""
    import dagster as dg

    deadline = time.time() + timeout
    while True:
        with dg.DagsterInstance.from_config(dagster_home) as instance:
            found = instance.get_runs(dg.RunsFilter(tags={"fairness/report_of_backfill": backfill_id}))
        if found and all(r.is_finished for r in found):
            assert len(found) == 1, [(r.run_id[:8], r.status.value) for r in found]
            return found[0]
        assert time.time() < deadline, f"no finished report run of backfill {backfill_id} after {timeout:.0f} s"
        time.sleep(3)


def run_of(runs, asset: str):
    """The run of ``runs`` that materialized ``asset``."""
    found = [r for r in runs if any(k.to_user_string() == asset for k in (r.asset_selection or ()))]
    assert len(found) == 1, [(r.run_id[:8], sorted(k.to_user_string() for k in r.asset_selection or ())) for r in runs]
    return found[0]


def partition_runs(runs) -> dict[str, object]:
    """{partition key: its run} of a backfill's partition runs (each run of one partition)."""
    found = {r.tags["dagster/partition"]: r for r in runs if r.tags.get("dagster/partition")}
    assert all(not r.tags.get("dagster/asset_partition_range_start") for r in runs), (
        "a run of a range: a backfill must run one partition per run"
    )
    return found


def missing_on_run_page(driver, base: str, run_id: str, model: str, template: str, held: list[str], path: Path) -> str:
    """The run page of the failed run of partition ``model|template`` (a template the file lacks),
    its log filtered to the errors of ``generations``: the run failed, naming the template as missing
    from the responses file with the templates the file holds (``held``). Returns the page text."""
    ui.open_page(driver, f"{base}/runs/{run_id}?logs={quote('step:generations')}&levels=ERROR")
    line = f"generations [{model}|{template}] failed: the responses file"
    text = wait_for_text(driver, ["Failure", line, f"with template '{template}'"])
    found = next(ln for ln in text.splitlines() if ln.startswith(f"generations [{model}|{template}] failed"))
    assert f"{MISSING_FROM_FILE} {model!r} with template {template!r}" in found, found
    assert f"template(s) {sorted(held)}" in found, found
    ui.save(driver, path)
    return text


def partitions_tab(driver, base: str, asset: str, produced: int, failed: int, key: str = "") -> str:
    """``asset``'s Partitions tab (with partition ``key`` selected, if given): *Failed (failed)* and
    *Materialized (produced)*, nothing missing. Returns the page text."""
    url = f"{base}/assets/{asset}?view=partitions" + (f"&partition={quote(key)}" if key else "")
    ui.open_page(driver, url)
    expected = [f"Failed ({failed})", f"Materialized ({produced})", "Missing (0)", *([key] if key else [])]
    return wait_for_text(driver, expected)


def missing_on_partition_page(
    driver, base: str, asset: str, key: str, run_id: str, produced: int, failed: int, path: Path
) -> str:
    """``asset``'s Partitions tab with partition ``key`` (one the run ``run_id`` failed to produce)
    selected: the partition is failed, its page names the failed run, and it shows no
    materialization, so no numbers of another partition."""
    text = partitions_tab(driver, base, asset, produced, failed, key)
    text = wait_for_text(driver, [f"Run {run_id[:8]} failed, and did not materialize this asset."])
    after = text.split(f"Run {run_id[:8]} failed", 1)[1]
    assert "Latest materialization\nNone" in after and "No metadata entries" in after, after[:800]
    for number in ("responses", "match_rate", "partition_outcome", "dagster/row_count"):
        assert number not in after, f"{key}'s page shows {number!r}: {after[:800]}"
    ui.save(driver, path)
    return text


def catalog_states(driver, base: str, assets, produced: int, failed: int, path: Path) -> str:
    """The Catalog, tall enough to list every asset: each partitioned asset of ``assets`` shows
    ``produced`` materialized, 0 missing, ``failed`` failed, 0 in progress, of its partitions (never
    all materialized). Returns the page text."""
    from selenium.webdriver.common.by import By

    total = produced + failed
    size = driver.get_window_size()
    driver.set_window_size(size["width"], 2200)
    try:
        ui.open_page(driver, base + "/assets")
        wait_for_text(driver, [*assets, f"{total} partitions"])
        deadline = time.time() + 60
        while True:  # each row's status loads on its own: read the page until every row has its counts
            lines = driver.find_element(By.TAG_NAME, "body").text.splitlines()
            shown = {}
            for asset in assets:
                at = lines.index(asset) if asset in lines else -1
                end = lines.index(f"{total} partitions", at) if at >= 0 and f"{total} partitions" in lines[at:] else -1
                nxt = [i for i in range(at + 1, len(lines)) if lines[i] in assets]
                if end < 0 or (nxt and nxt[0] < end):
                    shown[asset] = None
                else:
                    shown[asset] = lines[end - 4 : end]
            if all(c is not None for c in shown.values()) or time.time() > deadline:
                break
            time.sleep(1)
        wrong = {a: c for a, c in shown.items() if c != [str(produced), "0", str(failed), "0"]}
        assert not wrong, f"the Catalog's partition counts (materialized, missing, failed, in progress): {wrong}"
        text = "\n".join(lines)
        ui.save(driver, path)
    finally:
        driver.set_window_size(size["width"], size["height"])
    return text


def backfill_page(driver, base: str, backfill_id: str, assets, produced: int, failed: int, path: Path) -> str:
    """The backfill's page: *Failed*, and for each partitioned asset of ``assets``: its partitions
    targeted, none in progress, ``produced`` succeeded, ``failed`` failed. Returns the page text."""
    ui.open_page(driver, f"{base}/runs/b/{backfill_id}")
    text = wait_for_text(driver, ["Partitions targeted", "Succeeded", *assets])
    lines = text.splitlines()
    assert "Failed" in lines[lines.index("Status") : lines.index("Status") + 3], text[:800]
    for asset in assets:
        at = lines.index(asset)
        row = lines[at + 2 : at + 6]
        assert row == [str(produced + failed), "0", str(produced), str(failed)], (asset, lines[at : at + 6])
    ui.save(driver, path)
    return text


# ---------------------------------------------------------------- the report and the map


def _images(driver) -> list:
    return driver.execute_script(
        "return Array.from(document.images).map(i => [i.complete, i.naturalWidth, i.currentSrc.slice(0, 60)])"
    )


def _wait_images(driver, minimum: int, timeout: float = 30) -> list:
    """The page's images once at least ``minimum`` are there and every one has finished loading."""
    deadline = time.time() + timeout
    while True:
        images = _images(driver)
        if len(images) >= minimum and all(done for done, _, _ in images) or time.time() > deadline:
            return images
        time.sleep(0.5)


def report_from_asset_page(
    driver,
    base: str,
    report_port: int,
    model: str,
    held: list[str],
    page_path: Path,
    report_path: Path,
    figures_path: Path,
) -> str:
    """audit_report's page (``report_url``, the scorecard, the summary; screenshot ``page_path``) →
    its report link, as a user clicks it → report.html from the report server: the scorecard is the
    first section and lists every template of ``held``, every image has loaded (naturalWidth > 0).
    Saves the report's top (``report_path``) and its Figures section (``figures_path``) in a
    1400 × 1100 window. Returns the report's URL."""
    from selenium.webdriver.common.by import By

    ui.open_page(driver, base + "/assets/audit_report")
    wait_for_text(driver, ["report_url", "scorecard", "summary"])
    links = [
        a for a in driver.find_elements(By.CSS_SELECTOR, "a[href]") if a.get_attribute("href").endswith("/report.html")
    ]
    assert links, [a.get_attribute("href") for a in driver.find_elements(By.CSS_SELECTOR, "a[href]")]
    href = links[0].get_attribute("href")
    assert href.startswith(f"http://127.0.0.1:{report_port}/report-"), href
    ui.save(driver, page_path)
    first, before = driver.current_window_handle, set(driver.window_handles)
    click(driver, links[0])  # the link may open in a new tab
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
    try:
        wait_for_text(
            driver,
            ["Scorecard", "Per model and template", "Summary of the largest disparities", "Figures", model],
            timeout=30,
        )
        assert driver.current_url == href, (driver.current_url, href)
        assert driver.execute_script("return document.querySelector('section').id") == "scorecard"
        scorecard = driver.find_element(By.ID, "scorecard").text
        for template in held:
            assert template in scorecard, f"the scorecard has no row of template {template!r}: {scorecard[:1500]}"
        images = _wait_images(driver, 11)
        assert len(images) >= 11 and all(done and width > 0 for done, width, _ in images), images
        size = driver.get_window_size()
        driver.set_window_size(1400, 1100)
        try:
            driver.execute_script("window.scrollTo(0, 0)")
            time.sleep(0.5)
            ui.save(driver, report_path)
            driver.execute_script("document.getElementById('figures').scrollIntoView()")
            time.sleep(0.5)
            ui.save(driver, figures_path)
        finally:
            driver.set_window_size(size["width"], size["height"])
    finally:
        if opened:
            driver.close()
        driver.switch_to.window(first)
    return href


def world_map(driver, base: str, report_port: int, key: str, path: Path) -> dict:
    """audit_figures' Partitions tab, partition ``key`` → the row ``<key> figures`` → **Show
    Markdown**: the partition's world map, an image served by the report server, has loaded
    (naturalWidth > 0) and is drawn in the window.
    Returns the map image's size and place."""
    from selenium.webdriver.common.by import By

    # the partition's own materialization (each partition has its own run)
    ui.open_page(driver, f"{base}/assets/audit_figures?view=partitions&partition={quote(key)}")
    wait_for_text(driver, ["Metadata", f"{key} figures"])
    row = driver.find_element(By.XPATH, f"//tr[.//*[normalize-space(text())='{key} figures']]")
    click(driver, row.find_element(By.XPATH, ".//*[contains(text(), 'Show Markdown')]"))
    ui.dialog(driver, f"{key} figures")
    deadline = time.time() + 30
    while True:
        maps = driver.execute_script(
            """
            return Array.from(document.images).filter(i => i.currentSrc.includes('world_map')).map(i => {
              const r = i.getBoundingClientRect();
              return {src: i.currentSrc, complete: i.complete, width: i.naturalWidth, height: i.naturalHeight,
                      shown_w: r.width, shown_h: r.height, top: r.top, left: r.left,
                      in_window: r.top < window.innerHeight && r.bottom > 0 &&"""
            """ r.left < window.innerWidth && r.right > 0};
            });"""
        )
        if maps and all(m["complete"] for m in maps) or time.time() > deadline:
            break
        time.sleep(0.5)
    assert maps, f"no world_map image in {key}'s figures: {_images(driver)}"
    the_map = maps[0]
    assert the_map["src"].startswith(f"http://127.0.0.1:{report_port}/figures/"), the_map
    assert the_map["complete"] and the_map["width"] > 0 and the_map["height"] > 0, the_map
    assert the_map["shown_w"] > 200 and the_map["in_window"], the_map
    time.sleep(0.5)
    ui.save(driver, path)
    return the_map


# ---------------------------------------------------------------- the checks, per partition

CHECKS = (
    "countries_resolved",
    "group_match_gap",
    "group_parse_gap",
    "match_rate",
    "no_duplicate_items",
    "parse_rate",
    "three_items_share",
)


def check_partitions(driver, base: str, check: str, held_keys: list[str], not_produced: int, path: Path) -> str:
    """recommendations' Checks tab, every parse-quality check listed, ``check`` opened: its latest
    evaluation names its partition (one of ``held_keys``) and its verdict; its *Partitions* view
    shows a verdict for each partition produced (Passed + Failed = len(held_keys)) and *Execution
    Failed* for each of the ``not_produced`` whose run failed before the check could run. Returns
    the Partitions view's text."""
    from selenium.webdriver.common.by import By

    ui.open_page(driver, base + "/assets/recommendations?view=checks")
    wait_for_text(driver, [f"Checks ({len(CHECKS)})", *CHECKS])
    item = [e for e in driver.find_elements(By.XPATH, f"//*[normalize-space(text())='{check}']") if e.is_displayed()]
    assert item, f"no check {check!r} in the list"
    click(driver, item[0])
    text = wait_for_text(driver, ["Evaluation result", "Partition", "observed", "threshold"])
    after = text.split("Evaluation result", 1)[1].splitlines()
    assert after[1] in ("Passed", "Failed"), after[:8]
    partition = after[after.index("Partition") + 1]
    assert partition in held_keys, f"{check}'s latest evaluation names partition {partition!r}, not one of {held_keys}"
    tabs = [e for e in driver.find_elements(By.XPATH, "//*[normalize-space(text())='Partitions']") if e.is_displayed()]
    click(driver, tabs[-1])  # the check's own Partitions tab (the asset's comes first)
    text = wait_for_text(driver, [f"Execution Failed ({not_produced})", "Passed (", "Skipped (0)", "Missing (0)"])
    passed = int(text.split("Passed (", 1)[1].split(")", 1)[0])
    failed = int(text.split("\nFailed (", 1)[1].split(")", 1)[0])
    assert passed + failed == len(held_keys), (check, passed, failed, held_keys)
    time.sleep(0.5)
    ui.save(driver, path)
    return text
