"""The read-only server of the reports folder (fairness_assets/report_server.py, issue 23.1): files
under the folder only, whatever the request path says (``..``, percent-encoded ``%2e%2e``, links
out of the folder), GET and HEAD only, and it stops when the process that started it is gone."""

from __future__ import annotations

import http.client
import os
import re
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from fairness_assets.report_server import ReportServer, resolve_under

ROOT = Path(__file__).resolve().parents[1]
SECRET = "top-secret-outside-the-reports-folder"


@pytest.fixture
def served(tmp_path):
    """A reports folder (a report, a figure, links out of it) beside a secret file, served."""
    (tmp_path / "secret.txt").write_text(SECRET)
    (tmp_path / "outside").mkdir()
    (tmp_path / "outside" / "secret.txt").write_text(SECRET)
    reports = tmp_path / "reports"
    (reports / "report-abc" / "figures").mkdir(parents=True)
    (reports / "report-abc" / "report.html").write_text("<html><body>the report</body></html>")
    (reports / "report-abc" / "report.md").write_text("# the report\n")
    (reports / "report-abc" / "figures" / "map.png").write_bytes(b"\x89PNG\r\n\x1a\n" + b"\0" * 100)
    (reports / "link.txt").symlink_to(tmp_path / "secret.txt")
    (reports / "outside-dir").symlink_to(tmp_path / "outside", target_is_directory=True)
    (reports / "report-abc" / "inner-link.html").symlink_to(reports / "report-abc" / "report.html")
    server = ReportServer(reports)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield server, reports
    finally:
        server.shutdown()
        server.server_close()


def _request(server, method: str, path: str, body: bytes | None = None):
    """One request sent with its path exactly as given (no client-side normalisation of '..')."""
    conn = http.client.HTTPConnection(*server.server_address[:2], timeout=10)
    try:
        conn.putrequest(method, path, skip_accept_encoding=True)
        if body is not None:
            conn.putheader("Content-Length", str(len(body)))
        conn.endheaders(body)
        resp = conn.getresponse()
        return resp.status, dict(resp.getheaders()), resp.read()
    finally:
        conn.close()


def test_files_under_the_folder_are_served(served):
    server, _ = served
    status, headers, body = _request(server, "GET", "/report-abc/report.html")
    assert status == 200 and b"the report" in body
    assert headers["Content-type"].startswith("text/html") and headers["Cache-Control"] == "no-cache"
    status, headers, body = _request(server, "GET", "/report-abc/figures/map.png")
    assert status == 200 and headers["Content-type"] == "image/png" and body.startswith(b"\x89PNG")
    status, headers, body = _request(server, "HEAD", "/report-abc/report.md")
    assert status == 200 and body == b"" and int(headers["Content-Length"]) == len("# the report\n")
    assert _request(server, "GET", "/report-abc/report.html?v=2#top")[0] == 200  # query and fragment ignored
    assert _request(server, "GET", "/report-abc/inner-link.html")[0] == 200  # a link that stays inside


def test_folders_under_it_are_listed_and_redirected_to_their_slash(served):
    server, _ = served
    status, _, body = _request(server, "GET", "/")
    assert status == 200 and b"report-abc/" in body and SECRET.encode() not in body
    status, headers, _ = _request(server, "GET", "/report-abc")
    assert status == 301 and headers["Location"] == "/report-abc/"
    status, _, body = _request(server, "GET", "/report-abc/")
    assert status == 200 and b"report.html" in body and b"figures/" in body


def _links(body: bytes) -> list[str]:
    return re.findall(r'<a href="([^"]*)">', body.decode())


def test_a_listing_shows_only_what_is_served(served, tmp_path):
    """Links out of the folder (to a file, to a folder), a broken link, a FIFO and a name the
    handler refuses (a backslash) are not listed; links that stay inside (to a file, to a folder)
    are listed and served; and every link of every listing is served (the same check decides)."""
    server, reports = served
    (reports / "latest").symlink_to(reports / "report-abc", target_is_directory=True)
    (reports / "broken.html").symlink_to(tmp_path / "gone.html")
    os.mkfifo(reports / "pipe")
    (reports / "a\\b.txt").write_text("a backslash in the name")
    status, _, body = _request(server, "GET", "/")
    assert status == 200
    assert _links(body) == ["latest/", "report-abc/"]
    assert b"latest@" in body and b"link.txt" not in body and b"outside-dir" not in body
    for path in ("/link.txt", "/outside-dir/", "/broken.html", "/pipe", "/a%5Cb.txt"):
        assert _request(server, "GET", path)[0] == 404, path
    status, _, body = _request(server, "GET", "/report-abc/")
    assert status == 200 and "inner-link.html" in _links(body)
    assert _request(server, "GET", "/latest/inner-link.html")[2] == b"<html><body>the report</body></html>"
    pending, seen = ["/"], []
    while pending:
        folder = pending.pop()
        status, _, body = _request(server, "GET", folder)
        assert status == 200, folder
        for link in _links(body):
            status, _, got = _request(server, "GET", folder + link)
            assert status == 200 and SECRET.encode() not in got, (folder + link, status)
            seen.append(folder + link)
            if link.endswith("/"):
                pending.append(folder + link)
    assert "/latest/figures/map.png" in seen and "/report-abc/inner-link.html" in seen


@pytest.mark.parametrize(
    "path",
    [
        "/../secret.txt",
        "/%2e%2e/secret.txt",
        "/%2E%2E/secret.txt",
        "/..%2fsecret.txt",
        "/..%2Fsecret.txt",
        "/%2e%2e%2fsecret.txt",
        "/report-abc/../../secret.txt",
        "/report-abc/%2e%2e/%2e%2e/secret.txt",
        "/report-abc/..%2f..%2fsecret.txt",
        "/./../secret.txt",
        "//../secret.txt",
        "/..\\secret.txt",
        "/%5c..%5csecret.txt",
        "/link.txt",
        "/outside-dir/secret.txt",
        "/outside-dir/",
        "/report-abc%00.html",
        "/%ff%fe",
        "/%252e%252e/secret.txt",
        "/../",
        "/%2e%2e/",
        "/%2e%2e",
    ],
)
def test_nothing_outside_the_folder_is_served_or_listed(served, path):
    server, _ = served
    for method in ("GET", "HEAD"):
        status, _, body = _request(server, method, path)
        assert status == 404, (method, path, status)
        assert SECRET.encode() not in body


@pytest.mark.parametrize("method", ["POST", "PUT", "DELETE", "PATCH", "OPTIONS"])
def test_only_get_and_head_are_allowed(served, method):
    server, reports = served
    before = {p: p.read_bytes() for p in reports.rglob("*") if p.is_file()}
    for path in ("/report-abc/report.html", "/new.txt", "/report-abc/"):
        status, headers, _ = _request(server, method, path, body=b"overwritten")
        assert status == 405 and headers["Allow"] == "GET, HEAD", (method, path)
    assert {p: p.read_bytes() for p in reports.rglob("*") if p.is_file()} == before
    assert not (reports / "new.txt").exists()
    assert _request(server, "PROPFIND", "/")[0] == 501  # anything else is not implemented at all


def test_resolve_under_keeps_to_the_folder(tmp_path):
    root = tmp_path.resolve()
    (root / "a").mkdir()
    assert resolve_under(root, "/") == root
    assert resolve_under(root, "/a/b.html?x=1") == root / "a" / "b.html"
    assert resolve_under(root, "/a/./b%20c.png") == root / "a" / "b c.png"
    for bad in ("/../x", "/a/%2e%2e/%2e%2e/x", "/a\\..\\x", "/x%00", "/%c3%28"):
        assert resolve_under(root, bad) is None, bad


def test_the_server_stops_when_the_process_that_started_it_is_gone(tmp_path):
    """``--parent``: the process that started the server exits (as ``dagster dev`` does on SIGTERM)
    and the server, re-parented, stops within a second or two."""
    (tmp_path / "reports").mkdir()
    starter = (
        "import os, subprocess, sys\n"
        "p = subprocess.Popen([sys.executable, '-m', 'fairness_assets.report_server', '--folder', "
        f"{str(tmp_path / 'reports')!r},"
        " '--port', '0', '--parent', str(os.getpid())], stdout=subprocess.PIPE, text=True)\n"
        "print(p.pid, p.stdout.readline().strip(), flush=True)\n"
    )
    out = subprocess.run([sys.executable, "-c", starter], cwd=ROOT, capture_output=True, text=True, timeout=60)
    assert out.returncode == 0, out.stderr
    pid_text, line = out.stdout.split(" ", 1)
    pid = int(pid_text)
    assert "http://127.0.0.1:" in line, line
    deadline = time.time() + 10
    while _alive(pid):
        assert time.time() < deadline, f"the report server {pid} still runs after its parent exited"
        time.sleep(0.2)


def _alive(pid: int) -> bool:
    """Whether ``pid`` runs (a zombie, exited but not yet reaped, does not)."""
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except (FileNotFoundError, ProcessLookupError):
        return False
    return state != "Z"


def test_a_taken_port_is_named(tmp_path):
    from fairness_assets.report_server import listen

    with listen(0) as sock:
        port = sock.getsockname()[1]
        out = subprocess.run(
            [sys.executable, "-m", "fairness_assets.report_server", "--folder", str(tmp_path), "--port", str(port)],
            cwd=ROOT,
            capture_output=True,
            text=True,
            timeout=60,
            env={**os.environ},
        )
    assert out.returncode == 2 and f"127.0.0.1:{port}" in out.stderr, out.stderr


# ---------------------------------------------------------------- what `fairness-audit ui` starts
def test_the_ui_port_is_read_from_the_dagster_dev_arguments():
    from fairness_assets.local.ui import _dagster_port

    assert _dagster_port([]) == 3000
    assert (
        _dagster_port(["-p", "3001"])
        == _dagster_port(["--port", "3001"])
        == _dagster_port(["--port=3001"])
        == _dagster_port(["-h", "0.0.0.0", "-p3001"])
        == 3001
    )


def test_start_report_server_serves_or_says_why_not(tmp_path, monkeypatch):
    import signal
    import urllib.request

    from fairness_assets.local import start_report_server
    from fairness_assets.report_server import listen
    from resources.settings import ConfigError

    (tmp_path / "reports" / "report-1").mkdir(parents=True)
    (tmp_path / "reports" / "report-1" / "report.html").write_text("ok")
    monkeypatch.setenv("FAIRNESS_REPORTS_DIR", str(tmp_path / "reports"))
    monkeypatch.delenv("FAIRNESS_REPORT_BASE_URL", raising=False)
    lines = []
    with listen(0) as taken:
        port = taken.getsockname()[1]
        monkeypatch.setenv("FAIRNESS_REPORT_PORT", str(port))
        assert start_report_server(lines.append) is None  # the UI starts all the same
        assert f"cannot listen on 127.0.0.1:{port}" in lines[-1] and "FAIRNESS_REPORT_PORT" in lines[-1]
    with pytest.raises(ConfigError, match="FAIRNESS_REPORT_PORT"):
        start_report_server(lines.append, ui_port=port)
    pid = start_report_server(lines.append, ui_port=3000)
    try:
        assert f"http://127.0.0.1:{port}/" in lines[-1]
        deadline = time.time() + 30
        while True:
            try:
                assert (
                    urllib.request.urlopen(f"http://127.0.0.1:{port}/report-1/report.html", timeout=5).read() == b"ok"
                )
                break
            except OSError:
                assert time.time() < deadline
                time.sleep(0.2)
    finally:
        os.kill(pid, signal.SIGTERM)
        os.waitpid(pid, 0)
    monkeypatch.setenv("FAIRNESS_REPORT_BASE_URL", "https://reports.example.org/a/")
    assert start_report_server(lines.append) is None
    assert "https://reports.example.org/a" in lines[-1] and "no report server" in lines[-1]
