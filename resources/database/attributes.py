"""The students' attributes in the results database: one text column ``attributes`` holding a JSON
object ``{axis: value or null}`` where the frames have one column per axis of the design (issue 34).

A frame keeps one column per axis of the active catalogue (``fairness_assets.core.reference.axes``), named
after it, in the design's order. A table with an ``attributes`` column (schema.py: profile,
generation, recommendation, drs_item; the typed result tables whose spec declares a ``j`` column,
resources/result_store.py) stores them packed: :func:`pack` replaces the frame's axis columns with
the JSON object, every axis of the catalogue in its order (null for one the frame lacks), at the
place of the first axis column; :func:`unpack` gives them back as one column per key, at the place of
the packed column, in the stored key order (the union over the rows, first seen first), values
``str`` or None (object dtype), so a frame read back is the frame that was written.

The JSON text is ``json.dumps(..., ensure_ascii=False, separators=(",", ":"))``: compact, the text
of each value as it is, so a SQL user can read it (``json_extract(attributes, '$.<axis>')`` on SQLite,
``attributes::json ->> '<axis>'`` on PostgreSQL). Each value is made storable first (NUL removed,
unencodable characters replaced: ``storable_text``), as a text column's value is.
"""

from __future__ import annotations

import json
import logging
from typing import Any, Iterable, Mapping, Optional, Sequence

import numpy as np
import pandas as pd

from fairness_assets.core.generation.responses import storable_text
from fairness_assets.core.reference import axes

log = logging.getLogger("resources.database")

ATTRIBUTES = "attributes"  # the packed column of the tables that store the students' attributes


def dumps(values: Mapping[str, Optional[str]]) -> str:
    """The stored text of ``{axis: value or None}`` (keys in their order)."""
    return json.dumps(dict(values), ensure_ascii=False, separators=(",", ":"))


def _value(v: Any) -> Optional[str]:
    if isinstance(v, np.generic):
        v = v.item()
    if v is None or (isinstance(v, float) and v != v) or v is pd.NA or v is pd.NaT:
        return None
    return v if isinstance(v, str) else str(v)


def axis_columns(columns: Iterable[str], exclude: Iterable[str] = ()) -> list[str]:
    """The columns among ``columns`` that are axes of the active catalogue, in the catalogue's order,
    leaving out ``exclude`` (columns a table declares under their own name)."""
    present, skip = set(columns), set(exclude)
    return [a for a in axes.names() if a in present and a not in skip]


def packed_values(frame: pd.DataFrame, table: str = "", exclude: Sequence[str] = ()) -> list[str]:
    """The ``attributes`` text of each row of ``frame``: every axis of the active catalogue in its order,
    the frame's value (made storable) or null where the frame lacks the axis or the value."""
    names = [a for a in axes.names() if a not in set(exclude)]
    n = len(frame)
    columns = [frame[a].tolist() if a in frame.columns else [None] * n for a in names]
    cache: dict[tuple, str] = {}
    altered: dict[str, int] = {}
    out: list[str] = []
    for row in zip(*columns, strict=True) if names else ([()] * n):
        text = cache.get(row)
        if text is None:
            values = []
            for a, v in zip(names, row, strict=True):
                v = _value(v)
                if v is not None and ("\x00" in v or not v.isascii()):
                    v, note = storable_text(v)
                    if note:
                        altered[a] = altered.get(a, 0) + 1
                values.append(v)
            text = cache[row] = dumps(dict(zip(names, values, strict=True)))
        out.append(text)
    if altered:
        log.warning(
            "%s: text made storable (NUL characters removed, unencodable characters replaced) in %s",
            table or "results",
            ", ".join(f"the value(s) of {k} in {count} distinct student(s)" for k, count in sorted(altered.items())),
        )
    return out


def pack(frame: pd.DataFrame, table: str = "", column: str = ATTRIBUTES, exclude: Sequence[str] = ()) -> pd.DataFrame:
    """``frame`` with its axis columns replaced by ``column`` (:func:`packed_values`), placed where the
    first axis column was (at the end when it has none); ``exclude``: columns the table stores under
    their own name, never packed. A frame that carries ``column`` already and no axis column is kept as
    it is; one that carries both is refused, naming them."""
    present = axis_columns(frame.columns, exclude)
    if column in frame.columns:
        if present:
            raise ValueError(
                f"{table or 'frame'}: has both a packed {column!r} column and the axis column(s) {present}: "
                "give one or the other"
            )
        return frame
    at = min((list(frame.columns).index(a) for a in present), default=len(frame.columns))
    out = frame.drop(columns=present)
    out.insert(min(at, len(out.columns)), column, packed_values(frame, table, exclude))
    return out


def _parse(text: Any, column: str) -> dict:
    if text is None or (isinstance(text, float) and text != text):
        return {}
    try:
        found = json.loads(text)
    except (TypeError, ValueError):
        raise ValueError(f"stored {column!r} value {text!r} is not a JSON object of the students' axes") from None
    if not isinstance(found, dict):
        raise ValueError(f"stored {column!r} value {text!r} is not a JSON object of the students' axes")
    return found


def unpack(df: pd.DataFrame, column: str = ATTRIBUTES) -> pd.DataFrame:
    """``df`` with its packed ``column`` replaced by one column per key, where ``column`` was, in the
    stored key order (the union over the rows, first seen first; the active catalogue's axes where no
    row holds a key, as in a frame without rows), values ``str`` or None (object dtype). A frame without
    ``column`` is returned as it is."""
    if column not in df.columns:
        return df
    texts = df[column].tolist()
    parsed = {t: _parse(t, column) for t in dict.fromkeys(texts)}  # few distinct students: each parsed once
    keys: dict[str, None] = {}
    for t in texts:
        for k in parsed[t]:
            keys.setdefault(str(k), None)
    names = list(keys) or list(axes.names())  # no stored key (no rows): the active design's axes
    clash = [k for k in names if k in df.columns and k != column]
    if clash:
        raise ValueError(f"stored {column!r} holds key(s) {clash} that are also columns of the table")
    at = list(df.columns).index(column)
    out = df.drop(columns=[column])
    for i, name in enumerate(names):
        values = [_value(parsed[t].get(name)) for t in texts]
        out.insert(at + i, name, pd.Series(values, index=df.index, dtype=object))
    return out
