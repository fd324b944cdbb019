"""comparison_row and sensitivity_row: the tables of the ``model_comparison`` asset (issue 22: the
paired differences between the models of a template, the leaderboard, the release gate's verdicts)
and of the ``sensitivity`` asset (every significant finding re-scored under the method's parameter
grid), in the long format of core.common.tables (packed: one stored row per table row).

Revision ID: 0008_model_comparison
Revises: 0007_match_explained
Create Date: 2026-12-01
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0008_model_comparison"
down_revision = "0007_match_explained"
branch_labels = None
depends_on = None


def upgrade() -> None:
    for table in ("comparison_row", "sensitivity_row"):
        if not sa.inspect(op.get_bind()).has_table(table):
            _create(table)


def _create(table: str) -> None:
    op.create_table(
        table,
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
        op.create_index(f"ix_{table}_{col}", table, [col])


def downgrade() -> None:
    op.drop_table("sensitivity_row")
    op.drop_table("comparison_row")
