"""One audit's report, assembled from its tables: statistics, comparisons, figures, text.

The Dagster assets (defs/reporting) and the command line (``fairness-audit score``) both call
these functions, so a report from either path is built the same way. Pure: no Dagster, no
database, no files (the callers write the returned text and PNG bytes).

Modules: :mod:`.partition` (one partition's tables and its digest), :mod:`.tables` (the "Tables"
section), :mod:`.drawing` (the figures), :mod:`.digest` (a partition digested, the scorecard),
:mod:`.behaviour`, :mod:`.geography` and :mod:`.sections` (the report's sections), :mod:`.build`
(the report assembled: :func:`build_report`, from the partitions and the :class:`AuditWideResults`),
:mod:`.pages` (the report as files: one self-contained file, or an index and one page per model:
:func:`build_report_files`).
"""

from __future__ import annotations

from ...statistics import stats  # noqa: F401 - audit_report.stats: defs/reporting reads disparity_display from it
from .behaviour import (
    BEHAVIOUR_COLUMNS,
    BEHAVIOUR_TITLE,
    ENVY_SHOWN,
    behaviour_intro,
    behaviour_section,
    behaviour_tables,
)
from .build import AssembledReport, AuditWideResults, assemble_report, build_report, component_change_summary
from .digest import digest, digest_job, scorecard, scorecard_inputs
from .drawing import comparison_figures, partition_figures, partition_figures_drift
from .geography import (
    GEOGRAPHY_TITLE,
    NON_SIGNIFICANT_SHOWN,
    geo_tables,
    geography_contrasts_shown,
    geography_intro,
    geography_section,
    geography_tables,
    has_geography,
    region_metrics_wide,
)
from .pages import (
    REPORT_LAYOUTS,
    SINGLE_FILE_MAX_PARTITIONS,
    ReportFiles,
    ReportLayout,
    build_report_files,
    layout_for,
    model_page_paths,
    report_files,
)
from .partition import (
    HEADLINE_METRICS,
    PartitionDigest,
    PartitionResult,
    cut_rows,
    partition_statistics,
    statistics_job,
)
from .sections import (
    COMPARISON_TITLE,
    MATCHES_TITLE,
    SENSITIVITY_TITLE,
    comparison_section,
    matches_section,
    sensitivity_section,
)
from .tables import (
    COMPONENT_CHANGE_SHOWN,
    comparison_table,
    component_change_tables,
    headline_tables,
    partition_tables,
    report_tables,
)

__all__ = [
    "BEHAVIOUR_COLUMNS",
    "BEHAVIOUR_TITLE",
    "COMPARISON_TITLE",
    "COMPONENT_CHANGE_SHOWN",
    "ENVY_SHOWN",
    "GEOGRAPHY_TITLE",
    "HEADLINE_METRICS",
    "MATCHES_TITLE",
    "NON_SIGNIFICANT_SHOWN",
    "REPORT_LAYOUTS",
    "SINGLE_FILE_MAX_PARTITIONS",
    "SENSITIVITY_TITLE",
    "AssembledReport",
    "AuditWideResults",
    "PartitionDigest",
    "PartitionResult",
    "ReportFiles",
    "ReportLayout",
    "assemble_report",
    "behaviour_intro",
    "behaviour_section",
    "behaviour_tables",
    "build_report",
    "build_report_files",
    "comparison_figures",
    "comparison_section",
    "comparison_table",
    "component_change_summary",
    "component_change_tables",
    "cut_rows",
    "digest",
    "digest_job",
    "geo_tables",
    "geography_contrasts_shown",
    "geography_intro",
    "geography_section",
    "geography_tables",
    "has_geography",
    "headline_tables",
    "layout_for",
    "matches_section",
    "model_page_paths",
    "partition_figures",
    "partition_figures_drift",
    "partition_statistics",
    "statistics_job",
    "partition_tables",
    "region_metrics_wide",
    "report_files",
    "report_tables",
    "scorecard",
    "scorecard_inputs",
    "sensitivity_section",
]
