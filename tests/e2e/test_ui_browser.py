"""UI acceptance: the Dagster webserver, opened in headless Chromium after a demo audit, renders
the asset graph, the model x template partitions, the parse-quality check results and a figure
attached as metadata, and has the controls README.md and docs/operations.md tell users to click:
the "Add a partition" control in generations' Materialize dialog, and "Materialize all…" on the
Lineage tab (its dialog launches generations and everything downstream).
The test writes its screenshots to its tmp_path, never into the repository; the committed ones in
docs/screenshots/ are made by docs/make_screenshots.py, which clicks through the same pages
(tests/helpers/ui.py)."""

from __future__ import annotations

import os

import pytest

from tests.helpers import ui
from tests.helpers.browser import chromium
from tests.helpers.pipeline import DEMO_RESPONSES, ROOT


@pytest.fixture
def audited_webserver(results_home, tmp_path):
    env = {**os.environ, "FAIRNESS_RESPONSES": str(DEMO_RESPONSES)}
    ui.run_demo(env)
    with ui.webserver(env) as base:
        yield base


def _tracked_screenshots() -> dict:
    shots = ROOT / "docs" / "screenshots"
    return {p.name: p.stat().st_mtime_ns for p in shots.glob("*.png")} if shots.is_dir() else {}


def test_ui_renders_graph_partitions_checks_and_the_documented_controls(audited_webserver, tmp_path):
    import dagster as dg

    before = _tracked_screenshots()
    with dg.DagsterInstance.get() as instance:
        models, runs = instance.get_dynamic_partitions("models"), len(instance.get_runs())
    assert ui.DEMO_MODEL in models
    shots = tmp_path / "screenshots"
    with chromium(tmp_path) as driver:
        # the asset graph, the generations partitions, the parse-quality checks, a figure from metadata
        ui.asset_graph(driver, audited_webserver, shots / "ui_asset_graph.png")
        ui.partitions(driver, audited_webserver, shots / "ui_partitions.png")
        ui.checks(driver, audited_webserver, shots / "ui_checks.png")
        ui.figure(driver, audited_webserver, shots / "ui_figure.png")
        # generations → "Materialize…": the dialog's model dimension has "Add a partition" (opened, then cancelled)
        ui.materialize_dialog(driver, audited_webserver, shots / "ui_materialize_dialog.png",
                              shots / "ui_add_partition.png")
        # Lineage tab → Downstream → All: "Materialize all…" opens the dialog for generations and its 11 downstream assets
        ui.lineage_materialize_all(driver, audited_webserver, shots / "ui_lineage_materialize_all.png",
                                   shots / "ui_materialize_all_dialog.png")
    made = sorted(p.name for p in shots.glob("*.png"))
    assert made == sorted(["ui_asset_graph.png", "ui_partitions.png", "ui_checks.png", "ui_figure.png",
                           "ui_materialize_dialog.png", "ui_add_partition.png", "ui_lineage_materialize_all.png",
                           "ui_materialize_all_dialog.png"])
    assert _tracked_screenshots() == before, "the test wrote into docs/screenshots/"
    # the dialogs were opened and cancelled (as docs/make_screenshots.py does): nothing added, nothing launched
    with dg.DagsterInstance.get() as instance:
        assert instance.get_dynamic_partitions("models") == models
        assert len(instance.get_runs()) == runs

