"""`fairness-audit ui` started the way a script starts it in the background (SIGINT ignored)
stops on SIGTERM; plain `dagster dev` started that way ignores it (issue 11 item 12). The report
server it starts beside the UI (issue 23.1) stops with it, on SIGTERM and on Ctrl-C."""

import os
import signal
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


def _ignore_sigint():
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # what `cmd &` in a non-interactive shell does


def _sig_ignored(pid: int, signum: int) -> bool:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("SigIgn:"):
            return bool(int(line.split()[1], 16) >> (signum - 1) & 1)
    return False


def _alive(pid: int) -> bool:
    """Whether ``pid`` runs (a zombie, exited but not reaped, does not)."""
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0] != "Z"
    except FileNotFoundError:
        return False


def _report_servers(ui_pid: int) -> list[int]:
    """The report-server processes whose parent is ``ui_pid``."""
    found = []
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            ppid = int(stat.read_text().rsplit(")", 1)[1].split()[1])
            cmd = (stat.parent / "cmdline").read_bytes().split(b"\0")
        except (FileNotFoundError, ProcessLookupError, IndexError, ValueError):
            continue
        if ppid == ui_pid and b"fairness_assets.report_server" in cmd:
            found.append(int(stat.parent.name))
    return found


def _start_ui(tmp_path):
    """`fairness-audit ui` in the background (SIGINT ignored, its own process group) with a report
    in its reports folder; returns (process, UI port, report port, report server pid)."""
    from tests.helpers.servers import free_port, wait_for_http

    reports = Path(os.environ["FAIRNESS_HOME"]) / "reports" / "report-test"
    reports.mkdir(parents=True)
    (reports / "report.html").write_text("<html><body>served</body></html>")
    port, report_port = free_port(), free_port()
    env = {k: v for k, v in os.environ.items() if k not in ("FAIRNESS_REPORTS_DIR", "FAIRNESS_REPORT_BASE_URL")}
    proc = subprocess.Popen(
        [str(Path(sys.executable).parent / "fairness-audit"), "ui", "-p", str(port)],
        cwd=ROOT,
        env={**env, "FAIRNESS_REPORT_PORT": str(report_port)},
        preexec_fn=_ignore_sigint,
        start_new_session=True,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        wait_for_http(f"http://127.0.0.1:{port}/server_info", proc, 240, "fairness-audit ui")
        page = urllib.request.urlopen(f"http://127.0.0.1:{report_port}/report-test/report.html", timeout=10).read()
        assert b"served" in page
        servers = _report_servers(proc.pid)
        assert len(servers) == 1, servers
    except BaseException:
        os.killpg(proc.pid, signal.SIGKILL)
        raise
    return proc, port, report_port, servers[0]


def _assert_report_server_stopped(pid: int, report_port: int) -> None:
    deadline = time.time() + 10
    while _alive(pid):
        assert time.time() < deadline, f"the report server (pid {pid}) still runs 10 s after the UI stopped"
        time.sleep(0.2)
    with pytest.raises(OSError):
        urllib.request.urlopen(f"http://127.0.0.1:{report_port}/", timeout=5)


def test_ui_started_in_the_background_stops_on_sigterm(results_home, tmp_path):
    proc, _, report_port, server = _start_ui(tmp_path)
    try:
        assert not _sig_ignored(proc.pid, signal.SIGTERM) and not _sig_ignored(proc.pid, signal.SIGINT)
        assert not _sig_ignored(server, signal.SIGTERM) and not _sig_ignored(server, signal.SIGINT)
        t0 = time.time()
        proc.send_signal(signal.SIGTERM)  # the process alone, as a supervisor does
        proc.wait(timeout=60)
        assert time.time() - t0 < 60
        _assert_report_server_stopped(server, report_port)  # it dies with the UI
    finally:
        try:
            os.killpg(proc.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass


def test_ui_and_its_report_server_stop_on_ctrl_c(results_home, tmp_path):
    proc, _, report_port, server = _start_ui(tmp_path)
    try:
        os.killpg(proc.pid, signal.SIGINT)  # Ctrl-C: the terminal signals the whole foreground process group
        proc.wait(timeout=60)
        _assert_report_server_stopped(server, report_port)
    finally:
        try:
            os.killpg(proc.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
