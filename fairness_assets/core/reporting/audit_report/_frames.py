"""Frame helpers shared by the report's tables: the columns of a table that it has, and counts read back as floats
made integers again."""

from __future__ import annotations

from typing import Sequence

import pandas as pd


def _cols(df: pd.DataFrame, cols: Sequence[str]) -> pd.DataFrame:
    return df[[c for c in cols if c in df.columns]]


def _integer_counts(df: pd.DataFrame) -> pd.DataFrame:
    """Counts read back from the long stored format as floats (``family_size`` 5.0) made integers
    again, so that sentences say "5 tests"."""
    cols = [c for c in ("family_size", "n_units", "n_pairs") if c in df.columns]
    if not cols or df.empty:
        return df
    out = df.copy()
    for c in cols:
        v = pd.to_numeric(out[c], errors="coerce")
        if v.notna().all() and (v == v.round()).all():
            out[c] = v.astype("int64")
    return out
