"""Importing the package or its framework-free core (a notebook, a script) changes no signal handler;
only the code location's entry (``fairness_assets.definitions``, what the code server loads) restores
an inherited "ignore SIGINT" (tests/test_signals.py has the rest: SIGTERM and pool workers)."""

from __future__ import annotations

import signal
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]

CHILD = r"""
import importlib, signal, sys
for module in sys.argv[1:]:
    importlib.import_module(module)
print("SIGINT", "ignored" if signal.getsignal(signal.SIGINT) is signal.SIG_IGN else "handled",
      "SIGTERM", "ignored" if signal.getsignal(signal.SIGTERM) is signal.SIG_IGN else "handled")
"""


def _ignore_signals():
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # what `cmd &` in a script does (and a supervisor may do)
    signal.signal(signal.SIGTERM, signal.SIG_IGN)


def _signals_after_importing(*modules: str) -> str:
    proc = subprocess.run(
        [sys.executable, "-c", CHILD, *modules],
        cwd=ROOT,
        preexec_fn=_ignore_signals,
        capture_output=True,
        text=True,
        timeout=240,
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    return proc.stdout.strip().splitlines()[-1]


@pytest.mark.parametrize(
    "modules",
    [
        ("fairness_assets",),
        ("fairness_assets.core",),
        (
            "fairness_assets.core",
            "fairness_assets.core.common.partition",
            "fairness_assets.core.scoring.metrics",
            "fairness_assets.core.reporting.report",
        ),
    ],
)
def test_importing_the_package_or_its_core_leaves_the_signal_handlers_alone(modules):
    assert _signals_after_importing(*modules) == "SIGINT ignored SIGTERM ignored"


def test_the_code_location_entry_restores_the_ignored_signals():
    assert _signals_after_importing("fairness_assets.definitions") == "SIGINT handled SIGTERM handled"
