"""Many small result tables <-> one long table (for storage in a single SQL table).

Each cell becomes a row ``(table_name, row_index, column, value, value_text)``: numbers in
``value``, everything else in ``value_text``. ``from_long`` restores each table with its
column order and dtypes (numbers as float, text as object).
"""

from __future__ import annotations

from typing import Mapping

import numpy as np
import pandas as pd

LONG_COLUMNS = ["table_name", "row_index", "column_index", "column", "value", "value_text"]


def to_long(tables: Mapping[str, pd.DataFrame]) -> pd.DataFrame:
    frames = []
    for name, df in tables.items():
        if df.empty:
            # keep the columns of an empty table so that it reads back with its header
            frames.append(pd.DataFrame({"table_name": name, "row_index": -1, "column_index": np.arange(len(df.columns)),
                                        "column": list(df.columns), "value": np.nan, "value_text": None}))
            continue
        for j, col in enumerate(df.columns):
            s = df[col]
            numeric = pd.api.types.is_numeric_dtype(s) and not pd.api.types.is_bool_dtype(s)
            frames.append(pd.DataFrame({
                "table_name": name, "row_index": np.arange(len(df)), "column_index": j, "column": str(col),
                "value": pd.to_numeric(s, errors="coerce").astype(float).to_numpy() if numeric else np.nan,
                "value_text": None if numeric else s.astype(object).where(s.notna(), None).map(
                    lambda v: None if v is None else str(v)).to_numpy(),
            }))
    return pd.concat(frames, ignore_index=True) if frames else pd.DataFrame(columns=LONG_COLUMNS)


def from_long(long: pd.DataFrame) -> dict[str, pd.DataFrame]:
    out = {}
    for name, g in long.groupby("table_name", sort=False):
        cols = g.drop_duplicates("column_index").sort_values("column_index")["column"].tolist()
        body = g[g["row_index"] >= 0]
        if body.empty:
            out[name] = pd.DataFrame(columns=cols)
            continue
        numeric = body.groupby("column")["value_text"].apply(lambda s: s.isna().all())
        data = {}
        for col in cols:
            c = body[body["column"] == col].sort_values("row_index")
            data[col] = c["value"].to_numpy(dtype=float) if numeric.get(col, False) else c["value_text"].to_numpy(dtype=object)
        out[name] = pd.DataFrame(data)
    return out
