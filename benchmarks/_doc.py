"""Writes one section of docs/benchmarks.md, replacing the section of the same title."""

from __future__ import annotations

from pathlib import Path

DOC = Path(__file__).resolve().parents[1] / "docs" / "benchmarks.md"


def write_section(title: str, body: str, doc: Path = DOC) -> None:
    text = doc.read_text(encoding="utf-8") if doc.exists() else "# Benchmarks\n"
    section = f"## {title}\n\n{body.rstrip()}\n"
    start = text.find(f"## {title}\n")
    if start >= 0:
        end = text.find("\n## ", start + 3)
        text = text[:start] + section + (text[end:] if end >= 0 else "")
    else:
        text = text.rstrip() + "\n\n" + section
    doc.write_text(text, encoding="utf-8")
