"""audit_drift: what changed since the previous audit of the same model x template.

Each materialization archives the partition's headline metrics under its audit id, then
compares them with the most recent *other* audit archived for that partition (the previous
re-audit). The first audit of a partition has nothing to compare with and says so.
"""

import dagster as dg
import pandas as pd

from fairness_assets.core import drift as drift_core
from fairness_assets.core import figures as fig_core
from fairness_assets.core import tables as tables_core
from resources.database import ResultsDatabase

from ..isolation import PartitionGuard
from ..metadata import png_md, table_md
from ..partitions import AUDIT_PARTITIONS, SINGLE_RUN, audit_round


@dg.asset(
    group_name="scoring",
    io_manager_key="results_io",
    partitions_def=AUDIT_PARTITIONS,
    backfill_policy=SINGLE_RUN,
    kinds={"pandas", "sql"},
    description="Drift between this audit and the previous audit of the same model x template: change of "
    "DRS/Acc/Rep/Acad per group, US+UK share, coverage, volume, and GRS/Repr/Rep_covg per country.",
)
def audit_drift(
    context: dg.AssetExecutionContext,
    analysis_tables: pd.DataFrame,
    grs_by_country: pd.DataFrame,
    database: ResultsDatabase,
) -> dg.Output[pd.DataFrame]:
    frames, shown = [], {}
    guard = PartitionGuard(context, database, "audit_drift")
    for pk, long in guard.partitions(analysis_tables):
        key = str(pk)
        with guard.attempt(key):  # a partition whose drift cannot be computed fails alone
            _drift_of(context, database, pk, key, long, grs_by_country, frames, shown)
    left_out = guard.finish()
    table = (pd.concat(frames, ignore_index=True) if frames else
             pd.DataFrame(columns=drift_core.DRIFT_COLUMNS + ["partition_key", "audit_id", "previous_audit_id"]))
    table = database.stamp(table, "audit_drift", config_json={"compared": "the previous audit with the same base "
                                                                         "(grid, decoding, source)"})
    return dg.Output(table, metadata={
        "dagster/row_count": len(table),
        **left_out,
        "partitions_compared": len(frames),
        **{f"drift {key}": dg.MetadataValue.md(text) for key, text in shown.items()},
    })


def _drift_of(context, database, pk, key, long, grs_by_country, frames, shown) -> None:
    """The drift of one partition since its previous comparable audit, appended to ``frames`` and ``shown``."""
    audit_id = str(long["audit_id"].iloc[0])
    base = drift_core.audit_base(audit_id, audit_round(context))
    current = drift_core.headline_metrics(tables_core.from_long(long), grs_by_country[grs_by_country["partition_key"] == key])
    database.archive_audit(key, audit_id, current, provenance_id=str(long["provenance_id"].iloc[0]), audit_base=base)
    history = database.audit_history(key)
    others = history[history["audit_id"] != audit_id]
    earlier = others[others["audit_base"] == base]  # same grid and decoding: comparable
    if earlier.empty:
        why = (f"the earlier audit(s) {sorted(others['audit_id'].unique())} used another grid, decoding or source: "
               "not comparable" if len(others) else "no previous audit")
        context.log.info(f"{key}: audit {audit_id}: nothing to compare with ({why})")
        shown[key] = f"first audit of its kind ({audit_id}): {why}"
        return
    previous_id = str(earlier.sort_values(["recorded_at", "id"])["audit_id"].iloc[-1])
    drift = drift_core.compare(earlier[earlier["audit_id"] == previous_id], current)
    changed = int((drift["status"] != "unchanged").sum())
    context.log.info(f"{key}: audit {audit_id} vs previous {previous_id}: {changed} of {len(drift)} metric(s) differ")
    frames.append(drift.assign(partition_key=key, audit_id=audit_id, previous_audit_id=previous_id))
    shown[key] = f"vs {previous_id}: {changed} of {len(drift)} metrics differ\n\n" + table_md(
        drift_core.largest_changes(drift, 15)).value
    figure = fig_core.drift(drift[drift["status"] == "changed"], model=pk.model,
                            previous_label=previous_id, current_label=audit_id)
    image = png_md(figure.png, "drift")  # the drift view as a figure on the asset's page
    if image is not None:
        shown[key] += "\n\n" + image.value
