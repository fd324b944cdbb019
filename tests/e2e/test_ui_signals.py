"""`fairness-audit ui` started the way a script starts it in the background (SIGINT ignored)
stops on SIGTERM; plain `dagster dev` started that way ignores it (issue 11 item 12)."""

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def _ignore_sigint():
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # what `cmd &` in a non-interactive shell does


def _sig_ignored(pid: int, signum: int) -> bool:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("SigIgn:"):
            return bool(int(line.split()[1], 16) >> (signum - 1) & 1)
    return False


def test_ui_started_in_the_background_stops_on_sigterm(results_home, tmp_path):
    from tests.helpers.servers import free_port, wait_for_http

    port = free_port()
    proc = subprocess.Popen([str(Path(sys.executable).parent / "fairness-audit"), "ui", "-p", str(port)], cwd=ROOT,
                            env={**os.environ}, preexec_fn=_ignore_sigint, start_new_session=True,
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        wait_for_http(f"http://127.0.0.1:{port}/server_info", proc, 240, "fairness-audit ui")
        assert not _sig_ignored(proc.pid, signal.SIGTERM) and not _sig_ignored(proc.pid, signal.SIGINT)
        t0 = time.time()
        proc.send_signal(signal.SIGTERM)  # the process alone, as a supervisor does
        proc.wait(timeout=60)
        assert time.time() - t0 < 60
    finally:
        try:
            os.killpg(proc.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
