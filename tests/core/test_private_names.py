"""No core module reaches into another module's private names (issue 33.4): a helper two modules
share is public in the one that defines it (``stats.paired_test``, ``stats.key_frame``), so a
reader can tell from a name whether others depend on it."""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
CORE = ROOT / "fairness_assets" / "core"


def private_reaches(core: Path = CORE) -> list[str]:
    """``module._name`` uses in core, where ``module`` is a name bound by an import (``from .. import
    stats as st``, ``import x``) and ``_name`` is private (one leading underscore, not a dunder)."""
    found = []
    for path in sorted(core.rglob("*.py")):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        modules = set()
        for node in ast.walk(tree):
            if isinstance(node, ast.Import):
                modules |= {(a.asname or a.name).split(".")[0] for a in node.names}
            elif isinstance(node, ast.ImportFrom):
                modules |= {a.asname or a.name for a in node.names}
        for node in ast.walk(tree):
            if (
                isinstance(node, ast.Attribute)
                and isinstance(node.value, ast.Name)
                and node.value.id in modules
                and node.attr.startswith("_")
                and not node.attr.startswith("__")
            ):
                found.append(f"{path.relative_to(core)}:{node.lineno}: {node.value.id}.{node.attr}")
    return found


def test_no_core_module_uses_another_modules_private_names():
    assert not private_reaches(), private_reaches()


def test_a_private_reach_is_found(tmp_path):
    (tmp_path / "a.py").write_text("from . import stats as st\n\nx = st._rng(0)\ny = st.public(1)\n", encoding="utf-8")
    assert private_reaches(tmp_path) == ["a.py:3: st._rng"]
