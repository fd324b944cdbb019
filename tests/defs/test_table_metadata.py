"""Every asset's materialization names the SQL table(s) it is stored in and their columns (issues 25.3, 32.2):
the UI shows them on the asset's page."""

import dagster as dg

from resources import database as D
from tests.helpers import pipeline as P


def test_every_materialization_carries_its_table_name_and_column_schema(tmp_path):
    database = D.ResultsDatabase(url=f"sqlite:///{tmp_path / 'r.db'}")
    result = P.audit(dg.DagsterInstance.ephemeral(), database, P.DEMO_RESPONSES)
    assert result.success
    seen = set()
    for event in result.get_asset_materialization_events():
        asset = event.asset_key.to_user_string()
        meta = event.materialization.metadata
        model = D.TABLES[asset]
        seen.add(asset)
        if isinstance(model, D.ResultGroup):  # its result tables, each a typed SQL table with its columns
            from fairness_assets.core.common import result_tables

            listed = meta["stored_tables"].value
            for t in result_tables.of_asset(asset):
                assert f"SQL table `{t.sql_name}`" in listed and ", ".join(f"{c} {k}" for c, k in t.columns) in listed
            continue
        assert meta["dagster/table_name"].value == model.__tablename__, asset
        schema = meta["dagster/column_schema"].schema
        assert [c.name for c in schema.columns] == [c.name for c in model.__table__.columns], asset
    assert seen == set(D.TABLES)  # every stored asset, the report included
