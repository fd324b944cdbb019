"""resources/result_store.py converts a column whose dtype already fits its declared type whole
(issue 36: the cell-by-cell conversion was a tenth of a study-size audit's storing); the values are
those of the cell-by-cell path, for every dtype and kind, and a value that does not fit is still
refused by name."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest

from fairness_assets.core.common import result_tables as catalogue
from resources import result_store
from resources.result_store import ResultTypeError

TABLE = next(iter(catalogue.typed()))
COLUMNS = {
    "floats": pd.Series([0.1, np.nan, np.inf, -np.inf, -0.0, 1e300, 3.0]),
    "float32": pd.Series([0.1, np.nan, 2.5], dtype=np.float32),
    "ints": pd.Series([1, -2, 2**40], dtype=np.int64),
    "int32": pd.Series([1, 2, 3], dtype=np.int32),
    "integral floats": pd.Series([1.0, np.nan, -3.0]),
    "bools": pd.Series([True, False, True]),
    "strings": pd.Series(["a", "b é", "", "None"], dtype=object),
    "strings and gaps": pd.Series(["a", None, np.nan, "c"], dtype=object),
    "mixed objects": pd.Series(["a", 1, 2.5, True], dtype=object),
    "numpy strings": pd.Series([np.str_("x"), "y"], dtype=object),
    "nullable ints": pd.Series([1, None, 3], dtype="Int64"),
    "nullable bools": pd.Series([True, None], dtype="boolean"),
    "strings of bools": pd.Series(["True", "False"], dtype=object),
    "empty": pd.Series([], dtype=float),
}


def _cell_by_cell(monkeypatch, kind, s):
    with monkeypatch.context() as m:
        m.setattr(result_store, "_fast_values", lambda kind, s: None)
        try:
            return result_store._values(TABLE, "c", kind, s)
        except ResultTypeError as exc:
            return type(exc)


def _same(a, b) -> bool:
    if isinstance(a, type) or isinstance(b, type):
        return a is b
    return len(a) == len(b) and all(
        type(x) is type(y) and (x == y or (isinstance(x, float) and math.isnan(x) and math.isnan(y)))
        for x, y in zip(a, b, strict=True)
    )


@pytest.mark.parametrize("kind", ["float", "int", "bool", "text", "json", "home"])
@pytest.mark.parametrize("name", list(COLUMNS))
def test_whole_columns_convert_as_cell_by_cell(monkeypatch, kind, name):
    s = COLUMNS[name]
    expected = _cell_by_cell(monkeypatch, kind, s)
    try:
        got = result_store._values(TABLE, "c", kind, s)
    except ResultTypeError as exc:
        got = type(exc)
    assert _same(got, expected), (name, kind, got, expected)


def test_the_fast_path_is_taken_for_fitting_columns():
    assert result_store._fast_values("float", COLUMNS["floats"]) is not None
    assert result_store._fast_values("int", COLUMNS["ints"]) is not None
    assert result_store._fast_values("text", COLUMNS["strings"]) is not None
    assert result_store._fast_values("text", COLUMNS["mixed objects"]) is None
    assert result_store._fast_values("int", COLUMNS["integral floats"]) is None


def test_a_value_that_does_not_fit_is_named():
    with pytest.raises(ResultTypeError, match=r"declared int .* holds 0\.5"):
        result_store._values(TABLE, "c", "int", pd.Series([1.0, 0.5]))
