"""The loggers of a command's runs (:class:`RunLog`): one compact line per event on the console (a
failed step as its one-line cause; ``verbose``: every event in full) and every event in full, stack
traces included, in the command's log file; passwords masked in both."""

from __future__ import annotations

import datetime as _dt
import logging
import sys
from pathlib import Path

import dagster as dg

from resources.secrets import redact

from ..console import CompactConsole
from .failures import _error_text


class _ConsoleHandler(logging.Handler):
    """One line per event on stderr: the step, the event and its message; a failure's error as
    its one-line cause (the first line of a multi-line message, '…' marking the rest).
    ``verbose``: the whole message, stack traces included, as Dagster prints it."""

    def __init__(self, verbose: bool):
        super().__init__()
        self.verbose = verbose

    def emit(self, record: logging.LogRecord) -> None:
        try:
            when = _dt.datetime.fromtimestamp(record.created).strftime("%H:%M:%S")
            if self.verbose:
                text = record.getMessage()
            else:
                text = _one_line(record)
            print(f"{when} {record.levelname:<7} {redact(text)}", file=sys.stderr, flush=True)
        except Exception:  # noqa: BLE001 - a log line never fails a run
            self.handleError(record)


def _one_line(record: logging.LogRecord) -> str:
    """``step - EVENT - message`` on one line, with a failure's one-line cause."""
    meta = getattr(record, "dagster_meta", None) or {}
    event = meta.get("dagster_event")
    message = str(meta.get("orig_message", record.getMessage()))
    first, _, rest = message.strip().partition("\n")
    parts = [meta.get("step_key") or meta.get("job_name") or ""]
    if event is not None:
        parts.append(event.event_type.name)  # the name Dagster prints (RUN_START, not its stored PIPELINE_START)
    line = " - ".join(p for p in parts if p)
    line = f"{line} - {first}" if line else first
    if rest.strip():
        line += " …"
    error = getattr(event.event_specific_data, "error", None) if event is not None else None
    if error is not None:
        line += f" cause: {_error_text(error)}"
    return line


class _FileHandler(logging.Handler):
    """Every record in full (a failure's error with its stack traces and causes) appended to
    ``path``, passwords masked; the file is opened per record, so no run leaves it open."""

    def __init__(self, path: Path):
        super().__init__(level=logging.DEBUG)
        self.path = path

    def emit(self, record: logging.LogRecord) -> None:
        try:
            when = _dt.datetime.fromtimestamp(record.created).isoformat(sep=" ", timespec="milliseconds")
            with open(self.path, "a", encoding="utf-8") as f:
                f.write(f"{when} - {record.levelname} - {redact(record.getMessage())}\n")
        except Exception:  # noqa: BLE001
            self.handleError(record)


class RunLog:
    """The loggers of a command's runs: the console gets one compact line per asset step
    (:class:`fairness_assets.console.CompactConsole`; ``verbose``: every event in full at DEBUG and up),
    the file at ``path`` every event in full at DEBUG and up."""

    def __init__(self, path: Path, verbose: bool = False, level: str = "INFO"):
        self.path, self.verbose, self.level = Path(path), verbose, level
        self.path.parent.mkdir(parents=True, exist_ok=True)

    def note(self, text: str) -> None:
        """A line of the command's own in the file (which run starts, what it covers)."""
        with open(self.path, "a", encoding="utf-8") as f:
            f.write(f"{_dt.datetime.now().isoformat(sep=' ', timespec='milliseconds')} - NOTE - {redact(text)}\n")

    def logger_defs(self) -> dict:
        verbose, path = self.verbose, self.path

        @dg.logger(
            config_schema={"log_level": dg.Field(str, is_required=False, default_value="INFO")},
            description="One compact line per asset step on the console (verbose: every event in full), "
            "every event in full in the command's log file.",
        )
        def fairness_console(init_context) -> logging.Logger:
            logger = logging.Logger("fairness-audit", level=logging.DEBUG)
            if verbose:  # Dagster's full event stream, DEBUG events and stack traces included
                console = _ConsoleHandler(True)
                console.setLevel(logging.DEBUG)
            else:
                console = CompactConsole(redact=redact, error_text=_error_text)
            logger.addHandler(console)
            logger.addHandler(_FileHandler(path))
            return logger

        return {"console": fairness_console}

    def run_config(self) -> dict:
        return {"loggers": {"console": {"config": {"log_level": self.level}}}}
