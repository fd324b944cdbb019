"""Identity by name (issue 35): the student's name of a named profile, ``profile.student_name`` (null for every
other profile, and for the rows stored before), and the stated-vs-signalled table
``base_vs_regional_signalled``, one row per model, stated and signalled template, axis, value and metric
(core/statistics/signalled.py), with its natural-key index. The columns are frozen here as they were at this
revision (a migration never reads the live catalogue).

Revision ID: 0014_names
Revises: 0013_language_affinity
Create Date: 2026-12-03
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0014_names"
down_revision = "0013_language_affinity"
branch_labels = None
depends_on = None

TABLE = "base_vs_regional_signalled"
TEXT, FLOAT, INT, BOOL = sa.Text, sa.Float, sa.BigInteger, sa.Boolean  # as resources/result_store.py types them
COLUMNS = (
    ("model", TEXT),
    ("stated_template", TEXT),
    ("signalled_template", TEXT),
    ("axis", TEXT),
    ("value", TEXT),
    ("metric", TEXT),
    ("n_stated", INT),
    ("n_signalled", INT),
    ("n_cells", INT),
    ("n_cells_excluded", INT),
    ("gap_stated", FLOAT),
    ("ci_low_stated", FLOAT),
    ("ci_high_stated", FLOAT),
    ("p_stated", FLOAT),
    ("p_adjusted_stated", FLOAT),
    ("significant_stated", BOOL),
    ("gap_signalled", FLOAT),
    ("ci_low_signalled", FLOAT),
    ("ci_high_signalled", FLOAT),
    ("p_signalled", FLOAT),
    ("p_adjusted_signalled", FLOAT),
    ("significant_signalled", BOOL),
    ("difference", FLOAT),
    ("ci_low_difference", FLOAT),
    ("ci_high_difference", FLOAT),
    ("p_difference", FLOAT),
    ("p_adjusted_difference", FLOAT),
    ("significant_difference", BOOL),
    ("level", FLOAT),
    ("correction", TEXT),
    ("family_size", INT),
    ("alpha", FLOAT),
    ("component_gap", TEXT),
    ("component", TEXT),
    ("marking", TEXT),
)
KEY = ("model", "stated_template", "signalled_template", "axis", "value", "metric")


def upgrade() -> None:
    inspector = sa.inspect(op.get_bind())
    if "student_name" not in {c["name"] for c in inspector.get_columns("profile")}:
        op.add_column("profile", sa.Column("student_name", sa.String, nullable=True))
    if inspector.has_table(TABLE):
        return
    op.create_table(
        TABLE,
        sa.Column("id", sa.Integer, primary_key=True, autoincrement=True),
        sa.Column("partition_key", sa.String, nullable=False),
        sa.Column("audit_id", sa.String, nullable=False),
        sa.Column("provenance_id", sa.String(64), nullable=False),
        sa.Column("params_hash", sa.String(64), nullable=False),
        sa.Column("row_index", sa.Integer, nullable=False),
        *[sa.Column(name, kind(), nullable=True) for name, kind in COLUMNS],
    )
    op.create_index(f"ix_{TABLE}_audit_partition", TABLE, ["audit_id", "partition_key"])
    op.create_index(f"uq_{TABLE}_row", TABLE, ["partition_key", "row_index"], unique=True)
    op.create_index(f"ix_{TABLE}_key", TABLE, ["audit_id", "partition_key", *KEY])


def downgrade() -> None:
    inspector = sa.inspect(op.get_bind())
    if inspector.has_table(TABLE):
        op.drop_table(TABLE)
    if "student_name" in {c["name"] for c in inspector.get_columns("profile")}:
        with op.batch_alter_table("profile") as batch:
            batch.drop_column("student_name")
