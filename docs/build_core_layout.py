"""Rebuilds the section "The core, stage by stage" of docs/architecture.md from the code (issue 33.6):
the stages of fairness_assets/core/ in the data's order, what each holds and when to open it (the
package's docstring), the earlier stages it imports (read from the source with ast), and each module
with the first line of its docstring. tests/test_architecture_doc.py fails when the section is stale.

.venv/bin/python docs/build_core_layout.py
"""

from __future__ import annotations

import ast
import re
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
CORE = ROOT / "fairness_assets" / "core"
DOC = ROOT / "docs" / "architecture.md"
STAGES = ("common", "reference", "generation", "understanding", "scoring", "statistics", "reporting")
BEGIN = "<!-- core layout: docs/build_core_layout.py -->"
END = "<!-- end of core layout -->"


def _docstring(path: Path) -> str:
    return ast.get_docstring(ast.parse(path.read_text(encoding="utf-8"))) or ""


def _first_sentence(text: str) -> str:
    """The docstring's first sentence (up to a full stop before a capital letter or the end of
    its first paragraph)."""
    para = " ".join(text.strip().split("\n\n")[0].split())
    para = re.sub(r":(?:func|class|mod|data|meth|attr):`", "`", para).replace("``", "`")  # Markdown, not reST
    m = re.search(r"(?<=[a-z0-9)\]`'\"])[.!?](?=\s+[A-Z(`*])", para)
    first = para[: m.end()] if m else para
    return first[:-2] + "." if first.endswith("::") else first


def _stage_imports(stage: str, core: Path = CORE) -> list[str]:
    """The other stages the modules of ``stage`` import (relative or absolute, inside functions too)."""
    found = set()
    for path in (core / stage).rglob("*.py"):
        package = path.relative_to(core).parts[:-1]
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.ImportFrom):
                if node.level:
                    up = len(package) - node.level + 1
                    parts = list(package[: max(up, 0)]) + (node.module.split(".") if node.module else [])
                elif (node.module or "").startswith("fairness_assets.core."):
                    parts = node.module.split(".")[2:]
                else:
                    continue
                if parts and parts[0] in STAGES:
                    found.add(parts[0])
                elif not parts:  # from .. import stage
                    found |= {a.name for a in node.names if a.name in STAGES}
    return [s for s in STAGES if s in found and s != stage]


def _modules(stage: str, core: Path = CORE) -> list[tuple[str, str]]:
    out = []
    for path in sorted((core / stage).rglob("*.py")):
        rel = path.relative_to(core / stage)
        if rel == Path("__init__.py"):
            continue
        name = str(rel.parent) + "/" if rel.name == "__init__.py" else str(rel)
        first = _first_sentence(_docstring(path)).replace("|", "\\|")
        out.append((name, first))
    return out


def render(core: Path = CORE) -> str:
    lines = [BEGIN, ""]
    for i, stage in enumerate(STAGES, 1):
        doc = _docstring(core / stage / "__init__.py")
        imports = _stage_imports(stage, core)
        lines.append(f"**{i}. `core/{stage}/`**: {' '.join(doc.split())}")
        lines.append("")
        lines.append(f"Imports: {', '.join(f'`{s}/`' for s in imports) if imports else 'no other stage'}.")
        lines.append("")
        lines.append("| module | what it holds |")
        lines.append("| --- | --- |")
        lines += [f"| `{name}` | {first} |" for name, first in _modules(stage, core)]
        lines.append("")
    lines.append(END)
    return "\n".join(lines)


def current() -> str:
    text = DOC.read_text(encoding="utf-8")
    m = re.search(re.escape(BEGIN) + r".*?" + re.escape(END), text, re.S)
    if not m:
        raise SystemExit(f"{DOC}: no section between {BEGIN!r} and {END!r}")
    return m.group(0)


def main() -> None:
    text = DOC.read_text(encoding="utf-8")
    new = text.replace(current(), render())
    DOC.write_text(new, encoding="utf-8")
    print(f"{DOC.relative_to(ROOT)}: core layout {'unchanged' if new == text else 'rebuilt'}")


if __name__ == "__main__":
    sys.exit(main())
