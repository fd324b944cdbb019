"""The core's import graph (issue 33.1): its modules follow the data's path, in stage subpackages,
and import only their own stage or the stages before it; and no two modules import each other,
directly or round a cycle. Imports inside functions count: a cycle dodged by importing late is
still a cycle. Read from the source with ast."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from tests.helpers.source import parse

CORE = Path(__file__).resolve().parents[2] / "fairness_assets" / "core"
# the data's path, first stage first (docs/architecture.md, "The core, stage by stage")
STAGES = ("common", "reference", "generation", "understanding", "scoring", "statistics", "reporting")


def module_name(path: Path) -> str:
    """``statistics.stats`` for core/statistics/stats.py; ``statistics`` for its __init__.py."""
    parts = path.relative_to(CORE).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def core_imports(path: Path, modules: set[str]) -> set[str]:
    """The core modules ``path`` imports (dotted below core/), at the top or inside a function."""
    package = path.relative_to(CORE).parts[:-1]
    found = set()
    for node in ast.walk(parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.ImportFrom):
            if node.level:
                up = len(package) - node.level + 1
                if up < 0:
                    continue  # outside core/
                base = ".".join(package[:up] + ((node.module,) if node.module else ()))
            elif (node.module or "").startswith("fairness_assets.core"):
                base = node.module[len("fairness_assets.core") :].lstrip(".")
            else:
                continue
            for a in node.names:  # from x import module, or from x.module import name
                joined = f"{base}.{a.name}" if base else a.name
                found.add(joined if joined in modules else base)
        elif isinstance(node, ast.Import):
            found |= {
                a.name[len("fairness_assets.core.") :] for a in node.names if a.name.startswith("fairness_assets.core.")
            }
    return (found & modules) - {module_name(path)}


def graph() -> dict[str, set[str]]:
    paths = list(CORE.rglob("*.py"))
    modules = {module_name(p) for p in paths} - {""}
    return {module_name(p): core_imports(p, modules) for p in paths if module_name(p)}


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


def upward(edges: dict[str, set[str]]) -> list[str]:
    """Each import of a later stage from an earlier one (or of a module outside the stages)."""
    rank = {s: i for i, s in enumerate(STAGES)}
    bad = []
    for module, targets in sorted(edges.items()):
        for target in sorted(targets):
            a, b = module.split(".")[0], target.split(".")[0]
            if a not in rank or b not in rank or rank[b] > rank[a]:
                bad.append(f"{module} imports {target}")
    return bad


def test_every_core_module_sits_in_a_stage():
    loose = [p.name for p in CORE.glob("*.py") if p.name != "__init__.py"]
    assert not loose, f"modules directly in core/, outside the stages {STAGES}: {loose}"
    assert {p.name for p in CORE.iterdir() if p.is_dir() and p.name != "__pycache__"} == set(STAGES)


def test_imports_run_only_down_the_path():
    found = upward(graph())
    assert not found, "imports against the data's path: " + "; ".join(found)


def test_the_core_has_no_import_cycle():
    found = cycles(graph())
    assert not found, "import cycles in fairness_assets/core: " + "; ".join(" -> ".join(c) for c in found)


def test_the_graph_sees_relative_and_absolute_imports():
    edges = graph()
    assert "common.metric_catalogue" in edges["statistics.stats"]
    assert "reference.subjects" in edges["reference.design"]  # an import inside a function


@pytest.mark.parametrize(
    "edges, found",
    [
        ({"reference.prompts": {"understanding.tags"}}, ["reference.prompts imports understanding.tags"]),
        ({"statistics.stats": {"common.text"}, "reporting.report": {"statistics.stats"}}, []),
        ({"common.text": {"loose"}}, ["common.text imports loose"]),
    ],
)
def test_an_upward_import_is_found(edges, found):
    assert upward(edges) == found


def test_a_cycle_is_found():
    assert cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}}) == [["a", "b", "c", "a"]]
    assert cycles({"a": {"b"}, "b": set()}) == []
