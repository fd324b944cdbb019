"""The asset IO manager: :class:`SQLResultsIOManager` stores each asset's frame in its table of the
results database (replacing the rows of the materialized partitions, their leases claimed) and loads
it back for downstream assets."""

from __future__ import annotations

from typing import Type

import pandas as pd
from dagster import ConfigurableIOManager, InputContext, OutputContext
from sqlmodel import SQLModel

from ..result_store import ResultGroup
from .metadata import result_tables_of, table_metadata
from .schema import TABLES
from .store import ResultsDatabase


class SQLResultsIOManager(ConfigurableIOManager):
    """Stores asset frames in their sqlmodel table and loads them back.

    A frame carries its ``provenance_id`` column (see :meth:`ResultsDatabase.record_provenance`);
    the id links each row to what produced it.
    """

    database: ResultsDatabase

    def _model(self, asset_name: str) -> Type[SQLModel]:
        if asset_name not in TABLES:
            raise KeyError(f"no results table registered for asset {asset_name!r}")
        return TABLES[asset_name]

    @staticmethod
    def _partitions(context) -> list[str]:
        if context.has_asset_partitions:
            return list(context.asset_partition_keys)
        return [""]

    def _claim(self, context, keys: list[str]) -> None:
        """One writer per partition: fail if another live run holds one of ``keys`` (resources/partition_lease.py)."""
        if keys == [""]:
            return
        from ..partition_lease import claim, keep_alive, run_finished_from, run_status_from

        step = context.step_context
        claim(self.database.engine(), keys, step.run_id, run_status_from(step.instance), warn=context.log.warning)
        keep_alive(self.database.engine(), keys, step.run_id, run_finished_from(step.instance, step.run_id))

    def handle_output(self, context: OutputContext, obj: pd.DataFrame) -> None:
        if obj is None:
            return
        keys = self._partitions(context)
        self._claim(context, keys)
        name = context.asset_key.path[-1]
        context.add_output_metadata(table_metadata(name))  # the UI shows the stored table and its columns
        if keys != [
            ""
        ]:  # a partition this asset could not produce in the run keeps its earlier rows (defs/isolation.py)
            outcomes = self.database.run_outcomes(context.step_context.run_id)
            lost = set(outcomes.loc[outcomes["asset"] == context.asset_key.to_user_string(), "partition_key"])
            if lost & set(keys):
                keys = [k for k in keys if k not in lost]
                if "partition_key" in obj:
                    obj = obj[obj["partition_key"].isin(keys)]
                context.log.warning(
                    f"{name}: not stored for partition(s) {sorted(lost)} "
                    "(failed or skipped in this run; their earlier rows, if any, are kept)"
                )
                if not keys:
                    return
        model = self._model(name)
        run_id = context.step_context.run_id if keys != [""] else None
        if isinstance(model, ResultGroup):  # its tables, each in its typed SQL table (resources/result_store.py)
            n = self.database.replace_result_tables(name, obj, keys, run_id=run_id, log_fn=context.log.info)
            where = f"{len(result_tables_of(name))} typed result tables"
        else:
            n = self.database.replace_rows(model, obj, keys, run_id=run_id, log_fn=context.log.info)
            where = model.__tablename__
        context.log.info(f"stored {n} row(s) of {name} in table {where} at {self.database.describe()}")

    def load_input(self, context: InputContext) -> pd.DataFrame:
        name = context.upstream_output.asset_key.path[-1] if context.upstream_output else context.asset_key.path[-1]
        model = self._model(name)
        keys = self._partitions(context)
        self._claim(context, keys)
        if isinstance(model, ResultGroup):  # only this asset's tables, in long form
            df = self.database.read_rows(ResultGroup(model.name, (name,)), keys)
        else:
            df = self.database.read_rows(model, keys)
        drop = [c for c in ["id"] + (["partition_key"] if keys == [""] else []) if c in df]
        return df.drop(columns=drop)
