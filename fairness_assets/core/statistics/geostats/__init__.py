"""Statistics that can see the geographic bias (issue 15; docs/statistics.md §7-11).

Pure functions over pandas frames returning tidy frames (pandas and numpy only, plus the
region table of ``core.reference.regions``):

- :func:`response_geography` adds, per response, the student's region and the share of its
  recommendations located in the student's own country / region and their mean distance.
- :func:`region_metrics` DRS/Acc/Rep/Acad and the own-country / own-region shares by region
  and by North/South, with run intervals (``stats.run_variability``).
- :func:`group_contrasts` / :func:`geo_contrasts` one-vs-rest contrasts (each region vs the
  rest, Global South vs North, each value of the home axis vs the rest: the study's nationalities),
  paired within the strata of the other axes (the study's gender x class) with the runs as
  replicates, bootstrap interval, sign-flip permutation test, Holm/BH within each family.
- :func:`class_gap_interactions` the gap of the lambda axis (its last value minus its first: the
  study's class gap, low - high) per value of each other axis but the home one (the study's
  gender) and per region, and whether it differs between them (interaction), with intervals and
  tests.
- :func:`home_bias` / :func:`home_bias_change` per value of the home axis (the study's
  nationality): own country, own region, abroad, mean distance, and the change from the base to
  the regional template.
- :func:`class_gap_decomposition` every class gap split into the part due to what the model
  recommended (both classes' items scored with the same lambda) and the part due to the
  metric's needs weighting (the rest), with intervals and tests.
- Behaviour and needs of the contrasts and interactions (issue 20): given the items, every
  one-vs-rest contrast and every class-gap interaction has rows ``component`` = ``total`` (the
  outcome, as before), ``behaviour`` (the group's students' own lists minus the rest's lists
  scored for the group's students: same gender x class x run, their home country, region and
  lambda) and ``needs`` (total - behaviour: the students' position). Rep, Acad (and a US+UK
  share) do not depend on the student: behaviour = total and needs is 0 by construction
  (``by_construction``, not tested). Each component has its interval and sign-flip test, Holm
  within each (analysis, component). The behaviour test of a contrast uses the matched
  difference (each group student's own list minus one of the rest's lists drawn at random in the
  cell), symmetric when the lists do not depend on the profile, which the mean over the rest is
  not when a list's share is a rare event (own country); its interval is that of the mean.
- :func:`family_summary` family sizes and the smallest attainable p per family.
- :func:`geo_statistics` all of it for a set of partitions.

What the behaviour / needs split is scored from (the items, the scoring parameters, the region
table, nationality -> ISO3 and the capital distances) is one argument, :class:`Positions`; one
family of one-vs-rest contrasts (the attribute, the values reported, the analysis) is a
:class:`OneVsRest` (:data:`GEO_CONTRASTS`: the three of :func:`geo_contrasts`).

Every function with an interval or a test takes the inference settings as one keyword,
``inference`` (:class:`core.statistics.inference.InferenceParams`: resamples, permutations, level,
seed, correction, alpha); ``replicates`` is :data:`Replicates` (``"runs"`` or ``"strata"``).

Modules:

- :mod:`.frames`: the geography of responses and items, home bias, the family summary, the constants
  and column lists.
- :mod:`.paired`: units, cells and the correction.
- :mod:`.cross`: lists scored for other students, the capital distances they need.
- :mod:`.positions`: :class:`Positions`, what the needs part is scored from, and how its missing
  parts are filled in.
- :mod:`.contrasts`: one-vs-rest (:class:`OneVsRest`, :func:`group_contrasts`, :func:`geo_contrasts`).
- :mod:`.class_gaps`: the class-gap interactions and the decomposition.
- :mod:`.run`: :func:`geo_statistics`.

The axes are the active design's (core/reference/axes.py), read at call time: its ``home`` axis
gives the student's country (a design without one has no geographic contrasts and no home bias), its
``lambda`` axis the class gap (a design without one has no class-gap tables); ``STRATA``,
``HOME_COLUMNS`` and ``GEO_CONTRASTS`` are read at access time (:func:`strata`, :func:`home_columns`,
:func:`geo_contrast_specs`).

The findings in plain language are in ``core.reporting.sentences.geography``.
"""

from __future__ import annotations

from .class_gaps import class_gap_decomposition, class_gap_interactions, interaction_factors, lambda_gap
from .contrasts import OneVsRest, geo_contrast_specs, geo_contrasts, group_contrasts
from .frames import (
    BY_CONSTRUCTION_NOTE,
    COMPONENTS,
    CONTRAST_COLUMNS,
    CROSS_METRICS,
    DECOMPOSITION_COLUMNS,
    GEO_METRICS,
    INTERACTION_COLUMNS,
    METRIC_LABELS,
    REPLICATES,
    STUDENT_INDEPENDENT,
    Replicates,
    family_summary,
    home_bias,
    home_bias_change,
    home_columns,
    item_geography,
    region_metrics,
    response_geography,
    strata,
)
from .positions import Positions
from .run import geo_statistics


def __getattr__(name: str):
    # the names read from the active design at access time
    if name == "STRATA":
        return strata()
    if name == "HOME_COLUMNS":
        return home_columns()
    if name == "GEO_CONTRASTS":
        return geo_contrast_specs()
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


__all__ = [
    "BY_CONSTRUCTION_NOTE",
    "COMPONENTS",
    "CONTRAST_COLUMNS",
    "CROSS_METRICS",
    "DECOMPOSITION_COLUMNS",
    "GEO_CONTRASTS",
    "GEO_METRICS",
    "HOME_COLUMNS",
    "INTERACTION_COLUMNS",
    "METRIC_LABELS",
    "OneVsRest",
    "Positions",
    "REPLICATES",
    "STRATA",
    "STUDENT_INDEPENDENT",
    "Replicates",
    "class_gap_decomposition",
    "class_gap_interactions",
    "family_summary",
    "geo_contrast_specs",
    "geo_contrasts",
    "geo_statistics",
    "group_contrasts",
    "home_bias",
    "home_bias_change",
    "home_columns",
    "interaction_factors",
    "item_geography",
    "lambda_gap",
    "region_metrics",
    "response_geography",
    "strata",
]
