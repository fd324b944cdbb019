"""The typed result tables (resources/result_store.py): what goes in comes back as the audit made it,
a value or a column the catalogue does not declare is refused naming it, and a scoped view reads only
its own partitions' rows of its own audits."""

import numpy as np
import pandas as pd
import pytest

from fairness_assets.core.common import tables as tables_core
from resources import database as D
from resources.result_store import ResultTypeError


def _summary(n: int = 3) -> pd.DataFrame:
    return pd.DataFrame(
        {
            "group_by": ["overall"] + ["gender"] * (n - 1),
            "group": ["all"] + [f"g{i}" for i in range(n - 1)],
            "responses": np.arange(n, dtype=np.int64) + 10,
            "drs": [0.5, np.nan, 0.25][:n],
            "acc": [1.0, 0.5, 0.0][:n],
            "rep": [0.1, 0.2, 0.3][:n],
            "acad": [np.nan] * n,
        }
    )


def _long(tables: dict, key: str, audit: str) -> pd.DataFrame:
    return tables_core.to_long(tables).assign(partition_key=key, audit_id=audit, provenance_id="p", params_hash="h")


def test_tables_come_back_as_stored_with_their_kinds_and_empty_headers(tmp_path):
    db = D.ResultsDatabase(url=f"sqlite:///{tmp_path / 'r.db'}")
    try:
        empty = pd.DataFrame(columns=["group_by", "group", "items", "acad"])
        stored = {"drs_summary": _summary(), "academic_alignment": empty}
        db.replace_result_tables("analysis_tables", _long(stored, "m|base", "a1"), ["m|base"])
        back = db.partition_tables(D.MetricRow, "m|base")
        assert set(back) == {"drs_summary", "academic_alignment"}  # an empty table is stored with its header
        pd.testing.assert_frame_equal(back["drs_summary"], _summary())
        assert back["drs_summary"]["responses"].dtype == np.int64
        assert list(back["academic_alignment"].columns) == list(empty.columns) and back["academic_alignment"].empty
        # the long form the assets take is what core.common.tables gave before storage
        pd.testing.assert_frame_equal(
            tables_core.from_long(db.read_rows(D.MetricRow, ["m|base"]))["drs_summary"], _summary()
        )
    finally:
        db.dispose()


def test_a_value_or_column_the_catalogue_does_not_declare_is_refused_by_name(tmp_path):
    db = D.ResultsDatabase(url=f"sqlite:///{tmp_path / 'r.db'}")
    try:
        bad = _summary().assign(responses=[1.5, 2.0, 3.0])  # declared int
        with pytest.raises(ResultTypeError, match=r"'drs_summary'.*column 'responses' is declared int.*1\.5"):
            db.replace_result_tables("analysis_tables", _long({"drs_summary": bad}, "m|base", "a1"), ["m|base"])
        extra = _summary().assign(surprise="x")
        with pytest.raises(ResultTypeError, match=r"column\(s\) \['surprise'\] that core/common/result_tables.py"):
            db.replace_result_tables("analysis_tables", _long({"drs_summary": extra}, "m|base", "a1"), ["m|base"])
        with pytest.raises(ResultTypeError, match="produced a table 'nope'"):
            db.replace_result_tables("analysis_tables", _long({"nope": _summary()}, "m|base", "a1"), ["m|base"])
        assert db.partition_tables(D.MetricRow, "m|base") == {}  # nothing half-written
    finally:
        db.dispose()


def test_a_scoped_view_reads_only_its_partitions_of_its_audits(tmp_path):
    url = f"sqlite:///{tmp_path / 'r.db'}"
    db = D.ResultsDatabase(url=url)
    try:
        db.replace_result_tables("analysis_tables", _long({"drs_summary": _summary()}, "m|base", "mine"), ["m|base"])
        db.replace_result_tables("analysis_tables", _long({"drs_summary": _summary(2)}, "o|base", "other"), ["o|base"])
    finally:
        db.dispose()
    mine = D.ResultsDatabase.scoped_to(url, {"m|base": "mine", "o|base": "mine"})
    taken = D.ResultsDatabase.scoped_to(url, {"m|base": "someone-else"})
    try:
        assert set(mine.read_tables(D.MetricRow)) == {("m|base", "mine")}  # o|base holds another audit
        assert sorted(mine.distinct(D.MetricRow, ["partition_key"])["partition_key"]) == ["m|base"]
        assert taken.read_tables(D.MetricRow) == {} and taken.read_rows(D.MetricRow).empty
    finally:
        mine.dispose()
        taken.dispose()


def test_one_table_read_typed_is_the_table_of_the_long_form(tmp_path):
    """``names`` reads only the named tables, each the same frame as the long form gives (the drift, the
    base-vs-regional comparison and the component change read one table this way, issue 36)."""
    db = D.ResultsDatabase(url=f"sqlite:///{tmp_path / 'r.db'}")
    try:
        stored = {"drs_summary": _summary(), "academic_alignment": _summary()[["group_by", "group", "acad"]]}
        db.replace_result_tables("analysis_tables", _long(stored, "m|base", "a1"), ["m|base"])
        one = db.partition_tables(D.MetricRow, "m|base", names=["drs_summary"])
        assert list(one) == ["drs_summary"]
        everything = tables_core.from_long(db.read_rows(D.MetricRow, ["m|base"]))
        pd.testing.assert_frame_equal(one["drs_summary"], everything["drs_summary"])
        assert db.partition_tables(D.MetricRow, "m|base", names=["no_such_table"]) == {}
        assert db.partition_tables(D.MetricRow, "m|other", names=["drs_summary"]) == {}
        found = db.read_tables(D.MetricRow, ["m|base"], names=["academic_alignment"])
        assert list(found) == [("m|base", "a1")] and list(found[("m|base", "a1")]) == ["academic_alignment"]
    finally:
        db.dispose()
