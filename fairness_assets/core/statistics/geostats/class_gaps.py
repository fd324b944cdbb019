"""The gap of the design's ``lambda`` axis (its last value minus its first, :func:`lambda_gap`: the
study's class gap, low - high income) and its parts: :func:`class_gap_interactions` (whether the gap
differs between the values of another axis or between regions, with its behaviour and needs rows
given the items) and :func:`class_gap_decomposition` (every such gap split into what the model
recommended and the metric's needs weighting), with intervals and tests. The axes are the active
design's (core/reference/axes.py), read at call time; a design without a lambda axis has no such gap:
the tables are empty."""

from __future__ import annotations

import dataclasses
import itertools
from typing import Optional, Sequence

import numpy as np
import pandas as pd

from ...common import metric_catalogue as catalogue
from ...reference import axes
from ...scoring import metrics as mx
from .. import decompose as dc
from .. import stats as st
from ..inference import DEFAULT_INFERENCE, InferenceParams
from .cross import _group_sum
from .frames import BY_CONSTRUCTION_NOTE, DECOMPOSITION_COLUMNS, INTERACTION_COLUMNS, Replicates
from .paired import _cells, _correct, _prep, _ratio, _unit_cols
from .positions import Positions


def lambda_gap() -> Optional[tuple[str, str]]:
    """(first, last) value of the active design's lambda axis in its order (the gap is last - first:
    the study's ``("high", "low")``, low - high income); None without a lambda axis (or with fewer
    than two values)."""
    lam = axes.lambda_axis()
    vals = axes.values(lam) if lam else ()
    return (vals[0], vals[-1]) if len(vals) >= 2 else None


def interaction_factors() -> tuple[str, ...]:
    """The factors :func:`class_gap_interactions` splits the lambda axis's gap by in
    ``run.geo_statistics``: every other axis but the home one (the study's gender; a disability), then
    ``region`` where the design has a home axis (the student's home region). None without a lambda
    axis."""
    if axes.lambda_axis() is None:
        return ()
    return (*axes.names(exclude=("home", "lambda")), *(("region",) if axes.home() else ()))


def _cell_axes() -> tuple[str, ...]:
    """The axes of a cell of the gap's behaviour part: every axis but the lambda one (the study's
    gender x nationality), in the design's order."""
    return axes.names(exclude=("lambda",))


def class_gap_interactions(
    responses: pd.DataFrame,
    factor: str,
    *,
    metrics: Sequence[str] = catalogue.names("response"),  # drs, acc, rep, acad
    gap: Optional[tuple[str, str]] = None,
    replicates: Replicates = "runs",
    inference: InferenceParams = DEFAULT_INFERENCE,
    positions: Optional[Positions] = None,
    _cache: Optional[dict] = None,
) -> pd.DataFrame:
    """Is the gap of the lambda axis (``gap[1] - gap[0]``; by default its last value minus its first,
    :func:`lambda_gap`: the study's low - high) larger for some values of another axis, or for some
    regions?

    ``factor`` an axis (the study's ``gender``, a ``disability``): units are the values of the other
    axes but the lambda one (the study's nationalities; x runs); per unit and factor value, gap =
    mean(last) - mean(first). Rows ``kind="gap"``: each factor value's gap with interval (no test);
    ``kind="interaction"``: for each pair of factor values a < b, gap(b) - gap(a), paired over the
    units, with interval and permutation test. ``factor="region"`` (or ``north_south``): units are
    the values of the axes other than the home and lambda ones (the study's genders; x runs), gaps
    pool the region's home-axis values, and each region's gap is contrasted with the rest's
    (``value_b`` = "rest"). A design without a lambda axis: an empty table. Interaction rows are
    corrected within (model, template, analysis, component). Columns: ``INTERACTION_COLUMNS``.
    ``inference``: resamples, permutations, level, seed, correction, alpha.

    With ``positions`` (:class:`positions.Positions`: its ``items``, the ``drs_items``, and its
    ``params``), every gap and interaction also gets its ``behaviour`` and ``needs`` rows
    (``component``; the reported ones are ``total``): the behaviour part of a gap scores both
    values' lists for the same student (same value of every other axis and run: the study's gender,
    nationality and run; each value's lambda in turn, averaged, as :func:`class_gap_decomposition`),
    averaged over the unit's cells; needs = total - behaviour.
    Metrics that do not depend on lambda (Rep, Acad, the own-country / own-region shares): the
    whole gap is behaviour and needs is 0 by construction (not tested).
    """
    df, keys = _prep(responses, metrics)
    setup = _interaction_setup(df, factor, gap)
    if setup is None:  # no lambda axis: no gap to split
        return pd.DataFrame(columns=[c for c in INTERACTION_COLUMNS if c in keys or c not in st.PARTITION_KEYS])
    lam, gap, nested, strata = setup
    frames = []
    for pvals, part in st.partitions(df, keys):
        part = part[part[factor].notna() & part[lam].isin(gap)]
        mets = [m for m in metrics if m in part.columns and part[m].notna().any()]
        if part.empty or not mets or part[factor].nunique() < 2:
            continue
        ucols, unit_name = _unit_cols(part, strata, replicates)
        fvals = np.array(sorted(part[factor].unique()), dtype=object)
        part = part.assign(_cell=part[factor].astype(str) + " | " + part[lam].astype(str))
        cells = [f"{f} | {c}" for f in fvals for c in gap]
        num, den, _ = _cells(part, ucols, "_cell", mets, groups=cells)
        n_u, n_m = num.shape[0], len(mets)
        num = num.reshape(n_u, len(fvals), 2, n_m)
        den = den.reshape(n_u, len(fvals), 2, n_m)
        gaps = _ratio(num[:, :, 1], den[:, :, 1]) - _ratio(num[:, :, 0], den[:, :, 0])  # (U, F, M)
        rest = None
        if nested:
            tn, td = num.sum(axis=1, keepdims=True), den.sum(axis=1, keepdims=True)
            rest = _ratio(tn[:, :, 1] - num[:, :, 1], td[:, :, 1] - den[:, :, 1]) - _ratio(
                tn[:, :, 0] - num[:, :, 0], td[:, :, 0] - den[:, :, 0]
            )
            inter = gaps - rest
            labels = [(f, "rest") for f in fvals]
        else:
            pairs = list(itertools.combinations(range(len(fvals)), 2))
            inter = np.stack([gaps[:, b] - gaps[:, a] for a, b in pairs], axis=1) if pairs else np.zeros((n_u, 0, n_m))
            labels = [(fvals[a], fvals[b]) for a, b in pairs]
        analysis = f"class_gap_by_{factor}"
        key = ("interaction", *pvals.values(), factor, unit_name)
        comps = {"total": (gaps, inter)}
        indep = np.array([m not in ("drs", "acc") for m in mets])
        if positions is not None:
            layout = _GapLayout(part, pvals, factor, fvals, gap, mets, ucols, nested, n_u)
            got = _gap_behaviour(layout, positions.items, positions.params, _cache)
            if got is not None:
                beh, beh_rest = got
                beh[:, :, indep] = gaps[:, :, indep]
                bg = np.where(np.isnan(gaps), np.nan, beh)
                if nested:
                    beh_rest[:, :, indep] = rest[:, :, indep]
                    bi = np.where(np.isnan(inter), np.nan, bg - beh_rest)
                else:
                    bi = np.stack([bg[:, b] - bg[:, a] for a, b in pairs], axis=1) if pairs else inter
                comps["behaviour"] = (bg, bi)
                comps["needs"] = (gaps - bg, inter - bi)
        for ki, (kind, labs) in enumerate((("gap", [(f, "") for f in fvals]), ("interaction", labels))):
            blocks, bys = [], []
            for comp, arrs in comps.items():
                flat = arrs[ki].reshape(n_u, -1)
                by_c = np.tile(indep, len(labs)) & (comp == "needs")
                blocks.append(np.where(by_c[None, :], np.nan, flat))
                bys.append(by_c)
            # one call: the total's draws (and results) do not depend on the other columns
            allres = st.paired_test(
                np.hstack(blocks), inference=inference, key=key + (kind,), test=kind == "interaction"
            )
            width = blocks[0].shape[1]
            for ci, (comp, arrs) in enumerate(comps.items()):
                arr, by_c = arrs[ki], bys[ci]
                res = {k: v[ci * width : (ci + 1) * width].copy() for k, v in allres.items()}
                if by_c.any():
                    n_ok = (~np.isnan(arr.reshape(n_u, -1))).sum(axis=0)
                    res["n"] = np.where(by_c, n_ok, res["n"])
                    res["mean"] = np.where(by_c, np.where(n_ok > 0, 0.0, np.nan), res["mean"])
                    for k in ("sd", "lo", "hi"):
                        res[k] = np.where(by_c & (n_ok > 0), 0.0, res[k])
                frames.append(
                    pd.DataFrame(
                        {
                            **pvals,
                            "analysis": analysis,
                            "factor": factor,
                            "kind": kind,
                            "value_a": np.repeat(np.array([a for a, _ in labs], dtype=object), n_m),
                            "value_b": np.repeat(np.array([b for _, b in labs], dtype=object), n_m),
                            "metric": np.tile(np.array(mets, dtype=object), len(labs)),
                            "gap": f"{gap[1]} - {gap[0]}",
                            "unit": unit_name,
                            "n_units": res["n"],
                            "mean_diff": res["mean"],
                            **st.inference_fields(res, inference=inference, tested=kind == "interaction"),
                            "component": comp,
                            "by_construction": by_c,
                        }
                    )
                )
    cols = [c for c in INTERACTION_COLUMNS if c in keys or c not in st.PARTITION_KEYS]
    if not frames:
        return pd.DataFrame(columns=cols)
    out = _correct(
        pd.concat(frames, ignore_index=True),
        ("model", "template", "analysis", "kind", "component"),
        inference=inference,
    )
    out.loc[out["kind"] == "gap", "marking"] = "estimate"
    out.loc[out["by_construction"].astype(bool), "marking"] = BY_CONSTRUCTION_NOTE
    return out[cols]


def _interaction_setup(df: pd.DataFrame, factor: str, gap: Optional[tuple[str, str]]):
    """(the lambda axis, the gap's two values, whether ``factor`` is a region, the unit strata) of
    :func:`class_gap_interactions`, or None for a design without a lambda axis; an error naming a
    missing column."""
    if factor not in df.columns:
        raise ValueError(f"responses lack {factor!r}")
    lam, home = axes.lambda_axis(), axes.home()
    gap = lambda_gap() if gap is None else tuple(gap)
    if lam is None or gap is None:
        return None
    if lam not in df.columns:
        raise ValueError(f"responses lack the column {lam!r} of the design's lambda axis")
    nested = factor in ("region", "north_south")
    # units: a region's gap pools its home-axis values (the study's units: genders); an axis's gap
    # is paired within the values of the other axes but the lambda one (the study's nationalities)
    strata = tuple(a for a in axes.names() if a not in ((home, lam) if nested else (factor, lam)))
    return lam, gap, nested, strata


@dataclasses.dataclass(frozen=True, eq=False)
class _GapLayout:
    """One partition's lambda-axis gaps as :func:`class_gap_interactions` lays them out: ``part`` its
    responses, ``pvals`` its partition values, ``factor`` and its sorted values ``fvals``, the two
    values ``gap`` (a, b: the gap is b - a), the metrics ``mets``, the unit columns ``ucols`` and
    the number of units ``n_u``; ``nested``: a region factor (each value against the rest)."""

    part: pd.DataFrame
    pvals: dict
    factor: str
    fvals: np.ndarray
    gap: tuple
    mets: list
    ucols: list
    nested: bool
    n_u: int


def _gap_behaviour(
    layout: _GapLayout,
    items: pd.DataFrame,
    params: mx.ScoringParams,
    cache: Optional[dict] = None,
):
    """The behaviour part of each unit's and factor value's lambda-axis gap (U, F, M): per cell (every
    other axis x run: the study's gender x nationality x run), both values' lists scored for the
    cell's student with each value's lambda in turn, averaged (``metrics.rescore_with_lambda``: the
    two students share their home, so the items' own distances), then averaged over the cells
    of the unit and factor value (missing for metrics without lambda: the caller uses the total
    gap). Returns (behaviour, the rest's behaviour for a nested factor), or None when it cannot be
    computed."""
    gap, mets = layout.gap, layout.mets
    it = _gap_items(items, layout.pvals, gap, cache)
    if it is None:
        return None
    cell_cols = (*_cell_axes(), "run")
    if (
        it.empty
        or any(c not in it.columns for c in (*cell_cols, "distance_km"))
        or any(c not in cell_cols for c in layout.ucols)
    ):
        return None
    n_f, n_m = len(layout.fvals), len(mets)
    out = np.full((layout.n_u, n_f, n_m), np.nan)
    rest = np.full((layout.n_u, n_f, n_m), np.nan)
    lam_mets = [m for m in mets if m in ("drs", "acc")]
    if not lam_mets:
        return out, rest
    if any(c not in params.lambdas for c in gap) or "run" not in it.columns:
        return None
    ck = (tuple(layout.pvals.values()), tuple(gap), tuple(lam_mets))
    if cache is not None and ck in cache:
        cells = cache[ck]
    else:
        cells = _gap_cells(it, gap, lam_mets, params)
        if cache is not None:
            cache[ck] = cells
    num, den = _pool_gap_cells(layout, cells.copy(), lam_mets)
    j = [mets.index(m) for m in lam_mets]
    out[:, :, j] = _ratio(num, den)
    if layout.nested:
        tn, td = num.sum(axis=1, keepdims=True), den.sum(axis=1, keepdims=True)
        rest[:, :, j] = _ratio(tn - num, td - den)
    return out, rest


def _gap_items(items: pd.DataFrame, pvals: dict, gap, cache: Optional[dict]) -> Optional[pd.DataFrame]:
    """The items of the partition ``pvals`` of the two lambda-axis values of ``gap`` (kept in ``cache``, with
    the items split by partition once), or None when the partition has no items."""
    ik = ("items", tuple(pvals.values()), tuple(gap))
    if cache is not None and ik in cache:
        return cache[ik]
    if cache is not None and "_parts" in cache:
        parts = cache["_parts"]
    else:  # the items split by partition once (not filtered again for every partition and factor)
        all_it = dc.scored_items(items)
        pkeys = [k for k in st.PARTITION_KEYS if k in all_it.columns]
        parts = {tuple(pv.values()): pt for pv, pt in st.partitions(all_it, pkeys)}
        if cache is not None:
            cache["_parts"] = parts
    it = parts.get(tuple(v for k, v in pvals.items() if k in items.columns))
    if it is None:
        return None
    lam = axes.lambda_axis()
    it = it[it[lam].isin(gap)] if lam is not None and lam in it.columns else it.iloc[0:0]
    if cache is not None:
        cache[ik] = it
    return it


def _gap_cells(it: pd.DataFrame, gap, lam_mets: list, params: mx.ScoringParams) -> pd.DataFrame:
    """Per cell (every other axis x run: the study's gender x nationality x run), each of ``lam_mets``'
    behaviour part of the lambda-axis gap: both values' lists scored with each value's lambda (the
    student's home is the list's own: same home-axis value, so the items' own distances), per
    response, then per cell and value."""
    lam = axes.lambda_axis()
    by = [*_cell_axes(), "run", lam]
    cols = {}
    for c in gap:
        rs = mx.rescore_with_lambda(it, params.lambdas[c], params)
        for m in lam_mets:
            cols[f"{m}@{c}"] = rs[m].to_numpy(dtype=float)
    sc = pd.DataFrame(cols, index=it.index)
    sc["response_id"] = it["response_id"].to_numpy()
    per = sc.groupby("response_id", sort=False).mean()
    keys = it.drop_duplicates("response_id").set_index("response_id")[by]
    per = per.join(keys, how="inner")
    cm = per.groupby(by, sort=True)[list(cols)].mean()
    wide = cm.unstack(lam)
    cells = wide.index.to_frame(index=False)
    for m in lam_mets:
        f = {
            (lc, c): wide[(f"{m}@{lc}", c)].to_numpy(dtype=float)
            if (f"{m}@{lc}", c) in wide.columns
            else np.full(len(wide), np.nan)
            for lc in gap
            for c in gap
        }
        a, b = gap
        cells[m] = 0.5 * ((f[(b, b)] - f[(b, a)]) + (f[(a, b)] - f[(a, a)]))
    return cells


def _pool_gap_cells(layout: _GapLayout, cells: pd.DataFrame, lam_mets: list) -> tuple[np.ndarray, np.ndarray]:
    """The cells' behaviour parts (``cells``, a copy: a column is added) summed per unit and factor
    value: num, den (U, F, len(lam_mets)); a cell outside the units or the factor values is left
    out."""
    part, factor, ucols = layout.part, layout.factor, layout.ucols
    n_u, n_f = layout.n_u, len(layout.fvals)
    home = axes.home()
    if factor in cells.columns:  # an axis of the cell
        cells["_f"] = cells[factor]
    elif home is not None and home in cells.columns:  # a region: the home-axis value's
        cells["_f"] = cells[home].map(part.groupby(home)[factor].first())
    else:
        cells["_f"] = None
    vals = cells[lam_mets].to_numpy(dtype=float)
    unit_keys = st.key_frame(part, ucols)
    codes = unit_keys.groupby(ucols, sort=True).ngroup().to_numpy()
    lab = {}
    for tup, code in zip(map(tuple, unit_keys[ucols].to_numpy(dtype=object)), codes, strict=False):
        lab.setdefault(tup, code)
    cu = np.array([lab.get(tuple(r), -1) for r in cells[ucols].to_numpy(dtype=object)], dtype=np.int64)
    cf = pd.Categorical(cells["_f"], categories=list(layout.fvals)).codes
    ok = (cu >= 0) & (cf >= 0)
    has = ~np.isnan(vals)
    flat = cu[ok] * n_f + cf[ok]
    num = _group_sum(flat, np.where(has, vals, 0.0)[ok], n_u * n_f).reshape(n_u, n_f, len(lam_mets))
    den = _group_sum(flat, has[ok].astype(float), n_u * n_f).reshape(n_u, n_f, len(lam_mets))
    return num, den


def class_gap_decomposition(
    items: pd.DataFrame,
    responses: pd.DataFrame,
    params: mx.ScoringParams,
    *,
    metrics: Sequence[str] = ("acc", "drs"),
    inference: InferenceParams = DEFAULT_INFERENCE,
) -> pd.DataFrame:
    """Every gap between two values of the design's lambda axis (the study's classes) split into
    behaviour (what the model recommended) and needs (the metric's lambda).

    For values a < b (sorted, as ``stats.counterfactual_disparity``: the study's row "high, low" is
    low - high), in each stratum (every other axis: the study's gender x nationality, runs averaged
    per profile, as the counterfactual disparity), with ``f(lambda, X)`` the profile mean of a metric
    when the items X are scored with lambda (``metrics.rescore_with_lambda``):

    - total     = f(lambda_b, X_b) - f(lambda_a, X_a): the gap as reported;
    - behaviour = 1/2 [f(lambda_a, X_b) - f(lambda_a, X_a)] + 1/2 [f(lambda_b, X_b) - f(lambda_b, X_a)]:
      both classes' recommendations scored with the same lambda (each class's lambda in turn,
      averaged; symmetric, so the split does not depend on a reference class);
    - needs     = total - behaviour: the part due to the needs weighting alone.

    A class-blind model (same distribution of recommendations for every class) has behaviour
    ~0 and needs = total. Rep and Acad do not depend on lambda: their whole gap is behaviour.
    Each component: mean over strata, bootstrap interval, sign-flip test; corrected within
    (model, template, component). ``share_of_total`` = component / total.
    Columns: ``DECOMPOSITION_COLUMNS``. ``inference``: resamples, permutations, level, seed, correction,
    alpha. A design without a lambda axis: an empty table.
    """
    keys = [k for k in st.PARTITION_KEYS if k in responses.columns]
    out_cols = [c for c in DECOMPOSITION_COLUMNS if c in keys or c not in st.PARTITION_KEYS]
    lam = axes.lambda_axis()
    if lam is None:  # no lambda axis: nothing to split
        return pd.DataFrame(columns=out_cols)
    missing = [f"{name} lack {lam!r}" for name, t in (("items", items), ("responses", responses)) if lam not in t]
    if missing:
        raise ValueError(f"class_gap_decomposition: the {' and the '.join(missing)} (the design's lambda axis)")
    it = items[items["university_text"].notna()] if "university_text" in items.columns else items
    it = it[it[lam].notna()]
    classes = sorted(c for c in pd.unique(it[lam].dropna()) if c in params.lambdas)
    cols = {}
    for c in classes:
        rs = mx.rescore_with_lambda(it, params.lambdas[c], params)
        for m in metrics:
            cols[f"{m}@{c}"] = rs[m]
    scored = pd.DataFrame(cols, index=it.index)
    scored["response_id"] = it["response_id"].to_numpy()
    per_resp = scored.groupby("response_id").mean()
    resp = responses[responses[lam].isin(classes)]
    resp = resp.merge(per_resp, left_on="response_id", right_index=True, how="left")
    valcols = list(per_resp.columns)
    resp = resp.copy()
    resp.loc[pd.to_numeric(resp["n_items"], errors="coerce").fillna(0).to_numpy() <= 0, valcols] = np.nan
    frames = []
    for pvals, part in st.partitions(resp, keys):
        strata = [a for a in _cell_axes() if a in part.columns and part[a].notna().any()]
        part = part[part[strata].notna().all(axis=1)] if strata else part
        if part.empty:
            continue
        num, den, _ = _cells(part.assign(_prof=part[lam]), strata, "_prof", valcols, groups=classes)
        prof = _ratio(num, den)  # (S, classes, valcols)
        idx = {v: i for i, v in enumerate(valcols)}
        for ia, ib in itertools.combinations(range(len(classes)), 2):
            a, b = classes[ia], classes[ib]
            blocks, labels = [], []
            for m in metrics:
                f = lambda lam, cls, m=m, prof=prof, idx=idx: prof[:, cls, idx[f"{m}@{lam}"]]  # noqa: E731
                total = f(b, ib) - f(a, ia)
                behaviour = 0.5 * (f(a, ib) - f(a, ia)) + 0.5 * (f(b, ib) - f(b, ia))
                for comp, arr in (("total", total), ("behaviour", behaviour), ("needs", total - behaviour)):
                    blocks.append(arr)
                    labels.append((m, comp))
            d = np.column_stack(blocks)
            res = st.paired_test(d, inference=inference, key=("decomposition", *pvals.values(), a, b))
            tot = {m: res["mean"][labels.index((m, "total"))] for m in metrics}
            frames.append(
                pd.DataFrame(
                    {
                        **pvals,
                        "metric": [m for m, _ in labels],
                        "value_a": a,
                        "value_b": b,
                        "component": [c for _, c in labels],
                        "n_pairs": res["n"],
                        "mean_diff": res["mean"],
                        "share_of_total": [
                            res["mean"][j] / tot[m] if tot[m] else np.nan for j, (m, _) in enumerate(labels)
                        ],
                        **st.inference_fields(res, inference=inference),
                    }
                )
            )
    if not frames:
        return pd.DataFrame(columns=out_cols)
    out = _correct(
        pd.concat(frames, ignore_index=True),
        ("model", "template", "component"),
        inference=inference,
        none_marking="too few pairs",
    )
    return out[out_cols]
