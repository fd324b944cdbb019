"""The report rendered: its sections (:data:`SECTIONS`, :class:`ReportSection`), its CSS, its figures (embedded
in the HTML, linked from the Markdown: :func:`figure_path`, :func:`figure_files`), what it says
(:class:`ReportContent`) and :func:`render_report`, which returns ``(html, markdown)``."""

from __future__ import annotations

import base64
import re
from dataclasses import dataclass, field
from typing import Any, Iterable, Literal, Mapping, Optional, Sequence

import pandas as pd

from ..figures import Figure
from .cells import _esc, _md, truthy
from .tables import MAX_ROWS, _provenance_frame, _quality_frame, table_html, table_markdown

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


# ----------------------------------------------------------------------------- figures
def figure_path(fig: Figure, folder: str = "figures") -> str:
    """The relative path of a figure's PNG beside the Markdown report."""
    return f"{folder.rstrip('/')}/{fig.slug}.png" if folder else f"{fig.slug}.png"


def figure_files(figures: Iterable[Figure], folder: str = "figures") -> dict[str, bytes]:
    """{relative path: PNG bytes} of every drawn figure: the files the Markdown links to."""
    return {figure_path(f, folder): f.png for f in figures if f.png is not None}


def _figures_html(figures: Sequence[Figure], figure_src: str = "embed", figure_dir: str = "figures") -> str:
    """The figures as HTML: each PNG embedded as a ``data:`` URI (``figure_src="embed"``: the file is
    self-contained) or linked to its file ``<figure_dir>/<slug>.png`` and loaded when scrolled to
    (``"file"``: the pages of a large report, whose PNGs are written beside them)."""
    drawn = [f for f in figures if f.png is not None]
    skipped = [f for f in figures if f.png is None]
    parts = []
    for f in drawn:
        if figure_src == "embed":
            src = "data:image/png;base64," + base64.b64encode(f.png).decode("ascii")
            img = f'<img alt="{_esc(f.title)}" src="{src}">'
        else:
            img = f'<img alt="{_esc(f.title)}" loading="lazy" src="{_esc(figure_path(f, figure_dir))}">'
        parts.append(
            f'<figure id="fig-{_esc(f.slug)}">{img}'
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


def _section_html(sec: ReportSection, max_rows: int, figure_src: str = "embed", figure_dir: str = "figures") -> str:
    sid = _section_sid(sec)
    h = [f'<section id="{sid}"><h2>{_esc(sec.title)}</h2>']
    h += [f"<p>{_esc(t)}</p>" for t in sec.intro]
    if sec.notes:
        h.append('<ul class="note">' + "".join(f"<li>{_esc(t)}</li>" for t in sec.notes) + "</ul>")
    for k, (name, df) in enumerate(sec.tables.items()):
        h.append(f'<h3 id="{sid}-table-{k + 1}">{_esc(name)}</h3>{table_html(df, max_rows)}')
    if sec.figures:
        h.append(f'<h3 id="{sid}-figures">Figures</h3>{_figures_html(list(sec.figures), figure_src, figure_dir)}')
    if not (sec.intro or sec.notes or sec.tables or sec.figures):
        h.append('<p class="note">Nothing was given for this section.</p>')
    h.append("</section>")
    return "\n".join(h)


def section_markdown(sec: ReportSection, max_rows: int, figure_dir: str) -> list[str]:
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


# ----------------------------------------------------------------------------- the parse quality
def _quality_html(qual: Optional[pd.DataFrame], max_rows: int) -> list[str]:
    """The HTML lines of the parse-quality section: how many checks passed, failed or were not
    evaluated, and the table (``qual``: :func:`_quality_frame`'s; None: nothing was given)."""
    h = [f'<section id="quality"><h2>{SECTIONS[2][1]}</h2>']
    if qual is not None:
        verdicts = [truthy(v) for v in qual["passed"]] if "passed" in qual.columns else []
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
    return h


# ----------------------------------------------------------------------------- the report
@dataclass(frozen=True)
class PageLink:
    """A link to another page of a report written as pages (issue 36): ``path`` relative to the page, without
    its extension (the HTML page links to ``<path>.html``, the Markdown page to ``<path>.md``), the link's
    ``title`` and a sentence after it."""

    path: str
    title: str
    description: str = ""


def _pages_html(title: str, pages: Sequence[PageLink]) -> str:
    items = "".join(
        f'<li><a href="{_esc(p.path)}.html">{_esc(p.title)}</a>' + (f": {_esc(p.description)}" if p.description else "")
        for p in pages
    )
    return f'<section id="pages"><h2>{_esc(title)}</h2><ul>{items}</ul></section>'


def _pages_md(title: str, pages: Sequence[PageLink]) -> list[str]:
    lines = [f"## {_md(title)}", ""]
    lines += [f"- [{_md(p.title)}]({p.path}.md)" + (f": {_md(p.description)}" if p.description else "") for p in pages]
    return lines + [""]


@dataclass(frozen=True)
class ReportContent:
    """What a report says, as the audit found it: every section but the provenance and the parse
    quality (the record of how the audit was made, given to :func:`render_report` on their own).
    Each field may be left out; its section then says that nothing was given. Frozen; the tables
    are frames, so compare two contents field by field, not with ``==``."""

    tables: Optional[Mapping[str, pd.DataFrame]] = None
    """The "Tables" section: title -> DataFrame, in order (at most ``max_rows`` rows of each
    shown). None or empty: "No tables were given"."""
    figures: Sequence[Figure] = ()
    """The "Figures" section: :class:`Figure` objects, embedded in the HTML and linked from the
    Markdown; skipped ones are listed with their reason."""
    summary: Optional[Sequence[str]] = None
    """The summary's plain-language sentences (:func:`disparity_summary`), in order. None or
    empty: "No summary was given"."""
    notes: Sequence[str] = ()
    """Further sentences shown under the summary (e.g. method decisions); none: no "Notes"."""
    sections: Sequence[ReportSection] = ()
    """Further sections, after the parse quality and before the tables (listed in the contents);
    their figures are shown in the section, not under "Figures" (write their PNGs too:
    :func:`figure_files`). None given: the report as before sections existed."""
    scorecard: Optional[ReportSection] = None
    """The headline numbers (:func:`core.reporting.scorecard.section`), shown first, above the
    summary (and first in the contents). None: no scorecard."""
    pages: Sequence[PageLink] = ()
    """Links to the report's other pages (a report written as pages: the index links to each model's page, a
    model's page back to the index), in a section of their own after the scorecard. None: no such section."""
    pages_title: str = "Pages"
    """That section's heading."""


def render_report(
    content: Optional[ReportContent] = None,
    *,
    title: str = "LLM university-recommendation fairness audit",
    provenance: Optional[Mapping[str, Any]] = None,
    quality=None,
    figure_dir: str = "figures",
    figure_src: Literal["embed", "file"] = "embed",
    max_rows: int = MAX_ROWS,
) -> tuple[str, str]:
    """The report of one audit as ``(html, markdown)``.

    - ``content``: what the report says (:class:`ReportContent`: scorecard, summary and notes,
      further sections, tables, figures); None: every one of those sections says that nothing
      was given.
    - ``provenance``: any mapping (models and revisions or file hashes, decoding parameters,
      corpus and template hashes, parser/tagger/code versions, ...), rendered as a key/value
      table in the given order; nested values as JSON.
    - ``quality``: parse-quality results, a DataFrame (or records) with ``check``, ``passed``,
      ``observed``, ``threshold`` (other columns are shown too).
    - ``figure_dir``: the folder the Markdown links the figures' PNGs in; ``max_rows``: the rows
      of each table shown.
    - ``figure_src``: ``"embed"``, every figure in the HTML as a ``data:`` URI (one self-contained file);
      ``"file"``, the HTML links each figure's PNG in ``figure_dir`` too, loaded as the reader scrolls to it
      (the pages of a large report, issue 36).

    Every section is present; an empty one says that nothing was given. The output holds no
    time stamp: the same input gives the same text.
    """
    if content is None:
        content = ReportContent()
    provenance = provenance or {}
    qual = _quality_frame(quality)
    html_out = _html(content, title, provenance, qual, max_rows, figure_src, figure_dir)
    return html_out, _markdown(content, title, provenance, qual, max_rows, figure_dir)


def _html(content: ReportContent, title, provenance, qual, max_rows: int, figure_src: str, figure_dir: str) -> str:
    tables = dict(content.tables or {})
    figures = list(content.figures)
    summary, notes, scorecard = content.summary, content.notes, content.scorecard
    sections = list(content.sections)
    nav = list(SECTIONS[:3]) + [(_section_sid(x), x.title) for x in sections] + list(SECTIONS[3:])
    if content.pages:
        nav.insert(0, ("pages", content.pages_title))
    if scorecard is not None:
        nav.insert(0, (_section_sid(scorecard), scorecard.title))
    h = [
        "<!DOCTYPE html>",
        '<html lang="en"><head><meta charset="utf-8">',
        '<meta name="viewport" content="width=device-width, initial-scale=1">',
        f"<title>{_esc(title)}</title><style>{CSS}</style></head><body>",
        f"<h1>{_esc(title)}</h1>",
    ]
    h.append("<nav><ul>" + "".join(f'<li><a href="#{sid}">{_esc(name)}</a></li>' for sid, name in nav) + "</ul></nav>")
    if scorecard is not None:
        h.append(_section_html(scorecard, max_rows, figure_src, figure_dir))
    if content.pages:
        h.append(_pages_html(content.pages_title, content.pages))
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
    h += _quality_html(qual, max_rows)
    for sec in sections:
        h.append(_section_html(sec, max_rows, figure_src, figure_dir))
    # tables
    h.append(f'<section id="tables"><h2>{SECTIONS[3][1]}</h2>')
    if tables:
        for k, (name, df) in enumerate(tables.items()):
            h.append(f'<h3 id="table-{k + 1}">{_esc(name)}</h3>{table_html(df, max_rows)}')
    else:
        h.append('<p class="note">No tables were given.</p>')
    h.append("</section>")
    # figures
    shown = _figures_html(figures, figure_src, figure_dir)
    h.append(f'<section id="figures"><h2>{SECTIONS[4][1]}</h2>{shown}</section>')
    h.append("</body></html>")
    return "\n".join(h) + "\n"


def _markdown(content: ReportContent, title, provenance, qual, max_rows: int, figure_dir: str) -> str:
    tables = dict(content.tables or {})
    figures = list(content.figures)
    summary, notes, scorecard = content.summary, content.notes, content.scorecard
    m = [f"# {_md(title)}", ""]
    if scorecard is not None:
        m += section_markdown(scorecard, max_rows, figure_dir)[1:] + [""]
    if content.pages:
        m += _pages_md(content.pages_title, content.pages)
    m += [f"## {SECTIONS[0][1]}", ""]
    m += [f"- {_md(s)}" for s in summary] if summary else ["_No summary was given._"]
    if notes:
        m += ["", "### Notes", ""] + [f"- {_md(s)}" for s in notes]
    m += ["", f"## {SECTIONS[1][1]}", ""]
    m.append(table_markdown(_provenance_frame(provenance)) if provenance else "_No provenance was given._")
    m += ["", f"## {SECTIONS[2][1]}", ""]
    m.append(table_markdown(qual, max_rows) if qual is not None else "_No parse-quality results were given._")
    for sec in content.sections:
        m += section_markdown(sec, max_rows, figure_dir)
    m += ["", f"## {SECTIONS[3][1]}", ""]
    if tables:
        for name, df in tables.items():
            m += [f"### {_md(name)}", "", table_markdown(df, max_rows), ""]
    else:
        m.append("_No tables were given._")
    m += ["", f"## {SECTIONS[4][1]}", "", _figures_md(figures, figure_dir)]
    return "\n".join(m).rstrip() + "\n"
