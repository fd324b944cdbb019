"""Small helpers that turn frames into Dagster UI metadata."""

from __future__ import annotations

import dagster as dg
import pandas as pd

MAX_CELL_CHARS = 300  # a text cell shown in the UI is cut here (a 10 MB answer in a preview cost GBs)


def _cut(v: str) -> str:
    return v if len(v) <= MAX_CELL_CHARS else v[:MAX_CELL_CHARS] + f"… ({len(v):,} characters)"


def _escape_pipes(df: pd.DataFrame) -> pd.DataFrame:
    """``|`` inside a cell (partition keys read ``model|template``) would split a Markdown column;
    a long text is cut to ``MAX_CELL_CHARS`` (saying how long it is: the whole text is stored)."""

    def esc(v):
        return _cut(v).replace("|", "\\|") if isinstance(v, str) else v

    out = df.copy()
    for col in out.columns:
        if out[col].dtype == object:
            out[col] = out[col].map(esc)
    if out.index.dtype == object:
        out.index = out.index.map(esc)
    return out


MISSING = "n/a"  # a missing value in a UI table (never "nan")


def _missing(v) -> bool:
    try:
        return bool(pd.isna(v))
    except (TypeError, ValueError):  # an array-like cell
        return False


def _label(v) -> str:
    """A tuple or list (a grouped index: ('Global South', 'Africa')) as readable text."""
    return " / ".join(str(x).replace("|", "\\|") for x in v)


def _readable(df: pd.DataFrame) -> pd.DataFrame:
    """Tuples and lists as ``a / b``, missing values as ``n/a`` (numeric columns keep their numbers)."""
    out = df.copy()
    if isinstance(out.index, pd.MultiIndex) or (
        out.index.dtype == object and any(isinstance(v, (tuple, list)) for v in out.index)
    ):
        out.index = pd.Index(
            [_label(v) if isinstance(v, (tuple, list)) else v for v in out.index],
            name=" / ".join(str(n) for n in (out.index.names or []) if n) or None,
        )
    for col in out.columns:
        if out[col].dtype == object:
            out[col] = out[col].map(lambda v: _label(v) if isinstance(v, (tuple, list)) else v)
        if out[col].isna().any():  # tabulate writes its missing value for None only
            out[col] = pd.Series([None if _missing(v) else v for v in out[col]], index=out.index, dtype=object)
    return out


def table_md(df: pd.DataFrame, max_rows: int = 200, empty: str = "") -> dg.MetadataValue:
    """A frame as a Markdown table (cut to ``max_rows``, saying so). Missing cells read ``n/a``,
    tuples ``a / b``; a frame with no rows is not drawn as a bare header: it says ``empty`` (why it
    is empty), or that it has no rows."""
    if not len(df):
        return dg.MetadataValue.md(f"no rows: {empty}" if empty else "no rows")
    shown = _readable(_escape_pipes(df.head(max_rows)))
    text = shown.to_markdown(index=not isinstance(df.index, pd.RangeIndex), floatfmt=".4g", missingval=MISSING)
    if len(df) > max_rows:
        text += f"\n\n… {len(df) - max_rows} more row(s) in the results database"
    return dg.MetadataValue.md(text)


def number(value, digits: int = 4):
    """A float for the UI: rounded to ``digits`` significant digits (``16976.32`` not
    ``16976.320890088107``); None stays None, NaN becomes None (shown as missing, never ``nan``)."""
    if value is None:
        return None
    v = float(value)
    if v != v:
        return None
    if v == 0:
        return 0.0
    from math import floor, log10

    return round(v, max(0, digits - 1 - floor(log10(abs(v)))))


def preview(df: pd.DataFrame, rows: int = 10) -> dg.MetadataValue:
    return table_md(df.head(rows))


MAX_UI_PNG = 400_000  # bytes: a larger figure is only linked (UI metadata lives in the event log)


def png_md(png, alt: str, title: str = ""):
    """A PNG shown inline in the UI (Markdown with a data URI), or None when it is too large."""
    import base64

    if not png or len(png) > MAX_UI_PNG:
        return None
    head = f"**{title}**\n\n" if title else ""
    return dg.MetadataValue.md(f"{head}![{alt}](data:image/png;base64,{base64.b64encode(png).decode()})")
