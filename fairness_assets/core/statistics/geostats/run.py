"""Every geographic table for a set of partitions (:func:`geo_statistics`), the entry point of the
``audit_geography`` asset and the report."""

from __future__ import annotations

import dataclasses
from typing import Callable, Optional

import pandas as pd

from ..inference import DEFAULT_INFERENCE, InferenceParams
from ..stats import PARTITION_KEYS
from .class_gaps import class_gap_decomposition, class_gap_interactions, interaction_factors
from .contrasts import geo_contrasts
from .frames import (
    INTERACTION_COLUMNS,
    Replicates,
    family_summary,
    home_bias,
    home_bias_change,
    item_geography,
    region_metrics,
    response_geography,
)
from .positions import Positions


def geo_statistics(
    positions: Positions,
    responses: pd.DataFrame,
    *,
    inference: InferenceParams = DEFAULT_INFERENCE,
    replicates: Replicates = "runs",
    base: str = "base",
    other: str = "regional",
    log: Optional[Callable[[str], object]] = None,
) -> dict[str, pd.DataFrame]:
    """Every table of this module for the partitions in ``positions.items`` (``drs_items``) and
    ``responses`` (``drs_responses``): keys ``geo_responses``, ``region_metrics``,
    ``geo_contrasts``, ``class_gap_interactions``, ``home_bias``, ``home_bias_change``,
    ``class_gap_decomposition``, ``families``. ``positions`` (:class:`positions.Positions`): the
    items, the scoring parameters, and optionally the region table, nationality -> ISO3 and the
    capital distances (each filled in when None). The class-gap interactions split the gap of the
    design's lambda axis by each other axis but the home one, then by region
    (:func:`class_gaps.interaction_factors`: the study's gender and region); a design without a home
    axis has no geographic contrasts, home bias or region factor, one without a lambda axis no
    class-gap tables (each an empty table with its columns). ``log``: receives progress lines (done/total
    stages, ETA; at most one every 5 s, :class:`core.common.progress.Progress`). ``inference``
    (resamples, permutations, level, seed, correction, alpha) reaches every table."""
    from ...common.progress import Progress

    items, params, student_iso3 = positions.items, positions.params, positions.student_iso3
    n_parts = len(pd.unique(items["partition_key"])) if "partition_key" in items else 1
    factors = interaction_factors()
    progress = Progress("audit_geography", 3 + len(factors), log or (lambda _line: None), unit="stage")
    table = positions.regions()
    geo = response_geography(items, responses, table, student_iso3)
    resolved = dataclasses.replace(positions, table=table).resolved(geo)
    where = f"{n_parts} partition(s)"
    contrasts = geo_contrasts(geo, replicates=replicates, positions=resolved, inference=inference)
    progress.advance(detail=f"{where}: one-vs-rest and South/North contrasts")
    cache: dict = {}
    inter = []
    for f in factors:
        inter.append(
            class_gap_interactions(geo, f, replicates=replicates, positions=resolved, _cache=cache, inference=inference)
        )
        progress.advance(detail=f"{where}: class-gap interactions by {f}")
    if inter:
        inter = pd.concat(inter, ignore_index=True)
    else:  # no lambda axis: no class gap
        inter = pd.DataFrame(columns=[c for c in INTERACTION_COLUMNS if c in geo.columns or c not in PARTITION_KEYS])
    gi = item_geography(items, table, student_iso3)
    home = home_bias(gi)
    dec = class_gap_decomposition(items, responses, params, inference=inference)
    progress.advance(detail=f"{where}: home bias and the class-gap decomposition")
    regions = region_metrics(geo, inference=inference)
    progress.finish(detail=f"{where}: region metrics")
    return {
        "geo_responses": geo,
        "region_metrics": regions,
        "geo_contrasts": contrasts,
        "class_gap_interactions": inter,
        "home_bias": home,
        "home_bias_change": home_bias_change(home, base, other) if "template" in home else home.iloc[0:0],
        "class_gap_decomposition": dec,
        "families": family_summary(contrasts, inter, dec, inference=inference),
    }
