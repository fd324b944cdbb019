"""Alembic environment of the results database.

Run by :func:`resources.migrations.upgrade` (what ``ResultsDatabase.engine()`` calls on first
use), which passes the open connection in ``config.attributes["connection"]``; run from the
command line (``alembic -c resources/migrations/alembic.ini ...``) it connects to
``sqlalchemy.url`` of the configuration, else to ``FAIRNESS_DATABASE_URL`` / the default SQLite
file. ``render_as_batch`` makes column changes work on SQLite (copy-and-move of the table).
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import context
from sqlmodel import SQLModel

import resources.database  # noqa: F401 - the models register their tables in SQLModel.metadata
import resources.partition_lease  # noqa: F401
from resources.migrations import VERSION_TABLE

config = context.config
target_metadata = SQLModel.metadata


def _ours(name, type_, parent_names) -> bool:
    """Autogenerate looks at the results tables only (the database may hold others, e.g. Dagster's)."""
    return type_ != "table" or name in target_metadata.tables


def _configure(connection: sa.Connection) -> None:
    context.configure(
        connection=connection,
        target_metadata=target_metadata,
        include_name=_ours,
        version_table=VERSION_TABLE,
        render_as_batch=True,
        compare_type=True,
    )


def run_offline() -> None:
    context.configure(
        url=_url(),
        target_metadata=target_metadata,
        version_table=VERSION_TABLE,
        render_as_batch=True,
        literal_binds=True,
    )
    with context.begin_transaction():
        context.run_migrations()


def _url() -> str:
    import os
    from pathlib import Path

    from resources.database.connect import _with_driver
    from resources.settings import default_database_url

    url = config.get_main_option("sqlalchemy.url") or os.environ.get("FAIRNESS_DATABASE_URL") or default_database_url()
    if url.startswith("sqlite:///") and not url.startswith("sqlite:///:memory:"):
        Path(url[len("sqlite:///") :]).parent.mkdir(parents=True, exist_ok=True)
    return _with_driver(url)


def run_online() -> None:
    connection = config.attributes.get("connection")
    if connection is not None:  # the caller holds the connection, its transaction and the lock
        _configure(connection)
        with context.begin_transaction():
            context.run_migrations()
        return
    engine = sa.create_engine(_url())
    with engine.connect() as connection:
        _configure(connection)
        with context.begin_transaction():
            context.run_migrations()
    engine.dispose()


if context.is_offline_mode():
    run_offline()
else:
    run_online()
