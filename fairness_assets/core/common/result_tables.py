"""The result tables of an audit, each declared once: its name, the asset that stores it, its title
and the name of its exported file.

A table's **name** is what core calls it (``metrics.score_partition``'s ``drs_summary``,
``stats``'s ``run_variability``, ``geostats``'s ``region_metrics``, ...); the **asset** stores it
(most in a long table of one row per cell or, ``packed``, one row per table row: core/common/tables.py);
its **columns** are those of the asset's SQL table (resources/database/metadata.py reads them from its
SQLModel class, the UI shows them as the asset's column schema); its **title** heads it in the
report (``{...}`` fields are filled there: the correction, the unit) and lists it on the asset's
page; ``export`` is the stem of its CSV file in ``fairness-audit score --out``; its **key** names
the columns that identify a row within one partition's audit (indexed in SQL).

Everyone reads this catalogue: the scoring and reporting assets (which tables they store, which
packed), the IO manager (what each asset's page lists), the export (which files, in this order) and
the report (titles). Adding a table is one entry here (and, for a new asset, its SQL table).
Pure data: no Dagster, no database.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

# ``j``: the students' axes of the design, one JSON object {axis: value or null} in one column; the table
# holds one column per axis in memory (resources/database/attributes.py packs and unpacks them)
KINDS = {"t": "text", "f": "float", "i": "int", "b": "bool", "j": "json", "h": "home"}
# "h": the value of the design's home axis (the student's country as the profile states it), stored under
# the column's own name (``home``) whatever the design calls the axis, and read back under the axis's name
# the tables stored in an asset's own SQLModel table (resources/database/schema.py), not from these declarations
OWN_TABLES = ("recommendations", "drs_items", "grs_by_country")


def parse_columns(spec: str) -> tuple[tuple[str, str], ...]:
    """``"model:t mean:f n_units:i significant:b"`` -> ``(("model", "text"), ("mean", "float"), ...)``:
    a table's columns in their order, each with its SQL type (text, float, int, bool; json: at most
    one column, ``attributes:j``, where the table's axis columns are stored)."""
    out = []
    for token in spec.split():
        name, _, kind = token.rpartition(":")
        if not name or kind not in KINDS:
            raise ValueError(f"column {token!r}: write it as name:kind, kind one of {', '.join(KINDS)}")
        out.append((name, KINDS[kind]))
    names = [n for n, _ in out]
    if len(set(names)) != len(names):
        raise ValueError(f"columns declared twice: {sorted({n for n in names if names.count(n) > 1})}")
    packed_axes = [n for n, kind in out if kind == "json"]
    if len(packed_axes) > 1:
        raise ValueError(f"columns {packed_axes} are all declared j: a table stores its axes in one column")
    homes = [n for n, kind in out if kind == "home"]
    if len(homes) > 1:
        raise ValueError(f"columns {homes} are all declared h: a design has one home axis")
    return tuple(out)


# what a title's field reads where its caller gives none: the home axis's label; the templates compared (the study's)
TITLE_DEFAULTS = {"home": "home country", "compared": "Base vs regional", "base": "base", "other": "regional"}


class _Keep(dict):
    """Fields for str.format_map: a field no one gave stays as written (``{correction}``)."""

    def __missing__(self, key: str) -> str:
        return "{" + key + "}"


@dataclass(frozen=True)
class ResultTable:
    name: str
    asset: str
    title: str
    export: str = ""  # empty: the name
    packed: bool = False  # handed over one row per table row (core.common.tables packed format), not one per cell
    spec: str = ""  # its columns and their types (parse_columns); empty for the OWN_TABLES
    # its natural key: the columns that name a row within one partition's audit (empty: one row per
    # partition and audit); indexed with (audit_id, partition_key) in its SQL table
    key: str = ""

    @property
    def file(self) -> str:
        """The stem of its exported CSV file."""
        return self.export or self.name

    @property
    def sql_name(self) -> str:
        """Its SQL table in the results database (resources/result_store.py): its exported file's stem."""
        return self.file

    @property
    def columns(self) -> tuple[tuple[str, str], ...]:
        """``(name, type)`` of each of its columns, in order (type: text, float, int, bool)."""
        return parse_columns(self.spec)

    @property
    def key_columns(self) -> tuple[str, ...]:
        """The columns of its natural key, in order (with audit_id and partition_key they name a row)."""
        return tuple(self.key.split())

    def heading(self, **fields: Any) -> str:
        """Its title with its ``{...}`` fields filled (``{home}``: the label of the design's home axis, which
        the caller gives; "home country" where it does not)."""
        if not fields and "{" not in self.title:
            return self.title
        filled = {**TITLE_DEFAULTS, **fields}
        return self.title.format_map(_Keep(filled))


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
    T(
        "drs_responses",
        "analysis_tables",
        "DRS, Acc, Rep, Acad per response",
        spec=(
            "response_id:t model:t template:t profile_id:t attributes:j run:i "
            "parse_status:t n_items:i acc:f rep:f acad:f drs:f n_matched:i"
        ),
        key="response_id",
    ),
    T(
        "drs_summary",
        "analysis_tables",
        "DRS, Acc, Rep, Acad overall and by group",
        spec=("group_by:t group:t responses:i drs:f acc:f rep:f acad:f"),
        key="group_by group",
    ),
    T(
        "academic_alignment",
        "analysis_tables",
        "Academic alignment by group",
        spec=("group_by:t group:t items:i acad:f"),
        key="group_by group",
    ),
    T(
        "volume_diversity",
        "analysis_tables",
        "Volume and diversity",
        spec=(
            "responses:i responses_with_items:i recommendations:i matched_recommendations:i "
            "unique_universities:i unique_university_texts_unmatched:i unique_programs:i "
            "unique_countries:i"
        ),
        key="",
    ),
    T(
        "concentration",
        "analysis_tables",
        "US+UK share and country coverage",
        spec=(
            "recommendations_with_country:i us_uk_share:f us_uk_countries:t countries_recommended:i "
            "corpus_countries:i country_coverage:f"
        ),
        key="",
    ),
    T(
        "reduced_context_top",
        "analysis_tables",
        "reduced context, top items per attribute value",
        spec=("attribute:t value:t what:t rank:i item:t count:i share:f"),
        key="attribute value what rank",
    ),
    # ---- the statistics (docs/statistics.md): run variability, counterfactual pairs, behaviour / needs, envy
    T(
        "run_variability",
        "audit_statistics",
        "run-to-run variability",
        spec=(
            "model:t template:t group_by:t group:t metric:t unit:t n_units:i n_responses:i n_scored:i "
            "mean:f sd:f ci_low:f ci_high:f level:f n_boot:i note:t"
        ),
        key="model template group_by group metric unit",
    ),
    T(
        "counterfactual_disparity",
        "audit_statistics",
        "counterfactual disparity (paired; {correction} correction)",
        packed=True,
        spec=(
            "model:t template:t attribute:t value_a:t value_b:t metric:t n_strata:i n_pairs:i "
            "n_strata_excluded:i mean_a:f mean_b:f mean_diff:f sd_diff:f ci_low:f ci_high:f level:f "
            "n_boot:i p_value:f p_method:t n_perm:i p_min_attainable:f correction:t family_size:i "
            "p_adjusted:f alpha:f significant:b marking:t"
        ),
        key="model template attribute value_a value_b metric",
    ),
    T(
        "behaviour_needs",
        "audit_statistics",
        "behaviour and needs of the counterfactual contrasts (component total "
        "/ behaviour / needs; {correction} within each attribute x component)",
        packed=True,
        spec=(
            "model:t template:t attribute:t value_a:t value_b:t metric:t component:t n_strata:i n_pairs:i "
            "mean_diff:f share_of_total:f behaviour_a_students:f behaviour_b_students:f sd_diff:f "
            "ci_low:f ci_high:f level:f n_boot:i p_value:f p_method:t n_perm:i p_min_attainable:f "
            "correction:t family_size:i p_adjusted:f alpha:f significant:b marking:t by_construction:b "
            "note:t"
        ),
        key="model template attribute value_a value_b metric component",
    ),
    T(
        "envy",
        "audit_statistics",
        "envy, the share of a group's students whose score would be higher with the lists "
        "the other group received (95% bootstrap interval over strata)",
        packed=True,
        spec=(
            "model:t template:t attribute:t group:t other_group:t metric:t n_strata:i n_students:i "
            "envy_share:f tie_share:f ci_low:f ci_high:f level:f n_boot:i"
        ),
        key="model template attribute group other_group metric",
    ),
    # ---- the geographic statistics (core.statistics.geostats)
    T(
        "region_metrics",
        "audit_geography",
        "Metrics by student region and North/South: mean [95% bootstrap interval over {unit}s]",
        "geography_region_metrics",
        packed=True,
        spec=(
            "model:t template:t group_by:t group:t metric:t unit:t n_units:i n_responses:i n_scored:i "
            "mean:f sd:f ci_low:f ci_high:f level:f n_boot:i note:t"
        ),
        key="model template group_by group metric unit",
    ),
    T(
        "geo_contrasts",
        "audit_geography",
        "Geographic contrasts, one vs the rest (paired within strata; "
        "{correction}-adjusted p within each family): significant first, then the {shown} closest to significance "
        "per family",
        "geography_geo_contrasts",
        packed=True,
        spec=(
            "model:t template:t analysis:t attribute:t value:t reference:t metric:t component:t unit:t "
            "n_units:i n_units_excluded:i mean_value:f mean_reference:f mean_diff:f sd_diff:f ci_low:f "
            "ci_high:f level:f n_boot:i p_value:f p_method:t n_perm:i p_min_attainable:f correction:t "
            "family_size:i p_adjusted:f alpha:f significant:b marking:t by_construction:b"
        ),
        key="model template analysis attribute value reference metric component unit",
    ),
    T(
        "class_gap_interactions",
        "audit_geography",
        "Class gap (low - high) interactions: does the gap differ by another axis or by region?",
        "geography_class_gap_interactions",
        packed=True,
        spec=(
            "model:t template:t analysis:t factor:t kind:t value_a:t value_b:t metric:t component:t gap:t "
            "unit:t n_units:i mean_diff:f sd_diff:f ci_low:f ci_high:f level:f n_boot:i p_value:f "
            "p_method:t n_perm:i p_min_attainable:f correction:t family_size:i p_adjusted:f alpha:f "
            "significant:b marking:t by_construction:b"
        ),
        key="model template analysis factor kind value_a value_b metric component gap unit",
    ),
    T(
        "home_bias",
        "audit_geography",
        "Home bias per {home}: share of located recommendations in the "
        "student's own country, own region, abroad; mean distance (km)",
        "geography_home_bias",
        packed=True,
        spec=(
            "model:t template:t home:h student_iso3:t region:t north_south:t n_items_located:i "
            "own_country:f own_region:f abroad:f outside_region:f mean_distance_km:f"
        ),
        key="model template home",
    ),
    T(
        "home_bias_change",
        "audit_geography",
        "Home bias from the base to the {other} template, per {home} (change = {other} - base)",
        "geography_home_bias_change",
        packed=True,
        spec=(
            "model:t home:h student_iso3:t region:t north_south:t own_country_base:f "
            "own_region_base:f abroad_base:f mean_distance_km_base:f own_country_regional:f "
            "own_region_regional:f abroad_regional:f mean_distance_km_regional:f own_country_change:f "
            "own_region_change:f abroad_change:f mean_distance_km_change:f"
        ),
        key="model home",
    ),
    T(
        "class_gap_decomposition",
        "audit_geography",
        "Class gaps split into behaviour (what the model recommended) and needs (the metric's lambda weighting)",
        "geography_class_gap_decomposition",
        packed=True,
        spec=(
            "model:t template:t metric:t value_a:t value_b:t component:t n_pairs:i mean_diff:f "
            "share_of_total:f sd_diff:f ci_low:f ci_high:f level:f n_boot:i p_value:f p_method:t n_perm:i "
            "p_min_attainable:f correction:t family_size:i p_adjusted:f alpha:f significant:b marking:t"
        ),
        key="model template metric value_a value_b component",
    ),
    T(
        "families",
        "audit_geography",
        "Families of tests: size, smallest attainable p and the Holm threshold (alpha / size)",
        "geography_families",
        packed=True,
        spec=(
            "model:t template:t analysis:t family_size:i unit:t n_units:i p_min_attainable:f "
            "holm_threshold:f attainable:b n_significant:i"
        ),
        key="model template analysis unit",
    ),
    # ---- across partitions (partition key ""): base vs regional, the model comparison, the sensitivity
    T(
        "drs_change",
        "base_vs_regional",
        "{compared}: drs change (%)",
        "base_vs_regional_drs_change",
        spec=(
            "group_by:t group:t drs_base:f acc_base:f rep_base:f drs_regional:f acc_regional:f "
            "rep_regional:f drs_change_pct:f acc_change_pct:f rep_change_pct:f model:t base_template:t "
            "other_template:t"
        ),
        key="model base_template other_template group_by group",
    ),
    T(
        "grs_change",
        "base_vs_regional",
        "{compared}: grs change (%)",
        "base_vs_regional_grs_change",
        spec=(
            "iso3:t country:t grs_base:f repr_base:f rep_covg_base:f grs_regional:f repr_regional:f "
            "rep_covg_regional:f grs_change_pct:f repr_change_pct:f rep_covg_change_pct:f model:t base_template:t "
            "other_template:t"
        ),
        key="model base_template other_template iso3",
    ),
    T(
        "component_change",
        "base_vs_regional",
        "{compared}: did the {other} template move what the model "
        "did? Behaviour / outcome (total) / needs parts tested and moved, per model (Welch test of {other} - {base}, "
        "Holm within each analysis x component)",
        "base_vs_regional_component_change",
        packed=True,
        spec=(
            "model:t source:t analysis:t value_a:t value_b:t metric:t component:t unit:t n_base:i "
            "mean_base:f ci_low_base:f ci_high_base:f p_adjusted_base:f significant_base:b n_regional:i "
            "mean_regional:f ci_low_regional:f ci_high_regional:f p_adjusted_regional:f "
            "significant_regional:b change:f se_change:f df_change:f ci_low_change:f ci_high_change:f "
            "level:f p_change:f correction:t family_size:i p_change_adjusted:f alpha:f moved:b "
            "direction:t intervals_overlap:b status:t rule:t note:t base_template:t other_template:t"
        ),
        key="model base_template other_template source analysis value_a value_b metric component unit",
    ),
    T(
        "language_affinity",
        "base_vs_regional",
        "Language-country affinity: the share of recommendations in the countries where the prompt's language is "
        "spoken, asked in the language minus asked in the reference language, the same students and runs "
        "(behaviour; bootstrap interval, sign-flip test, {correction} across the languages of each model)",
        "base_vs_regional_language_affinity",
        packed=True,
        spec=(
            "model:t template:t reference_template:t language:t reference:t n_countries:i countries:t n_pairs:i "
            "n_pairs_excluded:i share_reference:f share_language:f mean_diff:f sd_diff:f ci_low:f ci_high:f "
            "level:f n_boot:i p_value:f p_method:t n_perm:i p_min_attainable:f correction:t family_size:i "
            "p_adjusted:f alpha:f significant:b component:t marking:t"
        ),
        key="model reference_template template",
    ),
    T(
        "signalled",
        "base_vs_regional",
        "Stated vs signalled: each contrast of an axis a name signals, when the student states the attribute and when "
        "only a name signals it, and the difference (signalled - stated gap: behaviour, the same cells; Welch "
        "intervals, {correction} within each quantity of a model's comparison)",
        "base_vs_regional_signalled",
        packed=True,
        spec=(
            "model:t stated_template:t signalled_template:t axis:t value:t metric:t n_stated:i n_signalled:i "
            "n_cells:i n_cells_excluded:i gap_stated:f ci_low_stated:f ci_high_stated:f p_stated:f "
            "p_adjusted_stated:f significant_stated:b gap_signalled:f ci_low_signalled:f ci_high_signalled:f "
            "p_signalled:f p_adjusted_signalled:f significant_signalled:b difference:f ci_low_difference:f "
            "ci_high_difference:f p_difference:f p_adjusted_difference:f significant_difference:b level:f "
            "correction:t family_size:i alpha:f component_gap:t component:t marking:t"
        ),
        key="model stated_template signalled_template axis value metric",
    ),
    T(
        "differences",
        "model_comparison",
        "Differences B - A, paired by profile and run (significant first)",
        "model_comparison_differences",
        packed=True,
        spec=(
            "template:t model_a:t model_b:t family:t metric:t gap:t country:t component:t n_units:i "
            "mean_a:f mean_b:f mean_diff:f ci_low:f ci_high:f p_value:f p_adjusted:f family_size:i "
            "significant:b direction:t correction:t"
        ),
        key="template model_a model_b family metric gap country component",
    ),
    T(
        "leaderboard",
        "model_comparison",
        "Leaderboard: mean [95% interval] and the rank the paired tests support "
        "(a range where they cannot tell the models apart)",
        "model_comparison_leaderboard",
        packed=True,
        spec=(
            "template:t model:t metric:t n_units:i mean:f ci_low:f ci_high:f rank_best:i rank_worst:i "
            "tied_with:t rank:t"
        ),
        key="template model metric",
    ),
    T(
        "gate",
        "model_comparison",
        "Release gate: each line, candidate - baseline",
        "model_comparison_gate",
        packed=True,
        spec=(
            "line:i template:t metric:t gap:t rule:t margin:f estimate:f ci_low:f ci_high:f threshold:f "
            "n_units:i verdict:t n_units_to_decide:f reason:t"
        ),
        key="line",
    ),
    T(
        "verdicts",
        "sensitivity",
        "Findings, robust or fragile (fragile first)",
        "sensitivity_verdicts",
        packed=True,
        spec=(
            "source:t finding:t model:t template:t metric:t estimate:f p_adjusted:f verdict:t robust:b "
            "settings_holding:t settings_flipping:t settings_losing:t worst_setting:t worst_estimate:f "
            "worst_p_adjusted:f"
        ),
        key="source finding model template metric",
    ),
    T(
        "comparison_by_setting",
        "sensitivity",
        "The model comparison's differences under each sensitivity setting",
        "sensitivity_comparison_by_setting",
        packed=True,
        spec=(
            "template:t model_a:t model_b:t family:t metric:t gap:t country:t component:t n_units:i "
            "mean_a:f mean_b:f mean_diff:f ci_low:f ci_high:f p_value:f p_adjusted:f family_size:i "
            "significant:b direction:t correction:t setting:t"
        ),
        key="setting template model_a model_b family metric gap country component",
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
        if (t.name in OWN_TABLES) == bool(t.spec):
            raise ValueError(f"result table {t.asset}.{t.name}: declare its columns (spec) unless it has its own table")
        unknown = [c for c in t.key_columns if c not in {n for n, _ in t.columns}]
        if unknown:
            raise ValueError(f"result table {t.asset}.{t.name}: key columns {unknown} are not among its columns")
        reserved = {"id", "partition_key", "audit_id", "provenance_id", "params_hash", "row_index"}
        clash = reserved & {c for c, _ in t.columns}
        if clash:
            raise ValueError(f"result table {t.asset}.{t.name}: columns {sorted(clash)} are the stored row's own")


_check(TABLES)


def typed() -> tuple[ResultTable, ...]:
    """The tables stored in SQL tables made from their declared columns (every table but the OWN_TABLES)."""
    return tuple(t for t in TABLES if t.name not in OWN_TABLES)


def of_asset(asset: str) -> tuple[ResultTable, ...]:
    """The tables ``asset`` stores, in order (empty for an asset that stores none of them)."""
    return tuple(t for t in TABLES if t.asset == asset)


def names(asset: str) -> list[str]:
    """The names of the tables ``asset`` stores, in order; ``KeyError`` for an asset that stores none."""
    out = [t.name for t in of_asset(asset)]
    if not out:
        raise KeyError(
            f"no result table is stored by asset {asset!r} (core/common/result_tables.py: "
            f"{', '.join(sorted({t.asset for t in TABLES}))})"
        )
    return out


def packed(asset: str) -> tuple[str, ...]:
    """The tables of ``asset`` stored one row per table row (core.common.tables ``packed``)."""
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
