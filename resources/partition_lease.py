"""One writer per partition: a lease in the results database.

Two runs of the same model x template partition started at once (two responses files, or two
audits) would otherwise interleave: run A stores its generations, run B replaces them, and A's
downstream steps score B's answers. Every step of a run that reads or writes a partitioned
table first claims the partition for its run id; a second run that finds the partition held
by a live run fails before it reads or writes anything, naming the run that holds it.

A lease is stale, and is taken over, when any of these holds:

- the holding run is known to this Dagster instance and has finished (success, failure,
  cancellation);
- the holding process ran on this host and is gone (a killed run can be resumed at once), or it
  is this very process and the holding thread is this one or has ended (in-process runs one
  after the other: tests, notebooks, the command line);
- its run is unknown to this Dagster instance and the lease has not been renewed for
  ``FAIRNESS_PARTITION_LEASE_TTL_S`` seconds (default 600: a run of another instance, on another
  host, that stopped without finishing). A run this instance reports as running keeps its lease
  (cancel it, or mark it failed, in the UI to release it). Long steps renew it as they go (the
  generation engine at every committed batch).

Every claim renews the lease, so the steps of one run (one process each with the multiprocess
executor) share it. Claims are compare-and-swap updates in one transaction, on SQLite and
PostgreSQL alike.

Every lease carries a token, given to the run that claimed the partition and kept with the run
(``partition_lease_grant``). A run that held a partition and finds it held by another run has lost
it (it was paused or stopped past the TTL and another run took the partition over): it fails at
once with :class:`LeaseLostError`, naming the run that took it, and never claims it back, even when
that run has finished since. Writes are fenced: :func:`verify` runs inside the transaction that
stores a partition's rows (the results IO manager, the generation engine's commits) and refuses the
commit unless the run still holds the token it was given. A run whose own lease expired while no
other run took it renews it with a warning: nothing was written by anyone else meanwhile.
"""

from __future__ import annotations

import logging
import os
import socket
import threading
import uuid
import weakref
from datetime import datetime, timedelta, timezone
from typing import Callable, Iterable, Optional

import sqlalchemy as sa
from sqlmodel import Field, SQLModel

GRANT_KEEP = timedelta(days=30)  # a grant older than this (and older than 100 TTLs) is pruned on takeover

log = logging.getLogger(__name__)


class PartitionBusyError(RuntimeError):
    """Another live run holds the partition."""


class LeaseLostError(PartitionBusyError):
    """This run held the partition, and another run has taken it over since."""


class PartitionLease(SQLModel, table=True):
    __tablename__ = "partition_lease"

    partition_key: str = Field(primary_key=True)
    run_id: str
    host: str = ""
    pid: int = 0
    thread_id: int = Field(default=0, sa_type=sa.BigInteger)  # threading.get_ident() exceeds INTEGER
    renewed_at: datetime
    # the holder's token (migration 0005); '' for a lease written before tokens
    token: str = Field(default="", sa_column_kwargs={"server_default": ""})


class PartitionLeaseGrant(SQLModel, table=True):
    """Which run was given which partition with which token: kept after a takeover, so that the
    run that lost the partition knows it lost it (migration 0005)."""

    __tablename__ = "partition_lease_grant"

    partition_key: str = Field(primary_key=True)
    run_id: str = Field(primary_key=True)
    token: str
    granted_at: datetime


def lease_ttl_s() -> float:
    """FAIRNESS_PARTITION_LEASE_TTL_S through the settings model (ConfigError naming a bad value)."""
    from resources.settings import load_settings

    return float(load_settings().partition_lease_ttl_s)


def _pid_alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def _aware(ts: datetime) -> datetime:
    return ts if ts.tzinfo else ts.replace(tzinfo=timezone.utc)


def run_status_from(instance) -> Callable[[str], Optional[bool]]:
    """``run_id -> True (running) / False (finished) / None (unknown to this instance)``."""

    def status(run_id: str) -> Optional[bool]:
        if instance is None:
            return None
        try:
            run = instance.get_run_by_id(run_id)
        except Exception:  # noqa: BLE001 - an unreachable instance tells nothing
            return None
        if run is None:
            return None
        return not run.is_finished

    return status


_READY: "weakref.WeakSet[sa.Engine]" = weakref.WeakSet()


def _ensure_tables(engine: sa.Engine) -> None:
    """The lease tables on an engine that was not opened through ResultsDatabase (whose migrations
    make them): created if missing, once per engine."""
    if engine not in _READY:
        PartitionLease.__table__.create(engine, checkfirst=True)
        PartitionLeaseGrant.__table__.create(engine, checkfirst=True)
        _READY.add(engine)


def _lost(key: str, run_id: str, row) -> LeaseLostError:
    when = _aware(row["renewed_at"]).strftime("%Y-%m-%d %H:%M:%S UTC")
    return LeaseLostError(
        f"partition {key}: run {run_id} lost its lease: run {row['run_id']} took the partition over "
        f"(its lease last renewed {when}) while this run was paused or stopped for longer than the lease TTL "
        "(FAIRNESS_PARTITION_LEASE_TTL_S). This run stops here so that it never stores or reports that run's "
        "rows as its own; launch it again to audit the partition anew."
    )


def holders(engine: sa.Engine, keys: Iterable[str]) -> dict[str, str]:
    """``{partition key: run id}`` of the run holding each of ``keys`` now (a key nobody holds is
    left out): what a command that ran several runs reads to tell which partitions another run took
    over meanwhile."""
    _ensure_tables(engine)
    table = PartitionLease.__table__
    wanted = list(dict.fromkeys(keys))
    out: dict[str, str] = {}
    with engine.connect() as conn:
        for start in range(0, len(wanted), 500):
            chunk = wanted[start : start + 500]
            q = sa.select(table.c.partition_key, table.c.run_id).where(table.c.partition_key.in_(chunk))
            out.update({k: r for k, r in conn.execute(q)})
    return out


def _lock_lease(conn, table, key: str):
    """The lease row of ``key``, locked for this transaction on PostgreSQL (SQLite's writer lock is
    taken by the first write)."""
    q = sa.select(table).where(table.c.partition_key == key)
    if conn.dialect.name == "postgresql":
        q = q.with_for_update()
    return conn.execute(q).mappings().first()


def claim(
    engine: sa.Engine,
    keys: Iterable[str],
    run_id: str,
    run_is_active: Callable[[str], Optional[bool]] = lambda _: None,
    ttl_s: Optional[float] = None,
    warn: Optional[Callable[[str], None]] = None,
) -> None:
    """Claim (or renew) every partition in ``keys`` for ``run_id``.

    Raises :class:`PartitionBusyError` when a live run holds one, :class:`LeaseLostError` when this
    run held one and another run has taken it over since.
    """
    table, grants = PartitionLease.__table__, PartitionLeaseGrant.__table__
    _ensure_tables(engine)
    ttl = lease_ttl_s() if ttl_s is None else ttl_s
    warn = warn or log.warning
    me = {"run_id": run_id, "host": socket.gethostname(), "pid": os.getpid(), "thread_id": threading.get_ident()}
    for key in sorted({k for k in keys if k}):
        for _ in range(20):
            now = datetime.now(timezone.utc)
            try:
                with engine.begin() as conn:
                    row = _lock_lease(conn, table, key)
                    grant = conn.execute(
                        sa.select(grants.c.token).where(grants.c.partition_key == key, grants.c.run_id == run_id)
                    ).first()
                    if row is None:
                        token = grant[0] if grant else uuid.uuid4().hex
                        conn.execute(table.insert().values(partition_key=key, renewed_at=now, token=token, **me))
                        if not grant:
                            conn.execute(
                                grants.insert().values(partition_key=key, run_id=run_id, token=token, granted_at=now)
                            )
                        break
                    if row["run_id"] == run_id:
                        token = row["token"] or (grant[0] if grant else uuid.uuid4().hex)
                        if grant is None:  # a lease of the release before tokens: give it one
                            conn.execute(
                                grants.insert().values(partition_key=key, run_id=run_id, token=token, granted_at=now)
                            )
                        age = (now - _aware(row["renewed_at"])).total_seconds()
                        conn.execute(
                            table.update()
                            .where(table.c.partition_key == key, table.c.run_id == run_id)
                            .values(renewed_at=now, token=token, **me)
                        )
                        if age > ttl:
                            warn(
                                f"partition {key}: the lease of run {run_id} was not renewed for {age:.0f} s (more "
                                f"than the {ttl:.0f} s TTL); no other run took the partition over, so nothing was "
                                "written by another run meanwhile: lease renewed"
                            )
                        break
                    if grant is not None:  # this run held it, another run holds it now
                        raise _lost(key, run_id, row)
                    _refuse_if_live(key, row, run_is_active, ttl, now)
                    token = uuid.uuid4().hex
                    done = conn.execute(
                        table.update()
                        .where(table.c.partition_key == key, table.c.run_id == row["run_id"])
                        .values(renewed_at=now, token=token, **me)
                    ).rowcount
                    if done == 1:
                        conn.execute(
                            grants.insert().values(partition_key=key, run_id=run_id, token=token, granted_at=now)
                        )
                        keep = max(GRANT_KEEP, timedelta(seconds=100 * ttl))
                        conn.execute(
                            grants.delete().where(grants.c.partition_key == key, grants.c.granted_at < now - keep)
                        )
                        break
            except sa.exc.IntegrityError:
                continue  # another run inserted the lease first: look again
            except sa.exc.OperationalError as exc:
                if "locked" not in str(exc).lower():
                    raise
                continue
        else:
            raise PartitionBusyError(
                f"partition {key}: could not claim it for run {run_id} (other runs kept taking it)"
            )


def verify(conn: sa.Connection, keys: Iterable[str], run_id: str) -> None:
    """Inside a write transaction: refuse the write unless ``run_id`` still holds every partition
    of ``keys`` with the token it was given (LeaseLostError naming the run that holds it now).
    On PostgreSQL the lease rows stay locked until the transaction ends, so no takeover can slip
    in between this check and the commit."""
    table, grants = PartitionLease.__table__, PartitionLeaseGrant.__table__
    for key in sorted({k for k in keys if k}):
        row = _lock_lease(conn, table, key)
        grant = conn.execute(
            sa.select(grants.c.token).where(grants.c.partition_key == key, grants.c.run_id == run_id)
        ).first()
        if row is None or grant is None:
            raise PartitionBusyError(
                f"partition {key}: run {run_id} writes it without holding its lease "
                "(claim it first: resources/partition_lease.claim)"
            )
        if row["run_id"] != run_id or (row["token"] and row["token"] != grant[0]):
            raise _lost(key, run_id, row)


def _refuse_if_live(key: str, row, run_is_active, ttl: float, now: datetime) -> None:
    holder, age = row["run_id"], (now - _aware(row["renewed_at"])).total_seconds()
    active = run_is_active(holder)
    if active is False:
        return  # the holding run finished
    if row["host"] == socket.gethostname() and row["pid"]:
        if not _pid_alive(int(row["pid"])):
            return  # its process is gone: a killed run
        if int(row["pid"]) == os.getpid():  # an earlier in-process run (tests, notebooks, the CLI)
            holder_thread = int(row["thread_id"] or 0)
            if holder_thread == threading.get_ident() or holder_thread not in {t.ident for t in threading.enumerate()}:
                return  # the same thread runs one run at a time; a finished thread holds nothing
    if not active and age > ttl:
        return  # a run this instance does not know, not renewed for longer than the TTL
    where = (
        "running in this Dagster instance; cancel it in the UI if it is stuck"
        if active
        else (
            f"process {row['pid']} on {row['host']}, renewed {age:.0f} s ago; a lease not renewed for {ttl:.0f} s "
            "(FAIRNESS_PARTITION_LEASE_TTL_S) is taken over"
        )
    )
    raise PartitionBusyError(
        f"partition {key} is being written by run {holder} ({where}). Two runs of one partition at once would "
        "score each other's answers: wait for that run to finish, or cancel it, then launch this one again."
    )


# ----------------------------------------------------------------------------- renewals
_BEATS: dict[tuple[str, str], "_Heartbeat"] = {}
_BEATS_LOCK = threading.Lock()


class _Heartbeat(threading.Thread):
    """Renews the leases a run holds, every third of the TTL, until the run has finished, the
    process ends (daemon thread), or the run no longer holds them (lost, or taken over after it
    finished). A long step (statistics of a large partition, a model load) keeps its leases alive
    between its reads and writes."""

    def __init__(self, engine: sa.Engine, run_id: str, interval_s: float, finished: Callable[[], bool]):
        super().__init__(name=f"lease-heartbeat-{run_id[:8]}", daemon=True)
        self.engine, self.run_id, self.interval_s, self.finished = engine, run_id, interval_s, finished
        self.keys: set[str] = set()
        self.stop = threading.Event()

    def run(self) -> None:
        table = PartitionLease.__table__
        while not self.stop.wait(self.interval_s):
            try:
                if self.finished():
                    break
                with self.engine.begin() as conn:
                    held = conn.execute(
                        table.update()
                        .where(table.c.partition_key.in_(sorted(self.keys)), table.c.run_id == self.run_id)
                        .values(renewed_at=datetime.now(timezone.utc))
                    ).rowcount
                if not held:
                    break
            except Exception as exc:  # noqa: BLE001 - a renewal that fails is retried at the next beat
                log.warning("lease renewal of run %s failed: %s", self.run_id, exc)
        with _BEATS_LOCK:
            if _BEATS.get((str(self.engine.url), self.run_id)) is self:
                del _BEATS[(str(self.engine.url), self.run_id)]


def keep_alive(
    engine: sa.Engine, keys: Iterable[str], run_id: str, finished: Callable[[], bool], ttl_s: Optional[float] = None
) -> None:
    """Renew ``run_id``'s leases of ``keys`` in the background until ``finished()`` is true (one
    thread per run and database, whatever the number of partitions)."""
    keys = {k for k in keys if k}
    if not keys:
        return
    ttl = lease_ttl_s() if ttl_s is None else ttl_s
    with _BEATS_LOCK:
        beat = _BEATS.get((str(engine.url), run_id))
        if beat is None or not beat.is_alive():
            beat = _Heartbeat(engine, run_id, max(0.2, min(60.0, ttl / 3)), finished)
            _BEATS[(str(engine.url), run_id)] = beat
            beat.keys |= keys
            beat.start()
        else:
            beat.keys |= keys


def run_finished_from(instance, run_id: str) -> Callable[[], bool]:
    """``() -> True`` once ``run_id`` has finished in ``instance`` (or is unknown to it)."""

    def finished() -> bool:
        try:
            run = instance.get_run_by_id(run_id) if instance is not None else None
        except Exception:  # noqa: BLE001 - an unreachable instance: keep renewing
            return False
        return run is None or run.is_finished

    return finished
