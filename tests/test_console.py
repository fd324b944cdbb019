"""fairness_assets.console: one compact line per asset step, from Dagster's run loggers."""

import io
import logging

import dagster as dg
import pytest

from fairness_assets.console import CompactConsole


class Clock:
    def __init__(self):
        self.t = 0.0

    def __call__(self):
        return self.t


def _run(handler, fail: bool = False):
    """Materialize two small assets (one with a check) with ``handler`` on the run's logger."""

    @dg.logger
    def console(_init):
        logger = logging.Logger("t", level=logging.DEBUG)
        logger.addHandler(handler)
        return logger

    @dg.asset(
        check_specs=[dg.AssetCheckSpec("rows_positive", asset="first"), dg.AssetCheckSpec("never_true", asset="first")]
    )
    def first(context):
        context.log.info("stored 1,234 row(s) of first in table first_row at sqlite:///x.db")
        context.log.info("first progress: 1/2 partitions (50%), 0 s elapsed, ETA 0 s")
        context.log.warning("3 answers were empty")
        context.log.info("parsed 12/12 responses")
        yield dg.MaterializeResult(
            check_results=[
                dg.AssetCheckResult(check_name="rows_positive", passed=True),
                dg.AssetCheckResult(check_name="never_true", passed=False),
            ]
        )

    @dg.asset(deps=[first])
    def second(context):
        if fail:
            raise ValueError("the corpus file has no rank column")
        context.log.info("stored 7 row(s) of second in table second_row at sqlite:///x.db")

    defs = dg.Definitions(
        assets=[first, second], loggers={"console": console}, jobs=[dg.define_asset_job("j", selection="*")]
    )
    return defs.resolve_job_def("j").execute_in_process(raise_on_error=False, run_config={"loggers": {"console": {}}})


def test_one_line_per_step_with_rows_checks_and_last_message_in_a_log():
    out = io.StringIO()
    _run(CompactConsole(stream=out, tty=False))
    lines = out.getvalue().splitlines()
    done = [line for line in lines if " first (" in line or " second (" in line]
    assert len(done) == 2, lines
    first = next(line for line in done if " first (" in line)
    assert "rows stored: 1,234 first" in first and "checks 1/2 passed (failed: never_true)" in first
    assert first.endswith("parsed 12/12 responses")
    assert any("WARNING first: 3 answers were empty" in line for line in lines)
    # a quick step's progress lines and Dagster's DEBUG events stay in the log file
    assert not any("progress:" in line or "STEP_START" in line or "Yielded output" in line for line in lines)
    assert len(lines) == 3, lines


def test_a_failed_step_is_one_line_with_its_cause():
    out = io.StringIO()
    from fairness_assets.local.failures import _error_text  # the commands' one-line cause

    _run(CompactConsole(stream=out, tty=False, error_text=_error_text), fail=True)
    failed = [line for line in out.getvalue().splitlines() if "second failed" in line]
    assert len(failed) == 1
    assert "cause: ValueError: the corpus file has no rank column" in failed[0]


def test_on_a_terminal_the_running_step_is_updated_in_place():
    out = io.StringIO()
    _run(CompactConsole(stream=out, tty=True))
    text = out.getvalue()
    assert "\r\x1b[K" in text and "… first: first progress: 1/2 partitions" in text
    finals = [seg for seg in text.split("\r\x1b[K") if seg.endswith("\n")]
    assert any(" first (" in seg for seg in finals) and any(" second (" in seg for seg in finals)


def test_a_long_steps_progress_is_appended_to_a_log():
    clock, out = Clock(), io.StringIO()
    handler = CompactConsole(stream=out, tty=False, clock=clock)

    class Event:
        class event_type:
            value = "STEP_START"

    def record(msg, event=None):
        r = logging.LogRecord("t", logging.INFO if event is None else logging.DEBUG, __file__, 1, msg, None, None)
        r.dagster_meta = {"step_key": "audit_statistics", "orig_message": msg, "dagster_event": event}
        return r

    handler.emit(record("", Event()))
    handler.emit(record("audit_statistics progress: 1/9 partitions (11%), 0 s elapsed, ETA 8 s"))
    clock.t = 6.0
    handler.emit(record("audit_statistics progress: 7/9 partitions (78%), 6 s elapsed, ETA 2 s"))
    handler.emit(record("audit_statistics progress: 9/9 partitions (100%), 8 s elapsed, done"))
    lines = out.getvalue().splitlines()
    assert len(lines) == 1 and "7/9 partitions" in lines[0]


@pytest.mark.parametrize("encoding, mark", [("utf-8", "✓"), ("ascii", "ok")])
def test_marks_fall_back_to_ascii(encoding, mark):
    stream = io.TextIOWrapper(io.BytesIO(), encoding=encoding)
    assert CompactConsole(stream=stream, tty=False).ok == mark
