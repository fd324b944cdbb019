"""The layers' import rules (docs/architecture.md, "Layers and the data's path through them"):
core/ imports no framework, database, GPU library or other layer; resources/ imports nothing of
the Dagster shell (defs/). Read from the source with ast, so a lazy import inside a function counts."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from tests.helpers.source import parse

ROOT = Path(__file__).resolve().parents[2]
CORE_FORBIDDEN = (
    "dagster",
    "dagster_",
    "sqlalchemy",
    "sqlmodel",
    "alembic",
    "psycopg2",
    "torch",
    "transformers",
    "great_expectations",
    "openai",
    "httpx",
    "vllm",
    "resources",
    "fairness_assets.defs",
    "fairness_assets.local",
    "fairness_assets.cli",
)
RESOURCES_FORBIDDEN = ("fairness_assets.defs", "fairness_assets.local", "fairness_assets.cli")


def imports(path: Path) -> list[tuple[int, str]]:
    tree = parse(path.read_text(encoding="utf-8"), filename=str(path))
    out = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            out += [(node.lineno, a.name) for a in node.names]
        elif isinstance(node, ast.ImportFrom):
            if node.level:  # relative: resolve against the file's package
                package = path.relative_to(ROOT).with_suffix("").parts[: -node.level]
                out.append((node.lineno, ".".join(package + ((node.module,) if node.module else ()))))
            elif node.module:
                out.append((node.lineno, node.module))
    return out


def violations(folder: str, forbidden: tuple[str, ...]) -> list[str]:
    bad = []
    for path in sorted((ROOT / folder).rglob("*.py")):
        for line, name in imports(path):
            if any(
                name == f or name.startswith(f + ".") or (f.endswith("_") and name.startswith(f)) for f in forbidden
            ):
                bad.append(f"{path.relative_to(ROOT)}:{line} imports {name}")
    return bad


def test_core_imports_no_framework_database_gpu_or_other_layer():
    assert not violations("fairness_assets/core", CORE_FORBIDDEN)


def test_resources_import_nothing_of_the_dagster_shell():
    assert not violations("resources", RESOURCES_FORBIDDEN)


@pytest.mark.parametrize(
    "source, expected",
    [
        ("import dagster as dg\n", "imports dagster"),
        ("def f():\n    from resources.database import ResultsDatabase\n", "imports resources.database"),
        ("from ..defs import services\n", "imports fairness_assets.defs"),
    ],
)
def test_a_forbidden_import_is_found(tmp_path, monkeypatch, source, expected):
    """The check itself can fail: a planted forbidden import (lazy, relative or plain) is reported."""
    folder = ROOT / "fairness_assets" / "core"
    planted = folder / "_planted_layer_probe.py"
    monkeypatch.setattr(Path, "rglob", lambda self, pattern: iter([planted]) if self == folder else iter(()))
    monkeypatch.setattr(Path, "read_text", lambda self, encoding=None: source)
    found = violations("fairness_assets/core", CORE_FORBIDDEN)
    assert len(found) == 1 and expected in found[0]
