"""The report's tables read each cell by column (core/reporting/report/tables.py ``_columns``) and give what the
lookup per cell gave: the expected strings below were written by that code (before issue 36) for a frame of every
dtype a stored table brings (float with NaN, nullable Int64, numpy bool, Timestamp with NaT, string with NA,
categorical), the ``significant`` / ``marking`` / ``passed`` columns included."""

import numpy as np
import pandas as pd

from fairness_assets.core.reporting.report.tables import table_html, table_markdown


def _frame() -> pd.DataFrame:
    return pd.DataFrame(
        {
            "share": [1.5, np.nan],
            "n": pd.array([1, None], dtype="Int64"),
            "significant": [True, False],
            "marking": ["* p<0.05", "not significant"],
            "passed": [np.bool_(True), False],
            "when": pd.to_datetime(["2024-01-01", None]),
            "name": pd.array(["<x>", None], dtype="string"),
            "kind": pd.Categorical(["u", "v"]),
        }
    )


def test_html_cells_of_every_dtype():
    assert table_html(_frame()) == (
        "<table><thead><tr><th>share</th><th>n</th><th>significant</th><th>marking</th><th>passed</th><th>when</th>"
        '<th>name</th><th>kind</th></tr></thead><tbody><tr class="sig-row"><td class="num">1.5000</td>'
        '<td class="num">1</td><td><span class="badge sig">significant</span></td><td><strong class="mark">* p&lt;0.05'
        '</strong></td><td><span class="badge pass">PASS</span></td><td>2024-01-01 00:00:00</td><td>&lt;x&gt;</td>'
        '<td>u</td></tr><tr><td class="num">\u2014</td><td class="num">\u2014</td><td><span class="badge ns">not '
        'significant</span></td><td><span class="quiet">not significant</span></td><td><span class="badge fail">FAIL'
        "</span></td><td>NaT</td><td>\u2014</td><td>v</td></tr></tbody></table>"
    )


def test_markdown_cells_of_every_dtype():
    assert table_markdown(_frame()) == (
        "| share | n | significant | marking | passed | when | name | kind |\n"
        "| ---: | ---: | --- | --- | --- | --- | --- | --- |\n"
        "| 1.5000 | 1 | **significant** | **\\* p&lt;0.05** | PASS | 2024-01-01 00:00:00 | &lt;x&gt; | u |\n"
        "| \u2014 | \u2014 | not significant | not significant | **FAIL** | NaT | \u2014 | v |"
    )


def test_a_cut_table_says_how_many_rows_it_shows():
    frame = pd.concat([_frame()] * 3, ignore_index=True)
    assert table_html(frame, max_rows=4).endswith('<p class="note">Showing the first 4 of 6 rows.</p>')
    assert table_markdown(frame, max_rows=4).endswith("_Showing the first 4 of 6 rows._")
    assert table_markdown(frame, max_rows=4).count("\n| ") == 5  # the alignment row and four rows
