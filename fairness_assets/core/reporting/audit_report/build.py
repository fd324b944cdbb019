"""The report assembled (:func:`build_report`): the summary's sentences in reading order, the sections, the
scorecard first, rendered as HTML and Markdown with the figures; the results over every partition together that
it reads besides the partitions (:class:`AuditWideResults`)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Mapping, Optional, Sequence

import pandas as pd

from .. import figures as fig
from .. import report as rep
from .. import scorecard as sc
from ..sentences import change as change_sentences
from ..sentences import geography as geography_sentences
from ..sentences import sensitivity as sensitivity_sentences
from ._frames import _integer_counts
from .behaviour import behaviour_section
from .digest import digest, scorecard
from .drawing import comparison_figures
from .geography import geography_section, has_geography
from .partition import PartitionDigest
from .sections import comparison_section, matches_section, sensitivity_section
from .tables import report_tables


def component_change_summary(base_vs_regional: Optional[Mapping[str, pd.DataFrame]]) -> list[str]:
    """The summary's base-vs-regional sentences: per model, whether the regional template moved
    what the model did (core.reporting.sentences.change.summary_sentences)."""
    change = (base_vs_regional or {}).get("component_change")
    affinity = change_sentences.affinity_sentences((base_vs_regional or {}).get("language_affinity"))
    affinity += change_sentences.signalled_sentences((base_vs_regional or {}).get("signalled"))
    if change is None or not len(change):
        return affinity
    return change_sentences.summary_sentences(_integer_counts(change)) + affinity


@dataclass(frozen=True)
class AuditWideResults:
    """What :func:`build_report` reads besides the partitions: the results computed over every
    partition together (by the ``base_vs_regional``, geography, ``model_comparison`` and
    ``sensitivity`` assets). Each may be left out (None); the report is then as without it.
    Frozen; the fields are frames, so compare field by field, not with ``==``."""

    base_vs_regional: Optional[Mapping[str, pd.DataFrame]] = None
    """The ``base_vs_regional`` asset's tables (``drs_change``, ``grs_change``, ``component_change``,
    ...): the base-vs-regional tables and figures per model, and the summary's sentences on
    whether the regional template moved what the model did (:func:`component_change_summary`)."""
    geography: Optional[Mapping[str, pd.DataFrame]] = None
    """Issue 15: :func:`geostats.geo_statistics`'s dict over the partitions, plus ``"geo_items"``
    (:func:`geostats.item_geography` of the items) for the figures; any key may be missing or
    empty. When given, the summary starts with the geographic sentences
    (:func:`sentences.geography.summary_sentences`: significant findings first, each with its
    interval and adjusted p) and the report has a geography section (:func:`geography_section`);
    its figures are returned too (after the others). None or empty: the report as without it."""
    geography_figures: Optional[Sequence[fig.Figure]] = None
    """The region figures already drawn, instead of ``geography["geo_items"]``."""
    comparison: Optional[Mapping[str, pd.DataFrame]] = None
    """Issue 22: the ``model_comparison`` tables (differences, leaderboard, gate); the report then
    has a "Model comparison" section and its summary the significant differences."""
    sensitivity: Optional[pd.DataFrame] = None
    """The verdicts of the ``sensitivity`` asset (robust / fragile findings), shown in a section of
    their own and summarised."""


@dataclass(frozen=True)
class AssembledReport:
    """Everything a report says before it is rendered (:func:`assemble_report`): one file
    (:func:`build_report`) or an index and one page per model (:func:`pages.build_report_files`) is
    rendered from it, so both say the same."""

    digests: list[PartitionDigest]
    summary: list[str]
    sections: list[rep.ReportSection]
    comparison_figures: list[fig.Figure]
    """The figures across partitions: the models side by side per template, base vs regional per model."""
    scorecard: Optional[rep.ReportSection]
    base_vs_regional: Optional[Mapping[str, pd.DataFrame]]
    notes: Sequence[str] = ()

    @property
    def figures(self) -> list[fig.Figure]:
        """The "Figures" section: the figures across partitions, then each partition's."""
        return self.comparison_figures + [f for d in self.digests for f in d.figures]

    def content(self) -> rep.ReportContent:
        """The whole report as one :class:`ReportContent`."""
        return rep.ReportContent(
            tables=report_tables(self.digests, self.base_vs_regional),
            figures=self.figures,
            summary=self.summary,
            notes=self.notes,
            sections=self.sections,
            scorecard=self.scorecard,
        )

    def all_figures(self) -> list[fig.Figure]:
        """Every figure of the report, the sections' included (the PNG files to write)."""
        return self.figures + [f for sec in self.sections for f in sec.figures]


def assemble_report(
    parts: Sequence[Any],
    *,
    audit_wide: Optional[AuditWideResults] = None,
    notes: Sequence[str] = (),
    figures_by_partition: Optional[Mapping[str, Sequence[fig.Figure]]] = None,
    matches: Optional[Mapping[str, pd.DataFrame]] = None,
    workers: int = 1,
) -> AssembledReport:
    """What the report of ``parts`` says (:func:`build_report`'s arguments but those of the rendering),
    not yet rendered; the comparison figures drawn in ``workers`` processes (core/reference/workers.py)."""
    if not parts:
        raise ValueError("build_report: no scored partition to report on")
    if audit_wide is None:
        audit_wide = AuditWideResults()
    base_vs_regional, geography, geography_figures = (
        audit_wide.base_vs_regional,
        audit_wide.geography,
        audit_wide.geography_figures,
    )
    comparison, sensitivity = audit_wide.comparison, audit_wide.sensitivity
    given = figures_by_partition or {}
    digests = [p if isinstance(p, PartitionDigest) else digest(p, given.get(p.key)) for p in parts]
    summary: list[str] = []
    sections: list[rep.ReportSection] = []
    for d in digests:  # issue 20: what the model did differently leads
        summary += d.behaviour_lines
    summary += component_change_summary(base_vs_regional)  # did the regional template move what the model did?
    compared = comparison_section(comparison, workers=workers)
    if compared is not None:
        from ...statistics import comparison as comparison_core

        summary += [
            f"Model comparison: {s}"
            for s in comparison_core.comparison_summary(
                compared.tables["Differences B - A, paired by profile and run (significant first)"], max_lines=5
            )
        ]
        sections.append(compared)
    sensitive = sensitivity_section(sensitivity)
    if sensitive is not None:
        summary += sensitivity_sentences.summary_sentences(
            sensitive.tables["Findings, robust or fragile (fragile first)"], max_lines=5
        )
        sections.append(sensitive)
    if matches is not None:
        sections.append(matches_section(matches))
    behaviour = behaviour_section(digests)
    if behaviour is not None:
        sections.append(behaviour)
    light = [d.part for d in digests]
    if has_geography(geography):
        summary += geography_sentences.summary_sentences(
            {k: _integer_counts(v) for k, v in geography.items() if isinstance(v, pd.DataFrame)}
        )
        sections.append(geography_section(geography, light, geography_figures))
    for d in digests:
        summary += d.outcome_lines
    card = scorecard(digests, geography=geography, comparison=comparison)  # issue 23.3: the headline numbers first
    return AssembledReport(
        digests=digests,
        summary=summary,
        sections=sections,
        comparison_figures=comparison_figures(light, base_vs_regional, workers=workers),
        scorecard=sc.section(card),
        base_vs_regional=base_vs_regional,
        notes=notes,
    )


def build_report(
    parts: Sequence[Any],
    *,
    provenance: Mapping[str, Any],
    quality: Optional[pd.DataFrame],
    audit_wide: Optional[AuditWideResults] = None,
    title: str = "LLM university-recommendation fairness audit",
    notes: Sequence[str] = (),
    figures_by_partition: Optional[Mapping[str, Sequence[fig.Figure]]] = None,
    matches: Optional[Mapping[str, pd.DataFrame]] = None,
) -> tuple[str, str, list[fig.Figure]]:
    """``(html, markdown, figures)`` of one audit (every partition given, each a
    :class:`PartitionResult` or, to hold less, already a :class:`PartitionDigest`), as one
    self-contained HTML file (a report of many partitions as an index and one page per model:
    :func:`pages.build_report_files`).

    ``audit_wide`` (:class:`AuditWideResults`): the results over every partition together
    (base vs regional, geography, model comparison, sensitivity); None: a report of the
    partitions alone.

    ``figures_by_partition`` (``model|template`` -> figures) reuses figures already drawn;
    partitions without an entry have theirs drawn here.

    ``matches`` (``model|template`` -> :func:`understanding.non_exact_matches`, issue 21): the
    most frequent non-exact matches of each partition, listed right after the parse-quality
    table so that a reader can audit them at a glance.

    The report opens with the scorecard (issue 23.3, :func:`scorecard`): one row per model x
    template, the strongest behaviour findings, the comparison and the release gate."""
    assembled = assemble_report(
        parts, audit_wide=audit_wide, notes=notes, figures_by_partition=figures_by_partition, matches=matches
    )
    html, markdown = rep.render_report(assembled.content(), title=title, provenance=provenance, quality=quality)
    return html, markdown, assembled.all_figures()
