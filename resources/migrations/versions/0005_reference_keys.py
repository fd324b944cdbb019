"""Shared tables safe under concurrency: natural keys for the reference tables, their content
hash, and lease tokens.

- ``corpus_university``, ``country``, ``capital_distance``, ``profile`` and ``prompt`` get a unique
  index on their natural key (with ``partition_key``). Before it is made, rows that repeat a key are
  removed, keeping the newest row of each key (the highest id), and the repair is logged per table:
  two runs that replaced these tables at once without a lock (releases before this one, on
  PostgreSQL) each inserted a full copy. The content hashes of repaired tables are not kept, so the
  next run that materializes the reference assets rewrites them whole.
- ``table_content``: the hash of what each shared table holds, so that a run finding the same
  content does not rewrite it.
- ``partition_outcome``: the partitions of a run that an asset could not produce, with the reason
  (the run's other partitions go on: fairness_assets/defs/isolation.py).
- ``partition_lease.token`` and ``partition_lease_grant``: the token a run was given with a
  partition, so that a run that lost its lease knows it (resources/partition_lease.py).

Revision ID: 0005_reference_keys
Revises: 0004_geography
Create Date: 2026-12-01
"""

from __future__ import annotations

import logging

import sqlalchemy as sa
from alembic import op

revision = "0005_reference_keys"
down_revision = "0004_geography"
branch_labels = None
depends_on = None

log = logging.getLogger("resources.migrations")

NATURAL_KEYS = {
    "corpus_university": ("university_id",),
    "country": ("iso3",),
    "capital_distance": ("from_iso3", "to_iso3"),
    "profile": ("profile_id",),
    "prompt": ("prompt_id",),
}


def remove_duplicates(bind, table: str, columns: tuple[str, ...]) -> int:
    """Delete every row of ``table`` that repeats the natural key ``(partition_key, *columns)`` of a
    row with a higher id; returns how many were deleted."""
    t = sa.table(table, sa.column("id"), sa.column("partition_key"), *[sa.column(c) for c in columns])
    key = [t.c.partition_key, *[t.c[c] for c in columns]]
    keep = sa.select(sa.func.max(t.c.id)).group_by(*key).scalar_subquery()
    if bind.dialect.name == "sqlite" or bind.dialect.name == "postgresql":
        result = bind.execute(t.delete().where(t.c.id.not_in(keep)))
    else:  # pragma: no cover - MySQL cannot select from the table it deletes from
        ids = [r[0] for r in bind.execute(sa.select(t.c.id).where(t.c.id.not_in(keep)))]
        result = bind.execute(t.delete().where(t.c.id.in_(ids))) if ids else None
    return int(result.rowcount or 0) if result is not None else 0


def upgrade() -> None:
    bind = op.get_bind()
    inspector = sa.inspect(bind)
    for table, columns in NATURAL_KEYS.items():
        index = f"uq_{table}_natural_key"
        if index in {i["name"] for i in inspector.get_indexes(table)}:
            continue
        removed = remove_duplicates(bind, table, columns)
        if removed:
            log.warning(
                "results database repair: removed %d duplicate row(s) of %s (same partition_key and %s; "
                "left by concurrent runs of an earlier release); the reference assets are rewritten "
                "whole by their next run",
                removed,
                table,
                ", ".join(columns),
            )
        op.create_index(index, table, ["partition_key", *columns], unique=True)
    if not inspector.has_table("table_content"):
        op.create_table(
            "table_content",
            sa.Column("table_name", sa.String(), primary_key=True),
            sa.Column("partition_key", sa.String(), primary_key=True),
            sa.Column("content_sha256", sa.String(64), nullable=False),
            sa.Column("rows", sa.Integer(), nullable=False),
            sa.Column("written_at", sa.DateTime(timezone=True), nullable=False),
        )
    if not inspector.has_table("partition_outcome"):
        op.create_table(
            "partition_outcome",
            sa.Column("run_id", sa.String(), primary_key=True),
            sa.Column("partition_key", sa.String(), primary_key=True),
            sa.Column("asset", sa.String(), primary_key=True),
            sa.Column("status", sa.String(), nullable=False),
            sa.Column("reason", sa.String(), nullable=False),
            sa.Column("recorded_at", sa.DateTime(timezone=True), nullable=False),
        )
    if "token" not in {c["name"] for c in inspector.get_columns("partition_lease")}:
        op.add_column("partition_lease", sa.Column("token", sa.String(), nullable=False, server_default=""))
    if not inspector.has_table("partition_lease_grant"):
        op.create_table(
            "partition_lease_grant",
            sa.Column("partition_key", sa.String(), primary_key=True),
            sa.Column("run_id", sa.String(), primary_key=True),
            sa.Column("token", sa.String(), nullable=False),
            sa.Column("granted_at", sa.DateTime(timezone=True), nullable=False),
        )


def downgrade() -> None:
    op.drop_table("partition_lease_grant")
    with op.batch_alter_table("partition_lease") as batch:
        batch.drop_column("token")
    op.drop_table("partition_outcome")
    op.drop_table("table_content")
    for table in NATURAL_KEYS:
        op.drop_index(f"uq_{table}_natural_key", table_name=table)
