"""core.common.tables: the long storage form, plain and packed, reads back the same tables."""

import numpy as np
import pandas as pd

from fairness_assets.core.common import tables


def _frame() -> pd.DataFrame:
    return pd.DataFrame(
        {
            "attribute": ["class", "class", "nationality"],
            "value_a": ["high", None, "Kenya"],
            "mean_diff": [0.25, np.nan, -1.5],
            "family_size": np.array([3, 3, 780], dtype=np.int64),
            "significant": [True, False, False],
            "note": ["needs is 0 by construction", "", 'ü, 日本, "quoted"'],
        }
    )


def test_packed_and_plain_tables_read_back_identically():
    frame = _frame()
    plain = tables.from_long(tables.to_long({"t": frame}))["t"]
    packed_long = tables.to_long({"t": frame, "empty": frame.iloc[0:0]}, packed=("t", "empty"))
    packed = tables.from_long(packed_long)
    pd.testing.assert_frame_equal(packed["t"], plain)
    assert list(packed["empty"].columns) == list(frame.columns) and packed["empty"].empty
    assert (packed_long["table_name"] == "t").sum() == len(frame.columns) + len(frame)  # one row per table row
    assert plain["mean_diff"].dtype == float and np.isnan(plain["mean_diff"].iloc[1])
    assert plain["significant"].tolist() == ["True", "False", "False"]  # text, as ever
    assert packed["t"]["value_a"].iloc[1] is None


def test_a_packed_table_beside_plain_ones_in_one_long_frame():
    long = tables.to_long({"small": pd.DataFrame({"x": [1.0, 2.0]}), "big": _frame()}, packed=("big",))
    back = tables.from_long(long)
    assert back["small"]["x"].tolist() == [1.0, 2.0]
    assert back["big"]["note"].iloc[2] == 'ü, 日本, "quoted"'


def test_counts_read_back_as_integers_in_both_forms():
    """A column of integers (responses, items, n) reads back as integers, not 8.0; floats stay floats."""
    frame = pd.DataFrame({"group": ["all", "female"], "responses": [8, 4], "drs": [0.75, 1.0]})
    for packed in ((), ("t",)):
        back = tables.from_long(tables.to_long({"t": frame}, packed=packed))["t"]
        assert back["responses"].dtype == np.int64 and back["responses"].tolist() == [8, 4], packed
        assert back["drs"].dtype == float and back["drs"].tolist() == [0.75, 1.0], packed  # 1.0 stays a float
        pd.testing.assert_frame_equal(back, frame)


def test_integers_with_a_missing_cell_and_tables_stored_before_read_back_as_floats():
    frame = pd.DataFrame({"n": pd.array([3, None], dtype="Int64")})
    for packed in ((), ("t",)):
        back = tables.from_long(tables.to_long({"t": frame}, packed=packed))["t"]
        assert back["n"].dtype == float and back["n"].iloc[0] == 3 and np.isnan(back["n"].iloc[1]), packed
    # a long table written before integer columns were marked (no header row): floats, as it was stored
    old = tables.to_long({"t": pd.DataFrame({"n": [1, 2]})})
    old = old[old["row_index"] >= 0]
    assert tables.from_long(old)["t"]["n"].dtype == float
