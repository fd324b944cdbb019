"""What the UI is told about where an asset is stored: its SQL table's name and columns (from the
SQLModel classes) and, for a table of cells, the result tables it holds (core/common/result_tables.py)."""

import dagster as dg
import pytest

from fairness_assets.core.common import result_tables as rt
from resources import database as D


def test_the_column_schema_is_the_sql_tables():
    schema = D.table_schema(D.Recommendation)
    table = D.Recommendation.__table__
    assert [c.name for c in schema.columns] == [c.name for c in table.columns]
    types = {c.name: c.type for c in schema.columns}
    assert types["item_index"] == "int" and types["match_score"] == "float" and types["answer_truncated"] == "bool"
    assert types["university_text"] == "string"
    nullable = {c.name: c.constraints.nullable for c in schema.columns}
    assert nullable["university_text"] and not nullable["response_id"]
    assert next(c for c in schema.columns if c.name == "id").constraints.unique  # the row id
    corpus = D.table_schema(D.CorpusUniversity)
    assert "unique (partition_key, university_id)" in corpus.constraints.other  # the natural key (migration 0005)
    outcome = D.table_schema(D.PartitionOutcome)
    assert outcome.constraints.other[0] == "primary key (run_id, partition_key, asset)"


def test_every_result_table_is_stored_in_a_registered_table():
    for t in rt.TABLES:
        assert t.asset in D.TABLES, t
    meta = D.table_metadata("analysis_tables")
    assert "dagster/table_name" not in meta  # several typed SQL tables, each listed with its columns
    listed = meta["stored_tables"].value
    assert all(f"SQL table `{t.sql_name}`" in listed for t in rt.of_asset("analysis_tables"))
    assert "responses int, drs float" in listed  # drs_summary's columns and types
    assert isinstance(D.table_metadata("generations")["dagster/column_schema"], dg.TableSchema)
    assert "exported as `geography_home_bias.csv`" in D.table_metadata("audit_geography")["stored_tables"].value
    assert "stored_tables" not in D.table_metadata("generations")  # one row per answer: its columns say it all
    with pytest.raises(KeyError, match="no results table registered for asset 'nope'"):
        D.table_metadata("nope")
