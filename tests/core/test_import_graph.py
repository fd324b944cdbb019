"""The core's modules import each other without cycles (issue 33.1: match and match_tables no
longer import each other; their shared name functions are core/match_names.py). Imports inside
functions count: a cycle dodged by importing late is still a cycle."""

from __future__ import annotations

import ast
from pathlib import Path

CORE = Path(__file__).resolve().parents[2] / "fairness_assets" / "core"


def core_imports(path: Path, modules: set[str]) -> set[str]:
    """The core modules ``path`` imports, at the top or inside a function."""
    found = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level == 1 and not base:  # from . import x
                found |= {a.name for a in node.names}
            elif node.level == 1:  # from .x import y
                found.add(base.split(".")[0])
            elif base == "fairness_assets.core":
                found |= {a.name for a in node.names}
            elif base.startswith("fairness_assets.core."):
                found.add(base.split(".")[2])
        elif isinstance(node, ast.Import):
            for a in node.names:
                if a.name.startswith("fairness_assets.core."):
                    found.add(a.name.split(".")[2])
    return (found & modules) - {path.stem}


def graph() -> dict[str, set[str]]:
    paths = [p for p in CORE.glob("*.py") if p.stem != "__init__"]
    modules = {p.stem for p in paths}
    return {p.stem: core_imports(p, modules) for p in paths}


def cycles(edges: dict[str, set[str]]) -> list[list[str]]:
    """Every cycle found by a depth-first walk (each reported once, from its first module)."""
    out, state = [], {}

    def walk(node, path):
        state[node] = "open"
        for nxt in sorted(edges.get(node, ())):
            if state.get(nxt) == "open":
                out.append(path[path.index(nxt) :] + [nxt])
            elif nxt not in state:
                walk(nxt, path + [nxt])
        state[node] = "done"

    for node in sorted(edges):
        if node not in state:
            walk(node, [node])
    return out


def test_the_core_has_no_import_cycle():
    found = cycles(graph())
    assert not found, "import cycles in fairness_assets/core: " + "; ".join(" -> ".join(c) for c in found)


def test_match_tables_reads_the_names_not_the_matcher():
    edges = graph()
    assert "match_names" in edges["match_tables"] and "match" not in edges["match_tables"]
    assert {"match_names", "match_tables"} <= edges["match"]


def test_a_cycle_is_found():
    assert cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}}) == [["a", "b", "c", "a"]]
    assert cycles({"a": {"b"}, "b": set()}) == []
