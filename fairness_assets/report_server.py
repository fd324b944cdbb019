"""The reports folder over HTTP, read-only: what ``fairness-audit ui`` starts beside ``dagster dev``
(issue 23.1), so that the links in the metadata of ``audit_report`` and ``audit_figures``
(``<base>/<report id>/report.html``, ``<base>/figures/<figure>.png``) open in the browser.

- Only files under the folder are served: a request path is percent-decoded once, and a path
  with a ``..`` segment, a backslash or a NUL byte, or one that resolves (symbolic links
  followed) outside the folder, is answered 404; so is a broken link, anything that is neither a
  regular file nor a folder (a FIFO, a socket, a device) and what this process may not read.
  Directories under the folder are listed (the reports, their figures); nothing outside it is.
- A listing shows only what the server serves: each entry is put to :func:`servable`, the check
  that a request for its link gets, so a link out of the folder is neither served nor listed.
- GET and HEAD only: POST, PUT, DELETE, PATCH and OPTIONS are answered 405, other methods 501;
  nothing is ever written.
- ``Cache-Control: no-cache``: a report rebuilt for the same audits is rewritten in place, and
  the browser asks again.

``python -m fairness_assets.report_server --folder DIR --port N`` serves on its own (127.0.0.1);
``fairness-audit ui`` binds the port itself (so a port in use is reported before the UI starts)
and hands the listening socket over (``--fd``) with its own pid (``--parent``): the server stops
when that process (``dagster dev``, after the ``exec``) is gone, on SIGTERM and on Ctrl-C (the
terminal's SIGINT reaches the whole process group). Standard library only: it starts in a
fraction of a second and imports nothing of the audit.
"""

from __future__ import annotations

import argparse
import html
import io
import os
import socket
import sys
import threading
import urllib.parse
from http import HTTPStatus
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Optional

ALLOWED = "GET, HEAD"
PARENT_POLL_S = 0.5


def _path_only(request_path: str) -> str:
    """A request's path without its query and fragment, still percent-encoded."""
    return request_path.split("?", 1)[0].split("#", 1)[0]


def resolve_under(root: Path, request_path: str) -> Optional[Path]:
    """The file or folder under ``root`` (already resolved) that ``request_path`` (a request's
    path, query and fragment ignored) names, or None when it names anything outside it: a
    ``..`` segment (also percent-encoded: ``%2e%2e``, ``..%2f``), a backslash, a NUL byte, bytes
    that are not UTF-8, or a symbolic link that leads out of ``root``."""
    raw = _path_only(request_path)
    try:
        text = urllib.parse.unquote(raw, errors="strict")
    except UnicodeDecodeError:
        return None
    if "\x00" in text or "\\" in text:
        return None
    parts = [p for p in text.split("/") if p not in ("", ".")]
    if ".." in parts:
        return None
    target = root.joinpath(*parts).resolve()
    return target if target == root or root in target.parents else None


def servable(root: Path, request_path: str) -> Optional[Path]:
    """What a GET or HEAD of ``request_path`` is answered with: the regular file or the folder under
    ``root`` (already resolved) that it names, when this process may read it (a folder: list it);
    None for everything that is answered 404: a path :func:`resolve_under` refuses (outside
    ``root``, a link out of it), a broken link, a FIFO, socket or device (opening a FIFO would
    hold the request's thread), a file or folder it may not read. The request handler and the
    folder listing both ask this, so a listing shows exactly what the server serves."""
    target = resolve_under(root, request_path)
    if target is None:
        return None
    if target.is_dir():
        return target if os.access(target, os.R_OK | os.X_OK) else None
    return target if target.is_file() and os.access(target, os.R_OK) else None


class ReportRequestHandler(SimpleHTTPRequestHandler):
    """Serves ``self.server.root`` read-only (module docstring)."""

    server_version = "fairness-reports"
    extensions_map = {
        **SimpleHTTPRequestHandler.extensions_map,
        ".md": "text/markdown; charset=utf-8",
        ".html": "text/html; charset=utf-8",
        ".csv": "text/csv; charset=utf-8",
    }

    def __init__(self, *args, **kwargs):
        self._target: Optional[Path] = None
        super().__init__(*args, **kwargs)

    def send_head(self):
        target = servable(self.server.root, self.path)
        if target is None:
            self.send_error(HTTPStatus.NOT_FOUND, "File not found")
            return None
        self._target = target
        if target.is_dir() and urllib.parse.urlsplit(self.path).path.endswith("/"):
            return self.list_directory(str(target))  # no index.html lookup: it could be a link out of the folder
        return super().send_head()  # a file, or the redirect of a folder to its path with a trailing "/"

    def list_directory(self, path: str):
        """The folder's page (as http.server draws it: folders end in ``/``, links in ``@``) with
        only the entries that a request for their link is served: each link, taken relative to this
        folder's request path as the browser takes it, is put to :func:`servable`."""
        try:
            names = sorted(os.listdir(path), key=str.lower)
        except OSError:
            self.send_error(HTTPStatus.NOT_FOUND, "No permission to list directory")
            return None
        base = _path_only(self.path)  # ends with "/": send_head lists a folder only then
        items = []
        for name in names:
            link = urllib.parse.quote(name, errors="surrogatepass")
            target = servable(self.server.root, base + link)
            if target is None:
                continue
            shown = name + ("@" if os.path.islink(os.path.join(path, name)) else "/" if target.is_dir() else "")
            link += "/" if target.is_dir() else ""
            items.append(f'<li><a href="{link}">{html.escape(shown, quote=False)}</a></li>')
        title = "Directory listing for " + html.escape(urllib.parse.unquote(base), quote=False)
        head = ["<!DOCTYPE HTML>", '<html lang="en">', "<head>", '<meta charset="utf-8">', f"<title>{title}</title>"]
        body = ["</head>", "<body>", f"<h1>{title}</h1>", "<hr>", "<ul>", *items, "</ul>", "<hr>", "</body>", "</html>"]
        page = ("\n".join(head + body) + "\n").encode("utf-8")  # a listed name is UTF-8: servable decoded it
        self.send_response(HTTPStatus.OK)
        self.send_header("Content-type", "text/html; charset=utf-8")
        self.send_header("Content-Length", str(len(page)))
        self.end_headers()
        return io.BytesIO(page)

    def translate_path(self, path: str) -> str:
        # only send_head asks, for the path it has just checked
        return str(self._target if self._target is not None else self.server.root / "not-found")

    def version_string(self) -> str:
        return self.server_version

    def end_headers(self) -> None:
        self.send_header("Cache-Control", "no-cache")
        self.send_header("X-Content-Type-Options", "nosniff")
        super().end_headers()

    def _not_allowed(self) -> None:
        self.send_response(HTTPStatus.METHOD_NOT_ALLOWED)
        self.send_header("Allow", ALLOWED)
        self.send_header("Content-Length", "0")
        self.end_headers()

    do_POST = do_PUT = do_DELETE = do_PATCH = do_OPTIONS = _not_allowed  # noqa: N815 - http.server's names

    def log_message(self, format: str, *args) -> None:  # noqa: A002 - http.server's signature
        pass  # a request per figure: not logged (errors are, by log_error)

    def log_error(self, format: str, *args) -> None:  # noqa: A002
        sys.stderr.write(f"[report server] {self.address_string()} {format % args}\n")


class ReportServer(ThreadingHTTPServer):
    """A threading HTTP server of ``folder``; ``sock``: an already listening socket to serve on
    (else it binds ``address``)."""

    daemon_threads = True
    allow_reuse_address = True

    def __init__(self, folder, address: tuple[str, int] = ("127.0.0.1", 0), sock: Optional[socket.socket] = None):
        self.root = Path(folder).expanduser().resolve()
        super().__init__(address, ReportRequestHandler, bind_and_activate=sock is None)
        if sock is not None:
            self.socket.close()
            self.socket = sock
            self.server_address = sock.getsockname()

    @property
    def url(self) -> str:
        host, port = self.server_address[:2]
        return f"http://{host}:{port}"


def listen(port: int, host: str = "127.0.0.1") -> socket.socket:
    """A listening TCP socket on ``host:port`` (``OSError`` when the port is taken)."""
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    try:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.bind((host, port))
        sock.listen(64)
    except OSError:
        sock.close()
        raise
    return sock


def serve(folder, sock: socket.socket, parent: Optional[int] = None) -> None:
    """Serve ``folder`` on ``sock`` until SIGTERM, SIGINT or, with ``parent``, until this process's
    parent is no longer ``parent`` (it exited: the server is re-parented)."""
    from ._signals import restore_inherited_signals

    restore_inherited_signals()
    server = ReportServer(folder, sock=sock)
    thread = threading.Thread(target=server.serve_forever, name="report-server", daemon=True)
    thread.start()
    stop = threading.Event()
    try:
        while not stop.wait(PARENT_POLL_S):
            if parent is not None and os.getppid() != parent:
                break
    except KeyboardInterrupt:
        pass
    finally:
        server.shutdown()
        server.server_close()


def main(argv: Optional[list[str]] = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m fairness_assets.report_server", description="Serve the reports folder read-only over HTTP."
    )
    parser.add_argument("--folder", required=True, help="the reports folder (FAIRNESS_REPORTS_DIR)")
    parser.add_argument("--port", type=int, default=0, help="port on 127.0.0.1 (with no --fd)")
    parser.add_argument("--fd", type=int, default=None, help="a listening socket handed over by the parent")
    parser.add_argument("--parent", type=int, default=None, help="stop when this parent process is gone")
    args = parser.parse_args(argv)
    if args.fd is not None:
        sock = socket.socket(fileno=args.fd)
    else:
        try:
            sock = listen(args.port)
        except OSError as exc:
            print(f"report server: cannot listen on 127.0.0.1:{args.port}: {exc.strerror or exc}", file=sys.stderr)
            return 2
        print(f"report server: {Path(args.folder).resolve()} at http://127.0.0.1:{sock.getsockname()[1]}/", flush=True)
    serve(args.folder, sock, args.parent)
    return 0


if __name__ == "__main__":
    sys.exit(main())
