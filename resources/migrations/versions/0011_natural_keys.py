"""An index on the natural key of every typed result table (issue 32.2).

Each table of ``fairness_assets/core/common/result_tables.py`` declares the columns that name a row within
one partition's audit (its ``key``); this revision indexes (audit_id, partition_key, *key) in each of
their SQL tables, so a query of one finding ("the DRS class gap of model X", "behaviour_needs of
gender female vs male") is an index lookup. Tables of one row per partition and audit have no key:
their (audit_id, partition_key) index (0010) is their key. The list is frozen here as it was when
this revision was written (a migration never reads the live catalogue).

Revision ID: 0011_natural_keys
Revises: 0010_typed_result_tables
Create Date: 2026-12-02
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0011_natural_keys"
down_revision = "0010_typed_result_tables"
branch_labels = None
depends_on = None

KEYS = {
    "drs_responses": ("response_id",),
    "drs_summary": ("group_by", "group"),
    "academic_alignment": ("group_by", "group"),
    "reduced_context_top": ("attribute", "value", "what", "rank"),
    "run_variability": ("model", "template", "group_by", "group", "metric", "unit"),
    "counterfactual_disparity": ("model", "template", "attribute", "value_a", "value_b", "metric"),
    "behaviour_needs": ("model", "template", "attribute", "value_a", "value_b", "metric", "component"),
    "envy": ("model", "template", "attribute", "group", "other_group", "metric"),
    "geography_region_metrics": ("model", "template", "group_by", "group", "metric", "unit"),
    "geography_geo_contrasts": (
        "model", "template", "analysis", "attribute", "value", "reference", "metric", "component", "unit",
    ),
    "geography_class_gap_interactions": (
        "model", "template", "analysis", "factor", "kind", "value_a", "value_b", "metric", "component", "gap", "unit",
    ),
    "geography_home_bias": ("model", "template", "nationality"),
    "geography_home_bias_change": ("model", "nationality"),
    "geography_class_gap_decomposition": ("model", "template", "metric", "value_a", "value_b", "component"),
    "geography_families": ("model", "template", "analysis", "unit"),
    "base_vs_regional_drs_change": ("model", "group_by", "group"),
    "base_vs_regional_grs_change": ("model", "iso3"),
    "base_vs_regional_component_change": (
        "model", "source", "analysis", "value_a", "value_b", "metric", "component", "unit",
    ),
    "model_comparison_differences": (
        "template", "model_a", "model_b", "family", "metric", "gap", "country", "component",
    ),
    "model_comparison_leaderboard": ("template", "model", "metric"),
    "model_comparison_gate": ("line",),
    "sensitivity_verdicts": ("source", "finding", "model", "template", "metric"),
    "sensitivity_comparison_by_setting": (
        "setting", "template", "model_a", "model_b", "family", "metric", "gap", "country", "component",
    ),
}  # fmt: skip


def _existing(table: str) -> set[str]:
    return {i["name"] for i in sa.inspect(op.get_bind()).get_indexes(table)}


def upgrade() -> None:
    tables = set(sa.inspect(op.get_bind()).get_table_names())
    for table, key in KEYS.items():
        if table in tables and f"ix_{table}_key" not in _existing(table):
            op.create_index(f"ix_{table}_key", table, ["audit_id", "partition_key", *key])


def downgrade() -> None:
    tables = set(sa.inspect(op.get_bind()).get_table_names())
    for table in KEYS:
        if table in tables and f"ix_{table}_key" in _existing(table):
            op.drop_index(f"ix_{table}_key", table_name=table)
