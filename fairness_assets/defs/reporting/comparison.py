"""Choosing a model (issue 22): ``model_comparison`` compares every pair of models audited on the
same template (``core.statistics.comparison``: paired by profile and run, interval and test per difference,
Holm within each family, a leaderboard with the ranks the data support), and its blocking check
``release_gate`` judges a candidate against a baseline with the gate file of
``FAIRNESS_GATE_FILE`` (``core.statistics.gate``; docs/operations.md, "Release gate").

``sensitivity`` re-scores every significant finding of the audit and of the comparison from the
stored items under the method's heuristics (``core.statistics.sensitivity``), and its blocking check
``release_gate_robust`` applies a gate that requires robustness.
"""

from typing import Optional

import dagster as dg
import pandas as pd

from fairness_assets.core.common import result_tables
from fairness_assets.core.common import tables as tables_core
from fairness_assets.core.common.partition import PartitionKey
from fairness_assets.core.common.progress import Progress
from fairness_assets.core.reference import workers as workers_core
from fairness_assets.core.reporting import figures as fig_core
from fairness_assets.core.reporting.sentences import sensitivity as sensitivity_sentences
from fairness_assets.core.statistics import comparison as comparison_core
from fairness_assets.core.statistics import gate as gate_core
from fairness_assets.core.statistics.inference import InferenceParams
from resources import database as D
from resources.database import ResultsDatabase
from resources.settings import ReferenceDataResource, ReportResource, ScoringResource, stable_hash
from resources.tagger import SubjectTaggerResource

from ..decorators import stored_asset
from ..metadata import png_md, table_md
from ..services import inference_of, scoring_params

SHOWN = (
    "template",
    "model_a",
    "model_b",
    "family",
    "metric",
    "gap",
    "mean_a",
    "mean_b",
    "mean_diff",
    "ci_low",
    "ci_high",
    "p_adjusted",
    "family_size",
    "significant",
    "direction",
)


def stored_inputs(database: ResultsDatabase, template: str, keys: list[str]) -> tuple[pd.DataFrame, pd.DataFrame]:
    """The per-response scores (``drs_responses``) and the items' countries of ``keys``, one template."""
    frames = []
    for key in keys:
        tables = database.partition_tables(D.MetricRow, key)
        if tables:
            frames.append(tables["drs_responses"])
    items = database.read_rows(D.DRSItem, keys)
    items = items[[c for c in ("response_id", "iso3", "university_id", "model", "run") if c in items.columns]]
    return (pd.concat(frames, ignore_index=True) if frames else pd.DataFrame()), items


def compare_stored(
    database: ResultsDatabase,
    inference: InferenceParams,
    log=None,
    params=None,
    *,
    pairs: Optional[comparison_core.PairChoice] = None,
    workers: int = 1,
) -> dict[str, pd.DataFrame]:
    """Every template with two or more scored models, compared with ``inference`` (read one template at a
    time); with the scoring ``params``, the stored corpus gives the coverage and GRS per country too.
    ``pairs``: which pairs of models (core.statistics.comparison.PairChoice; every pair up to 8 models);
    ``workers``: processes comparing the templates."""
    corpus = database.read_rows(D.CorpusUniversity, [""]) if params is not None else None
    extra = {"corpus": corpus, "params": params} if corpus is not None and len(corpus) else {}
    keys = sorted(str(k) for k in database.distinct(D.MetricRow, ["partition_key"])["partition_key"] if k)
    by_template: dict[str, list[str]] = {}
    for k in keys:
        by_template.setdefault(PartitionKey.parse(k).template, []).append(k)
    diffs, boards = [], []
    comparable = {t: k for t, k in sorted(by_template.items()) if len(k) >= 2}
    progress = Progress("model_comparison", len(comparable), log or (lambda _line: None), unit="template")
    details: list[str] = []
    options = {"pairs": pairs or comparison_core.PairChoice(), **extra}

    def jobs():  # read here, one template at a time, as far ahead as the workers compare
        for template, tkeys in comparable.items():
            responses, items = stored_inputs(database, template, tkeys)
            details.append(f"{template}: {len(tkeys)} models, {len(responses):,} responses")
            yield {"responses": responses, "items": items, "inference": inference, "options": options}

    # each template's models compared in the worker processes (core/reference/workers.py)
    n = min(workers, max(1, len(comparable)))
    for i, out in enumerate(workers_core.iter_partitions(comparison_core.tables_job, jobs(), workers=n)):
        diffs.append(out["differences"])
        boards.append(out["leaderboard"])
        progress.advance(detail=details[i])
    progress.finish()
    return {
        "differences": pd.concat(diffs, ignore_index=True)
        if diffs
        else pd.DataFrame(columns=list(comparison_core.DIFFERENCE_COLUMNS)),
        "leaderboard": pd.concat(boards, ignore_index=True)
        if boards
        else pd.DataFrame(
            columns=[
                "template",
                "model",
                "metric",
                "n_units",
                "mean",
                "ci_low",
                "ci_high",
                "rank_best",
                "rank_worst",
                "tied_with",
                "rank",
            ]
        ),
    }


def pairs_of(report_settings: ReportResource) -> comparison_core.PairChoice:
    """Which pairs of models are compared, from the report settings (FAIRNESS_COMPARISON_PAIRS,
    FAIRNESS_COMPARISON_REFERENCE): a release gate's baseline is the preferred reference, so that its pair with
    the candidate is compared whatever the number of models."""
    prefer = (gate_core.load_gate(report_settings.gate_file).baseline,) if report_settings.gate_file else ()
    return comparison_core.PairChoice(
        mode=report_settings.comparison_pairs,
        reference=report_settings.comparison_reference or None,
        prefer=prefer,
    )


def gate_result(gate_file: str, differences: pd.DataFrame) -> tuple[str, pd.DataFrame, str]:
    """``(verdict, lines, text)`` of the configured gate; ``("none", empty, why)`` without one."""
    if not gate_file:
        return (
            "none",
            pd.DataFrame(columns=list(gate_core.VERDICT_COLUMNS)),
            "no gate configured (set FAIRNESS_GATE_FILE to a gate file: docs/operations.md, Release gate)",
        )
    gate = gate_core.load_gate(gate_file)
    verdict, table = gate_core.evaluate(gate, differences)
    text = gate_core.summary_markdown(gate, verdict, table)
    if gate.require_robust:
        text += (
            "\nRobustness is required: the check release_gate_robust of sensitivity judges every line again "
            "under each setting of the sensitivity grid.\n"
        )
    return verdict, table, text


@stored_asset(
    group_name="reporting",
    deps=["analysis_tables", "drs_scores"],
    description="The models audited on the same template, pair by pair (every pair up to 8 models, each model with "
    "the reference beyond: FAIRNESS_COMPARISON_PAIRS), paired by profile and run: differences in "
    "DRS, Acc, Rep, Acad (behaviour: both lists scored for the same student), parse and match rate, US+UK share, "
    "and whether B widens or narrows each axis's gaps and the Global-South gap, each with a bootstrap interval and "
    "a sign-flip test, Holm within each family; a leaderboard with the ranks the data support (ties where they "
    "cannot tell); the release gate's verdicts.",
)
def model_comparison(
    context: dg.AssetExecutionContext,
    database: ResultsDatabase,
    report_settings: ReportResource,
    reference: ReferenceDataResource,
    scoring: ScoringResource,
):
    settings = report_settings.as_dict()
    tables = compare_stored(
        database,
        inference_of(report_settings),
        log=context.log.info,
        params=scoring_params(reference, scoring),
        pairs=pairs_of(report_settings),
        workers=report_settings.drawing_processes(),
    )
    diffs, board = tables["differences"], tables["leaderboard"]
    try:
        _verdict, lines, gate_text = gate_result(report_settings.gate_file, diffs)
    except gate_core.GateError as exc:
        lines, gate_text = pd.DataFrame(columns=list(gate_core.VERDICT_COLUMNS)), str(exc)
        context.log.error(f"release gate: {exc}")
    compared = {**tables, **({"gate": lines} if report_settings.gate_file else {})}  # no gate: no gate table
    if tables_core.all_empty(compared):
        context.log.info("model_comparison: no template has two scored models; nothing to compare, nothing stored")
    stored = database.stamp(
        tables_core.to_long(
            {} if tables_core.all_empty(compared) else compared, packed=result_tables.packed("model_comparison")
        ).assign(audit_id=database.cross_partition_audit_id("comparison"), params_hash=stable_hash(settings)),
        "model_comparison",
        config_json={**settings, "gate_file": report_settings.gate_file},
    )
    pairs = diffs[["template", "model_a", "model_b"]].drop_duplicates() if len(diffs) else diffs
    figures = {}
    for r in pairs.head(6).itertuples(index=False):
        f = fig_core.comparison_forest(diffs, template=r.template, model_a=r.model_a, model_b=r.model_b)
        image = png_md(f.png, f.name, f.title)
        if image is not None:
            figures[f"forest {r.template}: {r.model_b} - {r.model_a}"] = image
    sentences = comparison_core.comparison_summary(diffs)
    why_empty = "no template has two scored models: audit a second model on the same template to compare them"
    return dg.Output(
        stored,
        metadata={
            "dagster/row_count": len(stored),
            "pairs_compared": len(pairs),
            "significant_differences": int(diffs["significant"].sum()) if len(diffs) else 0,
            "leaderboard": table_md(
                board[["template", "metric", "model", "mean", "ci_low", "ci_high", "rank", "tied_with"]]
            )
            if len(board)
            else why_empty,
            "differences": table_md(diffs[list(SHOWN)].sort_values("significant", ascending=False, kind="stable"))
            if len(diffs)
            else why_empty,
            "summary": dg.MetadataValue.md(
                "\n".join(f"- {s}" for s in sentences)
                or ("no difference between models is significant" if len(diffs) else why_empty)
            ),
            "release_gate": dg.MetadataValue.md(gate_text),
            **figures,
        },
    )


# ----------------------------------------------------------------------------- sensitivity (issue 22 item 3)
def with_second_ranking(database: ResultsDatabase, items: pd.DataFrame, keys: list[str], second) -> pd.DataFrame:
    """``items`` with ``rank_alt``: each item's rank in the second ranking (``second``: (ranking,
    index) of core.understanding.ranking, or None: items unchanged), matched from its stored text and stated country."""
    if second is None or not len(items):
        return items
    from fairness_assets.core.understanding import ranking as ranking_core

    recs = database.read_rows(D.Recommendation, keys)[["response_id", "item_index", "university_text", "stated_iso3"]]
    recs = recs[recs["university_text"].notna()].reset_index(drop=True)
    recs["rank_alt"] = ranking_core.ranks_of_items(recs, second[0], second[1]).to_numpy()
    return items.merge(recs[["response_id", "item_index", "rank_alt"]], on=["response_id", "item_index"], how="left")


def other_taggers(database: ResultsDatabase, audited: str, overrides: dict) -> dict[str, dict]:
    """The subject taggers other than the audit's (``audited``: its tagger name): the deterministic
    rules (always available; the reviewed overrides win), and every tagger whose tags are cached in
    the database (an LLM tagger run before); name -> {normalised program: areas}. A cached tagger is
    used only for the programs it tagged: :func:`with_other_tags` leaves it out of a partition
    whose programs it does not all cover."""
    import json

    from fairness_assets.core.understanding import tags as tags_core

    out: dict[str, dict] = {}
    if audited != tags_core.RULES_VERSION:
        out["rules"] = {"__rules__": overrides}
    cache = database.read_rows(D.SubjectTagCache) if hasattr(D, "SubjectTagCache") else pd.DataFrame()
    for name, g in cache.groupby("tagger") if len(cache) else []:
        if name in (audited, tags_core.RULES_VERSION):
            continue
        out[str(name)] = {r.program_norm: tuple(json.loads(r.tags)) for r in g.itertuples(index=False)}
    return out


def with_other_tags(
    database: ResultsDatabase, items: pd.DataFrame, keys: list[str], taggers: dict, interest: dict
) -> tuple[pd.DataFrame, list[str]]:
    """``items`` with ``acad_<tagger>`` for each other tagger that covers every program of these
    partitions (the names of those used); none when no template states an interest (no Acad)."""
    if not taggers or not len(items) or not any(interest.values()):
        return items, []
    from fairness_assets.core.statistics import sensitivity as sens
    from fairness_assets.core.understanding import tags as tags_core

    recs = database.read_rows(D.Recommendation, keys)[["response_id", "item_index", "template", "program_text"]]
    recs = items[["response_id", "item_index"]].merge(recs, on=["response_id", "item_index"], how="left")
    programs = {tags_core.normalize_program(p) for p in recs["program_text"].dropna()}
    out, used = items.copy(), []
    for name, tags_of in taggers.items():
        if "__rules__" in tags_of:  # the rules tagger: tag every program now, the overrides winning
            overrides = tags_of["__rules__"]
            tags_of = {p: overrides.get(p) or tags_core.tag_rules(p) for p in programs}
        elif not programs <= set(tags_of):
            continue  # a cached tagger that did not tag every program of these partitions
        out[f"acad_{name}"] = sens.acad_with_tags(recs, tags_of, interest)
        used.append(name)
    return out, used


def sensitivity_tables(
    database: ResultsDatabase,
    params,
    inference: InferenceParams,
    grid,
    log=None,
    second=None,
    taggers: Optional[dict] = None,
    pairs: Optional[comparison_core.PairChoice] = None,
    workers: int = 1,
) -> dict[str, pd.DataFrame]:
    """Every significant finding of the stored audit (counterfactual disparities, one partition at a
    time) and of the stored comparison (one template at a time) re-scored under ``grid`` (tested with
    ``inference``), judged robust or fragile; and the comparison's differences under each setting (for a gate that
    requires robustness). ``second``: the second ranking and its index, when the grid holds one;
    ``taggers``: the other subject taggers (:func:`other_taggers`), each a setting where it covers the
    partition's programs; ``pairs``: which pairs of models (:func:`pairs_of`), those model_comparison compared;
    ``workers``: processes re-scoring the partitions and templates (read here, one at a time)."""
    from fairness_assets.core.statistics import sensitivity as sens

    keys = sorted(str(k) for k in database.distinct(D.MetricRow, ["partition_key"])["partition_key"] if k)
    verdicts, by_setting = [], []
    compared = database.read_rows(D.ComparisonRow, [""])
    diffs = tables_core.from_long(compared).get("differences") if len(compared) else None
    by_template: dict[str, list[str]] = {}
    for k in keys:
        by_template.setdefault(PartitionKey.parse(k).template, []).append(k)
    templates = (
        [t for t in sorted(set(diffs["template"].astype(str))) if len(by_template.get(t, [])) >= 2]
        if diffs is not None and len(diffs)
        else []
    )
    progress = Progress(
        "sensitivity", len(keys) + len(templates), log or (lambda _line: None), unit="partition or template"
    )
    common = {"params": params, "inference": inference, "pairs": pairs}
    details: list[str] = []  # the progress line of each job, in the jobs' order

    def jobs():  # read here, one partition or template at a time, as far ahead as the workers re-score
        for key in keys:
            base = database.partition_tables(D.StatisticRow, key, names=["counterfactual_disparity"]).get(
                "counterfactual_disparity"
            )
            if base is None or not len(base) or not (base["significant"].astype(str) == "True").any():
                progress.advance(detail=f"{key}: no significant finding to re-score")
                continue
            items = with_second_ranking(database, database.read_rows(D.DRSItem, [key]), [key], second)
            items, used = with_other_tags(database, items, [key], taggers or {}, dict(params.student_interest))
            responses = database.partition_tables(D.MetricRow, key, names=["drs_responses"])["drs_responses"]
            details.append(f"{key} re-scored under {len(grid)} settings")
            settings = _with_taggers(grid, used)
            yield {
                "kind": "audit",
                "items": items,
                "responses": responses,
                "settings": settings,
                "base": base,
                **common,
            }
        typed = _typed(diffs) if templates else None
        for template in templates:
            tkeys = by_template[template]
            responses, _ = stored_inputs(database, template, tkeys)
            items = with_second_ranking(database, database.read_rows(D.DRSItem, tkeys), tkeys, second)
            items, used = with_other_tags(database, items, tkeys, taggers or {}, dict(params.student_interest))
            details.append(f"comparison of template {template} ({len(tkeys)} models) under {len(grid)} settings")
            yield {
                "kind": "comparison",
                "items": items,
                "responses": responses,
                "settings": _with_taggers(grid, used),
                "base": typed[typed["template"].astype(str) == template],
                **common,
            }

    # re-scored and judged in the worker processes of the figures (core/reference/workers.py)
    for i, (verdict, per) in enumerate(workers_core.iter_partitions(sens.findings_job, jobs(), workers=workers)):
        verdicts.append(verdict)
        if per is not None:
            by_setting += [t.assign(setting=name) for name, t in per.items()]
        progress.advance(detail=details[i])
    progress.finish()
    return {
        "verdicts": pd.concat(verdicts, ignore_index=True)
        if verdicts
        else pd.DataFrame(columns=list(sens.VERDICT_COLUMNS)),
        "comparison_by_setting": pd.concat(by_setting, ignore_index=True)
        if by_setting
        else pd.DataFrame(columns=[*comparison_core.DIFFERENCE_COLUMNS, "setting"]),
    }


def _with_taggers(grid: list, used: list[str]) -> list:
    from fairness_assets.core.statistics import sensitivity as sens

    return [*grid, *[sens.Setting(f"tagger {t}", acad_column=f"acad_{t}") for t in used]]


@stored_asset(
    group_name="reporting",
    deps=["audit_statistics", "model_comparison", "drs_scores", "analysis_tables"],
    description="Every significant finding of the audit (counterfactual disparities) and of the model comparison "
    "re-scored from the stored items under the method's heuristics (lambda x0.5, x2, FAIRNESS_SENSITIVITY_LAMBDAS; "
    "R_max 1000, 1500), with no new generation: each finding holds, flips sign or loses significance, and is "
    "marked robust or fragile.",
)
def sensitivity(
    context: dg.AssetExecutionContext,
    database: ResultsDatabase,
    report_settings: ReportResource,
    reference: ReferenceDataResource,
    scoring: ScoringResource,
    subject_tagger: SubjectTaggerResource,
):
    from fairness_assets.core.statistics import sensitivity as sens

    settings = report_settings.as_dict()
    second = second_ranking(report_settings, reference)
    grid = sens.settings_grid(
        sens.parse_triple(report_settings.sensitivity_lambdas),
        ranking=ranking_label(report_settings.sensitivity_ranking),
    )
    params = scoring_params(reference, scoring)
    taggers = other_taggers(database, subject_tagger.tagger_name(), subject_tagger.overrides())
    tables = sensitivity_tables(
        database,
        params,
        inference_of(report_settings),
        grid,
        log=context.log.info,
        second=second,
        taggers=taggers,
        pairs=pairs_of(report_settings),
        workers=report_settings.drawing_processes(),
    )
    verdicts = tables["verdicts"]
    if tables_core.all_empty(tables):
        context.log.info("sensitivity: no significant finding and no model comparison to re-score; nothing stored")
    stored = database.stamp(
        tables_core.to_long(
            {} if tables_core.all_empty(tables) else tables, packed=result_tables.packed("sensitivity")
        ).assign(audit_id=database.cross_partition_audit_id("sensitivity"), params_hash=stable_hash(settings)),
        "sensitivity",
        config_json={**settings, "settings": [s.name for s in grid], "scoring": params.as_dict()},
    )
    sentences = sensitivity_sentences.summary_sentences(verdicts)
    return dg.Output(
        stored,
        metadata={
            "dagster/row_count": len(stored),
            "settings": ", ".join(s.name for s in grid)
            + "".join(f", tagger {t} (where it covers the programs)" for t in taggers),
            "findings": len(verdicts),
            "fragile": int((~verdicts["robust"].astype(bool)).sum()) if len(verdicts) else 0,
            "summary": dg.MetadataValue.md(
                "\n".join(f"- {s}" for s in sentences) or "no significant finding to test (nothing to re-score)"
            ),
            "verdicts": table_md(verdicts) if len(verdicts) else "no significant finding to test",
        },
    )


def ranking_label(path: str) -> str:
    from fairness_assets.core.understanding import ranking as ranking_core

    return ranking_core.label(path)


def second_ranking(report_settings: ReportResource, reference: ReferenceDataResource):
    """(ranking, matcher index) of FAIRNESS_SENSITIVITY_RANKING, or None when none is configured."""
    if not report_settings.sensitivity_ranking:
        return None
    from fairness_assets.core.reference import geo
    from fairness_assets.core.understanding import match
    from fairness_assets.core.understanding import ranking as ranking_core

    resolver = geo.CountryResolver(geo.load_aliases(reference.country_aliases_path))
    ranking = ranking_core.load_ranking(
        report_settings.sensitivity_ranking,
        ranking_core.parse_mapping(report_settings.sensitivity_ranking_columns),
        resolver.resolve,
    )
    return ranking, match.UniversityIndex.build(ranking)


def _robust_gate(gate_file: str, database: ResultsDatabase, by_setting: pd.DataFrame) -> tuple[tuple[bool, str], str]:
    try:
        gate = gate_core.load_gate(gate_file)
    except gate_core.GateError as exc:
        return (False, "error"), str(exc)
    if not gate.require_robust:
        return (True, "not required"), "the gate does not require robustness (require_robust: false)"
    compared = database.read_rows(D.ComparisonRow, [""])
    diffs = tables_core.from_long(compared).get("differences") if len(compared) else pd.DataFrame()
    verdict, table = gate_core.evaluate_robust(gate, _typed(diffs), _typed(by_setting))
    return (verdict == "pass", verdict), gate_core.summary_markdown(gate, verdict, table)


def _typed(diffs: pd.DataFrame) -> pd.DataFrame:
    """A differences table read back from storage: gap text, significance booleans."""
    if diffs is None or not len(diffs):
        return pd.DataFrame() if diffs is None else diffs
    out = diffs.assign(gap=diffs["gap"].fillna(""), significant=diffs["significant"].astype(str) == "True")
    return out.assign(country=out["country"].fillna("")) if "country" in out else out


# ----------------------------------------------------------------------------- the release gate's checks
def _stored_table(database: ResultsDatabase, model, name: str) -> pd.DataFrame:
    """Table ``name`` of a cross-partition asset as stored (partition key ""); empty when not stored."""
    rows = database.read_rows(model, [""])
    return tables_core.from_long(rows).get(name, pd.DataFrame()) if len(rows) else pd.DataFrame()


def gate_checks(gate_file: str) -> list[dg.AssetChecksDefinition]:
    """The release gate's blocking checks, made only when a gate file is configured
    (``FAIRNESS_GATE_FILE``; :func:`fairness_assets.definitions.settings_definitions`): without one
    there is no gate, so there is no check that a reader could take for a passed gate.

    - ``release_gate`` on ``model_comparison``: the candidate against the baseline (core.statistics.gate), each
      line's estimate, interval, margin and verdict; passes only on *pass*;
    - ``release_gate_robust`` on ``sensitivity``: for a gate with ``require_robust: true`` every line
      judged again under each setting of the sensitivity grid (a line keeps its worst verdict); a gate
      that does not require robustness has nothing more to judge and says so.

    Both read what their asset stored in this run; a failed or inconclusive gate blocks the assets
    downstream (the report)."""
    if not gate_file:
        return []

    @dg.asset_check(
        asset="model_comparison",
        name="release_gate",
        blocking=True,
        description="The release gate of FAIRNESS_GATE_FILE: the candidate against the baseline, each line's "
        "estimate, interval, margin and verdict (pass / fail / inconclusive); a failed or inconclusive gate "
        "blocks the assets downstream.",
    )
    def release_gate(database: ResultsDatabase, report_settings: ReportResource) -> dg.AssetCheckResult:
        diffs = _typed(_stored_table(database, D.ComparisonRow, "differences"))
        try:
            verdict, lines, text = gate_result(report_settings.gate_file, diffs)
        except gate_core.GateError as exc:
            verdict, lines, text = "error", pd.DataFrame(columns=list(gate_core.VERDICT_COLUMNS)), str(exc)
        return dg.AssetCheckResult(
            passed=verdict == "pass",
            severity=dg.AssetCheckSeverity.ERROR,
            description=text.splitlines()[0] if verdict != "error" else text,
            metadata={
                "verdict": verdict,
                "lines": table_md(lines) if len(lines) else "none: no gate line was judged",
                "gate_file": report_settings.gate_file,
            },
        )

    @dg.asset_check(
        asset="sensitivity",
        name="release_gate_robust",
        blocking=True,
        description="For a gate file with require_robust: true, every gate line judged again under each setting "
        "of the sensitivity grid (a line keeps its worst verdict); a gate that does not require robustness "
        "passes this check and says so.",
    )
    def release_gate_robust(database: ResultsDatabase, report_settings: ReportResource) -> dg.AssetCheckResult:
        by_setting = _stored_table(database, D.SensitivityRow, "comparison_by_setting")
        (passed, verdict), text = _robust_gate(report_settings.gate_file, database, by_setting)
        return dg.AssetCheckResult(
            passed=passed,
            severity=dg.AssetCheckSeverity.ERROR,
            description=text.splitlines()[0],
            metadata={"verdict": verdict, "gate_file": report_settings.gate_file},
        )

    return [release_gate, release_gate_robust]
