"""The students' attributes of any design (issue 34): the three fixed axis columns ``gender``,
``economic_class`` and ``nationality`` of ``profile``, ``generation``, ``recommendation``, ``drs_item``
and of the typed result table ``drs_responses`` become one text column ``attributes``, a JSON object
``{axis: value or null}`` (resources/database/attributes.py), so that a design may declare other axes.

Rows stored before this revision get ``attributes`` from the three columns, in that order, null for a
NULL value: ``{"gender":"female","economic_class":null,"nationality":"India"}``, the text
``json.dumps(..., ensure_ascii=False, separators=(",", ":"))`` gives (SQLite ``json_quote``, PostgreSQL
``to_json`` quote each value as it does), so a row migrated and a row written now are the same text.
On SQLite the table is copied with ``attributes`` where the three columns were; PostgreSQL adds it at
the end of the table (``ALTER TABLE ... ADD COLUMN``; the reads name their columns). The downgrade
puts the three columns back from ``attributes`` (any other axis a design stored is lost).

The typed result tables of home bias (``geography_home_bias``, ``geography_home_bias_change``) named
their column of the student's country after the study's home axis (``nationality``): it becomes
``home`` (declared ``h`` in core/common/result_tables.py: the design's home axis, whatever its name),
its natural-key index rebuilt on it.

Two more columns named after the study's home axis take the role's name: ``profile.nationality_iso3``
becomes ``home_iso3`` (the ISO3 of the student's home country) and ``country.is_nationality`` becomes
``is_home`` (a country some profile has for home).

The base-vs-regional tables (``base_vs_regional_drs_change``, ``_grs_change``, ``_component_change``) hold
every template comparison of a design now: they gain ``base_template`` and ``other_template``, filled with
``base`` and ``regional`` for the rows stored before (the only comparison there was), and their key
indexes are rebuilt with them.

The axis names and tables are frozen here as they were at this revision (a migration never reads the
live catalogue).

Revision ID: 0012_design_attributes
Revises: 0011_natural_keys
Create Date: 2026-12-03
"""

from __future__ import annotations

import json

import sqlalchemy as sa
from alembic import op

revision = "0012_design_attributes"
down_revision = "0011_natural_keys"
branch_labels = None
depends_on = None

AXES = ("gender", "economic_class", "nationality")
# table -> (the column before the axis columns, the SQL type of its text columns)
TABLES = {
    "profile": ("profile_set", sa.String),
    "generation": ("profile_id", sa.String),
    "recommendation": ("profile_id", sa.String),
    "drs_item": ("profile_id", sa.String),
    "drs_responses": ("profile_id", sa.Text),
}


# home-bias tables: (the natural key before, the natural key after)
HOME_TABLES = {
    "geography_home_bias": (("model", "template", "nationality"), ("model", "template", "home")),
    "geography_home_bias_change": (("model", "nationality"), ("model", "home")),
}


def _rename_home(old: str, new: str, key: int) -> None:
    """Rename the home-bias tables' column ``old`` to ``new``, their key index rebuilt on it."""
    bind = op.get_bind()
    tables = set(sa.inspect(bind).get_table_names())
    for table, keys in HOME_TABLES.items():
        if table not in tables or old not in _columns(table):
            continue
        if new in _columns(table):  # made by create_all: the baseline added the old column, empty
            with op.batch_alter_table(table, recreate=_recreate(bind.dialect.name)) as batch:
                batch.drop_column(old)
            continue
        index = f"ix_{table}_key"
        if index in {i["name"] for i in sa.inspect(bind).get_indexes(table)}:
            op.drop_index(index, table_name=table)
        with op.batch_alter_table(table, recreate=_recreate(bind.dialect.name)) as batch:
            batch.alter_column(old, new_column_name=new)
        op.create_index(index, table, ["audit_id", "partition_key", *keys[key]])


# the template comparisons' tables: (their key after the model before, the same after)
PAIR_TABLES = {
    "base_vs_regional_drs_change": ("group_by", "group"),
    "base_vs_regional_grs_change": ("iso3",),
    "base_vs_regional_component_change": (
        "source",
        "analysis",
        "value_a",
        "value_b",
        "metric",
        "component",
        "unit",
    ),
}
PAIR_COLUMNS = (("base_template", "base"), ("other_template", "regional"))


def _pair_columns(back: bool = False) -> None:
    """Add (or, back, drop) the columns naming the templates compared; the key index follows."""
    bind = op.get_bind()
    tables = set(sa.inspect(bind).get_table_names())
    for table, rest in PAIR_TABLES.items():
        if table not in tables:
            continue
        columns = _columns(table)
        if back != all(c in columns for c, _ in PAIR_COLUMNS):
            continue
        index = f"ix_{table}_key"
        if index in {i["name"] for i in sa.inspect(bind).get_indexes(table)}:
            op.drop_index(index, table_name=table)
        if back:
            with op.batch_alter_table(table, recreate=_recreate(bind.dialect.name)) as batch:
                for c, _ in PAIR_COLUMNS:
                    batch.drop_column(c)
            op.create_index(index, table, ["audit_id", "partition_key", "model", *rest])
            continue
        for c, value in PAIR_COLUMNS:
            op.add_column(table, sa.Column(c, sa.Text(), nullable=True))
            op.execute(sa.text(f"UPDATE {table} SET {c} = :v").bindparams(v=value))
        op.create_index(index, table, ["audit_id", "partition_key", "model", *(c for c, _ in PAIR_COLUMNS), *rest])


# (table, the column's name before, after)
RENAMED = (("profile", "nationality_iso3", "home_iso3"), ("country", "is_nationality", "is_home"))


def _rename_columns(back: bool = False) -> None:
    bind = op.get_bind()
    tables = set(sa.inspect(bind).get_table_names())
    for table, before, after in RENAMED:
        old, new = (after, before) if back else (before, after)
        if table not in tables or old not in _columns(table):
            continue
        with op.batch_alter_table(table, recreate=_recreate(bind.dialect.name)) as batch:
            if new in _columns(table):  # a database made by create_all: the baseline added the old one, empty
                batch.drop_column(old)
            else:
                batch.alter_column(old, new_column_name=new)


def _columns(table: str) -> list[str]:
    return [c["name"] for c in sa.inspect(op.get_bind()).get_columns(table)]


def _packed_sql(dialect: str) -> str:
    """The SQL expression of the JSON object of the three axis columns, as json.dumps writes it."""
    quote = "json_quote({})" if dialect == "sqlite" else "to_json({})::text"
    parts = [
        f"'{',' if i else '{'}{json.dumps(axis)}:' || COALESCE({quote.format(axis)}, 'null')"
        for i, axis in enumerate(AXES)
    ]
    return " || ".join(parts) + " || '}'"


def _unpacked_sql(dialect: str, axis: str) -> str:
    """The SQL expression of one axis's value in ``attributes`` (NULL for JSON null or a missing key)."""
    if dialect == "sqlite":
        return f"json_extract(attributes, '$.\"{axis}\"')"
    return f"(attributes::json ->> '{axis}')"


def _recreate(dialect: str) -> str:
    return "always" if dialect == "sqlite" else "auto"


def upgrade() -> None:
    _rename_home("nationality", "home", 1)
    _rename_columns()
    _pair_columns()
    bind = op.get_bind()
    dialect = bind.dialect.name
    tables = set(sa.inspect(bind).get_table_names())
    for table, (before, kind) in TABLES.items():
        if table not in tables:
            continue
        columns = _columns(table)
        if "attributes" not in columns:
            op.add_column(table, sa.Column("attributes", kind(), nullable=True))
        old = [a for a in AXES if a in columns]
        if len(old) != len(AXES):  # already migrated (or never had them): nothing to move
            continue
        op.execute(sa.text(f"UPDATE {table} SET attributes = {_packed_sql(dialect)} WHERE attributes IS NULL"))
        order = [c for c in columns if c not in AXES]
        if dialect == "sqlite" and before in order:
            order.insert(order.index(before) + 1, "attributes")
        with op.batch_alter_table(
            table,
            recreate=_recreate(dialect),
            partial_reordering=[tuple(order)] if dialect == "sqlite" and before in order else None,
        ) as batch:
            for axis in AXES:
                batch.drop_column(axis)


def downgrade() -> None:
    _rename_home("home", "nationality", 0)
    _rename_columns(back=True)
    _pair_columns(back=True)
    bind = op.get_bind()
    dialect = bind.dialect.name
    tables = set(sa.inspect(bind).get_table_names())
    for table, (before, kind) in TABLES.items():
        if table not in tables:
            continue
        columns = _columns(table)
        if "attributes" not in columns:
            continue
        for axis in AXES:
            if axis not in columns:
                op.add_column(table, sa.Column(axis, kind(), nullable=True))
        values = ", ".join(f"{axis} = {_unpacked_sql(dialect, axis)}" for axis in AXES)
        op.execute(sa.text(f"UPDATE {table} SET {values}"))
        order = [c for c in columns if c not in AXES and c != "attributes"]
        if dialect == "sqlite" and before in order:
            at = order.index(before) + 1
            order[at:at] = list(AXES)
        with op.batch_alter_table(
            table,
            recreate=_recreate(dialect),
            partial_reordering=[tuple(order)] if dialect == "sqlite" and before in order else None,
        ) as batch:
            batch.drop_column("attributes")
