"""The language-country affinity table (issue 35): ``base_vs_regional_language_affinity``, one row per model,
reference template and language template of a design's comparisons across languages (METHOD.md §11), with its
natural-key index. The columns are frozen here as they were at this revision (a migration never reads the
live catalogue).

Revision ID: 0013_language_affinity
Revises: 0012_design_attributes
Create Date: 2026-12-03
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0013_language_affinity"
down_revision = "0012_design_attributes"
branch_labels = None
depends_on = None

TABLE = "base_vs_regional_language_affinity"
TEXT, FLOAT, INT, BOOL = sa.Text, sa.Float, sa.BigInteger, sa.Boolean  # as resources/result_store.py types them
COLUMNS = (
    ("model", TEXT),
    ("template", TEXT),
    ("reference_template", TEXT),
    ("language", TEXT),
    ("reference", TEXT),
    ("n_countries", INT),
    ("countries", TEXT),
    ("n_pairs", INT),
    ("n_pairs_excluded", INT),
    ("share_reference", FLOAT),
    ("share_language", FLOAT),
    ("mean_diff", FLOAT),
    ("sd_diff", FLOAT),
    ("ci_low", FLOAT),
    ("ci_high", FLOAT),
    ("level", FLOAT),
    ("n_boot", INT),
    ("p_value", FLOAT),
    ("p_method", TEXT),
    ("n_perm", INT),
    ("p_min_attainable", FLOAT),
    ("correction", TEXT),
    ("family_size", INT),
    ("p_adjusted", FLOAT),
    ("alpha", FLOAT),
    ("significant", BOOL),
    ("component", TEXT),
    ("marking", TEXT),  # the significance marking every table of tests carries (core/statistics/stats.py)
)
KEY = ("model", "reference_template", "template")


def upgrade() -> None:
    if sa.inspect(op.get_bind()).has_table(TABLE):
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
    if sa.inspect(op.get_bind()).has_table(TABLE):
        op.drop_table(TABLE)
