"""Schema migrations of the results database (resources/migrations), on SQLite and PostgreSQL:
a fresh database is created at the newest revision, a database made by the previous release
(commit d984dff, tables by ``create_all``, no version table) is upgraded with its rows kept, and a
second upgrade changes nothing."""

import json
import logging
from datetime import datetime, timezone

import pandas as pd
import pytest
import sqlalchemy as sa
from alembic.autogenerate import compare_metadata
from alembic.runtime.migration import MigrationContext
from sqlmodel import SQLModel

import resources.partition_lease  # noqa: F401 - partition_lease in SQLModel.metadata
from resources import database as D
from resources import migrations as M
from resources.database.connect import _with_driver


@pytest.fixture(params=["sqlite", pytest.param("postgres", marks=pytest.mark.postgres)])
def url(request, tmp_path):
    if request.param == "sqlite":
        return f"sqlite:///{tmp_path / 'r.db'}"
    return request.getfixturevalue("postgres_url")


def _old_schema() -> sa.MetaData:
    """The tables as the release at commit d984dff made them (``create_all`` of its models): no
    ``generation.text_note``, no ``generation_cost``, no ``partition_lease``."""
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
        sa.Index("ix_generation_audit_id", "audit_id"),
        sa.Index("ix_generation_model", "model"),
        sa.Index("ix_generation_partition_key", "partition_key"),
        sa.Index("ix_generation_profile_id", "profile_id"),
        sa.Index("ix_generation_provenance_id", "provenance_id"),
        sa.Index("ix_generation_response_id", "response_id"),
        sa.Index("ix_generation_template", "template"),
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


NOW = datetime(2026, 11, 29, 18, 0, tzinfo=timezone.utc)


def _earlier_release_database(url: str, drop_columns: dict[str, str] | None = None) -> None:
    """A database as the previous release left it, with rows in it."""
    metadata = _old_schema()
    for table, column in (drop_columns or {}).items():  # an even older table
        t = metadata.tables[table]
        t._columns.remove(t.c[column])
        for index in [i for i in t.indexes if column in i.columns]:
            t.indexes.discard(index)
    engine = sa.create_engine(_with_driver(url))
    metadata.create_all(engine)
    t = metadata.tables
    with engine.begin() as conn:
        conn.execute(t["provenance"].insert(), [{"provenance_id": "p1", "asset": "generations", "created_at": NOW}])
        conn.execute(
            t["generation"].insert(),
            [
                {
                    "partition_key": "m|base",
                    "provenance_id": "p1",
                    "audit_id": "a1",
                    "response_id": f"r{i}",
                    "model": "m",
                    "template": "base",
                    "template_hash": "h",
                    "profile_id": f"pr{i}",
                    "run": 1,
                    "seed": i,
                    "prompt": "Recommend universities.",
                    "response": f"answer {i}",
                    "model_source": "hf",
                    "backend": "hf",
                    "decoding_json": "{}",
                    "prompt_tokens": 10,
                    "output_tokens": 20 + i,
                    "latency_s": 0.5,
                }
                for i in range(3)
            ],
        )
        metric = {
            "partition_key": "m|base",
            "provenance_id": "p1",
            "audit_id": "a1",
            "recorded_at": NOW,
            "scope": "all",
            "group_by": "",
            "group": "",
            "metric": "mean_drs",
            "value": 0.25,
        }
        if "audit_base" in t["audit_metric"].c:
            metric["audit_base"] = "a1-base"
        conn.execute(t["audit_metric"].insert(), [metric])
    engine.dispose()


def _schema(engine: sa.Engine) -> dict:
    inspector = sa.inspect(engine)
    return {
        name: (
            {c["name"]: (str(c["type"]), c["nullable"]) for c in inspector.get_columns(name)},
            sorted((i["name"], tuple(i["column_names"])) for i in inspector.get_indexes(name)),
        )
        for name in sorted(inspector.get_table_names())
    }


def _differences(engine: sa.Engine) -> list:
    """What autogenerate finds between the database and the models (empty: they agree)."""
    with engine.connect() as conn:
        ctx = MigrationContext.configure(conn, opts={"compare_type": True, "version_table": M.VERSION_TABLE})
        return [
            d
            for d in compare_metadata(ctx, SQLModel.metadata)
            if not (d[0] == "remove_table" and d[1].name == M.VERSION_TABLE)
        ]


def _revision(engine: sa.Engine):
    with engine.connect() as conn:
        return M.current(conn)


def test_fresh_database_is_created_at_head_and_matches_the_models(url):
    db = D.ResultsDatabase(url=url)
    try:
        engine = db.engine()
        assert _revision(engine) == M.head() == "0014_names"
        assert set(SQLModel.metadata.tables) <= set(sa.inspect(engine).get_table_names())
        assert _differences(engine) == []  # a model changed without a revision fails here
    finally:
        db.dispose()


def test_earlier_release_database_is_upgraded_with_rows_kept(url, caplog):
    _earlier_release_database(url)
    db = D.ResultsDatabase(url=url)
    try:
        with caplog.at_level(logging.WARNING, logger="resources"):
            engine = db.engine()
        assert "made by an earlier release" in caplog.text and "added column generation.text_note" in caplog.text
        assert _revision(engine) == M.head()
        tables = set(sa.inspect(engine).get_table_names())
        assert {"generation_cost", "partition_lease", M.VERSION_TABLE} <= tables
        assert _differences(engine) == []
        gen = db.read_rows(D.Generation)
        assert list(gen["response"]) == ["answer 0", "answer 1", "answer 2"]
        assert list(gen["output_tokens"]) == [20, 21, 22] and gen["text_note"].isna().all()
        metric = db.read_rows(D.AuditMetric)
        assert list(metric["audit_base"]) == ["a1-base"] and list(metric["value"]) == [0.25]
        assert db.count(D.Provenance) == 1
        # the new column and table take rows
        frame = gen.drop(columns=["id"]).assign(text_note="response: 1 NUL character removed")
        assert db.replace_rows(D.Generation, frame, ["m|base"]) == 3
        assert set(db.read_rows(D.Generation)["text_note"]) == {"response: 1 NUL character removed"}
        cost = pd.DataFrame(
            [
                {
                    "partition_key": "m|base",
                    "provenance_id": "p1",
                    "audit_id": "a1",
                    "run_id": "run",
                    "model": "m",
                    "template": "base",
                    "backend": "hf",
                    "compute_kind": "cpu",
                    "samples": 3,
                    "prompt_tokens": 30,
                    "output_tokens": 63,
                    "wall_s": 1.5,
                    "compute_s": 1.5,
                    "output_tokens_per_s": 42.0,
                }
            ]
        )
        assert db.append_rows(D.GenerationCost, cost) == 1
    finally:
        db.dispose()


def test_database_older_than_audit_base_gets_it_filled(url):
    """A NOT NULL column missing from an old table is added; ``audit_base`` takes the audit id,
    which is what ResultsDatabase.archive_audit stores when no base is given."""
    _earlier_release_database(url, drop_columns={"audit_metric": "audit_base"})
    db = D.ResultsDatabase(url=url)
    try:
        metric = db.read_rows(D.AuditMetric)
        assert list(metric["audit_base"]) == ["a1"] and list(metric["metric"]) == ["mean_drs"]
        assert _differences(db.engine()) == []
    finally:
        db.dispose()


def test_second_upgrade_is_a_no_op(url, caplog):
    _earlier_release_database(url)
    db = D.ResultsDatabase(url=url)
    try:
        engine = db.engine()
        before, rows = _schema(engine), db.read_rows(D.Generation)
        caplog.clear()
        with caplog.at_level(logging.INFO):
            M.upgrade(engine)  # the fast path: at head, nothing locked
            M._upgrade_locked(engine, "head")  # and Alembic itself, under the lock
        assert "Running upgrade" not in caplog.text and "earlier release" not in caplog.text
        assert _schema(engine) == before and _revision(engine) == M.head()
        pd.testing.assert_frame_equal(db.read_rows(D.Generation), rows)
    finally:
        db.dispose()
    again = D.ResultsDatabase(url=url)  # a new process opening it: no change either
    try:
        assert _schema(again.engine()) == before
    finally:
        again.dispose()


def test_revision_ids_fit_the_version_table():
    """Alembic's version table holds VARCHAR(32): a longer revision id fails the upgrade on PostgreSQL
    (SQLite does not enforce the length)."""
    from alembic.script import ScriptDirectory

    ids = [rev.revision for rev in ScriptDirectory.from_config(M._config()).walk_revisions()]
    assert ids and all(len(r) <= 32 for r in ids), [r for r in ids if len(r) > 32]


def test_match_rule_is_filled_for_rows_stored_before_it(url):
    """Migration 0007 (issue 21): a recommendation row stored before it gets ``match_rule`` from its
    ``match_method`` (partial -> completion, historical -> alias, ...), no runner-up (unknown)."""
    _earlier_release_database(url)
    t = _old_schema().tables["recommendation"]
    engine = sa.create_engine(_with_driver(url))
    base = {
        "partition_key": "m|base",
        "provenance_id": "p1",
        "audit_id": "a1",
        "model": "m",
        "template": "base",
        "profile_id": "pr0",
        "run": 1,
        "parse_status": "ok",
        "parse_method": "json",
        "n_items_found": 3,
        "n_duplicates": 0,
    }
    required = {c.name for c in t.columns if not c.nullable and not c.primary_key}
    with engine.begin() as conn:
        conn.execute(
            t.insert(),
            [
                {
                    **{k: v for k, v in base.items() if k in t.c},
                    "response_id": f"r{i}",
                    "item_index": 0,
                    "match_method": method,
                    **{c: 0 for c in required - set(base) - {"response_id", "item_index"}},
                }
                for i, method in enumerate(["partial", "historical", "exact", None])
            ],
        )
    engine.dispose()
    db = D.ResultsDatabase(url=url)
    try:
        recs = db.read_rows(D.Recommendation).sort_values("response_id")
        assert list(recs["match_rule"].where(recs["match_rule"].notna(), None)) == [
            "completion",
            "alias",
            "exact",
            None,
        ]
        assert recs["match_runner_up"].isna().all() and recs["match_candidates"].isna().all()
    finally:
        db.dispose()


# migration 0012 (issue 34): the three axis columns of the study, frozen as they were before it
AXES_0011 = ("gender", "economic_class", "nationality")
STUDENTS = [("female", None, "Côte d'Ivoire"), (None, None, None), ("male", "low", 'a "quoted" \\ name')]
AXIS_TABLES = ("profile", "generation", "recommendation", "drs_item", "drs_responses")


def _filler(column: sa.Column, i: int):
    if isinstance(column.type, sa.Boolean):
        return False
    if isinstance(column.type, (sa.Integer, sa.Float)):
        return i
    if isinstance(column.type, sa.DateTime):
        return NOW
    return f"{column.name[:2]}{i}"


def _database_at_0011_with_students(url: str) -> None:
    """A database at revision 0011 whose student tables and ``drs_responses`` hold the rows of
    :data:`STUDENTS` in their three axis columns (and ``drs_responses`` its ``result_table`` record)."""
    engine = sa.create_engine(_with_driver(url))
    M.upgrade(engine, "0011_natural_keys")
    metadata = sa.MetaData()
    with engine.begin() as conn:
        for name in AXIS_TABLES:
            table = sa.Table(name, metadata, autoload_with=conn)
            rows = []
            for i, student in enumerate(STUDENTS):
                row = {c.name: _filler(c, i) for c in table.columns if c.name != "id"}
                row |= dict(zip(AXES_0011, student, strict=True))
                row |= {"partition_key": "" if name == "profile" else "m|base", "row_index": i, "audit_id": "a1"}
                rows.append({k: v for k, v in row.items() if k in table.c})
            conn.execute(table.insert(), rows)
        registry = sa.Table("result_table", metadata, autoload_with=conn)
        kinds = [["response_id", "text"], ["profile_id", "text"], *[[a, "text"] for a in AXES_0011], ["run", "int"]]
        conn.execute(
            registry.insert(),
            [
                {
                    "asset": "analysis_tables",
                    "partition_key": "m|base",
                    "table_name": "drs_responses",
                    "audit_id": "a1",
                    "provenance_id": "p",
                    "params_hash": "",
                    "rows": 3,
                    "columns": json.dumps(kinds),
                }
            ],
        )
    engine.dispose()


def _stored(engine: sa.Engine, table: str, columns: str) -> list[tuple]:
    with engine.connect() as conn:
        return [tuple(r) for r in conn.execute(sa.text(f"SELECT {columns} FROM {table} ORDER BY id"))]


def test_the_axis_columns_move_into_attributes_and_back(url):
    """Migration 0012: each row's three axis columns become its ``attributes`` JSON text, as a write
    stores it now (json.dumps, compact, non-ASCII as it is, null for NULL), where they were (SQLite);
    the rows read back as they were stored; the downgrade puts the three columns back."""
    from alembic import command

    _database_at_0011_with_students(url)
    db = D.ResultsDatabase(url=url)
    try:
        engine = db.engine()  # upgrades to head
        assert _revision(engine) == M.head() and _differences(engine) == []
        expected = [
            (json.dumps(dict(zip(AXES_0011, s, strict=True)), ensure_ascii=False, separators=(",", ":")),)
            for s in STUDENTS
        ]
        for table in AXIS_TABLES:
            columns = [c["name"] for c in sa.inspect(engine).get_columns(table)]
            assert not set(AXES_0011) & set(columns), table
            assert _stored(engine, table, "attributes") == expected, table
            if engine.dialect.name == "sqlite":  # the copied table has it where the three were
                before = "profile_set" if table == "profile" else "profile_id"
                assert columns[columns.index(before) + 1] == "attributes", table
        profiles = db.read_rows(D.Profile)
        assert list(profiles.columns[5:9]) == ["profile_set", *AXES_0011]
        assert [tuple(r) for r in profiles[list(AXES_0011)].itertuples(index=False)] == STUDENTS
        responses = db.partition_tables(D.MetricRow, "m|base")["drs_responses"]
        assert list(responses.columns) == ["response_id", "profile_id", *AXES_0011, "run"]
        assert [tuple(r) for r in responses[list(AXES_0011)].itertuples(index=False)] == STUDENTS
        with engine.connect() as conn:
            command.downgrade(M._config(conn), "0011_natural_keys")
            conn.commit()
        for table in AXIS_TABLES:
            assert "attributes" not in {c["name"] for c in sa.inspect(engine).get_columns(table)}, table
            assert _stored(engine, table, ", ".join(AXES_0011)) == STUDENTS, table
        M.upgrade(engine)  # and up again: the same text
        assert all(_stored(engine, t, "attributes") == expected for t in AXIS_TABLES)
    finally:
        db.dispose()
