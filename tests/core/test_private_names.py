"""No core module reaches into another module's private names (issue 33.4): a helper two modules
share is public in the one that defines it (``stats.paired_test``, ``stats.key_frame``), so a
reader can tell from a name whether others depend on it."""

from __future__ import annotations

import ast
from pathlib import Path

from tests.helpers.source import parse

ROOT = Path(__file__).resolve().parents[2]
CORE = ROOT / "fairness_assets" / "core"


def private_reaches(core: Path = CORE) -> list[str]:
    """``module._name`` uses in core, where ``module`` is a name bound by an import of this project's code
    (``from .. import stats as st``, ``import fairness_assets.x``) and ``_name`` is private (one leading
    underscore, not a dunder). The standard library's and other packages' own names (``os._exit``,
    ``sys._getframe``) are their public API and are not counted."""
    found = []
    for path in sorted(core.rglob("*.py")):
        tree = parse(path.read_text(encoding="utf-8"))
        modules = set()
        for node in ast.walk(tree):
            if isinstance(node, ast.Import):
                ours = [a for a in node.names if a.name.split(".")[0] == "fairness_assets"]
                modules |= {(a.asname or a.name).split(".")[0] for a in ours}
            elif isinstance(node, ast.ImportFrom) and (
                node.level > 0 or (node.module or "").split(".")[0] == "fairness_assets"
            ):
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


def test_a_reach_into_this_projects_absolute_import_is_found_and_the_standard_librarys_is_not(tmp_path):
    (tmp_path / "a.py").write_text(
        "import os\nimport fairness_assets.core as fc\nfrom fairness_assets.core import stats\n\n"
        "os._exit(1)\nfc._hidden()\nstats._rng(0)\n",
        encoding="utf-8",
    )
    assert private_reaches(tmp_path) == ["a.py:6: fc._hidden", "a.py:7: stats._rng"]
