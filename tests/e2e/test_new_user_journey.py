"""The new user's journey, end to end in headless Chromium (issue 23 item 7).

A fresh DAGSTER_HOME and FAIRNESS_HOME, and a responses file holding the demo model's answers for
two templates (base and regional) of the six: `fairness-audit ui` lists the file's model on the
first page (no "Add a partition" click); *Lineage* → "Materialize all…" for that model and every
template ends in partial success (the two templates materialized, the four others named on the run
page and on the partition's page as missing from the file); the report opens from audit_report's
page with the scorecard first and every image loaded; audit_figures shows the world map. A
screenshot at each step goes to tmp_path; docs/make_screenshots.py runs the same steps
(tests/helpers/journey.py) into docs/screenshots/. The UI and every process it started are
stopped at the end, also when the test fails.
"""

from __future__ import annotations

import hashlib

import pytest

from tests.helpers import journey, ui
from tests.helpers.browser import chromium
from tests.helpers.pipeline import ROOT

HELD = ["base", "regional"]  # the templates the responses file holds
DOCS_SHOTS = ROOT / "docs" / "screenshots"


def _hashes(folder) -> dict[str, str]:
    return (
        {p.name: hashlib.sha256(p.read_bytes()).hexdigest() for p in sorted(folder.glob("*.png"))}
        if folder.is_dir()
        else {}
    )


@pytest.mark.slow
def test_a_new_user_audits_a_responses_file_from_the_lineage_to_the_map(tmp_path):
    import dagster as dg
    from dagster._core.execution.backfill import BulkActionStatus

    from resources import database as D

    before = _hashes(DOCS_SHOTS)
    responses = journey.partial_responses(tmp_path / "answers.jsonl", tuple(HELD))
    missing = [t for t in ui.TEMPLATES if t not in HELD]
    assert len(missing) == 4
    env = journey.journey_env(tmp_path / "new-user", responses)
    report_port = int(env["FAIRNESS_REPORT_PORT"])
    shots = tmp_path / "shots"
    # 1. an empty instance
    with dg.DagsterInstance.from_config(env["DAGSTER_HOME"]) as instance:
        assert instance.get_dynamic_partitions("models") == [] and not instance.get_runs()
    with journey.fairness_ui(env, tmp_path / "ui.log") as base, chromium(tmp_path) as driver:
        # 2. the file's model is a partition on the first page
        journey.lineage(driver, base, shots / "1_lineage.png")
        listed = journey.materialize_all(
            driver, base, ui.DEMO_MODEL, shots / "2_models_listed.png", shots / "3_materialize_all.png"
        )
        assert listed == [ui.DEMO_MODEL]  # the file's model, not the registry's
        # 3. partial success: the backfill succeeds, the templates of the file are materialized...
        backfill, runs = journey.wait_for_backfill(env["DAGSTER_HOME"])
        assert backfill.status == BulkActionStatus.COMPLETED_SUCCESS, backfill.status
        assert runs and all(r.status == dg.DagsterRunStatus.SUCCESS for r in runs), [
            (r.run_id[:8], r.status.value) for r in runs
        ]
        database = D.ResultsDatabase(url=f"sqlite:///{env['FAIRNESS_HOME']}/results.db")
        try:
            for table in (D.Generation, D.DRSItem, D.StatisticRow, D.FigureFile):
                stored = sorted(set(database.read_rows(table)["partition_key"]))
                assert stored == [f"{ui.DEMO_MODEL}|{t}" for t in HELD], (table.__tablename__, stored)
            partitioned = journey.run_of(runs, "generations")
            outcomes = database.run_outcomes(partitioned.run_id)
        finally:
            database.dispose()
        failed = outcomes[(outcomes["asset"] == "generations")]
        assert sorted(failed["partition_key"]) == [f"{ui.DEMO_MODEL}|{t}" for t in missing]
        assert set(failed["status"]) == {"failed"}
        # ... and the missing ones are named as missing from the file, on the run page and the partition's page
        journey.missing_on_run_page(
            driver, base, partitioned.run_id, ui.DEMO_MODEL, missing, HELD, shots / "4_run_missing_templates.png"
        )
        journey.missing_on_partition_page(
            driver, base, ui.DEMO_MODEL, missing[0], HELD, shots / "5_partition_missing.png"
        )
        # 4. the report from audit_report's page, the scorecard first, every image loaded
        href = journey.report_from_asset_page(
            driver,
            base,
            report_port,
            ui.DEMO_MODEL,
            HELD,
            shots / "6_audit_report_page.png",
            shots / "7_report.png",
            shots / "8_report_figures.png",
        )
        assert (tmp_path / "new-user" / "fairness_home" / "reports" / href.split("/")[-2] / "report.html").is_file()
        # 5. the map of audit_figures
        the_map = journey.world_map(driver, base, report_port, f"{ui.DEMO_MODEL}|base", shots / "9_world_map.png")
        assert "world_map" in the_map["src"]
    made = sorted(p.name for p in shots.glob("*.png"))
    assert made == [
        "1_lineage.png",
        "2_models_listed.png",
        "3_materialize_all.png",
        "4_run_missing_templates.png",
        "5_partition_missing.png",
        "6_audit_report_page.png",
        "7_report.png",
        "8_report_figures.png",
        "9_world_map.png",
    ], made
    with dg.DagsterInstance.from_config(env["DAGSTER_HOME"]) as instance:
        assert instance.get_dynamic_partitions("models") == [ui.DEMO_MODEL]  # nothing added by hand
    assert _hashes(DOCS_SHOTS) == before, "the test wrote into docs/screenshots/ (make_screenshots.py makes those)"
