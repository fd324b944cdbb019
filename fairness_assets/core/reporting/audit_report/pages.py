"""The report as files (issue 36): one self-contained HTML file, or, for a report of many partitions, an index
page and one page per model with the figures as PNG files beside them (:func:`build_report_files`).

A self-contained file embeds every figure as base64 text: at the study's 18 partitions it is 29 MB and took a
browser 6.2 s to open, at 162 it is 250 MB and took 102 s, where the index of 162 partitions took 1.55 s
(docs/benchmarks.md, "Opening the report"). The pages say the same as the one file, split:

- the index (``report.html``, ``report.md``): the scorecard, the links to the models' pages, the whole
  summary, the provenance, the parse quality, the sections across models (the model comparison, the
  sensitivity of the findings, the geography's tables), the tables across partitions (the models side by
  side, base vs regional) and the figures across models (the models side by side per template);
- one page per model (``models/<model>.html``, ``.md``): the model's summary sentences, its parse-quality
  rows, its matches to audit, its behaviour and needs tables, its geography figures, its partitions' tables
  and its figures (base vs regional, each partition's), with a link back to the index.

Every figure is a PNG under ``figures/``, linked (and loaded as the reader scrolls to it), so the pages work
from a plain folder and from any address the folder is published at (``FAIRNESS_REPORT_BASE_URL``): every
link is relative. Pure: no files are written here (the caller writes :meth:`ReportFiles.files`).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal, Mapping, Optional, Sequence

import pandas as pd

from ...common.naming import file_stem
from .. import figures as fig
from .. import report as rep
from .behaviour import behaviour_section
from .build import AssembledReport, AuditWideResults, assemble_report
from .partition import PartitionDigest
from .sections import MATCHES_TITLE
from .tables import headline_tables

ReportLayout = Literal["auto", "single", "pages"]
REPORT_LAYOUTS: tuple[str, ...] = ("auto", "single", "pages")
SINGLE_FILE_MAX_PARTITIONS = 18
"""``auto`` writes one self-contained file up to this many partitions (the study's size), pages beyond."""
INDEX = "report"
MODELS_FOLDER = "models"


@dataclass(frozen=True)
class ReportFiles:
    """A rendered report: ``layout`` (``single`` or ``pages``), the index (or only) page as ``html`` and
    ``markdown`` (``report.html``, ``report.md``), the further pages (``pages``: path relative to the
    report's folder -> text; empty for ``single``) and every figure (their PNGs go under ``figures/``)."""

    layout: str
    html: str
    markdown: str
    pages: Mapping[str, str]
    figures: list[fig.Figure]

    def files(self) -> dict[str, Any]:
        """Every file of the report, path relative to its folder -> text (str) or PNG bytes."""
        out: dict[str, Any] = {f"{INDEX}.html": self.html, f"{INDEX}.md": self.markdown, **self.pages}
        out.update(rep.figure_files(self.figures))
        return out


def layout_for(layout: str, partitions: int) -> str:
    """``single`` or ``pages``: ``layout`` as asked, ``auto`` by the number of partitions
    (:data:`SINGLE_FILE_MAX_PARTITIONS`). An unknown layout is refused, naming the choices."""
    if layout not in REPORT_LAYOUTS:
        raise ValueError(f"report layout {layout!r} is not one of {', '.join(REPORT_LAYOUTS)}")
    if layout == "auto":
        return "single" if partitions <= SINGLE_FILE_MAX_PARTITIONS else "pages"
    return layout


def model_page_paths(models: Sequence[str]) -> dict[str, str]:
    """{model: its page's path without extension, relative to the report's folder}: ``models/<stem>``, a
    file-safe stem that differs for distinct model names (:func:`file_stem`)."""
    return {m: f"{MODELS_FOLDER}/{file_stem(m, max_chars=60)}" for m in models}


def build_report_files(
    parts: Sequence[Any],
    *,
    layout: ReportLayout = "auto",
    provenance: Mapping[str, Any],
    quality: Optional[pd.DataFrame],
    audit_wide: Optional[AuditWideResults] = None,
    title: str = "LLM university-recommendation fairness audit",
    notes: Sequence[str] = (),
    matches: Optional[Mapping[str, pd.DataFrame]] = None,
) -> ReportFiles:
    """The report of ``parts`` (:func:`build.build_report`'s arguments; a partition whose figures are drawn
    already is given as its :class:`PartitionDigest`) as files: one self-contained file (``layout="single"``),
    an index and one page per model (``"pages"``), or by size (``"auto"``: :func:`layout_for`)."""
    assembled = assemble_report(parts, audit_wide=audit_wide, notes=notes, matches=matches)
    return report_files(assembled, layout=layout, provenance=provenance, quality=quality, title=title)


def report_files(
    assembled: AssembledReport,
    *,
    layout: ReportLayout = "auto",
    provenance: Mapping[str, Any],
    quality: Optional[pd.DataFrame],
    title: str = "LLM university-recommendation fairness audit",
) -> ReportFiles:
    """:func:`build_report_files` of a report assembled already (:func:`build.assemble_report`, which can draw
    its comparison figures in worker processes)."""
    chosen = layout_for(layout, len(assembled.digests))
    if chosen == "single":
        html, markdown = rep.render_report(assembled.content(), title=title, provenance=provenance, quality=quality)
        return ReportFiles("single", html, markdown, {}, assembled.all_figures())
    return _pages(assembled, title=title, provenance=provenance, quality=quality)


def _models(digests: Sequence[PartitionDigest]) -> list[str]:
    return list(dict.fromkeys(d.model for d in digests))


def _of_keys(section: rep.ReportSection, keys: Sequence[str]) -> tuple[dict, list]:
    """The tables and notes of a per-partition section (the matches to audit) whose titles start with one of
    ``keys`` (``model|template: ...``)."""
    prefixes = tuple(f"{k}: " for k in keys)
    tables = {t: df for t, df in section.tables.items() if t.startswith(prefixes)}
    return tables, [n for n in section.notes if n.startswith(prefixes)]


def _quality_rows(quality: Optional[pd.DataFrame], keys: Sequence[str]) -> Optional[pd.DataFrame]:
    if quality is None or "partition" not in quality.columns:
        return quality
    return quality[quality["partition"].astype(str).isin(keys)]


def _model_page(a: AssembledReport, model: str, *, title: str, quality: Optional[pd.DataFrame]) -> tuple[str, str, str]:
    """(html, markdown, link description) of one model's page."""
    digests = [d for d in a.digests if d.model == model]
    keys = [d.key for d in digests]
    summary = [line for d in digests for line in d.behaviour_lines]
    summary += [line for d in digests for line in d.outcome_lines]
    sections: list[rep.ReportSection] = []
    for sec in a.sections:
        if sec.sid == "matches":
            tables, notes = _of_keys(sec, keys)
            sections.append(rep.ReportSection(sec.sid, MATCHES_TITLE, intro=sec.intro, tables=tables, notes=notes))
        elif sec.sid == "geography":
            shown = [f for f in sec.figures if f.model == model]
            if shown:
                sections.append(
                    rep.ReportSection(
                        sec.sid,
                        sec.title,
                        intro=["The region figures of this model; the tables are on the index."],
                        figures=shown,
                    )
                )
    behaviour = behaviour_section(digests)
    if behaviour is not None:
        sections.append(behaviour)
    tables: dict[str, pd.DataFrame] = {}
    for d in digests:
        tables.update(d.tables)
    figures = [f for f in a.comparison_figures if f.model == model] + [f for d in digests for f in d.figures]
    content = rep.ReportContent(
        tables=tables,
        figures=figures,
        summary=summary,
        sections=sections,
        pages=[rep.PageLink(f"../{INDEX}", "The index", "the scorecard, the whole summary and every model")],
        pages_title="The audit",
    )
    provenance = {
        "partitions": keys,
        "provenance of the audit": f"on the index page ({INDEX}.html): models, decoding, corpus, code and versions",
    }
    html, markdown = rep.render_report(
        content,
        title=f"{title}: {model}",
        provenance=provenance,
        quality=_quality_rows(quality, keys),
        figure_dir="../figures",
        figure_src="file",
    )
    significant = sum(d.significant for d in digests)
    described = (
        f"{len(keys)} template(s) ({', '.join(d.template for d in digests)}), "
        f"{significant} significant counterfactual disparit{'y' if significant == 1 else 'ies'}"
    )
    return html, markdown, described


def _pages(
    a: AssembledReport, *, title: str, provenance: Mapping[str, Any], quality: Optional[pd.DataFrame]
) -> ReportFiles:
    paths = model_page_paths(_models(a.digests))
    pages: dict[str, str] = {}
    links = []
    for model, path in paths.items():
        html, markdown, described = _model_page(a, model, title=title, quality=quality)
        pages[f"{path}.html"], pages[f"{path}.md"] = html, markdown
        links.append(rep.PageLink(path, model, described))
    index_sections = []
    for sec in a.sections:
        if sec.sid in ("matches", "behaviour"):
            continue  # per partition: on the models' pages
        if sec.sid == "geography":
            sec = rep.ReportSection(
                sec.sid,
                sec.title,
                intro=sec.intro,
                tables=sec.tables,
                notes=[*sec.notes, "The region figures of each model are on its page."],
                figures=[f for f in sec.figures if not f.model],
            )
        index_sections.append(sec)
    content = rep.ReportContent(
        tables=headline_tables(a.digests, a.base_vs_regional),
        figures=[f for f in a.comparison_figures if not f.model],
        summary=a.summary,
        notes=a.notes,
        sections=index_sections,
        scorecard=a.scorecard,
        pages=links,
        pages_title="Models",
    )
    html, markdown = rep.render_report(content, title=title, provenance=provenance, quality=quality, figure_src="file")
    return ReportFiles("pages", html, markdown, pages, a.all_figures())
