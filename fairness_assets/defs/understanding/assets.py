"""Understanding model output: recommendations (parse, match, tag) and subject tags.

The parse-quality expectation suite (expectations/suites/recommendations_quality.json) runs
as asset checks of ``recommendations`` in the same step; the checks marked blocking stop
downstream metric assets of a partition that fails them. The checks are declared from that file
when the code location loads; the suite a run uses is ``ParseQualityResource.suite``, which must
produce the same checks with the same blocking flags, or the step fails before any work, naming
the suite, the checks expected and the checks found (services.parse_quality_suite). Each check's
result records every partition's outcome (metadata ``outcomes``): the audit report reads these
recorded evaluations (services.RecordedQuality), it never runs the suite itself.
"""

import warnings

import dagster as dg
import pandas as pd

from expectations.runner import load_suite
from fairness_assets.core.understanding import quality
from fairness_assets.core.understanding import understand as understanding
from resources.database import ResultsDatabase
from resources.llm.resource import LLMResource
from resources.settings import AuditGridResource, ParseQualityResource, ReferenceDataResource
from resources.tagger import SubjectTaggerResource

from ..decorators import partitioned_asset
from ..isolation import PartitionGuard
from ..metadata import number, preview, table_md
from ..partitions import AUDIT_PARTITIONS
from ..services import (
    QUALITY_OUTCOMES_KEY,
    parse_quality_suite,
    quality_outcomes,
    resolver_for,
    understanding_config,
    university_index,
)

SUITE = load_suite("recommendations_quality")
# partitioned checks: a run of one partition (every run the UI, a backfill or the schedule launches)
# records each check's result for that partition (Dagster 1.13 evaluates a partitioned check per
# partition only in a run of one partition; a run of a range of many, a box of `fairness-audit
# score`, gets one result per check, and the per-partition outcome is applied by the run itself: see
# _check_results)
with warnings.catch_warnings():
    warnings.simplefilter("ignore", category=dg.PreviewWarning)
    CHECK_SPECS = [
        dg.AssetCheckSpec(
            name=c["name"],
            asset="recommendations",
            blocking=bool(c.get("blocking")),
            description=c.get("description"),
            partitions_def=AUDIT_PARTITIONS,
        )
        for c in SUITE["checks"]
    ]
# the declared checks (name -> blocking) a configured suite must produce (parse_quality_suite)
DECLARED_CHECKS = {spec.name: bool(spec.blocking) for spec in CHECK_SPECS}


# run tag: "warn" makes every failed parse-quality check a warning (no check blocks the run)
QUALITY_CHECKS_TAG = "fairness/quality_checks"


def _check_results(suite, per_partition, warn_only: bool = False, guard=None) -> list[dg.AssetCheckResult]:
    """One result per check. In a run of one partition, a failed blocking check has severity ERROR
    and Dagster skips that partition's downstream assets. In a run of many (a box of ``fairness-audit score``),
    a failed blocking check blocks only the partitions that failed it (``guard.block``: downstream
    assets of the run skip them, the others go on) and its result is a WARN that lists them;
    ``warn_only`` (the command line's runs) blocks nothing."""
    results = []
    single = guard is None or len(guard.keys) == 1
    for check in suite["checks"]:
        name = check["name"]
        outcomes = {k: next(o for o in v if o.name == name) for k, v in per_partition.items()}
        passed = all(o.success for o in outcomes.values())
        if check.get("blocking") and not warn_only and not single:
            for key, o in outcomes.items():
                if not o.success:
                    guard.block(
                        key,
                        f"blocking parse-quality check {name} failed (observed {o.observed}, threshold {o.threshold})",
                    )
        observed = [o.observed for o in outcomes.values() if o.observed is not None]
        threshold = next((o.threshold for o in outcomes.values()), None)
        table = pd.DataFrame(
            [(k, o.observed, o.threshold, "pass" if o.success else "FAIL") for k, o in outcomes.items()],
            columns=["partition", "observed", "threshold", "result"],
        )
        worst = (min(observed) if check.get("bound") == "min_value" else max(observed)) if observed else None
        results.append(
            dg.AssetCheckResult(
                check_name=name,
                passed=passed,
                severity=dg.AssetCheckSeverity.ERROR
                if check.get("blocking") and not warn_only and single
                else dg.AssetCheckSeverity.WARN,
                description=check.get("description"),
                metadata={
                    "observed": dg.MetadataValue.float(number(worst))
                    if worst is not None and number(worst) is not None
                    else "n/a: no partition had rows to check",
                    "threshold": dg.MetadataValue.float(float(threshold))
                    if threshold is not None
                    else "n/a: no threshold",
                    "by_partition": table_md(table),
                    # each partition's outcome, as data: what the audit report reads of this evaluation
                    QUALITY_OUTCOMES_KEY: dg.MetadataValue.json(
                        {
                            k: {
                                "passed": bool(o.success),
                                "observed": number(o.observed),
                                "threshold": None if o.threshold is None else float(o.threshold),
                            }
                            for k, o in outcomes.items()
                        }
                    ),
                    **(
                        {"blocked_partitions": ", ".join(k for k, o in outcomes.items() if not o.success) or "none"}
                        if check.get("blocking") and not warn_only and not single
                        else {}
                    ),
                },
            )
        )
    return results


@partitioned_asset(
    group_name="understanding",
    check_specs=CHECK_SPECS,
    description="One row per recommended item: profile, model, template, run, the parsed university/"
    "program/country texts, parse status and method, matched corpus university and score, canonical "
    "country, subject tags. A response without items keeps one row (status refused/unparseable).",
)
def recommendations(
    context: dg.AssetExecutionContext,
    generations: pd.DataFrame,
    qs_corpus: pd.DataFrame,
    reference: ReferenceDataResource,
    subject_tagger: SubjectTaggerResource,
    parse_quality: ParseQualityResource,
    audit_grid: AuditGridResource,
    database: ResultsDatabase,
    llm: LLMResource,
):
    try:  # a configured suite that does not produce the declared checks is refused before any work
        suite = parse_quality_suite(parse_quality, DECLARED_CHECKS)
    except ValueError as exc:
        raise dg.Failure(str(exc)) from None
    guard = PartitionGuard(context, database, "recommendations")
    mixed = generations.groupby("partition_key")["audit_id"].nunique()
    for key, n in mixed[mixed > 1].items():
        audits = sorted(generations.loc[generations["partition_key"] == key, "audit_id"].unique())
        guard.fail(
            key,
            f"its generations hold rows of {n} audits ({audits}): a generation run did not finish; "
            "rematerialize generations for this partition to complete it",
        )
    resolver = resolver_for(reference)
    index = university_index(qs_corpus, reference)
    context.log.info(f"parsing {len(generations)} response(s) of {len(guard.pairs)} partition(s)")
    # method=llm: the tagger's model is loaded once (only for programs not yet cached) and released here
    tagged = []  # the tagger's answers, for the tag sources shown on the asset
    frames = []
    with subject_tagger.session(database, llm, log=context.log.info) as tag_fn:

        def tag_and_keep(programs):
            tagged.append(tag_fn(programs))
            return tagged[-1]

        for pk, part in guard.partitions(generations):
            with guard.attempt(pk):  # one partition's failure leaves the others
                frames.append(
                    understanding.recommendations_for(
                        part,
                        resolver,
                        index,
                        tag_fn=tag_and_keep,
                        max_items=audit_grid.max_items,
                        progress=lambda done, n, pk=pk: context.log.info(f"{pk}: parsed {done}/{n} distinct responses"),
                    )
                )
    for key in guard.keys:
        if guard.usable(key) and not any(len(f) and f["partition_key"].iloc[0] == key for f in frames):
            guard.fail(key, "no generations stored for it")
    left_out = guard.finish()
    recs = pd.concat(frames, ignore_index=True)
    recs = database.stamp(
        recs,
        "recommendations",
        corpus_sha256=str(qs_corpus["corpus_sha256"].iloc[0]),
        config_json={**understanding_config(reference, subject_tagger), "max_items": audit_grid.max_items},
    )
    suite, per_partition = quality_outcomes(recs, parse_quality, dict(audit_grid.resolve().quality), suite=suite)
    items = recs[recs["university_text"].notna()]
    answers = recs.drop_duplicates("response_id")
    long_answers = answers[answers["n_items_left_out"] > 0]
    if len(long_answers):
        context.log.warning(
            f"{len(long_answers)} answer(s) name more than {audit_grid.max_items} items: the first "
            f"{audit_grid.max_items} are scored, {int(long_answers['n_items_left_out'].sum())} item(s) "
            "left out and counted (n_items_left_out; METHOD.md §9)"
        )
    rates = quality.group_rates(quality.response_frame(recs), quality.item_frame(recs))
    unmatched = items[items["university_id"].isna()]["university_text"].value_counts().head(25)
    yield dg.Output(
        recs,
        metadata={
            "dagster/row_count": len(recs),
            **left_out,
            "tagger": subject_tagger.tagger_name(),
            "tag_sources": table_md(pd.concat(tagged)["source"].value_counts().to_frame()) if tagged else "none",
            "responses": int(recs["response_id"].nunique()),
            "items": len(items),
            "parse_status": table_md(recs.drop_duplicates("response_id")["parse_status"].value_counts().to_frame()),
            "parse_method": table_md(recs.drop_duplicates("response_id")["parse_method"].value_counts().to_frame()),
            "match_rate": float(items["university_id"].notna().mean()) if len(items) else 0.0,
            "items_scored_per_answer": audit_grid.max_items,
            "answers_with_items_left_out": len(long_answers),
            "items_left_out": int(long_answers["n_items_left_out"].sum()),
            "match_method": table_md(items["match_method"].value_counts().to_frame()),
            # every match explains itself (issue 21): counts per rule family, the most frequent non-exact ones
            "match_rule": table_md(items["match_rule"].value_counts().to_frame()) if "match_rule" in items else "n/a",
            "non_exact_matches": table_md(understanding.non_exact_matches(items)),
            "country_conflicts": int(items["country_conflict"].sum()),
            "parse_and_match_by_group": table_md(rates),
            "unmatched_universities": table_md(unmatched.to_frame()) if len(unmatched) else "none",
            "preview": preview(
                recs[
                    [
                        "response_id",
                        "item_index",
                        "parse_status",
                        "university_text",
                        "matched_name",
                        "country",
                        "program_text",
                        "tags",
                    ]
                ]
            ),
        },
    )
    # `fairness-audit score` scores whatever it is given: its runs report failed checks as warnings
    # (shown in the report's parse-quality table) instead of stopping the scores
    yield from _check_results(
        suite, per_partition, warn_only=context.run.tags.get(QUALITY_CHECKS_TAG) == "warn", guard=guard
    )
    guard.record()  # partitions blocked by a check: the run's downstream assets skip them
    for key, outcomes in per_partition.items():
        failed = [o.name for o in outcomes if not o.success]
        if failed:
            context.log.warning(f"partition {key}: parse-quality checks failed: {failed}")


@partitioned_asset(
    group_name="understanding",
    description="The distinct programs of a partition with their QS subject areas and where each tag "
    "came from (override, cache, tagger); untagged programs are listed for review.",
)
def subject_tags(
    context: dg.AssetExecutionContext,
    recommendations: pd.DataFrame,
    subject_tagger: SubjectTaggerResource,
    database: ResultsDatabase,
    llm: LLMResource,
) -> dg.Output[pd.DataFrame]:
    frames = []
    guard = PartitionGuard(context, database, "subject_tags")
    # after recommendations every program is cached (no model load); else loaded once, released here
    with subject_tagger.session(database, llm, log=context.log.info) as tag_fn:
        for key, part in guard.partitions(recommendations):
            with guard.attempt(key):
                tagged = tag_fn(part["program_text"].dropna())
                counts = part["program_norm"].value_counts()
                tagged["n_items"] = tagged["program_norm"].map(counts).fillna(0).astype(int)
                tagged["partition_key"] = str(key)
                frames.append(tagged)
    left_out = guard.finish()
    table = (
        pd.concat(frames, ignore_index=True)
        if frames
        else pd.DataFrame(columns=["program_norm", "tags", "source", "n_items", "partition_key"])
    )
    table = database.stamp(table, "subject_tags", config_json={"tagger": subject_tagger.tagger_name()})
    untagged = table[table["tags"].map(len) == 0]
    table["tags"] = table["tags"].map(lambda t: __import__("json").dumps(list(t)))
    return dg.Output(
        table,
        metadata={
            "dagster/row_count": len(table),
            **left_out,
            "tagger": subject_tagger.tagger_name(),
            "untagged_programs": len(untagged),
            "untagged": table_md(untagged[["program_norm", "n_items"]].head(50)) if len(untagged) else "none",
            "by_source": table_md(table["source"].value_counts().to_frame()),
            "preview": preview(table),
        },
    )
