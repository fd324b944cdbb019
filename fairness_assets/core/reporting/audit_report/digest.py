"""One partition digested (issue 19.5): its summary sentences, its tables cut to the rows shown, its figures and
scorecard inputs, computed from its full tables; and the scorecard over the partitions (issue 23.3)."""

from __future__ import annotations

from typing import Any, Mapping, Optional, Sequence

import pandas as pd

from ...statistics import geostats
from .. import figures as fig
from .. import report as rep
from .. import scorecard as sc
from .behaviour import behaviour_tables
from .drawing import partition_figures, partition_figures_drift
from .partition import PartitionDigest, PartitionResult, _light, cut_rows
from .tables import partition_tables


def digest(
    p: PartitionResult, figures: Optional[Sequence[fig.Figure]] = None, max_rows: int = rep.MAX_ROWS
) -> PartitionDigest:
    """Everything the report shows of partition ``p``, computed from its full tables (the summary
    sentences see every row; only the shown rows of each table are kept). ``figures``: the
    partition's §8.8 figures already drawn (``None``: drawn here from its items)."""
    dis = p.statistics.get("counterfactual_disparity")
    behaviour_lines = rep.behaviour_findings(p.statistics.get("behaviour_needs"), model=p.model, template=p.template)
    outcome_lines = rep.disparity_summary(
        rep.DisparityTables(
            p.tables.get("drs_summary", pd.DataFrame()),
            dis,
            p.grs,
            concentration=p.tables.get("concentration"),
            decomposition=p.statistics.get("behaviour_needs"),
        ),
        model=p.model,
        template=p.template,
        metrics=("drs", "acc", "rep"),
    )
    drawn = partition_figures(p) if figures is None else list(figures) + partition_figures_drift(p)
    audit_ids = sorted({str(a) for a in p.items["audit_id"].unique()}) if "audit_id" in p.items else []
    return PartitionDigest(
        part=_light(p),
        behaviour_lines=behaviour_lines,
        outcome_lines=outcome_lines,
        tables={k: cut_rows(v, max_rows) for k, v in partition_tables(p).items()},
        behaviour_tables={k: cut_rows(v, max_rows) for k, v in behaviour_tables(p).items()},
        figures=drawn,
        significant=int(dis["significant"].astype(bool).sum()) if dis is not None and len(dis) else 0,
        audit_ids=audit_ids,
        **scorecard_inputs(p),
    )


def digest_job(job: tuple) -> tuple[PartitionDigest, Optional[list[fig.Figure]]]:
    """One partition for the report, as a job of core/reference/workers.py: ``job`` is ``(p, figures,
    geo_items, with_geography)``; returns :func:`digest` of ``p`` and, with geography, the partition's
    region figures drawn from its scored items ``geo_items`` (None without geography)."""
    p, figures, geo_items, with_geography = job
    geo = None
    if with_geography:
        geo = fig.geography_figures(
            geostats.item_geography(geo_items) if geo_items is not None and len(geo_items) else None,
            p.model,
            p.template,
        )
    return digest(p, figures), geo


def scorecard_inputs(p: PartitionResult) -> dict[str, pd.DataFrame]:
    """What the scorecard needs of one partition, from its full tables: its row
    (:func:`scorecard.partition_row`) and its strongest behaviour findings of the counterfactual
    pairs (:func:`scorecard.behaviour_findings`)."""
    return {
        "scorecard_row": sc.partition_row(p.model, p.template, p.tables, p.statistics, p.grs),
        "scorecard_findings": sc.behaviour_findings(
            p.statistics.get("behaviour_needs"), model=p.model, template=p.template
        ),
    }


def scorecard(
    parts: Sequence[Any],
    *,
    geography: Optional[Mapping[str, pd.DataFrame]] = None,
    comparison: Optional[Mapping[str, pd.DataFrame]] = None,
) -> sc.Scorecard:
    """The scorecard (:mod:`core.reporting.scorecard`) of the partitions (each a :class:`PartitionDigest` or a
    :class:`PartitionResult`): one row per model x template, the strongest significant behaviour
    findings of the counterfactual pairs and of the geographic contrasts (``geography``:
    ``geo_contrasts`` of :func:`geostats.geo_statistics`), and the comparison and release gate of
    ``comparison`` (the ``model_comparison`` tables), where they exist."""
    inputs = [
        {"scorecard_row": p.scorecard_row, "scorecard_findings": p.scorecard_findings}
        if isinstance(p, PartitionDigest)
        else scorecard_inputs(p)
        for p in parts
    ]
    rows = [i["scorecard_row"] for i in inputs if len(i["scorecard_row"])]
    findings = [i["scorecard_findings"] for i in inputs if len(i["scorecard_findings"])]
    geo = (geography or {}).get("geo_contrasts")
    if isinstance(geo, pd.DataFrame) and len(geo):
        findings.append(sc.behaviour_findings(geo_contrasts=geo))
    return sc.build(
        pd.concat(rows, ignore_index=True) if rows else pd.DataFrame(columns=list(sc.ROW_COLUMNS)),
        pd.concat(findings, ignore_index=True) if findings else None,
        comparison,
    )
