"""Generations: one row per (model, template, profile, run), partitioned model x template.

Two sources, one table: the generation engine (the LLM resource samples every profile and
run of the audit grid through ``resources.llm.runner.GenerationRunner``; resumable: a rerun
generates only missing samples, each batch is committed as it finishes, so a crash loses at most
the batch in flight and never duplicates a row), or a bring-your-own responses file
(``FAIRNESS_RESPONSES``).
"""

import json
from dataclasses import dataclass

import dagster as dg
import pandas as pd

from fairness_assets.core.common.partition import PartitionKey
from fairness_assets.core.generation import responses as responses_core
from fairness_assets.core.generation import samples as gen_core
from fairness_assets.core.reference import prompts as prompts_core
from resources.database import Generation, GenerationCost, ResultsDatabase, make_provenance
from resources.llm.resource import LLMResource
from resources.llm.runner import GenerationRunner, IncompleteGenerationError
from resources.partition_lease import claim, keep_alive, run_finished_from, run_status_from
from resources.settings import AuditGridResource, GenerationSourceResource, ReferenceDataResource, stable_hash

from ..decorators import partitioned_asset
from ..isolation import PartitionGuard
from ..metadata import preview, table_md
from ..operations.kubernetes import GPU_OP_TAGS, GPU_POOL
from ..partitions import audit_round, unusable_models
from ..services import resolver_for


def _import_file(context, guard, generation_source, reference, database) -> pd.DataFrame:
    path = generation_source.resolved_path()
    pairs = guard.pairs
    # staged once per file (FAIRNESS_STAGING_DIR): each run reads its own partitions, not the whole file
    imported = responses_core.import_responses(
        path,
        prompts_core.audit_templates(reference.templates_dir),
        resolver_for(reference).iso3,
        pairs=set(pairs),
        staging=generation_source.staging_folder(),
    )
    for pk in pairs:  # a partition the file cannot give fails alone, naming what the file has
        problem = unusable_models([pk], imported.models, f"the responses file {path}")
        if problem:
            guard.fail(pk, problem)
    table, rejects, notes = imported.generations, imported.rejects, imported.notes
    have = set(table["partition_key"]) if len(table) else set()
    for pk in pairs:
        if guard.usable(pk) and str(pk) not in have:
            templates = sorted(t for m, t in imported.pairs if m == pk.model)
            guard.fail(
                pk,
                f"the responses file {path} has no usable row for model {pk.model!r} with template "
                f"{pk.template!r} (for this model it has template(s) {templates or 'none'}"
                + (
                    f"; {imported.rows_rejected} row(s) of the file were not usable, see the rejects"
                    if imported.rows_rejected
                    else ""
                )
                + ")",
            )
    if not len(table):
        return table
    table = database.stamp(
        table,
        "generations",
        template_hashes=dict(zip(table["template"], table["template_hash"], strict=False)),
        config_json={
            "source": str(path),
            "sha256": imported.sha256,
            "format": "items" if imported.split_items else "text",
        },
    )
    if audit_round(context):  # a re-audit round is a new audit even when the file is unchanged
        table["audit_id"] = table["audit_id"] + f"-{audit_round(context)}"
    if len(rejects):
        context.log.warning(
            f"{path}: {rejects['row'].nunique()} row(s) not usable, e.g. "
            + "; ".join(f"row {r.row} {r.column}: {r.reason}" for r in rejects.head(5).itertuples())
        )
    context.add_output_metadata(
        {
            "source": str(path),
            "format": "items (already split)" if imported.split_items else "answers as written",
            "rows_rejected": imported.rows_rejected,
            "rejects": table_md(rejects.head(50)) if len(rejects) else "none",
            # text stored altered (NUL removed, unencodable characters replaced): the row's text_note
            "rows_text_altered": int(notes["row"].nunique()) if len(notes) else 0,
            "text_notes": table_md(notes.head(50)) if len(notes) else "none",
        }
    )
    return table


def _claim(context, database, pairs) -> None:
    """Hold the partitions for this run (renewed as batches are committed): resources/partition_lease.py."""
    keys = [gen_core.partition_key(m, t) for m, t in pairs]
    claim(database.engine(), keys, context.run.run_id, run_status_from(context.instance), warn=context.log.warning)
    # renewed in the background too: a model load or a slow endpoint between two commits
    keep_alive(database.engine(), keys, context.run.run_id, run_finished_from(context.instance, context.run.run_id))


@dataclass(frozen=True)
class PartitionJob:
    """The samples of one partition still to generate (``todo``: rows of the plan) and what every
    stored row of them carries: the audit, the decoding, the provenance."""

    key: str
    todo: pd.DataFrame
    audit_id: str
    decoding: str
    provenance_id: str

    def rows(self, client, finished) -> pd.DataFrame:
        """Generation rows of ``finished`` (``(index into todo, Sample)``, as the runner commits them)."""
        samples = [s for _, s in finished]
        return self.todo.iloc[[i for i, _ in finished]].assign(
            audit_id=self.audit_id,
            response=[s.text for s in samples],
            prompt_tokens=[s.prompt_tokens for s in samples],
            output_tokens=[s.output_tokens for s in samples],
            latency_s=[s.latency_s for s in samples],
            model_source=client.model_source,
            model_revision=client.model_revision,
            backend=client.backend,
            decoding_json=self.decoding,
            provenance_id=self.provenance_id,
        )

    def cost(self, client, stats, run_id: str) -> dict:
        """The partition's row of ``generation_cost`` for this run."""
        pk = PartitionKey.parse(self.key)
        return {
            "partition_key": self.key,
            "audit_id": self.audit_id,
            "run_id": run_id,
            "model": pk.model,
            "template": pk.template,
            "backend": client.backend,
            "compute_kind": stats.compute_kind,
            "samples": stats.samples,
            "prompt_tokens": stats.prompt_tokens,
            "output_tokens": stats.output_tokens,
            "wall_s": round(stats.wall_s, 3),
            # GPU-seconds in process; request-seconds (the sum of request latencies) for an endpoint
            "compute_s": stats.compute_s,
            "output_tokens_per_s": stats.output_tokens_per_s,
            "provenance_id": self.provenance_id,
        }


def _run_job(context, database, pairs, client, job: PartitionJob, params, commit_every: int) -> dict:
    """Generate ``job`` with the engine (:class:`GenerationRunner`): each group of finished samples
    stored in one transaction fenced by this run's lease (a run that lost it stops there), the
    leases renewed after each, progress in the run's log. Returns the cost row (also stored)."""
    run_id = context.run.run_id
    runner = GenerationRunner(
        client,
        lambda finished: database.append_rows(Generation, job.rows(client, finished), run_id=run_id),
        label=job.key,
        renew=lambda: _claim(context, database, pairs),
        log=context.log.info,
        commit_every=commit_every,
    )
    try:
        stats = runner.run(
            [prompts_core.as_chat(p) for p in job.todo["prompt"]],
            list(job.todo["seed"]),
            params,
            labels=list(job.todo["response_id"]),
        )  # errors name the sample
    except IncompleteGenerationError as exc:  # never a silently short partition: a rerun fills in
        raise dg.Failure(str(exc)) from None
    cost = job.cost(client, stats, run_id)
    database.append_rows(GenerationCost, pd.DataFrame([cost]))
    return cost


def _generate(context, guard, prompts, profiles, cfg, generation_source, llm, database) -> pd.DataFrame:
    pairs = guard.pairs
    params = generation_source.sampling()
    decoding = json.dumps(params.as_dict(), sort_keys=True)
    audit_id = f"{cfg.design_name}-{stable_hash([cfg.as_json(), decoding])}"
    if audit_round(context):  # a re-audit samples anew instead of resuming the previous audit
        audit_id += f"-{audit_round(context)}"
    # every model must be usable before anything is generated
    for model in sorted({m for m, _ in pairs}):
        with guard.attempt(PartitionKey(model, "*")):
            context.log.info(f"model {model}: {llm.check(model)}")
        unusable = guard.outcomes.pop(str(PartitionKey(model, "*")), None)
        if unusable:  # every partition of this model fails, with the model's own reason
            for pk in pairs:
                if pk.model == model:
                    guard.fail(pk, unusable[1])
    costs: list[dict] = []
    previous = None
    for model, template in pairs:
        key = gen_core.partition_key(model, template)
        if not guard.usable(key):
            continue
        if previous is not None and previous != model:
            llm.release(previous, log=context.log.info)  # keys are model-major: one model in memory
        previous = model
        with guard.attempt(key):  # a partition that cannot be generated fails alone
            plan = gen_core.plan_samples(prompts, profiles, model, template, cfg.runs)
            if plan.empty:
                raise dg.Failure(f"the audit design ({cfg.design_name}) has no profiles for template {template!r}")
            done_ids = database.existing_values(Generation, "response_id", [key], audit_id=audit_id)
            todo = plan[~plan["response_id"].isin(done_ids)]
            context.log.info(
                f"partition {key}: {len(plan)} samples in the grid, {len(plan) - len(todo)} already "
                f"stored, {len(todo)} to generate (audit {audit_id})"
            )
            if todo.empty:
                continue
            client = llm.client(model, log=context.log.info)
            # what produced these rows: the model as served, the decoding, the template (same inputs, same id)
            prov = make_provenance(
                "generations",
                template_hashes={template: str(plan["template_hash"].iloc[0])},
                config_json={
                    "audit_id": audit_id,
                    "model": model,
                    "backend": client.backend,
                    "source": client.model_source,
                    "revision": client.model_revision,
                    "decoding": json.loads(decoding),
                },
            )
            database.record_provenance(prov)
            job = PartitionJob(key, todo, audit_id, decoding, prov.provenance_id)
            costs.append(_run_job(context, database, pairs, client, job, params, generation_source.commit_every))
    stored = database.read_rows(Generation, [gen_core.partition_key(m, t) for m, t in pairs])
    stored = stored[stored["audit_id"] == audit_id]
    if costs:  # what this run's generation cost, per partition (also stored: table generation_cost)
        context.add_output_metadata(
            {
                "generation_cost": table_md(pd.DataFrame(costs)[COST_COLUMNS]),
                "output_tokens_per_s": max(c["output_tokens_per_s"] for c in costs),
            }
        )
    return stored.drop(columns=["id"])


COST_COLUMNS = [
    "partition_key",
    "backend",
    "compute_kind",
    "samples",
    "prompt_tokens",
    "output_tokens",
    "wall_s",
    "compute_s",
    "output_tokens_per_s",
]


@partitioned_asset(
    group_name="generation",
    pool=GPU_POOL,
    op_tags=GPU_OP_TAGS,
    description="Model answers per (model, template, profile, run): sampled by the generation engine "
    "(resumable, seeded per sample), or imported from a responses file (FAIRNESS_RESPONSES).",
)
def generations(
    context: dg.AssetExecutionContext,
    prompts: pd.DataFrame,
    profiles: pd.DataFrame,
    generation_source: GenerationSourceResource,
    reference: ReferenceDataResource,
    audit_grid: AuditGridResource,
    llm: LLMResource,
    database: ResultsDatabase,
) -> dg.Output[pd.DataFrame]:
    guard = PartitionGuard(context, database, "generations")
    if not context.partition_keys:
        raise dg.Failure(
            f"the run selects no model x template partition (partition keys {context.partition_keys}; "
            "a range of this two-dimensional partition set is a box: model range x template range)"
        )
    if generation_source.resolved_path() is None:  # generating: every model must be registered
        for pk in guard.pairs:
            problem = unusable_models([pk], set(llm.registry()), f"the model registry {llm.registry_path}")
            if problem:
                guard.fail(pk, problem)
    pairs = [pk for pk in guard.pairs if guard.usable(pk)]
    guard.pairs = pairs
    if pairs:
        _claim(context, database, pairs)  # fails here if another live run writes one of these partitions
        if generation_source.resolved_path() is not None:
            table = _import_file(context, guard, generation_source, reference, database)
        else:
            table = _generate(context, guard, prompts, profiles, audit_grid.resolve(), generation_source, llm, database)
    else:
        table = pd.DataFrame(columns=["partition_key", "response_id", "prompt", "response"])
    for pk in pairs:
        if guard.usable(pk) and (table.empty or str(pk) not in set(table["partition_key"])):
            guard.fail(pk, "no usable responses")
    table = guard.usable_rows(table)
    left_out = guard.finish()  # fails the step only when no partition of the run could be produced
    tokens = pd.to_numeric(table.get("output_tokens"), errors="coerce") if "output_tokens" in table else None
    return dg.Output(
        table,
        metadata={
            "dagster/row_count": len(table),
            **left_out,
            "responses_per_partition": table_md(table.groupby("partition_key").size().rename("responses").to_frame()),
            "output_tokens": int(tokens.sum()) if tokens is not None and tokens.notna().any() else "n/a",
            "preview": preview(table[["response_id", "prompt", "response"]]),
        },
    )
