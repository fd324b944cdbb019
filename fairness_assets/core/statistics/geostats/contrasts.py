"""One-vs-rest contrasts (issue 15; issue 20 for behaviour and needs): each region, each value of the
design's home axis (the study's nationality), and the Global South, against the rest, paired within
the strata of the other axes (the study's gender x class) with the runs as replicates, bootstrap
interval, sign-flip permutation test, correction within each family. Given the items, every contrast
also has its ``behaviour`` and ``needs`` rows (the ``geostats`` package docstring). The three families
need a home axis (:func:`geo_contrast_specs`): a design without one has none."""

from __future__ import annotations

import dataclasses
from typing import Mapping, Optional, Sequence, Union

import numpy as np
import pandas as pd

from ...reference import axes
from .. import stats as st
from ..inference import DEFAULT_INFERENCE, InferenceParams
from .cross import _behaviour_cells, _geo_cross, _GeoCross, _pool_to_units
from .frames import BY_CONSTRUCTION_NOTE, CONTRAST_COLUMNS, GEO_METRICS, STUDENT_INDEPENDENT, Replicates
from .frames import strata as default_strata
from .paired import _cells, _correct, _prep, _ratio, _unit_cols
from .positions import Positions


@dataclasses.dataclass(frozen=True)
class OneVsRest:
    """One family of one-vs-rest contrasts: each value of ``attribute`` (``region``,
    ``north_south``, the home axis: the study's ``nationality``) against all the other values.

    ``values``: the values reported (None: every value), e.g. only "Global South" for the
    North/South split, whose two rows mirror each other; the family counts only the rows reported.
    ``analysis``: the rows' ``analysis`` (None: ``"{attribute}_vs_rest"``)."""

    attribute: str
    values: Optional[Sequence[str]] = None
    analysis: Optional[str] = None


def geo_contrast_specs() -> tuple[OneVsRest, ...]:
    """The three geographic families of :func:`geo_contrasts`, in their order: each region, the
    Global South, each value of the active design's home axis (``{home}_vs_rest``: the study's
    ``nationality_vs_rest``). None for a design without a home axis (no student has a home country,
    hence no region)."""
    home = axes.home()
    if home is None:
        return ()
    return (
        OneVsRest("region", analysis="region_vs_rest"),
        OneVsRest("north_south", values=("Global South",), analysis="south_vs_north"),
        OneVsRest(home, analysis=f"{home}_vs_rest"),
    )


def __getattr__(name: str):
    # GEO_CONTRASTS, read at access time: the active design's families
    if name == "GEO_CONTRASTS":
        return geo_contrast_specs()
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def group_contrasts(
    responses: pd.DataFrame,
    contrast: Union[str, OneVsRest],
    metrics: Sequence[str] = GEO_METRICS,
    *,
    strata: Optional[Sequence[str]] = None,
    replicates: Replicates = "runs",
    inference: InferenceParams = DEFAULT_INFERENCE,
    family: Sequence[str] = ("model", "template", "analysis", "component"),
    cross: Optional[Mapping[tuple, "_GeoCross"]] = None,
) -> pd.DataFrame:
    """Each value of the contrast's attribute (``region``, ``north_south``, the home axis: the study's
    ``nationality``) against all the other values, paired within strata. ``contrast``: a
    :class:`OneVsRest` (the attribute, the values reported, the analysis name), or the attribute alone
    (every value reported, analysis ``"{attribute}_vs_rest"``).

    A *unit* is one stratum (``strata``: every axis but the home one by default, :func:`frames.strata`:
    the study's gender x class) and, with
    ``replicates="runs"``, one run: in each unit, ``d = mean(value) - mean(rest)`` over the
    scored responses of the unit's profiles (so with 10 runs and 9 strata there are 90 units;
    ``replicates="strata"`` averages the runs first: 9 units). ``mean_diff > 0``: the value
    scores higher than the rest. Interval: percentile bootstrap over units; test: sign-flip
    permutation (core.statistics.stats), exact for <= 13 units else Monte Carlo with ``inference.n_perm``
    sign vectors (smallest p 1/(n_perm+1)); ``inference.correction`` within ``family`` (by default one analysis
    of one model x template: every value and metric). ``contrast.values`` restricts the rows reported;
    the family counts only the rows reported.

    Columns: ``CONTRAST_COLUMNS`` (``reference`` is "rest", or the other value when the
    attribute has two values). Without ``cross`` every row is ``component`` "total"; with it
    (:func:`geo_contrasts` builds it from the items) each contrast also has its ``behaviour`` and
    ``needs`` rows (module docstring); ``mean_value`` / ``mean_reference`` of a behaviour row are
    the group's own lists and the rest's lists, both scored for the group's students.
    """
    spec = OneVsRest(contrast) if isinstance(contrast, str) else contrast
    attribute, values, analysis = spec.attribute, spec.values, spec.analysis
    strata = default_strata() if strata is None else tuple(strata)
    home = axes.home()
    df, keys = _prep(responses, metrics)
    if attribute not in df.columns:
        raise ValueError(f"responses lack the attribute {attribute!r} (attach regions with response_geography)")
    frames = []
    for pvals, part in st.partitions(df, keys):
        part = part[part[attribute].notna()]
        mets = [m for m in metrics if m in part.columns and part[m].notna().any()]
        if part.empty or not mets or part[attribute].nunique() < 2:
            continue
        ucols, unit_name = _unit_cols(part, [s for s in strata if s != attribute], replicates)
        num, den, groups = _cells(part, ucols, attribute, mets)
        tot_n, tot_d = num.sum(axis=1, keepdims=True), den.sum(axis=1, keepdims=True)
        ref = "rest" if len(groups) > 2 else None
        refs = groups[::-1]
        if values is not None:  # only the rows reported (a column's draws do not depend on the others)
            keep = np.isin(groups, np.array(list(values), dtype=object))
            num, den, groups, refs = num[:, keep], den[:, keep], groups[keep], refs[keep]
        mv = _ratio(num, den)
        mr = _ratio(tot_n - num, tot_d - den)
        d = mv - mr  # (U, G, M)
        n_u, n_g, n_m = d.shape
        if n_g == 0:
            continue
        flat = d.reshape(n_u, n_g * n_m)
        cr = (cross or {}).get(tuple(pvals.values())) if home is not None and home in part.columns else None
        key = ("geo_contrast", *pvals.values(), attribute, unit_name)
        split = (
            _split(
                part, cr, (home, attribute), groups, mets, ucols, d, st.cell_rng(inference.seed, "behaviour_pick", *key)
            )
            if cr is not None
            else None
        )
        width = n_g * n_m
        if split is not None:  # one call: the total's draws (and results) do not depend on the other columns
            beh_flat, needs_flat, own_b, oth_b, by_c, sym_flat = split
            allres = st.paired_test(
                np.hstack([flat, np.where(by_c[None, :], np.nan, needs_flat)]), inference=inference, key=key
            )
            res = {k: v[:width] for k, v in allres.items()}
            # behaviour: the interval of the behaviour part (the total's bootstrap draws); its test on the
            # matched difference (sym), except where behaviour is the total (student-independent metric)
            res_b = st.paired_test(beh_flat, inference=inference, key=key, test=False)
            res_s = st.paired_test(
                np.where(by_c[None, :], np.nan, sym_flat), inference=inference, key=key + ("behaviour",)
            )
            for k in ("p", "method", "used", "p_min"):
                res_b[k] = np.where(by_c, res[k], res_s[k])
        else:
            res = st.paired_test(flat, inference=inference, key=key)
        valid = ~np.isnan(flat)
        rows = pd.DataFrame(
            {
                **pvals,
                "analysis": analysis or f"{attribute}_vs_rest",
                "attribute": attribute,
                "value": np.repeat(groups, n_m),
                "reference": ref if ref else np.repeat(refs, n_m),
                "metric": np.tile(np.array(mets, dtype=object), n_g),
                "unit": unit_name,
                "n_units": res["n"],
                "n_units_excluded": n_u - res["n"],
                "mean_value": np.nanmean(np.where(valid, mv.reshape(n_u, -1), np.nan), axis=0) if n_u else np.nan,
                "mean_reference": np.nanmean(np.where(valid, mr.reshape(n_u, -1), np.nan), axis=0) if n_u else np.nan,
                "mean_diff": res["mean"],
                **st.inference_fields(res, inference=inference),
            }
        )
        rows["component"] = "total"
        rows["by_construction"] = False
        frames.append(rows)
        if split is None:
            continue
        res_n = {k: v[width:].copy() for k, v in allres.items()}
        n_valid = (~np.isnan(needs_flat)).sum(axis=0)
        res_n["n"] = n_valid.astype(np.int64)
        res_n["mean"] = np.where(by_c, np.where(n_valid > 0, 0.0, np.nan), res_n["mean"])
        for k in ("sd", "lo", "hi"):
            res_n[k] = np.where(by_c & (n_valid > 0), 0.0, res_n[k])
        with np.errstate(all="ignore"):
            ok_b = ~np.isnan(beh_flat)
            mv = np.nanmean(np.where(ok_b, own_b, np.nan), axis=0) if n_u else np.full(width, np.nan)
            mr = np.nanmean(np.where(ok_b, oth_b, np.nan), axis=0) if n_u else np.full(width, np.nan)
        nan = np.full(width, np.nan)
        split = {
            "behaviour": (res_b, np.where(by_c, nan, mv), np.where(by_c, nan, mr), np.zeros(width, bool)),
            "needs": (res_n, nan, nan, by_c),
        }
        for comp, (res_c, mval, mref, by_c) in split.items():
            frames.append(
                pd.DataFrame(
                    {
                        **pvals,
                        "analysis": analysis or f"{attribute}_vs_rest",
                        "attribute": attribute,
                        "value": np.repeat(groups, n_m),
                        "reference": ref if ref else np.repeat(refs, n_m),
                        "metric": np.tile(np.array(mets, dtype=object), n_g),
                        "component": comp,
                        "unit": unit_name,
                        "n_units": res_c["n"],
                        "n_units_excluded": n_u - res_c["n"],
                        "mean_value": mval,
                        "mean_reference": mref,
                        "mean_diff": res_c["mean"],
                        "sd_diff": res_c["sd"],
                        "ci_low": res_c["lo"],
                        "ci_high": res_c["hi"],
                        "level": inference.level,
                        "n_boot": inference.n_boot,
                        "p_value": res_c["p"],
                        "p_method": res_c["method"],
                        "n_perm": res_c["used"],
                        "p_min_attainable": res_c["p_min"],
                        "by_construction": by_c,
                    }
                )
            )
    cols = [c for c in CONTRAST_COLUMNS if c in keys or c not in st.PARTITION_KEYS]
    if not frames:
        return pd.DataFrame(columns=cols)
    with np.errstate(all="ignore"):
        out = _correct(pd.concat(frames, ignore_index=True), family, inference=inference)
    out.loc[out["by_construction"].astype(bool), "marking"] = BY_CONSTRUCTION_NOTE
    return out[cols]


def _split(part, cr: _GeoCross, home_attribute: tuple, groups, mets, ucols, d, rng: np.random.Generator):
    """Behaviour and needs per unit of one partition's one-vs-rest contrasts, flat columns
    (group, metric) as ``d`` (U, G, M), the total per unit: (behaviour, needs, the group's own
    lists, the rest's lists scored for the group's students, by_construction), or None.
    Behaviour per unit: the group's students' own lists minus the rest's lists scored for the
    group's students (same cell: the other axes x run, the study's gender x class x run); needs =
    total - behaviour. Student-independent metrics: behaviour = total, needs = 0 (not tested).
    ``home_attribute``: (the home axis, the contrast's attribute: the home axis itself, or one of its
    values' regions)."""
    n_u, n_g, n_m = d.shape
    home, attribute = home_attribute
    nat_val = part.groupby(home)[attribute].first() if attribute != home else None
    member = np.full((len(cr.values), n_g), np.nan)
    present = set(part[attribute].dropna())
    for i, v in enumerate(cr.values):
        val = v if nat_val is None else nat_val.get(v)
        if val is None or (isinstance(val, float) and np.isnan(val)) or val not in present:
            continue
        member[i] = (groups == val).astype(float)  # in a reported group (1), or in the rest (0)
    rescored = [m for m in mets if m in cr.metrics]
    unit_keys = st.key_frame(part, ucols)
    beh = np.full((n_u, n_g, n_m), np.nan)
    own = np.full((n_u, n_g, n_m), np.nan)
    oth = np.full((n_u, n_g, n_m), np.nan)
    sym = np.full((n_u, n_g, n_m), np.nan)
    if rescored:
        pooled = _pool_to_units(cr, ucols, unit_keys, _behaviour_cells(cr, member, rescored, rng))
        if pooled is None:
            return None
        on, cn, den, sn, sd = pooled
        j = [mets.index(m) for m in rescored]
        own[:, :, j], oth[:, :, j] = _ratio(on, den), _ratio(cn, den)
        beh[:, :, j] = own[:, :, j] - oth[:, :, j]
        sym[:, :, j] = _ratio(sn, sd)
    indep = np.array([m in STUDENT_INDEPENDENT for m in mets])
    beh[:, :, indep] = d[:, :, indep]
    beh = np.where(np.isnan(d), np.nan, beh)
    sym = np.where(np.isnan(beh), np.nan, sym)
    needs = d - beh
    return (
        beh.reshape(n_u, -1),
        needs.reshape(n_u, -1),
        own.reshape(n_u, -1),
        oth.reshape(n_u, -1),
        np.tile(indep, n_g),
        sym.reshape(n_u, -1),
    )


def geo_contrasts(
    geo_responses: pd.DataFrame,
    metrics: Sequence[str] = GEO_METRICS,
    *,
    replicates: Replicates = "runs",
    positions: Optional[Positions] = None,
    inference: InferenceParams = DEFAULT_INFERENCE,
    **kw,
) -> pd.DataFrame:
    """The three geographic families (:func:`geo_contrast_specs`): ``region_vs_rest`` (each region vs
    the others), ``south_vs_north`` (Global South vs Global North), ``{home}_vs_rest`` (each value of
    the design's home axis vs the others: the study's ``nationality_vs_rest``); each corrected on its
    own; none (an empty table) for a design without a home axis. Input: ``response_geography``.

    With ``positions`` (:class:`positions.Positions`: the ``drs_items``, the scoring parameters and
    the student positions), each contrast also gets its ``behaviour`` and ``needs`` rows
    (``component``; the contrast itself is ``total``): behaviour is the group's students' own lists
    minus the rest's lists scored for the group's students (their home country, region and lambda;
    same cell of the other axes x run), needs = total - behaviour; Holm within each (model, template,
    analysis, component). A missing part of ``positions`` is filled in from ``geo_responses``
    (:meth:`positions.Positions.resolved`). ``inference`` and ``kw`` (the other options of
    :func:`group_contrasts`: ``strata``, ``family``) reach each family's :func:`group_contrasts`."""
    import warnings

    cross = None
    specs = geo_contrast_specs()
    if not specs:
        return pd.DataFrame(columns=CONTRAST_COLUMNS)
    if positions is not None and len(positions.items) and axes.home() in geo_responses.columns:
        p = positions.resolved(geo_responses)
        cross = _geo_cross(p.items, metrics, p.params, p.distances, p.student_iso3, p.table)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)  # nanmean of an all-missing column
        parts = [
            group_contrasts(geo_responses, spec, metrics, replicates=replicates, cross=cross, inference=inference, **kw)
            for spec in specs
        ]
    parts = [p for p in parts if len(p)]
    return pd.concat(parts, ignore_index=True) if parts else pd.DataFrame(columns=CONTRAST_COLUMNS)
