"""Cell values read and written: HTML and Markdown escaping, truth and missing values, and the display
strings of a column (:func:`format_column`: integers, p-values, percents, other floats)."""

from __future__ import annotations

import html
import math
import re
from typing import Any, Optional

import numpy as np
import pandas as pd

P_COLUMNS = {"p", "p_value", "p_adjusted", "pvalue", "p_adj", "p_holm"}


def _esc(value: Any) -> str:
    return html.escape("" if value is None else str(value), quote=True)


_MD_SPECIAL = re.compile(r"([\\`*_\[\]|#])")


def _md(value: Any) -> str:
    """Markdown-safe inline text: HTML escaped (no raw HTML), Markdown specials and pipes escaped,
    one line."""
    s = " ".join(("" if value is None else str(value)).split())
    return _MD_SPECIAL.sub(r"\\\1", html.escape(s, quote=False))


def truthy(v: Any) -> Optional[bool]:
    if v is None or (isinstance(v, float) and math.isnan(v)) or v is pd.NA:
        return None
    if isinstance(v, (bool, np.bool_)):
        return bool(v)
    if isinstance(v, (int, np.integer, float, np.floating)):
        return bool(v)
    s = str(v).strip().lower()
    if s in ("true", "yes", "1", "pass", "passed", "ok", "y"):
        return True
    if s in ("false", "no", "0", "fail", "failed", "n"):
        return False
    return None


def _is_missing(v: Any) -> bool:
    try:
        return v is None or v is pd.NA or (isinstance(v, (float, np.floating)) and math.isnan(v))
    except TypeError:
        return False


_COUNT_COLUMNS = {
    "n",
    "count",
    "responses",
    "items",
    "recs",
    "run",
    "n_pairs",
    "total_unis",
    "n_recommendations",
    "n_items",
    "n_matched",
    "rank",
}


def _numeric_view(values: pd.Series) -> Optional[pd.Series]:
    """The column as floats when it is numeric (or an object column holding only numbers), else None."""
    if values.dtype == bool or values.dtype.name == "boolean":
        return None
    if pd.api.types.is_numeric_dtype(values.dtype):
        return values.astype(float)
    if values.dtype == object and values.notna().any():
        if (
            values.dropna()
            .map(lambda v: isinstance(v, (int, float, np.integer, np.floating)) and not isinstance(v, (bool, np.bool_)))
            .all()
        ):
            return pd.to_numeric(values, errors="coerce").astype(float)
    return None


def format_column(values: pd.Series, name: str) -> pd.Series:
    """Display strings of one column: integers as integers, p-values as ``<0.001``/3 decimals,
    ``*_pct`` as signed percent, other floats with 4 decimals, missing as an em dash."""
    col = str(name).lower()
    dash = "\u2014"
    if values.dtype == bool or values.dtype.name == "boolean":
        return values.map(lambda v: dash if _is_missing(v) else ("yes" if v else "no"))
    num = _numeric_view(values)
    if num is None:
        return values.map(lambda v: dash if _is_missing(v) else str(v))
    finite = num[np.isfinite(num)]
    if col in P_COLUMNS:
        return num.map(lambda v: dash if pd.isna(v) else ("<0.001" if v < 0.001 else f"{v:.3f}"))
    if col.endswith("_pct"):
        return num.map(lambda v: dash if pd.isna(v) else f"{v:+.1f}%")
    integral = len(finite) > 0 and bool((finite == np.round(finite)).all())
    if integral and (pd.api.types.is_integer_dtype(values.dtype) or col in _COUNT_COLUMNS or finite.abs().max() >= 2):
        return num.map(lambda v: dash if pd.isna(v) else f"{int(v)}")
    return num.map(lambda v: dash if pd.isna(v) else (f"{v:,.0f}" if abs(v) >= 1e5 else f"{v:.4f}"))
