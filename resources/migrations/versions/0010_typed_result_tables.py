"""The result tables as typed SQL tables (issue 32.2): one table per entry of core/common/result_tables.py
(``drs_summary``, ``counterfactual_disparity``, ``geography_geo_contrasts``, ``model_comparison_leaderboard``,
``sensitivity_verdicts``, ...), with its declared columns and types, and ``result_table``, the record
of what each asset stored per partition. The cells the five cell tables held (``metric_row``,
``statistic_row``, ``geography_row``, ``comparison_row``, ``sensitivity_row``: core.common.tables long form)
are moved into them, a partition at a time, then the cell tables are dropped.

The schema below is frozen as it is at this revision (later revisions change it, not this file).

Revision ID: 0010_typed_result_tables
Revises: 0009_library_versions
Create Date: 2026-12-02
"""

from __future__ import annotations

import json
import logging

import pandas as pd
import sqlalchemy as sa
from alembic import op

revision = "0010_typed_result_tables"
down_revision = "0009_library_versions"
branch_labels = None
depends_on = None

log = logging.getLogger(__name__)

# SQL table -> (the cell table it held its cells in, asset, table name, packed, columns name:kind)
SCHEMA = {
    "drs_responses": (
        "metric_row",
        "analysis_tables",
        "drs_responses",
        False,
        (
            "response_id:t model:t template:t profile_id:t gender:t economic_class:t nationality:t "
            "run:i parse_status:t n_items:i acc:f rep:f acad:f drs:f n_matched:i"
        ),
    ),
    "drs_summary": (
        "metric_row",
        "analysis_tables",
        "drs_summary",
        False,
        ("group_by:t group:t responses:i drs:f acc:f rep:f acad:f"),
    ),
    "academic_alignment": (
        "metric_row",
        "analysis_tables",
        "academic_alignment",
        False,
        ("group_by:t group:t items:i acad:f"),
    ),
    "volume_diversity": (
        "metric_row",
        "analysis_tables",
        "volume_diversity",
        False,
        (
            "responses:i responses_with_items:i recommendations:i matched_recommendations:i "
            "unique_universities:i unique_university_texts_unmatched:i unique_programs:i "
            "unique_countries:i"
        ),
    ),
    "concentration": (
        "metric_row",
        "analysis_tables",
        "concentration",
        False,
        (
            "recommendations_with_country:i us_uk_share:f us_uk_countries:t countries_recommended:i "
            "corpus_countries:i country_coverage:f"
        ),
    ),
    "reduced_context_top": (
        "metric_row",
        "analysis_tables",
        "reduced_context_top",
        False,
        ("attribute:t value:t what:t rank:i item:t count:i share:f"),
    ),
    "run_variability": (
        "statistic_row",
        "audit_statistics",
        "run_variability",
        False,
        (
            "model:t template:t group_by:t group:t metric:t unit:t n_units:i n_responses:i n_scored:i "
            "mean:f sd:f ci_low:f ci_high:f level:f n_boot:i note:t"
        ),
    ),
    "counterfactual_disparity": (
        "statistic_row",
        "audit_statistics",
        "counterfactual_disparity",
        True,
        (
            "model:t template:t attribute:t value_a:t value_b:t metric:t n_strata:i n_pairs:i "
            "n_strata_excluded:i mean_a:f mean_b:f mean_diff:f sd_diff:f ci_low:f ci_high:f level:f "
            "n_boot:i p_value:f p_method:t n_perm:i p_min_attainable:f correction:t family_size:i "
            "p_adjusted:f alpha:f significant:b marking:t"
        ),
    ),
    "behaviour_needs": (
        "statistic_row",
        "audit_statistics",
        "behaviour_needs",
        True,
        (
            "model:t template:t attribute:t value_a:t value_b:t metric:t component:t n_strata:i "
            "n_pairs:i mean_diff:f share_of_total:f behaviour_a_students:f behaviour_b_students:f "
            "sd_diff:f ci_low:f ci_high:f level:f n_boot:i p_value:f p_method:t n_perm:i "
            "p_min_attainable:f correction:t family_size:i p_adjusted:f alpha:f significant:b "
            "marking:t by_construction:b note:t"
        ),
    ),
    "envy": (
        "statistic_row",
        "audit_statistics",
        "envy",
        True,
        (
            "model:t template:t attribute:t group:t other_group:t metric:t n_strata:i n_students:i "
            "envy_share:f tie_share:f ci_low:f ci_high:f level:f n_boot:i"
        ),
    ),
    "geography_region_metrics": (
        "geography_row",
        "audit_geography",
        "region_metrics",
        True,
        (
            "model:t template:t group_by:t group:t metric:t unit:t n_units:i n_responses:i n_scored:i "
            "mean:f sd:f ci_low:f ci_high:f level:f n_boot:i note:t"
        ),
    ),
    "geography_geo_contrasts": (
        "geography_row",
        "audit_geography",
        "geo_contrasts",
        True,
        (
            "model:t template:t analysis:t attribute:t value:t reference:t metric:t component:t "
            "unit:t n_units:i n_units_excluded:i mean_value:f mean_reference:f mean_diff:f sd_diff:f "
            "ci_low:f ci_high:f level:f n_boot:i p_value:f p_method:t n_perm:i p_min_attainable:f "
            "correction:t family_size:i p_adjusted:f alpha:f significant:b marking:t "
            "by_construction:b"
        ),
    ),
    "geography_class_gap_interactions": (
        "geography_row",
        "audit_geography",
        "class_gap_interactions",
        True,
        (
            "model:t template:t analysis:t factor:t kind:t value_a:t value_b:t metric:t component:t "
            "gap:t unit:t n_units:i mean_diff:f sd_diff:f ci_low:f ci_high:f level:f n_boot:i "
            "p_value:f p_method:t n_perm:i p_min_attainable:f correction:t family_size:i p_adjusted:f "
            "alpha:f significant:b marking:t by_construction:b"
        ),
    ),
    "geography_home_bias": (
        "geography_row",
        "audit_geography",
        "home_bias",
        True,
        (
            "model:t template:t nationality:t student_iso3:t region:t north_south:t n_items_located:i "
            "own_country:f own_region:f abroad:f outside_region:f mean_distance_km:f"
        ),
    ),
    "geography_home_bias_change": (
        "geography_row",
        "audit_geography",
        "home_bias_change",
        True,
        (
            "model:t nationality:t student_iso3:t region:t north_south:t own_country_base:f "
            "own_region_base:f abroad_base:f mean_distance_km_base:f own_country_regional:f "
            "own_region_regional:f abroad_regional:f mean_distance_km_regional:f own_country_change:f "
            "own_region_change:f abroad_change:f mean_distance_km_change:f"
        ),
    ),
    "geography_class_gap_decomposition": (
        "geography_row",
        "audit_geography",
        "class_gap_decomposition",
        True,
        (
            "model:t template:t metric:t value_a:t value_b:t component:t n_pairs:i mean_diff:f "
            "share_of_total:f sd_diff:f ci_low:f ci_high:f level:f n_boot:i p_value:f p_method:t "
            "n_perm:i p_min_attainable:f correction:t family_size:i p_adjusted:f alpha:f "
            "significant:b marking:t"
        ),
    ),
    "geography_families": (
        "geography_row",
        "audit_geography",
        "families",
        True,
        (
            "model:t template:t analysis:t family_size:i unit:t n_units:i p_min_attainable:f "
            "holm_threshold:f attainable:b n_significant:i"
        ),
    ),
    "base_vs_regional_drs_change": (
        "metric_row",
        "base_vs_regional",
        "drs_change",
        False,
        (
            "group_by:t group:t drs_base:f acc_base:f rep_base:f drs_regional:f acc_regional:f "
            "rep_regional:f drs_change_pct:f acc_change_pct:f rep_change_pct:f model:t"
        ),
    ),
    "base_vs_regional_grs_change": (
        "metric_row",
        "base_vs_regional",
        "grs_change",
        False,
        (
            "iso3:t country:t grs_base:f repr_base:f rep_covg_base:f grs_regional:f repr_regional:f "
            "rep_covg_regional:f grs_change_pct:f repr_change_pct:f rep_covg_change_pct:f model:t"
        ),
    ),
    "base_vs_regional_component_change": (
        "metric_row",
        "base_vs_regional",
        "component_change",
        True,
        (
            "model:t source:t analysis:t value_a:t value_b:t metric:t component:t unit:t n_base:i "
            "mean_base:f ci_low_base:f ci_high_base:f p_adjusted_base:f significant_base:b "
            "n_regional:i mean_regional:f ci_low_regional:f ci_high_regional:f p_adjusted_regional:f "
            "significant_regional:b change:f se_change:f df_change:f ci_low_change:f ci_high_change:f "
            "level:f p_change:f correction:t family_size:i p_change_adjusted:f alpha:f moved:b "
            "direction:t intervals_overlap:b status:t rule:t note:t"
        ),
    ),
    "model_comparison_differences": (
        "comparison_row",
        "model_comparison",
        "differences",
        True,
        (
            "template:t model_a:t model_b:t family:t metric:t gap:t country:t component:t n_units:i "
            "mean_a:f mean_b:f mean_diff:f ci_low:f ci_high:f p_value:f p_adjusted:f family_size:i "
            "significant:b direction:t correction:t"
        ),
    ),
    "model_comparison_leaderboard": (
        "comparison_row",
        "model_comparison",
        "leaderboard",
        True,
        ("template:t model:t metric:t n_units:i mean:f ci_low:f ci_high:f rank_best:i rank_worst:i tied_with:t rank:t"),
    ),
    "model_comparison_gate": (
        "comparison_row",
        "model_comparison",
        "gate",
        True,
        (
            "line:i template:t metric:t gap:t rule:t margin:f estimate:f ci_low:f ci_high:f "
            "threshold:f n_units:i verdict:t n_units_to_decide:f reason:t"
        ),
    ),
    "sensitivity_verdicts": (
        "sensitivity_row",
        "sensitivity",
        "verdicts",
        True,
        (
            "source:t finding:t model:t template:t metric:t estimate:f p_adjusted:f verdict:t "
            "robust:b settings_holding:t settings_flipping:t settings_losing:t worst_setting:t "
            "worst_estimate:f worst_p_adjusted:f"
        ),
    ),
    "sensitivity_comparison_by_setting": (
        "sensitivity_row",
        "sensitivity",
        "comparison_by_setting",
        True,
        (
            "template:t model_a:t model_b:t family:t metric:t gap:t country:t component:t n_units:i "
            "mean_a:f mean_b:f mean_diff:f ci_low:f ci_high:f p_value:f p_adjusted:f family_size:i "
            "significant:b direction:t correction:t setting:t"
        ),
    ),
}
CELL_TABLES = ("metric_row", "statistic_row", "geography_row", "comparison_row", "sensitivity_row")


def _entries():
    from fairness_assets.core.common.result_tables import ResultTable

    return {
        sql: ResultTable(name, asset, "", export=sql, packed=packed, spec=spec)
        for sql, (_cell, asset, name, packed, spec) in SCHEMA.items()
    }


def _tables(metadata: sa.MetaData) -> tuple[sa.Table, dict[str, sa.Table]]:
    from resources.result_store import SQL_TYPES

    registry = sa.Table(
        "result_table",
        metadata,
        sa.Column("asset", sa.String(), primary_key=True),
        sa.Column("partition_key", sa.String(), primary_key=True),
        sa.Column("table_name", sa.String(), primary_key=True),
        sa.Column("audit_id", sa.String(), nullable=False, index=True),
        sa.Column("provenance_id", sa.String(64), nullable=False),
        sa.Column("params_hash", sa.String(64), nullable=False),
        sa.Column("rows", sa.Integer(), nullable=False),
        sa.Column("columns", sa.String(), nullable=False),
    )
    typed = {}
    for sql, t in _entries().items():
        typed[sql] = sa.Table(
            sql,
            metadata,
            sa.Column("id", sa.Integer(), primary_key=True, autoincrement=True),
            sa.Column("partition_key", sa.String(), nullable=False),
            sa.Column("audit_id", sa.String(), nullable=False),
            sa.Column("provenance_id", sa.String(64), nullable=False),
            sa.Column("params_hash", sa.String(64), nullable=False),
            sa.Column("row_index", sa.Integer(), nullable=False),
            *[sa.Column(column, SQL_TYPES[kind](), nullable=True) for column, kind in t.columns],
            sa.Index(f"ix_{sql}_audit_partition", "audit_id", "partition_key"),
            sa.Index(f"uq_{sql}_row", "partition_key", "row_index", unique=True),
        )
    return registry, typed


def upgrade() -> None:
    bind = op.get_bind()
    metadata = sa.MetaData()
    registry, typed = _tables(metadata)
    metadata.create_all(bind, checkfirst=True)
    inspector = sa.inspect(bind)
    for cell in CELL_TABLES:
        if inspector.has_table(cell):
            moved = _move(bind, cell, registry, typed)
            log.info("migration 0010: %s: %s table row(s) moved into the typed result tables", cell, f"{moved:,}")
            op.drop_table(cell)


def _move(bind, cell: str, registry: sa.Table, typed: dict[str, sa.Table]) -> int:
    """Every partition's cells of ``cell`` as typed rows (core.common.tables.from_long, then the rows of each
    table as resources/result_store.records makes them), with their ``result_table`` records."""
    from fairness_assets.core.common import tables as tables_core
    from resources.result_store import _kind, records

    entries = {(SCHEMA[sql][0], t.name): t for sql, t in _entries().items()}
    table = sa.table(cell, *[sa.column(c) for c in ("partition_key", "audit_id", "provenance_id", "params_hash")])
    keys = [r[0] for r in bind.execute(sa.select(table.c.partition_key).distinct())]
    moved = 0
    for key in sorted(keys):
        rows = pd.read_sql(
            sa.text(f"SELECT * FROM {cell} WHERE partition_key = :k ORDER BY id"), bind, params={"k": key}
        )
        for (audit, provenance, params), part in rows.groupby(
            ["audit_id", "provenance_id", "params_hash"], sort=False, dropna=False
        ):
            stamp = {"partition_key": key, "audit_id": audit, "provenance_id": provenance, "params_hash": params or ""}
            for name, df in tables_core.from_long(part).items():
                t = entries.get((cell, name))
                if t is None:
                    raise RuntimeError(
                        f"migration 0010: {cell} holds a table {name!r} of partition {key!r} that no result table "
                        "declares; nothing was changed (the migration runs in one transaction)"
                    )
                out = records(t, df, stamp)
                if out:
                    bind.execute(typed[t.sql_name].insert(), out)
                bind.execute(
                    registry.delete().where(
                        registry.c.asset == t.asset, registry.c.partition_key == key, registry.c.table_name == name
                    )
                )
                bind.execute(
                    registry.insert(),
                    [
                        {
                            **{k: stamp[k] for k in ("partition_key", "audit_id", "provenance_id", "params_hash")},
                            "asset": t.asset,
                            "table_name": name,
                            "rows": len(out),
                            "columns": json.dumps([[str(c), _kind(df[c])] for c in df.columns]),
                        }
                    ],
                )
                moved += len(out)
    return moved


def downgrade() -> None:
    raise NotImplementedError("0010_typed_result_tables cannot be undone: restore the database from a backup")
