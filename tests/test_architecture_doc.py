"""docs/architecture.md's "The core, stage by stage" is drawn from the code (issue 33.6): the section equals what
docs/build_core_layout.py renders from the stage packages, their docstrings and their imports, so a module added,
moved or renamed without rebuilding the section fails here."""

from __future__ import annotations

import importlib.util
import shutil
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def _builder():
    spec = importlib.util.spec_from_file_location("build_core_layout", ROOT / "docs" / "build_core_layout.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_the_core_layout_section_is_drawn_from_the_code():
    b = _builder()
    assert b.current() == b.render(), "docs/architecture.md is stale: run .venv/bin/python docs/build_core_layout.py"


def test_the_section_names_every_core_module_and_stage():
    b = _builder()
    text = b.render()
    for stage in b.STAGES:
        assert f"`core/{stage}/`" in text
        for path in (b.CORE / stage).rglob("*.py"):
            rel = path.relative_to(b.CORE / stage)
            if rel != Path("__init__.py"):
                name = f"{rel.parent}/" if rel.name == "__init__.py" else str(rel)
                assert f"| `{name}` |" in text, name


def test_a_module_added_without_a_rebuild_is_seen(tmp_path):
    b = _builder()
    core = tmp_path / "core"
    shutil.copytree(b.CORE, core, ignore=shutil.ignore_patterns("__pycache__"))
    before = b.render(core)
    (core / "scoring" / "planted.py").write_text('"""A planted module."""\n', encoding="utf-8")
    (core / "reference" / "planted_up.py").write_text("from ..reporting import report\n", encoding="utf-8")
    after = b.render(core)
    assert before == b.render() and after != before
    assert "| `planted.py` | A planted module. |" in after
    assert "Imports: `common/`, `reporting/`." in after  # reference/ now imports reporting/: the section shows it
