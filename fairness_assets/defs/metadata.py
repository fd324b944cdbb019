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


def table_md(df: pd.DataFrame, max_rows: int = 200) -> dg.MetadataValue:
    """A frame as a Markdown table (cut to ``max_rows``, saying so)."""
    shown = _escape_pipes(df.head(max_rows))
    text = shown.to_markdown(index=not isinstance(df.index, pd.RangeIndex), floatfmt=".4g")
    if len(df) > max_rows:
        text += f"\n\n… {len(df) - max_rows} more row(s) in the results database"
    return dg.MetadataValue.md(text)


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
