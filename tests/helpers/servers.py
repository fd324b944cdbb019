"""Real servers on loopback for tests: an HTTP receiver (webhooks) and an SMTP server."""

from __future__ import annotations

import contextlib
import json
import socket
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest


def wait_for_http(url: str, proc, timeout_s: float, name: str) -> None:
    """Poll ``url`` until it answers; fail if ``proc`` exits first or ``timeout_s`` passes."""
    import time
    import urllib.request

    deadline = time.time() + timeout_s
    while True:
        try:
            urllib.request.urlopen(url, timeout=5)
            return
        except OSError:
            assert proc.poll() is None, f"{name} exited"
            assert time.time() < deadline, f"{name} did not answer in {timeout_s:.0f} s"
            time.sleep(1)


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class LoopbackHTTPServer:
    """A threading HTTP server on a free loopback port serving ``handler`` (a
    BaseHTTPRequestHandler subclass); a context manager that starts and stops it."""

    def __init__(self, handler, path: str = ""):
        self.server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}{path}"
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)

    def __enter__(self):
        self.thread.start()
        return self

    def __exit__(self, *exc):
        self.server.shutdown()
        self.server.server_close()


class Receiver(LoopbackHTTPServer):
    """An HTTP server on a free loopback port that records every POST (answering ``status``)."""

    def __init__(self, status: int = 200):
        self.posts: list[dict] = []
        outer = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self):  # noqa: N802
                body = self.rfile.read(int(self.headers["Content-Length"]))
                outer.posts.append({"path": self.path, "type": self.headers["Content-Type"], "json": json.loads(body)})
                self.send_response(status)
                self.end_headers()
                self.wfile.write(b"ok")

            def log_message(self, *args):
                pass

        super().__init__(Handler, "/hooks/audit")


@contextlib.contextmanager
def smtp_server():
    """An aiosmtpd server on a free loopback port: yields (port, received messages)."""
    controller_mod = pytest.importorskip(
        "aiosmtpd.controller", reason="aiosmtpd is in the dev extra (pip install -e .[dev])"
    )
    from aiosmtpd.handlers import Message

    received = []

    class Keep(Message):
        def handle_message(self, message):
            received.append(message)

    port = free_port()
    controller = controller_mod.Controller(Keep(), hostname="127.0.0.1", port=port)
    controller.start()
    try:
        yield port, received
    finally:
        controller.stop()
