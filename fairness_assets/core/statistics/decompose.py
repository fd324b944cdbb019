"""Behaviour and needs of every counterfactual contrast, and envy (issue 20, items 1-2;
METHOD.md §10; docs/statistics.md, "Behaviour and needs of every counterfactual contrast").

The counterfactual pairs are those of ``stats.counterfactual_disparity``: for an attribute (an axis
of the active design: the study's gender, economic class, nationality) and two of its values a < b
(sorted), the strata are the
groups of profiles that agree on every other profile attribute, within one model x template;
each stratum gives one paired difference, the mean over its runs. Here each pair's outcome
difference is split in two, with every list *scored for a given student*:

- ``F[s, x, y]``: the mean over the runs of stratum s of the metric of the lists received by
  value x's profile, scored with the position of value y's profile (its value of the design's
  ``home`` axis: the home country, hence the capital distances; and of its ``lambda`` axis, the
  study's class, hence lambda).
- total     = F[b, b] - F[a, a]                        (the outcome, as the disparity reports it)
- behaviour = 1/2 [F[b, a] - F[a, a]] + 1/2 [F[b, b] - F[a, b]]
  (b's lists minus a's lists, both scored for a's students, and both scored for b's students;
  averaged, so the split does not depend on a reference value)
- needs     = total - behaviour = 1/2 [F[b, b] - F[b, a]] + 1/2 [F[a, b] - F[a, a]]
  (the same lists scored for b's position minus for a's position).

Rep, Acad and the US+UK share do not depend on the student, and no metric depends on an axis of
position kind ``none`` (METHOD.md §10-11: the study's gender, or a disability; a pair of its values
shares the home and the lambda axis's value): there needs is 0 by construction. It is returned as
exactly 0, with ``by_construction`` True and a note, and is not tested.

Envy: for each value a and each other value b, the share of a's students (stratum x run) whose
own list scores lower, for them, than the list b's profile received in the same stratum and run.

Intervals and tests reuse the kernels of ``core.statistics.stats`` (cluster bootstrap over strata, paired
sign-flip test, Holm / BH). Pure: pandas and numpy only; no Dagster, no database. Not yet wired
into the assets, the report or the geographic contrasts.
"""

from __future__ import annotations

import itertools
from typing import Mapping, Optional, Sequence

import numpy as np
import pandas as pd

from ..common import metric_catalogue as catalogue
from ..reference import axes
from ..scoring import metrics as mx
from . import stats as st
from .inference import DEFAULT_INFERENCE, InferenceParams

DECOMPOSE_METRICS = catalogue.names("decompose")
ENVY_METRICS = catalogue.names("response")
# metrics that change with the student's position
STUDENT_DEPENDENT = catalogue.names("decompose", position_dependent=True)
COMPONENTS = ("total", "behaviour", "needs")
BY_CONSTRUCTION_NOTE = "needs is 0 by construction"

DECOMPOSITION_COLUMNS = [
    "model",
    "template",
    "attribute",
    "value_a",
    "value_b",
    "metric",
    "component",
    "n_strata",
    "n_pairs",
    "mean_diff",
    "share_of_total",
    "behaviour_a_students",
    "behaviour_b_students",
    *st.INFERENCE_COLUMNS,
    "by_construction",
    "note",
]
ENVY_COLUMNS = [
    "model",
    "template",
    "attribute",
    "group",
    "other_group",
    "metric",
    "n_strata",
    "n_students",
    "envy_share",
    "tie_share",
    "ci_low",
    "ci_high",
    "level",
    "n_boot",
]


def position_attributes() -> tuple[str, ...]:
    """The attributes that move the student's position: the active design's ``lambda`` and ``home``
    axes (those it has). A pair of values of any other axis has needs 0 by construction."""
    return axes.names(exclude=("none",))


# ----------------------------------------------------------------------------- cross scores
class _Cross:
    """Every list of one partition x attribute scored for every position of its stratum.

    ``values``: the attribute's values (sorted); ``strata``: S; ``F`` (S, V_list, V_pos, M): mean
    over the profile's scored responses; ``G`` (S, V_list, R, V_pos, M): per run (NaN where the
    profile has no scored response in that run); ``exists`` (S, V): the profile is in the data."""

    def __init__(self, values, metrics, F, G, exists):
        self.values, self.metrics, self.F, self.G, self.exists = values, metrics, F, G, exists


def scored_items(items: pd.DataFrame) -> pd.DataFrame:
    it = items[items["university_text"].notna()] if "university_text" in items.columns else items
    missing = [c for c in ("response_id", "run", "iso3", "rep") if c not in it.columns]
    if missing:
        raise ValueError(f"items lack the column(s) {missing} (the drs_items table is expected)")
    return it


def _cross_scores(
    part: pd.DataFrame,
    attr: str,
    metrics: Sequence[str],
    mat: np.ndarray,
    pos_of: Mapping[str, int],
    student_iso3: Mapping[str, str],
    params: mx.ScoringParams,
) -> Optional[_Cross]:
    """The scores of one partition's items (rows with ``attr`` set) for one attribute."""
    part = part[part[attr].notna()]
    if part.empty:
        return None
    others = [a for a in st.profile_attributes() if a != attr and a in part.columns]
    keys = st.key_frame(part, others)
    s_code = keys.groupby(others, sort=True).ngroup().to_numpy() if others else np.zeros(len(part), np.int64)
    values = np.array(sorted(part[attr].unique()), dtype=object)
    v_code = pd.Categorical(part[attr], categories=values).codes.astype(np.int64)
    runs = np.array(sorted(part["run"].dropna().unique()))
    r_code = pd.Categorical(part["run"], categories=runs).codes.astype(np.int64)
    n_s, n_v, n_r = int(s_code.max()) + 1, len(values), len(runs)
    # the position of the profile (stratum s, value v): its value of the home axis and of the lambda axis
    first = np.unique(s_code, return_index=True)[1]  # one row per stratum, in stratum order

    def position(col: Optional[str]) -> np.ndarray:
        if col is not None and col == attr:
            return np.broadcast_to(values[None, :], (n_s, n_v))
        if col is not None and col in part.columns:
            return np.broadcast_to(part[col].to_numpy(dtype=object)[first][:, None], (n_s, n_v))
        return np.full((n_s, n_v), None, dtype=object)  # no such axis: no home country / no lambda

    iso = np.vectorize(lambda n: student_iso3.get(n) if isinstance(n, str) else None, otypes=[object])(
        position(axes.home())
    )
    lam = np.vectorize(lambda c: params.lambdas.get(c, np.nan) if isinstance(c, str) else np.nan, otypes=[float])(
        position(axes.lambda_axis())
    )
    pos_idx = np.vectorize(lambda c: pos_of.get(c, -1) if isinstance(c, str) else -1, otypes=[np.int64])(iso)
    item_iso = part["iso3"].to_numpy(dtype=object)
    item_idx = np.array([pos_of.get(c, -1) if isinstance(c, str) else -1 for c in item_iso], dtype=np.int64)
    # a pair of known countries missing from the distance table is an error, as in metrics.drs_items
    known_pos = np.array([isinstance(c, str) for c in iso.ravel()]).reshape(iso.shape)
    if (known_pos & (pos_idx < 0)).any() or (np.array([isinstance(c, str) for c in item_iso]) & (item_idx < 0)).any():
        unknown = sorted({c for c in [*iso.ravel(), *item_iso] if isinstance(c, str) and c not in pos_of})
        raise ValueError(f"capital distance unknown for {unknown[:5]}: extend the distance table to these countries")
    n = len(part)
    vals = np.full((n, n_v, len(metrics)), np.nan)
    p_idx = pos_idx[s_code]  # (n, V)
    ok = (p_idx >= 0) & (item_idx[:, None] >= 0)
    dist = np.full((n, n_v), np.nan)
    dist[ok] = mat[p_idx[ok], np.broadcast_to(item_idx[:, None], (n, n_v))[ok]]
    acc = mx.accessibility(dist, lam[s_code])
    rep = np.broadcast_to(pd.to_numeric(part["rep"], errors="coerce").to_numpy(dtype=float)[:, None], (n, n_v))
    acad_item = (
        pd.to_numeric(part["acad"], errors="coerce").to_numpy(dtype=float)
        if "acad" in part.columns
        else np.full(n, np.nan)
    )
    acad = np.broadcast_to(acad_item[:, None], (n, n_v))
    located = np.array([isinstance(c, str) for c in item_iso])
    us_uk = np.where(located, np.isin(item_iso.astype(str), list(params.us_uk)), np.nan).astype(float)
    drs, _ = mx.weighted_mean(
        [acc.ravel(), np.ascontiguousarray(rep).ravel(), np.ascontiguousarray(acad).ravel()],
        [params.w_acc, params.w_rep, params.w_acad],
    )
    columns = {
        "drs": drs.reshape(n, n_v),
        "acc": acc,
        "rep": rep,
        "acad": acad,
        "us_uk_share": np.broadcast_to(us_uk[:, None], (n, n_v)),
    }
    for j, m in enumerate(metrics):
        vals[:, :, j] = columns[m]
    # per response: the mean of its items (a missing component is left out, as drs_responses)
    resp_codes, resp_ids = pd.factorize(part["response_id"])
    n_resp = len(resp_ids)
    has = ~np.isnan(vals)
    num = np.zeros((n_resp, n_v, len(metrics)))
    den = np.zeros_like(num)
    np.add.at(num, resp_codes, np.where(has, vals, 0.0))
    np.add.at(den, resp_codes, has.astype(float))
    with np.errstate(invalid="ignore", divide="ignore"):
        g = np.where(den > 0, num / np.where(den > 0, den, 1.0), np.nan)  # (responses, V_pos, M)
    first_item = np.unique(resp_codes, return_index=True)[1]
    rs, rv, rr = s_code[first_item], v_code[first_item], r_code[first_item]
    g_has = ~np.isnan(g)
    g0 = np.where(g_has, g, 0.0)
    pnum = np.zeros((n_s, n_v, n_v, len(metrics)))
    pden = np.zeros_like(pnum)
    np.add.at(pnum, (rs, rv), g0)
    np.add.at(pden, (rs, rv), g_has.astype(float))
    rnum = np.zeros((n_s, n_v, max(n_r, 1), n_v, len(metrics)))
    rden = np.zeros_like(rnum)
    ok_r = rr >= 0
    np.add.at(rnum, (rs[ok_r], rv[ok_r], rr[ok_r]), g0[ok_r])
    np.add.at(rden, (rs[ok_r], rv[ok_r], rr[ok_r]), g_has[ok_r].astype(float))
    with np.errstate(invalid="ignore", divide="ignore"):
        F = np.where(pden > 0, pnum / np.where(pden > 0, pden, 1.0), np.nan)
        G = np.where(rden > 0, rnum / np.where(rden > 0, rden, 1.0), np.nan)
    exists = np.zeros((n_s, n_v), dtype=bool)
    exists[s_code, v_code] = True
    return _Cross(values, list(metrics), F, G, exists)


def distance_table(distances: pd.DataFrame) -> tuple[np.ndarray, dict]:
    mat = distances.reindex(index=distances.index, columns=distances.index).to_numpy(dtype=float)
    return mat, {c: i for i, c in enumerate(distances.index)}


def _defined(part: pd.DataFrame, metrics: Sequence[str]) -> list[str]:
    """Metrics with a value somewhere in the partition (Acad only where a template defines it)."""
    out = []
    for m in metrics:
        if m == "acad":
            if "acad" in part.columns and pd.to_numeric(part["acad"], errors="coerce").notna().any():
                out.append(m)
        elif m == "us_uk_share":
            if part["iso3"].notna().any():
                out.append(m)
        elif m in ("drs", "acc", "rep"):
            out.append(m)
        else:
            raise ValueError(f"unknown metric {m!r}; the metrics are {DECOMPOSE_METRICS}")
    return out


def _each(items, distances, student_iso3, params, attributes, metrics):
    """(partition values, attribute, cross scores) for every partition and attribute."""
    it = scored_items(items)
    known = st.profile_attributes()
    attributes = known if attributes is None else tuple(attributes)
    unknown = [a for a in attributes if a not in known or a not in it.columns]
    if unknown:
        raise ValueError(
            f"unknown attribute(s) {unknown}; the profile attributes are {known} "
            f"(the items' columns among them: {[a for a in known if a in it.columns]})"
        )
    mat, pos_of = distance_table(distances)
    keys = [k for k in st.PARTITION_KEYS if k in it.columns]
    for pvals, part in st.partitions(it, keys):
        mets = _defined(part, metrics)
        if not mets:
            continue
        for attr in attributes:
            cross = _cross_scores(part, attr, mets, mat, pos_of, student_iso3, params)
            if cross is not None and len(cross.values) >= 2:
                yield pvals, attr, cross


# ----------------------------------------------------------------------------- behaviour and needs
def behaviour_needs(
    items: pd.DataFrame,
    distances: pd.DataFrame,
    student_iso3: Mapping[str, str],
    params: mx.ScoringParams,
    *,
    attributes: Optional[Sequence[str]] = None,
    metrics: Sequence[str] = DECOMPOSE_METRICS,
    inference: InferenceParams = DEFAULT_INFERENCE,
    _cross: Optional[list] = None,
) -> pd.DataFrame:
    """Every counterfactual pair's outcome difference split into behaviour and needs.

    ``items``: the ``drs_items`` table (``response_id``, ``model``, ``template``, one column per axis
    of the active design, ``run``, ``iso3``, ``rep``, ``acad``; rows without ``university_text`` are
    left out). ``attributes``: the axes whose pairs are split (None: every axis of the design). Acc
    and DRS are rescored here for every position with ``distances`` (the square capital-distance
    table, ISO3) and ``params`` (lambdas, weights), with the formulas of ``core.scoring.metrics``; Rep
    and Acad are the items' own; ``us_uk_share`` is the share of an answer's located items in
    ``params.us_uk``.

    One row per (model, template, attribute, value_a < value_b, metric, component), component in
    ``total`` / ``behaviour`` / ``needs`` (module docstring). ``mean_diff`` > 0: b higher. Units:
    the strata where both profiles have a scored value and each list can be scored for the other
    (``n_pairs``), so total = behaviour + needs in every unit. ``share_of_total`` = component mean /
    total mean. Behaviour rows also give ``behaviour_a_students`` (mean of F[b, a] - F[a, a]) and
    ``behaviour_b_students`` (mean of F[b, b] - F[a, b]): the lists compared for each side's
    students. Interval, sign-flip p (each component its own test, as
    ``stats.counterfactual_disparity``), and Holm (or BH) within each family (model, template,
    attribute, component). Needs rows where needs is 0 by construction (``by_construction``: a
    metric independent of the student, or an attribute of position kind ``none``: the study's gender,
    a disability) hold exactly 0, no test, and the
    marking / note ``"needs is 0 by construction"``. ``inference``: resamples, permutations, level,
    seed, correction, alpha.
    """
    correction, alpha = inference.correction, inference.alpha
    frames = []
    crosses = _cross if _cross is not None else _each(items, distances, student_iso3, params, attributes, metrics)
    for pvals, attr, cross in crosses:
        mets = cross.metrics
        F = cross.F
        pairs = list(itertools.combinations(range(len(cross.values)), 2))
        ia = np.array([p[0] for p in pairs])
        ib = np.array([p[1] for p in pairs])
        k, n_m = len(pairs), len(mets)
        f_aa, f_bb = F[:, ia, ia, :], F[:, ib, ib, :]  # (S, K, M): own lists, own position
        f_ba, f_ab = F[:, ib, ia, :], F[:, ia, ib, :]  # b's lists for a's students; a's lists for b's
        moves = attr in position_attributes()  # a none axis: needs 0 by construction for every metric
        zero = np.array([(m not in STUDENT_DEPENDENT) or not moves for m in mets])
        valid = ~(np.isnan(f_aa) | np.isnan(f_bb) | np.isnan(f_ba) | np.isnan(f_ab))
        total = np.where(valid, f_bb - f_aa, np.nan)
        beh_a = np.where(valid, f_ba - f_aa, np.nan)
        beh_b = np.where(valid, f_bb - f_ab, np.nan)
        behaviour = 0.5 * (beh_a + beh_b)
        behaviour = np.where(zero[None, None, :], total, behaviour)  # exact where the position cannot matter
        needs = np.where(zero[None, None, :], np.where(valid, 0.0, np.nan), total - behaviour)
        d = np.stack([total, behaviour, needs], axis=-1).reshape(F.shape[0], k * n_m * 3)  # pair, metric, component
        comp = np.tile(np.array(COMPONENTS, dtype=object), k * n_m)
        by_c = np.tile(np.repeat(zero, 3), k) & (comp == "needs")
        res = st.paired_test(
            np.where(by_c[None, :], np.nan, d), inference=inference, key=("decompose", *pvals.values(), attr)
        )
        n_pairs = valid.reshape(F.shape[0], k * n_m).sum(axis=0)
        res["n"] = np.repeat(n_pairs, 3)
        res["mean"] = np.where(by_c, np.where(res["n"] > 0, 0.0, np.nan), res["mean"])
        for key in ("sd", "lo", "hi"):
            res[key] = np.where(by_c & (res["n"] > 0), 0.0, res[key])
        with np.errstate(invalid="ignore", divide="ignore"):
            tot = np.repeat(res["mean"][comp == "total"], 3)
            share = np.where(tot != 0, res["mean"] / np.where(tot != 0, tot, 1.0), np.nan)
            n_valid = valid.sum(axis=0)
            mean_a = np.where(
                n_valid > 0, np.where(valid, beh_a, 0.0).sum(axis=0) / np.maximum(n_valid, 1), np.nan
            ).reshape(-1)
            mean_b = np.where(
                n_valid > 0, np.where(valid, beh_b, 0.0).sum(axis=0) / np.maximum(n_valid, 1), np.nan
            ).reshape(-1)
        is_beh = comp == "behaviour"
        present = np.repeat((cross.exists[:, ia] | cross.exists[:, ib]).sum(axis=0), n_m * 3)
        frames.append(
            pd.DataFrame(
                {
                    **pvals,
                    "attribute": attr,
                    "value_a": np.repeat(cross.values[ia], n_m * 3),
                    "value_b": np.repeat(cross.values[ib], n_m * 3),
                    "metric": np.tile(np.repeat(np.array(mets, dtype=object), 3), k),
                    "component": comp,
                    "n_strata": present.astype(np.int64),
                    "n_pairs": res["n"].astype(np.int64),
                    "mean_diff": res["mean"],
                    "share_of_total": share,
                    "behaviour_a_students": np.where(is_beh, np.repeat(mean_a, 3), np.nan),
                    "behaviour_b_students": np.where(is_beh, np.repeat(mean_b, 3), np.nan),
                    **st.inference_fields(res, inference=inference),
                    "by_construction": by_c,
                    "note": np.where(by_c, BY_CONSTRUCTION_NOTE, ""),
                }
            )
        )
    keys = [k for k in st.PARTITION_KEYS if k in items.columns]
    cols = [c for c in DECOMPOSITION_COLUMNS if c in keys or c not in st.PARTITION_KEYS]
    if not frames:
        return pd.DataFrame(columns=cols)
    out = pd.concat(frames, ignore_index=True)
    out["correction"] = correction
    out["family_size"] = 0
    out["p_adjusted"] = np.nan
    fam = [c for c in ("model", "template", "attribute", "component") if c in out.columns]
    pv = out["p_value"].to_numpy(dtype=float)
    for idx in out.groupby(fam, sort=False, dropna=False).indices.values():
        out.loc[out.index[idx], "p_adjusted"] = st.adjust_pvalues(pv[idx], correction)
        out.loc[out.index[idx], "family_size"] = int((~np.isnan(pv[idx])).sum())
    out["family_size"] = out["family_size"].astype(np.int64)
    out["alpha"] = alpha
    out["significant"] = (out["p_adjusted"] <= alpha).fillna(False).astype(bool)
    out["marking"] = np.where(
        out["by_construction"],
        BY_CONSTRUCTION_NOTE,
        np.where(
            out["p_value"].isna(), "too few pairs", np.where(out["significant"], "significant", "not significant")
        ),
    )
    return out[cols]


# ----------------------------------------------------------------------------- envy
def envy(
    items: pd.DataFrame,
    distances: pd.DataFrame,
    student_iso3: Mapping[str, str],
    params: mx.ScoringParams,
    *,
    attributes: Optional[Sequence[str]] = None,
    metrics: Sequence[str] = ENVY_METRICS,
    inference: InferenceParams = DEFAULT_INFERENCE,
    _cross: Optional[list] = None,
) -> pd.DataFrame:
    """Envy of each group towards each other group of the same attribute.

    A student of value a in stratum s and run r envies value b when the list b's profile received
    in the same stratum and run, scored for a's student (a's home country and lambda), scores
    strictly higher than a's own list: G[s, b, r, a] > G[s, a, r, a]. ``envy_share``: the share of
    a's students (stratum x run with both lists scored) who envy b; ``tie_share``: the share with
    equal scores (a profile-blind model gives each envy share about (1 - tie_share) / 2, whatever
    the group). Interval: percentile bootstrap resampling strata (the students of one stratum move
    together), ``inference.n_boot`` times (at ``inference.level``, seeded from ``inference.seed``). One
    row per (model, template, attribute, group, other_group, metric); columns ``ENVY_COLUMNS``. Rep and
    Acad envy compare the lists themselves (they do not depend on the student)."""
    n_boot, level, seed = inference.n_boot, inference.level, inference.seed
    frames = []
    crosses = _cross if _cross is not None else _each(items, distances, student_iso3, params, attributes, metrics)
    for pvals, attr, cross in crosses:
        mets = cross.metrics
        n_v = len(cross.values)
        ordered = [(a, b) for a in range(n_v) for b in range(n_v) if a != b]
        ia = np.array([p[0] for p in ordered])
        ib = np.array([p[1] for p in ordered])
        G = cross.G  # (S, V_list, R, V_pos, M)
        own = G[:, ia, :, ia, :]  # advanced indices first: (K, S, R, M)
        other = G[:, ib, :, ia, :]
        both = ~(np.isnan(own) | np.isnan(other))
        env = (both & (other > own)).sum(axis=2).astype(float)  # (K, S, M)
        tie = (both & (other == own)).sum(axis=2).astype(float)
        den = both.sum(axis=2).astype(float)
        k, n_s, n_m = env.shape
        num2 = env.transpose(1, 0, 2).reshape(n_s, k * n_m)
        tie2 = tie.transpose(1, 0, 2).reshape(n_s, k * n_m)
        den2 = den.transpose(1, 0, 2).reshape(n_s, k * n_m)
        lo = np.full(k * n_m, np.nan)
        hi = np.full(k * n_m, np.nan)
        for r, cols in st.validity_patterns(den2 > 0):
            if r.size < 2:
                continue
            w = st.boot_weights(st.cell_rng(seed, "envy", *pvals.values(), attr, r.tolist()), r.size, n_boot)
            lo[cols], hi[cols] = st.percentile_ci(num2[np.ix_(r, cols)], den2[np.ix_(r, cols)], w, level)
        tot = den2.sum(axis=0)
        with np.errstate(invalid="ignore", divide="ignore"):
            share = np.where(tot > 0, num2.sum(axis=0) / np.where(tot > 0, tot, 1.0), np.nan)
            ties = np.where(tot > 0, tie2.sum(axis=0) / np.where(tot > 0, tot, 1.0), np.nan)
        frames.append(
            pd.DataFrame(
                {
                    **pvals,
                    "attribute": attr,
                    "group": np.repeat(cross.values[ia], n_m),
                    "other_group": np.repeat(cross.values[ib], n_m),
                    "metric": np.tile(np.array(mets, dtype=object), k),
                    "n_strata": (den2 > 0).sum(axis=0).astype(np.int64),
                    "n_students": tot.astype(np.int64),
                    "envy_share": share,
                    "tie_share": ties,
                    "ci_low": lo,
                    "ci_high": hi,
                    "level": level,
                    "n_boot": n_boot,
                }
            )
        )
    keys = [k for k in st.PARTITION_KEYS if k in items.columns]
    cols = [c for c in ENVY_COLUMNS if c in keys or c not in st.PARTITION_KEYS]
    if not frames:
        return pd.DataFrame(columns=cols)
    return pd.concat(frames, ignore_index=True)[cols]


def decompose(
    items: pd.DataFrame,
    distances: pd.DataFrame,
    student_iso3: Mapping[str, str],
    params: mx.ScoringParams,
    *,
    attributes: Optional[Sequence[str]] = None,
    metrics: Sequence[str] = DECOMPOSE_METRICS,
    envy_metrics: Sequence[str] = ENVY_METRICS,
    inference: InferenceParams = DEFAULT_INFERENCE,
) -> dict[str, pd.DataFrame]:
    """Both tables, scoring the lists for every position once: ``{"behaviour_needs": ...,
    "envy": ...}`` (:func:`behaviour_needs`, :func:`envy`, with the same ``inference``)."""
    all_mets = list(dict.fromkeys([*metrics, *envy_metrics]))
    cross = list(_each(items, distances, student_iso3, params, attributes, all_mets))

    def only(ms):
        out = []
        for pvals, attr, c in cross:
            sel = [j for j, m in enumerate(c.metrics) if m in ms]
            out.append(
                (pvals, attr, _Cross(c.values, [c.metrics[j] for j in sel], c.F[..., sel], c.G[..., sel], c.exists))
            )
        return out

    return {
        "behaviour_needs": behaviour_needs(
            items, distances, student_iso3, params, inference=inference, _cross=only(metrics)
        ),
        "envy": envy(items, distances, student_iso3, params, inference=inference, _cross=only(envy_metrics)),
    }
