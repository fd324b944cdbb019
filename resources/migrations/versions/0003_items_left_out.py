"""recommendation.n_items_left_out: distinct items of an answer after the first k (METHOD.md §9).

The first k items of an answer are scored (k = 3 by default, ``FAIRNESS_MAX_ITEMS``); the rest
are counted on every row of the answer, never dropped silently. Rows stored before this revision
were read with k = 3 and did not count them: they get 0.

Revision ID: 0003_items_left_out
Revises: 0002_generation_response_format
Create Date: 2026-11-30
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0003_items_left_out"
down_revision = "0002_generation_response_format"
branch_labels = None
depends_on = None


def upgrade() -> None:
    columns = {c["name"] for c in sa.inspect(op.get_bind()).get_columns("recommendation")}
    if "n_items_left_out" not in columns:
        op.add_column("recommendation", sa.Column("n_items_left_out", sa.Integer(), nullable=False, server_default="0"))


def downgrade() -> None:
    with op.batch_alter_table("recommendation") as batch:
        batch.drop_column("n_items_left_out")
