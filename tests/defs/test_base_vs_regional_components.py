"""base_vs_regional end to end on a small results database (issue 20, item 5): the asset reads
each model's base and regional statistics (behaviour_needs) and geography (geo_contrasts), one
model at a time, stores ``component_change`` next to drs_change / grs_change (partition key ""),
shows whether the behaviour part moved on its page, and the report and the export carry it."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import dagster as dg
import pandas as pd
import pytest

from fairness_assets import export
from fairness_assets.core.common import tables as tables_core
from fairness_assets.core.common.partition import PartitionKey
from fairness_assets.core.reporting import audit_report
from fairness_assets.core.statistics import component_change as cc
from fairness_assets.defs.scoring import assets as sco
from resources import database as D
from resources.settings import ReportResource
from tests.core.test_component_change import _template

pytestmark = pytest.mark.slow


def _summary(shift: float) -> pd.DataFrame:
    return pd.DataFrame(
        {
            "group_by": ["overall", "economic_class"],
            "group": ["all", "low"],
            "drs": [0.5 + shift, 0.4 + shift],
            "acc": [0.3, 0.2],
            "rep": [0.6, 0.6],
        }
    )


def _grs(shift: float) -> pd.DataFrame:
    return pd.DataFrame(
        {
            "iso3": ["KEN", "USA"],
            "country": ["Kenya", "United States"],
            "total_unis": [3, 40],
            "recs": [1, 20],
            "n_recommendations": [4 + int(10 * shift), 60],
            "avail": [0.1, 0.5],
            "repr": [0.05, 0.6],
            "scaled_repr": [0.1, 1.0],
            "rep_covg": [0.3, 0.9],
            "grs": [0.2 + shift, 0.8],
        }
    )


def _store(db: D.ResultsDatabase, key: str, tables: dict | None, shift: float) -> None:
    stamp = {"partition_key": key, "audit_id": "a1", "params_hash": "h", "provenance_id": "p"}
    db.replace_result_tables(
        "analysis_tables", tables_core.to_long({"drs_summary": _summary(shift)}).assign(**stamp), [key]
    )
    db.append_rows(D.GRSCountry, _grs(shift).assign(**stamp))
    if tables is None:
        return
    db.replace_result_tables(
        "audit_statistics",
        tables_core.to_long({"behaviour_needs": tables["behaviour_needs"]}, packed=("behaviour_needs",)).assign(
            **stamp
        ),
        [key],
    )
    db.replace_result_tables(
        "audit_geography",
        tables_core.to_long({"geo_contrasts": tables["geo_contrasts"]}, packed=("geo_contrasts",)).assign(**stamp),
        [key],
    )


@pytest.fixture(scope="module")
def comparison(tmp_path_factory):
    root = Path(__file__).resolve().parents[2]
    spec = importlib.util.spec_from_file_location("bench_statistics_bvr", root / "benchmarks" / "statistics.py")
    bench = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(bench)
    db = D.ResultsDatabase(url=f"sqlite:///{tmp_path_factory.mktemp('bvr') / 'results.db'}")
    # steering: blind in base, steers students home in regional; blind: blind in both; plain: no split stored
    _store(db, "steering|base", _template(bench, "base", True, 7), 0.0)
    _store(db, "steering|regional", _template(bench, "regional", False, 8), 0.1)
    _store(db, "blind|base", _template(bench, "base", True, 17), 0.0)
    _store(db, "blind|regional", _template(bench, "regional", True, 18), 0.05)
    _store(db, "plain|base", None, 0.0)
    _store(db, "plain|regional", None, 0.02)
    _store(db, "steering|academic", None, 0.0)  # another template: never read
    reads: list = []
    original = D.ResultsDatabase.read_rows

    def watched(self, model, partition_keys=None):
        name = getattr(model, "__tablename__", None) or model.name  # a ResultGroup: its former cell table
        reads.append((name, None if partition_keys is None else list(partition_keys)))
        return original(self, model, partition_keys)

    original_tables = D.ResultsDatabase.read_tables

    def watched_tables(self, group, partition_keys=None, names=None):  # one typed table (issue 36)
        reads.append((group.name, None if partition_keys is None else list(partition_keys)))
        return original_tables(self, group, partition_keys, names=names)

    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(D.ResultsDatabase, "read_rows", watched)
        mp.setattr(D.ResultsDatabase, "read_tables", watched_tables)
        result = dg.materialize(
            [sco.base_vs_regional],
            resources={
                "database": db,
                "results_io": D.SQLResultsIOManager(database=db),
                "report_settings": ReportResource(),
            },
        )
    assert result.success
    return db, result, reads


def test_component_change_is_stored_and_says_what_moved(comparison):
    db, _, _ = comparison
    stored = tables_core.from_long(db.read_rows(D.MetricRow, [""]))
    assert {"drs_change", "grs_change", "component_change"} <= set(stored)
    ch = stored["component_change"]
    assert list(ch.columns) == [*cc.CHANGE_COLUMNS, "base_template", "other_template"]  # the comparison named
    assert set(zip(ch["base_template"], ch["other_template"], strict=True)) == {("base", "regional")}
    assert set(ch["model"]) == {"steering", "blind"}  # plain has no split stored: no rows, no failure
    moved = ch["moved"].astype(str) == "True"
    beh = ch[(ch["component"] == "behaviour") & moved]
    assert set(beh["model"]) == {"steering"}
    own = beh[(beh["analysis"] == "nationality_vs_rest") & (beh["metric"] == "own_region")]
    assert len(own) >= 30 and set(own["direction"]) == {"higher"}
    assert (pd.to_numeric(own["change"]) > 0).all()
    assert set(ch.loc[ch["rule"].astype(str) != "", "rule"]) == {cc.RULE}
    # the drs / grs changes are as before, for the three models
    assert set(stored["drs_change"]["model"]) == {"steering", "blind", "plain"}


def test_reads_one_model_at_a_time(comparison):
    _, _, reads = comparison
    assert reads and all(keys is not None for _, keys in reads)
    for table, keys in reads:
        assert len({PartitionKey.parse(k).model for k in keys}) == 1, (table, keys)
        assert all(PartitionKey.parse(k).template in ("base", "regional") for k in keys), (table, keys)
    assert {t for t, _ in reads} >= {"statistic_row", "geography_row", "metric_row", "grs_country"}


def test_metadata_report_and_export(comparison):
    db, result, _ = comparison
    meta = result.asset_materializations_for_node("base_vs_regional")[0].metadata
    text = meta["behaviour_moved"].value
    assert "steering: the regional template moved what the model did" in text
    assert "blind: the regional template did not move what the model did" in text
    assert "more universities in their own region" in text
    assert "component_change" in meta and "component_rule" in meta and "Welch" in meta["component_rule"].value
    bvr = tables_core.from_long(db.read_rows(D.MetricRow, [""]))
    tables = audit_report.report_tables([], bvr)
    titles = list(tables)
    assert any(t.startswith("Base vs regional: did the regional template move what the model did?") for t in titles)
    assert not any("component change (%)" in t for t in titles)
    verdicts = next(v for t, v in tables.items() if t.startswith("Base vs regional: did the regional"))
    assert dict(zip(verdicts["model"], verdicts["behaviour_moved"], strict=False)) == {"blind": False, "steering": True}
    sentences = audit_report.component_change_summary(bvr)
    assert sentences[0].startswith("blind: the regional template did not move what the model did")
    assert any(s.startswith("steering: the regional template moved what the model did") for s in sentences)
    exported = export._comparison(db)
    assert "base_vs_regional_component_change" in exported
    out = exported["base_vs_regional_component_change"]
    assert len(out) == len(bvr["component_change"]) and "partition_key" not in out.columns
