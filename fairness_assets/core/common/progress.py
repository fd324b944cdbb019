"""Progress of long steps: done/total, elapsed time and ETA, logged at a bounded rate.

Framework-free: the caller passes the function that writes a line (an asset's ``context.log.info``,
``print``, a list's ``append``). Every line starts with the step's name and the word ``progress``,
so the command line's compact console (:mod:`fairness_assets.console`) can show it in place.

    progress = Progress("audit_statistics", total=len(parts), log=context.log.info, unit="partition")
    for key, part in parts:
        ...
        progress.advance(detail=key)
    progress.finish()
"""

from __future__ import annotations

import time
from typing import Callable, Optional

EVERY_S = 5.0  # at most one line every 5 s (the first and the last are always written)
MARK = "progress"


def duration(seconds: float) -> str:
    """``42 s``, ``3 min 05 s``, ``1 h 02 min``."""
    s = max(0, int(round(seconds)))
    if s < 60:
        return f"{s} s"
    if s < 3600:
        return f"{s // 60} min {s % 60:02d} s"
    return f"{s // 3600} h {(s % 3600) // 60:02d} min"


def progress_line(what: str, done: int, total: int, elapsed_s: float, unit: str = "item", detail: str = "") -> str:
    """``what progress: done/total unit(s) (pct), elapsed, ETA`` (the ETA from the mean time per unit so far)."""
    if total < 0 or done < 0:
        raise ValueError(f"progress of {what}: done ({done}) and total ({total}) must not be negative")
    pct = f" ({done / total:.0%})" if total else ""
    plural = unit if total == 1 else unit + "s"
    line = f"{what} {MARK}: {done}/{total} {plural}{pct}, {duration(elapsed_s)} elapsed"
    if 0 < done < total:
        line += f", ETA {duration(elapsed_s / done * (total - done))}"
    elif done >= total:
        line += ", done"
    return line + (f" ({detail})" if detail else "")


class Progress:
    """Counts done units of a step of known size and logs :func:`progress_line` at most every ``every_s``
    seconds, always at the first unit and at :meth:`finish`. ``clock`` is injectable for tests."""

    def __init__(
        self,
        what: str,
        total: int,
        log: Callable[[str], object],
        unit: str = "item",
        every_s: float = EVERY_S,
        clock: Callable[[], float] = time.monotonic,
    ):
        if total < 0:
            raise ValueError(f"progress of {what}: total must not be negative, got {total}")
        self.what, self.total, self.log, self.unit, self.every_s, self.clock = (
            what,
            int(total),
            log,
            unit,
            every_s,
            clock,
        )
        self.done = 0
        self.t0 = clock()
        self._last: Optional[float] = None
        self._finished = self._said_done = False

    def advance(self, n: int = 1, detail: str = "") -> None:
        """``n`` more units done; logs a line when the last one is at least ``every_s`` old."""
        self.done = min(self.total, self.done + n) if self.total else self.done + n
        now = self.clock()
        if self._last is None or now - self._last >= self.every_s:
            self._last = now
            self._said_done = self.done >= self.total
            self.log(progress_line(self.what, self.done, self.total, now - self.t0, self.unit, detail))

    def finish(self, detail: str = "") -> None:
        """The last line (once): every unit done, with the whole elapsed time."""
        if self._finished:
            return
        self._finished = True
        if self._said_done and not detail:
            return  # the last unit's line already said "done"
        self.done = max(self.done, self.total)
        self.log(progress_line(self.what, self.done, self.total, self.clock() - self.t0, self.unit, detail))
