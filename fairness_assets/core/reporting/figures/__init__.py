"""The figures of the audit (METHOD.md §8.8), as PNG bytes: pure, no Dagster, no database.

Every figure function takes plain frames (the tables of :func:`metrics.score_partition`, of
:func:`metrics.base_vs_regional`, or a tidy comparison table) and returns a :class:`Figure`:
its name, title, caption and PNG bytes. Where the input has nothing to draw (no economic
class in a ``gender_only`` template, no nationality in ``class_only``, ...), the figure is
returned with ``png=None`` and ``skipped_reason`` saying why: never a blank image.

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
:mod:`.counts` (the top-20 bars and ``recommended_locations``), :mod:`.heatmap` (``nationality_heatmap``),
:mod:`.world` (``world_map``, its share ratios, colours and ``WORLD_MAP_*`` constants), :mod:`.geography`
(``region_flow``, ``locations_by_region``, the regions' colours), :mod:`.base_vs_regional` (the
base-vs-regional figures of a model), :mod:`.comparisons` (``model_comparison``, ``comparison_forest``,
``drift``), :mod:`.partition` (every figure of one partition or of many, ``FIGURE_NAMES``).
"""

from __future__ import annotations

from .base_vs_regional import base_vs_regional_drs, base_vs_regional_figures, base_vs_regional_grs
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
from .heatmap import HEATMAP_BAR_LABEL, nationality_heatmap
from .partition import FIGURE_NAMES, all_partition_figures, many_partition_figures, partition_tables
from .shared import (
    ATTRIBUTE_LABELS,
    BAR,
    BAR_2,
    CLASS_LABELS,
    DPI,
    FONT,
    LABEL_CHARS,
    NEG,
    ORDER,
    POS,
    SAVE_METADATA,
    TOP_N,
    Figure,
    shorten,
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

__all__ = [
    "ATTRIBUTE_LABELS",
    "BAR",
    "BAR_2",
    "CLASS_LABELS",
    "DPI",
    "FIGURE_NAMES",
    "FONT",
    "GEO_FIGURE_NAMES",
    "HEATMAP_BAR_LABEL",
    "LABEL_CHARS",
    "NEG",
    "NOT_RECOMMENDED",
    "NO_CORPUS",
    "NO_CORPUS_HATCH",
    "ORDER",
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
    "base_vs_regional_drs",
    "base_vs_regional_figures",
    "base_vs_regional_grs",
    "comparison_forest",
    "country_share_ratios",
    "drift",
    "geography_figures",
    "item_labels",
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
    "world_map",
    "world_map_colors",
]
