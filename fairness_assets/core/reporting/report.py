"""The audit report: one self-contained HTML file and a Markdown twin. Pure: no Dagster, no database.

:func:`render_report` takes what an audit produced (a provenance mapping, the analysis
tables, the :class:`~fairness_assets.core.reporting.figures.Figure` list, the parse-quality results and
the plain-language summary) and returns ``(html, markdown)``.

- HTML: inline CSS, every figure embedded as a ``data:image/png;base64`` URI, no external
  resource (the report must open on an offline machine).
- Markdown: figures are image links to ``<figure_dir>/<slug>.png``; write the bytes of
  :func:`figure_files` (same ``figure_dir``) beside the Markdown file.
- Every text that comes from data (model names, university names, model outputs, provenance
  values) is escaped: ``<script>`` in a model's answer shows as text, never runs.
- A ``significant`` column shows as a badge, a ``marking`` column in bold; a ``passed`` column
  of the parse-quality table as PASS/FAIL.

:func:`disparity_summary` writes the plain-language sentences about the largest gaps.

Further sections (:class:`ReportSection`, e.g. the geography section of issue 15) can be given
to :func:`render_report`; they come after the parse quality and before the tables, and a report
given none is the same as before they existed. The scorecard (:mod:`core.reporting.scorecard`, issue 23.3)
is a section of its own that comes first, above the summary.
"""

from __future__ import annotations

import base64
import html
import json
import math
import re
from dataclasses import dataclass, field
from typing import Any, Iterable, Mapping, Optional, Sequence

import numpy as np
import pandas as pd

from ..common import metric_catalogue as catalogue
from .figures import Figure

MAX_ROWS = 200
P_COLUMNS = {"p", "p_value", "p_adjusted", "pvalue", "p_adj", "p_holm"}
METRIC_NAMES = catalogue.prose_names()  # the metrics as the report's prose names them
_ATTR_ALIASES = {
    "gender": "gender",
    "economic_class": "economic_class",
    "economic class": "economic_class",
    "class": "economic_class",
    "income": "economic_class",
    "nationality": "nationality",
}
_CLASS_WORDS = {"high": "high-income", "middle": "middle-income", "low": "low-income"}
SECTIONS = (
    ("summary", "Summary of the largest disparities"),
    ("provenance", "Provenance"),
    ("quality", "Parse quality"),
    ("tables", "Tables"),
    ("figures", "Figures"),
)

CSS = """
body{font-family:system-ui,-apple-system,"Segoe UI",Roboto,Helvetica,Arial,sans-serif;max-width:1100px;margin:2em auto;
padding:0 1em;color:#1d2327;line-height:1.45}
h1{font-size:1.6em;border-bottom:2px solid #3b6ea8;padding-bottom:.2em}h2{margin-top:2em;color:#234a75}
h3{margin-top:1.5em}table{border-collapse:collapse;margin:.6em 0;font-size:.85em;display:block;overflow-x:auto}
th,td{border:1px solid #ccd3da;padding:.25em .55em;vertical-align:top}th{background:#eef2f6;text-align:left}
td.num{text-align:right;font-variant-numeric:tabular-nums}tr.sig-row td{background:#fff6e0}
.badge{display:inline-block;padding:0 .45em;border-radius:.6em;font-size:.85em;font-weight:600}
.sig{background:#b3432f;color:#fff}.ns{background:#e4e7ea;color:#444}.pass{background:#2e7d4f;color:#fff}
.fail{background:#b3432f;color:#fff}.mark{color:#b3432f}.quiet{color:#666}figure{margin:1.5em 0}
figure img{max-width:100%;height:auto;border:1px solid #e4e7ea}figcaption{font-size:.88em;color:#444}
.note{color:#555;font-size:.9em}code{font-size:.88em;word-break:break-all}nav ul{columns:2}
""".strip()


# ----------------------------------------------------------------------------- text helpers
def _esc(value: Any) -> str:
    return html.escape("" if value is None else str(value), quote=True)


_MD_SPECIAL = re.compile(r"([\\`*_\[\]|#])")


def _md(value: Any) -> str:
    """Markdown-safe inline text: HTML escaped (no raw HTML), Markdown specials and pipes escaped,
    one line."""
    s = " ".join(("" if value is None else str(value)).split())
    return _MD_SPECIAL.sub(r"\\\1", html.escape(s, quote=False))


def _truthy(v: Any) -> Optional[bool]:
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


def _prepared(df: pd.DataFrame, max_rows: int) -> tuple[pd.DataFrame, pd.DataFrame, list[bool], int]:
    """(display strings, raw frame shown, numeric-column flags, total rows: ``attrs["total_rows"]``
    when the frame was already cut to the rows shown, :func:`audit_report.cut_rows`)."""
    total = max(len(df), int(df.attrs.get("total_rows", len(df))))
    shown = df.head(max_rows)
    text = pd.DataFrame({c: format_column(shown[c], c) for c in shown.columns}, index=shown.index)
    numeric = [_numeric_view(shown[c]) is not None for c in shown.columns]
    return text, shown, numeric, total


def _sig_flags(shown: pd.DataFrame) -> list[Optional[bool]]:
    if "significant" in shown.columns:
        return [_truthy(v) for v in shown["significant"]]
    return [None] * len(shown)


_QUIET_MARKINGS = ("not", "too few", "n.s", "ns", "no test", "-", "\u2014")


def _emphasise_marking(marking: Any, significant: Optional[bool]) -> bool:
    """A marking is emphasised when its row is significant (or, without a ``significant``
    column, unless it reads as a non-result: "not significant", "too few pairs", "n.s.")."""
    if significant is not None:
        return significant
    return not str(marking).strip().lower().startswith(_QUIET_MARKINGS)


# ----------------------------------------------------------------------------- tables
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
    rows = []
    for i in range(len(shown)):
        cells = []
        for j, c in enumerate(df.columns):
            raw = shown.iloc[i, j]
            lc = str(c).lower()
            if lc == "significant":
                t = _truthy(raw)
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
                t = _truthy(raw)
                cell = (
                    '<span class="badge pass">PASS</span>'
                    if t
                    else '<span class="badge fail">FAIL</span>'
                    if t is False
                    else "\u2014"
                )
            else:
                cell = _esc(text.iloc[i, j])
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
    for i in range(len(shown)):
        cells = []
        for j, c in enumerate(df.columns):
            raw = shown.iloc[i, j]
            lc = str(c).lower()
            if lc == "significant":
                t = _truthy(raw)
                cells.append("**significant**" if t else "not significant" if t is False else "\u2014")
            elif lc == "marking":
                empty = _is_missing(raw) or str(raw).strip() == ""
                cells.append("" if empty else f"**{_md(raw)}**" if _emphasise_marking(raw, sig[i]) else _md(raw))
            elif lc == "passed":
                t = _truthy(raw)
                cells.append("PASS" if t else "**FAIL**" if t is False else "\u2014")
            else:
                cells.append(_md(text.iloc[i, j]))
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


# ----------------------------------------------------------------------------- figures
def figure_path(fig: Figure, folder: str = "figures") -> str:
    """The relative path of a figure's PNG beside the Markdown report."""
    return f"{folder.rstrip('/')}/{fig.slug}.png" if folder else f"{fig.slug}.png"


def figure_files(figures: Iterable[Figure], folder: str = "figures") -> dict[str, bytes]:
    """{relative path: PNG bytes} of every drawn figure: the files the Markdown links to."""
    return {figure_path(f, folder): f.png for f in figures if f.png is not None}


def _figures_html(figures: Sequence[Figure]) -> str:
    drawn = [f for f in figures if f.png is not None]
    skipped = [f for f in figures if f.png is None]
    parts = []
    for f in drawn:
        data = base64.b64encode(f.png).decode("ascii")
        parts.append(
            f'<figure id="fig-{_esc(f.slug)}"><img alt="{_esc(f.title)}" src="data:image/png;base64,{data}">'
            f"<figcaption><strong>{_esc(f.title)}.</strong> {_esc(f.caption)}</figcaption></figure>"
        )
    if skipped:
        items = "".join(
            f"<li><strong>{_esc(f.title)}</strong> (<code>{_esc(f.slug)}</code>): "
            f"{_esc(f.skipped_reason or 'no data')}</li>"
            for f in skipped
        )
        parts.append(f"<h3>Figures not drawn</h3><ul>{items}</ul>")
    return "\n".join(parts) or '<p class="note">No figures were given.</p>'


def _figures_md(figures: Sequence[Figure], folder: str) -> str:
    drawn = [f for f in figures if f.png is not None]
    skipped = [f for f in figures if f.png is None]
    parts = []
    for f in drawn:
        parts.append(f"![{_md(f.title)}]({figure_path(f, folder)})\n\n*{_md(f.title)}.* {_md(f.caption)}")
    if skipped:
        parts.append(
            "### Figures not drawn\n\n"
            + "\n".join(f"- **{_md(f.title)}** ({_md(f.slug)}): {_md(f.skipped_reason or 'no data')}" for f in skipped)
        )
    return "\n\n".join(parts) or "_No figures were given._"


# ----------------------------------------------------------------------------- extra sections
@dataclass(frozen=True)
class ReportSection:
    """A further section of the report: an introduction (paragraphs), notes (a list, e.g. why a
    table is not shown), tables (title -> DataFrame, in order) and figures, rendered like the
    report's own tables and figures. ``sid`` is the HTML anchor (letters, digits, ``-``/``_``)."""

    sid: str
    title: str
    intro: Sequence[str] = ()
    tables: Mapping[str, pd.DataFrame] = field(default_factory=dict)
    figures: Sequence[Figure] = ()
    notes: Sequence[str] = ()


def _section_sid(sec: ReportSection) -> str:
    return re.sub(r"[^A-Za-z0-9_-]+", "-", sec.sid).strip("-") or "section"


def _section_html(sec: ReportSection, max_rows: int) -> str:
    sid = _section_sid(sec)
    h = [f'<section id="{sid}"><h2>{_esc(sec.title)}</h2>']
    h += [f"<p>{_esc(t)}</p>" for t in sec.intro]
    if sec.notes:
        h.append('<ul class="note">' + "".join(f"<li>{_esc(t)}</li>" for t in sec.notes) + "</ul>")
    for k, (name, df) in enumerate(sec.tables.items()):
        h.append(f'<h3 id="{sid}-table-{k + 1}">{_esc(name)}</h3>{table_html(df, max_rows)}')
    if sec.figures:
        h.append(f'<h3 id="{sid}-figures">Figures</h3>{_figures_html(list(sec.figures))}')
    if not (sec.intro or sec.notes or sec.tables or sec.figures):
        h.append('<p class="note">Nothing was given for this section.</p>')
    h.append("</section>")
    return "\n".join(h)


def _section_md(sec: ReportSection, max_rows: int, figure_dir: str) -> list[str]:
    m = ["", f"## {_md(sec.title)}", ""]
    for t in sec.intro:
        m += [_md(t), ""]
    if sec.notes:
        m += [f"- {_md(t)}" for t in sec.notes] + [""]
    for name, df in sec.tables.items():
        m += [f"### {_md(name)}", "", table_markdown(df, max_rows), ""]
    if sec.figures:
        m += ["### Figures", "", _figures_md(list(sec.figures), figure_dir), ""]
    if not (sec.intro or sec.notes or sec.tables or sec.figures):
        m.append("_Nothing was given for this section._")
    while m and m[-1] == "":
        m.pop()
    return m


# ----------------------------------------------------------------------------- the report
def render_report(
    *,
    title: str = "LLM university-recommendation fairness audit",
    provenance: Optional[Mapping[str, Any]] = None,
    tables: Optional[Mapping[str, pd.DataFrame]] = None,
    figures: Sequence[Figure] = (),
    quality=None,
    summary: Optional[Sequence[str]] = None,
    notes: Sequence[str] = (),
    figure_dir: str = "figures",
    max_rows: int = MAX_ROWS,
    sections: Sequence[ReportSection] = (),
    scorecard: Optional[ReportSection] = None,
) -> tuple[str, str]:
    """The report of one audit as ``(html, markdown)``.

    - ``provenance``: any mapping (models and revisions or file hashes, decoding parameters,
      corpus and template hashes, parser/tagger/code versions, ...), rendered as a key/value
      table in the given order; nested values as JSON.
    - ``tables``: section title -> DataFrame, in order (at most ``max_rows`` rows each shown).
    - ``figures``: :class:`Figure` objects; skipped ones are listed with their reason.
    - ``quality``: parse-quality results, a DataFrame (or records) with ``check``, ``passed``,
      ``observed``, ``threshold`` (other columns are shown too).
    - ``summary``: plain-language sentences (:func:`disparity_summary`); ``notes``: further
      sentences shown under it (e.g. method decisions).
    - ``sections``: further :class:`ReportSection` s, after the parse quality and before the
      tables (listed in the contents); their figures are shown in the section, not under
      "Figures" (write their PNGs too: :func:`figure_files`).
    - ``scorecard``: the headline numbers (:func:`core.reporting.scorecard.section`), shown first, above the
      summary (and first in the contents).

    Every section is present; an empty one says that nothing was given. The output holds no
    time stamp: the same input gives the same text.
    """
    provenance = provenance or {}
    tables = dict(tables or {})
    qual = _quality_frame(quality)
    figures = list(figures)
    sections = list(sections)
    nav = list(SECTIONS[:3]) + [(_section_sid(x), x.title) for x in sections] + list(SECTIONS[3:])
    if scorecard is not None:
        nav.insert(0, (_section_sid(scorecard), scorecard.title))

    # ---- HTML
    h = [
        "<!DOCTYPE html>",
        '<html lang="en"><head><meta charset="utf-8">',
        '<meta name="viewport" content="width=device-width, initial-scale=1">',
        f"<title>{_esc(title)}</title><style>{CSS}</style></head><body>",
        f"<h1>{_esc(title)}</h1>",
    ]
    h.append("<nav><ul>" + "".join(f'<li><a href="#{sid}">{_esc(name)}</a></li>' for sid, name in nav) + "</ul></nav>")
    if scorecard is not None:
        h.append(_section_html(scorecard, max_rows))
    # summary
    h.append(f'<section id="summary"><h2>{SECTIONS[0][1]}</h2>')
    if summary:
        h.append("<ul>" + "".join(f"<li>{_esc(s)}</li>" for s in summary) + "</ul>")
    else:
        h.append('<p class="note">No summary was given.</p>')
    if notes:
        h.append("<h3>Notes</h3><ul>" + "".join(f"<li>{_esc(s)}</li>" for s in notes) + "</ul>")
    h.append("</section>")
    # provenance
    h.append(f'<section id="provenance"><h2>{SECTIONS[1][1]}</h2>')
    h.append(
        table_html(_provenance_frame(provenance)) if provenance else '<p class="note">No provenance was given.</p>'
    )
    h.append("</section>")
    # quality
    h.append(f'<section id="quality"><h2>{SECTIONS[2][1]}</h2>')
    if qual is not None:
        verdicts = [_truthy(v) for v in qual["passed"]] if "passed" in qual.columns else []
        if verdicts:  # a check with no recorded result is neither passed nor failed
            passed, failed = verdicts.count(True), verdicts.count(False)
            unknown = len(verdicts) - passed - failed
            h.append(
                f"<p>{passed} of {len(verdicts)} checks passed"
                + (f'; <span class="badge fail">{failed} failed</span>' if failed else "")
                + (f"; {unknown} not evaluated" if unknown else "")
                + ".</p>"
            )
        h.append(table_html(qual, max_rows))
    else:
        h.append('<p class="note">No parse-quality results were given.</p>')
    h.append("</section>")
    for sec in sections:
        h.append(_section_html(sec, max_rows))
    # tables
    h.append(f'<section id="tables"><h2>{SECTIONS[3][1]}</h2>')
    if tables:
        for k, (name, df) in enumerate(tables.items()):
            h.append(f'<h3 id="table-{k + 1}">{_esc(name)}</h3>{table_html(df, max_rows)}')
    else:
        h.append('<p class="note">No tables were given.</p>')
    h.append("</section>")
    # figures
    h.append(f'<section id="figures"><h2>{SECTIONS[4][1]}</h2>{_figures_html(figures)}</section>')
    h.append("</body></html>")
    html_out = "\n".join(h) + "\n"

    # ---- Markdown
    m = [f"# {_md(title)}", ""]
    if scorecard is not None:
        m += _section_md(scorecard, max_rows, figure_dir)[1:] + [""]
    m += [f"## {SECTIONS[0][1]}", ""]
    m += [f"- {_md(s)}" for s in summary] if summary else ["_No summary was given._"]
    if notes:
        m += ["", "### Notes", ""] + [f"- {_md(s)}" for s in notes]
    m += ["", f"## {SECTIONS[1][1]}", ""]
    m.append(table_markdown(_provenance_frame(provenance)) if provenance else "_No provenance was given._")
    m += ["", f"## {SECTIONS[2][1]}", ""]
    m.append(table_markdown(qual, max_rows) if qual is not None else "_No parse-quality results were given._")
    for sec in sections:
        m += _section_md(sec, max_rows, figure_dir)
    m += ["", f"## {SECTIONS[3][1]}", ""]
    if tables:
        for name, df in tables.items():
            m += [f"### {_md(name)}", "", table_markdown(df, max_rows), ""]
    else:
        m.append("_No tables were given._")
    m += ["", f"## {SECTIONS[4][1]}", "", _figures_md(figures, figure_dir)]
    md_out = "\n".join(m).rstrip() + "\n"
    return html_out, md_out


# ----------------------------------------------------------------------------- plain-language summary
def _partition_keys(df: pd.DataFrame, model: str, template: str) -> pd.DataFrame:
    out = df.copy()
    if "model" not in out.columns:
        out["model"] = model
    if "template" not in out.columns:
        out["template"] = template
    out["model"] = out["model"].fillna("").astype(str)
    out["template"] = out["template"].fillna("").astype(str)
    return out


def _under(model: str, template: str) -> str:
    if model and template:
        return f"Under model {model} ({template} template)"
    if model:
        return f"Under model {model}"
    return f"Under the {template} template" if template else "Overall"


def _who(attr: str, value: str) -> str:
    if attr == "economic_class":
        return f"{_CLASS_WORDS.get(value, value)} students"
    if attr == "gender":
        return f"{value} students"
    return f"students from {value}"


def largest_gaps(
    drs_summary: pd.DataFrame, metrics: Sequence[str] = ("drs",), *, model: str = "", template: str = ""
) -> pd.DataFrame:
    """Per (model, template, attribute, metric): the groups with the lowest and the highest mean
    and the gap between them, largest gap first. ``drs_summary`` as :func:`metrics.drs_summary`
    (``group_by, group, responses, drs, acc, rep, acad`` [+ ``model``, ``template``])."""
    cols = [
        "model",
        "template",
        "attribute",
        "metric",
        "low_group",
        "low_value",
        "low_n",
        "high_group",
        "high_value",
        "high_n",
        "gap",
    ]
    if drs_summary is None or drs_summary.empty:
        return pd.DataFrame(columns=cols)
    df = _partition_keys(drs_summary, model, template)
    df = df[df["group_by"] != "overall"]
    frames = []
    for metric in metrics:
        if metric not in df.columns:
            continue
        d = df.assign(value=pd.to_numeric(df[metric], errors="coerce"), group=df["group"].astype(str)).dropna(
            subset=["value"]
        )
        if d.empty:
            continue
        keys = ["model", "template", "group_by"]
        d = d.sort_values(keys + ["value", "group"], kind="stable")
        size = d.groupby(keys)["value"].transform("size")
        d = d[size >= 2]
        if d.empty:
            continue
        n_col = "responses" if "responses" in d.columns else None
        lo = d.groupby(keys, sort=True).head(1).set_index(keys)
        hi = d.groupby(keys, sort=True).tail(1).set_index(keys)
        t = (
            pd.DataFrame(
                {
                    "low_group": lo["group"],
                    "low_value": lo["value"],
                    "low_n": lo[n_col] if n_col else np.nan,
                    "high_group": hi["group"].reindex(lo.index),
                    "high_value": hi["value"].reindex(lo.index),
                    "high_n": (hi[n_col] if n_col else pd.Series(np.nan, index=hi.index)).reindex(lo.index),
                }
            )
            .reset_index()
            .rename(columns={"group_by": "attribute"})
        )
        t["metric"] = metric
        t["gap"] = t["high_value"] - t["low_value"]
        frames.append(t)
    if not frames:
        return pd.DataFrame(columns=cols)
    out = pd.concat(frames, ignore_index=True)[cols]
    return out.sort_values(
        ["gap", "model", "template", "attribute", "metric"], ascending=[False, True, True, True, True], kind="stable"
    ).reset_index(drop=True)


def _norm_attr(v) -> str:
    s = str(v).strip().lower()
    return _ATTR_ALIASES.get(s, s)


def _fmt_p(p) -> str:
    if _is_missing(p):
        return "p not given"
    p = float(p)
    return "adjusted p < 0.001" if p < 0.001 else f"adjusted p = {p:.3f}"


def _which_figure(row, flip: bool, gap: float, attr: str) -> str:
    """When the raw gap of group means and the counterfactual paired difference disagree (in sign,
    or by more than half the gap), which one is the finding and why the other differs."""
    if _is_missing(row.get("mean_diff")):
        return ""
    d = -float(row["mean_diff"]) if flip else float(row["mean_diff"])  # low minus high, like the gap
    raw = -gap
    if np.sign(d) == np.sign(raw) and abs(d - raw) <= 0.5 * abs(raw):
        return ""
    what = {"gender": "gender", "economic_class": "income", "nationality": "nationality"}.get(attr, attr)
    return (
        f". The paired difference ({d:+.3f}) is the finding: it compares the same student profiles with only "
        f"the {what} changed. The group means ({raw:+.3f}) differ from it because they average every response "
        f"of each group, including profiles whose counterpart has no scored answer and a different mix of the "
        f"other attributes"
    )


def _stats_clause(row: pd.Series, flip: bool, correction: str, ci_level: float, n_what: str = "pairs") -> str:
    """The test of one stats row; ``mean_diff`` and the CI are of value_b - value_a, negated
    when ``flip`` (to read value_a - value_b)."""
    if not _is_missing(row.get("level")):
        ci_level = float(row["level"])
    d = float(row["mean_diff"]) if not _is_missing(row.get("mean_diff")) else np.nan
    lo, hi = row.get("ci_low"), row.get("ci_high")
    lo = float(lo) if not _is_missing(lo) else np.nan
    hi = float(hi) if not _is_missing(hi) else np.nan
    if flip:
        d, lo, hi = -d, -hi, -lo
    p = row.get("p_adjusted") if not _is_missing(row.get("p_adjusted")) else row.get("p_value")
    sig = _truthy(row.get("significant"))
    parts = []
    if np.isfinite(d):
        parts.append(f"paired difference {d:+.3f}")
    if np.isfinite(lo) and np.isfinite(hi):
        parts.append(f"{ci_level:.0%} CI [{lo:+.3f}, {hi:+.3f}]")
    if not _is_missing(row.get("n_pairs")):
        n = int(float(row["n_pairs"]))
        parts.append(f"{n} {n_what if n != 1 else n_what.rstrip('s')}")
    if _is_missing(p):
        parts.append(
            str(row.get("marking"))
            if not _is_missing(row.get("marking")) and str(row.get("marking"))
            else "no test (too few pairs)"
        )
        return "; ".join(parts)
    parts.append(_fmt_p(p))
    if sig is True:
        parts.append(f"significant after {correction} correction")
    elif sig is False:
        parts.append(f"not significant after {correction} correction")
    return "; ".join(parts)


_CORRECTION_NAMES = {
    "holm": "Holm",
    "bh": "Benjamini-Hochberg",
    "fdr_bh": "Benjamini-Hochberg",
    "bonferroni": "Bonferroni",
}


def _correction(stats: Optional[pd.DataFrame], default: str) -> str:
    if stats is not None:
        for c in ("correction", "adjustment", "p_adjust_method"):
            if c in stats.columns and stats[c].notna().any():
                name = str(stats[c].dropna().iloc[0])
                return _CORRECTION_NAMES.get(name.strip().lower(), name)
    return _CORRECTION_NAMES.get(default.strip().lower(), default)


def disparity_summary(
    drs_summary: pd.DataFrame,
    stats: Optional[pd.DataFrame] = None,
    grs: Optional[pd.DataFrame] = None,
    *,
    concentration: Optional[pd.DataFrame] = None,
    model: str = "",
    template: str = "",
    metrics: Sequence[str] = ("drs",),
    correction: str = "Holm",
    ci_level: float = 0.95,
    max_test_sentences: int = 5,
    decomposition: Optional[pd.DataFrame] = None,
) -> list[str]:
    """Plain-language sentences about the largest disparities, largest first.

    - From ``drs_summary`` (:func:`metrics.drs_summary`, optionally with ``model``/``template``
      columns): per partition and attribute, the gap between the best- and the worst-served
      group for each metric in ``metrics``. Where ``stats`` has the counterfactual test of
      that pair (same model, template, attribute, metric, the two values in either order),
      its paired difference, CI, adjusted p-value and significance are added, oriented like
      the sentence.
    - From ``stats`` (:func:`stats.counterfactual_disparity`: ``model, template, attribute,
      value_a, value_b, metric, n_pairs, mean_diff, ci_low, ci_high, p_value, p_adjusted,
      significant, marking`` [+ ``level``, ``correction``]; ``mean_diff`` and the interval are
      of value_b minus value_a): the ``max_test_sentences`` largest significant differences not
      already described, the lower-scoring group named first.
    - From ``grs`` (:func:`metrics.grs_by_country`) per partition: how many corpus countries
      were never recommended (GRS 0), naming those with the most ranked universities, and
      how concentrated the matched recommendations are; from ``concentration``: the US+UK
      share.

    ``correction`` names the multiple-testing correction (a ``correction`` column of ``stats``
    wins; "holm" and "bh" are written out); the CI level is ``ci_level`` unless ``stats`` has
    a ``level`` column.

    ``decomposition`` (:func:`decompose.behaviour_needs`, issue 20): when given, each gap and
    test sentence is labelled as an outcome and followed by one sentence saying how much of it
    is behaviour (the lists) and how much is position (needs) (:func:`outcome_split_sentence`);
    none given, the sentences are as before."""
    sentences: list[tuple[float, str]] = []

    def split(s: str, m: str, t: str, attr: str, metric: str, low: str, high: str) -> str:
        if decomposition is None:
            return s
        extra = outcome_split_sentence(
            decomposition, model=m, template=t, attribute=attr, metric=metric, low=low, high=high, correction=correction
        )
        return "Outcome: " + s + (" " + extra if extra else "")

    correction = _correction(stats, correction)
    st = None
    if stats is not None and not stats.empty and {"attribute", "value_a", "value_b", "metric"} <= set(stats.columns):
        st = _partition_keys(stats, model, template)
        st = st.assign(
            _attr=st["attribute"].map(_norm_attr),
            _metric=st["metric"].astype(str).str.lower(),
            _a=st["value_a"].astype(str),
            _b=st["value_b"].astype(str),
        )
    used: set = set()

    gaps = largest_gaps(drs_summary, metrics, model=model, template=template)
    for r in gaps.itertuples(index=False):
        attr = str(r.attribute)
        name = METRIC_NAMES.get(r.metric, r.metric)
        s = (
            f"{_under(r.model, r.template)}, {name} for {_who(attr, r.low_group)} was {r.gap:.3f} lower than for "
            f"{_who(attr, r.high_group)} ({r.low_value:.3f} vs {r.high_value:.3f}"
            + (f"; {int(r.low_n)} and {int(r.high_n)} responses" if not _is_missing(r.low_n) else "")
            + ")"
        )
        if st is not None:
            sel = st[
                (st["model"] == r.model)
                & (st["template"] == r.template)
                & (st["_attr"] == _norm_attr(attr))
                & (st["_metric"] == str(r.metric).lower())
                & (
                    ((st["_a"] == r.low_group) & (st["_b"] == r.high_group))
                    | ((st["_a"] == r.high_group) & (st["_b"] == r.low_group))
                )
            ]
            if len(sel):
                row = sel.iloc[0]
                used.add(sel.index[0])
                flip = row["_b"] != r.low_group
                s += f"; counterfactual test, {r.low_group} minus {r.high_group}: " + _stats_clause(
                    row, flip=flip, correction=correction, ci_level=ci_level
                )
                s += _which_figure(row, flip, float(r.gap), attr)
            else:
                s += "; no counterfactual test of this pair was given"
        sentences.append((float(r.gap), split(s + ".", r.model, r.template, attr, r.metric, r.low_group, r.high_group)))

    if st is not None:
        rest = st[~st.index.isin(used)]
        rest = rest[rest["significant"].map(_truthy) == True] if "significant" in rest.columns else rest.iloc[0:0]  # noqa: E712
        if len(rest):
            rest = rest.assign(_abs=pd.to_numeric(rest["mean_diff"], errors="coerce").abs())
            rest = rest.sort_values(
                ["_abs", "model", "template", "_attr", "_metric", "_a", "_b"],
                ascending=[False, True, True, True, True, True, True],
                kind="stable",
            )
            for _, row in rest.head(max_test_sentences).iterrows():
                d = float(row["mean_diff"])  # value_b - value_a
                low, high = (row["_a"], row["_b"]) if d >= 0 else (row["_b"], row["_a"])
                name = METRIC_NAMES.get(row["_metric"], row["metric"])
                attr = row["_attr"]
                s = (
                    f"{_under(row['model'], row['template'])}, {name} for {_who(attr, low)} was "
                    f"{abs(d):.3f} lower than for otherwise identical {_who(attr, high)} "
                    f"(counterfactual test, {low} minus {high}: "
                    + _stats_clause(row, flip=row["_b"] != low, correction=correction, ci_level=ci_level)
                    + ")."
                )
                sentences.append((abs(d), split(s, row["model"], row["template"], attr, row["_metric"], low, high)))

    sentences.sort(key=lambda t: -t[0] if np.isfinite(t[0]) else 0.0)
    out = [s for _, s in sentences]

    if grs is not None and not grs.empty and {"grs", "country"} <= set(grs.columns):
        g = _partition_keys(grs, model, template)
        for (m, t), part in g.groupby(["model", "template"], sort=True):
            total = len(part)
            nrec = part["n_recommendations"] if "n_recommendations" in part.columns else (part["grs"] > 0).astype(int)
            zero = part[pd.to_numeric(part["grs"], errors="coerce").fillna(0) <= 0]
            s = f"{_under(m, t)}, {len(zero)} of {total} corpus countries were never recommended (GRS 0)"
            if len(zero) and "total_unis" in zero.columns:
                big = zero.sort_values(["total_unis", "country"], ascending=[False, True], kind="stable").head(3)
                s += ", among them " + ", ".join(
                    f"{c} ({int(n)} ranked universit{'y' if int(n) == 1 else 'ies'})"
                    for c, n in zip(big["country"], big["total_unis"], strict=False)
                )
            n_all = float(pd.to_numeric(nrec, errors="coerce").sum())
            if n_all > 0 and "n_recommendations" in part.columns:
                top = (
                    part.assign(_n=pd.to_numeric(nrec, errors="coerce"))
                    .sort_values(["_n", "country"], ascending=[False, True], kind="stable")
                    .head(5)
                )
                top = top[top["_n"] > 0]
                s += (
                    f"; the {len(top)} most recommended countries ({', '.join(map(str, top['country']))}) took "
                    f"{top['_n'].sum() / n_all:.0%} of the recommendations matched to the corpus"
                )
            out.append(s + ".")
    if concentration is not None and not concentration.empty and "us_uk_share" in concentration.columns:
        c = _partition_keys(concentration, model, template)
        for r in c.itertuples(index=False):
            share = r.us_uk_share
            if _is_missing(share):
                continue
            s = (
                f"{_under(r.model, r.template)}, {float(share):.0%} of the recommendations were located "
                "in the US or the UK"
            )
            cov = getattr(r, "country_coverage", None)
            if not _is_missing(cov):
                s += f", and {float(cov):.0%} of the corpus's countries appeared at all"
            out.append(s + ".")
    return out


# ----------------------------------------------------------------------------- behaviour and needs (issue 20)
_ATTR_WORDS = {"economic_class": "income", "gender": "gender", "nationality": "nationality"}
_METRIC_SHORT = catalogue.labels("decompose")  # the short names of the contrasts' metrics


def _num(v) -> float:
    return float(v) if not _is_missing(v) else float("nan")


def _ci(lo, hi, flip: bool = False) -> str:
    lo, hi = _num(lo), _num(hi)
    if flip:
        lo, hi = -hi, -lo
    return f"[{lo:+.3f}, {hi:+.3f}]" if np.isfinite(lo) and np.isfinite(hi) else "[no interval]"


def _tests(n) -> str:
    n = 0 if _is_missing(n) else int(float(n))
    return f"{n} test{'s' if n != 1 else ''}"


def _prepared_decomposition(decomposition: Optional[pd.DataFrame], model: str, template: str) -> Optional[pd.DataFrame]:
    if (
        decomposition is None
        or decomposition.empty
        or not {"attribute", "value_a", "value_b", "metric", "component"} <= set(decomposition.columns)
    ):
        return None
    d = _partition_keys(decomposition, model, template)
    return d.assign(
        _attr=d["attribute"].map(_norm_attr),
        _metric=d["metric"].astype(str).str.lower(),
        _a=d["value_a"].astype(str),
        _b=d["value_b"].astype(str),
        _sig=d["significant"].map(_truthy).eq(True) if "significant" in d.columns else False,
        _byc=d["by_construction"].map(_truthy).eq(True) if "by_construction" in d.columns else False,
    )


def behaviour_findings(
    decomposition: Optional[pd.DataFrame],
    *,
    model: str = "",
    template: str = "",
    correction: str = "Holm",
    max_findings: int = 5,
) -> list[str]:
    """The summary's lead (issue 20): per model x template, the significant behaviour parts of
    the counterfactual pairs (``decompose.behaviour_needs``: the lists two groups received,
    scored for the same student), largest first: what the model did differently, to whom, on
    which metric, how much, with the interval and the adjusted p. Then, per attribute with a
    behaviour finding, the metrics whose behaviour part did not change significantly. A
    partition without any significant behaviour part is described as a model that gave the same
    lists whoever asked; where outcome gaps exist, that students far from the recommended
    universities (or with a stronger distance weighting) pay for it."""
    d = _prepared_decomposition(decomposition, model, template)
    if d is None:
        return []
    correction = _correction(d, correction)
    out: list[str] = []
    for (m, t), part in d.groupby(["model", "template"], sort=True):
        under = _under(m, t)
        beh = part[part["component"].astype(str) == "behaviour"]
        tested = beh[pd.to_numeric(beh["p_value"], errors="coerce").notna()] if "p_value" in beh else beh.iloc[0:0]
        notes = _unattainable(tested, under)  # after the partition's findings
        sig = tested[tested["_sig"]]
        if len(sig):
            sig = sig.assign(_abs=pd.to_numeric(sig["mean_diff"], errors="coerce").abs()).sort_values(
                ["_abs", "_attr", "_metric", "_a", "_b"], ascending=[False, True, True, True, True], kind="stable"
            )
            for _, r in sig.head(max_findings).iterrows():
                dv = _num(r["mean_diff"])  # b's lists minus a's lists, scored for the same student
                low, high = (r["_a"], r["_b"]) if dv >= 0 else (r["_b"], r["_a"])
                flip = r["_b"] != low
                name = _METRIC_SHORT.get(r["_metric"], r["metric"])
                fam = _tests(r.get("family_size"))
                out.append(
                    f"{under}, the model recommended different universities to {_who(r['_attr'], low)} than to "
                    f"otherwise identical {_who(r['_attr'], high)}: scored for the same student, the lists given to "
                    f"{_who(r['_attr'], low)} score {abs(dv):.3f} lower on {name} (behaviour, {low} minus {high}: "
                    f"{-dv if flip else dv:+.3f} {_ci(r.get('ci_low'), r.get('ci_high'), flip)}; "
                    f"{correction}-{_fmt_p(r.get('p_adjusted'))}, {fam} in the family)."
                )
            if len(sig) > max_findings:
                out.append(
                    f"{under}, {len(sig) - max_findings} further behaviour part(s) are significant (table "
                    '"Behaviour and needs of the counterfactual contrasts").'
                )
            for attr, g in tested.groupby("_attr", sort=True):
                found = set(g.loc[g["_sig"], "_metric"])
                if not found:
                    continue
                same = [x for x in dict.fromkeys(g["_metric"]) if x not in found]
                if same:
                    out.append(
                        f"{under}, by {_ATTR_WORDS.get(attr, attr)} the lists differed in "
                        f"{', '.join(_METRIC_SHORT.get(x, x) for x in sorted(found))} but not in "
                        f"{', '.join(_METRIC_SHORT.get(x, x) for x in same)} (behaviour parts not "
                        "significant after correction)."
                    )
            out += notes
            continue
        if tested.empty:
            continue
        fams = tested.groupby("_attr")["family_size"].max() if "family_size" in tested else pd.Series(dtype=float)
        metrics_tested = ", ".join(_METRIC_SHORT.get(x, x) for x in dict.fromkeys(tested["_metric"]))
        attrs = ", ".join(f"{_ATTR_WORDS.get(a, a)}: {_tests(n)}" for a, n in fams.items())
        tot = part[(part["component"].astype(str) == "total") & part["_sig"]]
        needs = part[(part["component"].astype(str) == "needs") & part["_sig"]]
        s = (
            f"{under}, as far as this audit can tell, the model gave the same lists whoever asked: no behaviour "
            f"part of any counterfactual pair (the lists, scored for the same student) is significant after "
            f"{correction} correction ({metrics_tested}; {attrs})"
        )
        if len(tot):
            s += (
                f"; yet {len(tot)} outcome gap(s) are significant: students far from the recommended "
                "universities, or whose income weights distance more, pay for the same lists"
                + (f" (needs part significant in {len(needs)} pair(s) x metric(s))" if len(needs) else "")
                + ". This is a finding: the model did not adapt its recommendations to who the student is"
            )
        else:
            s += ", and no outcome gap between otherwise identical students is significant"
        out.append(s + ".")
        out += notes
    return out


def _unattainable(tested: pd.DataFrame, under: str) -> list[str]:
    """A sentence naming the behaviour families whose smallest attainable p is above alpha /
    family size (too few strata for so many tests): no result there can be significant."""
    if tested.empty or not {"p_min_attainable", "family_size"} <= set(tested.columns):
        return []
    alpha = (
        float(pd.to_numeric(tested["alpha"], errors="coerce").dropna().iloc[0])
        if "alpha" in tested and tested["alpha"].notna().any()
        else 0.05
    )
    out = []
    for attr, g in tested.groupby("_attr", sort=True):
        size = pd.to_numeric(g["family_size"], errors="coerce").max()
        p_min = pd.to_numeric(g["p_min_attainable"], errors="coerce").min()
        if np.isfinite(size) and np.isfinite(p_min) and size > 0 and p_min > alpha / size:
            out.append(
                f"{under}, the behaviour parts by {_ATTR_WORDS.get(attr, attr)} cannot reach significance: "
                f"with {_tests(size)} in the family the smallest attainable p ({p_min:.4f}) is above alpha / "
                f"size ({alpha / size:.2g}); read their intervals, not their tests."
            )
    return out


def outcome_split_sentence(
    decomposition: Optional[pd.DataFrame],
    *,
    model: str,
    template: str,
    attribute: str,
    metric: str,
    low: str,
    high: str,
    correction: str = "Holm",
) -> Optional[str]:
    """One sentence: how much of the outcome gap ``low`` minus ``high`` (one attribute and
    metric of one model x template) is behaviour (the lists) and how much is position (needs).
    None when the decomposition has no such pair."""
    d = _prepared_decomposition(decomposition, model, template)
    if d is None:
        return None
    sel = d[
        (d["model"] == model)
        & (d["template"] == template)
        & (d["_attr"] == _norm_attr(attribute))
        & (d["_metric"] == str(metric).lower())
        & (((d["_a"] == str(low)) & (d["_b"] == str(high))) | ((d["_a"] == str(high)) & (d["_b"] == str(low))))
    ]
    comp = {str(c): r for c, r in zip(sel["component"], sel.to_dict("records"), strict=False)}
    if not {"behaviour", "needs"} <= set(comp):
        return None
    correction = _correction(d, correction)
    b, n = comp["behaviour"], comp["needs"]
    flip = str(b["_b"]) != str(low)
    sign = -1.0 if flip else 1.0
    name = _METRIC_SHORT.get(str(metric).lower(), metric)
    bsig = "significant" if b["_sig"] else "not significant"
    beh = (
        f"behaviour (the lists themselves, scored for the same student) {sign * _num(b['mean_diff']):+.3f} "
        f"{_ci(b.get('ci_low'), b.get('ci_high'), flip)} ({correction}-{_fmt_p(b.get('p_adjusted'))}, {bsig}, "
        f"{_tests(b.get('family_size'))} in the family)"
    )
    if n["_byc"]:
        why = (
            "gender does not move the student's position"
            if _norm_attr(attribute) == "gender"
            else f"{name} does not depend on the student"
        )
        return f"Of this gap, all is {beh}; position (needs) is 0 by construction: {why}."
    return (
        f"Of this gap, {beh}; position (needs: the same universities scored for where the student lives and "
        f"their income) {sign * _num(n['mean_diff']):+.3f} {_ci(n.get('ci_low'), n.get('ci_high'), flip)}."
    )
