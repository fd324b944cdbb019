"""UI metadata cuts long text cells: a 10 MB answer in an asset's preview must not cost GBs of
Markdown and event log (issue 19.5); the stored answer is whole."""

import pandas as pd

from fairness_assets.defs.metadata import MAX_CELL_CHARS, preview, table_md


def test_a_long_text_cell_is_cut_and_says_how_long_it_was():
    answer = "University of Nairobi, Kenya. " * 400_000  # 12 MB
    text = preview(pd.DataFrame({"response_id": ["m|base|p|0"], "response": [answer]})).value
    assert len(text) < 4 * MAX_CELL_CHARS  # the header row is padded to the cell width
    assert f"({len(answer):,} characters)" in text
    assert "m\\|base\\|p\\|0" in text  # pipes still escaped


def test_short_cells_are_unchanged():
    text = table_md(pd.DataFrame({"a": ["short"], "b": [1.5]})).value
    assert "short" in text and "characters" not in text
