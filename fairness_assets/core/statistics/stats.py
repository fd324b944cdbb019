"""Uncertainty and significance for the DRS tables: run-to-run variability, paired
counterfactual disparity, multiple-comparison correction (docs/statistics.md).

Input: the ``drs_responses`` table (``core.scoring.metrics.drs_responses``), one row per model
response with ``response_id, model, template, profile_id``, one column per axis of the active
design (core/reference/axes.py; the study's ``gender, economic_class, nationality``), ``run, n_items,
acc, rep, acad, drs``. A response with ``n_items == 0`` counts as a
response but never enters a mean; a missing component (Acad outside the ``academic``
template) is missing, not 0.

Everything is vectorised: a bootstrap draws one ``(n_boot, n)`` index matrix and takes
weighted means with one matrix product; a sign-flip permutation test multiplies one
``(n_perm, n)`` sign matrix by the differences. Every random draw comes from a
``numpy.random.Generator`` seeded from ``seed`` and the name of the cell it serves (model,
template, grouping, the units resampled), so a result does not depend on which other
partitions or groups are in the input, nor on their order. ``n_boot``, ``n_perm``, ``level``,
``seed``, ``correction`` and ``alpha`` are the fields of one ``inference=`` argument
(:class:`.inference.InferenceParams`).

Pure: pandas and numpy only (and threadpoolctl, to run the matrix products on one BLAS thread).
"""

from __future__ import annotations

import contextlib
import itertools
import threading
import zlib
from typing import Iterable, Iterator, Optional, Sequence

import numpy as np
import pandas as pd
from threadpoolctl import ThreadpoolController

from ..common import metric_catalogue as catalogue
from ..reference import axes
from .inference import CORRECTIONS, DEFAULT_INFERENCE, Correction, InferenceParams

METRICS = catalogue.names("response")
PARTITION_KEYS = ("model", "template")
_NONE = "\x00none"  # stands for a missing attribute in grouping keys (reduced-context profiles)
_CHUNK = 4_000_000  # at most this many floats in one (resamples x columns) block

VARIABILITY_COLUMNS = [
    "model",
    "template",
    "group_by",
    "group",
    "metric",
    "unit",
    "n_units",
    "n_responses",
    "n_scored",
    "mean",
    "sd",
    "ci_low",
    "ci_high",
    "level",
    "n_boot",
    "note",
]
# the columns of a test's inference, in the order every test table shows them (the disparity,
# geographic and decomposition tables share them)
INFERENCE_COLUMNS = [
    "sd_diff",
    "ci_low",
    "ci_high",
    "level",
    "n_boot",
    "p_value",
    "p_method",
    "n_perm",
    "p_min_attainable",
    "correction",
    "family_size",
    "p_adjusted",
    "alpha",
    "significant",
    "marking",
]


def inference_fields(res: dict, *, inference: InferenceParams, tested: bool = True) -> dict:
    """The inference columns of a block of tests from a paired-difference result ``res`` (keys sd, lo,
    hi, p, method, used, p_min), in INFERENCE_COLUMNS order up to ``p_min_attainable`` (``level`` and
    ``n_boot`` from ``inference``); ``tested`` False: intervals only, no test (p-value NaN, no method,
    0 permutations)."""
    return {
        "sd_diff": res["sd"],
        "ci_low": res["lo"],
        "ci_high": res["hi"],
        "level": inference.level,
        "n_boot": inference.n_boot,
        "p_value": res["p"] if tested else np.nan,
        "p_method": res["method"] if tested else None,
        "n_perm": res["used"] if tested else 0,
        "p_min_attainable": res["p_min"] if tested else np.nan,
    }


DISPARITY_COLUMNS = [
    "model",
    "template",
    "attribute",
    "value_a",
    "value_b",
    "metric",
    "n_strata",
    "n_pairs",
    "n_strata_excluded",
    "mean_a",
    "mean_b",
    "mean_diff",
    *INFERENCE_COLUMNS,
]


def profile_attributes() -> tuple[str, ...]:
    """The profile attributes: every axis of the active design (core/reference/axes.py), in its
    order; read at call time, so a design made active later is the one used."""
    return axes.names()


def breakdown_attributes() -> tuple[str, ...]:
    """The attributes the headline means are broken down by: every axis but the home one (the
    study's gender and economic class; a home axis's values are summarised by the geography)."""
    return axes.names(exclude=("home",))


# ----------------------------------------------------------------------------- p-value correction
def adjust_pvalues(p, method: Correction = "holm") -> np.ndarray:
    """Adjusted p-values for one family of tests.

    ``method``: ``"holm"`` (Holm's step-down; controls the family-wise error rate under any
    dependence) or ``"bh"`` (Benjamini-Hochberg step-up; controls the false discovery rate).
    NaN entries stay NaN and are not counted in the number of tests m. Adjusted values are
    capped at 1 and monotone in the raw p-values; a test is rejected at level alpha when its
    adjusted p-value is <= alpha.
    """
    if method not in CORRECTIONS:
        raise ValueError(f"correction must be one of {CORRECTIONS}, got {method!r}")
    p = np.asarray(p, dtype=float)
    out = np.full(p.shape, np.nan)
    flat = p.ravel()
    ok = ~np.isnan(flat)
    if not ok.any():
        return out
    if ((flat[ok] < 0) | (flat[ok] > 1)).any():
        raise ValueError("p-values must lie in [0, 1]")
    vals = flat[ok]
    m = vals.size
    order = np.argsort(vals, kind="stable")
    ranked = vals[order]
    k = np.arange(1, m + 1)
    if method == "holm":
        adj = np.maximum.accumulate(np.minimum(1.0, (m - k + 1) * ranked))
    else:
        adj = np.minimum.accumulate(np.minimum(1.0, m / k * ranked)[::-1])[::-1]
    res = np.empty(m)
    res[order] = adj
    o = out.ravel()
    o[ok] = res
    return o.reshape(p.shape)


# ----------------------------------------------------------------------------- resampling kernels
_BLAS_LOCK = threading.RLock()
_BLAS: list = []  # threadpoolctl's controller of the process's BLAS libraries, looked up on first use


@contextlib.contextmanager
def blas_single_thread():
    """Run the enclosed matrix products on one BLAS thread, then restore the previous count.

    The resampling products here are small (at most a few thousand x a few hundred): starting
    and synchronising BLAS threads costs more than the product, and on a busy machine much
    more (the study-grid statistics ran about twice as fast single-threaded on 2 cores).
    Results are the same up to floating-point summation order (last-bit differences in an
    interval bound at most).

    threadpoolctl sets the limit on every BLAS library loaded in the process (numpy's bundled
    OpenBLAS, or MKL, BLIS, FlexiBLAS; looked up once, on first use: numpy loads its BLAS on
    import). OpenBLAS keeps one thread count for the whole process, so the blocks of different
    threads take turns (a re-entrant lock: a nested block in the same thread goes straight in);
    threadpoolctl also lets only one thread at a time change it, so while another thread holds
    a ``threadpool_limits`` of its own, the products run under that thread's limit. A no-op
    where threadpoolctl finds no BLAS."""
    with _BLAS_LOCK:
        if not _BLAS:
            _BLAS.append(ThreadpoolController().select(user_api="blas"))
        with _BLAS[0].limit(limits=1, user_api="blas"):
            yield


def cell_rng(seed: int, *key) -> np.random.Generator:
    """A generator seeded from ``seed`` and a stable (unsalted) hash of the cell's key."""
    h = zlib.crc32("|".join(str(k) for k in key).encode("utf-8"))
    return np.random.default_rng([int(seed), h])


def boot_weights(rng: np.random.Generator, n: int, n_boot: int) -> np.ndarray:
    """(n_boot, n) matrix of how often each unit is drawn in each bootstrap resample: the
    index matrix ``rng.integers(0, n, (n_boot, n))`` counted per row."""
    idx = rng.integers(0, n, size=(n_boot, n))
    idx += (np.arange(n_boot) * n)[:, None]
    return np.bincount(idx.ravel(), minlength=n_boot * n).reshape(n_boot, n).astype(float)


def _chunks(n_rows: int, n_cols: int) -> Iterator[slice]:
    step = max(1, _CHUNK // max(1, n_rows))
    for start in range(0, n_cols, step):
        yield slice(start, min(n_cols, start + step))


def percentile_ci(num: np.ndarray, den: np.ndarray, weights: np.ndarray, level: float) -> tuple[np.ndarray, np.ndarray]:
    """Percentile interval of the bootstrap distribution of sum(w*num)/sum(w*den), per column."""
    q = [(1 - level) / 2, 1 - (1 - level) / 2]
    lo = np.empty(num.shape[1])
    hi = np.empty(num.shape[1])
    with blas_single_thread():
        for sl in _chunks(weights.shape[0], num.shape[1]):
            stats = (weights @ num[:, sl]) / (weights @ den[:, sl])
            lo[sl], hi[sl] = np.quantile(stats, q, axis=0)
    return lo, hi


def _percentile_ci_mean(values: np.ndarray, weights: np.ndarray, level: float) -> tuple[np.ndarray, np.ndarray]:
    """``percentile_ci(values, ones, weights, level)`` without the second product: every row
    of the bootstrap count matrix sums to the number of units n (exactly, in floating point),
    so the resampled mean is (w @ values) / n. Same result, half the work."""
    q = [(1 - level) / 2, 1 - (1 - level) / 2]
    lo = np.empty(values.shape[1])
    hi = np.empty(values.shape[1])
    n = float(values.shape[0])
    with blas_single_thread():
        for sl in _chunks(weights.shape[0], values.shape[1]):
            stats = (weights @ values[:, sl]) / n
            lo[sl], hi[sl] = np.quantile(stats, q, axis=0)
    return lo, hi


def _sign_flip_p(d: np.ndarray, n_perm: int, rng: np.random.Generator) -> tuple[np.ndarray, str, int]:
    """Two-sided paired sign-flip permutation p-value of mean(d) = 0, per column of d (n, C).

    The statistic is |sum(d)| (equivalent to |mean(d)| for fixed n). Exact (all 2^n sign
    vectors, the identity included) when 2^n <= n_perm, else Monte Carlo with n_perm random
    sign vectors and the +1 correction: p = (1 + #{|T*| >= |T|}) / (n_perm + 1).
    """
    n = d.shape[0]
    exact = n < 63 and 2**n <= n_perm
    if exact:
        signs = ((np.arange(2**n)[:, None] >> np.arange(n)[None, :]) & 1) * 2.0 - 1.0
    else:
        signs = np.multiply(rng.integers(0, 2, size=(n_perm, n)), 2.0)  # one pass to float, same draws
        signs -= 1.0
    t_obs = np.abs(d.sum(axis=0))
    tol = 1e-9 * np.abs(d).sum(axis=0)  # float summation order must not break ties
    count = np.empty(d.shape[1])
    with blas_single_thread():
        for sl in _chunks(signs.shape[0], d.shape[1]):
            count[sl] = (np.abs(signs @ d[:, sl]) >= t_obs[sl] - tol[sl]).sum(axis=0)
    if exact:
        return count / signs.shape[0], "exact", int(signs.shape[0])
    return (count + 1.0) / (n_perm + 1.0), "monte_carlo", int(n_perm)


def paired_test(
    d: np.ndarray,
    *,
    inference: InferenceParams,
    key: tuple,
    min_units: int = 2,
    test: bool = True,
) -> dict[str, np.ndarray]:
    """The paired kernel of every test of the audit (here and in ``core.statistics.decompose``,
    ``geostats`` and ``comparison``): per column of d (units x columns, NaN = no unit), the mean, the
    SD (ddof 1), the percentile bootstrap interval of the mean (resampling units, ``inference.n_boot``
    times, at ``inference.level``) and the two-sided sign-flip p (``_sign_flip_p``, ``inference.n_perm``
    sign vectors); ``test=False`` for the interval alone (``inference.n_perm`` unused).

    Columns with the same missing units share one generator, ``cell_rng(inference.seed, *key, units)``, and so
    one set of draws: the bootstrap counts first, then the sign vectors. A column's result
    therefore depends only on its own values, its units and ``key``, never on which other
    columns are computed with it. Columns with fewer than ``min_units`` units get the mean only.
    ``test=False``: interval only (p stays missing; the sign vectors, drawn after the bootstrap
    counts, are not drawn, which leaves the interval unchanged).

    Returns arrays per column: ``n`` (units), ``mean``, ``sd``, ``lo``, ``hi``, ``p``, ``p_min``
    (smallest attainable p: 2 / 2^n exact, 1 / (n_perm + 1) Monte Carlo), ``method``
    (``exact`` / ``monte_carlo``), ``used`` (sign vectors)."""
    n_perm, n_boot, level, seed = inference.n_perm, inference.n_boot, inference.level, inference.seed
    c = d.shape[1]
    valid = ~np.isnan(d)
    n = valid.sum(axis=0)
    with np.errstate(invalid="ignore", divide="ignore"):
        mean = np.where(n > 0, np.where(valid, d, 0.0).sum(axis=0) / np.maximum(n, 1), np.nan)
    res = {
        "n": n.astype(np.int64),
        "mean": mean,
        "sd": np.full(c, np.nan),
        "lo": np.full(c, np.nan),
        "hi": np.full(c, np.nan),
        "p": np.full(c, np.nan),
        "p_min": np.full(c, np.nan),
        "method": np.full(c, None, dtype=object),
        "used": np.zeros(c, dtype=np.int64),
    }
    for r, cols in validity_patterns(valid):
        if r.size < max(min_units, 2):
            continue
        block = d[np.ix_(r, cols)]
        res["sd"][cols] = np.std(block, axis=0, ddof=1)
        rng = cell_rng(seed, *key, r.tolist())
        w = boot_weights(rng, r.size, n_boot)
        res["lo"][cols], res["hi"][cols] = _percentile_ci_mean(block, w, level)
        if not test:
            continue
        p, how, used = _sign_flip_p(block, n_perm, rng)
        res["p"][cols], res["method"][cols], res["used"][cols] = p, how, used
        res["p_min"][cols] = 2.0 / used if how == "exact" else 1.0 / (n_perm + 1.0)
    return res


def validity_patterns(valid: np.ndarray) -> Iterator[tuple[np.ndarray, np.ndarray]]:
    """Group the columns of a (n, C) validity mask by identical pattern: (rows, columns)."""
    if valid.shape[1] == 0:
        return
    uniq, inverse = np.unique(valid.T, axis=0, return_inverse=True)
    inverse = np.asarray(inverse).ravel()
    for j, pattern in enumerate(uniq):
        yield np.flatnonzero(pattern), np.flatnonzero(inverse == j)


# ----------------------------------------------------------------------------- input preparation
def scored_responses(responses: pd.DataFrame, metrics: Sequence[str]) -> tuple[pd.DataFrame, list[str]]:
    missing = [c for c in ("n_items", *metrics) if c not in responses.columns]
    if missing:
        raise ValueError(f"responses lack the column(s) {missing}")
    df = responses.copy()
    scored = pd.to_numeric(df["n_items"], errors="coerce").fillna(0).to_numpy() > 0
    for m in metrics:
        v = pd.to_numeric(df[m], errors="coerce").astype(float)
        df[m] = v.where(scored)  # an unscored response never enters a mean
    df["_scored"] = scored
    keys = [k for k in PARTITION_KEYS if k in df.columns]
    return df, keys


def key_frame(df: pd.DataFrame, cols: Sequence[str]) -> pd.DataFrame:
    """Grouping keys with missing values replaced by a sentinel (None is a value here)."""
    return pd.DataFrame({c: df[c].astype(object).where(df[c].notna(), _NONE) for c in cols}, index=df.index)


def _defined_metrics(part: pd.DataFrame, metrics: Sequence[str]) -> list[str]:
    """Metrics with a value somewhere in the partition; all of them if nothing is scored
    (so that an all-failed partition still shows up, with missing means)."""
    if not part["_scored"].any():
        return list(metrics)
    return [m for m in metrics if part[m].notna().any()]


def partitions(df: pd.DataFrame, keys: list[str]) -> Iterable[tuple[dict, pd.DataFrame]]:
    """``df`` split by the partition columns ``keys`` (model, template; sorted, a missing value is a
    value): (``{key: value}``, the partition's rows) per partition; the whole frame once, with ``{}``,
    when there are no keys."""
    if not keys:
        yield {}, df
        return
    for vals, part in df.groupby(keys, sort=True, dropna=False):
        vals = vals if isinstance(vals, tuple) else (vals,)
        yield dict(zip(keys, vals, strict=False)), part


# ----------------------------------------------------------------------------- run variability
def run_variability(
    responses: pd.DataFrame,
    *,
    metrics: Sequence[str] = METRICS,
    by: Optional[Sequence[Optional[str]]] = None,
    inference: InferenceParams = DEFAULT_INFERENCE,
) -> pd.DataFrame:
    """Spread and bootstrap interval of every headline mean, over runs and over profiles
    (``inference``: its ``n_boot``, ``level`` and ``seed``).

    For each partition (model x template), grouping (``by``: None = overall, or a profile
    attribute; by default overall and each of :func:`breakdown_attributes`, the study's gender and
    economic class), group and metric, two rows:

    - ``unit == "run"``: the metric's mean per run (over the group's scored responses of that
      run); ``sd`` is the SD (ddof=1) of these per-run means; the interval resamples runs.
    - ``unit == "profile"``: the mean per profile over its runs; ``sd`` is the SD (ddof=1)
      across profiles; the interval resamples profiles.

    ``mean`` is the headline figure: the mean over the group's scored responses (the value
    of ``metrics.drs_summary``). The interval is a percentile cluster bootstrap of that mean:
    draw ``n_units`` units with replacement, recompute sum of values / number of values over
    the drawn units, ``n_boot`` times, and take the (1-level)/2 and 1-(1-level)/2 quantiles.
    Units without a scored value for the metric are left out (``n_units`` counts the others).

    Columns: ``model, template`` (where the input has them), ``group_by`` ("overall" or the
    attribute), ``group`` ("all" or the value), ``metric``, ``unit``, ``n_units``,
    ``n_responses`` (all responses of the group, scored or not), ``n_scored`` (responses with a
    value for the metric), ``mean``, ``sd``, ``ci_low``, ``ci_high``, ``level``, ``n_boot``,
    ``note`` ("" or why sd/interval are missing: one unit, no scored responses).

    A metric without any value in a partition (Acad outside ``academic``) has no rows there;
    a grouping attribute missing from every profile of a partition (reduced-context
    templates) has no rows there; a group whose responses all failed keeps its rows, with
    missing figures and a note.
    """
    n_boot, level, seed = inference.n_boot, inference.level, inference.seed
    by = (None, *breakdown_attributes()) if by is None else tuple(by)
    metrics = list(metrics)
    df, keys = scored_responses(responses, metrics)
    if "run" not in df.columns or "profile_id" not in df.columns:
        raise ValueError("responses need the columns run and profile_id")
    rows = []
    for pvals, part in partitions(df, keys):
        mets = _defined_metrics(part, metrics)
        if not mets:
            continue
        for attr in by:
            if attr is not None and (attr not in part.columns or part[attr].isna().all()):
                continue
            sub = part if attr is None else part[part[attr].notna()]
            groups = sub.assign(_g="all") if attr is None else sub.assign(_g=sub[attr])
            for group, g in groups.groupby("_g", sort=True):
                n_resp = len(g)
                vals = g[mets].to_numpy(dtype=float)
                for unit, col in (("run", "run"), ("profile", "profile_id")):
                    codes, uniq = pd.factorize(g[col], sort=True)
                    u = len(uniq)
                    has = ~np.isnan(vals)
                    num = np.zeros((u, len(mets)))
                    den = np.zeros((u, len(mets)))
                    np.add.at(num, codes, np.where(has, vals, 0.0))
                    np.add.at(den, codes, has.astype(float))
                    valid = den > 0
                    with np.errstate(invalid="ignore", divide="ignore"):
                        unit_means = num / den
                    n_units = valid.sum(axis=0)
                    tot_den = den.sum(axis=0)
                    with np.errstate(invalid="ignore", divide="ignore"):
                        mean = np.where(tot_den > 0, num.sum(axis=0) / np.where(tot_den > 0, tot_den, 1), np.nan)
                    sd = np.full(len(mets), np.nan)
                    lo = np.full(len(mets), np.nan)
                    hi = np.full(len(mets), np.nan)
                    for r, cols in validity_patterns(valid):
                        if r.size < 2:
                            continue
                        sd[cols] = np.std(unit_means[np.ix_(r, cols)], axis=0, ddof=1)
                        w = boot_weights(
                            cell_rng(seed, "variability", *pvals.values(), attr, group, unit, r.tolist()),
                            r.size,
                            n_boot,
                        )
                        lo[cols], hi[cols] = percentile_ci(num[np.ix_(r, cols)], den[np.ix_(r, cols)], w, level)
                    for j, m in enumerate(mets):
                        note = ""
                        if n_units[j] == 0:
                            note = "no scored responses"
                        elif n_units[j] == 1:
                            note = f"one {unit}: no spread, no interval"
                        rows.append(
                            {
                                **pvals,
                                "group_by": attr or "overall",
                                "group": group,
                                "metric": m,
                                "unit": unit,
                                "n_units": int(n_units[j]),
                                "n_responses": n_resp,
                                "n_scored": int(tot_den[j]),
                                "mean": mean[j],
                                "sd": sd[j],
                                "ci_low": lo[j],
                                "ci_high": hi[j],
                                "level": level,
                                "n_boot": n_boot,
                                "note": note,
                            }
                        )
    cols = [c for c in VARIABILITY_COLUMNS if c in keys or c not in PARTITION_KEYS]
    return pd.DataFrame(rows, columns=cols)


# ----------------------------------------------------------------------------- counterfactual disparity
def counterfactual_disparity(
    responses: pd.DataFrame,
    *,
    attributes: Optional[Sequence[str]] = None,
    metrics: Sequence[str] = METRICS,
    inference: InferenceParams = DEFAULT_INFERENCE,
    family: Sequence[str] = ("model", "template", "attribute"),
) -> pd.DataFrame:
    """Paired counterfactual disparity per attribute, with interval, permutation test and
    multiple-comparison correction (``inference``: resamples, permutations, level, seed, correction,
    alpha).

    ``attributes``: the attributes tested (None: every axis of the active design,
    :func:`profile_attributes`; a ``none`` axis such as a disability is tested like any other).

    For attribute A and each unordered pair of its values (a, b), a < b in sorted order: the
    strata are the groups of profiles that agree on every other profile attribute (within a
    model x template); in each stratum the per-profile means over runs give the paired
    difference ``d = mean_b - mean_a`` (so ``mean_diff > 0`` means b scores higher than a).

    - ``mean_diff``, ``sd_diff`` (ddof=1): mean and SD of d over the pairs.
    - ``ci_low``, ``ci_high``: percentile bootstrap of mean(d), resampling pairs (strata).
    - ``p_value``: two-sided paired sign-flip permutation test of mean(d) = 0; ``p_method``
      "exact" (all 2^n_pairs sign vectors) when 2^n_pairs <= n_perm, else "monte_carlo"
      (``n_perm`` random sign vectors, p = (1 + #as extreme) / (n_perm + 1));
      ``n_perm`` is the number of sign vectors used; ``p_min_attainable`` is the smallest
      p-value the test can give (2/2^n exact, 1/(n_perm+1) Monte Carlo).
    - ``p_adjusted``: Holm (``inference.correction="holm"``) or Benjamini-Hochberg (``"bh"``) over the
      rows of one family: by default all pairs and metrics of one attribute in one model x
      template (``family`` lists the columns that define a family; ``("model", "template")``
      corrects across every attribute of a partition). ``family_size`` is the number of tests
      with a p-value in the row's family.
    - ``significant``: ``p_adjusted <= alpha``; ``marking``: "significant", "not significant",
      or "too few pairs" (fewer than 2 pairs: no test, p missing).

    Other columns: ``model, template`` (where the input has them), ``attribute``, ``value_a``,
    ``value_b``, ``metric``, ``n_strata`` (strata with a profile for a or b), ``n_pairs``
    (strata with a scored mean for both), ``n_strata_excluded`` (``n_strata - n_pairs``),
    ``mean_a``, ``mean_b`` (means over the pairs), ``level``, ``n_boot``, ``correction``,
    ``alpha``.

    An attribute missing from every profile of a partition has no rows there; a metric
    without any value in a partition (Acad outside ``academic``) has no rows there.
    """
    correction, alpha = inference.correction, inference.alpha
    metrics = list(metrics)
    df, keys = scored_responses(responses, metrics)
    profile_attrs = [a for a in profile_attributes() if a in df.columns]
    attributes = profile_attributes() if attributes is None else tuple(attributes)
    unknown = [a for a in attributes if a not in profile_attrs]
    if unknown:
        raise ValueError(f"unknown attribute(s) {unknown}; the profile attributes are {profile_attrs}")
    bad_family = [c for c in family if c not in (*PARTITION_KEYS, "attribute", "metric", "value_a", "value_b")]
    if bad_family:
        raise ValueError(
            f"family columns must be among model, template, attribute, metric, value_a, value_b; got {bad_family}"
        )
    frames = []
    for pvals, part in partitions(df, keys):
        mets = _defined_metrics(part, metrics)
        if not mets:
            continue
        for attr in attributes:
            sub = part[part[attr].notna()]
            if sub.empty:
                continue
            frames.append(
                _disparity_one(sub, pvals, attr, [a for a in profile_attrs if a != attr], mets, inference=inference)
            )
    if not frames:
        out = pd.DataFrame(columns=[c for c in DISPARITY_COLUMNS if c in keys or c not in PARTITION_KEYS])
        return out
    out = pd.concat(frames, ignore_index=True)
    out["correction"] = correction
    fam = [c for c in family if c in out.columns]
    out["family_size"] = 0
    out["p_adjusted"] = np.nan
    groups = out.groupby(fam, sort=False, dropna=False).indices if fam else {"all": np.arange(len(out))}
    for idx in groups.values():
        p = out["p_value"].to_numpy(dtype=float)[idx]
        out.loc[out.index[idx], "p_adjusted"] = adjust_pvalues(p, correction)
        out.loc[out.index[idx], "family_size"] = int((~np.isnan(p)).sum())
    out["family_size"] = out["family_size"].astype(np.int64)
    out["alpha"] = alpha
    out["significant"] = (out["p_adjusted"] <= alpha).fillna(False).astype(bool)
    out["marking"] = np.where(
        out["p_value"].isna(), "too few pairs", np.where(out["significant"], "significant", "not significant")
    )
    cols = [c for c in DISPARITY_COLUMNS if c in keys or c not in PARTITION_KEYS]
    return out[cols]


def _disparity_one(
    sub: pd.DataFrame,
    pvals: dict,
    attr: str,
    others: list[str],
    mets: list[str],
    *,
    inference: InferenceParams,
) -> pd.DataFrame:
    """All pairs of values of one attribute in one partition, every metric at once."""
    keys = key_frame(sub, others)
    values = np.array(sorted(sub[attr].unique()), dtype=object)
    stratum_codes = (
        keys.groupby(others, sort=True).ngroup().to_numpy() if others else np.zeros(len(sub), dtype=np.int64)
    )
    value_codes = pd.Categorical(sub[attr], categories=values).codes
    n_s, n_v, n_m = int(stratum_codes.max()) + 1, len(values), len(mets)
    # per-profile (stratum x value) sums and counts of scored values, then means over runs
    vals = sub[mets].to_numpy(dtype=float)
    has = ~np.isnan(vals)
    num = np.zeros((n_s, n_v, n_m))
    den = np.zeros((n_s, n_v, n_m))
    exists = np.zeros((n_s, n_v), dtype=bool)
    np.add.at(num, (stratum_codes, value_codes), np.where(has, vals, 0.0))
    np.add.at(den, (stratum_codes, value_codes), has.astype(float))
    exists[stratum_codes, value_codes] = True
    with np.errstate(invalid="ignore", divide="ignore"):
        prof = np.where(den > 0, num / np.where(den > 0, den, 1), np.nan)  # (S, V, M)
    pairs = list(itertools.combinations(range(n_v), 2))
    if not pairs:
        return pd.DataFrame(columns=DISPARITY_COLUMNS)
    ia = np.array([p[0] for p in pairs])
    ib = np.array([p[1] for p in pairs])
    k = len(pairs)
    pa = prof[:, ia, :].reshape(n_s, k * n_m)  # columns: pair-major, metric-minor
    pb = prof[:, ib, :].reshape(n_s, k * n_m)
    d = pb - pa
    valid = ~np.isnan(d)
    present = np.repeat(exists[:, ia] | exists[:, ib], n_m, axis=1)
    n_pairs = valid.sum(axis=0)
    n_strata = present.sum(axis=0)
    dz = np.where(valid, d, 0.0)
    with np.errstate(invalid="ignore", divide="ignore"):
        mean_diff = np.where(n_pairs > 0, dz.sum(axis=0) / np.maximum(n_pairs, 1), np.nan)
        mean_a = np.where(n_pairs > 0, np.where(valid, pa, 0.0).sum(axis=0) / np.maximum(n_pairs, 1), np.nan)
        mean_b = np.where(n_pairs > 0, np.where(valid, pb, 0.0).sum(axis=0) / np.maximum(n_pairs, 1), np.nan)
    res = paired_test(d, inference=inference, key=("disparity", *pvals.values(), attr))
    sd, lo, hi, p, method, used, p_min = (res[k] for k in ("sd", "lo", "hi", "p", "method", "used", "p_min"))
    return pd.DataFrame(
        {
            **{key: val for key, val in pvals.items()},
            "attribute": attr,
            "value_a": np.repeat(values[ia], n_m),
            "value_b": np.repeat(values[ib], n_m),
            "metric": np.tile(np.array(mets, dtype=object), k),
            "n_strata": n_strata.astype(np.int64),
            "n_pairs": n_pairs.astype(np.int64),
            "n_strata_excluded": (n_strata - n_pairs).astype(np.int64),
            "mean_a": mean_a,
            "mean_b": mean_b,
            "mean_diff": mean_diff,
            "sd_diff": sd,
            "ci_low": lo,
            "ci_high": hi,
            "level": inference.level,
            "n_boot": inference.n_boot,
            "p_value": p,
            "p_method": method,
            "n_perm": used,
            "p_min_attainable": p_min,
        }
    )


# ----------------------------------------------------------------------------- display
def disparity_display(disparity: pd.DataFrame, digits: int = 3) -> pd.DataFrame:
    """The disparity table as a reader sees it in the report: one line per comparison with
    the difference, its interval, the adjusted p-value and the marking.

    Columns: ``model, template`` (where present), ``attribute``, ``comparison`` ("b - a"),
    ``metric``, ``n_pairs``, ``difference`` ("+0.050 [+0.041, +0.059]"), ``p_adjusted``
    (formatted, "<0.001" below 0.001, "" when there is no test), ``marking`` ("significant"
    prefixed with "* ", as in the table's legend).
    """

    def fmt(x: float) -> str:
        return "" if pd.isna(x) else f"{x:+.{digits}f}"

    out = pd.DataFrame({k: disparity[k] for k in PARTITION_KEYS if k in disparity.columns})
    out["attribute"] = disparity["attribute"]
    out["comparison"] = disparity["value_b"].astype(str) + " - " + disparity["value_a"].astype(str)
    out["metric"] = disparity["metric"]
    out["n_pairs"] = disparity["n_pairs"]
    ci = [
        f" [{fmt(a)}, {fmt(b)}]" if pd.notna(a) else ""
        for a, b in zip(disparity["ci_low"], disparity["ci_high"], strict=False)
    ]
    out["difference"] = [fmt(m) + c for m, c in zip(disparity["mean_diff"], ci, strict=False)]
    out["p_adjusted"] = ["" if pd.isna(x) else ("<0.001" if x < 0.001 else f"{x:.3f}") for x in disparity["p_adjusted"]]
    out["marking"] = np.where(disparity["marking"] == "significant", "* significant", disparity["marking"])
    return out.reset_index(drop=True)
