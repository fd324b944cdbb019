"""The command line's console: one compact line per asset step.

``fairness-audit demo``, ``run``, ``score`` and ``gate`` run Dagster jobs in process. Dagster's own
event stream (about 200 lines for the demo's one partition, most of them DEBUG) goes in full to
the command's log file; the console gets, per step:

- while it runs, its latest message (progress lines included) **updated in place** on a terminal;
  in a log (CI, a pipe: not a terminal) the progress lines of a step that has run for 5 s or more are
  appended as they come (at most one every 5 s: :class:`fairness_assets.core.common.progress.Progress`);
  a quick step writes its final line only;
- when it ends, **one line**: ``ok``/``FAILED``, the step, its time, the rows it stored per table,
  its checks (passed / failed, by name) and its last message;
- warnings and errors at once, on their own line, a failure with its one-line cause.

``verbose``: every event in full at DEBUG and up (Dagster's stream, stack traces included).
"""

from __future__ import annotations

import datetime as _dt
import logging
import re
import shutil
import sys
import time
from dataclasses import dataclass, field
from typing import Callable, Optional, TextIO

from fairness_assets.core.common.text import trim

STORED = re.compile(r"^stored ([\d,]+) row\(s\) of (\S+) in table ")
PROGRESS = re.compile(r"^\S+ progress: ")
LAST_CHARS = 160
QUIET_S = 5.0  # not a terminal: a step's progress lines are appended once it has run this long


@dataclass
class _Step:
    started: float
    stored: list[tuple[str, int]] = field(default_factory=list)
    passed: list[str] = field(default_factory=list)
    failed: list[str] = field(default_factory=list)
    last: str = ""


def _seconds(s: float) -> str:
    return f"{s:.1f} s" if s < 60 else f"{int(s // 60)} min {int(s % 60):02d} s"


class CompactConsole(logging.Handler):
    """A logging handler for Dagster's run loggers that writes the compact console described above.

    It takes every record (set no level on it): the step events it needs are DEBUG records.
    ``stream``: where to write (stderr); ``tty``: update lines in place (default: the stream is a
    terminal); ``redact``: applied to every line; ``error_text``: a failure event's one-line cause.
    """

    def __init__(
        self,
        stream: Optional[TextIO] = None,
        tty: Optional[bool] = None,
        redact: Callable[[str], str] = lambda s: s,
        error_text: Callable[[object], str] = lambda e: str(getattr(e, "message", e)),
        clock: Callable[[], float] = time.monotonic,
    ):
        super().__init__(level=logging.DEBUG)
        self.stream = stream or sys.stderr
        self.tty = bool(getattr(self.stream, "isatty", lambda: False)()) if tty is None else tty
        self.redact, self.error_text, self.clock = redact, error_text, clock
        encoding = (getattr(self.stream, "encoding", None) or "").lower()
        self.ok, self.bad = ("✓", "✗") if "utf" in encoding else ("ok", "FAILED")
        self.steps: dict[str, _Step] = {}
        self._open = False  # a line being updated in place (terminal only)

    # -- writing
    def _write(self, line: str, *, final: bool = True) -> None:
        line = self.redact(line)
        if self.tty:
            width = max(40, shutil.get_terminal_size((120, 20)).columns - 1)
            if final:
                self.stream.write("\r\x1b[K" + line + "\n")
                self._open = False
            else:
                self.stream.write("\r\x1b[K" + trim(line, width, one_line=True))
                self._open = True
        else:
            self.stream.write(line + "\n")
        self.stream.flush()

    def _apart(self, line: str) -> None:
        """A line of its own (a warning, an error): the in-place line is cleared first."""
        if self.tty and self._open:
            self.stream.write("\r\x1b[K")
        self._write(line)

    # -- events
    def emit(self, record: logging.LogRecord) -> None:
        try:
            self._emit(record)
        except Exception:  # noqa: BLE001 - a console line never fails a run
            self.handleError(record)

    def _emit(self, record: logging.LogRecord) -> None:
        meta = getattr(record, "dagster_meta", None) or {}
        event = meta.get("dagster_event")
        step_key = meta.get("step_key") or ""
        message = str(meta.get("orig_message", record.getMessage())).strip()
        when = _dt.datetime.fromtimestamp(record.created).strftime("%H:%M:%S")
        kind = getattr(getattr(event, "event_type", None), "value", None) if event is not None else None
        if kind == "STEP_START":
            self.steps[step_key] = _Step(started=self.clock())
            if self.tty:
                self._write(f"{when} … {step_key}", final=False)
            return
        if kind in ("STEP_SUCCESS", "STEP_FAILURE", "STEP_SKIPPED"):
            self._end(step_key, kind, event, when)
            return
        if kind == "ASSET_CHECK_EVALUATION":
            data = event.event_specific_data
            step = self.steps.setdefault(step_key, _Step(started=self.clock()))
            name = str(getattr(data, "check_name", "") or getattr(getattr(data, "asset_check_key", None), "name", "?"))
            (step.passed if getattr(data, "passed", False) else step.failed).append(name)
            return
        if kind == "RUN_FAILURE":
            self._apart(
                f"{when} {self.bad} run failed: {trim(message.splitlines()[0] if message else '', 300, one_line=True)}"
            )
            return
        if event is not None or record.levelno < logging.INFO:
            return  # Dagster's other events: the log file has them
        first = message.splitlines()[0] if message else ""
        if record.levelno >= logging.WARNING:
            where = f"{step_key}: " if step_key else ""
            self._apart(
                f"{when} {record.levelname} {where}{trim(first, 400, one_line=True)}"
                + (" …" if "\n" in message else "")
            )
            return
        step = self.steps.get(step_key)
        if step is None:  # a message outside a step (the run's own)
            self._apart(f"{when} {trim(first, 400, one_line=True)}")
            return
        stored = STORED.match(first)
        if stored:
            step.stored.append((stored.group(2), int(stored.group(1).replace(",", ""))))
            return
        if PROGRESS.match(first):
            if self.tty:
                self._write(f"{when} … {step_key}: {first}", final=False)
            elif (
                self.clock() - step.started >= QUIET_S
                and not first.rstrip(")").endswith("done")
                and ", done" not in first
            ):
                self._write(f"{when} … {first}")  # a long step's progress, appended to the log
            return
        step.last = first
        if self.tty:
            self._write(f"{when} … {step_key}: {first}", final=False)

    def _end(self, step_key: str, kind: str, event, when: str) -> None:
        step = self.steps.pop(step_key, None) or _Step(started=self.clock())
        took = _seconds(self.clock() - step.started)
        if kind == "STEP_SKIPPED":
            self._write(f"{when} - {step_key}: skipped (an upstream step failed or produced no output)")
            return
        parts = []
        if step.stored:
            parts.append("rows stored: " + ", ".join(f"{n:,} {t}" for t, n in step.stored))
        if step.passed or step.failed:
            checks = f"checks {len(step.passed)}/{len(step.passed) + len(step.failed)} passed"
            if step.failed:
                checks += f" (failed: {', '.join(sorted(set(step.failed)))})"
            parts.append(checks)
        if kind == "STEP_FAILURE":
            error = getattr(event.event_specific_data, "error", None)
            cause = self.error_text(error) if error is not None else "see the log file"
            self._write(
                f"{when} {self.bad} {step_key} failed after {took}; cause: {cause}"
                + (f" ({'; '.join(parts)})" if parts else "")
            )
            return
        if step.last:
            parts.append(trim(step.last, LAST_CHARS, one_line=True))
        self._write(f"{when} {self.ok} {step_key} ({took})" + (": " + "; ".join(parts) if parts else ""))
