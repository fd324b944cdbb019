"""Many small result tables <-> one long table (for storage in a single SQL table).

Each cell becomes a row ``(table_name, row_index, column, value, value_text)``: numbers in
``value``, everything else in ``value_text``. ``from_long`` restores each table with its
column order and dtypes (numbers as float, text as object; a column of integers, such as a count,
as integers: one header row per such column, ``row_index`` -1, ``value_text`` ``int``, says so).

A large table can be stored *packed* (``to_long(..., packed=names)``): one row per table row, its
cells a JSON list in ``value_text`` (column ``__row__``), after one header row per column naming it
and its kind (``int`` / ``num`` / ``text``). ``from_long`` reads both forms alike, with the same dtypes. The
statistics of a study-size partition (counterfactual pairs, their behaviour / needs split, envy:
about 16,000 table rows of up to 30 columns) are stored in ~16,000 rows instead of ~400,000.
"""

from __future__ import annotations

import json
from typing import Collection, Mapping

import numpy as np
import pandas as pd

LONG_COLUMNS = ["table_name", "row_index", "column_index", "column", "value", "value_text"]
PACKED = "__row__"  # the column name of a packed table's rows


def _is_numeric(s: pd.Series) -> bool:
    return pd.api.types.is_numeric_dtype(s) and not pd.api.types.is_bool_dtype(s)


def _is_integer(s: pd.Series) -> bool:
    return pd.api.types.is_integer_dtype(s) and not pd.api.types.is_bool_dtype(s)


def _restore_integers(values: np.ndarray) -> np.ndarray:
    """A column stored as integers, back as int64 (kept float where a cell is missing)."""
    return values if np.isnan(values).any() else values.astype(np.int64)


def _packed(name: str, df: pd.DataFrame) -> pd.DataFrame:
    kinds = ["int" if _is_integer(df[c]) else "num" if _is_numeric(df[c]) else "text" for c in df.columns]
    cells = []
    for col, kind in zip(df.columns, kinds, strict=False):
        s = df[col]
        if kind in ("num", "int"):
            v = pd.to_numeric(s, errors="coerce").astype(float)
            cells.append([None if x != x else float(x) for x in v.to_numpy()])
        else:
            cells.append([None if x is None else str(x) for x in s.astype(object).where(s.notna(), None)])
    rows = [json.dumps(list(r), separators=(",", ":")) for r in zip(*cells, strict=False)]
    head = pd.DataFrame(
        {
            "table_name": name,
            "row_index": -1,
            "column_index": np.arange(len(df.columns)),
            "column": [str(c) for c in df.columns],
            "value": np.nan,
            "value_text": kinds,
        }
    )
    body = pd.DataFrame(
        {
            "table_name": name,
            "row_index": np.arange(len(df)),
            "column_index": -1,
            "column": PACKED,
            "value": np.nan,
            "value_text": rows,
        }
    )
    return pd.concat([head, body], ignore_index=True)


def _unpacked(g: pd.DataFrame) -> pd.DataFrame:
    head = g[(g["row_index"] < 0) & (g["column"] != PACKED)].sort_values("column_index")
    cols, kinds = head["column"].tolist(), head["value_text"].tolist()
    body = g[g["column"] == PACKED].sort_values("row_index")
    rows = [json.loads(t) for t in body["value_text"]]
    data = {}
    for j, (col, kind) in enumerate(zip(cols, kinds, strict=False)):
        values = [r[j] for r in rows]
        if kind in ("num", "int"):
            data[col] = np.array([np.nan if v is None else v for v in values], dtype=float)
            if kind == "int":
                data[col] = _restore_integers(data[col])
        else:
            data[col] = np.array(values, dtype=object)
    return pd.DataFrame(data, columns=cols)


def all_empty(tables: Mapping[str, pd.DataFrame]) -> bool:
    """Whether no table of ``tables`` has a row: a step with nothing to compare stores nothing (its
    empty tables' header rows would read as stored rows), and says so."""
    return not any(len(df) for df in tables.values())


def to_long(tables: Mapping[str, pd.DataFrame], packed: Collection[str] = ()) -> pd.DataFrame:
    frames = []
    for name, df in tables.items():
        if name in packed and not df.empty:
            frames.append(_packed(name, df))
            continue
        if df.empty:
            # keep the columns of an empty table so that it reads back with its header
            frames.append(
                pd.DataFrame(
                    {
                        "table_name": name,
                        "row_index": -1,
                        "column_index": np.arange(len(df.columns)),
                        "column": list(df.columns),
                        "value": np.nan,
                        "value_text": None,
                    }
                )
            )
            continue
        integers = [j for j, col in enumerate(df.columns) if _is_integer(df[col])]
        if integers:  # header rows marking the columns of integers (from_long restores their dtype)
            frames.append(
                pd.DataFrame(
                    {
                        "table_name": name,
                        "row_index": -1,
                        "column_index": integers,
                        "column": [str(df.columns[j]) for j in integers],
                        "value": np.nan,
                        "value_text": "int",
                    }
                )
            )
        for j, col in enumerate(df.columns):
            s = df[col]
            numeric = _is_numeric(s)
            frames.append(
                pd.DataFrame(
                    {
                        "table_name": name,
                        "row_index": np.arange(len(df)),
                        "column_index": j,
                        "column": str(col),
                        "value": pd.to_numeric(s, errors="coerce").astype(float).to_numpy() if numeric else np.nan,
                        "value_text": None
                        if numeric
                        else s.astype(object)
                        .where(s.notna(), None)
                        .map(lambda v: None if v is None else str(v))
                        .to_numpy(),
                    }
                )
            )
    return pd.concat(frames, ignore_index=True) if frames else pd.DataFrame(columns=LONG_COLUMNS)


def from_long(long: pd.DataFrame) -> dict[str, pd.DataFrame]:
    out = {}
    for name, g in long.groupby("table_name", sort=False):
        if (g["column"] == PACKED).any():
            out[name] = _unpacked(g)
            continue
        cols = g.drop_duplicates("column_index").sort_values("column_index")["column"].tolist()
        body = g[g["row_index"] >= 0]
        if body.empty:
            out[name] = pd.DataFrame(columns=cols)
            continue
        numeric = body.groupby("column")["value_text"].apply(lambda s: s.isna().all())
        head = g[g["row_index"] < 0]
        integers = set(head.loc[head["value_text"] == "int", "column"])
        data = {}
        for col in cols:
            c = body[body["column"] == col].sort_values("row_index")
            if numeric.get(col, False):
                data[col] = c["value"].to_numpy(dtype=float)
                if col in integers:
                    data[col] = _restore_integers(data[col])
            else:
                data[col] = c["value_text"].to_numpy(dtype=object)
        out[name] = pd.DataFrame(data)
    return out
