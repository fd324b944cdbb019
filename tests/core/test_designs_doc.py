"""docs/designs.md's table of shipped designs says each design's size as the design computes it (issue 35: the
languages design grew the named variant; the table must follow)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from fairness_assets.core.reference.design import SHIPPED_DIR, load_design

ROOT = Path(__file__).resolve().parents[2]
TEMPLATES_DIR = SHIPPED_DIR.parent / "templates"


def _table() -> dict[str, list[str]]:
    text = (ROOT / "docs" / "designs.md").read_text(encoding="utf-8")
    section = text.split("## Shipped designs", 1)[1].split("\n\n", 2)[1]
    rows = {}
    for line in section.splitlines():
        cells = [c.strip() for c in line.strip("|").split("|")]
        m = re.fullmatch(r"`(\w+)`", cells[0])
        if m:
            rows[m.group(1)] = cells
    return rows


def test_every_shipped_design_is_in_the_table():
    assert set(_table()) == {p.stem for p in SHIPPED_DIR.glob("*.yaml")}


@pytest.mark.parametrize("name", sorted(p.stem for p in SHIPPED_DIR.glob("*.yaml")))
def test_the_table_gives_the_designs_own_size(name):
    size = load_design(name, templates_dir=TEMPLATES_DIR).size()
    cells = _table()[name]
    assert cells[4] == f"{size['prompts_per_model']:,}", cells
    assert cells[5] == f"{size['runs']} x {size['models']}", cells
    assert cells[6] == f"{size['samples']:,}", cells
