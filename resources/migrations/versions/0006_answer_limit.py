"""recommendation.answer_chars and answer_truncated: the per-answer length limit of the parser.

The parser reads the first ``MAX_ANSWER_CHARS`` characters of an answer (20,000; core/understanding/parse/shared.py);
a longer answer is stored whole in ``generation.response``, once, and each of its recommendation
rows records the answer's length (``answer_chars``) and that it was cut (``answer_truncated``).
Rows stored before this revision were parsed up to 50,000 characters without saying so: they
get ``answer_chars`` NULL (unknown) and ``answer_truncated`` false.

Revision ID: 0006_answer_limit
Revises: 0005_reference_keys
Create Date: 2026-12-01
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0006_answer_limit"
down_revision = "0005_reference_keys"
branch_labels = None
depends_on = None


def upgrade() -> None:
    columns = {c["name"] for c in sa.inspect(op.get_bind()).get_columns("recommendation")}
    if "answer_chars" not in columns:
        op.add_column("recommendation", sa.Column("answer_chars", sa.Integer(), nullable=True))
    if "answer_truncated" not in columns:
        op.add_column(
            "recommendation", sa.Column("answer_truncated", sa.Boolean(), nullable=False, server_default=sa.false())
        )


def downgrade() -> None:
    with op.batch_alter_table("recommendation") as batch:
        batch.drop_column("answer_truncated")
        batch.drop_column("answer_chars")
