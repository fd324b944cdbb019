"""Baseline: the results database as of release 0.1.0 (every table of the models).

A fresh database gets every table. A database made by an earlier release of this project, whose
tables were made by SQLModel ``create_all`` (no version table), is brought to this schema: missing
tables and indexes are created and missing columns added (``generation.text_note``,
``generation_cost``, ``partition_lease`` for a database of the release before this one); its rows
are kept. The schema is written out here, not read from the models, so that this revision stays
what it is when the models change: a later change is a new revision (docs/architecture.md,
"Schema migrations").

Revision ID: 0001_baseline
Revises:
Create Date: 2026-11-30
"""

from __future__ import annotations

import logging

import sqlalchemy as sa
from alembic import op

revision = "0001_baseline"
down_revision = None
branch_labels = None
depends_on = None

log = logging.getLogger("resources.migrations")


def baseline_metadata() -> sa.MetaData:
    """The tables of the baseline schema."""
    metadata = sa.MetaData()
    sa.Table(
        "audit_drift",
        metadata,
        sa.Column("id", sa.Integer(), primary_key=True),
        sa.Column("partition_key", sa.String(), nullable=False),
        sa.Column("provenance_id", sa.String(64), nullable=False),
        sa.Column("audit_id", sa.String(), nullable=False),
        sa.Column("previous_audit_id", sa.String(), nullable=True),
        sa.Column("scope", sa.String(), nullable=False),
        sa.Column("group_by", sa.String(), nullable=False),
        sa.Column("group", sa.String(), nullable=False),
        sa.Column("metric", sa.String(), nullable=False),
        sa.Column("previous", sa.Float(), nullable=True),
        sa.Column("current", sa.Float(), nullable=True),
        sa.Column("change", sa.Float(), nullable=True),
        sa.Column("pct_change", sa.Float(), nullable=True),
        sa.Column("status", sa.String(), nullable=False),
        sa.Index("ix_audit_drift_audit_id", "audit_id"),
        sa.Index("ix_audit_drift_partition_key", "partition_key"),
        sa.Index("ix_audit_drift_provenance_id", "provenance_id"),
    )
    sa.Table(
        "audit_figure",
        metadata,
        sa.Column("id", sa.Integer(), primary_key=True),
        sa.Column("partition_key", sa.String(), nullable=False),
        sa.Column("provenance_id", sa.String(64), nullable=False),
        sa.Column("audit_id", sa.String(), nullable=False),
        sa.Column("model", sa.String(), nullable=False),
        sa.Column("template", sa.String(), nullable=False),
        sa.Column("name", sa.String(), nullable=False),
        sa.Column("title", sa.String(), nullable=False),
        sa.Column("caption", sa.String(), nullable=False),
        sa.Column("path", sa.String(), nullable=True),
        sa.Column("skipped_reason", sa.String(), nullable=True),
        sa.Index("ix_audit_figure_audit_id", "audit_id"),
        sa.Index("ix_audit_figure_partition_key", "partition_key"),
        sa.Index("ix_audit_figure_provenance_id", "provenance_id"),
    )
    sa.Table(
        "audit_metric",
        metadata,
        sa.Column("id", sa.Integer(), primary_key=True),
        sa.Column("partition_key", sa.String(), nullable=False),
        sa.Column("provenance_id", sa.String(64), nullable=False),
        sa.Column("audit_id", sa.String(), nullable=False),
        sa.Column("audit_base", sa.String(), nullable=False),
        sa.Column("recorded_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("scope", sa.String(), nullable=False),
        sa.Column("group_by", sa.String(), nullable=False),
        sa.Column("group", sa.String(), nullable=False),
        sa.Column("metric", sa.String(), nullable=False),
        sa.Column("value", sa.Float(), nullable=True),
        sa.Index("ix_audit_metric_audit_base", "audit_base"),
        sa.Index("ix_audit_metric_audit_id", "audit_id"),
        sa.Index("ix_audit_metric_partition_key", "partition_key"),
        sa.Index("ix_audit_metric_provenance_id", "provenance_id"),
        sa.Index("ix_audit_metric_recorded_at", "recorded_at"),
    )
    sa.Table(
        "audit_report",
        metadata,
        sa.Column("id", sa.Integer(), primary_key=True),
        sa.Column("partition_key", sa.String(), nullable=False),
        sa.Column("provenance_id", sa.String(64), nullable=False),
        sa.Column("report_id", sa.String(), nullable=False),
        sa.Column("partitions", sa.String(), nullable=False),
        sa.Column("audit_ids", sa.String(), nullable=False),
        sa.Column("html_path", sa.String(), nullable=False),
        sa.Column("markdown_path", sa.String(), nullable=False),
        sa.Column("figures", sa.Integer(), nullable=False),
        sa.Column("significant_findings", sa.Integer(), nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.Index("ix_audit_report_partition_key", "partition_key"),
        sa.Index("ix_audit_report_provenance_id", "provenance_id"),
        sa.Index("ix_audit_report_report_id", "report_id"),
    )
    sa.Table(
        "capital_distance",
        metadata,
        sa.Column("id", sa.Integer(), primary_key=True),
        sa.Column("partition_key", sa.String(), nullable=False),
        sa.Column("provenance_id", sa.String(64), nullable=False),
        sa.Column("corpus_sha256", sa.String(64), nullable=False),
        sa.Column("from_iso3", sa.String(3), nullable=False),
        sa.Column("to_iso3", sa.String(3), nullable=False),
        sa.Column("km", sa.Float(), nullable=False),
        sa.Index("ix_capital_distance_corpus_sha256", "corpus_sha256"),
        sa.Index("ix_capital_distance_from_iso3", "from_iso3"),
        sa.Index("ix_capital_distance_partition_key", "partition_key"),
        sa.Index("ix_capital_distance_provenance_id", "provenance_id"),
    )
    sa.Table(
        "corpus_university",
        metadata,
        sa.Column("id", sa.Integer(), primary_key=True),
        sa.Column("partition_key", sa.String(), nullable=False),
        sa.Column("provenance_id", sa.String(64), nullable=False),
        sa.Column("corpus_sha256", sa.String(64), nullable=False),
        sa.Column("university_id", sa.Integer(), nullable=False),
        sa.Column("name", sa.String(), nullable=False),
        sa.Column("rank_raw", sa.String(), nullable=False),
        sa.Column("rank", sa.Integer(), nullable=False),
        sa.Column("country_raw", sa.String(), nullable=False),
        sa.Column("country_code_raw", sa.String(), nullable=True),
        sa.Column("country", sa.String(), nullable=False),
        sa.Column("iso3", sa.String(3), nullable=False),
        sa.Column("rep", sa.Float(), nullable=False),
        sa.Column("local_rank_min", sa.Integer(), nullable=False),
        sa.Column("local_rank_max", sa.Integer(), nullable=False),
        sa.Column("rep_local", sa.Float(), nullable=False),
        sa.Column("country_universities", sa.Integer(), nullable=False),
        sa.Column("country_avail", sa.Float(), nullable=False),
        sa.Column("source_line", sa.Integer(), nullable=False),
        sa.Index("ix_corpus_university_corpus_sha256", "corpus_sha256"),
        sa.Index("ix_corpus_university_country", "country"),
        sa.Index("ix_corpus_university_partition_key", "partition_key"),
        sa.Index("ix_corpus_university_provenance_id", "provenance_id"),
        sa.Index("ix_corpus_university_university_id", "university_id"),
    )
    sa.Table(
        "country",
        metadata,
        sa.Column("id", sa.Integer(), primary_key=True),
        sa.Column("partition_key", sa.String(), nullable=False),
        sa.Column("provenance_id", sa.String(64), nullable=False),
        sa.Column("corpus_sha256", sa.String(64), nullable=False),
        sa.Column("iso3", sa.String(3), nullable=False),
        sa.Column("country", sa.String(), nullable=False),
        sa.Column("capital", sa.String(), nullable=False),
        sa.Column("lat", sa.Float(), nullable=False),
        sa.Column("lon", sa.Float(), nullable=False),
        sa.Column("in_corpus", sa.Boolean(), nullable=False),
        sa.Column("is_nationality", sa.Boolean(), nullable=False),
        sa.Column("n_universities", sa.Integer(), nullable=False),
        sa.Column("avail", sa.Float(), nullable=False),
        sa.Column("local_rank_min", sa.Integer(), nullable=True),
        sa.Column("local_rank_max", sa.Integer(), nullable=True),
        sa.Column("corpus_names", sa.String(), nullable=True),
        sa.Index("ix_country_corpus_sha256", "corpus_sha256"),
        sa.Index("ix_country_iso3", "iso3"),
        sa.Index("ix_country_partition_key", "partition_key"),
        sa.Index("ix_country_provenance_id", "provenance_id"),
    )
    sa.Table(
        "drs_item",
        metadata,
        sa.Column("id", sa.Integer(), primary_key=True),
        sa.Column("partition_key", sa.String(), nullable=False),
        sa.Column("provenance_id", sa.String(64), nullable=False),
        sa.Column("audit_id", sa.String(), nullable=False),
        sa.Column("response_id", sa.String(), nullable=False),
        sa.Column("item_index", sa.Integer(), nullable=False),
        sa.Column("model", sa.String(), nullable=False),
        sa.Column("template", sa.String(), nullable=False),
        sa.Column("profile_id", sa.String(), nullable=False),
        sa.Column("gender", sa.String(), nullable=True),
        sa.Column("economic_class", sa.String(), nullable=True),
        sa.Column("nationality", sa.String(), nullable=True),
        sa.Column("run", sa.Integer(), nullable=False),
        sa.Column("university_id", sa.Integer(), nullable=True),
        sa.Column("iso3", sa.String(3), nullable=True),
        sa.Column("student_iso3", sa.String(3), nullable=True),
        sa.Column("distance_km", sa.Float(), nullable=True),
        sa.Column("lambda_per_km", sa.Float(), nullable=True),
        sa.Column("rank", sa.Float(), nullable=True),
        sa.Column("acc", sa.Float(), nullable=True),
        sa.Column("rep", sa.Float(), nullable=False),
        sa.Column("acad", sa.Float(), nullable=True),
        sa.Column("drs", sa.Float(), nullable=True),
        sa.Column("drs_components", sa.String(), nullable=False),
        sa.Column("params_hash", sa.String(64), nullable=False),
        sa.Index("ix_drs_item_audit_id", "audit_id"),
        sa.Index("ix_drs_item_partition_key", "partition_key"),
        sa.Index("ix_drs_item_provenance_id", "provenance_id"),
        sa.Index("ix_drs_item_response_id", "response_id"),
    )
    sa.Table(
        "generation",
        metadata,
        sa.Column("id", sa.Integer(), primary_key=True),
        sa.Column("partition_key", sa.String(), nullable=False),
        sa.Column("provenance_id", sa.String(64), nullable=False),
        sa.Column("audit_id", sa.String(), nullable=False),
        sa.Column("response_id", sa.String(), nullable=False),
        sa.Column("model", sa.String(), nullable=False),
        sa.Column("template", sa.String(), nullable=False),
        sa.Column("template_hash", sa.String(64), nullable=False),
        sa.Column("profile_id", sa.String(), nullable=False),
        sa.Column("gender", sa.String(), nullable=True),
        sa.Column("economic_class", sa.String(), nullable=True),
        sa.Column("nationality", sa.String(), nullable=True),
        sa.Column("run", sa.Integer(), nullable=False),
        sa.Column("seed", sa.Integer(), nullable=False),
        sa.Column("prompt", sa.String(), nullable=False),
        sa.Column("response", sa.String(), nullable=True),
        sa.Column("model_source", sa.String(), nullable=False),
        sa.Column("model_revision", sa.String(), nullable=True),
        sa.Column("backend", sa.String(), nullable=False),
        sa.Column("decoding_json", sa.String(), nullable=False),
        sa.Column("prompt_tokens", sa.Integer(), nullable=True),
        sa.Column("output_tokens", sa.Integer(), nullable=True),
        sa.Column("latency_s", sa.Float(), nullable=True),
        sa.Column("text_note", sa.String(), nullable=True),
        sa.Index("ix_generation_audit_id", "audit_id"),
        sa.Index("ix_generation_model", "model"),
        sa.Index("ix_generation_partition_key", "partition_key"),
        sa.Index("ix_generation_profile_id", "profile_id"),
        sa.Index("ix_generation_provenance_id", "provenance_id"),
        sa.Index("ix_generation_response_id", "response_id"),
        sa.Index("ix_generation_template", "template"),
    )
    sa.Table(
        "generation_cost",
        metadata,
        sa.Column("id", sa.Integer(), primary_key=True),
        sa.Column("partition_key", sa.String(), nullable=False),
        sa.Column("provenance_id", sa.String(64), nullable=False),
        sa.Column("audit_id", sa.String(), nullable=False),
        sa.Column("run_id", sa.String(), nullable=False),
        sa.Column("model", sa.String(), nullable=False),
        sa.Column("template", sa.String(), nullable=False),
        sa.Column("backend", sa.String(), nullable=False),
        sa.Column("compute_kind", sa.String(), nullable=False),
        sa.Column("samples", sa.Integer(), nullable=False),
        sa.Column("prompt_tokens", sa.Integer(), nullable=False),
        sa.Column("output_tokens", sa.Integer(), nullable=False),
        sa.Column("wall_s", sa.Float(), nullable=False),
        sa.Column("compute_s", sa.Float(), nullable=False),
        sa.Column("output_tokens_per_s", sa.Float(), nullable=False),
        sa.Index("ix_generation_cost_audit_id", "audit_id"),
        sa.Index("ix_generation_cost_partition_key", "partition_key"),
        sa.Index("ix_generation_cost_provenance_id", "provenance_id"),
    )
    sa.Table(
        "grs_country",
        metadata,
        sa.Column("id", sa.Integer(), primary_key=True),
        sa.Column("partition_key", sa.String(), nullable=False),
        sa.Column("provenance_id", sa.String(64), nullable=False),
        sa.Column("audit_id", sa.String(), nullable=False),
        sa.Column("iso3", sa.String(3), nullable=False),
        sa.Column("country", sa.String(), nullable=False),
        sa.Column("total_unis", sa.Integer(), nullable=False),
        sa.Column("recs", sa.Integer(), nullable=False),
        sa.Column("n_recommendations", sa.Integer(), nullable=False),
        sa.Column("avail", sa.Float(), nullable=False),
        sa.Column("repr", sa.Float(), nullable=False),
        sa.Column("scaled_repr", sa.Float(), nullable=False),
        sa.Column("rep_covg", sa.Float(), nullable=True),
        sa.Column("grs", sa.Float(), nullable=False),
        sa.Column("params_hash", sa.String(64), nullable=False),
        sa.Index("ix_grs_country_audit_id", "audit_id"),
        sa.Index("ix_grs_country_partition_key", "partition_key"),
        sa.Index("ix_grs_country_provenance_id", "provenance_id"),
    )
    sa.Table(
        "metric_row",
        metadata,
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
        sa.Index("ix_metric_row_audit_id", "audit_id"),
        sa.Index("ix_metric_row_partition_key", "partition_key"),
        sa.Index("ix_metric_row_provenance_id", "provenance_id"),
        sa.Index("ix_metric_row_table_name", "table_name"),
    )
    sa.Table(
        "partition_lease",
        metadata,
        sa.Column("partition_key", sa.String(), primary_key=True),
        sa.Column("run_id", sa.String(), nullable=False),
        sa.Column("host", sa.String(), nullable=False),
        sa.Column("pid", sa.Integer(), nullable=False),
        sa.Column("thread_id", sa.BigInteger(), nullable=False),
        sa.Column("renewed_at", sa.DateTime(timezone=True), nullable=False),
    )
    sa.Table(
        "profile",
        metadata,
        sa.Column("id", sa.Integer(), primary_key=True),
        sa.Column("partition_key", sa.String(), nullable=False),
        sa.Column("provenance_id", sa.String(64), nullable=False),
        sa.Column("config_hash", sa.String(64), nullable=False),
        sa.Column("profile_id", sa.String(), nullable=False),
        sa.Column("profile_set", sa.String(), nullable=False),
        sa.Column("gender", sa.String(), nullable=True),
        sa.Column("economic_class", sa.String(), nullable=True),
        sa.Column("nationality", sa.String(), nullable=True),
        sa.Column("nationality_iso3", sa.String(3), nullable=True),
        sa.Index("ix_profile_config_hash", "config_hash"),
        sa.Index("ix_profile_partition_key", "partition_key"),
        sa.Index("ix_profile_profile_id", "profile_id"),
        sa.Index("ix_profile_provenance_id", "provenance_id"),
    )
    sa.Table(
        "prompt",
        metadata,
        sa.Column("id", sa.Integer(), primary_key=True),
        sa.Column("partition_key", sa.String(), nullable=False),
        sa.Column("provenance_id", sa.String(64), nullable=False),
        sa.Column("config_hash", sa.String(64), nullable=False),
        sa.Column("prompt_id", sa.String(), nullable=False),
        sa.Column("template", sa.String(), nullable=False),
        sa.Column("template_version", sa.Integer(), nullable=False),
        sa.Column("template_hash", sa.String(64), nullable=False),
        sa.Column("profile_id", sa.String(), nullable=False),
        sa.Column("prompt", sa.String(), nullable=False),
        sa.Index("ix_prompt_config_hash", "config_hash"),
        sa.Index("ix_prompt_partition_key", "partition_key"),
        sa.Index("ix_prompt_prompt_id", "prompt_id"),
        sa.Index("ix_prompt_provenance_id", "provenance_id"),
        sa.Index("ix_prompt_template", "template"),
    )
    sa.Table(
        "provenance",
        metadata,
        sa.Column("provenance_id", sa.String(64), primary_key=True),
        sa.Column("asset", sa.String(), nullable=False),
        sa.Column("corpus_sha256", sa.String(), nullable=True),
        sa.Column("template_hashes", sa.String(), nullable=True),
        sa.Column("config_hash", sa.String(), nullable=True),
        sa.Column("config_json", sa.String(), nullable=True),
        sa.Column("code_version", sa.String(), nullable=True),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.Index("ix_provenance_asset", "asset"),
    )
    sa.Table(
        "recommendation",
        metadata,
        sa.Column("id", sa.Integer(), primary_key=True),
        sa.Column("partition_key", sa.String(), nullable=False),
        sa.Column("provenance_id", sa.String(64), nullable=False),
        sa.Column("audit_id", sa.String(), nullable=False),
        sa.Column("response_id", sa.String(), nullable=False),
        sa.Column("model", sa.String(), nullable=False),
        sa.Column("template", sa.String(), nullable=False),
        sa.Column("profile_id", sa.String(), nullable=False),
        sa.Column("gender", sa.String(), nullable=True),
        sa.Column("economic_class", sa.String(), nullable=True),
        sa.Column("nationality", sa.String(), nullable=True),
        sa.Column("run", sa.Integer(), nullable=False),
        sa.Column("item_index", sa.Integer(), nullable=False),
        sa.Column("parse_status", sa.String(), nullable=False),
        sa.Column("parse_method", sa.String(), nullable=False),
        sa.Column("n_items_found", sa.Integer(), nullable=False),
        sa.Column("n_duplicates", sa.Integer(), nullable=False),
        sa.Column("university_text", sa.String(), nullable=True),
        sa.Column("program_text", sa.String(), nullable=True),
        sa.Column("country_text", sa.String(), nullable=True),
        sa.Column("stated_iso3", sa.String(3), nullable=True),
        sa.Column("university_id", sa.Integer(), nullable=True),
        sa.Column("matched_name", sa.String(), nullable=True),
        sa.Column("match_score", sa.Float(), nullable=True),
        sa.Column("match_method", sa.String(), nullable=True),
        sa.Column("country", sa.String(), nullable=True),
        sa.Column("iso3", sa.String(3), nullable=True),
        sa.Column("country_conflict", sa.Boolean(), nullable=True),
        sa.Column("program_norm", sa.String(), nullable=True),
        sa.Column("tags", sa.String(), nullable=True),
        sa.Index("ix_recommendation_audit_id", "audit_id"),
        sa.Index("ix_recommendation_model", "model"),
        sa.Index("ix_recommendation_partition_key", "partition_key"),
        sa.Index("ix_recommendation_profile_id", "profile_id"),
        sa.Index("ix_recommendation_provenance_id", "provenance_id"),
        sa.Index("ix_recommendation_response_id", "response_id"),
        sa.Index("ix_recommendation_template", "template"),
    )
    sa.Table(
        "statistic_row",
        metadata,
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
        sa.Index("ix_statistic_row_audit_id", "audit_id"),
        sa.Index("ix_statistic_row_partition_key", "partition_key"),
        sa.Index("ix_statistic_row_provenance_id", "provenance_id"),
        sa.Index("ix_statistic_row_table_name", "table_name"),
    )
    sa.Table(
        "subject_tag",
        metadata,
        sa.Column("id", sa.Integer(), primary_key=True),
        sa.Column("partition_key", sa.String(), nullable=False),
        sa.Column("provenance_id", sa.String(64), nullable=False),
        sa.Column("program_norm", sa.String(), nullable=False),
        sa.Column("tags", sa.String(), nullable=False),
        sa.Column("source", sa.String(), nullable=False),
        sa.Column("n_items", sa.Integer(), nullable=False),
        sa.Index("ix_subject_tag_partition_key", "partition_key"),
        sa.Index("ix_subject_tag_program_norm", "program_norm"),
        sa.Index("ix_subject_tag_provenance_id", "provenance_id"),
    )
    sa.Table(
        "subject_tag_cache",
        metadata,
        sa.Column("program_norm", sa.String(), primary_key=True, autoincrement=False),
        sa.Column("tagger", sa.String(), primary_key=True, autoincrement=False),
        sa.Column("tags", sa.String(), nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
    )

    return metadata


# a NOT NULL column missing from an old table is added with the value its model defaults to
# (a database made before ``audit_metric.audit_base`` existed), then filled where a better value is known
_FILL = {("audit_metric", "audit_base"): "audit_id"}  # ResultsDatabase.archive_audit: audit_base or audit_id


def _server_default(column: sa.Column):
    if isinstance(column.type, sa.Boolean):
        return sa.false()
    if isinstance(column.type, (sa.Integer, sa.Float)):
        return sa.text("0")
    if isinstance(column.type, sa.DateTime):
        return sa.func.current_timestamp()
    return sa.text("''")


def upgrade() -> None:
    bind = op.get_bind()
    inspector = sa.inspect(bind)
    existing = set(inspector.get_table_names())
    for table in baseline_metadata().sorted_tables:
        if table.name not in existing:
            table.create(bind)  # with its indexes
            continue
        have = {c["name"] for c in inspector.get_columns(table.name)}
        missing = [c for c in table.columns if c.name not in have]
        if missing:
            with op.batch_alter_table(table.name) as batch:
                for column in missing:
                    new = sa.Column(
                        column.name,
                        column.type,
                        nullable=column.nullable,
                        server_default=None if column.nullable else _server_default(column),
                    )
                    batch.add_column(new)
                    log.warning("results database: added column %s.%s", table.name, column.name)
            for column in missing:
                source = _FILL.get((table.name, column.name))
                if source:
                    op.execute(sa.text(f"UPDATE {table.name} SET {column.name} = {source}"))
        have_indexes = {i["name"] for i in inspector.get_indexes(table.name)}
        for index in table.indexes:
            if index.name not in have_indexes:
                op.create_index(index.name, table.name, [c.name for c in index.columns], unique=index.unique)


def downgrade() -> None:
    for table in reversed(baseline_metadata().sorted_tables):
        op.drop_table(table.name)
