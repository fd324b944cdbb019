"""The result tables of an audit, each declared once: its name, the asset that stores it, its title
and the name of its exported file.

A table's **name** is what core calls it (``metrics.score_partition``'s ``drs_summary``,
``stats``'s ``run_variability``, ``geostats``'s ``region_metrics``, ...); the **asset** stores it
(most in a long table of one row per cell or, ``packed``, one row per table row: core/tables.py);
its **columns** are those of the asset's SQL table (resources/database.py reads them from its
SQLModel class, the UI shows them as the asset's column schema); its **title** heads it in the
report (``{...}`` fields are filled there: the correction, the unit) and lists it on the asset's
page; ``export`` is the stem of its CSV file in ``fairness-audit score --out``.

Everyone reads this catalogue: the scoring and reporting assets (which tables they store, which
packed), the IO manager (what each asset's page lists), the export (which files, in this order) and
the report (titles). Adding a table is one entry here (and, for a new asset, its SQL table).
Pure data: no Dagster, no database.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class ResultTable:
    name: str
    asset: str
    title: str
    export: str = ""  # empty: the name
    packed: bool = False  # stored one row per table row (core.tables packed format), not one per cell

    @property
    def file(self) -> str:
        """The stem of its exported CSV file."""
        return self.export or self.name

    def heading(self, **fields: Any) -> str:
        """Its title with its ``{...}`` fields filled."""
        return self.title.format(**fields) if fields else self.title


# the assets whose tables are stored once for every partition (partition key ""): the comparisons
CROSS_PARTITION_ASSETS = ("base_vs_regional", "model_comparison", "sensitivity")

T = ResultTable
# in the order they are exported: per partition first (model, template in front), then across partitions
TABLES: tuple[ResultTable, ...] = (
    # ---- one row per item or country, each in its own SQL table
    T(
        "recommendations",
        "recommendations",
        "Recommendations: one row per item of an answer, parsed and matched to the corpus",
    ),
    T(
        "drs_items",
        "drs_scores",
        "DRS items: distance, lambda, Acc, Rep, Acad and DRS of each recommended item "
        "(METHOD.md §5), with its recommendation",
    ),
    T("grs_by_country", "grs_by_country", "GRS of the countries recommended"),
    # ---- the analysis tables of METHOD.md §8 (metrics.score_partition), one stored row per cell
    T("drs_responses", "analysis_tables", "DRS, Acc, Rep, Acad per response"),
    T("drs_summary", "analysis_tables", "DRS, Acc, Rep, Acad overall and by group"),
    T("academic_alignment", "analysis_tables", "Academic alignment by group"),
    T("volume_diversity", "analysis_tables", "Volume and diversity"),
    T("concentration", "analysis_tables", "US+UK share and country coverage"),
    T("reduced_context_top", "analysis_tables", "reduced context, top items per attribute value"),
    # ---- the statistics (docs/statistics.md): run variability, counterfactual pairs, behaviour / needs, envy
    T("run_variability", "audit_statistics", "run-to-run variability"),
    T(
        "counterfactual_disparity",
        "audit_statistics",
        "counterfactual disparity (paired; {correction} correction)",
        packed=True,
    ),
    T(
        "behaviour_needs",
        "audit_statistics",
        "behaviour and needs of the counterfactual contrasts (component total "
        "/ behaviour / needs; {correction} within each attribute x component)",
        packed=True,
    ),
    T(
        "envy",
        "audit_statistics",
        "envy, the share of a group's students whose score would be higher with the lists "
        "the other group received (95% bootstrap interval over strata)",
        packed=True,
    ),
    # ---- the geographic statistics (core.geostats)
    T(
        "region_metrics",
        "audit_geography",
        "Metrics by student region and North/South: mean [95% bootstrap interval over {unit}s]",
        "geography_region_metrics",
        packed=True,
    ),
    T(
        "geo_contrasts",
        "audit_geography",
        "Geographic contrasts, one vs the rest (paired within strata; "
        "{correction}-adjusted p within each family): significant first, then the {shown} closest to significance "
        "per family",
        "geography_geo_contrasts",
        packed=True,
    ),
    T(
        "class_gap_interactions",
        "audit_geography",
        "Class gap (low - high) interactions: does the gap differ by gender or region?",
        "geography_class_gap_interactions",
        packed=True,
    ),
    T(
        "home_bias",
        "audit_geography",
        "Home bias per nationality: share of located recommendations in the "
        "student's own country, own region, abroad; mean distance (km)",
        "geography_home_bias",
        packed=True,
    ),
    T(
        "home_bias_change",
        "audit_geography",
        "Home bias from the base to the {other} template, per nationality (change = {other} - base)",
        "geography_home_bias_change",
        packed=True,
    ),
    T(
        "class_gap_decomposition",
        "audit_geography",
        "Class gaps split into behaviour (what the model recommended) and needs (the metric's income weighting)",
        "geography_class_gap_decomposition",
        packed=True,
    ),
    T(
        "families",
        "audit_geography",
        "Families of tests: size, smallest attainable p and the Holm threshold (alpha / size)",
        "geography_families",
        packed=True,
    ),
    # ---- across partitions (partition key ""): base vs regional, the model comparison, the sensitivity
    T("drs_change", "base_vs_regional", "Base vs regional: drs change (%)", "base_vs_regional_drs_change"),
    T("grs_change", "base_vs_regional", "Base vs regional: grs change (%)", "base_vs_regional_grs_change"),
    T(
        "component_change",
        "base_vs_regional",
        "Base vs regional: did the regional template move what the model "
        "did? Behaviour / outcome (total) / needs parts tested and moved, per model (Welch test of regional - base, "
        "Holm within each analysis x component)",
        "base_vs_regional_component_change",
        packed=True,
    ),
    T(
        "differences",
        "model_comparison",
        "Differences B - A, paired by profile and run (significant first)",
        "model_comparison_differences",
        packed=True,
    ),
    T(
        "leaderboard",
        "model_comparison",
        "Leaderboard: mean [95% interval] and the rank the paired tests support "
        "(a range where they cannot tell the models apart)",
        "model_comparison_leaderboard",
        packed=True,
    ),
    T(
        "gate",
        "model_comparison",
        "Release gate: each line, candidate - baseline",
        "model_comparison_gate",
        packed=True,
    ),
    T("verdicts", "sensitivity", "Findings, robust or fragile (fragile first)", "sensitivity_verdicts", packed=True),
    T(
        "comparison_by_setting",
        "sensitivity",
        "The model comparison's differences under each sensitivity setting",
        "sensitivity_comparison_by_setting",
        packed=True,
    ),
)
del T


def _check(tables: tuple[ResultTable, ...]) -> None:
    seen: set[tuple[str, str]] = set()
    files: set[str] = set()
    for t in tables:
        if (t.asset, t.name) in seen or t.file in files:
            raise ValueError(f"result table {t.asset}.{t.name} (file {t.file}) is declared twice")
        seen.add((t.asset, t.name))
        files.add(t.file)


_check(TABLES)


def of_asset(asset: str) -> tuple[ResultTable, ...]:
    """The tables ``asset`` stores, in order (empty for an asset that stores none of them)."""
    return tuple(t for t in TABLES if t.asset == asset)


def names(asset: str) -> list[str]:
    """The names of the tables ``asset`` stores, in order; ``KeyError`` for an asset that stores none."""
    out = [t.name for t in of_asset(asset)]
    if not out:
        raise KeyError(
            f"no result table is stored by asset {asset!r} (core/result_tables.py: "
            f"{', '.join(sorted({t.asset for t in TABLES}))})"
        )
    return out


def packed(asset: str) -> tuple[str, ...]:
    """The tables of ``asset`` stored one row per table row (core.tables ``packed``)."""
    return tuple(t.name for t in of_asset(asset) if t.packed)


def table(asset: str, name: str) -> ResultTable:
    """The entry of table ``name`` of ``asset``; ``KeyError`` naming the asset's tables otherwise."""
    for t in of_asset(asset):
        if t.name == name:
            return t
    raise KeyError(f"asset {asset!r} stores no table {name!r} (it stores: {', '.join(names(asset))})")


def title(asset: str, name: str, **fields: Any) -> str:
    """The report's title of table ``name`` of ``asset``, ``{...}`` fields filled."""
    return table(asset, name).heading(**fields)


def exported(cross_partition: bool = False) -> list[ResultTable]:
    """The exported tables stored per partition (``cross_partition``: those stored across partitions), in order."""
    return [t for t in TABLES if (t.asset in CROSS_PARTITION_ASSETS) == cross_partition]
