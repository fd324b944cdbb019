"""One partition (model x template) as the report reads it: its full tables (:class:`PartitionResult`), what the
report keeps of it (:class:`PartitionDigest`, issue 19.5), and its run-to-run and counterfactual statistics.

``HEADLINE_METRICS``: the per-response metrics every comparison across partitions shows."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Mapping, Optional

import pandas as pd

from ...common import metric_catalogue as catalogue
from ...common import tables as tables_core
from ...common.partition import PartitionKey
from ...statistics import decompose, stats
from ...statistics.inference import DEFAULT_INFERENCE, InferenceParams
from .. import figures as fig
from .. import report as rep
from .. import scorecard as sc

HEADLINE_METRICS = catalogue.names("response")


@dataclass
class PartitionResult:
    """What one model x template produced (tables as ``metrics.score_partition`` names them)."""

    model: str
    template: str
    items: pd.DataFrame  # recommendations: one row per item (texts, match, country)
    tables: Mapping[str, pd.DataFrame]  # drs_responses, drs_summary, concentration, volume_diversity, ...
    grs: pd.DataFrame  # grs_by_country
    statistics: Mapping[str, pd.DataFrame] = field(default_factory=dict)  # partition_statistics()
    drift: Optional[pd.DataFrame] = None  # core.scoring.drift.compare() against the previous audit
    drift_labels: tuple[str, str] = ("previous", "current")

    @property
    def key(self) -> str:
        return str(PartitionKey(self.model, self.template))


def partition_statistics(
    drs_responses: pd.DataFrame,
    *,
    inference: InferenceParams = DEFAULT_INFERENCE,
    items: Optional[pd.DataFrame] = None,
    distances: Optional[pd.DataFrame] = None,
    student_iso3: Optional[Mapping[str, str]] = None,
    params: Any = None,
) -> dict[str, pd.DataFrame]:
    """Run-to-run variability and paired counterfactual disparity of one partition's responses.

    Given the partition's scored ``items`` (the ``drs_items`` table), the square capital
    ``distances`` (ISO3), the students' ``student_iso3`` and the scoring ``params``, also the
    behaviour / needs split of every counterfactual pair (``behaviour_needs``, with a
    ``component`` column valued ``total`` / ``behaviour`` / ``needs``) and ``envy``
    (:func:`decompose.decompose`), every table with the same ``inference`` (resamples, permutations,
    level, seed, correction, alpha)."""
    out = {
        "run_variability": stats.run_variability(drs_responses, inference=inference),
        "counterfactual_disparity": stats.counterfactual_disparity(drs_responses, inference=inference),
    }
    if items is not None and distances is not None and params is not None and len(items):
        out.update(
            decompose.decompose(
                items,
                distances,
                dict(student_iso3 or {}),
                params,
                inference=inference,
            )
        )
    return out


def statistics_job(job: Mapping[str, Any]) -> tuple[dict[str, pd.DataFrame], pd.DataFrame]:
    """One partition's :func:`partition_statistics`, as a job of core/reference/workers.py: from ``job``'s
    ``long`` (the partition's analysis tables in core.common.tables long form), ``items``, ``distances``,
    ``student_iso3``, ``params`` and ``inference``; returns the tables and those of ``job["stored"]`` in long
    form, ``job["packed"]`` packed (what the step stores)."""
    responses = tables_core.from_long(job["long"])["drs_responses"]
    t = partition_statistics(
        responses,
        inference=job["inference"],
        items=job["items"],
        distances=job["distances"],
        student_iso3=job["student_iso3"],
        params=job["params"],
    )
    stored = {name: t[name] for name in job["stored"] if name in t}
    return t, tables_core.to_long(stored, packed=job["packed"])


@dataclass
class PartitionDigest:
    """What the report shows of one partition, computed from its full tables by :func:`digest`:
    its summary sentences, its tables cut to the rows the report shows (each remembering how many
    rows it had, ``attrs["total_rows"]``), its behaviour and envy tables, its figures, and a light
    :class:`PartitionResult` holding only the headline rows the comparison across partitions needs.
    A caller that digests each partition as it reads it holds, for the whole report, what the
    report shows, not every partition's statistics (issue 19.5: memory bounded by design)."""

    part: PartitionResult
    behaviour_lines: list[str]
    outcome_lines: list[str]
    tables: dict[str, pd.DataFrame]
    behaviour_tables: dict[str, pd.DataFrame]
    figures: list[fig.Figure]
    significant: int
    audit_ids: list[str]
    scorecard_row: pd.DataFrame = field(default_factory=lambda: pd.DataFrame(columns=list(sc.ROW_COLUMNS)))
    scorecard_findings: pd.DataFrame = field(default_factory=lambda: pd.DataFrame(columns=list(sc.FINDING_COLUMNS)))

    @property
    def key(self) -> str:
        return self.part.key

    @property
    def model(self) -> str:
        return self.part.model

    @property
    def template(self) -> str:
        return self.part.template


def cut_rows(df: Optional[pd.DataFrame], max_rows: int = rep.MAX_ROWS) -> Optional[pd.DataFrame]:
    """The first ``max_rows`` rows of a report table, remembering how many rows it had (the
    report says "Showing the first 200 of 16,000 rows" from ``attrs["total_rows"]``)."""
    if df is None or len(df) <= max_rows:
        return df
    out = df.head(max_rows).copy()
    out.attrs["total_rows"] = int(df.attrs.get("total_rows", len(df)))
    return out


def _light(p: Any) -> PartitionResult:
    """A partition's headline rows only: what :func:`comparison_table` and the comparison
    figures read (the overall, per-run variability rows, the overall DRS row, the concentration)."""
    if isinstance(p, PartitionDigest):
        return p.part
    var = p.statistics.get("run_variability")
    stats_light = {}
    if var is not None and len(var):
        stats_light["run_variability"] = var[(var["group_by"] == "overall") & (var["unit"] == "run")]
    summary = p.tables.get("drs_summary")
    tables = {
        k: v
        for k, v in (
            (
                "drs_summary",
                summary[summary["group_by"] == "overall"]
                if summary is not None and len(summary) and "group_by" in summary
                else summary,
            ),
            ("concentration", p.tables.get("concentration")),
        )
        if v is not None
    }
    keep = [c for c in ("partition_key", "audit_id") if c in p.items.columns]
    items = p.items[keep].drop_duplicates() if keep else p.items.iloc[0:0, 0:0]
    return PartitionResult(p.model, p.template, items, tables, p.grs.iloc[0:0], stats_light)
