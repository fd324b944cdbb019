"""Rows and transactions of the results database, the same on SQLite and PostgreSQL: frames made
into storable rows, key values made storable alike, the write transaction that holds the lock of
the rows it replaces, content hashes of shared tables, and inserts that skip a record already stored."""

from __future__ import annotations

import contextlib
import logging
from typing import Any, Iterable, Sequence

import numpy as np
import pandas as pd
import sqlalchemy as sa

from fairness_assets.core.generation.responses import storable_text

log = logging.getLogger("resources.database")  # the results database's logger, whichever module logs


def _records(df: pd.DataFrame, columns: Sequence[str], table: str = "") -> list[dict[str, Any]]:
    """Rows of ``df`` as plain dicts ready to insert, on every database alike: numpy scalars
    become Python scalars (psycopg2 does not adapt numpy types) and every text value is made
    storable (:func:`storable_text`: NUL removed, as PostgreSQL rejects it; lone surrogates,
    which no driver can encode, replaced by U+FFFD), so one odd answer never fails a whole write,
    and SQLite and PostgreSQL store the same text. Altered values are counted in a warning."""
    sub = df[list(columns)]
    obj = sub.astype(object).where(sub.notna(), None)
    recs = obj.to_dict("records")
    altered: dict[str, int] = {}
    for r in recs:
        for k, v in r.items():
            if isinstance(v, np.generic):
                v = r[k] = v.item()
            if isinstance(v, str) and ("\x00" in v or not v.isascii()):  # fast path: plain ASCII text
                text, note = storable_text(v)
                if note:
                    r[k] = text
                    altered[k] = altered.get(k, 0) + 1
    if altered:
        log.warning(
            "%s: text made storable (NUL characters removed, unencodable characters replaced) in %s",
            table or "results",
            ", ".join(f"{n} value(s) of {k}" for k, n in sorted(altered.items())),
        )
    return recs


def _keys(values: Iterable[Any]) -> list[Any]:
    """Key values for a query, made storable as :func:`_records` stores them (so that a key
    written with a NUL removed is found again, and PostgreSQL never receives a NUL)."""
    return [storable_text(v)[0] if isinstance(v, str) else v for v in values]


def _lock_id(*parts: str) -> int:
    """A signed 64-bit PostgreSQL advisory-lock key for ``parts`` (stable across processes)."""
    import hashlib

    digest = hashlib.sha256("\x00".join(parts).encode("utf-8", "surrogatepass")).digest()
    return int.from_bytes(digest[:8], "big", signed=True)


@contextlib.contextmanager
def write_transaction(engine: sa.Engine, table: str, partition_keys: Iterable[str] = ("",)):
    """A transaction that writes ``table``'s rows of ``partition_keys`` alone: on PostgreSQL it
    first takes a transaction-scoped advisory lock per (table, partition) (in key order, so two
    writers never deadlock), on SQLite the database's write lock (``BEGIN IMMEDIATE``). A second
    writer of the same rows waits for the first to commit, then sees its rows: a delete followed by
    an insert can never leave two copies. Commits on success, rolls back on any error."""
    with engine.connect() as conn:
        if conn.dialect.name == "sqlite":
            conn.exec_driver_sql("BEGIN IMMEDIATE")
        elif conn.dialect.name == "postgresql":
            for key in sorted(set(partition_keys)):
                conn.execute(sa.text("SELECT pg_advisory_xact_lock(:k)"), {"k": _lock_id(table, key)})
        try:
            yield conn
        except BaseException:
            conn.rollback()
            raise
        conn.commit()


def content_hash(frame: pd.DataFrame, columns: Sequence[str]) -> str:
    """sha256 of the rows of ``frame`` over ``columns`` (order of rows and columns included)."""
    import hashlib

    h = hashlib.sha256("\x1f".join(columns).encode())
    if len(frame):
        sub = frame[list(columns)]
        h.update(
            pd.util.hash_pandas_object(sub.astype(object).where(sub.notna(), None), index=False).to_numpy().tobytes()
        )
    h.update(str(len(frame)).encode())
    return h.hexdigest()


def _insert_ignoring_duplicates(conn: sa.Connection, table: sa.Table, rows: list[dict]) -> None:
    """Insert ``rows``, leaving out any whose primary key is already there (another run stored the
    same record meanwhile): ``ON CONFLICT DO NOTHING`` on PostgreSQL and SQLite."""
    if not rows:
        return
    if conn.dialect.name == "postgresql":
        from sqlalchemy.dialects.postgresql import insert
    elif conn.dialect.name == "sqlite":
        from sqlalchemy.dialects.sqlite import insert
    else:  # pragma: no cover - other databases: one row at a time, a duplicate skipped
        for row in rows:
            try:
                with conn.begin_nested():
                    conn.execute(table.insert(), [row])
            except sa.exc.IntegrityError:
                pass
        return
    conn.execute(insert(table).on_conflict_do_nothing(), rows)
