"""Keep a serving engine saturated: many requests in flight, answers handed back as they finish.

``stream_async(call, items, concurrency=..., requests_per_s=...)`` runs ``call(item)`` (a
coroutine function) for every item on an asyncio loop in a background thread, with at most
``concurrency`` calls in flight (backpressure: a new request starts only when one finishes), an
optional request-rate limit (hosted APIs), and yields ``(index, result)`` in completion order
to the caller's thread, so the caller can commit finished samples while the rest are still
being generated. Results come in lists: everything that finished since the caller last asked. A
serving engine (vLLM, TGI) reaches its throughput only with hundreds of sequences in flight; a
step-by-step "send a batch, wait for its slowest answer" loop does not.

If a call fails (after the HTTP client's own retries), no new call starts, the calls in flight
are cancelled and awaited (no task or future is left with an exception nobody retrieves),
everything that finished before is still yielded, and then the error is raised:
what was committed stays committed and a rerun resumes from there. Closing the iterator early
(the caller failed) cancels the calls in flight as well.
"""

from __future__ import annotations

import asyncio
import queue
import threading
import time
from typing import Any, Awaitable, Callable, Iterable, Iterator, Optional

_DONE = object()


class RateLimiter:
    """At most ``per_s`` request starts per second (evenly spaced); ``None`` or 0: no limit."""

    def __init__(self, per_s: Optional[float]):
        self.interval = 1.0 / per_s if per_s else 0.0
        self._next = 0.0
        self._lock: Optional[asyncio.Lock] = None

    async def wait(self) -> None:
        if not self.interval:
            return
        if self._lock is None:
            self._lock = asyncio.Lock()
        async with self._lock:
            now = time.monotonic()
            start = max(now, self._next)
            self._next = start + self.interval
        if start > now:
            await asyncio.sleep(start - now)


def stream_async(
    call: Callable[[Any], Awaitable[Any]],
    items: Iterable[Any],
    *,
    concurrency: int = 256,
    requests_per_s: Optional[float] = None,
    setup: Optional[Callable[[], Awaitable[Any]]] = None,
    teardown: Optional[Callable[[Any], Awaitable[None]]] = None,
) -> Iterator[list[tuple[int, Any]]]:
    """Yield lists of ``(index, call(item))`` as calls finish; see the module docstring.

    ``setup`` (optional) runs first on the loop and its result is passed as ``call(item, state)``
    (e.g. an async HTTP client bound to the loop); ``teardown(state)`` runs at the end.
    """
    items = list(items)
    results: "queue.Queue" = queue.Queue()
    stop = threading.Event()
    loop = asyncio.new_event_loop()
    limiter = RateLimiter(requests_per_s)

    async def worker(next_index, state) -> None:
        while not stop.is_set():
            try:
                i = next(next_index)
            except StopIteration:
                return
            await limiter.wait()
            try:
                out = await (call(items[i], state) if setup is not None else call(items[i]))
            except asyncio.CancelledError:
                raise
            except BaseException as exc:  # noqa: BLE001 - handed to the caller's thread
                stop.set()
                results.put(("error", i, exc))
                return
            results.put(("ok", i, out))

    async def main() -> None:
        state = await setup() if setup is not None else None
        try:
            next_index = iter(range(len(items)))
            tasks = [
                asyncio.ensure_future(worker(next_index, state)) for _ in range(max(1, min(concurrency, len(items))))
            ]
            watcher = asyncio.ensure_future(_watch(stop))
            # return_exceptions: a worker cancelled below is a result of this gather, not an exception nobody
            # retrieves ("_GatheringFuture exception was never retrieved")
            workers = asyncio.gather(*tasks, return_exceptions=True)
            await asyncio.wait([workers, watcher], return_when=asyncio.FIRST_COMPLETED)
            for t in (*tasks, watcher):
                if not t.done():
                    t.cancel()
            await asyncio.gather(workers, watcher, return_exceptions=True)  # every task awaited before teardown
        finally:
            if teardown is not None:
                await teardown(state)

    def run() -> None:
        asyncio.set_event_loop(loop)
        try:
            loop.run_until_complete(main())
        except BaseException as exc:  # noqa: BLE001 - setup failed: hand it over
            results.put(("error", -1, exc))
        finally:
            loop.close()
            results.put(_DONE)

    thread = threading.Thread(target=run, name="llm-requests", daemon=True)
    thread.start()
    error = None
    finished = False
    try:
        while not finished:
            batch, failed, finished = _ready(results)
            error = error or failed
            if batch:
                yield batch
    finally:
        stop.set()
        thread.join()
    if error is not None:
        raise error


def _ready(results: "queue.Queue") -> tuple[list[tuple[int, Any]], Optional[BaseException], bool]:
    """Wait for one result, then take whatever else is ready: (the finished calls, the first
    error among them or None, whether the loop has finished)."""
    batch: list[tuple[int, Any]] = []
    error = None
    got = results.get()
    while True:
        if got is _DONE:
            return batch, error, True
        kind, i, value = got
        if kind == "error":
            error = error or value
        else:
            batch.append((i, value))
        try:
            got = results.get_nowait()
        except queue.Empty:
            return batch, error, False


async def _watch(stop: threading.Event) -> None:
    """Finishes when ``stop`` is set from either thread (a failure, or the caller closed the stream)."""
    while not stop.is_set():
        await asyncio.sleep(0.05)
