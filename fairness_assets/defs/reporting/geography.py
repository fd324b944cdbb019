"""Geographic statistics (issue 15; docs/statistics.md): regions, one-vs-rest contrasts,
intersections, home bias and the behaviour-vs-needs decomposition of class gaps, per partition.

A short recipe over ``core.statistics.geostats``: the run's scored items and per-response scores in, one
long table out (``geography_row``), its headline findings on the asset's page.
"""

import dagster as dg
import pandas as pd

from fairness_assets.core.common import result_tables
from fairness_assets.core.common import tables as tables_core
from fairness_assets.core.common.partition import PartitionKey, by_partition
from fairness_assets.core.reference import regions as regions_core
from fairness_assets.core.reporting.sentences import geography as geography_sentences
from fairness_assets.core.statistics import geostats
from resources.database import ResultsDatabase
from resources.settings import ReferenceDataResource, ReportResource, ScoringResource, stable_hash

from ..decorators import partitioned_asset
from ..isolation import PartitionGuard
from ..metadata import table_md
from ..services import home_iso3, inference_of, scoring_params

# what is stored per partition (core/common/result_tables.py; geo_responses, one row per response, is derived
# again when needed)
STORED = tuple(result_tables.names("audit_geography"))


def responses_with_partitions(analysis_tables: pd.DataFrame) -> pd.DataFrame:
    """The ``drs_responses`` table of every partition in ``analysis_tables``, with model and template."""
    frames = [
        tables_core.from_long(long)["drs_responses"].assign(
            model=key.model, template=key.template, partition_key=str(key)
        )
        for key, long in by_partition(analysis_tables)
    ]
    return pd.concat(frames, ignore_index=True) if frames else pd.DataFrame()


def _rows_of(table: pd.DataFrame, key: PartitionKey, name: str) -> pd.DataFrame:
    """The rows of ``table`` that belong to partition ``key``: its model and template, or, for
    the base -> regional change (one model, two templates), the partition of the other template."""
    if table is None or table.empty:
        return pd.DataFrame(columns=list(table.columns) if table is not None else [])
    mask = pd.Series(True, index=table.index)
    if "model" in table:
        mask &= table["model"].astype(str) == key.model
    if "template" in table and name != "home_bias_change":
        mask &= table["template"].astype(str) == key.template
    elif name == "home_bias_change":
        mask &= key.template == "regional"
    return table[mask]


@partitioned_asset(
    group_name="reporting",
    description="Geographic statistics (docs/statistics.md): DRS/Acc/Rep/Acad and own-country / own-region shares by "
    "region and North/South; one-vs-rest contrasts (each region, Global South vs North, each home country) paired "
    "within the strata of the design's other axes with the runs as replicates, corrected within each family; "
    "interactions of the lambda axis's gap by each other axis and region; home bias per home country and its "
    "base -> regional change; every class gap split into "
    "behaviour (what the model recommended) and needs (the metric's lambda); every contrast and interaction with "
    "component rows total / behaviour / needs (the group's lists against the rest's lists scored for the group's "
    "students).",
)
def audit_geography(
    context: dg.AssetExecutionContext,
    drs_scores: pd.DataFrame,
    analysis_tables: pd.DataFrame,
    reference: ReferenceDataResource,
    scoring: ScoringResource,
    report_settings: ReportResource,
    database: ResultsDatabase,
) -> dg.Output[pd.DataFrame]:
    if analysis_tables.empty:
        raise dg.Failure(f"no scores stored for {context.partition_keys}: materialize the scores first")
    if drs_scores.empty:  # e.g. every answer a refusal: nothing recommended, nothing located
        context.log.warning(f"{context.partition_keys}: no recommended item was scored: no geographic statistics")
        empty = database.stamp(
            pd.DataFrame(
                columns=[
                    "partition_key",
                    "audit_id",
                    "table_name",
                    "row_index",
                    "column_index",
                    "column",
                    "value",
                    "value_text",
                    "params_hash",
                ]
            ),
            "audit_geography",
            config_json={"regions": regions_core.source_line()},
        )
        return dg.Output(
            empty,
            metadata={
                "dagster/row_count": 0,
                "significant_geographic_findings": 0,
                "summary": "no recommended item was scored: nothing to analyse",
            },
        )
    guard = PartitionGuard(context, database, "audit_geography")
    drs_scores, analysis_tables = guard.usable_rows(drs_scores), guard.usable_rows(analysis_tables)
    responses = responses_with_partitions(analysis_tables)
    students = home_iso3(responses, reference)
    settings = report_settings.as_dict()
    inference = inference_of(report_settings)

    def statistics(scores: pd.DataFrame, answers: pd.DataFrame) -> dict:
        return geostats.geo_statistics(
            geostats.Positions(
                scores, scoring_params(reference, scoring), student_iso3={k: v for k, v in students.items() if v}
            ),
            answers,
            inference=inference,
            log=context.log.info,
        )

    try:
        tables = statistics(drs_scores, responses)
    except Exception as exc:  # noqa: BLE001 - find the partition(s) that fail; the others are computed
        context.log.warning(
            f"geographic statistics failed ({type(exc).__name__}: {exc}); computing them one "
            "partition at a time to find the partition that fails"
        )
        for key, _ in guard.partitions(drs_scores):
            with guard.attempt(key):
                statistics(
                    drs_scores[drs_scores["partition_key"] == str(key)],
                    responses[responses["partition_key"] == str(key)],
                )
        if not guard.outcomes:
            raise
        drs_scores, responses = guard.usable_rows(drs_scores), guard.usable_rows(responses)
        guard.finish()  # fails the step when no partition is left
        tables = statistics(drs_scores, responses)
    left_out = guard.finish()
    frames = []
    for key, part in by_partition(drs_scores):
        audit = str(part["audit_id"].iloc[0])
        mine = {name: _rows_of(tables.get(name), key, name) for name in STORED}
        frames.append(
            tables_core.to_long(mine, packed=result_tables.packed("audit_geography")).assign(
                partition_key=str(key), audit_id=audit
            )
        )  # one stored row per table row
    table = database.stamp(
        pd.concat(frames, ignore_index=True).assign(params_hash=stable_hash(settings)),
        "audit_geography",
        config_json={**settings, "regions": regions_core.source_line()},
    )
    contrasts = tables["geo_contrasts"]
    significant = contrasts[contrasts["significant"]] if len(contrasts) else contrasts
    if len(significant) and "component" in significant:  # behaviour first, then the outcomes; needs last
        order = {"behaviour": 0, "total": 1, "needs": 2}
        significant = (
            significant.assign(_o=significant["component"].map(order))
            .sort_values("_o", kind="stable")
            .drop(columns="_o")
        )
    behaviour = (
        significant[significant["component"] == "behaviour"]
        if len(significant) and "component" in significant
        else significant.iloc[0:0]
    )
    sentences = geography_sentences.summary_sentences(tables)
    for line in sentences[:5]:
        context.log.info(line)
    return dg.Output(
        table,
        metadata={
            "dagster/row_count": len(table),
            **left_out,
            "significant_geographic_findings": len(significant),
            "significant_behaviour_findings": len(behaviour),
            "summary": dg.MetadataValue.md("\n".join(f"- {s}" for s in sentences) or "nothing to report"),
            "families": table_md(tables["families"]) if len(tables["families"]) else "none",
            "region_metrics": table_md(tables["region_metrics"].head(40)) if len(tables["region_metrics"]) else "none",
            "significant_contrasts": table_md(
                significant[
                    [
                        c
                        for c in (
                            "model",
                            "template",
                            "analysis",
                            "value",
                            "metric",
                            "component",
                            "mean_diff",
                            "ci_low",
                            "ci_high",
                            "p_adjusted",
                            "family_size",
                        )
                        if c in significant.columns
                    ]
                ].head(40)
            )
            if len(significant)
            else "none: no geographic contrast, behaviour or outcome, is significant after correction",
            "class_gap_decomposition": table_md(tables["class_gap_decomposition"].head(40))
            if len(tables["class_gap_decomposition"])
            else "none",
            "regions": regions_core.source_line(),
        },
    )


def stored_geography(database: ResultsDatabase) -> dict[str, pd.DataFrame]:
    """The geography tables of every stored partition, concatenated (for the report)."""
    from resources import database as D

    out: dict[str, list[pd.DataFrame]] = {}
    for _key, stored in sorted(database.read_tables(D.GeographyRow).items()):
        for name, df in stored.items():
            if len(df):
                out.setdefault(name, []).append(df)
    tables = {name: pd.concat(frames, ignore_index=True) for name, frames in out.items()}
    for df in tables.values():
        if "significant" in df:
            df["significant"] = df["significant"].astype(str) == "True"
    return tables
