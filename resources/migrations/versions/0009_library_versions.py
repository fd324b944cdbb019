"""provenance.library_versions: the versions of the libraries that decide an audit's numbers (issue 25).

Every provenance record names, besides the code version, the installed versions of
``resources.database.NUMERIC_LIBRARIES`` and Python, as JSON ``{library: version}``; the record's id
(a hash of its content) includes them, so rows produced under other library versions point to another
record. Records stored before this revision get NULL (unknown).

Revision ID: 0009_library_versions
Revises: 0008_model_comparison
Create Date: 2026-12-01
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0009_library_versions"
down_revision = "0008_model_comparison"
branch_labels = None
depends_on = None


def upgrade() -> None:
    columns = {c["name"] for c in sa.inspect(op.get_bind()).get_columns("provenance")}
    if "library_versions" not in columns:
        op.add_column("provenance", sa.Column("library_versions", sa.String(), nullable=True))


def downgrade() -> None:
    with op.batch_alter_table("provenance") as batch:
        batch.drop_column("library_versions")
