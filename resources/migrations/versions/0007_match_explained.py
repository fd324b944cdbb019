"""recommendation.match_rule, match_runner_up, match_runner_up_score, match_candidates: every match
explains itself (issue 21).

``match_rule`` is the family of the rule that matched (exact, alias, acronym, structure,
completion, fuzzy; ``core.understanding.match.rule_of`` of ``match_method``); ``match_runner_up`` and
``match_runner_up_score`` name the second-best candidate of a completion or fuzzy match;
``match_candidates`` lists, for an item left ``ambiguous``, the corpus names it could have been
(joined by " | ").
Rows stored before this revision get ``match_rule`` from their ``match_method`` and no runner-up
(unknown: NULL).

Revision ID: 0007_match_explained
Revises: 0006_answer_limit
Create Date: 2026-12-01
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0007_match_explained"
down_revision = "0006_answer_limit"
branch_labels = None
depends_on = None

# match_method -> rule family, for the rows stored before this revision (the same mapping as
# core.understanding.match.rule_of at this revision; written out here so that the migration never changes)
_RULES = {
    "exact": "exact",
    "part": "exact",
    "alias": "alias",
    "historical": "alias",
    "acronym": "acronym",
    "structure": "structure",
    "translated": "structure",
    "prefix": "completion",
    "partial": "completion",
    "fuzzy": "fuzzy",
}


def upgrade() -> None:
    columns = {c["name"] for c in sa.inspect(op.get_bind()).get_columns("recommendation")}
    for name, kind in (
        ("match_rule", sa.String()),
        ("match_runner_up", sa.String()),
        ("match_runner_up_score", sa.Float()),
        ("match_candidates", sa.String()),
    ):
        if name not in columns:
            op.add_column("recommendation", sa.Column(name, kind, nullable=True))
    rec = sa.table("recommendation", sa.column("match_method", sa.String()), sa.column("match_rule", sa.String()))
    for method, rule in _RULES.items():
        op.execute(
            rec.update().where(rec.c.match_method == method).where(rec.c.match_rule.is_(None)).values(match_rule=rule)
        )


def downgrade() -> None:
    with op.batch_alter_table("recommendation") as batch:
        for name in ("match_candidates", "match_runner_up_score", "match_runner_up", "match_rule"):
            batch.drop_column(name)
