"""A process started with SIGINT ignored (a background job of a non-interactive shell) keeps
SIGTERM working once the code location is imported, so `dagster dev`, its code server and pool
workers stop when asked (issue 11 items 8 and 12)."""

import signal
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]

CHILD = r"""
import multiprocessing as mp, signal, sys, time
import dagster as dg
import fairness_assets  # noqa: F401 - the code location
from fairness_assets import definitions  # noqa: F401

@dg.asset
def one():
    return 1

dg.materialize([one])  # Dagster's interrupt handling maps SIGTERM to the SIGINT handler here
print("SIGTERM", signal.getsignal(signal.SIGTERM), "SIGINT", signal.getsignal(signal.SIGINT), flush=True)
pool = mp.get_context("spawn").Pool(1)
pool.apply_async(time.sleep, (600,))
time.sleep(2)
t0 = time.time()
pool.terminate()  # hangs forever when the worker inherited an ignored SIGTERM
pool.join()
print("terminated in", round(time.time() - t0, 1), flush=True)
"""


def _ignore_sigint():
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # what `cmd &` in a script does


@pytest.mark.slow
def test_sigterm_still_works_when_started_with_sigint_ignored():
    proc = subprocess.run(
        [sys.executable, "-c", CHILD], cwd=ROOT, preexec_fn=_ignore_sigint, capture_output=True, text=True, timeout=240
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert "SIGTERM Handlers.SIG_IGN" not in proc.stdout and "SIGTERM 1" not in proc.stdout, proc.stdout
    assert "terminated in" in proc.stdout, proc.stdout


def test_restore_only_touches_ignored_signals():
    from fairness_assets._signals import restore_inherited_signals

    before = signal.getsignal(signal.SIGTERM), signal.getsignal(signal.SIGINT)
    try:
        signal.signal(signal.SIGTERM, signal.SIG_IGN)
        assert restore_inherited_signals() == ["SIGTERM"]
        assert signal.getsignal(signal.SIGTERM) is signal.SIG_DFL
        handler = lambda *_: None  # noqa: E731
        signal.signal(signal.SIGTERM, handler)
        assert restore_inherited_signals() == [] and signal.getsignal(signal.SIGTERM) is handler
    finally:
        signal.signal(signal.SIGTERM, before[0])
        signal.signal(signal.SIGINT, before[1])
