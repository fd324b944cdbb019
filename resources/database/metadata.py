"""What Dagster's UI shows of where an asset is stored: its SQL table's name and columns as a
``TableSchema``, or, for an asset kept in typed result tables, the tables it holds."""

from __future__ import annotations

from functools import lru_cache
from typing import Any, Type

import sqlalchemy as sa
from dagster import MetadataValue, TableColumn, TableColumnConstraints, TableConstraints, TableSchema
from sqlmodel import SQLModel

from ..result_store import ResultGroup
from .schema import TABLES


def _column_type(column: sa.Column) -> str:
    kind_of = column.type.impl_instance if isinstance(column.type, sa.types.TypeDecorator) else column.type
    for kind, name in (
        (sa.Boolean, "bool"),
        (sa.Integer, "int"),
        (sa.Float, "float"),
        (sa.DateTime, "datetime"),
        (sa.String, "string"),
    ):
        if isinstance(kind_of, kind):
            return name
    return str(kind_of).lower()


@lru_cache(maxsize=None)
def table_schema(model: Type[SQLModel]) -> TableSchema:
    """The columns of ``model``'s SQL table as Dagster's ``TableSchema`` (name, type, nullable,
    unique, the description its field has), with its unique keys as table constraints."""
    table = model.__table__
    single_key = [c.name for c in table.primary_key.columns] if len(table.primary_key.columns) == 1 else []
    fields = getattr(model, "model_fields", {})
    columns = [
        TableColumn(
            c.name,
            _column_type(c),
            description=getattr(fields.get(c.name), "description", None),
            constraints=TableColumnConstraints(
                nullable=bool(c.nullable), unique=bool(c.unique) or c.name in single_key
            ),
        )
        for c in table.columns
    ]
    keys = [
        f"unique ({', '.join(c.name for c in index.columns)})"
        for index in sorted(table.indexes, key=lambda i: i.name)
        if index.unique
    ]
    if len(table.primary_key.columns) > 1:
        keys.insert(0, f"primary key ({', '.join(c.name for c in table.primary_key.columns)})")
    return TableSchema(columns=columns, constraints=TableConstraints(other=keys))


def table_metadata(asset: str) -> dict[str, Any]:
    """What the UI shows of where ``asset`` is stored: its SQL table's name and columns
    (``dagster/table_name``, ``dagster/column_schema``) and, for a table of cells
    (core/common/tables.py), the result tables it holds with their titles (core/common/result_tables.py)."""
    from fairness_assets.core.common import result_tables

    if asset not in TABLES:
        raise KeyError(f"no results table registered for asset {asset!r}")
    model = TABLES[asset]
    if not isinstance(model, ResultGroup):
        return {"dagster/table_name": model.__tablename__, "dagster/column_schema": table_schema(model)}
    held = result_tables.of_asset(asset)
    return {
        "stored_tables": MetadataValue.md(
            "\n".join(
                f"- SQL table `{t.sql_name}` (exported as `{t.file}.csv`): "
                f"{t.title.replace('{', '<').replace('}', '>')}; columns "
                + ", ".join(f"{c} {kind}" for c, kind in t.columns)
                for t in held
            )
            or "none"
        )
    }


def result_tables_of(asset: str) -> tuple:
    """The catalogue's tables of ``asset`` (core/common/result_tables.py)."""
    from fairness_assets.core.common import result_tables

    return result_tables.of_asset(asset)
