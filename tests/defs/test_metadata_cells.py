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


def test_missing_values_and_tuples_read_as_text_not_python():
    import numpy as np

    df = pd.DataFrame(
        {"mean": [0.41234, np.nan], "who": ["a|b", None]},
        index=pd.MultiIndex.from_tuples(
            [("Global South", "Africa"), ("Global North", "Europe")], names=["south_north", "region"]
        ),
    )
    text = table_md(df).value
    assert "nan" not in text.lower() and "('" not in text
    assert "Global South / Africa" in text and "south_north / region" in text
    assert text.count("n/a") == 2 and "0.4123" in text and "a\\|b" in text


def test_an_empty_table_says_why_instead_of_a_bare_header():
    assert (
        table_md(pd.DataFrame(columns=["model", "drs"]), empty="no model has both templates").value
        == "no rows: no model has both templates"
    )
    assert table_md(pd.DataFrame(columns=["model"])).value == "no rows"


def test_numbers_for_the_ui_are_rounded_and_never_nan():
    from fairness_assets.defs.metadata import number

    assert number(16976.320890088107, 5) == 16976.0
    assert number(0.9166666666666666) == 0.9167
    assert number(0.000123456) == 0.0001235
    assert number(float("nan")) is None and number(None) is None and number(0) == 0.0


def test_the_demo_audit_metadata_has_no_raw_values():
    """Every asset and check of a demo partition: no 'nan', no Python tuple, no unrounded float,
    no table drawn as a bare header (issue 23.6)."""
    import re
    import tempfile
    from pathlib import Path

    import dagster as dg

    from resources import database as D
    from tests.helpers import pipeline as P

    tmp = Path(tempfile.mkdtemp())
    db = D.ResultsDatabase(url=f"sqlite:///{tmp}/r.db")
    instance = dg.DagsterInstance.ephemeral()
    instance.add_dynamic_partitions("models", [P.DEMO_MODEL])
    result = dg.materialize(
        P.ASSETS,
        instance=instance,
        partition_key=P.DEMO_KEY,
        raise_on_error=False,
        resources=P.resources(db, P.DEMO_RESPONSES),
    )
    assert result.success
    problems, seen = [], 0
    for event in result.all_events:
        if event.event_type_value not in ("ASSET_MATERIALIZATION", "ASSET_CHECK_EVALUATION"):
            continue
        data = event.event_specific_data
        metadata = getattr(getattr(data, "materialization", None) or data, "metadata", {}) or {}
        for key, value in metadata.items():
            if key == "params":
                continue  # the scoring parameters as configured (provenance: exact values)
            seen += 1
            raw = getattr(value, "value", value)
            text = str(raw)
            if "data:image" in text:
                continue
            if re.search(r"(?<![A-Za-z/])nan(?![A-Za-z])", text, re.I):
                problems.append((event.step_key, key, "nan"))
            if re.search(r"\('[^']*', '", text):
                problems.append((event.step_key, key, "tuple"))
            if isinstance(raw, float) and raw == raw and raw != round(raw, 6):
                problems.append((event.step_key, key, f"unrounded {raw}"))
            table_lines = [line for line in text.splitlines() if line.strip().startswith("|")]
            if table_lines and len(table_lines) <= 2:
                problems.append((event.step_key, key, "a table with a header and no row"))
    assert seen > 50
    assert not problems, problems
