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
"""

from __future__ import annotations

import os
import socket
import threading
from datetime import datetime, timezone
from typing import Callable, Iterable, Optional

import sqlalchemy as sa
from sqlmodel import Field, SQLModel

DEFAULT_TTL_S = 600.0


class PartitionBusyError(RuntimeError):
    """Another live run holds the partition."""


class PartitionLease(SQLModel, table=True):
    __tablename__ = "partition_lease"

    partition_key: str = Field(primary_key=True)
    run_id: str
    host: str = ""
    pid: int = 0
    thread_id: int = Field(default=0, sa_type=sa.BigInteger)  # threading.get_ident() exceeds INTEGER
    renewed_at: datetime


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


def claim(engine: sa.Engine, keys: Iterable[str], run_id: str,
          run_is_active: Callable[[str], Optional[bool]] = lambda _: None, ttl_s: Optional[float] = None) -> None:
    """Claim (or renew) every partition in ``keys`` for ``run_id``; raises PartitionBusyError."""
    table = PartitionLease.__table__
    table.create(engine, checkfirst=True)
    ttl = lease_ttl_s() if ttl_s is None else ttl_s
    me = {"run_id": run_id, "host": socket.gethostname(), "pid": os.getpid(), "thread_id": threading.get_ident()}
    for key in sorted({k for k in keys if k}):
        for _ in range(20):
            now = datetime.now(timezone.utc)
            try:
                with engine.begin() as conn:
                    row = conn.execute(sa.select(table).where(table.c.partition_key == key)).mappings().first()
                    if row is None:
                        conn.execute(table.insert().values(partition_key=key, renewed_at=now, **me))
                        break
                    if row["run_id"] != run_id:
                        _refuse_if_live(key, row, run_is_active, ttl, now)
                    done = conn.execute(
                        table.update().where(table.c.partition_key == key, table.c.run_id == row["run_id"])
                        .values(renewed_at=now, **me)).rowcount
                    if done == 1:
                        break
            except sa.exc.IntegrityError:
                continue  # another run inserted the lease first: look again
            except sa.exc.OperationalError as exc:
                if "locked" not in str(exc).lower():
                    raise
                continue
        else:
            raise PartitionBusyError(f"partition {key}: could not claim it for run {run_id} (other runs kept taking it)")


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
    where = "running in this Dagster instance; cancel it in the UI if it is stuck" if active else (
        f"process {row['pid']} on {row['host']}, renewed {age:.0f} s ago; a lease not renewed for {ttl:.0f} s "
        "(FAIRNESS_PARTITION_LEASE_TTL_S) is taken over")
    raise PartitionBusyError(
        f"partition {key} is being written by run {holder} ({where}). Two runs of one partition at once would "
        "score each other's answers: wait for that run to finish, or cancel it, then launch this one again.")
