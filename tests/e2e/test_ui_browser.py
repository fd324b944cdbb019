"""UI acceptance: the Dagster webserver, opened in headless Chromium after a demo audit, renders
the asset graph, the model x template partitions, the parse-quality check results and a figure
attached as metadata, and has the controls README.md and docs/operations.md tell users to click:
the "Add a partition" control in generations' Materialize dialog, and "Materialize all…" on the
Lineage tab (its dialog launches generations and everything downstream).
A new user's journey needs no "Add a partition" click (issue 23 item 5): on a fresh instance,
`fairness-audit ui` (dagster dev, whose daemon ticks the model_partitions_sync sensor) lists the
registered models in the launch dialog's model picker, ready to launch.
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
        ui.materialize_dialog(
            driver, audited_webserver, shots / "ui_materialize_dialog.png", shots / "ui_add_partition.png"
        )
        # Lineage tab → Downstream → All: "Materialize all…" opens the dialog for generations and its 11
        # downstream assets
        ui.lineage_materialize_all(
            driver, audited_webserver, shots / "ui_lineage_materialize_all.png", shots / "ui_materialize_all_dialog.png"
        )
    made = sorted(p.name for p in shots.glob("*.png"))
    assert made == sorted(
        [
            "ui_asset_graph.png",
            "ui_partitions.png",
            "ui_checks.png",
            "ui_figure.png",
            "ui_materialize_dialog.png",
            "ui_add_partition.png",
            "ui_lineage_materialize_all.png",
            "ui_materialize_all_dialog.png",
        ]
    )
    assert _tracked_screenshots() == before, "the test wrote into docs/screenshots/"
    # the dialogs were opened and cancelled (as docs/make_screenshots.py does): nothing added, nothing launched
    with dg.DagsterInstance.get() as instance:
        assert instance.get_dynamic_partitions("models") == models
        assert len(instance.get_runs()) == runs


def test_a_new_user_launches_without_adding_a_partition(tmp_path):
    """A fresh DAGSTER_HOME (no demo run, no partition), the shipped registry, no responses file:
    `fairness-audit ui` starts, and the launch dialog of generations already lists every registered
    model; the demo model is ticked with every template and the dialog is ready to launch a backfill,
    with no "Add a partition" click and no "Could not find partition" popup. Cancelled: no run."""
    import dagster as dg

    from resources.settings import MODEL_REGISTRY, load_model_registry

    env = ui.demo_env(tmp_path / "new-user")
    del env["FAIRNESS_RESPONSES"]  # generating with the registry's models
    with dg.DagsterInstance.from_config(env["DAGSTER_HOME"]) as instance:
        assert instance.get_dynamic_partitions("models") == []
    registered = sorted(load_model_registry(MODEL_REGISTRY))
    printed = tmp_path / "ui.log"
    with chromium(tmp_path) as driver, ui.fairness_ui(env, output=printed) as base:
        listed = ui.launch_registered_model(driver, base, ui.DEMO_MODEL, tmp_path / "shots" / "ui_new_user.png")
    assert listed == registered
    # started the way Dagster recommends (dg dev): no "use 'dg dev' instead" warning for the README's command
    said = printed.read_text(encoding="utf-8", errors="replace")
    assert "Serving dagster-webserver" in said and "SupersessionWarning" not in said, said[-3000:]
    with dg.DagsterInstance.from_config(env["DAGSTER_HOME"]) as instance:
        assert sorted(instance.get_dynamic_partitions("models")) == registered
        assert not instance.get_runs()  # the dialog was cancelled
