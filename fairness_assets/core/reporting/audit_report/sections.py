"""The report's sections of the analyses across partitions: the model comparison (issue 22), the sensitivity of
the findings (issue 22 item 3) and the matches to audit (issue 21)."""

from __future__ import annotations

from typing import Mapping, Optional

import pandas as pd

from ...common import result_tables as rt
from ...reference import axes
from ...reference import workers as workers_core
from .. import axis_words
from .. import figures as fig
from .. import report as rep

COMPARISON_TITLE = "Model comparison"


def _forest_job(job: tuple) -> fig.Figure:
    diffs, template, model_a, model_b = job
    return fig.comparison_forest(diffs, template=template, model_a=model_a, model_b=model_b)


def comparison_section(
    comparison: Optional[Mapping[str, pd.DataFrame]], *, workers: int = 1
) -> Optional[rep.ReportSection]:
    """The report's section comparing the models of each template (issue 22; ``comparison``: the
    tables of the ``model_comparison`` asset, :func:`core.statistics.comparison.tables_for` plus the gate's
    verdicts); None when no template has two models. ``workers``: processes drawing the forest plots."""
    from ...statistics import comparison as comparison_core

    diffs = (comparison or {}).get("differences")
    if diffs is None or not len(diffs):
        return None
    diffs = diffs.assign(significant=diffs["significant"].map(rep.truthy).eq(True))
    tables: dict[str, pd.DataFrame] = {}
    gate = (comparison or {}).get("gate")
    if gate is not None and len(gate):
        tables[rt.title("model_comparison", "gate")] = gate
    board = (comparison or {}).get("leaderboard")
    if board is not None and len(board):
        tables[rt.title("model_comparison", "leaderboard")] = board[
            [
                c
                for c in ("template", "metric", "model", "n_units", "mean", "ci_low", "ci_high", "rank", "tied_with")
                if c in board.columns
            ]
        ]
    order = (
        diffs.assign(_s=~diffs["significant"], _a=-diffs["mean_diff"].abs())
        .sort_values(["_s", "template", "model_a", "model_b", "family", "_a"], kind="stable")
        .index
    )
    tables[rt.title("model_comparison", "differences")] = diffs.loc[
        order, [c for c in comparison_core.DIFFERENCE_COLUMNS if c not in ("component", "correction")]
    ]
    # one forest plot a pair, drawn in ``workers`` processes (core/reference/workers.py), each from its pair's rows
    figures = workers_core.map_partitions(
        _forest_job,
        [
            (
                diffs[
                    (diffs["template"] == r.template)
                    & (diffs["model_a"] == r.model_a)
                    & (diffs["model_b"] == r.model_b)
                ],
                r.template,
                r.model_a,
                r.model_b,
            )
            for r in diffs[["template", "model_a", "model_b"]].drop_duplicates().itertuples(index=False)
        ],
        workers=workers,
    )
    intro = [
        "The models audited on the same template, pair by pair (every pair up to 8 models on a template, each "
        "model with the reference model beyond: FAIRNESS_COMPARISON_PAIRS), paired by profile and run (the same "
        "prompt and seed): the difference B - A of each metric per response (both lists scored for the same "
        "student, so all of it is behaviour), of the parse and match rates and the US+UK share, and the change of each "
        "group gap (B's gap minus A's: does B widen or narrow it?). Each difference has a 95% percentile "
        "bootstrap interval over the units (profiles, each over the runs both audits hold; runs for coverage and GRS; "
        "strata x runs for the gaps) and a sign-flip test, adjusted within template x "
        "pair x family. The leaderboard ranks the models by the paired tests: a rank range such as 1-2 says "
        "the data cannot tell those models apart."
    ]
    return rep.ReportSection("comparison", COMPARISON_TITLE, intro=intro, tables=tables, figures=figures)


SENSITIVITY_TITLE = "Sensitivity of the findings"


def sensitivity_section(verdicts: Optional[pd.DataFrame]) -> Optional[rep.ReportSection]:
    """Every significant finding re-scored under the method's heuristics (issue 22 item 3;
    :mod:`core.statistics.sensitivity`), marked robust or fragile; None when nothing was re-scored."""
    if verdicts is None or not len(verdicts):
        return None
    v = verdicts.assign(robust=verdicts["robust"].map(rep.truthy).eq(True))
    v = v.assign(_r=v["robust"]).sort_values(["_r", "source", "template"], kind="stable").drop(columns="_r")
    lam = axes.lambda_axis()  # the active design's (core/reference/axes.py): the study's economic class
    every = f"every {axis_words.gap_name()}" if lam else "every student (the design has no lambda axis)"
    intro = [
        "Every significant finding of the audit (a counterfactual disparity) and of the model comparison is "
        "computed again from the stored items under the method's heuristics: lambda halved and doubled for "
        f"{every} (and the lambda triple given, if any), R_max 1000 and 1500. A finding that keeps its "
        "sign and its significance in every setting is robust; one that flips sign or loses significance in "
        "any setting is fragile, and a decision should not rest on it alone. No answer is generated again."
    ]
    return rep.ReportSection(
        "sensitivity", SENSITIVITY_TITLE, intro=intro, tables={rt.title("sensitivity", "verdicts"): v}
    )


MATCHES_TITLE = "Matches to audit"


def matches_section(matches: Mapping[str, pd.DataFrame]) -> rep.ReportSection:
    """The parse-quality companion (issue 21): per partition, the most frequent matches not made by
    an exact corpus name, with the rule that made each, its score and the runner-up candidate."""
    tables = {
        f"{key}: the {len(df)} most frequent non-exact matches": df
        for key, df in sorted(matches.items())
        if df is not None and len(df)
    }
    notes = [
        f"{key}: every matched item was matched by an exact corpus name."
        for key, df in sorted(matches.items())
        if df is None or not len(df)
    ]
    intro = [
        "Every score rests on the match of the university the model named to one corpus university. Matches "
        "made by an exact name are not listed; the others are, most frequent first: the text as the model "
        "wrote it, the country it stated (ISO3), the corpus university it was matched to, the rule that matched "
        "(alias: the reviewed alias or former-name table; acronym; structure: the same name in another word "
        "order or language; completion: the text completed to a longer corpus name; fuzzy: a spelling "
        "variant), the score (0-100) and, for completions and fuzzy matches, the runner-up candidate with its "
        "score. A wrong row here is a wrong university in the scores: report it, or add the name to "
        "data/aliases (docs/parse_match.md)."
    ]
    return rep.ReportSection("matches", MATCHES_TITLE, intro=intro, tables=tables, notes=notes)
