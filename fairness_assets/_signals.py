"""Undo an inherited "ignore SIGINT/SIGTERM", before Dagster copies it onto SIGTERM.

A process started in the background by a non-interactive shell (``cmd &`` in a script, CI
runners, some supervisors) starts with SIGINT ignored; Python then leaves SIGINT ignored, and
Dagster's interrupt handling maps SIGTERM to the SIGINT handler (``setup_interrupt_handlers``:
"map SIGTERM to SIGINT, for k8s"), so SIGTERM becomes ignored too. The effects: ``dagster dev``
and its code server shrug off SIGTERM and Ctrl-C, and worker processes inherit the ignored
SIGTERM, so ``multiprocessing.Pool.terminate()`` waits forever for a worker it cannot stop.
:func:`restore_inherited_signals` restores the defaults where, and only where, the signal was
ignored. Only the entries of processes that serve the code location call it: importing
``fairness_assets.definitions`` (what the code server of ``dagster dev`` / ``dg dev`` and
``dagster api grpc`` load), ``fairness-audit ui`` before it starts ``dagster dev`` (``local.start_ui``)
and the report server it starts. Importing ``fairness_assets`` or ``fairness_assets.core`` (a
notebook, a script) leaves every handler as it is.
"""

from __future__ import annotations

import signal
import threading


def restore_inherited_signals() -> list[str]:
    """Reset ignored SIGINT (to KeyboardInterrupt) and SIGTERM (to the default); returns what changed."""
    if threading.current_thread() is not threading.main_thread():
        return []  # signal handlers can only be set from the main thread
    changed = []
    if signal.getsignal(signal.SIGINT) is signal.SIG_IGN:
        signal.signal(signal.SIGINT, signal.default_int_handler)
        changed.append("SIGINT")
    if signal.getsignal(signal.SIGTERM) is signal.SIG_IGN:
        signal.signal(signal.SIGTERM, signal.SIG_DFL)
        changed.append("SIGTERM")
    return changed
