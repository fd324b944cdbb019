"""How the results database is reached: the driver a URL names, the URL with its password hidden for
messages, and the schema upgrade (Alembic, resources/migrations) on first connect."""

from __future__ import annotations

import threading

import sqlalchemy as sa

# Alembic's migration context (``alembic.context``, ``alembic.op``) is one per process: threads of one
# process (two `score` calls of a library user) opening databases at once upgrade them in turn
_MIGRATION_LOCK = threading.Lock()


def _create_tables(engine: sa.Engine) -> None:
    """Bring the database to the newest schema revision (Alembic, resources/migrations): a fresh
    database is created, one made by an earlier release is upgraded with its rows kept; parallel
    steps opening it at once are serialised by a lock (docs/architecture.md, "Schema migrations"),
    threads of one process by :data:`_MIGRATION_LOCK`."""
    from ..migrations import upgrade

    with _MIGRATION_LOCK:
        upgrade(engine)


def _with_driver(url: str) -> str:
    """``postgresql://`` means psycopg2 here (SQLAlchemy 2.1 would pick psycopg 3, not installed)."""
    for prefix in ("postgresql://", "postgres://"):
        if url.startswith(prefix):
            return "postgresql+psycopg2://" + url[len(prefix) :]
    return url


def redact(url: str) -> str:
    """A URL (or a text holding URLs) with its password hidden, for logs and the UI; parseable or
    not, never the raw string (resources.secrets.redact)."""
    from ..secrets import redact as _redact

    return _redact(url)
