"""audit_drift: what changed since the previous audit of the same model x template.

Each materialization archives the partition's headline metrics under its audit id, with its group
contrasts split into behaviour and needs when this audit's statistics and geography are stored
(core.scoring.drift.contrast_metrics), then compares them with the most recent *other* audit archived for
that partition (the previous re-audit): the change of every metric, and of the behaviour part of
every contrast significant in either audit. The first audit of a partition has nothing to compare
with and says so.
"""

import dagster as dg
import pandas as pd

from fairness_assets.core.common import tables as tables_core
from fairness_assets.core.reporting import figures as fig_core
from fairness_assets.core.scoring import drift as drift_core
from resources.database import GeographyRow, ResultsDatabase, StatisticRow

from ..decorators import partitioned_asset
from ..isolation import PartitionGuard
from ..metadata import png_md, table_md
from ..partitions import audit_round


@partitioned_asset(
    group_name="scoring",
    deps=["audit_statistics", "audit_geography"],
    description="Drift between this audit and the previous audit of the same model x template: change of "
    "DRS/Acc/Rep/Acad per group, US+UK share, coverage, volume, and GRS/Repr/Rep_covg per country; and of every "
    "counterfactual pair of every axis and geographic one-vs-rest contrast per component (total / behaviour / "
    "needs, scopes contrast_*), with the behaviour part of each contrast significant in either audit, previous "
    "vs current.",
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
    table = (
        pd.concat(frames, ignore_index=True)
        if frames
        else pd.DataFrame(columns=drift_core.DRIFT_COLUMNS + ["partition_key", "audit_id", "previous_audit_id"])
    )
    table = database.stamp(
        table, "audit_drift", config_json={"compared": "the previous audit with the same base (grid, decoding, source)"}
    )
    return dg.Output(
        table,
        metadata={
            "dagster/row_count": len(table),
            **left_out,
            "partitions_compared": len(frames),
            **{f"drift {key}": dg.MetadataValue.md(text) for key, text in shown.items()},
        },
    )


def _drift_of(context, database, pk, key, long, grs_by_country, frames, shown) -> None:
    """The drift of one partition since its previous comparable audit, appended to ``frames`` and ``shown``."""
    audit_id = str(long["audit_id"].iloc[0])
    base = drift_core.audit_base(audit_id, audit_round(context))
    current = drift_core.headline_metrics(
        tables_core.from_long(long), grs_by_country[grs_by_country["partition_key"] == key]
    )
    contrasts = _contrasts_of(context, database, key, audit_id)
    if len(contrasts):
        current = pd.concat([current, contrasts], ignore_index=True)
    database.archive_audit(key, audit_id, current, provenance_id=str(long["provenance_id"].iloc[0]), audit_base=base)
    history = database.audit_history(key)
    others = history[history["audit_id"] != audit_id]
    earlier = others[others["audit_base"] == base]  # same grid and decoding: comparable
    if earlier.empty:
        why = (
            f"the earlier audit(s) {sorted(others['audit_id'].unique())} used another grid, decoding or source: "
            "not comparable"
            if len(others)
            else "no previous audit"
        )
        context.log.info(f"{key}: audit {audit_id}: nothing to compare with ({why})")
        shown[key] = f"first audit of its kind ({audit_id}): {why}"
        return
    previous_id = str(earlier.sort_values(["recorded_at", "id"])["audit_id"].iloc[-1])
    drift = drift_core.compare(earlier[earlier["audit_id"] == previous_id], current)
    changed = int((drift["status"] != "unchanged").sum())
    context.log.info(f"{key}: audit {audit_id} vs previous {previous_id}: {changed} of {len(drift)} metric(s) differ")
    frames.append(drift.assign(partition_key=key, audit_id=audit_id, previous_audit_id=previous_id))
    headline = drift[~drift_core.is_contrast(drift)]
    shown[key] = (
        f"vs {previous_id}: {changed} of {len(drift)} metrics differ\n\n"
        + table_md(drift_core.largest_changes(headline, 15)).value
    )
    components = drift_core.component_drift(drift)
    if len(components):
        shown[key] += (
            "\n\nBehaviour part (what the model did) of every contrast significant in either audit, "
            "previous vs current:\n\n" + table_md(components.head(20)).value
        )
    elif drift_core.is_contrast(drift).any():
        shown[key] += "\n\nNo contrast's behaviour part or outcome is significant in either audit."
    figure = fig_core.drift(
        headline[headline["status"] == "changed"], model=pk.model, previous_label=previous_id, current_label=audit_id
    )
    image = png_md(figure.png, "drift")  # the drift view as a figure on the asset's page
    if image is not None:
        shown[key] += "\n\n" + image.value


def _contrasts_of(context, database: ResultsDatabase, key: str, audit_id: str) -> pd.DataFrame:
    """This audit's group contrasts per component (core.scoring.drift.contrast_metrics) from the stored
    statistics (behaviour_needs) and geography (geo_contrasts) of partition ``key``; rows of
    another audit (statistics not rematerialized since) are not used, and the log says so."""
    tables = {}
    for model, name in ((StatisticRow, "behaviour_needs"), (GeographyRow, "geo_contrasts")):
        # the one table, typed (not the group's every table through the long form)
        stored = database.read_tables(model, [key], names=[name])
        if not stored:
            continue
        mine = [t for (_, audit), t in stored.items() if str(audit) == audit_id]
        if not mine:
            context.log.info(
                f"{key}: the stored {name} belongs to audit(s) {sorted(str(a) for _, a in stored)[:3]}, "
                f"not {audit_id}: its contrasts are not archived for drift"
            )
            continue
        table = mine[0].get(name)
        if table is not None:
            tables[name] = table
    return drift_core.contrast_metrics(tables.get("behaviour_needs"), tables.get("geo_contrasts"))
