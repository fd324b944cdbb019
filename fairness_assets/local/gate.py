"""``fairness-audit gate``: the release gate (core.statistics.gate) on a candidate model and its
baseline, scored from a responses file (as ``score`` does) or compared from the audits stored in a
database, and its verdict with the exit code it maps to (:data:`GATE_EXIT_CODES`)."""

from __future__ import annotations

from typing import Callable, Sequence

import pandas as pd

from resources.secrets import quote_userinfo
from resources.settings import ReferenceDataResource, ReportResource, ScoringResource

from ..core.common.partition import PartitionKey
from .failures import ScoreFailed, UsageError
from .score import output_folder, score_responses

GATE_EXIT_CODES = {"pass": 0, "fail": 1, "inconclusive": 2}  # `fairness-audit gate`; bad input is 2 too


def gate_audits(
    gate_path: str,
    out: str,
    responses: str = "",
    corpus_path: str = "",
    database_url: str = "",
    tagger: str = "rules",
    log: Callable[[str], None] = print,
    verbose: bool = False,
) -> str:
    """``fairness-audit gate``: the release gate of ``gate_path`` (core.statistics.gate) on a candidate and its
    baseline, and the verdict (``pass`` / ``fail`` / ``inconclusive``). With ``responses``, the file
    (both models' answers) is scored first, as ``score`` does, into ``out`` (and ``database_url``
    when given); without it, the audits already stored in ``database_url`` are compared. Writes
    ``out/gate.md`` (the verdict and every line, for CI logs) and ``out/gate.csv``. Both models must be
    in the file, which is checked before anything is scored. A partition of either model that failed
    to score or was taken over by another run, or a failure that concerns every partition, makes the
    gate inconclusive whatever its lines say (exit 2): its lines were not computed from this file's
    answers alone, or not from all of them."""
    # lazy: the results database, the code location and the statistics (see the package docstring)
    from resources import database as D

    from ..core.statistics import gate as gate_core
    from ..core.statistics import sensitivity as sens
    from ..defs.reporting.comparison import _typed, compare_stored, sensitivity_tables
    from ..defs.services import inference_of, scoring_params

    gate = gate_core.load_gate(gate_path)  # a bad gate file is named before any work
    outdir = output_folder(out)
    notes: list[str] = []
    undecided: list[str] = []  # failures that leave the gate undecided, whatever its lines say
    if responses:
        if not corpus_path:
            raise UsageError("gate --responses needs --corpus (the QS export the answers are matched to)")
        try:
            score_responses(
                responses,
                corpus_path,
                str(outdir),
                tagger=tagger,
                database_url=database_url,
                log=log,
                verbose=verbose,
                require_models=(gate.baseline, gate.candidate),
            )
        except ScoreFailed as exc:
            needed = _needed_failures(exc, (gate.baseline, gate.candidate))
            if needed:
                undecided = needed
            notes.append(
                f"{len(exc.failures)} scoring failure(s) (summary.md lists them)"
                + (
                    f"; {len(needed)} of them concern(s) the baseline's or the candidate's partitions or every "
                    "partition, so the gate is inconclusive whatever its lines say"
                    if needed
                    else "; none concerns the baseline's or the candidate's partitions"
                )
            )

        def exported(name: str) -> pd.DataFrame:
            path = outdir / f"{name}.csv"
            return _typed(pd.read_csv(path)) if path.exists() and path.stat().st_size else pd.DataFrame()

        diffs = exported("model_comparison_differences")
        by_setting = exported("sensitivity_comparison_by_setting")
    else:
        if not database_url:
            raise UsageError("gate needs --responses FILE (with --corpus) or --database URL holding both audits")
        database = D.ResultsDatabase(url=quote_userinfo(database_url))
        try:
            inference = inference_of(ReportResource())
            params = scoring_params(ReferenceDataResource(), ScoringResource())
            diffs = compare_stored(database, inference, log=log, params=params)["differences"]
            by_setting = pd.DataFrame()
            if gate.require_robust:  # the comparison re-scored under the sensitivity grid, from the stored items
                by_setting = _typed(
                    sensitivity_tables(database, params, inference, sens.settings_grid(), log=log)[
                        "comparison_by_setting"
                    ]
                )
        finally:
            database.dispose()
    audited = sorted(set(diffs["model_a"]) | set(diffs["model_b"])) if len(diffs) else []
    for model in (gate.baseline, gate.candidate):
        if model not in audited:
            notes.append(f"model {model!r} is not among the audited models compared ({', '.join(audited) or 'none'})")
    if gate.require_robust:
        verdict, table = gate_core.evaluate_robust(gate, diffs, by_setting)
    else:
        verdict, table = gate_core.evaluate(gate, diffs)
    if undecided or (notes and verdict == "pass"):
        verdict = "inconclusive"
    text = gate_core.summary_markdown(gate, verdict, table, notes)
    (outdir / "gate.md").write_text(text, encoding="utf-8")
    table.to_csv(outdir / "gate.csv", index=False)
    log(text)
    log(f"gate verdict: {verdict} (written to {outdir / 'gate.md'})")
    return verdict


def _needed_failures(failed: ScoreFailed, models: Sequence[str]) -> list[str]:
    """The failures of a ``score`` that a gate on ``models`` cannot look past: those of every partition
    (reference data, the cross-partition assets, the export) and those of a partition of one of the
    models, failed or taken over by another run."""

    def of_models(keys) -> bool:
        return any(PartitionKey.parse(k).model in models for k in keys)

    lines = [f.line() for f in failed.failures if not f.keys or of_models(f.keys)]
    lines += [f"partition {k}: {why}" for k, why in failed.not_scored.items() if of_models([k])]
    return list(dict.fromkeys(lines))
