"""The report's tables: a DataFrame as an escaped HTML table (:func:`table_html`) or a Markdown (GFM) table
(:func:`table_markdown`), with the ``significant``, ``marking`` and ``passed`` columns emphasised; and the frames
of the provenance and parse-quality sections."""

from __future__ import annotations

import json
from typing import Any, Mapping, Optional

import pandas as pd

from .cells import _esc, _is_missing, _md, _numeric_view, format_column, truthy

MAX_ROWS = 200


def _prepared(df: pd.DataFrame, max_rows: int) -> tuple[pd.DataFrame, pd.DataFrame, list[bool], int]:
    """(display strings, raw frame shown, numeric-column flags, total rows: ``attrs["total_rows"]``
    when the frame was already cut to the rows shown, :func:`audit_report.cut_rows`)."""
    total = max(len(df), int(df.attrs.get("total_rows", len(df))))
    shown = df.head(max_rows)
    text = pd.DataFrame({c: format_column(shown[c], c) for c in shown.columns}, index=shown.index)
    numeric = [_numeric_view(shown[c]) is not None for c in shown.columns]
    return text, shown, numeric, total


def _columns(frame: pd.DataFrame) -> list:
    """Each column's values by position, as ``frame.iloc[i, j]`` gives them (numpy scalars, Timestamps), without
    a lookup per cell (a report's tables had taken seconds of ``iloc``)."""
    return [frame.iloc[:, j].array for j in range(frame.shape[1])]


def _sig_flags(shown: pd.DataFrame) -> list[Optional[bool]]:
    if "significant" in shown.columns:
        return [truthy(v) for v in shown["significant"]]
    return [None] * len(shown)


_QUIET_MARKINGS = ("not", "too few", "n.s", "ns", "no test", "-", "\u2014")


def _emphasise_marking(marking: Any, significant: Optional[bool]) -> bool:
    """A marking is emphasised when its row is significant (or, without a ``significant``
    column, unless it reads as a non-result: "not significant", "too few pairs", "n.s.")."""
    if significant is not None:
        return significant
    return not str(marking).strip().lower().startswith(_QUIET_MARKINGS)


def table_html(df: pd.DataFrame, max_rows: int = MAX_ROWS) -> str:
    """An escaped HTML table; ``significant`` -> badge, ``marking`` -> bold, ``passed`` -> PASS/FAIL."""
    if df is None or len(df.columns) == 0:
        return '<p class="note">No table given.</p>'
    if df.empty:
        cols = "".join(f"<th>{_esc(c)}</th>" for c in df.columns)
        return f'<table><thead><tr>{cols}</tr></thead><tbody></tbody></table><p class="note">No rows.</p>'
    text, shown, numeric, total = _prepared(df, max_rows)
    sig = _sig_flags(shown)
    head = "".join(f"<th>{_esc(c)}</th>" for c in df.columns)
    raws, texts = _columns(shown), _columns(text)
    rows = []
    for i in range(len(shown)):
        cells = []
        for j, c in enumerate(df.columns):
            raw = raws[j][i]
            lc = str(c).lower()
            if lc == "significant":
                t = truthy(raw)
                cell = (
                    '<span class="badge sig">significant</span>'
                    if t
                    else '<span class="badge ns">not significant</span>'
                    if t is False
                    else "\u2014"
                )
            elif lc == "marking":
                if _is_missing(raw) or str(raw).strip() == "":
                    cell = ""
                elif _emphasise_marking(raw, sig[i]):
                    cell = f'<strong class="mark">{_esc(raw)}</strong>'
                else:
                    cell = f'<span class="quiet">{_esc(raw)}</span>'
            elif lc == "passed":
                t = truthy(raw)
                cell = (
                    '<span class="badge pass">PASS</span>'
                    if t
                    else '<span class="badge fail">FAIL</span>'
                    if t is False
                    else "\u2014"
                )
            else:
                cell = _esc(texts[j][i])
            cls = ' class="num"' if numeric[j] and lc not in ("significant", "passed") else ""
            cells.append(f"<td{cls}>{cell}</td>")
        rcls = ' class="sig-row"' if sig[i] else ""
        rows.append(f"<tr{rcls}>{''.join(cells)}</tr>")
    more = f'<p class="note">Showing the first {len(shown)} of {total} rows.</p>' if total > len(shown) else ""
    return f"<table><thead><tr>{head}</tr></thead><tbody>{''.join(rows)}</tbody></table>{more}"


def table_markdown(df: pd.DataFrame, max_rows: int = MAX_ROWS) -> str:
    """A Markdown (GFM) table; ``significant`` -> **significant**, ``marking`` -> bold, ``passed`` -> PASS/**FAIL**."""
    if df is None or len(df.columns) == 0:
        return "_No table given._"
    head = "| " + " | ".join(_md(c) for c in df.columns) + " |"
    text, shown, numeric, total = _prepared(df, max_rows)
    align = "| " + " | ".join("---:" if n else "---" for n in numeric) + " |"
    if df.empty:
        return f"{head}\n{align}\n\n_No rows._"
    out = [head, align]
    sig = _sig_flags(shown)
    raws, texts = _columns(shown), _columns(text)
    for i in range(len(shown)):
        cells = []
        for j, c in enumerate(df.columns):
            raw = raws[j][i]
            lc = str(c).lower()
            if lc == "significant":
                t = truthy(raw)
                cells.append("**significant**" if t else "not significant" if t is False else "\u2014")
            elif lc == "marking":
                empty = _is_missing(raw) or str(raw).strip() == ""
                cells.append("" if empty else f"**{_md(raw)}**" if _emphasise_marking(raw, sig[i]) else _md(raw))
            elif lc == "passed":
                t = truthy(raw)
                cells.append("PASS" if t else "**FAIL**" if t is False else "\u2014")
            else:
                cells.append(_md(texts[j][i]))
        out.append("| " + " | ".join(cells) + " |")
    if total > len(shown):
        out += ["", f"_Showing the first {len(shown)} of {total} rows._"]
    return "\n".join(out)


def _provenance_frame(provenance: Mapping[str, Any]) -> pd.DataFrame:
    def show(v):
        if isinstance(v, (dict, list, tuple, set)):
            return json.dumps(sorted(v) if isinstance(v, set) else v, sort_keys=True, ensure_ascii=False, default=str)
        return "\u2014" if _is_missing(v) else str(v)

    return pd.DataFrame(
        {"key": [str(k) for k in provenance], "value": [show(v) for v in provenance.values()]}, dtype=object
    )


def _quality_frame(quality) -> Optional[pd.DataFrame]:
    if quality is None:
        return None
    if isinstance(quality, pd.DataFrame):
        return quality
    return pd.DataFrame(list(quality))
