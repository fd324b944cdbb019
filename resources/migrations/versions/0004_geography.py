"""Geographic statistics: the student's region on every profile, and the table of the
``audit_geography`` asset (regions, one-vs-rest tests, intersections, home bias, behaviour vs
needs; docs/statistics.md).

Revision ID: 0004_geography
Revises: 0003_items_left_out
Create Date: 2026-11-30
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0004_geography"
down_revision = "0003_items_left_out"
branch_labels = None
depends_on = None


def upgrade() -> None:
    inspector = sa.inspect(op.get_bind())
    columns = {c["name"] for c in inspector.get_columns("profile")}
    for name in ("region", "north_south"):
        if name not in columns:
            op.add_column("profile", sa.Column(name, sa.String(), nullable=True))
    if not inspector.has_table("geography_row"):
        op.create_table(
            "geography_row",
            sa.Column("id", sa.Integer(), primary_key=True),
            sa.Column("partition_key", sa.String(), nullable=False),
            sa.Column("provenance_id", sa.String(64), nullable=False),
            sa.Column("audit_id", sa.String(), nullable=False),
            sa.Column("table_name", sa.String(), nullable=False),
            sa.Column("row_index", sa.Integer(), nullable=False),
            sa.Column("column_index", sa.Integer(), nullable=False),
            sa.Column("column", sa.String(), nullable=False),
            sa.Column("value", sa.Float(), nullable=True),
            sa.Column("value_text", sa.String(), nullable=True),
            sa.Column("params_hash", sa.String(64), nullable=False),
        )
        for col in ("audit_id", "partition_key", "provenance_id", "table_name"):
            op.create_index(f"ix_geography_row_{col}", "geography_row", [col])


def downgrade() -> None:
    op.drop_table("geography_row")
    with op.batch_alter_table("profile") as batch:
        batch.drop_column("north_south")
        batch.drop_column("region")
