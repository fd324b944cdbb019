"""Sensitivity of the conclusions to the method's heuristics (issue 22 item 3).

The study's lambdas per class and its R_max are heuristics. This module re-scores the stored items
(no new generation: the distance, lambda, rank and Acad each item was scored with are kept in
``drs_items``) under a grid of settings, recomputes the findings, and says for every significant
finding of the audit (a counterfactual disparity, ``stats.counterfactual_disparity``) and of the
model comparison (a difference between two models, ``core.statistics.comparison``) whether it **holds** in
every setting (same sign, still significant), **flips** sign in one, or **loses significance** in
one. A finding that holds everywhere is ``robust``; any other is ``fragile``.

The settings (:func:`settings_grid`): lambda x0.5 and x2 (every value of the design's lambda axis:
the study's classes), a user-given lambda triple (one lambda per km for each value of the lambda axis,
in the design's order: the study's high, middle, low), R_max 1000 and 1500, and a second ranking file
when one is given (THE,
ARWU: ``core.understanding.ranking``; the items are matched to it again and get its ranks). Acc is
``exp(-lambda d)`` with the item's own capital distance; Rep is ``(R_max - rank) / (R_max - R_min)``
(0 beyond R_max or unmatched); DRS the renormalised weighted mean (``core.scoring.metrics``'s formulas).
Another subject tagger (the deterministic rules when the audit used the LLM tagger, an LLM tagger
whose cached tags cover every program) gives Acad with its tags (:func:`acad_with_tags`).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Mapping, Optional, Sequence

import numpy as np
import pandas as pd

from ..reference import axes
from ..reference.corpus import RepParams, global_rep  # noqa: F401 - used by callers re-scoring Rep
from ..scoring import metrics as mx
from . import comparison as comparison_core
from . import stats as st
from .inference import DEFAULT_INFERENCE, InferenceParams

FINDING_KEYS = {
    "audit": ["model", "template", "attribute", "value_a", "value_b", "metric"],
    "comparison": ["template", "model_a", "model_b", "family", "metric", "gap", "country"],
}
VERDICT_COLUMNS = (
    "source",
    "finding",
    "model",
    "template",
    "metric",
    "estimate",
    "p_adjusted",
    "verdict",
    "robust",
    "settings_holding",
    "settings_flipping",
    "settings_losing",
    "worst_setting",
    "worst_estimate",
    "worst_p_adjusted",
)


@dataclass(frozen=True)
class Setting:
    """One re-scoring: ``lambda_scale`` times each lambda, or ``lambdas`` per value of the design's lambda
    axis (the study's classes); ``r_max``."""

    name: str
    lambda_scale: float = 1.0
    lambdas: Optional[Mapping[str, float]] = None
    r_max: Optional[float] = None
    rank_column: Optional[str] = (
        None  # a second ranking: the items' rank in it (core.understanding.ranking.ranks_of_items)
    )
    acad_column: Optional[str] = None  # another subject tagger: the items' Acad with its tags (:func:`acad_with_tags`)


def settings_grid(
    lambda_triple: Optional[Sequence[float]] = None,
    r_max_values: Sequence[float] = (1000.0, 1500.0),
    ranking: str = "",
    taggers: Sequence[str] = (),
) -> list[Setting]:
    """lambda x0.5, x2, the user's lambda triple when given (one per value of the design's lambda
    axis, in its order: the study's high, middle, low), each R_max, and a second ranking when given
    (``ranking``: its label; the items then need a ``rank_alt`` column). A design without a lambda
    axis has no lambda settings (nothing is scored with a lambda); a triple given then is an error."""
    lam = axes.lambda_axis()
    out = [Setting("lambda x0.5", lambda_scale=0.5), Setting("lambda x2", lambda_scale=2.0)] if lam else []
    if lambda_triple:
        if lam is None:
            raise ValueError(
                f"a lambda triple {list(lambda_triple)} was given, but the design has no lambda axis to apply it to"
            )
        values = axes.values(lam)
        if len(lambda_triple) != len(values) or any(not (float(v) >= 0) for v in lambda_triple):
            raise ValueError(
                f"the lambda triple must be {len(values)} numbers >= 0 ({', '.join(values)} per km), "
                f"got {list(lambda_triple)}"
            )
        lams = [float(v) for v in lambda_triple]
        out.append(Setting(f"lambda {'/'.join(f'{v:g}' for v in lams)}", lambdas=dict(zip(values, lams, strict=True))))
    out += [Setting(f"R_max {r:g}", r_max=float(r)) for r in r_max_values]
    if ranking:
        out.append(Setting(ranking, rank_column="rank_alt"))
    out += [Setting(f"tagger {t}", acad_column=f"acad_{t}") for t in taggers]
    return out


def acad_with_tags(
    items: pd.DataFrame, tags_of: Mapping[str, tuple], interest: Mapping[str, Sequence[str]]
) -> np.ndarray:
    """Acad of each item (``template``, ``program_text``) with another tagger's tags (``tags_of``:
    normalised program name -> areas): Jaccard of the template's student interest and the program's
    areas, missing for templates without an interest and for untagged programs (METHOD.md §5)."""
    from ..understanding.tags import normalize_program

    out = np.full(len(items), np.nan)
    programs = items["program_text"].map(lambda p: normalize_program(p) if isinstance(p, str) else "")
    for template, wanted in interest.items():
        if not wanted:
            continue
        sel = (items["template"] == template).to_numpy()
        t_s = frozenset(wanted)
        for i in np.flatnonzero(sel):
            tags = tags_of.get(programs.iloc[i])
            out[i] = mx.jaccard(t_s, frozenset(tags)) if tags else np.nan
    return out


def parse_triple(text: str) -> Optional[tuple[float, ...]]:
    """``"0.0002,0.001,0.002"`` -> one lambda per value of the design's lambda axis, in its order (the
    study's high, middle, low); empty -> None; anything else an error naming it."""
    if not str(text or "").strip():
        return None
    lam = axes.lambda_axis()
    if lam is None:
        raise ValueError(f"the sensitivity lambda triple {text!r} was given, but the design has no lambda axis")
    values = axes.values(lam)
    n, words = len(values), ",".join(values)
    try:
        vals = tuple(float(v) for v in str(text).split(","))
    except ValueError as exc:
        raise ValueError(f"the sensitivity lambda triple {text!r} is not {n} numbers ({words} per km)") from exc
    if len(vals) != n or min(vals) < 0:
        raise ValueError(f"the sensitivity lambda triple {text!r} must be {n} numbers >= 0 ({words})")
    return vals


def rescore_items(items: pd.DataFrame, setting: Setting, params: mx.ScoringParams) -> pd.DataFrame:
    """``drs_items`` re-scored under ``setting`` (Acc, Rep, DRS; Acad as scored)."""
    out = items.copy()
    lam = pd.to_numeric(out["lambda_per_km"], errors="coerce").to_numpy(dtype=float)
    if setting.lambdas is not None:
        axis = axes.lambda_axis()
        if axis is None or axis not in out.columns:
            raise ValueError(
                f"setting {setting.name!r} gives a lambda per value of the lambda axis, but "
                + ("the design has none" if axis is None else f"the items have no {axis!r} column")
            )
        lam = out[axis].map(dict(setting.lambdas)).to_numpy(dtype=float)
    lam = lam * setting.lambda_scale
    acc = mx.accessibility(pd.to_numeric(out["distance_km"], errors="coerce").to_numpy(dtype=float), lam)
    rep = pd.to_numeric(out["rep"], errors="coerce").to_numpy(dtype=float)
    if setting.r_max is not None or setting.rank_column is not None:
        if setting.rank_column is not None and setting.rank_column not in out:
            raise ValueError(
                f"setting {setting.name!r}: the items have no {setting.rank_column!r} column (their rank "
                "in the second ranking: core.understanding.ranking.ranks_of_items)"
            )
        rank = pd.to_numeric(out[setting.rank_column or "rank"], errors="coerce").to_numpy(dtype=float)
        rep = global_rep(rank, RepParams(params.r_min, setting.r_max or params.r_max))
    if setting.acad_column is not None and setting.acad_column not in out:
        raise ValueError(
            f"setting {setting.name!r}: the items have no {setting.acad_column!r} column (their Acad "
            "with that tagger's tags: acad_with_tags)"
        )
    acad_col = setting.acad_column or "acad"
    acad = (
        pd.to_numeric(out[acad_col], errors="coerce").to_numpy(dtype=float)
        if acad_col in out
        else np.full(len(out), np.nan)
    )
    out["acad"] = acad
    drs, _ = mx.weighted_mean([acc, rep, acad], [params.w_acc, params.w_rep, params.w_acad])
    out["acc"], out["rep"], out["drs"] = acc, rep, drs
    return out


def rescore_responses(
    items: pd.DataFrame, responses: pd.DataFrame, setting: Setting, params: mx.ScoringParams
) -> pd.DataFrame:
    """The per-response scores (``drs_responses``) of ``responses`` under ``setting``."""
    return mx.drs_responses(rescore_items(items, setting, params), responses)


def _label(row: pd.Series, source: str) -> str:
    if source == "audit":
        return f"{row['attribute']}: {row['value_b']} - {row['value_a']}, {row['metric']}"
    gap = f" ({row['gap']} gap)" if isinstance(row.get("gap"), str) and row.get("gap") else ""
    country = f" ({row['country']})" if isinstance(row.get("country"), str) and row.get("country") else ""
    return f"{row['model_b']} - {row['model_a']}, {row['metric']}{gap}{country}"


def judge(base: pd.DataFrame, per_setting: Mapping[str, pd.DataFrame], source: str) -> pd.DataFrame:
    """One verdict row per significant finding of ``base`` (the audit's or the comparison's table)
    against the same table recomputed under each setting (``per_setting``: name -> table)."""
    keys = FINDING_KEYS[source]  # (a comparison's GRS finding is also keyed by its country)
    sig = base[base["significant"].map(lambda v: str(v) == "True" or v is True)] if len(base) else base
    rows = []
    for _, f in sig.iterrows():
        est0 = float(f["mean_diff"])
        holding, flipping, losing = [], [], []
        worst = (None, est0, float(f["p_adjusted"]))
        if source == "comparison" and str(f.get("family")) == "geography":
            holding = list(per_setting)  # coverage and GRS use neither lambda nor R_max: the same in every setting
        for name, t in ({} if holding else per_setting).items():
            m = t
            for k in keys:
                if k in m.columns:
                    m = m[m[k].astype(str) == str(f[k] if pd.notna(f[k]) else "")]
            if not len(m):
                losing.append(name)
                continue
            r = m.iloc[0]
            est, sig_now = float(r["mean_diff"]), str(r["significant"]) == "True" or r["significant"] is True
            if np.sign(est) != np.sign(est0) and sig_now:
                flipping.append(name)
            elif np.sign(est) != np.sign(est0) or not sig_now:
                losing.append(name)
            else:
                holding.append(name)
            if worst[0] is None or float(r["p_adjusted"]) > worst[2] or np.sign(est) != np.sign(est0):
                worst = (name, est, float(r["p_adjusted"]))
        verdict = "flips sign" if flipping else "loses significance" if losing else "holds"
        rows.append(
            {
                "source": source,
                "finding": _label(f, source),
                "model": f.get("model", f.get("model_b", "")),
                "template": f["template"],
                "metric": f["metric"],
                "estimate": est0,
                "p_adjusted": float(f["p_adjusted"]),
                "verdict": verdict,
                "robust": verdict == "holds",
                "settings_holding": ", ".join(holding),
                "settings_flipping": ", ".join(flipping),
                "settings_losing": ", ".join(losing),
                "worst_setting": worst[0] or "",
                "worst_estimate": worst[1],
                "worst_p_adjusted": worst[2],
            }
        )
    return pd.DataFrame(rows, columns=list(VERDICT_COLUMNS))


def audit_findings(
    items: pd.DataFrame,
    responses: pd.DataFrame,
    settings: Sequence[Setting],
    params: mx.ScoringParams,
    *,
    inference: InferenceParams = DEFAULT_INFERENCE,
) -> dict[str, pd.DataFrame]:
    """``counterfactual_disparity`` of one partition under each setting (name -> table), with ``inference``."""
    return {
        s.name: st.counterfactual_disparity(rescore_responses(items, responses, s, params), inference=inference)
        for s in settings
    }


def comparison_findings(
    items: pd.DataFrame,
    responses: pd.DataFrame,
    settings: Sequence[Setting],
    params: mx.ScoringParams,
    *,
    inference: InferenceParams = DEFAULT_INFERENCE,
    pairs: Optional[comparison_core.PairChoice] = None,
) -> dict[str, pd.DataFrame]:
    """``compare_models`` of one template's models under each setting (name -> table), with ``inference``;
    ``pairs``: the pairs of models compared (comparison.PairChoice), model_comparison's."""
    return {
        s.name: comparison_core.compare_models(
            rescore_responses(items, responses, s, params),
            items[["response_id", "iso3"]],
            inference=inference,
            pairs=pairs or comparison_core.PairChoice(),
        )
        for s in settings
    }


def findings_job(job: Mapping) -> tuple[pd.DataFrame, Optional[dict[str, pd.DataFrame]]]:
    """One partition's findings (``job["kind"] == "audit"``) or one template's comparison (``"comparison"``)
    re-scored under ``job["settings"]`` and judged against ``job["base"]``, as a job of
    core/reference/workers.py: returns the verdicts and, for a comparison, its differences per setting."""
    kw = {"inference": job["inference"]}
    if job["kind"] == "audit":
        per = audit_findings(job["items"], job["responses"], job["settings"], job["params"], **kw)
        return judge(job["base"], per, "audit"), None
    per = comparison_findings(job["items"], job["responses"], job["settings"], job["params"], pairs=job["pairs"], **kw)
    return judge(job["base"], per, "comparison"), per
