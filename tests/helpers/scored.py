"""A responses file scored once per test session and read by every test that only reads it.

The first xdist worker to ask scores the file into the session's shared temporary folder under a file lock; the
others, and the same worker later, read what it exported (``ExportedTables``: each table from its CSV, as
``score_responses`` hands them back). Tests must not write into the folder they are given: make a copy for
that."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Callable, Mapping

import pandas as pd
from filelock import FileLock

from fairness_assets.export import ExportedTables


def scored_once(
    base_temp: Path, name: str, score: Callable[[Path], Mapping[str, pd.DataFrame]]
) -> tuple[Path, Mapping[str, pd.DataFrame]]:
    """(the export folder, its tables) of ``score(folder)``, run once per session under ``name``. ``base_temp`` is
    ``tmp_path_factory.getbasetemp()``: a worker's is SESSION/popen-gwN, whose parent the session's workers share."""
    shared = Path(base_temp).parent if os.environ.get("PYTEST_XDIST_WORKER") else Path(base_temp)
    folder = shared / f"scored-{name}"
    names = folder / "tables.json"
    with FileLock(str(shared / f"scored-{name}.lock")):
        if not names.exists():
            folder.mkdir(parents=True, exist_ok=True)
            tables = score(folder / "out")
            names.write_text(json.dumps(list(tables)), encoding="utf-8")
    return folder / "out", ExportedTables(folder / "out", json.loads(names.read_text(encoding="utf-8")))
