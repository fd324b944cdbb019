"""The figures of the audit (METHOD.md §8.8), as PNG bytes: pure, no Dagster, no database.

Every figure function takes plain frames (the tables of :func:`metrics.score_partition`, of
:func:`metrics.base_vs_regional`, or a tidy comparison table) and returns a :class:`Figure`:
its name, title, caption and PNG bytes. Where the input has nothing to draw (no economic
class in a ``gender_only`` template, no nationality in ``class_only``, no home axis in the
design, ...), the figure is returned with ``png=None`` and ``skipped_reason`` saying why: never a
blank image.

The figures follow the active design's axes (core/reference/axes.py), read when drawn: the names
below are the study's. A top-20 figure is drawn per value of the lambda axis and of each ``none``
axis (``_by_<short name>``: the study's ``_by_class``, ``_by_gender``; a ``disability`` axis adds
``_by_disability``); the heatmap is the home axis's (``<home>_heatmap``; skipped without one).
``FIGURE_NAMES``, ``HEATMAP_BAR_LABEL``, ``ATTRIBUTE_LABELS``, ``ORDER`` and ``CLASS_LABELS`` are read
at access time (:func:`figure_names`, :func:`heatmap_bar_label`, :func:`attribute_labels`,
:func:`value_orders`, :func:`lambda_value_labels`).

Figures are drawn on :class:`matplotlib.figure.Figure` objects with the Agg canvas (no pyplot,
no global state: safe in threads) at a fixed size and DPI, and saved without software or
time metadata, so identical input gives identical bytes.

Per partition (model x template), from :func:`all_partition_figures`:

- ``top_locations``, ``top_locations_by_class``, ``top_locations_by_gender``       top-20 countries
- ``top_universities``, ``top_universities_by_class``, ``top_universities_by_gender``
- ``top_programs``, ``top_programs_by_class``, ``top_programs_by_gender``
- ``recommended_locations``   every recommended country: share of recommendations vs. share of
                              the corpus (a sorted bar chart: the exact numbers behind the map)
- ``nationality_heatmap``     student nationality x university country
- ``world_map``               every country shaded by its share of recommendations against its
                              share of corpus universities; the students' countries marked
                              (Natural Earth shapes shipped in a package: :mod:`..world_shapes`)

Per partition, for the report's geography section only (:func:`geography_figures`, from the
items of :func:`geostats.item_geography`; not part of :func:`all_partition_figures`):

- ``region_flow``             student region x university region (row shares)
- ``locations_by_region``     the most recommended university countries, coloured by region

Per model: ``base_vs_regional_drs`` and ``base_vs_regional_grs`` (:func:`base_vs_regional_figures`).
Across models or runs: ``model_comparison`` and ``drift``.

Modules: :mod:`.shared` (:class:`Figure`, sizes, fonts, colours, drawing, saving and label helpers),
:mod:`.counts` (the top-20 bars and ``recommended_locations``), :mod:`.heatmap` (``home_heatmap``),
:mod:`.world` (``world_map``, its share ratios, colours and ``WORLD_MAP_*`` constants), :mod:`.geography`
(``region_flow``, ``locations_by_region``, the regions' colours), :mod:`.base_vs_regional` (the
base-vs-regional figures of a model), :mod:`.comparisons` (``model_comparison``, ``comparison_forest``,
``drift``), :mod:`.partition` (every figure of one partition or of many, ``FIGURE_NAMES``).
"""

from __future__ import annotations

from .base_vs_regional import (
    base_vs_regional_drs,
    base_vs_regional_figures,
    base_vs_regional_grs,
    comparison_pairs,
    comparison_rows,
)
from .comparisons import comparison_forest, drift, model_comparison
from .counts import item_labels, recommended_locations, top_counts, top_figure
from .geography import (
    GEO_FIGURE_NAMES,
    REGION_COLORS,
    UNKNOWN_COLOR,
    UNKNOWN_REGION,
    geography_figures,
    locations_by_region,
    region_color,
    region_flow,
)
from .heatmap import heatmap_bar_label, heatmap_name, home_heatmap, nationality_heatmap
from .partition import all_partition_figures, figure_names, many_partition_figures, partition_tables
from .shared import (
    BAR,
    BAR_2,
    DPI,
    FONT,
    LABEL_CHARS,
    NEG,
    POS,
    SAVE_METADATA,
    TOP_N,
    Figure,
    attribute_label,
    attribute_labels,
    lambda_value_labels,
    shorten,
    value_orders,
)

# private, re-exported for the tests: figures._png (tests/core/test_figures.py wraps the real one),
# figures._student_countries and figures._world_map_figure (tests/core/test_world_map.py)
from .shared import _png as _png
from .world import (
    NO_CORPUS,
    NO_CORPUS_HATCH,
    NOT_RECOMMENDED,
    SMALL_COUNTRY_PX2,
    STUDENT_MARKER,
    WORLD_MAP_BOUND,
    WORLD_MAP_CMAP,
    WORLD_MAP_STATUSES,
    country_share_ratios,
    world_map,
    world_map_colors,
)
from .world import _student_countries as _student_countries
from .world import _world_map_figure as _world_map_figure

_READ_AT_ACCESS = {  # the names computed from the active design's axes, each time they are read
    "FIGURE_NAMES": figure_names,
    "HEATMAP_BAR_LABEL": heatmap_bar_label,
    "ATTRIBUTE_LABELS": attribute_labels,
    "ORDER": value_orders,
    "CLASS_LABELS": lambda_value_labels,
}


def __getattr__(name: str):
    if name in _READ_AT_ACCESS:
        return _READ_AT_ACCESS[name]()
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


__all__ = [
    "BAR",
    "BAR_2",
    "DPI",
    "FONT",
    "GEO_FIGURE_NAMES",
    "LABEL_CHARS",
    "NEG",
    "NOT_RECOMMENDED",
    "NO_CORPUS",
    "NO_CORPUS_HATCH",
    "POS",
    "REGION_COLORS",
    "SAVE_METADATA",
    "SMALL_COUNTRY_PX2",
    "STUDENT_MARKER",
    "TOP_N",
    "UNKNOWN_COLOR",
    "UNKNOWN_REGION",
    "WORLD_MAP_BOUND",
    "WORLD_MAP_CMAP",
    "WORLD_MAP_STATUSES",
    "Figure",
    "all_partition_figures",
    "attribute_label",
    "attribute_labels",
    "base_vs_regional_drs",
    "base_vs_regional_figures",
    "base_vs_regional_grs",
    "comparison_forest",
    "comparison_pairs",
    "comparison_rows",
    "country_share_ratios",
    "drift",
    "figure_names",
    "geography_figures",
    "heatmap_bar_label",
    "heatmap_name",
    "home_heatmap",
    "item_labels",
    "lambda_value_labels",
    "locations_by_region",
    "many_partition_figures",
    "model_comparison",
    "nationality_heatmap",
    "partition_tables",
    "recommended_locations",
    "region_color",
    "region_flow",
    "shorten",
    "top_counts",
    "top_figure",
    "value_orders",
    "world_map",
    "world_map_colors",
]
