"""Every asset's materialization names the SQL table it is stored in and its columns (issue 25.3):
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
        assert meta["dagster/table_name"].value == model.__tablename__, asset
        schema = meta["dagster/column_schema"].schema
        assert [c.name for c in schema.columns] == [c.name for c in model.__table__.columns], asset
        seen.add(asset)
    assert seen == set(D.TABLES)  # every stored asset, the report included
