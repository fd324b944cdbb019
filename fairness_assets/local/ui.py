"""``fairness-audit ui``: the Dagster UI (``dg dev`` on the workspace, in place of this process) on the
persistent instance, with the reports folder served read-only beside it."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path
from typing import Callable, Optional, Sequence

from resources.settings import PROJECT_ROOT, ConfigError, ReportResource, load_settings

from .._signals import restore_inherited_signals
from .instance import dagster_home


def start_ui(extra: list[str]) -> int:
    """Replace this process with ``dg dev -w workspace.yaml`` (Dagster's recommended way to start the UI:
    ``dagster dev`` warns that it is superseded), its signals reset first, with the reports folder served
    read-only beside it (:func:`start_report_server`).

    A process started in the background by a script inherits SIGINT as ignored, and Dagster maps
    SIGTERM to the SIGINT handler, so a plain ``dagster dev &`` ignores both SIGTERM and Ctrl-C (its
    code server and daemon too). Ignored signals survive ``exec`` and are inherited by children;
    restored defaults are what Dagster's own handlers then build on.
    """
    restore_inherited_signals()
    home = dagster_home()  # the instance `fairness-audit demo` and `run` use: their runs show in the UI
    # lazy, and after dagster_home(): the code location reads the settings and the templates folder
    # on import (see the package docstring)
    from ..defs.partitions import prepare_model_partitions

    # the registered models (or those of FAIRNESS_RESPONSES) are partitions before the first page view;
    # the model_partitions_sync sensor keeps them in sync afterwards
    print(f"[fairness-audit] {prepare_model_partitions()}", flush=True)
    try:
        start_report_server(ui_port=_dagster_port(extra))
    except ConfigError as exc:
        print(f"fairness-audit ui: error: {exc}", file=sys.stderr)
        return 2
    print(f"[fairness-audit] Dagster UI on the instance {home}", flush=True)
    # `dg dev`, as Dagster now recommends (`dagster dev` prints a SupersessionWarning pointing to it); given the
    # workspace file, it starts the same webserver, daemon and code server on it
    dg_cli = Path(sys.executable).parent / "dg"
    command = [
        str(dg_cli) if dg_cli.exists() else "dg",
        "dev",
        "-w",
        str(PROJECT_ROOT / "workspace.yaml"),
        *extra,
    ]
    os.chdir(PROJECT_ROOT)
    os.execv(command[0], command) if os.path.isabs(command[0]) else os.execvp(command[0], command)
    return 0  # not reached


def _dagster_port(args: Sequence[str]) -> int:
    """The port ``dg dev`` is given in ``args`` (``-p N``, ``--port N``, ``--port=N``), else its default 3000."""
    for i, arg in enumerate(args):
        value = None
        if arg in ("-p", "--port") and i + 1 < len(args):
            value = args[i + 1]
        elif arg.startswith("--port="):
            value = arg.split("=", 1)[1]
        elif arg.startswith("-p") and arg[2:].isdigit():
            value = arg[2:]
        if value is not None and value.isdigit():
            return int(value)
    return 3000


def start_report_server(
    log: Callable[[str], None] = lambda line: print(line, flush=True), ui_port: Optional[int] = None
) -> Optional[int]:
    """Serve the reports folder read-only on ``127.0.0.1:FAIRNESS_REPORT_PORT`` in a child process
    (:mod:`fairness_assets.report_server`) that stops when this process (``dg dev`` after the
    ``exec``) is gone, on SIGTERM and on Ctrl-C. Returns its pid; None when none is started:
    ``FAIRNESS_REPORT_BASE_URL`` is set (the deployment publishes the folder) or the port is taken
    or cannot be bound (said, and the UI starts all the same). A bad setting, or a report port that
    is the UI's own (``ui_port``), raises ``ConfigError`` naming it."""
    # lazy: the HTTP server's modules, for `ui` alone (see the package docstring)
    from .. import report_server

    settings = load_settings()
    report = ReportResource(
        output_dir=settings.reports_dir, port=settings.report_port, base_url=settings.report_base_url
    )
    if settings.report_base_url:
        log(
            f"[fairness-audit] report links point to {report.base()} (FAIRNESS_REPORT_BASE_URL): no report server "
            "started"
        )
        return None
    if ui_port == report.port:
        raise ConfigError(
            f"FAIRNESS_REPORT_PORT={report.port} is the port the Dagster UI is given too: set "
            "FAIRNESS_REPORT_PORT (the report server's port) or the UI's -p to another port"
        )
    folder = report.folder()
    try:
        sock = report_server.listen(report.port)
    except OSError as exc:
        log(
            f"[fairness-audit] the reports are not served: cannot listen on 127.0.0.1:{report.port} "
            f"({exc.strerror or exc}); set FAIRNESS_REPORT_PORT to a free port (the report links of the UI point "
            "to that port)"
        )
        return None
    with sock:
        server = subprocess.Popen(
            [
                sys.executable,
                "-m",
                "fairness_assets.report_server",
                "--folder",
                str(folder),
                "--fd",
                str(sock.fileno()),
                "--parent",
                str(os.getpid()),
            ],
            pass_fds=(sock.fileno(),),
            cwd=PROJECT_ROOT,
            stdin=subprocess.DEVNULL,
        )
    log(
        f"[fairness-audit] reports of {folder} served read-only at {report.base()}/ (FAIRNESS_REPORT_PORT; "
        f"report server pid {server.pid})"
    )
    return server.pid
