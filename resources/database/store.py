"""The results database as a Dagster resource: :class:`ResultsDatabase`, its engine, its scoped view
of one run's partitions, and every read and write of the stored rows (frames, typed result tables,
provenance, archived audits, the tag cache, partition outcomes)."""

from __future__ import annotations

import json
import logging
from typing import Any, Collection, Iterable, Optional, Sequence, Type

import pandas as pd
import sqlalchemy as sa
from dagster import ConfigurableResource
from pydantic import Field as PydField
from pydantic import PrivateAttr
from sqlmodel import SQLModel

from fairness_assets.core.generation.responses import storable_text
from fairness_assets.core.reference import axes

from .. import result_store
from ..result_store import ResultGroup, StoredResultTable
from ..secrets import quote_userinfo
from ..settings import default_database_url
from .attributes import ATTRIBUTES, pack, unpack
from .connect import _create_tables, _with_driver, redact
from .provenance import make_provenance
from .rows import _insert_ignoring_duplicates, _keys, _records, content_hash, write_transaction
from .schema import AuditMetric, PartitionOutcome, Provenance, SubjectTagCache, TableContent, _now

log = logging.getLogger("resources.database")  # the results database's logger, whichever module logs


def _packed(table: sa.Table, df: pd.DataFrame) -> pd.DataFrame:
    """``df`` as ``table`` stores it: its axis columns packed into ``attributes`` where the table has it
    (resources/database/attributes.py)."""
    return pack(df, table.name) if ATTRIBUTES in table.c else df


def _stored_columns(table: sa.Table, columns: Sequence[str]) -> list[str]:
    """The stored columns that hold ``columns``: an axis of the students is read from ``attributes``
    (once, where its place is first asked for); a column the table has neither way raises ``KeyError``."""
    out: list[str] = []
    for c in columns:
        if c not in table.c and (ATTRIBUTES not in table.c or c not in axes.names()):
            raise KeyError(f"table {table.name!r} has no column {c!r} (nor is it an axis of the design)")
        stored = c if c in table.c else ATTRIBUTES
        if stored not in out:
            out.append(stored)
    return out


class ResultsDatabase(ConfigurableResource):
    """SQL database for results (sqlmodel). Empty ``url`` means the default SQLite file.

    ``scope`` (a JSON object ``{partition key: audit id}``; empty: everything stored) is the view of
    a run that must see only its own rows (``fairness-audit score`` on a shared database, whose other
    runs may hold other partitions, or may have taken one of its partitions over): every read of a
    partitioned table returns only the rows of those partitions with that audit id; a partition
    outside the scope, or its rows of another audit, are never read. The cross-partition tables of a
    scoped run are stored under the scope's own audit id (:meth:`cross_partition_audit_id`) and read
    back by it, so another run's comparison is never read as this run's."""

    url: str = PydField(default="", description="SQLAlchemy URL; empty: SQLite file in the results folder.")
    echo: bool = False
    scope: str = PydField(
        default="",
        description="JSON {partition key: audit id}: read only these partitions' rows of these audits "
        "(fairness-audit score's view of a shared database); empty: every stored row.",
    )
    _engine: Any = PrivateAttr(default=None)

    @classmethod
    def setup_for_execution(self, context) -> None:
        """Every step that reads or writes results reads the axes of its run's design: the design of the
        run config's audit grid (the UI's launch config), so a step without the audit grid resource
        scores, tests and words its tables with the same design as the steps with it. A run config without
        a design keeps the process's (FAIRNESS_DESIGN); a design that cannot be read is left to the steps
        that use the audit grid, which fail naming it."""
        from ..settings import AuditGridResource, ConfigError

        try:
            run = context.run
        except Exception:  # noqa: BLE001 - built outside a run (build_resources, tests): nothing to read
            return
        try:
            grid = AuditGridResource.of_run_config(getattr(run, "run_config", None))
            if grid is not None:
                from fairness_assets.core.reference import axes

                axes.use_design(grid.load())
        except (ConfigError, ValueError, TypeError):
            pass

    @classmethod
    def scoped_to(cls, url: str, owned: dict[str, str]) -> "ResultsDatabase":
        """The database at ``url`` seen through the scope ``owned`` (``{partition key: audit id}``)."""
        return cls(url=url, scope=json.dumps(dict(sorted(owned.items()))))

    def scope_map(self) -> dict[str, str]:
        """The scope as ``{partition key: audit id}`` (empty: not scoped)."""
        return json.loads(self.scope) if self.scope else {}

    def scope_id(self) -> str:
        """The audit id of a scoped run's cross-partition rows ("" when not scoped)."""
        if not self.scope:
            return ""
        from ..settings import stable_hash

        return f"scope-{stable_hash(self.scope_map())[:12]}"

    def cross_partition_audit_id(self, default: str) -> str:
        """The audit id a cross-partition asset stores its rows under: ``default`` ("comparison",
        "sensitivity"), or the scope's id in a scoped run."""
        return self.scope_id() or default

    def _in_scope(self, table: sa.Table):
        """The WHERE clause of the scope for ``table`` (None: not scoped, or a table without partitions)."""
        owned = self.scope_map()
        if not self.scope or "partition_key" not in table.c:
            return None
        if "audit_id" not in table.c:
            return table.c.partition_key.in_(_keys([*owned, ""]))
        by_audit: dict[str, list[str]] = {}
        for key, audit in owned.items():
            by_audit.setdefault(audit, []).append(key)
        return sa.or_(
            *[
                sa.and_(table.c.audit_id == _keys([a])[0], table.c.partition_key.in_(_keys(ks)))
                for a, ks in sorted(by_audit.items())
            ],
            sa.and_(table.c.partition_key == "", table.c.audit_id.in_([self.scope_id()])),
        )

    def _scoped(self, table: sa.Table, query):
        clause = self._in_scope(table)
        return query if clause is None else query.where(clause)

    def resolved_url(self) -> str:
        return self.url or default_database_url()

    def engine(self) -> sa.Engine:
        if self._engine is None:
            url = self.resolved_url()
            if url.startswith("sqlite:///") and not url.startswith("sqlite:///:memory:"):
                from pathlib import Path

                Path(url[len("sqlite:///") :]).parent.mkdir(parents=True, exist_ok=True)
            # SQLite: wait for a concurrent writer (parallel steps) instead of failing "database is locked"
            connect_args = {"timeout": 60} if url.startswith("sqlite") else {}
            try:
                # a password holding '@', ':' or '/' is percent-encoded, so the driver reaches the host meant
                engine = sa.create_engine(
                    _with_driver(quote_userinfo(url)), echo=self.echo, future=True, connect_args=connect_args
                )
                _create_tables(engine)
            except Exception as exc:  # noqa: BLE001 - name the database in any failure
                raise ConnectionError(
                    f"results database {redact(url)} is not usable: {type(exc).__name__}: {redact(str(exc))}"
                ) from None  # the cause may quote the raw URL
            self._engine = engine
        return self._engine

    def describe(self) -> str:
        return redact(self.resolved_url())

    # -- writing and reading frames ------------------------------------------------------
    def record_provenance(self, prov: Provenance) -> None:
        """Store ``prov`` once: its id is the hash of its content, so a record that another run
        stored meanwhile is the same record and is left as it is (never a duplicate-key error)."""
        with self.engine().begin() as conn:
            _insert_ignoring_duplicates(
                conn,
                Provenance.__table__,
                [dict(zip(prov.model_dump(), _keys(prov.model_dump().values()), strict=False))],
            )

    def stamp(self, frame: pd.DataFrame, asset: str, **fields: Any) -> pd.DataFrame:
        """Record the provenance of ``asset`` (see :func:`make_provenance`) and add its id, and
        the corpus / config hash columns given, to every row of ``frame``."""
        prov = make_provenance(asset, **fields)
        self.record_provenance(prov)
        out = frame.copy()
        for col in ("corpus_sha256", "config_hash"):
            if fields.get(col) is not None:
                out[col] = fields[col]
        out["provenance_id"] = prov.provenance_id
        return out

    def replace_rows(
        self,
        model: Type[SQLModel],
        df: pd.DataFrame,
        partition_keys: Iterable[str] = ("",),
        run_id: Optional[str] = None,
        log_fn=None,
    ) -> int:
        """Replace the rows of ``partition_keys`` in ``model``'s table with ``df``, in one transaction
        that holds the write lock of those rows (:func:`write_transaction`): concurrent writers of the
        same rows take turns, each replacing the other's rows, never adding a second copy.

        ``run_id``: the run writing partitioned rows; the write commits only if that run still
        holds the partitions' leases (resources/partition_lease.verify). The shared tables
        (partition ``""``) are not rewritten when they already hold exactly these rows (same content
        hash, ``table_content``). A :class:`ResultGroup` (the analysis, statistics, geography and
        comparison tables) is written through :meth:`replace_result_tables` with ``asset``."""
        if isinstance(model, ResultGroup):
            raise TypeError(f"{model.name}: result tables are written with replace_result_tables(asset, ...)")
        table = model.__table__
        partition_keys = list(partition_keys)
        cols = [c.name for c in table.columns if c.name not in ("id",)]
        frame = _packed(table, df).copy()
        if "partition_key" not in frame:
            keys = list(partition_keys)
            if len(keys) != 1:
                raise ValueError(f"{table.name}: a multi-partition frame needs a partition_key column")
            frame["partition_key"] = keys[0]
        if "provenance_id" not in frame:
            frame["provenance_id"] = ""
        missing = [
            c for c in cols if c not in frame.columns and not table.c[c].nullable and table.c[c].server_default is None
        ]
        if missing:
            raise ValueError(f"{table.name}: frame lacks required column(s) {missing}")
        cols = [c for c in cols if c in frame.columns]
        shared = partition_keys == [""]
        digest = content_hash(frame, cols) if shared else None
        records = _records(frame, cols, table.name)
        contents = TableContent.__table__
        with write_transaction(self.engine(), table.name, _keys(partition_keys)) as conn:
            if run_id is not None and not shared:
                from ..partition_lease import verify

                verify(conn, partition_keys, run_id)
            if shared:
                stored = conn.execute(
                    sa.select(contents.c.content_sha256, contents.c.rows).where(
                        contents.c.table_name == table.name, contents.c.partition_key == ""
                    )
                ).first()
                if stored is not None and stored[0] == digest and stored[1] == len(records):
                    present = conn.execute(
                        sa.select(sa.func.count()).select_from(table).where(table.c.partition_key == "")
                    ).scalar_one()
                    if present == len(records):
                        (log_fn or log.info)(
                            f"{table.name}: already holds these {len(records)} row(s) "
                            f"(content {digest[:12]}): not rewritten"
                        )
                        return len(records)
            conn.execute(table.delete().where(table.c.partition_key.in_(_keys(partition_keys))))
            for start in range(0, len(records), 20_000):
                conn.execute(table.insert(), records[start : start + 20_000])
            if shared:
                conn.execute(
                    contents.delete().where(contents.c.table_name == table.name, contents.c.partition_key == "")
                )
                conn.execute(
                    contents.insert().values(
                        table_name=table.name,
                        partition_key="",
                        content_sha256=digest,
                        rows=len(records),
                        written_at=_now(),
                    )
                )
        return len(records)

    def replace_result_tables(
        self,
        asset: str,
        long: pd.DataFrame,
        partition_keys: Iterable[str] = ("",),
        run_id: Optional[str] = None,
        log_fn=None,
    ) -> int:
        """Replace ``asset``'s result tables of ``partition_keys`` with those of ``long`` (core.common.tables
        long form with partition_key / audit_id / provenance_id / params_hash), in one transaction holding
        the write lock of those partitions, the leases verified for ``run_id`` (as :meth:`replace_rows`).
        The cross-partition tables (partition ``""``) are not rewritten when they hold these rows already.
        Returns the number of table rows stored."""
        keys = list(partition_keys)
        frame = long if "partition_key" in long or len(keys) != 1 else long.assign(partition_key=keys[0])
        if "partition_key" not in frame:
            raise ValueError(f"{asset}: a multi-partition frame needs a partition_key column")
        frame = frame[frame["partition_key"].isin(keys)] if len(frame) else frame
        shared = keys == [""]
        digest = content_hash(frame, [c for c in frame.columns if c != "id"]) if shared else None
        contents = TableContent.__table__
        name = f"result:{asset}"
        with write_transaction(self.engine(), name, _keys(keys)) as conn:
            if run_id is not None and not shared:
                from ..partition_lease import verify

                verify(conn, keys, run_id)
            if shared:
                stored = conn.execute(
                    sa.select(contents.c.content_sha256).where(
                        contents.c.table_name == name, contents.c.partition_key == ""
                    )
                ).first()
                if stored is not None and stored[0] == digest:
                    (log_fn or log.info)(f"{asset}: already holds these tables (content {digest[:12]}): not rewritten")
                    return int(
                        conn.execute(
                            sa.select(sa.func.coalesce(sa.func.sum(StoredResultTable.__table__.c.rows), 0)).where(
                                StoredResultTable.__table__.c.asset == asset,
                                StoredResultTable.__table__.c.partition_key == "",
                            )
                        ).scalar_one()
                    )
            text = frame.copy()
            for col in ("partition_key", "audit_id", "provenance_id", "params_hash"):
                if col in text:
                    text[col] = [storable_text(v)[0] if isinstance(v, str) else v for v in text[col]]
            n = result_store.write(conn, asset, text, _keys(keys))
            if shared:
                conn.execute(contents.delete().where(contents.c.table_name == name, contents.c.partition_key == ""))
                conn.execute(
                    contents.insert().values(
                        table_name=name, partition_key="", content_sha256=digest, rows=n, written_at=_now()
                    )
                )
        return n

    def read_tables(
        self,
        group: ResultGroup,
        partition_keys: Optional[Iterable[str]] = None,
        names: Optional[Collection[str]] = None,
    ) -> dict[tuple[str, str], dict[str, pd.DataFrame]]:
        """``{(partition key, audit id): {table: frame}}``: ``group``'s result tables as stored, typed
        (resources/result_store.py), in the scope of this view; ``names``: only these tables (all when None)."""
        keys = None if partition_keys is None else _keys(partition_keys)
        with self.engine().connect() as conn:
            return result_store.read_tables(conn, group, keys, self._in_scope(StoredResultTable.__table__), names=names)

    def partition_tables(
        self, group: ResultGroup, key: str, names: Optional[Collection[str]] = None
    ) -> dict[str, pd.DataFrame]:
        """One partition's result tables of ``group`` (``{table: frame}``; empty when none is stored),
        read from their typed tables, as ``core.common.tables.from_long(read_rows(group, [key]))`` would give
        them, without the long form in between; ``names``: only these tables (all when None)."""
        found = self.read_tables(group, [key], names=names)
        return next(iter(found.values())) if found else {}

    def read_rows(self, model: Type[SQLModel], partition_keys: Optional[Iterable[str]] = None) -> pd.DataFrame:
        """The rows of ``model``'s table (of ``partition_keys``; all when None), in the scope of this view.
        A :class:`ResultGroup` is read from its typed tables and given back in core.common.tables long form,
        one block per partition with its partition_key, audit_id, provenance_id and params_hash."""
        if isinstance(model, ResultGroup):
            keys = None if partition_keys is None else _keys(partition_keys)
            with self.engine().connect() as conn:
                return result_store.read_long(conn, model, keys, self._in_scope(StoredResultTable.__table__))
        table = model.__table__
        q = self._scoped(table, sa.select(table))
        if partition_keys is not None:
            q = q.where(table.c.partition_key.in_(_keys(partition_keys)))
        with self.engine().connect() as conn:
            df = pd.read_sql(q.order_by(*table.primary_key.columns), conn)
        return unpack(df)

    def distinct(self, model: Type[SQLModel], columns: Sequence[str]) -> pd.DataFrame:
        """The distinct combinations of ``columns`` in ``model``'s table (e.g. for provenance); for a
        :class:`ResultGroup`, of its stored tables' partition_key / audit_id / provenance_id / params_hash."""
        if isinstance(model, ResultGroup):
            registry = StoredResultTable.__table__
            q = self._scoped(
                registry,
                sa.select(*[registry.c[c] for c in columns]).where(registry.c.asset.in_(model.assets)).distinct(),
            )
            with self.engine().connect() as conn:
                return pd.read_sql(q, conn)
        table = model.__table__
        stored = _stored_columns(table, columns)
        q = self._scoped(table, sa.select(*[table.c[c] for c in stored]).distinct())
        with self.engine().connect() as conn:
            df = pd.read_sql(q, conn)
        if stored == list(columns):
            return df
        out = unpack(df)
        for c in columns:  # an axis no stored row has: null
            if c not in out:
                out[c] = pd.Series([None] * len(out), index=out.index, dtype=object)
        return out[list(columns)].drop_duplicates(ignore_index=True)

    def append_rows(self, model: Type[SQLModel], df: pd.DataFrame, run_id: Optional[str] = None) -> int:
        """Insert rows (no replacement) in one transaction: a crash loses at most this call.
        ``run_id``: commit only if that run still holds the leases of the rows' partitions
        (resources/partition_lease.verify)."""
        table = model.__table__
        df = _packed(table, df)
        cols = [c.name for c in table.columns if c.name != "id" and c.name in df.columns]
        records = _records(df, cols, table.name)
        if records:
            with self.engine().begin() as conn:
                if run_id is not None and "partition_key" in df:
                    from ..partition_lease import verify

                    verify(conn, [str(k) for k in df["partition_key"].unique()], run_id)
                conn.execute(table.insert(), records)
        return len(records)

    def existing_values(self, model: Type[SQLModel], column: str, partition_keys: Iterable[str], **equal) -> set:
        """Distinct values of ``column`` among the rows of ``partition_keys`` (and ``equal`` filters)."""
        table = model.__table__
        if column not in table.c or any(k not in table.c for k in equal):  # an axis: read from attributes
            stored = _stored_columns(table, [column, *equal])
            q = sa.select(*[table.c[c] for c in stored]).where(table.c.partition_key.in_(_keys(partition_keys)))
            with self.engine().connect() as conn:
                df = unpack(pd.read_sql(self._scoped(table, q.distinct()), conn))
            for k, v in equal.items():
                df = df[df[k] == _keys([v])[0]] if k in df else df.iloc[:0]
            return set(df[column]) if column in df else set()
        q = self._scoped(
            table, sa.select(table.c[column]).where(table.c.partition_key.in_(_keys(partition_keys))).distinct()
        )
        for k, v in equal.items():
            q = q.where(table.c[k] == _keys([v])[0])
        with self.engine().connect() as conn:
            return {r[0] for r in conn.execute(q)}

    def archive_audit(
        self, partition_key: str, audit_id: str, headline: pd.DataFrame, provenance_id: str = "", audit_base: str = ""
    ) -> int:
        """Keep ``headline`` (core.scoring.drift.headline_metrics) as the record of audit ``audit_id`` of
        ``partition_key``; rerunning the same audit replaces its record, other audits stay."""
        table = AuditMetric.__table__
        frame = headline.assign(
            partition_key=partition_key,
            audit_id=audit_id,
            provenance_id=provenance_id,
            recorded_at=_now(),
            audit_base=audit_base or audit_id,
        )
        records = _records(
            frame,
            [
                "partition_key",
                "audit_id",
                "audit_base",
                "provenance_id",
                "recorded_at",
                "scope",
                "group_by",
                "group",
                "metric",
                "value",
            ],
            table.name,
        )
        partition_key, audit_id = _keys([partition_key, audit_id])
        with self.engine().begin() as conn:
            conn.execute(table.delete().where(table.c.partition_key == partition_key, table.c.audit_id == audit_id))
            if records:
                conn.execute(table.insert(), records)
        return len(records)

    def audit_history(self, partition_key: str) -> pd.DataFrame:
        """Every archived audit of ``partition_key``: its headline rows with ``recorded_at``."""
        table = AuditMetric.__table__
        q = (
            sa.select(table)
            .where(table.c.partition_key == _keys([partition_key])[0])
            .order_by(table.c.recorded_at, table.c.id)
        )
        with self.engine().connect() as conn:
            return pd.read_sql(q, conn)

    def read_tag_cache(self, tagger: str, programs: Iterable[str]) -> dict[str, tuple[str, ...]]:
        """Cached tags of ``tagger`` for the given normalised program names."""
        table = SubjectTagCache.__table__
        names = list(dict.fromkeys(_keys(p for p in programs if p)))
        out: dict[str, tuple[str, ...]] = {}
        with self.engine().connect() as conn:
            for start in range(0, len(names), 5000):
                chunk = names[start : start + 5000]
                q = sa.select(table.c.program_norm, table.c.tags).where(
                    (table.c.tagger == tagger) & table.c.program_norm.in_(chunk)
                )
                out.update({p: tuple(json.loads(t)) for p, t in conn.execute(q)})
        return out

    def write_tag_cache(self, tagger: str, tags: dict[str, tuple[str, ...]]) -> int:
        """Add cache entries (existing ones for the same program and tagger are kept)."""
        if not tags:
            return 0
        table = SubjectTagCache.__table__
        stored = {k: t for k, t in zip(_keys(tags), tags.values(), strict=False)}  # keys as the database stores them
        existing = self.read_tag_cache(tagger, stored.keys())
        new = [
            {"program_norm": p, "tagger": tagger, "tags": json.dumps(list(t)), "created_at": _now()}
            for p, t in stored.items()
            if p not in existing
        ]
        if new:
            with self.engine().begin() as conn:  # another run may cache the same program meanwhile: kept once
                for start in range(0, len(new), 5000):
                    _insert_ignoring_duplicates(conn, table, new[start : start + 5000])
        return len(new)

    def record_outcomes(self, run_id: str, asset: str, outcomes: dict[str, tuple[str, str]]) -> None:
        """Record ``{partition key: (status, reason)}`` of ``asset`` in run ``run_id`` (PartitionOutcome)."""
        rows = [
            {
                "run_id": run_id,
                "partition_key": k,
                "asset": asset,
                "status": status,
                "reason": reason[:4000],
                "recorded_at": _now(),
            }
            for k, (status, reason) in outcomes.items()
        ]
        rows = [dict(zip(r, _keys(r.values()), strict=False)) for r in rows]
        if rows:
            with self.engine().begin() as conn:
                _insert_ignoring_duplicates(conn, PartitionOutcome.__table__, rows)

    def run_outcomes(self, run_id: str) -> pd.DataFrame:
        """The partitions of run ``run_id`` that an asset failed, skipped or blocked, in order."""
        table = PartitionOutcome.__table__
        q = sa.select(table).where(table.c.run_id == run_id).order_by(table.c.recorded_at, table.c.partition_key)
        with self.engine().connect() as conn:
            return pd.read_sql(q, conn)

    def count(self, model: Type[SQLModel]) -> int:
        table = model.__table__
        with self.engine().connect() as conn:
            return int(conn.execute(sa.select(sa.func.count()).select_from(table)).scalar_one())

    def dispose(self) -> None:
        if self._engine is not None:
            self._engine.dispose()
            self._engine = None
