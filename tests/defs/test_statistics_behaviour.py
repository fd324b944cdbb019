"""The behaviour / needs split and envy wired into the audit (issue 20): stored per partition by
audit_statistics (table statistic_row, component total / behaviour / needs), shown in the asset's
metadata and in the report, and exported by ``fairness-audit score`` with the same column."""

from __future__ import annotations

import dagster as dg
import pandas as pd
import pytest

from fairness_assets.core.common import tables as tables_core
from resources import database as D
from tests.helpers.pipeline import DEMO_KEY, DEMO_RESPONSES, audit

pytestmark = pytest.mark.slow

COMPONENTS = {"total", "behaviour", "needs"}


@pytest.fixture(scope="module")
def demo(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("behaviour")
    db = D.ResultsDatabase(url=f"sqlite:///{tmp / 'results.db'}")
    run = audit(dg.DagsterInstance.ephemeral(), db, DEMO_RESPONSES)
    assert run.success, [e.message for e in run.all_events if e.is_failure]
    return db, run


def test_audit_statistics_stores_the_split_and_envy(demo):
    db, run = demo
    rows = db.read_rows(D.StatisticRow)
    t = tables_core.from_long(rows[rows["partition_key"] == DEMO_KEY])
    bn, envy = t["behaviour_needs"], t["envy"]
    assert set(bn["component"]) == COMPONENTS
    assert {"gender", "economic_class", "nationality"} <= set(bn["attribute"])
    # each pair x metric has its three components, and total = behaviour + needs
    wide = bn.pivot_table(
        index=["attribute", "value_a", "value_b", "metric"], columns="component", values="mean_diff", aggfunc="first"
    ).dropna()
    assert len(wide) and ((wide["behaviour"] + wide["needs"] - wide["total"]).abs() < 1e-9).all()
    # Rep does not depend on the student: its needs part is 0 by construction, not tested
    rep_needs = bn[(bn["metric"] == "rep") & (bn["component"] == "needs")]
    assert len(rep_needs) and (rep_needs["by_construction"].astype(str) == "True").all()
    assert rep_needs["p_value"].isna().all()
    assert len(envy) and {"group", "other_group", "envy_share", "ci_low", "ci_high"} <= set(envy.columns)
    meta = run.asset_materializations_for_node("audit_statistics")[0].metadata
    assert "significant_behaviour_findings" in meta and "significant_behaviour" in meta
    shown = meta["significant_behaviour"].value
    assert ("component" in shown and "behaviour" in shown) or shown.startswith("none")


def test_report_has_the_behaviour_section(demo):
    db, _ = demo
    reports = db.read_rows(D.ReportFile)
    if not len(reports):
        pytest.skip("the pipeline helper does not materialize the report")
    md = open(reports["markdown_path"].iloc[-1], encoding="utf-8").read()
    assert "Behaviour and needs of the counterfactual contrasts" in md
    assert "| component |" in md and "envy\\_share" in md  # Markdown escapes the underscore


def test_score_export_has_the_component_column(worked_example_scored):
    out, written = worked_example_scored  # the example scored once this session (tests/conftest.py)
    bn = pd.read_csv(out / "behaviour_needs.csv")
    assert set(bn["component"]) == COMPONENTS
    assert {
        "model",
        "template",
        "attribute",
        "value_a",
        "value_b",
        "metric",
        "mean_diff",
        "ci_low",
        "ci_high",
        "p_adjusted",
        "family_size",
        "significant",
    } <= set(bn.columns)
    assert set(written["behaviour_needs"]["component"]) == COMPONENTS
    assert written["behaviour_needs"]["significant"].dtype == bool
    envy = pd.read_csv(out / "envy.csv")
    assert len(envy) and "envy_share" in envy.columns
    md = (out / "report.md").read_text()
    assert "Behaviour and needs of the counterfactual contrasts" in md
