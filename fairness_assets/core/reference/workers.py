"""Work on many partitions in worker processes, under the caller's design (issue 36).

The CPU-bound steps of an audit (drawing a partition's figures, its statistics) run one partition a
job. :func:`map_partitions` runs ``fn(job)`` for every job, in order, in ``workers`` processes:

- the workers are started with ``spawn`` (no fork of a process that may hold threads and locks) and
  kept for the life of the process, so each process pays their start-up (importing pandas, matplotlib,
  scipy: seconds) once, not once a step;
- every job runs under the caller's active design (core/reference/axes.py): the catalogue and the
  design travel with the job, so a worker draws and tests the design's axes, not the study's (before
  this module, a spawned figure worker drew the study's figures for any design);
- with ``errors="return"``, a job that raises comes back as a :class:`JobFailed` in its place (the
  others are kept: a partition that fails fails alone); otherwise the first failure is raised;
- one worker, or one job, runs in the caller's process;
- a worker ends when the process that started it is gone (a run killed with SIGKILL leaves none behind).

The results are what ``fn`` returns in the caller's process: the jobs are pure functions of their
inputs (the statistics' random generators are seeded per partition).
"""

from __future__ import annotations

import multiprocessing
import os
import pickle
import threading
import time
import traceback
from collections import deque
from concurrent.futures import ProcessPoolExecutor
from concurrent.futures.process import BrokenProcessPool
from dataclasses import dataclass
from typing import Any, Callable, Iterable, Iterator, Literal

from . import axes

_lock = threading.Lock()
_pools: dict[int, ProcessPoolExecutor] = {}
_owner: list[int] = []  # the pid of the process that started the pools


@dataclass(frozen=True)
class JobFailed:
    """A job that raised in a worker: the exception (or a RuntimeError naming it, where it could not be
    sent back) and the worker's traceback as text."""

    error: BaseException
    traceback: str

    def reraise(self) -> None:
        """Raise the job's exception here, its worker traceback attached as the cause."""
        raise self.error from RemoteTraceback(self.traceback)


class RemoteTraceback(Exception):
    """The traceback of a job that failed in a worker process."""

    def __str__(self) -> str:
        return "\n" + str(self.args[0]) if self.args else ""


def _run(task: tuple) -> Any:
    fn, job, catalogue, design, keep_errors = task
    try:
        if design is not None:
            with axes.use_design(design):
                return fn(job)
        with axes.use(catalogue):
            return fn(job)
    except Exception as exc:  # noqa: BLE001 - sent back in the job's place
        if not keep_errors:
            raise
        text = traceback.format_exc()
        try:
            pickle.loads(pickle.dumps(exc))
        except Exception:  # noqa: BLE001 - an exception that cannot travel: its name and message can
            exc = RuntimeError(f"{type(exc).__name__}: {exc}")
        return JobFailed(exc, text)


def _exit_with(parent: int) -> None:
    """In a worker: end this process when ``parent`` is gone (a run killed with SIGKILL runs no exit
    handler, and a worker holds its own end of the job queue, so it would wait for jobs for ever)."""

    def watch() -> None:
        while os.getppid() == parent:
            time.sleep(1.0)
        os._exit(1)

    threading.Thread(target=watch, name="parent-watch", daemon=True).start()


def _pool(workers: int) -> ProcessPoolExecutor:
    with _lock:
        if _owner and _owner[0] != os.getpid():
            # a fork of the process that started the workers: its pools belong to the parent (their
            # threads did not come along), so this process starts its own
            _pools.clear()
        _owner[:] = [os.getpid()]
        pool = _pools.get(workers)
        if pool is None:
            pool = ProcessPoolExecutor(
                max_workers=workers,
                mp_context=multiprocessing.get_context("spawn"),
                initializer=_exit_with,
                initargs=(os.getpid(),),
            )
            _pools[workers] = pool
        return pool


def _discard(workers: int, pool: ProcessPoolExecutor) -> None:
    with _lock:
        if _pools.get(workers) is pool:
            del _pools[workers]
    pool.shutdown(wait=False, cancel_futures=True)


def shutdown() -> None:
    """Stop every worker process this process started (they stop at its exit anyway)."""
    with _lock:
        pools = list(_pools.values()) if _owner == [os.getpid()] else []
        _pools.clear()
    for pool in pools:
        pool.shutdown(wait=True, cancel_futures=True)


def iter_partitions(
    fn: Callable[[Any], Any],
    jobs: Iterable[Any],
    *,
    workers: int,
    errors: Literal["raise", "return"] = "raise",
) -> Iterator:
    """``fn(job)`` for each of ``jobs``, in their order, each as soon as it and the ones before it are
    done (a caller shows progress); in ``workers`` processes (see the module's docstring). ``jobs`` may
    be lazy: at most two jobs a worker are read ahead of the results taken.

    ``fn`` must be a module-level function and every job picklable. With ``errors="return"`` a job
    that raises gives a :class:`JobFailed` in its place; a worker process that dies (killed, out of
    memory) raises ``BrokenProcessPool``, and the next call starts new workers."""
    if errors not in ("raise", "return"):
        raise ValueError(f"errors must be 'raise' or 'return', got {errors!r}")
    keep = errors == "return"
    workers = max(1, int(workers))
    if hasattr(jobs, "__len__"):
        workers = max(1, min(workers, len(jobs)))
    catalogue, design = axes.current(), axes.current_design()
    if workers == 1:
        for job in jobs:
            yield _run((fn, job, catalogue, design, keep))
        return
    pool = _pool(workers)
    # a window of jobs in flight: the caller's lazy ``jobs`` (one partition read at a time) are read
    # only as far ahead as the workers can use, so memory stays that of a few partitions
    pending: deque = deque()
    try:
        for job in jobs:
            pending.append(pool.submit(_run, (fn, job, catalogue, design, keep)))
            if len(pending) >= 2 * workers:
                yield pending.popleft().result()
        while pending:
            yield pending.popleft().result()
    except BrokenProcessPool:
        _discard(workers, pool)
        raise
    finally:
        for future in pending:
            future.cancel()


def map_partitions(
    fn: Callable[[Any], Any],
    jobs: Iterable[Any],
    *,
    workers: int,
    errors: Literal["raise", "return"] = "raise",
) -> list:
    """``[fn(job) for job in jobs]``: :func:`iter_partitions`, all at once."""
    return list(iter_partitions(fn, jobs, workers=workers, errors=errors))
