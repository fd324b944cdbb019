"""The new user's journey, end to end in headless Chromium (issue 23 item 7).

A fresh DAGSTER_HOME and FAIRNESS_HOME, and a responses file holding the demo model's answers for
two templates (base and regional) of the six: `fairness-audit ui` lists the file's model on the
first page (no "Add a partition" click); *Lineage* → "Materialize all…" for that model and every
template is one run per partition: the two templates materialized, the four others' runs failed
naming each as missing from the file, and each of those partitions *Failed*, never green (the
backfill page, the Partitions tab, the Catalog, the partition's own page), with every parse-quality
check's verdict per partition (issue 32.5); the backfill_report sensor builds the report over the
stored partitions, which opens from audit_report's page with the scorecard first and every image
loaded; audit_figures shows the world map. A
screenshot at each step goes to tmp_path; docs/make_screenshots.py runs the same steps
(tests/helpers/journey.py) into docs/screenshots/. The UI and every process it started are
stopped at the end, also when the test fails.
"""

from __future__ import annotations

import hashlib

import pytest

from tests.helpers import journey, ui
from tests.helpers.browser import chromium, wait_for_text
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
        # 3. one run per partition: the templates of the file are materialized, the others' runs failed
        backfill, runs = journey.wait_for_backfill(env["DAGSTER_HOME"])
        assert backfill.status == BulkActionStatus.COMPLETED_FAILED, backfill.status
        by_key = journey.partition_runs(runs)
        keys = [f"{ui.DEMO_MODEL}|{t}" for t in ui.TEMPLATES]
        held_keys = [f"{ui.DEMO_MODEL}|{t}" for t in HELD]
        assert sorted(by_key) == keys, sorted(by_key)
        states = {k: r.status for k, r in by_key.items()}
        assert states == {
            k: dg.DagsterRunStatus.SUCCESS if k in held_keys else dg.DagsterRunStatus.FAILURE for k in keys
        }, states
        reference = [r for r in runs if not r.tags.get("dagster/partition")]
        assert reference and all(r.status == dg.DagsterRunStatus.SUCCESS for r in reference), reference
        database = D.ResultsDatabase(url=f"sqlite:///{env['FAIRNESS_HOME']}/results.db")
        try:
            for table in (D.Generation, D.DRSItem, D.StatisticRow, D.FigureFile):
                stored = sorted(set(database.read_rows(table)["partition_key"]))
                assert stored == held_keys, (table.__tablename__, stored)
            for template in missing:
                outcomes = database.run_outcomes(by_key[f"{ui.DEMO_MODEL}|{template}"].run_id)
                assert list(outcomes["asset"]) == ["generations"] and list(outcomes["status"]) == ["failed"], outcomes
        finally:
            database.dispose()
        with dg.DagsterInstance.from_config(env["DAGSTER_HOME"]) as instance:
            for asset in journey.PARTITIONED:
                done = instance.get_materialized_partitions(dg.AssetKey(asset))
                assert sorted(done) == held_keys, (asset, sorted(done))
        # ... each missing one is named on its run's page, and Failed wherever the UI shows partitions
        first = f"{ui.DEMO_MODEL}|{missing[0]}"
        journey.missing_on_run_page(
            driver, base, by_key[first].run_id, ui.DEMO_MODEL, missing[0], HELD, shots / "4_run_missing_templates.png"
        )
        journey.backfill_page(
            driver, base, backfill.backfill_id, journey.PARTITIONED, len(HELD), len(missing), shots / "4b_backfill.png"
        )
        for asset in journey.PARTITIONED:
            journey.partitions_tab(driver, base, asset, len(HELD), len(missing))
        journey.missing_on_partition_page(
            driver,
            base,
            "recommendations",
            first,
            by_key[first].run_id,
            len(HELD),
            len(missing),
            shots / "5_partition_missing.png",
        )
        # a produced partition's page shows its own run's materialization
        journey.partitions_tab(driver, base, "recommendations", len(HELD), len(missing), held_keys[-1])
        wait_for_text(driver, ["Latest materialization", by_key[held_keys[-1]].run_id[:8], "responses"])
        journey.catalog_states(driver, base, journey.PARTITIONED, len(HELD), len(missing), shots / "5b_catalog.png")
        for check in journey.CHECKS:
            journey.check_partitions(driver, base, check, held_keys, len(missing), shots / f"5c_check_{check}.png")
        # the report of the backfill, built by the backfill_report sensor over the stored partitions
        report_run = journey.wait_for_report_run(env["DAGSTER_HOME"], backfill.backfill_id)
        assert report_run.status == dg.DagsterRunStatus.SUCCESS, report_run.status
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
        "4b_backfill.png",
        "5_partition_missing.png",
        "5b_catalog.png",
        *sorted(f"5c_check_{c}.png" for c in journey.CHECKS),
        "6_audit_report_page.png",
        "7_report.png",
        "8_report_figures.png",
        "9_world_map.png",
    ], made
    with dg.DagsterInstance.from_config(env["DAGSTER_HOME"]) as instance:
        assert instance.get_dynamic_partitions("models") == [ui.DEMO_MODEL]  # nothing added by hand
    assert _hashes(DOCS_SHOTS) == before, "the test wrote into docs/screenshots/ (make_screenshots.py makes those)"
