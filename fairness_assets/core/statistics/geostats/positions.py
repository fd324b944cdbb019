"""What the *needs* part of the geographic tables is scored from (:class:`Positions`): the recommended
items, the scoring parameters and the students' positions (home country, region, capital distances)
every list is rescored for, and how the missing parts are filled in (:meth:`Positions.resolved`)."""

from __future__ import annotations

import dataclasses
from typing import Mapping, Optional

import pandas as pd

from ...reference import axes
from ...reference import regions as rg
from ...scoring import metrics as mx
from .cross import _distances_for


@dataclasses.dataclass(frozen=True, eq=False)
class Positions:
    """The items and the student positions the behaviour / needs split is scored from (issue 20).

    The *behaviour* part of a contrast or a class gap rescores lists for other students (their
    home country, region and lambda); the *needs* part is the rest. Everything that rescoring
    reads is here:

    - ``items``: the ``drs_items`` table (``response_id``, ``iso3``, ``distance_km``,
      ``economic_class``, the profile attributes and ``run``, the item's ``rep`` / ``acad``). An
      empty table gives no behaviour / needs rows (the totals only).
    - ``params``: the scoring parameters (:class:`core.scoring.metrics.ScoringParams`: each class's
      lambda, the DRS weights).
    - ``distances``: the square capital-distance table (ISO3 index and columns). None: computed for
      the countries of the items and of the students, the items' own ``distance_km`` first, the
      others from the capitals (``cross._distances_for``).
    - ``student_iso3``: value of the design's home axis (the study's nationality) -> ISO3 of the
      student's home country. None: each value's first ``student_iso3`` in the responses' geography
      (:func:`frames.response_geography`, which then resolves the nationalities with the region
      table's own names); empty for a design without a home axis.
    - ``table``: the region table (``core.reference.regions``: ``iso3``, ``region``,
      ``north_south``). None: :func:`core.reference.regions.load_regions`.

    Frozen, compared by identity (the fields are frames). Taken by
    :func:`run.geo_statistics` (which also reads the responses' and items' geography from it),
    :func:`contrasts.geo_contrasts` and :func:`class_gaps.class_gap_interactions`; without it those
    two give the totals only.
    """

    items: pd.DataFrame
    params: mx.ScoringParams
    distances: Optional[pd.DataFrame] = None
    student_iso3: Optional[Mapping[str, str]] = None
    table: Optional[pd.DataFrame] = None

    def regions(self) -> pd.DataFrame:
        """The region table: ``table``, or the shipped one when it is None."""
        return rg.load_regions() if self.table is None else self.table

    def resolved(self, geo_responses: pd.DataFrame) -> Positions:
        """These positions with every optional part filled in, in this order: ``student_iso3`` (a
        copy, or read from ``geo_responses``: :func:`frames.response_geography`'s output),
        ``table`` (:meth:`regions`), ``distances`` (computed for the items and those students when
        None)."""
        home = axes.home()
        if self.student_iso3 is not None:
            iso = dict(self.student_iso3)
        elif home is None or home not in geo_responses.columns:
            iso = {}  # no home axis: no student has a home country
        else:
            iso = geo_responses.dropna(subset=["student_iso3"]).groupby(home)["student_iso3"].first().to_dict()
        table = self.regions()
        dist = _distances_for(self.items, iso) if self.distances is None else self.distances
        return dataclasses.replace(self, distances=dist, student_iso3=iso, table=table)
