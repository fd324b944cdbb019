"""The result tables of an audit as typed SQL tables (issue 32.2).

Every table of the catalogue (``fairness_assets/core/common/result_tables.py``) that is not an asset's own
SQLModel table (``recommendations``, ``drs_items``, ``grs_by_country``) is one SQL table named after its
exported file (``drs_summary``, ``counterfactual_disparity``, ``geography_geo_contrasts``,
``model_comparison_leaderboard``, ``sensitivity_verdicts``, ...), with the catalogue's columns and types
(``int`` BIGINT, ``float`` double precision, ``text`` TEXT, ``bool`` BOOLEAN; ``json`` TEXT, the students'
axes packed as one JSON object: resources/database/attributes.py) after the columns every result row has:

- ``partition_key`` (``model|template``; "" for the tables of the cross-partition assets),
- ``audit_id`` (the audit the row belongs to; a scoped run's cross-partition rows carry its scope's id),
- ``provenance_id`` (what produced it: the ``provenance`` table), ``params_hash``,
- ``row_index`` (its place in the table as the audit made it: reads keep that order),

indexed on ``(audit_id, partition_key)`` and unique on ``(partition_key, row_index)``. A SQL user reads
the findings with plain ``SELECT`` (docs/operations.md, "Querying the results").

``result_table`` records, per asset, partition and table, what was stored: its audit, provenance and
the columns it had as produced (with their kinds), so a reader gets back each table as the audit
made it (an empty table with its header, the columns in their order, integers as integers), and a
table that was not stored is absent, not empty.

The assets hand their tables over as one long frame (``core.common.tables.to_long``: the in-memory form the
pure core and the assets share) and read them back the same way: :func:`write` splits it into the
typed tables, :func:`read_long` rebuilds it from them; :func:`read_tables` gives the typed tables
themselves. Nothing here decides what a table holds: the catalogue does.
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass
from typing import Collection, Iterable, Mapping, Optional, Sequence

import numpy as np
import pandas as pd
import sqlalchemy as sa
from sqlmodel import Field, SQLModel

from fairness_assets.core.common import result_tables as catalogue
from fairness_assets.core.common import tables as tables_core
from fairness_assets.core.reference import axes

SQL_TYPES = {
    "int": sa.BigInteger,
    "float": sa.Float,
    "text": sa.Text,
    "bool": sa.Boolean,
    "json": sa.Text,
    "home": sa.Text,
}
STAMP = ("partition_key", "audit_id", "provenance_id", "params_hash", "row_index")


class StoredResultTable(SQLModel, table=True):
    """One table of an asset stored for one partition: which audit, which provenance, how many rows
    and the columns it had (``[[name, kind], ...]``, kind ``int`` / ``num`` / ``text`` / ``bool``)."""

    __tablename__ = "result_table"
    asset: str = Field(primary_key=True)
    partition_key: str = Field(primary_key=True)
    table_name: str = Field(primary_key=True)
    audit_id: str = Field(index=True)
    provenance_id: str = Field(max_length=64)
    params_hash: str = Field(default="", max_length=64)
    rows: int
    columns: str


def sql_table(t: catalogue.ResultTable, metadata: sa.MetaData) -> sa.Table:
    """The SQL table of catalogue entry ``t`` in ``metadata``."""
    name = t.sql_name
    return sa.Table(
        name,
        metadata,
        sa.Column("id", sa.Integer, primary_key=True, autoincrement=True),
        sa.Column("partition_key", sa.String, nullable=False),
        sa.Column("audit_id", sa.String, nullable=False),
        sa.Column("provenance_id", sa.String(64), nullable=False),
        sa.Column("params_hash", sa.String(64), nullable=False),
        sa.Column("row_index", sa.Integer, nullable=False),
        *[sa.Column(column, SQL_TYPES[kind], nullable=True) for column, kind in t.columns],
        sa.Index(f"ix_{name}_audit_partition", "audit_id", "partition_key"),
        sa.Index(f"uq_{name}_row", "partition_key", "row_index", unique=True),
        # the natural key (catalogue ``key``; migration 0011): a query of one finding is an index lookup
        *([sa.Index(f"ix_{name}_key", "audit_id", "partition_key", *t.key_columns)] if t.key_columns else []),
    )


# every typed result table, by its SQL name, in SQLModel's metadata (created by migration 0010, its
# natural-key index by 0011)
TABLES: dict[str, sa.Table] = {t.sql_name: sql_table(t, SQLModel.metadata) for t in catalogue.typed()}


@dataclass(frozen=True)
class ResultGroup:
    """The result tables of some assets, read and written together (what one cell table held before
    migration 0010: ``metric_row`` held the tables of ``analysis_tables`` and ``base_vs_regional``)."""

    name: str
    assets: tuple[str, ...]

    def entries(self) -> tuple[catalogue.ResultTable, ...]:
        return tuple(t for a in self.assets for t in catalogue.of_asset(a))


class ResultTypeError(ValueError):
    """A value that does not fit the declared type of its result-table column."""


def _kind(s: pd.Series) -> str:
    if pd.api.types.is_bool_dtype(s):
        return "bool"
    if pd.api.types.is_integer_dtype(s):
        return "int"
    if pd.api.types.is_numeric_dtype(s):
        return "num"
    return "text"


def _fast_values(kind: str, s: pd.Series) -> Optional[list]:
    """:func:`_values` of a column whose dtype already fits ``kind`` (floats for ``float``, integers for
    ``int``, booleans for ``bool``, strings for text), converted whole; None where it does not fit (the
    cell-by-cell path then converts it or names the value that does not fit)."""
    dtype = s.dtype
    if kind == "float" and (pd.api.types.is_float_dtype(dtype) or pd.api.types.is_integer_dtype(dtype)):
        if pd.api.types.is_extension_array_dtype(dtype):
            return None
        a = s.to_numpy(dtype=float)
        out = a.astype(object)
        out[np.isnan(a)] = None  # infinities stay, as cell by cell
        return out.tolist()
    if kind == "int" and pd.api.types.is_integer_dtype(dtype) and not pd.api.types.is_bool_dtype(dtype):
        if pd.api.types.is_extension_array_dtype(dtype):
            return None
        return s.to_numpy().tolist()
    if kind == "bool" and dtype == np.bool_:
        return s.to_numpy().tolist()
    if kind in ("text", "json", "home") and pd.api.types.is_object_dtype(dtype):
        raw = s.to_numpy()
        if all(type(v) is str for v in raw):  # exactly str: str(v) would be v itself
            return raw.tolist()
    return None


def _values(t: catalogue.ResultTable, column: str, kind: str, s: pd.Series) -> list:
    """The cells of ``s`` as Python values of the column's declared ``kind``; a value that does not
    fit raises :class:`ResultTypeError` naming the table, the column and the value (never a silent
    NULL)."""
    fast = _fast_values(kind, s)
    if fast is not None:
        return fast
    raw = s.astype(object).where(s.notna(), None).tolist()
    out: list = []
    for v in raw:
        if v is None or (isinstance(v, float) and math.isnan(v)):
            out.append(None)
            continue
        try:
            if kind in ("text", "json", "home"):
                out.append(str(v))
            elif kind == "bool":
                if isinstance(v, (bool, np.bool_)):
                    out.append(bool(v))
                elif str(v) in ("True", "False"):
                    out.append(str(v) == "True")
                elif isinstance(v, (int, float, np.number)) and float(v) in (0.0, 1.0):
                    out.append(bool(v))
                else:
                    raise ValueError
            elif kind == "int":
                f = float(v)
                if not f.is_integer():
                    raise ValueError
                out.append(int(f))
            else:
                f = float(v)
                out.append(f if math.isfinite(f) else None if math.isnan(f) else f)
        except (TypeError, ValueError):
            raise ResultTypeError(
                f"result table {t.sql_name!r} ({t.asset}.{t.name}): column {column!r} is declared {kind} "
                f"(core/common/result_tables.py) but holds {v!r}"
            ) from None
    return out


def _home_column(t: catalogue.ResultTable) -> Optional[str]:
    """The column of ``t`` declared ``h`` (the home axis's value, under its own name), or None."""
    return next((c for c, kind in t.columns if kind == "home"), None)


def _packed_column(t: catalogue.ResultTable) -> Optional[str]:
    """The column of ``t`` declared ``j`` (the students' axes, packed), or None."""
    return next((c for c, kind in t.columns if kind == "json"), None)


def records(t: catalogue.ResultTable, df: pd.DataFrame, stamp: Mapping[str, str]) -> list[dict]:
    """The rows of ``df`` (one partition's table ``t``) as rows of its SQL table: the stamp columns,
    ``row_index`` and every declared column (NULL where ``df`` lacks it); a ``j`` column holds the
    axis columns of ``df`` (resources/database/attributes.py: every axis of the active catalogue, null for
    one ``df`` lacks). A column ``df`` has that the catalogue does not declare raises
    :class:`ResultTypeError` naming it: nothing is dropped silently."""
    names, columns = _columns(t, _prepared(t, df), stamp)
    return [dict(zip(names, row, strict=True)) for row in zip(*columns, strict=True)]


def _prepared(t: catalogue.ResultTable, df: pd.DataFrame) -> pd.DataFrame:
    """``df`` as table ``t`` stores it (:func:`records`): the home axis under the table's name for it, the
    axis columns packed, every column declared."""
    from .database.attributes import pack

    declared = dict(t.columns)
    home_col, home = _home_column(t), axes.home()
    if home_col is not None and home is not None and home in df.columns and home != home_col:
        df = df.rename(columns={home: home_col})  # the home axis's value, stored under the table's name for it
    packed = _packed_column(t)
    if packed is not None:
        try:
            df = pack(df, t.sql_name, packed, exclude=[c for c in declared if c != packed])
        except ValueError as exc:
            raise ResultTypeError(f"result table {t.sql_name!r} ({t.asset}.{t.name}): {exc}") from None
    extra = [c for c in df.columns if c not in declared]
    if extra:
        raise ResultTypeError(
            f"result table {t.sql_name!r} ({t.asset}.{t.name}) has column(s) {extra} that core/common/result_tables.py "
            "does not declare: declare them (name and type) there and in a schema migration"
        )
    return df


def _columns(t: catalogue.ResultTable, df: pd.DataFrame, stamp: Mapping[str, str]) -> tuple[list[str], list[list]]:
    """The SQL columns of table ``t`` (the stamp's, ``row_index``, the declared ones) and their values for
    the rows of ``df`` (ready for :func:`records`: packed, renamed and checked there)."""
    n = len(df)
    names = ["partition_key", "audit_id", "provenance_id", "params_hash", "row_index", *(c for c, _ in t.columns)]
    columns = [[stamp.get(k, "")] * n for k in names[:4]]
    columns.append(list(range(n)))
    columns += [_values(t, c, kind, df[c]) if c in df else [None] * n for c, kind in t.columns]
    return names, columns


def _insert(conn: sa.Connection, table: sa.Table, names: list[str], columns: list[list], chunk: int) -> None:
    """Insert the rows given as ``columns`` (values of ``names``) into ``table``. On SQLite the rows go to
    the driver's ``executemany`` as they are (every result-table column is an integer, a float, text or a
    boolean, which the driver stores as SQLAlchemy would: 1/0 for booleans); elsewhere through
    SQLAlchemy (psycopg2's batched multi-row inserts)."""
    n = len(columns[0]) if columns else 0
    if conn.dialect.name == "sqlite":
        quote = conn.dialect.identifier_preparer
        sql = (
            f"INSERT INTO {quote.format_table(table)} ({', '.join(quote.quote(c) for c in names)}) "
            f"VALUES ({', '.join('?' * len(names))})"
        )
        rows = list(zip(*columns, strict=True))
        for start in range(0, n, chunk):
            conn.exec_driver_sql(sql, rows[start : start + chunk])
        return
    rows = [dict(zip(names, row, strict=True)) for row in zip(*columns, strict=True)]
    for start in range(0, n, chunk):
        conn.execute(table.insert(), rows[start : start + chunk])


def _stamp(part: pd.DataFrame, key: str) -> dict[str, str]:
    stamp = {"partition_key": key}
    for col in ("audit_id", "provenance_id", "params_hash"):
        values = pd.unique(part[col].dropna()) if col in part else []
        if len(values) > 1:
            raise ValueError(f"partition {key!r}: rows of {len(values)} {col}s in one write ({list(values)[:3]})")
        stamp[col] = str(values[0]) if len(values) else ""
    return stamp


def write(
    conn: sa.Connection, asset: str, long: pd.DataFrame, partition_keys: Sequence[str], chunk: int = 5_000
) -> int:
    """Replace ``asset``'s result tables of ``partition_keys`` with those of ``long`` (its tables in
    ``core.common.tables`` long form, with ``partition_key``, ``audit_id``, ``provenance_id`` and ``params_hash``
    columns), inside the caller's write transaction. Returns the number of table rows stored."""
    entries = {t.name: t for t in catalogue.of_asset(asset)}
    keys = list(partition_keys)
    registry = StoredResultTable.__table__
    for t in entries.values():
        table = TABLES[t.sql_name]
        conn.execute(table.delete().where(table.c.partition_key.in_(keys)))
    conn.execute(registry.delete().where(registry.c.asset == asset, registry.c.partition_key.in_(keys)))
    if long.empty:
        return 0
    stored = 0
    for key, part in long.groupby("partition_key", sort=True):
        stamp = _stamp(part, str(key))
        for name, df in tables_core.from_long(part[tables_core.LONG_COLUMNS]).items():
            if name not in entries:
                raise ResultTypeError(
                    f"asset {asset!r} produced a table {name!r} that core/common/result_tables.py does not declare "
                    f"(it declares: {', '.join(entries)})"
                )
            t = entries[name]
            names, columns = _columns(t, _prepared(t, df), stamp)
            _insert(conn, TABLES[t.sql_name], names, columns, chunk)
            rows = columns[0]
            kinds = [[str(c), _kind(df[c])] for c in df.columns]
            conn.execute(
                registry.insert(),
                [
                    {
                        "asset": asset,
                        "partition_key": stamp["partition_key"],
                        "table_name": name,
                        "audit_id": stamp["audit_id"],
                        "provenance_id": stamp["provenance_id"],
                        "params_hash": stamp["params_hash"],
                        "rows": len(rows),
                        "columns": json.dumps(kinds),
                    }
                ],
            )
            stored += len(rows)
    return stored


def _restore(df: pd.DataFrame, kinds: Sequence[Sequence[str]]) -> pd.DataFrame:
    """A table read back with the columns it had as produced, in their order and kinds."""
    out = {}
    for column, kind in kinds:
        s = df[column] if column in df else pd.Series([None] * len(df), dtype=object)
        values = s.to_numpy()
        if kind == "int":
            f = pd.to_numeric(s, errors="coerce").to_numpy(dtype=float)
            out[column] = f if np.isnan(f).any() else f.astype(np.int64)
        elif kind == "num":
            out[column] = pd.to_numeric(s, errors="coerce").to_numpy(dtype=float)
        elif kind == "bool":
            out[column] = np.array([None if v is None or v != v else bool(v) for v in values], dtype=object)
            if len(df) and all(v is not None for v in out[column]):
                out[column] = out[column].astype(bool)
        else:
            out[column] = np.array([None if v is None or v != v else str(v) for v in values], dtype=object)
    return pd.DataFrame(out, columns=[c for c, _ in kinds])


def registry_rows(
    conn: sa.Connection, assets: Iterable[str], keys: Optional[Sequence[str]], where=None
) -> pd.DataFrame:
    """The ``result_table`` rows of ``assets`` (of ``keys``; all when None), ``where`` the caller's scope."""
    registry = StoredResultTable.__table__
    q = sa.select(registry).where(registry.c.asset.in_(list(assets)))
    if keys is not None:
        q = q.where(registry.c.partition_key.in_(list(keys)))
    if where is not None:
        q = q.where(where)
    return pd.read_sql(q.order_by(registry.c.partition_key, registry.c.asset, registry.c.table_name), conn)


def read_tables(
    conn: sa.Connection,
    group: ResultGroup,
    keys: Optional[Sequence[str]] = None,
    where=None,
    names: Optional[Collection[str]] = None,
) -> dict[tuple[str, str], dict[str, pd.DataFrame]]:
    """``{(partition key, audit id): {table name: frame}}``: ``group``'s tables as stored (see
    :func:`write`), typed, each in its rows' order; ``where``: a clause on ``result_table`` (the scope);
    ``names``: only these tables of the group (all when None)."""
    reg = registry_rows(conn, group.assets, keys, where)
    out: dict[tuple[str, str], dict[str, pd.DataFrame]] = {}
    for t in group.entries():
        if names is not None and t.name not in names:
            continue
        mine = reg[(reg["asset"] == t.asset) & (reg["table_name"] == t.name)]
        if mine.empty:
            continue
        table = TABLES[t.sql_name]
        pairs = list(zip(mine["partition_key"], mine["audit_id"], strict=True))
        q = sa.select(table).where(
            sa.or_(*[sa.and_(table.c.partition_key == k, table.c.audit_id == a) for k, a in pairs])
        )
        rows = pd.read_sql(q.order_by(table.c.partition_key, table.c.row_index), conn)
        packed = _packed_column(t)
        if packed is not None:  # the axis columns, as they were written
            from .database.attributes import unpack

            rows = unpack(rows, packed)
        home_col, home = _home_column(t), axes.home()
        if home_col is not None and home is not None and home != home_col:
            rows = rows.rename(columns={home_col: home})  # read back under the design's name for the axis
        by_key = dict(tuple(rows.groupby("partition_key", sort=False))) if len(rows) else {}
        for r in mine.itertuples(index=False):
            part = by_key.get(r.partition_key, rows.iloc[:0])
            out.setdefault((r.partition_key, r.audit_id), {})[t.name] = _restore(
                part.reset_index(drop=True), json.loads(r.columns)
            )
    return out


def read_long(
    conn: sa.Connection, group: ResultGroup, keys: Optional[Sequence[str]] = None, where=None
) -> pd.DataFrame:
    """``group``'s tables of ``keys`` in ``core.common.tables`` long form, one block per partition with its
    ``partition_key``, ``audit_id``, ``provenance_id`` and ``params_hash`` (what the assets and the
    readers of the long form take)."""
    reg = registry_rows(conn, group.assets, keys, where)
    stamps = {
        (r.partition_key, r.audit_id): (r.provenance_id, r.params_hash, r.asset) for r in reg.itertuples(index=False)
    }
    frames = []
    for (key, audit), tables in sorted(read_tables(conn, group, keys, where).items()):
        provenance, params, asset = stamps[(key, audit)]
        packed = [n for a in group.assets for n in catalogue.packed(a)]
        frames.append(
            tables_core.to_long(tables, packed=packed).assign(
                partition_key=key, audit_id=audit, provenance_id=provenance, params_hash=params
            )
        )
    if not frames:
        return pd.DataFrame(
            columns=[*tables_core.LONG_COLUMNS, "partition_key", "audit_id", "provenance_id", "params_hash"]
        )
    return pd.concat(frames, ignore_index=True)


def stored_keys(conn: sa.Connection, group: ResultGroup, where=None) -> list[str]:
    """The partition keys with any table of ``group`` stored."""
    registry = StoredResultTable.__table__
    q = sa.select(registry.c.partition_key).where(registry.c.asset.in_(list(group.assets))).distinct()
    if where is not None:
        q = q.where(where)
    return sorted(r[0] for r in conn.execute(q))
