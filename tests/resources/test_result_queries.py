"""Every finding is a typed SQL table (issue 32.2): the queries of docs/operations.md ("Querying the
results") run as written on SQLite and PostgreSQL, against an audit this release stored and against a
database migrated (0010_typed_result_tables) from the cells the previous release stored, and give what
the stored tables say.

The audit: two models on the demo grid (model-b sends students to the University of Lagos instead of
MIT), model-b audited twice (two re-audit rounds), with every cross-partition asset.
"""

from __future__ import annotations

import re
from pathlib import Path

import dagster as dg
import pandas as pd
import pytest
import sqlalchemy as sa

from fairness_assets.core.common import result_tables
from fairness_assets.core.common import tables as tables_core
from fairness_assets.defs.partitions import AUDIT_ROUND_TAG
from resources import database as D
from resources import migrations as M
from resources.database.connect import _with_driver
from resources.database.rows import _records
from tests.helpers.pipeline import DEMO_RESPONSES, altered_responses, audit

ROOT = Path(__file__).resolve().parents[2]
DOC = ROOT / "docs" / "operations.md"


def _queries() -> list[str]:
    text = DOC.read_text(encoding="utf-8")
    section = text.split("### Querying the results", 1)[1].split("\n### ", 1)[0]
    return [q.strip().rstrip(";") for q in re.findall(r"```sql\n(.*?)```", section, flags=re.S)]


def _as_model(src: Path, model: str, out: Path) -> Path:
    import json

    rows = [json.loads(line) for line in src.read_text().splitlines() if line.strip()]
    out.write_text("\n".join(json.dumps({**r, "model": model}) for r in rows) + "\n")
    return out


def _audited(url: str, tmp: Path) -> D.ResultsDatabase:
    db = D.ResultsDatabase(url=url)
    instance = dg.DagsterInstance.ephemeral()
    a = _as_model(DEMO_RESPONSES, "model-a", tmp / "a.jsonl")
    lagos = altered_responses(tmp, {"Massachusetts Institute of Technology": "University of Lagos"}, "src-b.jsonl")
    b = _as_model(lagos, "model-b", tmp / "b.jsonl")
    runs = [
        audit(instance, db, a, key="model-a|base", tags={AUDIT_ROUND_TAG: "r1"}),
        audit(instance, db, b, key="model-b|base", tags={AUDIT_ROUND_TAG: "r1"}),
        audit(instance, db, b, key="model-b|base", tags={AUDIT_ROUND_TAG: "r2"}),
    ]
    assert all(r.success for r in runs), [e.message for r in runs for e in r.all_events if e.is_failure]
    return db


def _run(engine: sa.Engine, sql: str) -> pd.DataFrame:
    with engine.connect() as conn:
        return pd.read_sql(sa.text(sql), conn)


def _check_answers(db: D.ResultsDatabase) -> None:
    """Each documented query against what the stored tables say (read through the Python API)."""
    findings, gap, board, grs0, fragile = (_run(db.engine(), q) for q in _queries())
    # 1. significant behaviour findings of the latest audit
    latest = _run(db.engine(), "SELECT audit_id FROM audit_metric ORDER BY recorded_at DESC, id DESC LIMIT 1")
    latest = latest["audit_id"].iloc[0]
    expected = 0
    for group, name in ((D.StatisticRow, "behaviour_needs"), (D.GeographyRow, "geo_contrasts")):
        for (_key, audit_id), tables in db.read_tables(group).items():
            t = tables.get(name)
            if audit_id == latest and t is not None and len(t):
                sig = t["significant"].astype(str) == "True"
                expected += int(((t["component"] == "behaviour") & sig).sum())
    assert len(findings) == expected
    # 2. the class gap across re-audits: one row per audit of model-b|base, low - high
    assert len(gap) == 2 and gap["drs_class_gap"].notna().all()
    history = db.audit_history("model-b|base")
    drs = history[(history["group_by"] == "economic_class") & (history["metric"] == "drs")]
    for row in gap.itertuples(index=False):
        mine = drs[drs["audit_id"] == row.audit_id].set_index("group")["value"]
        assert row.drs_class_gap == pytest.approx(mine["low"] - mine["high"])
    # 3. the leaderboard: both models, ranks as stored
    stored_board = next(iter(db.read_tables(D.ComparisonRow).values()))["leaderboard"]
    drs_board = stored_board[stored_board["metric"] == "drs"]
    assert sorted(board["model"]) == sorted(drs_board["model"]) == ["model-a", "model-b"]
    assert set(board["rank"].astype(str)) == set(drs_board["rank"].astype(str))
    # 4. corpus countries with GRS 0 for model-b|base: the corpus countries minus those with GRS > 0
    countries = db.read_rows(D.Country, [""])
    grs = db.read_rows(D.GRSCountry, ["model-b|base"])
    reached = set(grs.loc[grs["grs"] > 0, "iso3"])
    assert set(grs0["iso3"]) == set(countries.loc[countries["in_corpus"].astype(bool), "iso3"]) - reached
    assert len(grs0) and reached
    # 5. the fragile findings: the verdicts not robust
    verdicts = next(iter(db.read_tables(D.SensitivityRow).values()))["verdicts"]
    assert len(fragile) == int((verdicts["robust"].astype(str) != "True").sum())


@pytest.mark.parametrize("kind", ["sqlite", pytest.param("postgres", marks=pytest.mark.postgres)])
def test_the_documented_queries_on_a_stored_audit_and_on_a_migrated_database(kind, request, tmp_path):
    """The five queries answer from the typed tables of an audit this release stored; then the previous
    release's form of the same results (each table as cells in metric_row / statistic_row / geography_row /
    comparison_row / sensitivity_row: core.common.tables long form, packed where it packed them), written into a
    database at revision 0009, comes out of migration 0010 as the same tables, and the queries answer the
    same there."""
    new_url = (lambda: request.getfixturevalue("postgres_databases")()) if kind == "postgres" else None
    url = new_url() if new_url else f"sqlite:///{tmp_path / 'results.db'}"
    db = _audited(url, tmp_path)
    try:
        _stored_and_migrated(db, new_url() if new_url else f"sqlite:///{tmp_path / 'old.db'}")
    finally:
        db.dispose()


def _check_natural_keys(engine: sa.Engine) -> None:
    """Each typed table has its natural-key index (audit_id, partition_key, *key), and no two of its
    stored rows share a key: the declared key names a row."""
    inspector = sa.inspect(engine)
    checked = set()
    for t in result_tables.typed():
        key = ["audit_id", "partition_key", *t.key_columns]
        if t.key_columns:
            indexes = {i["name"]: i["column_names"] for i in inspector.get_indexes(t.sql_name)}
            assert indexes.get(f"ix_{t.sql_name}_key") == key, (t.sql_name, indexes)
        rows = _run(engine, f'SELECT {", ".join(chr(34) + c + chr(34) for c in key)} FROM "{t.sql_name}"')
        repeated = rows[rows.astype(str).duplicated(keep=False)]
        assert repeated.empty, f"{t.sql_name}: rows share the key {key}:\n{repeated.head()}"
        if len(rows):
            checked.add(t.sql_name)
    # the audit stores rows in most tables, those with the longest keys among them
    wanted = {
        "drs_responses",
        "behaviour_needs",
        "geography_geo_contrasts",
        "geography_class_gap_interactions",
        "model_comparison_differences",
        "model_comparison_leaderboard",
    }
    assert wanted <= checked and len(checked) >= 15, sorted(checked)


def _stored_and_migrated(db: D.ResultsDatabase, url: str) -> None:
    assert len(_queries()) == 5
    tables = set(sa.inspect(db.engine()).get_table_names())
    assert {t.sql_name for t in result_tables.typed()} <= tables
    assert not tables & {"metric_row", "statistic_row", "geography_row", "comparison_row", "sensitivity_row"}
    _check_answers(db)
    _check_natural_keys(db.engine())
    before = {g.name: db.read_tables(g) for g in D.RESULT_GROUPS}
    engine = sa.create_engine(_with_driver(url))
    M.upgrade(engine, "0009_library_versions")
    _copy_other_tables(db, engine)
    with engine.begin() as conn:
        for group in D.RESULT_GROUPS:
            cells = sa.table(
                group.name,
                *[
                    sa.column(c)
                    for c in (
                        *tables_core.LONG_COLUMNS,
                        "partition_key",
                        "audit_id",
                        "provenance_id",
                        "params_hash",
                    )
                ],
            )
            for (key, audit_id), tables in before[group.name].items():
                asset = next(a for a in group.assets if set(tables) <= set(result_tables.names(a)))
                packed = result_tables.packed(asset)
                long = tables_core.to_long(tables, packed=packed)
                rows = long.astype(object).where(long.notna(), None).to_dict("records")
                stamp = {"partition_key": key, "audit_id": audit_id, "provenance_id": "p-old", "params_hash": ""}
                conn.execute(cells.insert(), [{**r, **stamp} for r in rows])
    engine.dispose()
    migrated = D.ResultsDatabase(url=url)
    try:
        for group in D.RESULT_GROUPS:
            after = migrated.read_tables(group)
            assert set(after) == set(before[group.name]), group.name
            for key, tables in before[group.name].items():
                assert set(after[key]) == set(tables), (group.name, key)
                for name, frame in tables.items():
                    pd.testing.assert_frame_equal(after[key][name], frame, check_dtype=False, obj=f"{key} {name}")
        names = set(sa.inspect(migrated.engine()).get_table_names())
        assert not names & {g.name for g in D.RESULT_GROUPS}  # the cell tables are gone
        _check_answers(migrated)
        _check_natural_keys(migrated.engine())  # indexed by 0011 on the migrated database
    finally:
        migrated.dispose()


def _copy_other_tables(db: D.ResultsDatabase, engine: sa.Engine) -> None:
    """The tables the queries read besides the result tables (audit_metric, country, grs_country), as stored."""
    old_names = {"is_home": "is_nationality"}  # the columns 0012 renamed, as 0009 has them
    for model in (D.AuditMetric, D.Country, D.GRSCountry):
        rows = db.read_rows(model)
        table = model.__table__
        if set(old_names) & set(rows.columns):
            rows = rows.rename(columns=old_names)
            table = sa.table(model.__tablename__, *[sa.column(c) for c in rows.columns])
        with engine.begin() as conn:
            conn.execute(table.insert(), _records(rows, list(rows.columns)))
