"""What went wrong in a command's runs, said in one line: the command's errors (:class:`UsageError`,
:class:`RunFailed`, :class:`ScoreFailed` with its :class:`StepFailure` list) and the one-line cause of
each failed step of an in-process run, read from its public ``all_events``."""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path
from typing import Mapping, Optional, Sequence

from resources.secrets import redact

from ..core.common.text import trim, user_exception


class UsageError(ValueError):
    """A command line the CLI cannot run (unknown job, unusable --out); printed as one line."""


class RunFailed(RuntimeError):
    """A run of the asset graph failed; the message names the failing steps and their causes."""


@dataclass(frozen=True)
class StepFailure:
    """What failed in a ``score``: which partitions (``what``), which steps, and the one-line cause."""

    what: str  # "partition m|base", "reference data (every partition)", "every partition"
    steps: tuple[str, ...]
    cause: str
    keys: tuple[str, ...] = ()  # the partitions it concerns; () for every partition (reference data, export)

    def line(self) -> str:
        steps = ", ".join(repr(s) for s in self.steps)
        return (
            f"{self.what}: step{'s' if len(self.steps) > 1 else ''} {steps} failed: {self.cause}"
            if self.steps
            else f"{self.what}: {self.cause}"
        )


class ScoreFailed(RunFailed):
    """``score`` wrote what it could and some of it failed: ``failures`` lists what, ``written``
    holds the tables exported all the same, ``log_path`` the full log with the stack traces."""

    def __init__(
        self,
        failures: Sequence[StepFailure],
        written: dict,
        log_path: Path,
        not_scored: Optional[Mapping[str, str]] = None,
    ):
        self.failures, self.written, self.log_path = list(failures), written, log_path
        self.not_scored = dict(not_scored or {})  # partition key -> why this score did not score it
        super().__init__(f"{len(self.failures)} failure(s): " + "; ".join(f.line() for f in self.failures))


MESSAGE_CHARS = 600  # a failure's message on the command line and in summary.md is trimmed to this length


def _error_text(error) -> str:
    """The message of a step's error on one line: the first cause below Dagster's own wrappers
    (the user code's exception), without the module path of its class, passwords masked."""
    chosen = user_exception(error)
    message = re.sub(r"^(?:[A-Za-z_][\w]*\.)+(?=[A-Za-z_]\w*: )", "", chosen.message.strip())
    return redact(trim(redact(message), MESSAGE_CHARS, one_line=True))  # one line (a driver's message may hold several)


def step_failures(result) -> list[tuple[tuple[str, ...], str]]:
    """(steps, one-line cause) per distinct failure of an in-process run ``result`` (its public
    ``all_events``), read from its step failures (the run's failure message, with no steps, when no
    step failed)."""
    by_message: dict[str, list[str]] = {}
    for event in result.all_events:
        if not event.is_step_failure:
            continue
        data = event.step_failure_data
        text = _error_text(data.error) if data is not None and data.error is not None else "(no error recorded)"
        by_message.setdefault(text, []).append(event.step_key or "?")
    out = [(tuple(dict.fromkeys(steps)), text) for text, steps in by_message.items()]
    if not out:
        for event in result.all_events:
            if event.is_run_failure:
                error = getattr(event.event_specific_data, "error", None)
                out.append(
                    (
                        (),
                        _error_text(error) if error is not None else trim(event.message or "run failed", MESSAGE_CHARS),
                    )
                )
    return out


def failure_causes(result) -> list[str]:
    """One line per distinct failure of an in-process run ``result``, from its step failures (the
    run's failure message when no step failed)."""
    lines = []
    for steps, text in step_failures(result):
        if steps:
            names = ", ".join(repr(s) for s in steps)
            lines.append(f"cause: step{'s' if len(steps) > 1 else ''} {names} failed: {text}")
        else:
            lines.append(f"cause: {text}")
    return lines
