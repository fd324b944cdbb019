"""The audit report: one self-contained HTML file and a Markdown twin, and its English findings. Pure: no Dagster,
no database.

:func:`render_report` takes what an audit produced (what the report says, a :class:`ReportContent`: the
analysis tables, the :class:`~fairness_assets.core.reporting.figures.Figure` list and the plain-language
summary; and how the audit was made: a provenance mapping and the parse-quality results) and returns
``(html, markdown)``.

- HTML: inline CSS, every figure embedded as a ``data:image/png;base64`` URI, no external
  resource (the report must open on an offline machine); or, with ``figure_src="file"`` (the pages of a
  large report, :mod:`..audit_report.pages`), each figure linked to its PNG beside the page, loaded lazily.
- Markdown: figures are image links to ``<figure_dir>/<slug>.png``; write the bytes of
  :func:`figure_files` (same ``figure_dir``) beside the Markdown file.
- Every text that comes from data (model names, university names, model outputs, provenance
  values) is escaped: ``<script>`` in a model's answer shows as text, never runs.
- A ``significant`` column shows as a badge, a ``marking`` column in bold; a ``passed`` column
  of the parse-quality table as PASS/FAIL.

:func:`disparity_summary` writes the plain-language sentences about the largest gaps, from the tables of a
:class:`DisparityTables`.

Further sections (:class:`ReportSection`, e.g. the geography section of issue 15) can be given
to :func:`render_report` (:attr:`ReportContent.sections`); they come after the parse quality and before
the tables, and a report given none is the same as before they existed. The scorecard
(:mod:`core.reporting.scorecard`, issue 23.3) is a section of its own that comes first, above the summary.

Rendering:

- :mod:`.cells`: escaping (HTML, Markdown), truth and missing values, a column's display strings;
- :mod:`.tables`: a DataFrame as an HTML or a Markdown table, the provenance and parse-quality frames;
- :mod:`.render`: the sections, the CSS, the figures' paths, what a report says (:class:`ReportContent`) and
  :func:`render_report`.

The English findings:

- :mod:`.wording`: the words the sentences share (groups, partitions, adjusted p, the correction's name);
- :mod:`.summary`: the largest gaps, the tables the summary reads (:class:`DisparityTables`) and
  :func:`disparity_summary`;
- :mod:`.behaviour`: the behaviour and needs of the contrasts (:func:`behaviour_findings`,
  :func:`outcome_split_sentence`).
"""

from __future__ import annotations

import html  # noqa: F401 - report.html: tests/core/test_report_behaviour.py reads html.unescape from it

from .behaviour import _METRIC_SHORT, behaviour_findings, outcome_split_sentence
from .cells import P_COLUMNS, _esc, _md, format_column, truthy
from .render import (
    CSS,
    SECTIONS,
    PageLink,
    ReportContent,
    ReportSection,
    figure_files,
    figure_path,
    render_report,
    section_markdown,
)
from .summary import METRIC_NAMES, DisparityTables, disparity_summary, largest_gaps
from .tables import MAX_ROWS, table_html, table_markdown
from .wording import CORRECTION_NAMES, who

__all__ = [
    "CSS",
    "MAX_ROWS",
    "METRIC_NAMES",
    "P_COLUMNS",
    "SECTIONS",
    "DisparityTables",
    "PageLink",
    "ReportContent",
    "ReportSection",
    "CORRECTION_NAMES",  # scorecard.py
    "_METRIC_SHORT",  # tests/core/test_metric_catalogue.py
    "_esc",  # tests/core/test_report.py, test_world_map.py
    "_md",  # tests/core/test_report_geography.py, test_world_map.py
    "section_markdown",  # scorecard.py
    "truthy",  # scorecard.py, audit_report/
    "who",  # scorecard.py
    "behaviour_findings",
    "disparity_summary",
    "figure_files",
    "figure_path",
    "format_column",
    "largest_gaps",
    "outcome_split_sentence",
    "render_report",
    "table_html",
    "table_markdown",
]
