"""Generations: one row per (model, template, profile, run), partitioned model x template."""

import dagster as dg
import pandas as pd

from fairness_assets.core import prompts as prompts_core
from fairness_assets.core import responses as responses_core
from fairness_assets.core.corpus import file_sha256
from resources.settings import GenerationSourceResource, ReferenceDataResource

from ..metadata import preview, table_md
from ..partitions import AUDIT_PARTITIONS, SINGLE_RUN, model_template_pairs
from ..reference.assets import resolver_for


@dg.asset(
    group_name="generation",
    io_manager_key="results_io",
    partitions_def=AUDIT_PARTITIONS,
    backfill_policy=SINGLE_RUN,
    kinds={"pandas", "sql"},
    description="Model answers per (model, template, profile, run). Imported from a bring-your-own "
    "responses file (FAIRNESS_RESPONSES; default: the illustrative example file).",
)
def generations(
    context: dg.AssetExecutionContext,
    generation_source: GenerationSourceResource,
    reference: ReferenceDataResource,
) -> dg.Output[pd.DataFrame]:
    pairs = model_template_pairs(context)
    path = generation_source.resolved_path()
    resolver = resolver_for(reference)
    frame, report = responses_core.read_responses(path, resolve_nationality=resolver.iso3)
    if report.split_items:
        raise dg.Failure(f"{path}: the generations asset imports full response texts (a 'response' column); "
                         "score already-split items with the command line `fairness-audit score`")
    wanted = pd.Series([f"{m}|{t}" for m, t in zip(frame["model"], frame["template"])], index=frame.index)
    frame = frame[wanted.isin({f"{m}|{t}" for m, t in pairs})]
    templates = prompts_core.load_templates(reference.templates_dir)
    table, rejects = responses_core.to_generations(frame, templates, str(path), file_sha256(path))
    rejects = pd.concat([report.rejects, rejects], ignore_index=True)
    if len(rejects):
        context.log.warning(f"{path}: {rejects['row'].nunique()} row(s) not usable, e.g. "
                            + "; ".join(f"row {r.row} {r.column}: {r.reason}" for r in rejects.head(5).itertuples()))
    missing = [f"{m}|{t}" for m, t in pairs if not (table["partition_key"] == f"{m}|{t}").any()]
    if missing:
        raise dg.Failure(f"{path} has no usable responses for partition(s) {missing}")
    return dg.Output(
        table,
        metadata={
            "dagster/row_count": len(table),
            "source": str(path),
            "responses_per_partition": table_md(table.groupby("partition_key").size().rename("responses").to_frame()),
            "rows_rejected": int(rejects["row"].nunique()) if len(rejects) else 0,
            "rejects": table_md(rejects.head(50)) if len(rejects) else "none",
            "preview": preview(table[["response_id", "prompt", "response"]]),
        },
    )
