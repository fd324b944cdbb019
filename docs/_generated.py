"""A generated section of a doc page, between a BEGIN and an END marker: written by the docs'
build_*.py scripts, read back by the tests that check the page is current."""

from __future__ import annotations

from pathlib import Path


def _bounds(text: str, begin: str, end: str, doc: Path) -> tuple[int, int]:
    start, stop = text.find(begin), text.find(end)
    if start < 0 or stop < start:
        raise ValueError(f"{doc}: the markers {begin!r} ... {end!r} are missing or out of order")
    return start, stop + len(end)


def section(doc: Path, begin: str, end: str) -> str:
    """The generated section of ``doc``, markers included."""
    text = doc.read_text(encoding="utf-8")
    start, stop = _bounds(text, begin, end, doc)
    return text[start:stop]


def replace(doc: Path, begin: str, end: str, rendered: str) -> None:
    """Replace the generated section of ``doc`` with ``rendered`` (markers included)."""
    text = doc.read_text(encoding="utf-8")
    start, stop = _bounds(text, begin, end, doc)
    doc.write_text(text[:start] + rendered + text[stop:], encoding="utf-8")
