"""Schema migrations of the results database (Alembic; docs/architecture.md, "Schema migrations").

:func:`upgrade` brings a database to the newest revision (``head``) under a lock, so that the
parallel steps of a run opening a fresh database at once create it once: PostgreSQL takes a
transaction-scoped advisory lock, SQLite ``BEGIN IMMEDIATE`` (the others wait for the busy
timeout), and the whole upgrade runs in that one transaction. A database made by an earlier
release of this project (its tables made by ``create_all``, no version table) is recognised and
brought to the baseline revision (missing tables, columns and indexes added, rows kept), then
stamped, so that later revisions apply to it as to any other.

The version table is ``results_alembic_version``, not Alembic's default ``alembic_version``: the
results database may share a PostgreSQL database with the Dagster instance, whose storage keeps
its own Alembic version in ``alembic_version``.
"""

from __future__ import annotations

import logging
import time
from pathlib import Path

import sqlalchemy as sa

log = logging.getLogger(__name__)

HERE = Path(__file__).resolve().parent
VERSION_TABLE = "results_alembic_version"
_PG_LOCK_KEY = 0x6661697273636D61  # "fairscma": one advisory lock key for the results schema


def _config(connection: sa.Connection | None = None):
    from alembic.config import Config

    config = Config()
    config.set_main_option("script_location", str(HERE))
    if connection is not None:
        config.attributes["connection"] = connection
    return config


def head() -> str:
    """The newest revision."""
    from alembic.script import ScriptDirectory

    return ScriptDirectory.from_config(_config()).get_current_head()


def current(connection: sa.Connection) -> str | None:
    """The revision the database is at (None: no version table, a fresh or an earlier release's database)."""
    from alembic.runtime.migration import MigrationContext

    return MigrationContext.configure(connection, opts={"version_table": VERSION_TABLE}).get_current_revision()


def _baseline_tables() -> set[str]:
    import importlib

    baseline = importlib.import_module("resources.migrations.versions.0001_baseline")
    return set(baseline.baseline_metadata().tables)


def upgrade(engine: sa.Engine, revision: str = "head", attempts: int = 5) -> None:
    """Upgrade the database of ``engine`` to ``revision`` (see the module's docstring)."""
    target = head() if revision == "head" else revision
    with engine.connect() as conn:  # fast path: already there, no lock taken
        if sa.inspect(conn).has_table(VERSION_TABLE) and current(conn) == target:
            return
    for attempt in range(attempts):
        try:
            _upgrade_locked(engine, revision)
            return
        except (sa.exc.OperationalError, sa.exc.ProgrammingError, sa.exc.IntegrityError) as exc:
            # a database without a lock of its own (neither SQLite nor PostgreSQL) where another
            # process created the same table meanwhile: try again, it now finds it
            text = str(exc).lower()
            if ("already exists" not in text and "duplicate" not in text) or attempt == attempts - 1:
                raise
            time.sleep(0.2 * (attempt + 1))


def _upgrade_locked(engine: sa.Engine, revision: str) -> None:
    from alembic import command

    dialect = engine.dialect.name
    with engine.connect() as conn:
        if dialect == "sqlite":
            conn.exec_driver_sql("BEGIN IMMEDIATE")  # the write lock now, DDL included (pysqlite begins nothing itself)
        elif dialect == "postgresql":
            conn.execute(sa.text("SELECT pg_advisory_xact_lock(:key)"), {"key": _PG_LOCK_KEY})
        tables = set(sa.inspect(conn).get_table_names())
        if VERSION_TABLE not in tables and tables & _baseline_tables():
            log.warning(
                "results database %s was made by an earlier release (no %s table): bringing it to the "
                "baseline schema, rows kept, and stamping it",
                _describe(engine),
                VERSION_TABLE,
            )
        before = current(conn) if VERSION_TABLE in tables else None
        command.upgrade(_config(conn), revision)
        after = current(conn)
        conn.commit()
    if after != before:
        log.info("results database %s: schema %s -> %s", _describe(engine), before or "(none)", after)


def _describe(engine: sa.Engine) -> str:
    from resources.database import redact

    return redact(engine.url.render_as_string(hide_password=True))
