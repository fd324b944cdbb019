"""generation.response_format: what the stored ``response`` holds.

``text`` (every row before this revision): the answer as the model wrote it, parsed by the
parser. ``items``: an answer imported already split into items (a responses file with
``university``/``program``/``country`` columns), stored as the JSON document
``{"items": [{"university": ..., "program": ..., "country": ...}, ...]}`` and turned into
recommendations without parsing (fairness_assets/core/generation/responses/, ``items_document``).

Revision ID: 0002_generation_response_format
Revises: 0001_baseline
Create Date: 2026-11-30
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0002_generation_response_format"
down_revision = "0001_baseline"
branch_labels = None
depends_on = None


def upgrade() -> None:
    columns = {c["name"] for c in sa.inspect(op.get_bind()).get_columns("generation")}
    if "response_format" not in columns:  # rows already stored are answers as written: 'text'
        op.add_column("generation", sa.Column("response_format", sa.String(), nullable=False, server_default="text"))


def downgrade() -> None:
    with op.batch_alter_table("generation") as batch:
        batch.drop_column("response_format")
