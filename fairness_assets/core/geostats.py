"""Statistics that can see the geographic bias (issue 15; docs/statistics.md §7-11).

Pure functions over pandas frames returning tidy frames (pandas and numpy only, plus the
region table of ``core.regions``):

- :func:`response_geography` adds, per response, the student's region and the share of its
  recommendations located in the student's own country / region and their mean distance.
- :func:`region_metrics` DRS/Acc/Rep/Acad and the own-country / own-region shares by region
  and by North/South, with run intervals (``stats.run_variability``).
- :func:`group_contrasts` / :func:`geo_contrasts` one-vs-rest contrasts (each region vs the
  rest, Global South vs North, each nationality vs the rest), paired within gender x class
  strata with the runs as replicates, bootstrap interval, sign-flip permutation test, Holm/BH
  within each family.
- :func:`class_gap_interactions` the class gap (low - high) per gender and per region and
  whether it differs between them (interaction), with intervals and tests.
- :func:`home_bias` / :func:`home_bias_change` per nationality: own country, own region,
  abroad, mean distance, and the change from the base to the regional template.
- :func:`class_gap_decomposition` every class gap split into the part due to what the model
  recommended (both classes' items scored with the same lambda) and the part due to the
  metric's needs weighting (the rest), with intervals and tests.
- :func:`family_summary` family sizes and the smallest attainable p per family.
- :func:`summary_sentences` plain-language sentences, significant geographic findings first.
- :func:`geo_statistics` all of it for a set of partitions.
"""

from __future__ import annotations

import itertools
from typing import Mapping, Optional, Sequence

import numpy as np
import pandas as pd

from . import metrics as mx
from . import regions as rg
from . import stats as st

GEO_METRICS = ("drs", "acc", "rep", "acad", "own_country", "own_region")
STRATA = ("gender", "economic_class")
REPLICATES = ("runs", "strata")
METRIC_LABELS = {"drs": "DRS", "acc": "Acc", "rep": "Rep", "acad": "Acad", "own_country": "own-country share",
                 "own_region": "own-region share", "distance_km": "mean distance (km)"}

CONTRAST_COLUMNS = [
    "model", "template", "analysis", "attribute", "value", "reference", "metric", "unit", "n_units",
    "n_units_excluded", "mean_value", "mean_reference", "mean_diff", "sd_diff", "ci_low", "ci_high", "level", "n_boot",
    "p_value", "p_method", "n_perm", "p_min_attainable", "correction", "family_size", "p_adjusted", "alpha",
    "significant", "marking",
]
INTERACTION_COLUMNS = [
    "model", "template", "analysis", "factor", "kind", "value_a", "value_b", "metric", "gap", "unit", "n_units",
    "mean_diff", "sd_diff", "ci_low", "ci_high", "level", "n_boot", "p_value", "p_method", "n_perm",
    "p_min_attainable", "correction", "family_size", "p_adjusted", "alpha", "significant", "marking",
]
DECOMPOSITION_COLUMNS = [
    "model", "template", "metric", "value_a", "value_b", "component", "n_pairs", "mean_diff", "share_of_total",
    "sd_diff", "ci_low", "ci_high", "level", "n_boot", "p_value", "p_method", "n_perm", "p_min_attainable",
    "correction", "family_size", "p_adjusted", "alpha", "significant", "marking",
]
HOME_COLUMNS = ["model", "template", "nationality", "student_iso3", "region", "north_south", "n_items_located",
                "own_country", "own_region", "abroad", "outside_region", "mean_distance_km"]


# ----------------------------------------------------------------------------- per-response geography
def response_geography(items: pd.DataFrame, responses: pd.DataFrame, table: Optional[pd.DataFrame] = None,
                       student_iso3: Optional[Mapping[str, str]] = None) -> pd.DataFrame:
    """``responses`` (the ``drs_responses`` table) with the student's ``student_iso3``,
    ``region``, ``north_south``, and per response, over its items with a known country:
    ``own_country`` (share located in the student's country), ``own_region`` (share in the
    student's region), ``distance_km`` (mean capital distance), ``n_located``.

    ``items``: the ``drs_items`` table (``response_id``, ``iso3``; ``distance_km`` when
    present). A response without located items has these shares missing.
    """
    table = rg.load_regions() if table is None else table
    out = rg.attach_student_regions(responses, table=table, iso3_of=student_iso3)
    it = items[items["iso3"].notna()][["response_id", "iso3"] + (["distance_km"] if "distance_km" in items else [])]
    it = rg.attach_regions(it, "iso3", "item_", ("region",), table, strict=False)
    s = out.set_index("response_id")
    it["_s_iso3"] = it["response_id"].map(s["student_iso3"])
    it["_s_region"] = it["response_id"].map(s["region"])
    it["own_country"] = (it["iso3"] == it["_s_iso3"]).astype(float).where(it["_s_iso3"].notna())
    it["own_region"] = (it["item_region"] == it["_s_region"]).astype(float).where(it["_s_region"].notna() & it["item_region"].notna())
    agg = {"own_country": ("own_country", "mean"), "own_region": ("own_region", "mean"),
           "n_located": ("iso3", "size")}
    if "distance_km" in it:
        agg["distance_km"] = ("distance_km", "mean")
    per = it.groupby("response_id").agg(**agg)
    out = out.drop(columns=[c for c in per.columns if c in out.columns]).merge(
        per, left_on="response_id", right_index=True, how="left")
    out["n_located"] = out["n_located"].fillna(0).astype(np.int64)
    return out


def region_metrics(geo_responses: pd.DataFrame, metrics: Sequence[str] = (*GEO_METRICS, "distance_km"),
                   by: Sequence[str] = ("region", "north_south"), n_boot: int = 2000, level: float = 0.95,
                   seed: int = 0) -> pd.DataFrame:
    """Means by region and by North/South with run and profile intervals: the
    ``stats.run_variability`` table (same columns) over ``response_geography``'s output."""
    mets = [m for m in metrics if m in geo_responses.columns]
    return st.run_variability(geo_responses, metrics=mets, by=tuple(by), n_boot=n_boot, level=level, seed=seed)


# ----------------------------------------------------------------------------- paired engine
def _paired(d: np.ndarray, n_perm: int, n_boot: int, level: float, rng_key: tuple, seed: int,
            min_units: int = 2, test: bool = True) -> dict[str, np.ndarray]:
    """Mean, SD, bootstrap interval and sign-flip p of each column of d (U, C), NaN = no unit.
    The kernels are those of core.stats (same seeding scheme, same tests). Columns with the
    same missing units share one set of draws (the bootstrap counts first, then the sign
    vectors), so a column's result does not depend on which other columns are computed with
    it. ``test=False``: interval only (p stays missing; the sign vectors, drawn after the
    bootstrap counts, are not drawn, which leaves the interval unchanged)."""
    c = d.shape[1]
    valid = ~np.isnan(d)
    n = valid.sum(axis=0)
    with np.errstate(invalid="ignore", divide="ignore"):
        mean = np.where(n > 0, np.where(valid, d, 0.0).sum(axis=0) / np.maximum(n, 1), np.nan)
    res = {"n": n.astype(np.int64), "mean": mean, "sd": np.full(c, np.nan), "lo": np.full(c, np.nan),
           "hi": np.full(c, np.nan), "p": np.full(c, np.nan), "p_min": np.full(c, np.nan),
           "method": np.full(c, None, dtype=object), "used": np.zeros(c, dtype=np.int64)}
    for r, cols in st._patterns(valid):
        if r.size < min_units:
            continue
        block = d[np.ix_(r, cols)]
        res["sd"][cols] = np.std(block, axis=0, ddof=1)
        rng = st._rng(seed, *rng_key, r.tolist())
        w = st._boot_weights(rng, r.size, n_boot)
        res["lo"][cols], res["hi"][cols] = st._percentile_ci_mean(block, w, level)
        if not test:
            continue
        p, how, used = st._sign_flip_p(block, n_perm, rng)
        res["p"][cols], res["method"][cols], res["used"][cols] = p, how, used
        res["p_min"][cols] = 2.0 / used if how == "exact" else 1.0 / (n_perm + 1.0)
    return res


def _correct(out: pd.DataFrame, family: Sequence[str], correction: str, alpha: float,
             none_marking: str = "too few units") -> pd.DataFrame:
    if correction not in st.CORRECTIONS:
        raise ValueError(f"correction must be one of {st.CORRECTIONS}, got {correction!r}")
    out = out.reset_index(drop=True)
    out["correction"] = correction
    out["family_size"] = 0
    out["p_adjusted"] = np.nan
    fam = [c for c in family if c in out.columns]
    if len(out):
        groups = out.groupby(fam, sort=False, dropna=False).indices if fam else {"all": np.arange(len(out))}
        pv = out["p_value"].to_numpy(dtype=float)
        for idx in groups.values():
            out.loc[idx, "p_adjusted"] = st.adjust_pvalues(pv[idx], correction)
            out.loc[idx, "family_size"] = int((~np.isnan(pv[idx])).sum())
    out["family_size"] = out["family_size"].astype(np.int64)
    out["alpha"] = alpha
    out["significant"] = (out["p_adjusted"] <= alpha).fillna(False).astype(bool)
    out["marking"] = np.where(out["p_value"].isna(), none_marking,
                              np.where(out["significant"], "significant", "not significant"))
    return out


def _cells(df: pd.DataFrame, unit_cols: list[str], group_col: str, mets: list[str], groups=None):
    """Sums and counts of scored values per (unit, group): num, den (U, G, M), the unit keys
    and the group values."""
    keys = st._key_frame(df, unit_cols) if unit_cols else None
    ucodes = keys.groupby(unit_cols, sort=True).ngroup().to_numpy() if unit_cols else np.zeros(len(df), np.int64)
    groups = np.array(sorted(df[group_col].dropna().unique()) if groups is None else groups, dtype=object)
    gcodes = pd.Categorical(df[group_col], categories=groups).codes
    keep = gcodes >= 0
    vals = df[mets].to_numpy(dtype=float)
    has = ~np.isnan(vals)
    n_u = int(ucodes.max()) + 1 if len(ucodes) else 0
    num = np.zeros((n_u, len(groups), len(mets)))
    den = np.zeros_like(num)
    np.add.at(num, (ucodes[keep], gcodes[keep]), np.where(has, vals, 0.0)[keep])
    np.add.at(den, (ucodes[keep], gcodes[keep]), has[keep].astype(float))
    return num, den, groups


def _ratio(num, den):
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(den > 0, num / np.where(den > 0, den, 1.0), np.nan)


def _unit_cols(part: pd.DataFrame, strata: Sequence[str], replicates: str) -> tuple[list[str], str]:
    if replicates not in REPLICATES:
        raise ValueError(f"replicates must be one of {REPLICATES}, got {replicates!r}")
    cols = [c for c in strata if c in part.columns and part[c].notna().any()]
    if replicates == "runs" and "run" in part.columns and part["run"].nunique() > 1:
        return cols + ["run"], " x ".join(cols + ["run"]) if cols else "run"
    return cols, " x ".join(cols) if cols else "all"


def _prep(responses: pd.DataFrame, metrics: Sequence[str]) -> tuple[pd.DataFrame, list[str]]:
    present = [m for m in metrics if m in responses.columns]
    df, keys = st._prepare(responses, present)
    return df, keys


# ----------------------------------------------------------------------------- one-vs-rest contrasts
def group_contrasts(responses: pd.DataFrame, attribute: str, metrics: Sequence[str] = GEO_METRICS,
                    strata: Sequence[str] = STRATA, replicates: str = "runs", values: Optional[Sequence[str]] = None,
                    analysis: Optional[str] = None, n_perm: int = 10_000, n_boot: int = 2000, level: float = 0.95,
                    seed: int = 0, correction: str = "holm", alpha: float = 0.05,
                    family: Sequence[str] = ("model", "template", "analysis")) -> pd.DataFrame:
    """Each value of ``attribute`` (``region``, ``north_south``, ``nationality``) against all
    the other values, paired within strata.

    A *unit* is one stratum (``strata``: gender x class by default) and, with
    ``replicates="runs"``, one run: in each unit, ``d = mean(value) - mean(rest)`` over the
    scored responses of the unit's profiles (so with 10 runs and 9 strata there are 90 units;
    ``replicates="strata"`` averages the runs first: 9 units). ``mean_diff > 0``: the value
    scores higher than the rest. Interval: percentile bootstrap over units; test: sign-flip
    permutation (core.stats), exact for <= 13 units else Monte Carlo with ``n_perm`` sign
    vectors (smallest p 1/(n_perm+1)); correction within ``family`` (by default one analysis
    of one model x template: every value and metric). ``values`` restricts the rows reported
    (e.g. only "Global South" for the North/South split, whose two rows mirror each other);
    the family counts only the rows reported.

    Columns: ``CONTRAST_COLUMNS`` (``reference`` is "rest", or the other value when the
    attribute has two values).
    """
    st._check(level, n_boot)
    if n_perm < 1:
        raise ValueError("n_perm must be >= 1")
    df, keys = _prep(responses, metrics)
    if attribute not in df.columns:
        raise ValueError(f"responses lack the attribute {attribute!r} (attach regions with response_geography)")
    frames = []
    for pvals, part in st._partitions(df, keys):
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
        res = _paired(flat, n_perm, n_boot, level, ("geo_contrast", *pvals.values(), attribute, unit_name), seed)
        valid = ~np.isnan(flat)
        rows = pd.DataFrame({
            **pvals, "analysis": analysis or f"{attribute}_vs_rest", "attribute": attribute,
            "value": np.repeat(groups, n_m),
            "reference": ref if ref else np.repeat(refs, n_m),
            "metric": np.tile(np.array(mets, dtype=object), n_g), "unit": unit_name,
            "n_units": res["n"], "n_units_excluded": n_u - res["n"],
            "mean_value": np.nanmean(np.where(valid, mv.reshape(n_u, -1), np.nan), axis=0) if n_u else np.nan,
            "mean_reference": np.nanmean(np.where(valid, mr.reshape(n_u, -1), np.nan), axis=0) if n_u else np.nan,
            "mean_diff": res["mean"], "sd_diff": res["sd"], "ci_low": res["lo"], "ci_high": res["hi"],
            "level": level, "n_boot": n_boot, "p_value": res["p"], "p_method": res["method"], "n_perm": res["used"],
            "p_min_attainable": res["p_min"],
        })
        frames.append(rows)
    cols = [c for c in CONTRAST_COLUMNS if c in keys or c not in st.PARTITION_KEYS]
    if not frames:
        return pd.DataFrame(columns=cols)
    with np.errstate(all="ignore"):
        out = _correct(pd.concat(frames, ignore_index=True), family, correction, alpha)
    return out[cols]


def geo_contrasts(geo_responses: pd.DataFrame, metrics: Sequence[str] = GEO_METRICS, replicates: str = "runs",
                  **kw) -> pd.DataFrame:
    """The three geographic families: ``region_vs_rest`` (each region vs the others),
    ``south_vs_north`` (Global South vs Global North), ``nationality_vs_rest`` (each
    nationality vs the others); each corrected on its own. Input: ``response_geography``."""
    import warnings
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)  # nanmean of an all-missing column
        parts = [
            group_contrasts(geo_responses, "region", metrics, replicates=replicates, analysis="region_vs_rest", **kw),
            group_contrasts(geo_responses, "north_south", metrics, replicates=replicates, values=["Global South"],
                            analysis="south_vs_north", **kw),
            group_contrasts(geo_responses, "nationality", metrics, replicates=replicates,
                            analysis="nationality_vs_rest", **kw),
        ]
    parts = [p for p in parts if len(p)]
    return pd.concat(parts, ignore_index=True) if parts else pd.DataFrame(columns=CONTRAST_COLUMNS)


# ----------------------------------------------------------------------------- interactions
def class_gap_interactions(responses: pd.DataFrame, factor: str, metrics: Sequence[str] = ("drs", "acc", "rep", "acad"),
                           gap: tuple[str, str] = ("high", "low"), replicates: str = "runs", n_perm: int = 10_000,
                           n_boot: int = 2000, level: float = 0.95, seed: int = 0, correction: str = "holm",
                           alpha: float = 0.05) -> pd.DataFrame:
    """Is the class gap (``gap[1] - gap[0]``, low - high by default) larger for some genders
    or regions?

    ``factor="gender"``: units are the nationalities (x runs); per unit and gender, gap =
    mean(low) - mean(high). Rows ``kind="gap"``: each gender's gap with interval (no test);
    ``kind="interaction"``: for each pair of genders a < b, gap(b) - gap(a), paired over the
    units, with interval and permutation test. ``factor="region"`` (or ``north_south``):
    units are genders (x runs), gaps pool the region's nationalities, and each region's gap is
    contrasted with the rest's (``value_b`` = "rest"). Interaction rows are corrected within
    (model, template, analysis). Columns: ``INTERACTION_COLUMNS``.
    """
    st._check(level, n_boot)
    df, keys = _prep(responses, metrics)
    if factor not in df.columns:
        raise ValueError(f"responses lack {factor!r}")
    nested = factor in ("region", "north_south")
    strata = ("gender",) if nested else tuple(a for a in st.PROFILE_ATTRIBUTES if a not in (factor, "economic_class"))
    frames = []
    for pvals, part in st._partitions(df, keys):
        part = part[part[factor].notna() & part["economic_class"].isin(gap)]
        mets = [m for m in metrics if m in part.columns and part[m].notna().any()]
        if part.empty or not mets or part[factor].nunique() < 2:
            continue
        ucols, unit_name = _unit_cols(part, strata, replicates)
        fvals = np.array(sorted(part[factor].unique()), dtype=object)
        part = part.assign(_cell=part[factor].astype(str) + " | " + part["economic_class"].astype(str))
        cells = [f"{f} | {c}" for f in fvals for c in gap]
        num, den, _ = _cells(part, ucols, "_cell", mets, groups=cells)
        n_u, n_m = num.shape[0], len(mets)
        num = num.reshape(n_u, len(fvals), 2, n_m)
        den = den.reshape(n_u, len(fvals), 2, n_m)
        gaps = _ratio(num[:, :, 1], den[:, :, 1]) - _ratio(num[:, :, 0], den[:, :, 0])  # (U, F, M)
        rest = None
        if nested:
            tn, td = num.sum(axis=1, keepdims=True), den.sum(axis=1, keepdims=True)
            rest = _ratio(tn[:, :, 1] - num[:, :, 1], td[:, :, 1] - den[:, :, 1]) - \
                _ratio(tn[:, :, 0] - num[:, :, 0], td[:, :, 0] - den[:, :, 0])
            inter = gaps - rest
            labels = [(f, "rest") for f in fvals]
        else:
            pairs = list(itertools.combinations(range(len(fvals)), 2))
            inter = np.stack([gaps[:, b] - gaps[:, a] for a, b in pairs], axis=1) if pairs else np.zeros((n_u, 0, n_m))
            labels = [(fvals[a], fvals[b]) for a, b in pairs]
        analysis = f"class_gap_by_{factor}"
        key = ("interaction", *pvals.values(), factor, unit_name)
        for kind, arr, labs in (("gap", gaps, [(f, "") for f in fvals]), ("interaction", inter, labels)):
            flat = arr.reshape(n_u, -1)
            res = _paired(flat, n_perm, n_boot, level, key + (kind,), seed, test=kind == "interaction")
            frames.append(pd.DataFrame({
                **pvals, "analysis": analysis, "factor": factor, "kind": kind,
                "value_a": np.repeat(np.array([a for a, _ in labs], dtype=object), n_m),
                "value_b": np.repeat(np.array([b for _, b in labs], dtype=object), n_m),
                "metric": np.tile(np.array(mets, dtype=object), len(labs)), "gap": f"{gap[1]} - {gap[0]}",
                "unit": unit_name, "n_units": res["n"], "mean_diff": res["mean"], "sd_diff": res["sd"],
                "ci_low": res["lo"], "ci_high": res["hi"], "level": level, "n_boot": n_boot,
                "p_value": res["p"] if kind == "interaction" else np.nan,
                "p_method": res["method"] if kind == "interaction" else None,
                "n_perm": res["used"] if kind == "interaction" else 0,
                "p_min_attainable": res["p_min"] if kind == "interaction" else np.nan,
            }))
    cols = [c for c in INTERACTION_COLUMNS if c in keys or c not in st.PARTITION_KEYS]
    if not frames:
        return pd.DataFrame(columns=cols)
    out = _correct(pd.concat(frames, ignore_index=True), ("model", "template", "analysis", "kind"), correction, alpha)
    out.loc[out["kind"] == "gap", "marking"] = "estimate"
    return out[cols]


# ----------------------------------------------------------------------------- home bias and reach
def home_bias(geo_items: pd.DataFrame) -> pd.DataFrame:
    """Per model x template x nationality, over the located items (``iso3`` known): shares in
    the student's own country, own region, abroad (1 - own country), outside the region, and
    the mean capital distance. ``geo_items``: ``drs_items`` passed through
    :func:`item_geography`. Columns: ``HOME_COLUMNS``."""
    it = geo_items[geo_items["iso3"].notna() & geo_items["nationality"].notna()]
    keys = [k for k in st.PARTITION_KEYS if k in it.columns] + ["nationality", "student_iso3", "region", "north_south"]
    agg = it.groupby(keys, dropna=False).agg(n_items_located=("iso3", "size"), own_country=("own_country", "mean"),
                                              own_region=("own_region", "mean"),
                                              mean_distance_km=("distance_km", "mean")).reset_index()
    agg["abroad"] = 1.0 - agg["own_country"]
    agg["outside_region"] = 1.0 - agg["own_region"]
    return agg[[c for c in HOME_COLUMNS if c in agg.columns]]


def item_geography(items: pd.DataFrame, table: Optional[pd.DataFrame] = None,
                   student_iso3: Optional[Mapping[str, str]] = None) -> pd.DataFrame:
    """``drs_items`` with the student's ``region`` / ``north_south``, the item's
    ``item_region``, and per item ``own_country`` / ``own_region`` (1/0, missing without a
    located country)."""
    table = rg.load_regions() if table is None else table
    out = items.copy()
    if "student_iso3" not in out.columns or student_iso3 is not None:
        out = rg.attach_student_regions(out, table=table, iso3_of=student_iso3)
    else:
        out = rg.attach_regions(out, "student_iso3", "", ("region", "north_south"), table)
    out = rg.attach_regions(out, "iso3", "item_", ("region",), table, strict=False)
    located = out["iso3"].notna() & out["student_iso3"].notna()
    out["own_country"] = (out["iso3"] == out["student_iso3"]).astype(float).where(located)
    out["own_region"] = (out["item_region"] == out["region"]).astype(float).where(located & out["item_region"].notna() & out["region"].notna())
    return out


def home_bias_change(home: pd.DataFrame, base: str = "base", other: str = "regional") -> pd.DataFrame:
    """From the ``base`` to the ``other`` template, per model x nationality: each of
    ``own_country, own_region, abroad, mean_distance_km`` as ``{m}_base``, ``{m}_{other}`` and
    ``{m}_change`` (other - base: percentage points / 100 for shares, km for distance)."""
    mets = ["own_country", "own_region", "abroad", "mean_distance_km"]
    keys = [k for k in ("model", "nationality", "student_iso3", "region", "north_south") if k in home.columns]
    b = home[home["template"] == base][keys + mets]
    o = home[home["template"] == other][keys + mets]
    m = b.merge(o, on=keys, how="outer", suffixes=("_base", f"_{other}"))
    for k in mets:
        m[f"{k}_change"] = m[f"{k}_{other}"] - m[f"{k}_base"]
    return m.sort_values(keys).reset_index(drop=True)


# ----------------------------------------------------------------------------- behaviour vs needs
def class_gap_decomposition(items: pd.DataFrame, responses: pd.DataFrame, params: mx.ScoringParams,
                            metrics: Sequence[str] = ("acc", "drs"), n_perm: int = 10_000, n_boot: int = 2000,
                            level: float = 0.95, seed: int = 0, correction: str = "holm",
                            alpha: float = 0.05) -> pd.DataFrame:
    """Every class gap split into behaviour (what the model recommended) and needs (the
    metric's lambda).

    For classes a < b (sorted, as ``stats.counterfactual_disparity``: the row "high, low" is
    low - high), in each stratum (gender x nationality, runs averaged per profile, as the
    counterfactual disparity), with ``f(lambda, X)`` the profile mean of a metric when the
    items X are scored with lambda (``metrics.rescore_with_lambda``):

    - total     = f(lambda_b, X_b) - f(lambda_a, X_a): the gap as reported;
    - behaviour = 1/2 [f(lambda_a, X_b) - f(lambda_a, X_a)] + 1/2 [f(lambda_b, X_b) - f(lambda_b, X_a)]:
      both classes' recommendations scored with the same lambda (each class's lambda in turn,
      averaged; symmetric, so the split does not depend on a reference class);
    - needs     = total - behaviour: the part due to the needs weighting alone.

    A class-blind model (same distribution of recommendations for every class) has behaviour
    ~0 and needs = total. Rep and Acad do not depend on lambda: their whole gap is behaviour.
    Each component: mean over strata, bootstrap interval, sign-flip test; corrected within
    (model, template, component). ``share_of_total`` = component / total.
    Columns: ``DECOMPOSITION_COLUMNS``.
    """
    st._check(level, n_boot)
    it = items[items["university_text"].notna()] if "university_text" in items.columns else items
    it = it[it["economic_class"].notna()]
    classes = sorted(c for c in pd.unique(it["economic_class"].dropna()) if c in params.lambdas)
    cols = {}
    for c in classes:
        rs = mx.rescore_with_lambda(it, params.lambdas[c], params)
        for m in metrics:
            cols[f"{m}@{c}"] = rs[m]
    scored = pd.DataFrame(cols, index=it.index)
    scored["response_id"] = it["response_id"].to_numpy()
    per_resp = scored.groupby("response_id").mean()
    keys = [k for k in st.PARTITION_KEYS if k in responses.columns]
    resp = responses[responses["economic_class"].isin(classes)]
    resp = resp.merge(per_resp, left_on="response_id", right_index=True, how="left")
    valcols = list(per_resp.columns)
    resp = resp.copy()
    resp.loc[pd.to_numeric(resp["n_items"], errors="coerce").fillna(0).to_numpy() <= 0, valcols] = np.nan
    frames = []
    for pvals, part in st._partitions(resp, keys):
        strata = [a for a in ("gender", "nationality") if a in part.columns and part[a].notna().any()]
        part = part[part[strata].notna().all(axis=1)] if strata else part
        if part.empty:
            continue
        num, den, _ = _cells(part.assign(_prof=part["economic_class"]), strata, "_prof", valcols, groups=classes)
        prof = _ratio(num, den)  # (S, classes, valcols)
        idx = {v: i for i, v in enumerate(valcols)}
        for ia, ib in itertools.combinations(range(len(classes)), 2):
            a, b = classes[ia], classes[ib]
            blocks, labels = [], []
            for m in metrics:
                f = lambda lam, cls: prof[:, cls, idx[f"{m}@{lam}"]]  # noqa: E731
                total = f(b, ib) - f(a, ia)
                behaviour = 0.5 * (f(a, ib) - f(a, ia)) + 0.5 * (f(b, ib) - f(b, ia))
                for comp, arr in (("total", total), ("behaviour", behaviour), ("needs", total - behaviour)):
                    blocks.append(arr)
                    labels.append((m, comp))
            d = np.column_stack(blocks)
            res = _paired(d, n_perm, n_boot, level, ("decomposition", *pvals.values(), a, b), seed)
            tot = {m: res["mean"][labels.index((m, "total"))] for m in metrics}
            frames.append(pd.DataFrame({
                **pvals, "metric": [m for m, _ in labels], "value_a": a, "value_b": b,
                "component": [c for _, c in labels], "n_pairs": res["n"], "mean_diff": res["mean"],
                "share_of_total": [res["mean"][j] / tot[m] if tot[m] else np.nan for j, (m, _) in enumerate(labels)],
                "sd_diff": res["sd"], "ci_low": res["lo"], "ci_high": res["hi"], "level": level, "n_boot": n_boot,
                "p_value": res["p"], "p_method": res["method"], "n_perm": res["used"],
                "p_min_attainable": res["p_min"],
            }))
    out_cols = [c for c in DECOMPOSITION_COLUMNS if c in keys or c not in st.PARTITION_KEYS]
    if not frames:
        return pd.DataFrame(columns=out_cols)
    out = _correct(pd.concat(frames, ignore_index=True), ("model", "template", "component"), correction, alpha,
                   none_marking="too few pairs")
    return out[out_cols]


# ----------------------------------------------------------------------------- families
def family_summary(*tables: pd.DataFrame, alpha: float = 0.05) -> pd.DataFrame:
    """One row per family of tests: ``analysis`` (or ``component`` for the decomposition),
    ``family_size`` m, ``unit``, ``n_units``, ``p_min_attainable``, ``holm_threshold``
    (alpha / m: what the smallest p must reach under Holm) and ``attainable`` (p_min <=
    alpha / m). Input: any of the tables above (and ``stats.counterfactual_disparity``)."""
    rows = []
    for t in tables:
        if t is None or not len(t) or "p_value" not in t:
            continue
        t = t[t["p_value"].notna()]
        if "analysis" in t:
            fam = "analysis"
        elif "component" in t:
            t = t.assign(analysis="class_gap_" + t["component"].astype(str))
            fam = "analysis"
        else:
            t = t.assign(analysis="counterfactual_" + t["attribute"].astype(str))
            fam = "analysis"
        keys = [k for k in st.PARTITION_KEYS if k in t.columns] + [fam]
        n_col = next(c for c in ("n_units", "n_pairs") if c in t.columns)
        for k, g in t.groupby(keys, sort=True):
            k = k if isinstance(k, tuple) else (k,)
            m = int(g["family_size"].max())
            pmin = float(g["p_min_attainable"].min())
            rows.append({**dict(zip(keys, k)), "family_size": m,
                         "unit": g["unit"].iloc[0] if "unit" in g else "stratum",
                         "n_units": int(g[n_col].median()), "p_min_attainable": pmin,
                         "holm_threshold": alpha / m, "attainable": pmin <= alpha / m,
                         "n_significant": int(g["significant"].sum())})
    return pd.DataFrame(rows)


# ----------------------------------------------------------------------------- all of it
def geo_statistics(items: pd.DataFrame, responses: pd.DataFrame, params: mx.ScoringParams,
                   table: Optional[pd.DataFrame] = None, student_iso3: Optional[Mapping[str, str]] = None,
                   n_perm: int = 10_000, n_boot: int = 2000, level: float = 0.95, seed: int = 0,
                   correction: str = "holm", alpha: float = 0.05, replicates: str = "runs",
                   base: str = "base", other: str = "regional") -> dict[str, pd.DataFrame]:
    """Every table of this module for the partitions in ``items`` (``drs_items``) and
    ``responses`` (``drs_responses``): keys ``geo_responses``, ``region_metrics``,
    ``geo_contrasts``, ``class_gap_interactions``, ``home_bias``, ``home_bias_change``,
    ``class_gap_decomposition``, ``families``."""
    table = rg.load_regions() if table is None else table
    kw = dict(n_perm=n_perm, n_boot=n_boot, level=level, seed=seed, correction=correction, alpha=alpha)
    geo = response_geography(items, responses, table, student_iso3)
    contrasts = geo_contrasts(geo, replicates=replicates, **kw)
    inter = pd.concat([class_gap_interactions(geo, f, replicates=replicates, **kw) for f in ("gender", "region")],
                      ignore_index=True)
    gi = item_geography(items, table, student_iso3)
    home = home_bias(gi)
    dec = class_gap_decomposition(items, responses, params, **kw)
    return {
        "geo_responses": geo,
        "region_metrics": region_metrics(geo, n_boot=n_boot, level=level, seed=seed),
        "geo_contrasts": contrasts,
        "class_gap_interactions": inter,
        "home_bias": home,
        "home_bias_change": home_bias_change(home, base, other) if "template" in home else home.iloc[0:0],
        "class_gap_decomposition": dec,
        "families": family_summary(contrasts, inter, dec, alpha=alpha),
    }


# ----------------------------------------------------------------------------- plain language
def _fmt_p(p: float) -> str:
    return "<0.001" if p < 0.001 else f"{p:.3f}"


def _where(r) -> str:
    parts = [str(getattr(r, k)) for k in ("model", "template") if hasattr(r, k)]
    return (" / ".join(parts) + ": ") if parts else ""


def summary_sentences(tables: Mapping[str, pd.DataFrame], max_findings: int = 10) -> list[str]:
    """Plain-language sentences for the report's summary, from :func:`geo_statistics`'s
    tables: significant geographic contrasts first (largest |difference| first, with interval
    and adjusted p), then the class-gap decomposition (behaviour vs needs), the significant
    interactions, and the change of home bias from the base to the regional template."""
    out: list[str] = []
    c = tables.get("geo_contrasts")
    if c is not None and len(c):
        sig = c[c["significant"]].assign(_a=lambda d: d["mean_diff"].abs())
        sig = sig.sort_values(["analysis", "_a"], ascending=[True, False], key=lambda s: s.map(
            {"south_vs_north": 0, "region_vs_rest": 1, "nationality_vs_rest": 2}) if s.name == "analysis" else s)
        for r in sig.head(max_findings).itertuples(index=False):
            who = "students from the Global South" if r.analysis == "south_vs_north" else f"students from {r.value}"
            ref = "the Global North" if r.analysis == "south_vs_north" else "the other students"
            out.append(f"{_where(r)}{METRIC_LABELS.get(r.metric, r.metric)} is "
                       f"{'higher' if r.mean_diff > 0 else 'lower'} for {who} than for {ref}: {r.mean_diff:+.3f} "
                       f"[{r.ci_low:+.3f}, {r.ci_high:+.3f}] (paired within {r.unit}, "
                       f"{r.correction}-adjusted p = {_fmt_p(r.p_adjusted)}, {r.family_size} tests in the family).")
        if sig.empty:
            fams = c.groupby("analysis")["family_size"].max()
            out.append("No geographic contrast is significant after correction ("
                       + ", ".join(f"{k}: {int(v)} tests" for k, v in fams.dropna().items()) + ").")
    d = tables.get("class_gap_decomposition")
    if d is not None and len(d):
        d = d[(d["value_a"] == "high") & (d["value_b"] == "low")]
        for key, g in d.groupby([k for k in ("model", "template", "metric") if k in d.columns], sort=True):
            g = g.set_index("component")
            if not {"total", "behaviour", "needs"} <= set(g.index):
                continue
            t, b, n = g.loc["total"], g.loc["behaviour"], g.loc["needs"]
            if not all(np.isfinite([t.mean_diff, t.ci_low, t.ci_high, b.mean_diff, b.ci_low, b.ci_high])):
                continue  # not estimable (too few paired strata): the decomposition table says so
            where = " / ".join(str(k) for k in key[:-1])
            label = METRIC_LABELS.get(key[-1], key[-1])
            head = (f"{where}: the {label} gap, low minus high income, is {t.mean_diff:+.3f} "
                    f"[{t.ci_low:+.3f}, {t.ci_high:+.3f}]; ")
            if not b.significant and not (b.ci_low <= 0 <= b.ci_high):
                out.append(head + f"the part due to what the model recommended is not significant after correction "
                           f"but its interval excludes 0 (behaviour part {b.mean_diff:+.3f} [{b.ci_low:+.3f}, "
                           f"{b.ci_high:+.3f}], adjusted p = {_fmt_p(b.p_adjusted)}; too few units to conclude); the "
                           f"needs weighting accounts for {n.mean_diff:+.3f} [{n.ci_low:+.3f}, {n.ci_high:+.3f}].")
            elif not b.significant:
                out.append(head + f"the model did not adapt its recommendations to the student's income (behaviour "
                           f"part {b.mean_diff:+.3f} [{b.ci_low:+.3f}, {b.ci_high:+.3f}], adjusted p = "
                           f"{_fmt_p(b.p_adjusted)}); the {label} gap comes from the same distant universities being "
                           f"less accessible to low-income students (needs part {n.mean_diff:+.3f} "
                           f"[{n.ci_low:+.3f}, {n.ci_high:+.3f}]).")
            else:
                out.append(head + f"the model recommended different universities by income (behaviour part "
                           f"{b.mean_diff:+.3f} [{b.ci_low:+.3f}, {b.ci_high:+.3f}], adjusted p = "
                           f"{_fmt_p(b.p_adjusted)}); the metric's needs weighting adds {n.mean_diff:+.3f} "
                           f"[{n.ci_low:+.3f}, {n.ci_high:+.3f}].")
    i = tables.get("class_gap_interactions")
    if i is not None and len(i):
        for r in i[(i["kind"] == "interaction") & i["significant"]].head(max_findings).itertuples(index=False):
            other = "the rest" if r.value_b == "rest" else r.value_a
            who = r.value_a if r.value_b == "rest" else r.value_b
            out.append(f"{_where(r)}the {METRIC_LABELS.get(r.metric, r.metric)} class gap ({r.gap}) differs for "
                       f"{who} from {other} by {r.mean_diff:+.3f} [{r.ci_low:+.3f}, {r.ci_high:+.3f}] "
                       f"(adjusted p = {_fmt_p(r.p_adjusted)}).")
    h = tables.get("home_bias_change")
    if h is not None and len(h) and "own_region_change" in h:
        for model, g in h.groupby("model", sort=True):
            cols = [c for c in g.columns if c.startswith("own_region_") and c not in ("own_region_base", "own_region_change")]
            if not cols or g["own_region_change"].isna().all():
                continue
            out.append(f"{model}: with the regional template the share of recommendations in the student's own region "
                       f"goes from {g['own_region_base'].mean():.0%} to {g[cols[0]].mean():.0%} on average over "
                       f"{g['nationality'].nunique()} nationalities; mean distance changes by "
                       f"{g['mean_distance_km_change'].mean():+,.0f} km.")
    return out
