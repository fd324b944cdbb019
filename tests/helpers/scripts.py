"""Load a script of the project (a benchmark, a docs generator) as a module, by path: they are
not in a package, and some share names with the standard library (benchmarks/statistics.py)."""

from __future__ import annotations

import importlib.util
from pathlib import Path
from types import ModuleType

ROOT = Path(__file__).resolve().parents[2]


def load_script(relative: str, name: str | None = None) -> ModuleType:
    """``relative`` (e.g. ``benchmarks/statistics.py``) imported as a module named ``name``."""
    path = ROOT / relative
    spec = importlib.util.spec_from_file_location(name or path.stem.replace("-", "_"), path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module
