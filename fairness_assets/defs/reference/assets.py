"""Reference data: the ranking corpus, countries and capitals, profiles and prompts.

Each asset is a short recipe over ``fairness_assets.core``; rows go to the results database
through the ``results_io`` IO manager, summaries to the UI as metadata.
"""

import json

import dagster as dg
import pandas as pd

from fairness_assets.core.reference import axes, geo
from fairness_assets.core.reference import corpus as corpus_core
from fairness_assets.core.reference import names as names_core
from fairness_assets.core.reference import profiles as profiles_core
from fairness_assets.core.reference import prompts as prompts_core
from fairness_assets.core.reference import regions as regions_core
from resources.database import ResultsDatabase
from resources.settings import AuditGridResource, ReferenceDataResource

from ..decorators import stored_asset
from ..metadata import number, preview, table_md
from ..partitions import not_partitions_message, templates_not_partitions
from ..services import resolver_for

GROUP = "reference"


@stored_asset(
    group_name=GROUP,
    description="The QS ranking export, cleaned: raw and numeric rank, canonical country, "
    "global Rep, per-country local rank range, counts and Avail (METHOD.md §4-6).",
)
def qs_corpus(
    context: dg.AssetExecutionContext, reference: ReferenceDataResource, database: ResultsDatabase
) -> dg.Output[pd.DataFrame]:
    path = reference.resolved_corpus_path()
    if reference.is_demo_corpus():
        context.log.warning(
            f"using the ILLUSTRATIVE demo corpus {path} (not the QS ranking); "
            "set FAIRNESS_QS_CORPUS to your own QS export for a real audit"
        )
    raw, report = corpus_core.read_qs_export(path, reference.rank_column)
    rep = reference.rep_params()
    resolver = resolver_for(reference)
    universities, countries = corpus_core.build_corpus(
        raw, report, lambda s: resolver.resolve(s, strict=True, what=f"corpus country (in {path})"), rep
    )
    for warning in report.warnings:
        context.log.warning(warning)
    universities = database.stamp(
        universities,
        "qs_corpus",
        corpus_sha256=report.sha256,
        config_json={"rank_column": reference.rank_column, "rep": vars(rep), "path": str(path)},
    )
    return dg.Output(
        universities,
        metadata={
            "dagster/row_count": len(universities),
            "universities": len(universities),
            "countries": len(countries),
            "corpus_path": str(path),
            "illustrative_demo_corpus": reference.is_demo_corpus(),
            "corpus_sha256": report.sha256,
            "encoding": report.encoding,
            "duplicates_dropped": report.duplicates_dropped,
            "rank_forms": table_md(
                universities["rank_raw"].str.replace(r"\d+", "N", regex=True).value_counts().rename("rows").to_frame()
            ),
            "per_country": table_md(
                countries[["country", "iso3", "n_universities", "avail", "local_rank_min", "local_rank_max"]]
            ),
            "preview": preview(universities[["university_id", "name", "rank_raw", "rank", "country", "rep"]]),
        },
    )


@stored_asset(
    group_name=GROUP,
    description="Canonical name, ISO code, capital and coordinates of every corpus country and "
    "every home country of the design's grid (its home axis), with corpus counts and Avail.",
)
def country_geography(
    context: dg.AssetExecutionContext,
    qs_corpus: pd.DataFrame,
    reference: ReferenceDataResource,
    audit_grid: AuditGridResource,
    database: ResultsDatabase,
) -> dg.Output[pd.DataFrame]:
    cfg = audit_grid.resolve()
    resolver = resolver_for(reference)
    homes = list(cfg.values_of(axes.home())) if axes.home() else []
    nat = resolver.resolve(homes, strict=True, what=f"grid {axes.home()}")
    nat["spelling"] = homes
    overrides = geo.load_capital_overrides(reference.capital_overrides_path) if reference.capital_overrides_path else {}
    table = geo.country_table(qs_corpus, nat, overrides)
    sha = str(qs_corpus["corpus_sha256"].iloc[0])
    table = database.stamp(
        table,
        "country_geography",
        corpus_sha256=sha,
        config_json={"grid": cfg.as_json(), "capital_overrides": {k: vars(v) for k, v in overrides.items()}},
    )
    return dg.Output(
        table,
        metadata={
            "dagster/row_count": len(table),
            "capital_overrides_applied": ", ".join(sorted(set(overrides) & set(table["iso3"]))) or "none",
            "corpus_countries": int(table["in_corpus"].sum()),
            "grid_home_countries": int(table["is_home"].sum()),
            "nationalities_without_corpus_university": ", ".join(
                table.loc[table["is_home"] & ~table["in_corpus"], "country"]
            )
            or "none",
            "countries": table_md(
                table[
                    [
                        "iso3",
                        "country",
                        "capital",
                        "lat",
                        "lon",
                        "in_corpus",
                        "is_home",
                        "n_universities",
                        "avail",
                    ]
                ]
            ),
        },
    )


@stored_asset(
    group_name=GROUP,
    description="Geodesic distances (km, WGS-84, geopy) between the capitals of all countries "
    "in country_geography; computed once, reused by scoring.",
)
def capital_distances(
    context: dg.AssetExecutionContext, country_geography: pd.DataFrame, database: ResultsDatabase
) -> dg.Output[pd.DataFrame]:
    dist = geo.capital_distance_matrix(country_geography)
    sha = str(country_geography["corpus_sha256"].iloc[0])
    dist = database.stamp(dist, "capital_distances", corpus_sha256=sha, config_json={"method": "geopy.geodesic WGS-84"})
    off = dist[dist["from_iso3"] < dist["to_iso3"]]
    return dg.Output(
        dist,
        metadata={
            "dagster/row_count": len(dist),
            "countries": int(country_geography["iso3"].nunique()),
            "pairs": len(off),
            "max_km": number(off["km"].max(), 5) if len(off) else "n/a: fewer than two countries",
            "farthest_pairs": table_md(off.nlargest(5, "km")[["from_iso3", "to_iso3", "km"]]),
        },
    )


@stored_asset(
    group_name=GROUP,
    description="The synthetic students of the design: its crossed grid (factorial, or a seeded sample) and the "
    "reduced-context (one axis at a time) profiles, one column per axis, with stable ids (METHOD.md §2, §11).",
)
def profiles(
    context: dg.AssetExecutionContext,
    reference: ReferenceDataResource,
    audit_grid: AuditGridResource,
    database: ResultsDatabase,
) -> dg.Output[pd.DataFrame]:
    cfg = audit_grid.resolve()
    missing = templates_not_partitions(cfg.templates)
    if missing:
        raise dg.Failure(not_partitions_message(audit_grid.design, missing))
    table = profiles_core.design_profiles(cfg.design)
    table = geo.attach_home(table, axes.home(), resolver_for(reference))
    # the student's region (versioned region table, docs/statistics.md): a profile attribute
    table = regions_core.attach_regions(
        table, geo.HOME_ISO3, "", ("region", "north_south"), regions_core.load_regions()
    )
    table = database.stamp(
        table,
        "profiles",
        config_hash=cfg.config_hash,
        config_json={"grid": json.loads(cfg.as_json()), "regions": regions_core.source_line()},
    )
    counts = table["profile_set"].value_counts()
    return dg.Output(
        table,
        metadata={
            "dagster/row_count": len(table),
            "design": cfg.design_name,
            "design_file": str(cfg.design.path),
            "size": dg.MetadataValue.json(cfg.design.size()),
            "full_profiles": int(counts.get("full", 0)),
            "reduced_context_profiles": int(len(table) - counts.get("full", 0)),
            "by_set": table_md(counts.rename("profiles").to_frame()),
            "by_region": table_md(
                table[table["profile_set"] == "full"]
                .groupby(["north_south", "region"])
                .size()
                .rename("full profiles")
                .to_frame()
            )
            if table["region"].notna().any()
            else "none",
            "regions": regions_core.source_line(),
            "names": _names_md(cfg.design, table),
            "preview": preview(table),
        },
    )


def _names_md(design, table: pd.DataFrame) -> str:
    """The design's names (core/reference/names.py): named profiles per signalled cell, and the cells without
    names with why; "none" for a design without a names block."""
    if design.names is None:
        return "none: the design has no names block (docs/designs.md, Names)"
    cov = names_core.coverage(design.names, table[table["profile_set"] == "full"].to_dict("records"))
    shown = cov.assign(why=cov["why"].where(cov["why"] != "", "-"))
    return table_md(shown, empty="no crossed profile")


@stored_asset(
    group_name=GROUP,
    description="Every (template, profile) prompt of the design: its templates (versioned files in data/templates, "
    "or inline in the design, conversations included), content hash recorded per row.",
)
def prompts(
    context: dg.AssetExecutionContext,
    profiles: pd.DataFrame,
    reference: ReferenceDataResource,
    audit_grid: AuditGridResource,
    database: ResultsDatabase,
) -> dg.Output[pd.DataFrame]:
    cfg = audit_grid.resolve()
    templates = prompts_core.design_templates(cfg.design)
    table = prompts_core.render_prompts(templates.values(), profiles)
    empty = [n for n in templates if n not in set(table["template"])]
    if empty:
        context.log.warning(f"template(s) {empty} have no profiles in this grid")
    table = database.stamp(
        table,
        "prompts",
        config_hash=cfg.config_hash,
        config_json=cfg.as_json(),
        template_hashes={n: t.sha256 for n, t in templates.items()},
    )
    return dg.Output(
        table,
        metadata={
            "dagster/row_count": len(table),
            "templates": table_md(
                pd.DataFrame(
                    [(n, t.version, t.sha256[:12], int((table["template"] == n).sum())) for n, t in templates.items()],
                    columns=["template", "version", "sha256", "prompts"],
                )
            ),
            "example_prompt": dg.MetadataValue.text(table["prompt"].iloc[0] if len(table) else ""),
            "preview": preview(table[["prompt_id", "template", "prompt"]]),
        },
    )
