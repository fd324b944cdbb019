"""Statistics that can see the geographic bias (issue 15; docs/statistics.md §7-11).

Pure functions over pandas frames returning tidy frames (pandas and numpy only, plus the
region table of ``core.reference.regions``):

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
- Behaviour and needs of the contrasts and interactions (issue 20): given the items, every
  one-vs-rest contrast and every class-gap interaction has rows ``component`` = ``total`` (the
  outcome, as before), ``behaviour`` (the group's students' own lists minus the rest's lists
  scored for the group's students: same gender x class x run, their home country, region and
  lambda) and ``needs`` (total - behaviour: the students' position). Rep, Acad (and a US+UK
  share) do not depend on the student: behaviour = total and needs is 0 by construction
  (``by_construction``, not tested). Each component has its interval and sign-flip test, Holm
  within each (analysis, component). The behaviour test of a contrast uses the matched
  difference (each group student's own list minus one of the rest's lists drawn at random in the
  cell), symmetric when the lists do not depend on the profile, which the mean over the rest is
  not when a list's share is a rare event (own country); its interval is that of the mean.
- :func:`family_summary` family sizes and the smallest attainable p per family.
- :func:`summary_sentences` plain-language sentences, significant geographic findings first.
- :func:`geo_statistics` all of it for a set of partitions.
"""

from __future__ import annotations

import functools
import itertools
from typing import Callable, Mapping, Optional, Sequence

import numpy as np
import pandas as pd

from ..common import metric_catalogue as catalogue
from ..reference import regions as rg
from ..scoring import metrics as mx
from . import decompose as dc
from . import stats as st

GEO_METRICS = catalogue.names("geography")
STRATA = ("gender", "economic_class")
REPLICATES = ("runs", "strata")
METRIC_LABELS = {**catalogue.labels("geography"), "distance_km": catalogue.metric("distance_km").label}

COMPONENTS = ("total", "behaviour", "needs")
STUDENT_INDEPENDENT = catalogue.student_independent()  # the same list scores the same for every student
CROSS_METRICS = catalogue.names("geography", position_dependent=True)  # rescored for another student's position
BY_CONSTRUCTION_NOTE = dc.BY_CONSTRUCTION_NOTE

CONTRAST_COLUMNS = [
    "model",
    "template",
    "analysis",
    "attribute",
    "value",
    "reference",
    "metric",
    "component",
    "unit",
    "n_units",
    "n_units_excluded",
    "mean_value",
    "mean_reference",
    "mean_diff",
    *st.INFERENCE_COLUMNS,
    "by_construction",
]
INTERACTION_COLUMNS = [
    "model",
    "template",
    "analysis",
    "factor",
    "kind",
    "value_a",
    "value_b",
    "metric",
    "component",
    "gap",
    "unit",
    "n_units",
    "mean_diff",
    *st.INFERENCE_COLUMNS,
    "by_construction",
]
DECOMPOSITION_COLUMNS = [
    "model",
    "template",
    "metric",
    "value_a",
    "value_b",
    "component",
    "n_pairs",
    "mean_diff",
    "share_of_total",
    *st.INFERENCE_COLUMNS,
]
HOME_COLUMNS = [
    "model",
    "template",
    "nationality",
    "student_iso3",
    "region",
    "north_south",
    "n_items_located",
    "own_country",
    "own_region",
    "abroad",
    "outside_region",
    "mean_distance_km",
]


# ----------------------------------------------------------------------------- per-response geography
def response_geography(
    items: pd.DataFrame,
    responses: pd.DataFrame,
    table: Optional[pd.DataFrame] = None,
    student_iso3: Optional[Mapping[str, str]] = None,
) -> pd.DataFrame:
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
    it["own_region"] = (
        (it["item_region"] == it["_s_region"]).astype(float).where(it["_s_region"].notna() & it["item_region"].notna())
    )
    agg = {"own_country": ("own_country", "mean"), "own_region": ("own_region", "mean"), "n_located": ("iso3", "size")}
    if "distance_km" in it:
        agg["distance_km"] = ("distance_km", "mean")
    per = it.groupby("response_id").agg(**agg)
    out = out.drop(columns=[c for c in per.columns if c in out.columns]).merge(
        per, left_on="response_id", right_index=True, how="left"
    )
    out["n_located"] = out["n_located"].fillna(0).astype(np.int64)
    return out


def region_metrics(
    geo_responses: pd.DataFrame,
    metrics: Sequence[str] = (*GEO_METRICS, "distance_km"),
    by: Sequence[str] = ("region", "north_south"),
    n_boot: int = 2000,
    level: float = 0.95,
    seed: int = 0,
) -> pd.DataFrame:
    """Means by region and by North/South with run and profile intervals: the
    ``stats.run_variability`` table (same columns) over ``response_geography``'s output."""
    mets = [m for m in metrics if m in geo_responses.columns]
    return st.run_variability(geo_responses, metrics=mets, by=tuple(by), n_boot=n_boot, level=level, seed=seed)


# ----------------------------------------------------------------------------- paired engine (stats._paired)
def _correct(
    out: pd.DataFrame, family: Sequence[str], correction: str, alpha: float, none_marking: str = "too few units"
) -> pd.DataFrame:
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
    out["marking"] = np.where(
        out["p_value"].isna(), none_marking, np.where(out["significant"], "significant", "not significant")
    )
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


# ----------------------------------------------------------------------------- lists scored for other students
class _GeoCross:
    """One partition's lists scored for every student position of the same cell.

    ``cells``: one row per cell (the other profile attributes, gender x class, and the run), in
    the order of ``G``'s first axis; ``values``: the nationalities; ``G`` (C, V_list, V_pos, M):
    the mean over the cell's scored responses of nationality v_list of its items scored for
    nationality v_pos's student of the same cell (home country, region, the cell's lambda);
    ``metrics``: the metrics of G's last axis (those of ``CROSS_METRICS`` that can be scored)."""

    def __init__(self, cells, values, G, metrics):
        self.cells, self.values, self.G, self.metrics = cells, values, G, metrics


def _group_sum(idx: np.ndarray, vals: np.ndarray, size: int) -> np.ndarray:
    """Sums of the rows of ``vals`` by flat index ``idx`` into ``size`` rows (np.add.at, faster)."""
    out = np.zeros((size,) + vals.shape[1:])
    if len(idx):
        order = np.argsort(idx, kind="stable")
        si = idx[order]
        starts = np.flatnonzero(np.r_[True, si[1:] != si[:-1]])
        out[si[starts]] = np.add.reduceat(vals[order], starts, axis=0)
    return out


def _list_cross(
    part: pd.DataFrame,
    values: np.ndarray,
    s_code,
    v_code,
    r_code,
    n_s: int,
    n_r: int,
    mets: Sequence[str],
    mat: np.ndarray,
    pos_of: Mapping[str, int],
    student_iso3: Mapping[str, str],
    params: mx.ScoringParams,
    table: pd.DataFrame,
) -> np.ndarray:
    """Every list's ``mets`` (of ``CROSS_METRICS``) scored for every nationality's student of its
    stratum (home country, region; the item's class lambda, the stratum's): (S, V, R, V, M). Acc
    and DRS with the formulas of ``core.scoring.metrics`` (as ``decompose._cross_scores``, vectorised for
    the one-vs-rest contrasts); the own-country / own-region shares over the located items."""
    reg_of = table.drop_duplicates("iso3").set_index("iso3")["region"]
    iso_s = pd.Series([student_iso3.get(v) for v in values], dtype=object)
    iso_v = iso_s.to_numpy(dtype=object)
    reg_s = iso_s.map(reg_of)
    reg_v = reg_s.to_numpy(dtype=object)
    item_iso_s = part["iso3"].astype(object)
    item_iso = item_iso_s.to_numpy(dtype=object)
    item_reg_s = item_iso_s.map(reg_of)
    item_reg = item_reg_s.to_numpy(dtype=object)
    located = item_iso_s.notna().to_numpy()
    has_iso = iso_s.notna().to_numpy()
    has_reg = reg_s.notna().to_numpy()
    item_has_reg = item_reg_s.notna().to_numpy()
    # integer codes: comparing them is much faster than comparing the strings
    iso_codes = {c: i for i, c in enumerate(pd.unique(pd.Series([*iso_v, *item_iso], dtype=object).dropna()))}
    reg_codes = {c: i for i, c in enumerate(pd.unique(pd.Series([*reg_v, *item_reg], dtype=object).dropna()))}
    cols = []
    for m in mets:
        if m == "own_country":
            a = item_iso_s.map(iso_codes).fillna(-1).to_numpy(dtype=np.int64)
            b = iso_s.map(iso_codes).fillna(-2).to_numpy(dtype=np.int64)
            cols.append(np.where(located[:, None] & has_iso[None, :], a[:, None] == b[None, :], np.nan))
        elif m == "own_region":
            a = item_reg_s.map(reg_codes).fillna(-1).to_numpy(dtype=np.int64)
            b = reg_s.map(reg_codes).fillna(-2).to_numpy(dtype=np.int64)
            cols.append(
                np.where((located & item_has_reg)[:, None] & has_reg[None, :], a[:, None] == b[None, :], np.nan)
            )
    if any(m in ("acc", "drs") for m in mets):
        p_idx = np.array([pos_of.get(c, -1) if isinstance(c, str) else -1 for c in iso_v], dtype=np.int64)
        i_idx = item_iso_s.map(pos_of).fillna(-1).to_numpy(dtype=np.int64)
        dist = mat[np.maximum(p_idx, 0)[None, :], np.maximum(i_idx, 0)[:, None]]
        dist = np.where((p_idx >= 0)[None, :] & (i_idx >= 0)[:, None], dist, np.nan)
        lam = (
            part["economic_class"].map(dict(params.lambdas)).to_numpy(dtype=float)
            if "economic_class" in part.columns
            else np.full(len(part), np.nan)
        )
        acc = mx.accessibility(dist, lam[:, None])
        n = len(part)
        rep = pd.to_numeric(part["rep"], errors="coerce").to_numpy(dtype=float)
        acad = (
            pd.to_numeric(part["acad"], errors="coerce").to_numpy(dtype=float)
            if "acad" in part.columns
            else np.full(n, np.nan)
        )
        # metrics._weighted (weights renormalised over the available components), with the item's Rep and
        # Acad added once per item instead of once per (item, student)
        acc_ok = ~np.isnan(acc)
        num = np.where(acc_ok, acc * params.w_acc, 0.0) + np.where(np.isnan(rep), 0.0, rep * params.w_rep)[:, None]
        num = num + np.where(np.isnan(acad), 0.0, acad * params.w_acad)[:, None]
        wsum = acc_ok * float(params.w_acc) + (~np.isnan(rep) * float(params.w_rep))[:, None]
        wsum = wsum + (~np.isnan(acad) * float(params.w_acad))[:, None]
        with np.errstate(invalid="ignore", divide="ignore"):
            drs = np.where(wsum > 0, num / np.where(wsum > 0, wsum, 1.0), np.nan)
        scored = {"acc": acc, "drs": drs}
        cols = [scored[m] if m in scored else cols.pop(0) for m in mets]
    vals = np.stack([c.astype(float) for c in cols], axis=-1)  # (n, V, M)
    resp_codes, resp_ids = pd.factorize(part["response_id"])
    has = ~np.isnan(vals)
    order = np.argsort(resp_codes, kind="stable")
    starts = np.flatnonzero(np.r_[True, np.diff(resp_codes[order]) != 0])
    num = np.add.reduceat(np.where(has, vals, 0.0)[order], starts, axis=0)
    den = np.add.reduceat(has[order].astype(float), starts, axis=0)
    g = _ratio(num, den)
    first = np.unique(resp_codes, return_index=True)[1]
    rs, rv, rr = s_code[first], v_code[first], r_code[first]
    ok = rr >= 0
    g_has = ~np.isnan(g)
    n_v = len(values)
    shape = (n_s, n_v, max(n_r, 1))
    flat = np.ravel_multi_index((rs[ok], rv[ok], rr[ok]), shape)
    size = int(np.prod(shape))
    rnum = _group_sum(flat, np.where(g_has, g, 0.0)[ok], size).reshape(shape + (n_v, len(mets)))
    rden = _group_sum(flat, g_has[ok].astype(float), size).reshape(shape + (n_v, len(mets)))
    return _ratio(rnum, rden)


def _geo_cross(
    items: pd.DataFrame,
    metrics: Sequence[str],
    params: mx.ScoringParams,
    distances: pd.DataFrame,
    student_iso3: Mapping[str, str],
    table: pd.DataFrame,
) -> dict[tuple, _GeoCross]:
    """Per partition (tuple of its model / template values): the lists of each cell (gender x
    class x run) scored for every nationality's student of that cell (:func:`_list_cross`)."""
    it = dc._items(items)
    it = it[it["nationality"].notna()] if "nationality" in it.columns else it.iloc[0:0]
    mets = [m for m in CROSS_METRICS if m in metrics]
    if it.empty or not mets:
        return {}
    mat, pos_of = dc._distance_table(distances)
    keys = [k for k in st.PARTITION_KEYS if k in it.columns]
    out = {}
    for pvals, part in st._partitions(it, keys):
        others = [a for a in st.PROFILE_ATTRIBUTES if a != "nationality" and a in part.columns]
        kf = st._key_frame(part, others)
        s_code = kf.groupby(others, sort=True).ngroup().to_numpy() if others else np.zeros(len(part), np.int64)
        values = np.array(sorted(part["nationality"].unique()), dtype=object)
        v_code = pd.Categorical(part["nationality"], categories=values).codes.astype(np.int64)
        runs = np.array(sorted(part["run"].dropna().unique()))
        r_code = pd.Categorical(part["run"], categories=runs).codes.astype(np.int64)
        n_s, n_r = int(s_code.max()) + 1, max(len(runs), 1)
        G = _list_cross(part, values, s_code, v_code, r_code, n_s, n_r, mets, mat, pos_of, student_iso3, params, table)
        got = list(mets)
        G = G.transpose(0, 2, 1, 3, 4).reshape(n_s * n_r, len(values), len(values), len(got))
        first = np.unique(s_code, return_index=True)[1]
        strata = kf.iloc[first].reset_index(drop=True)
        cells = strata.loc[strata.index.repeat(n_r)].reset_index(drop=True)
        cells["run"] = np.tile(runs if len(runs) else np.array([None], dtype=object), n_s)
        out[tuple(pvals.values())] = _GeoCross(cells, values, G, got)
    return out


def _distances_for(items: pd.DataFrame, student_iso3: Mapping[str, str]) -> pd.DataFrame:
    """The square capital-distance table of the countries of the items and of the students: the
    distances the items were scored with (``distance_km`` of each student country x item country
    pair present), the others from the capitals (``core.reference.geo``); a country whose capital is unknown
    keeps only the pairs of the items (the others missing: such an item is left out of the Acc /
    DRS of a list scored for another student)."""
    countries = sorted({c for c in items["iso3"].dropna().unique()} | {c for c in student_iso3.values() if c})
    mat = _capital_distances(tuple(countries)).copy()
    if "distance_km" in items.columns and "nationality" in items.columns:
        pairs = pd.DataFrame(
            {
                "a": items["nationality"].map(dict(student_iso3)),
                "b": items["iso3"],
                "km": pd.to_numeric(items["distance_km"], errors="coerce"),
            }
        ).dropna()
        pairs = pairs.drop_duplicates(["a", "b"])
        pairs = pairs[pairs["a"].isin(mat.index) & pairs["b"].isin(mat.index)]
        if len(pairs):
            pos = {c: i for i, c in enumerate(mat.index)}
            arr = mat.to_numpy(dtype=float, copy=True)
            ia, ib = pairs["a"].map(pos).to_numpy(), pairs["b"].map(pos).to_numpy()
            arr[ia, ib] = pairs["km"].to_numpy()
            arr[ib, ia] = pairs["km"].to_numpy()
            mat = pd.DataFrame(arr, index=mat.index, columns=mat.columns)
    return mat


@functools.lru_cache(maxsize=8)
def _capital_distances(countries: tuple) -> pd.DataFrame:
    """Capital distances between ``countries`` (NaN for a country whose capital is unknown)."""
    from ..reference import geo

    caps = []
    for c in countries:
        try:
            caps.append(geo.capital_of(c).__dict__)
        except Exception:  # noqa: BLE001 - unknown capital: the pairs of the items only
            continue
    table = pd.DataFrame(caps, columns=["iso3", "country", "capital", "lat", "lon"])
    known = geo.distance_lookup(geo.capital_distance_matrix(table)) if len(table) else pd.DataFrame()
    return known.reindex(index=list(countries), columns=list(countries))


def _behaviour_cells(cross: _GeoCross, member: np.ndarray, mets: Sequence[str], rng: np.random.Generator):
    """For each cell, group and metric: the group's students' own lists (num) and the rest's
    lists scored for the same students (cross num), over the group's students with both, and
    their count. ``member`` (V, G): 1 where the nationality is in the group, 0 in the rest,
    NaN where it is in neither. Returns own_num, cross_num, den, and for the test the matched
    difference's sum and count (one rest list drawn at random per group student): (C, G, M')."""
    idx = [cross.metrics.index(m) for m in mets]
    Gc = cross.G[..., idx]
    W = ~np.isnan(Gc)
    G0 = np.where(W, Gc, 0.0)
    inm = np.nan_to_num(member, nan=0.0)
    rest = np.where(np.isnan(member), 0.0, 1.0 - member)
    rnum = np.matmul(G0.transpose(0, 2, 3, 1), rest).transpose(0, 1, 3, 2)  # (C, S, G, M)
    rden = np.matmul(W.astype(float).transpose(0, 2, 3, 1), rest).transpose(0, 1, 3, 2)
    R = _ratio(rnum, rden)  # the rest's lists scored for student s
    v = np.arange(Gc.shape[1])
    diag = Gc[:, v, v, :]  # (C, V, M): own lists, own position
    ok = ~np.isnan(R) & ~np.isnan(diag)[:, :, None, :]
    w = ok * inm[None, :, :, None]
    own_num = (w * np.nan_to_num(diag)[:, :, None, :]).sum(axis=1)
    cross_num = (w * np.nan_to_num(R)).sum(axis=1)
    # for the test: each group student's own list minus ONE list of the rest drawn at random in the cell
    # (both scored for that student): symmetric about 0 when the lists do not depend on the profile
    n_c, n_v, n_g = Gc.shape[0], Gc.shape[1], inm.shape[1]
    members = [np.flatnonzero(rest[:, g] > 0) for g in range(n_g)]
    width = max((len(m) for m in members), default=0)
    sym_num = np.zeros((n_c, n_g, len(mets)))
    sym_den = np.zeros_like(sym_num)
    if width:
        pad = np.zeros((n_g, width), dtype=np.int64)
        n_rest = np.array([len(m) for m in members])
        for g, m in enumerate(members):
            pad[g, : len(m)] = m
        u = rng.random((n_c, n_v, n_g))
        pick = pad[np.arange(n_g)[None, None, :], np.minimum((u * n_rest).astype(np.int64), np.maximum(n_rest - 1, 0))]
        other = Gc[np.arange(n_c)[:, None, None], pick, np.arange(n_v)[None, :, None], :]  # (C, S, G, M)
        ok2 = ~np.isnan(other) & ~np.isnan(diag)[:, :, None, :] & (n_rest > 0)[None, None, :, None]
        w2 = ok2 * inm[None, :, :, None]
        sym_num = (w2 * (np.nan_to_num(diag)[:, :, None, :] - np.nan_to_num(other))).sum(axis=1)
        sym_den = w2.sum(axis=1)
    return own_num, cross_num, w.sum(axis=1), sym_num, sym_den


def _pool_to_units(cross: _GeoCross, ucols: list[str], unit_keys: pd.DataFrame, arrays):
    """Sum per-cell arrays (C, ...) into today's units (U, ...) (the unit of a cell: its values of
    ``ucols``); None when the units are not made of cells (a stratum other than gender / class)."""
    if any(c not in cross.cells.columns for c in ucols):
        return None
    codes = unit_keys.groupby(ucols, sort=True).ngroup().to_numpy() if ucols else np.zeros(len(unit_keys), np.int64)
    lab = {}
    for tup, code in zip(map(tuple, unit_keys[ucols].to_numpy(dtype=object)), codes, strict=False):
        lab.setdefault(tup, code)
    cell_u = (
        np.array([lab.get(tuple(r), -1) for r in cross.cells[ucols].to_numpy(dtype=object)], dtype=np.int64)
        if ucols
        else np.zeros(len(cross.cells), np.int64)
    )
    n_u = int(codes.max()) + 1 if len(codes) else 0
    ok = cell_u >= 0
    out = []
    for a in arrays:
        out.append(_group_sum(cell_u[ok], a[ok], n_u))
    return out


# ----------------------------------------------------------------------------- one-vs-rest contrasts
def group_contrasts(
    responses: pd.DataFrame,
    attribute: str,
    metrics: Sequence[str] = GEO_METRICS,
    strata: Sequence[str] = STRATA,
    replicates: str = "runs",
    values: Optional[Sequence[str]] = None,
    analysis: Optional[str] = None,
    n_perm: int = 10_000,
    n_boot: int = 2000,
    level: float = 0.95,
    seed: int = 0,
    correction: str = "holm",
    alpha: float = 0.05,
    family: Sequence[str] = ("model", "template", "analysis", "component"),
    cross: Optional[Mapping[tuple, "_GeoCross"]] = None,
) -> pd.DataFrame:
    """Each value of ``attribute`` (``region``, ``north_south``, ``nationality``) against all
    the other values, paired within strata.

    A *unit* is one stratum (``strata``: gender x class by default) and, with
    ``replicates="runs"``, one run: in each unit, ``d = mean(value) - mean(rest)`` over the
    scored responses of the unit's profiles (so with 10 runs and 9 strata there are 90 units;
    ``replicates="strata"`` averages the runs first: 9 units). ``mean_diff > 0``: the value
    scores higher than the rest. Interval: percentile bootstrap over units; test: sign-flip
    permutation (core.statistics.stats), exact for <= 13 units else Monte Carlo with ``n_perm`` sign
    vectors (smallest p 1/(n_perm+1)); correction within ``family`` (by default one analysis
    of one model x template: every value and metric). ``values`` restricts the rows reported
    (e.g. only "Global South" for the North/South split, whose two rows mirror each other);
    the family counts only the rows reported.

    Columns: ``CONTRAST_COLUMNS`` (``reference`` is "rest", or the other value when the
    attribute has two values). Without ``cross`` every row is ``component`` "total"; with it
    (:func:`geo_contrasts` builds it from the items) each contrast also has its ``behaviour`` and
    ``needs`` rows (module docstring); ``mean_value`` / ``mean_reference`` of a behaviour row are
    the group's own lists and the rest's lists, both scored for the group's students.
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
        cr = (cross or {}).get(tuple(pvals.values())) if "nationality" in part.columns else None
        key = ("geo_contrast", *pvals.values(), attribute, unit_name)
        split = (
            _split(part, cr, attribute, groups, mets, ucols, d, st._rng(seed, "behaviour_pick", *key))
            if cr is not None
            else None
        )
        width = n_g * n_m
        if split is not None:  # one call: the total's draws (and results) do not depend on the other columns
            beh_flat, needs_flat, own_b, oth_b, by_c, sym_flat = split
            allres = st._paired(
                np.hstack([flat, np.where(by_c[None, :], np.nan, needs_flat)]),
                n_perm=n_perm,
                n_boot=n_boot,
                level=level,
                seed=seed,
                key=key,
            )
            res = {k: v[:width] for k, v in allres.items()}
            # behaviour: the interval of the behaviour part (the total's bootstrap draws); its test on the
            # matched difference (sym), except where behaviour is the total (student-independent metric)
            res_b = st._paired(beh_flat, n_perm=n_perm, n_boot=n_boot, level=level, seed=seed, key=key, test=False)
            res_s = st._paired(
                np.where(by_c[None, :], np.nan, sym_flat),
                n_perm=n_perm,
                n_boot=n_boot,
                level=level,
                seed=seed,
                key=key + ("behaviour",),
            )
            for k in ("p", "method", "used", "p_min"):
                res_b[k] = np.where(by_c, res[k], res_s[k])
        else:
            res = st._paired(flat, n_perm=n_perm, n_boot=n_boot, level=level, seed=seed, key=key)
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
                **st.inference_fields(res, level, n_boot),
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
                        "level": level,
                        "n_boot": n_boot,
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
        out = _correct(pd.concat(frames, ignore_index=True), family, correction, alpha)
    out.loc[out["by_construction"].astype(bool), "marking"] = BY_CONSTRUCTION_NOTE
    return out[cols]


def _split(part, cr: _GeoCross, attribute: str, groups, mets, ucols, d, rng: np.random.Generator):
    """Behaviour and needs per unit of one partition's one-vs-rest contrasts, flat columns
    (group, metric) as ``d`` (U, G, M), the total per unit: (behaviour, needs, the group's own
    lists, the rest's lists scored for the group's students, by_construction), or None.
    Behaviour per unit: the group's students' own lists minus the rest's lists scored for the
    group's students (same cell: gender x class x run); needs = total - behaviour.
    Student-independent metrics: behaviour = total, needs = 0 (not tested)."""
    n_u, n_g, n_m = d.shape
    nat_val = part.groupby("nationality")[attribute].first() if attribute != "nationality" else None
    member = np.full((len(cr.values), n_g), np.nan)
    present = set(part[attribute].dropna())
    for i, v in enumerate(cr.values):
        val = v if nat_val is None else nat_val.get(v)
        if val is None or (isinstance(val, float) and np.isnan(val)) or val not in present:
            continue
        member[i] = (groups == val).astype(float)  # in a reported group (1), or in the rest (0)
    rescored = [m for m in mets if m in cr.metrics]
    unit_keys = st._key_frame(part, ucols)
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
    replicates: str = "runs",
    items: Optional[pd.DataFrame] = None,
    params: Optional[mx.ScoringParams] = None,
    distances: Optional[pd.DataFrame] = None,
    student_iso3: Optional[Mapping[str, str]] = None,
    table: Optional[pd.DataFrame] = None,
    **kw,
) -> pd.DataFrame:
    """The three geographic families: ``region_vs_rest`` (each region vs the others),
    ``south_vs_north`` (Global South vs Global North), ``nationality_vs_rest`` (each
    nationality vs the others); each corrected on its own. Input: ``response_geography``.

    With ``items`` (``drs_items``) and ``params``, each contrast also gets its ``behaviour`` and
    ``needs`` rows (``component``; the contrast itself is ``total``): behaviour is the group's
    students' own lists minus the rest's lists scored for the group's students (their home
    country, region and lambda; same gender x class x run), needs = total - behaviour; Holm
    within each (model, template, analysis, component). ``distances``: the square capital
    distance table (computed from the capitals when missing)."""
    import warnings

    cross = None
    if items is not None and params is not None and len(items) and "nationality" in geo_responses.columns:
        iso = (
            dict(student_iso3)
            if student_iso3 is not None
            else geo_responses.dropna(subset=["student_iso3"]).groupby("nationality")["student_iso3"].first().to_dict()
        )
        table = rg.load_regions() if table is None else table
        dist = _distances_for(items, iso) if distances is None else distances
        cross = _geo_cross(items, metrics, params, dist, iso, table)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)  # nanmean of an all-missing column
        parts = [
            group_contrasts(
                geo_responses, "region", metrics, replicates=replicates, analysis="region_vs_rest", cross=cross, **kw
            ),
            group_contrasts(
                geo_responses,
                "north_south",
                metrics,
                replicates=replicates,
                values=["Global South"],
                analysis="south_vs_north",
                cross=cross,
                **kw,
            ),
            group_contrasts(
                geo_responses,
                "nationality",
                metrics,
                replicates=replicates,
                analysis="nationality_vs_rest",
                cross=cross,
                **kw,
            ),
        ]
    parts = [p for p in parts if len(p)]
    return pd.concat(parts, ignore_index=True) if parts else pd.DataFrame(columns=CONTRAST_COLUMNS)


# ----------------------------------------------------------------------------- interactions
def class_gap_interactions(
    responses: pd.DataFrame,
    factor: str,
    metrics: Sequence[str] = ("drs", "acc", "rep", "acad"),
    gap: tuple[str, str] = ("high", "low"),
    replicates: str = "runs",
    n_perm: int = 10_000,
    n_boot: int = 2000,
    level: float = 0.95,
    seed: int = 0,
    correction: str = "holm",
    alpha: float = 0.05,
    items: Optional[pd.DataFrame] = None,
    params: Optional[mx.ScoringParams] = None,
    distances: Optional[pd.DataFrame] = None,
    student_iso3: Optional[Mapping[str, str]] = None,
    _cache: Optional[dict] = None,
) -> pd.DataFrame:
    """Is the class gap (``gap[1] - gap[0]``, low - high by default) larger for some genders
    or regions?

    ``factor="gender"``: units are the nationalities (x runs); per unit and gender, gap =
    mean(low) - mean(high). Rows ``kind="gap"``: each gender's gap with interval (no test);
    ``kind="interaction"``: for each pair of genders a < b, gap(b) - gap(a), paired over the
    units, with interval and permutation test. ``factor="region"`` (or ``north_south``):
    units are genders (x runs), gaps pool the region's nationalities, and each region's gap is
    contrasted with the rest's (``value_b`` = "rest"). Interaction rows are corrected within
    (model, template, analysis, component). Columns: ``INTERACTION_COLUMNS``.

    With ``items`` (``drs_items``) and ``params``, every gap and interaction also gets its
    ``behaviour`` and ``needs`` rows (``component``; the reported ones are ``total``): the
    behaviour part of a gap scores both classes' lists for the same student (same gender,
    nationality and run; each class's lambda in turn, averaged, as
    :func:`class_gap_decomposition`), averaged over the unit's cells; needs = total - behaviour.
    Metrics that do not depend on lambda (Rep, Acad, the own-country / own-region shares): the
    whole gap is behaviour and needs is 0 by construction (not tested).
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
        if items is not None and params is not None:
            got = _gap_behaviour(
                part,
                items,
                pvals,
                factor,
                fvals,
                gap,
                mets,
                ucols,
                nested,
                n_u,
                params,
                distances,
                student_iso3,
                _cache,
            )
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
            allres = st._paired(
                np.hstack(blocks),
                n_perm=n_perm,
                n_boot=n_boot,
                level=level,
                seed=seed,
                key=key + (kind,),
                test=kind == "interaction",
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
                            **st.inference_fields(res, level, n_boot, tested=kind == "interaction"),
                            "component": comp,
                            "by_construction": by_c,
                        }
                    )
                )
    cols = [c for c in INTERACTION_COLUMNS if c in keys or c not in st.PARTITION_KEYS]
    if not frames:
        return pd.DataFrame(columns=cols)
    out = _correct(
        pd.concat(frames, ignore_index=True), ("model", "template", "analysis", "kind", "component"), correction, alpha
    )
    out.loc[out["kind"] == "gap", "marking"] = "estimate"
    out.loc[out["by_construction"].astype(bool), "marking"] = BY_CONSTRUCTION_NOTE
    return out[cols]


def _gap_behaviour(
    part: pd.DataFrame,
    items: pd.DataFrame,
    pvals: dict,
    factor: str,
    fvals,
    gap,
    mets,
    ucols,
    nested: bool,
    n_u: int,
    params: mx.ScoringParams,
    distances: Optional[pd.DataFrame],
    student_iso3: Optional[Mapping[str, str]],
    cache: Optional[dict] = None,
):
    """The behaviour part of each unit's and factor value's class gap (U, F, M): per cell
    (gender x nationality x run), both classes' lists scored for the cell's student with each
    class's lambda in turn, averaged (``metrics.rescore_with_lambda``: the two students share
    their home, so the items' own distances), then averaged over the cells
    of the unit and factor value (missing for metrics without lambda: the caller uses the total
    gap). Returns (behaviour, the rest's behaviour for a nested factor), or None when it cannot be
    computed."""
    ik = ("items", tuple(pvals.values()), tuple(gap))
    if cache is not None and ik in cache:
        it = cache[ik]
    else:
        if cache is not None and "_parts" in cache:
            parts = cache["_parts"]
        else:  # the items split by partition once (not filtered again for every partition and factor)
            all_it = dc._items(items)
            pkeys = [k for k in st.PARTITION_KEYS if k in all_it.columns]
            parts = {tuple(pv.values()): pt for pv, pt in st._partitions(all_it, pkeys)}
            if cache is not None:
                cache["_parts"] = parts
        it = parts.get(tuple(v for k, v in pvals.items() if k in items.columns))
        if it is None:
            return None
        it = it[it["economic_class"].isin(gap)] if "economic_class" in it.columns else it.iloc[0:0]
        if cache is not None:
            cache[ik] = it
    if (
        it.empty
        or any(c not in it.columns for c in ("gender", "nationality", "run", "distance_km"))
        or any(c not in ("gender", "nationality", "run") for c in ucols)
    ):
        return None
    n_f, n_m = len(fvals), len(mets)
    out = np.full((n_u, n_f, n_m), np.nan)
    rest = np.full((n_u, n_f, n_m), np.nan)
    lam_mets = [m for m in mets if m in ("drs", "acc")]
    if not lam_mets:
        return out, rest
    if any(c not in params.lambdas for c in gap) or "run" not in it.columns:
        return None
    ck = (tuple(pvals.values()), tuple(gap), tuple(lam_mets))
    if cache is not None and ck in cache:
        cells = cache[ck]
    else:
        # both classes' lists scored with each class's lambda (the student's home is the list's own: same
        # nationality, so the items' own distances), per response, then per cell and class
        cols = {}
        for c in gap:
            rs = mx.rescore_with_lambda(it, params.lambdas[c], params)
            for m in lam_mets:
                cols[f"{m}@{c}"] = rs[m].to_numpy(dtype=float)
        sc = pd.DataFrame(cols, index=it.index)
        sc["response_id"] = it["response_id"].to_numpy()
        per = sc.groupby("response_id", sort=False).mean()
        keys = it.drop_duplicates("response_id").set_index("response_id")[
            ["gender", "nationality", "run", "economic_class"]
        ]
        per = per.join(keys, how="inner")
        cm = per.groupby(["gender", "nationality", "run", "economic_class"], sort=True)[list(cols)].mean()
        wide = cm.unstack("economic_class")
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
        if cache is not None:
            cache[ck] = cells
    cells = cells.copy()
    fmap = part.groupby("nationality")[factor].first() if factor != "gender" else None
    cells["_f"] = cells["gender"] if fmap is None else cells["nationality"].map(fmap)
    vals = cells[lam_mets].to_numpy(dtype=float)
    unit_keys = st._key_frame(part, ucols)
    codes = unit_keys.groupby(ucols, sort=True).ngroup().to_numpy()
    lab = {}
    for tup, code in zip(map(tuple, unit_keys[ucols].to_numpy(dtype=object)), codes, strict=False):
        lab.setdefault(tup, code)
    cu = np.array([lab.get(tuple(r), -1) for r in cells[ucols].to_numpy(dtype=object)], dtype=np.int64)
    cf = pd.Categorical(cells["_f"], categories=list(fvals)).codes
    ok = (cu >= 0) & (cf >= 0)
    has = ~np.isnan(vals)
    flat = cu[ok] * n_f + cf[ok]
    num = _group_sum(flat, np.where(has, vals, 0.0)[ok], n_u * n_f).reshape(n_u, n_f, len(lam_mets))
    den = _group_sum(flat, has[ok].astype(float), n_u * n_f).reshape(n_u, n_f, len(lam_mets))
    j = [mets.index(m) for m in lam_mets]
    out[:, :, j] = _ratio(num, den)
    if nested:
        tn, td = num.sum(axis=1, keepdims=True), den.sum(axis=1, keepdims=True)
        rest[:, :, j] = _ratio(tn - num, td - den)
    return out, rest


# ----------------------------------------------------------------------------- home bias and reach
def home_bias(geo_items: pd.DataFrame) -> pd.DataFrame:
    """Per model x template x nationality, over the located items (``iso3`` known): shares in
    the student's own country, own region, abroad (1 - own country), outside the region, and
    the mean capital distance. ``geo_items``: ``drs_items`` passed through
    :func:`item_geography`. Columns: ``HOME_COLUMNS``."""
    it = geo_items[geo_items["iso3"].notna() & geo_items["nationality"].notna()]
    keys = [k for k in st.PARTITION_KEYS if k in it.columns] + ["nationality", "student_iso3", "region", "north_south"]
    agg = (
        it.groupby(keys, dropna=False)
        .agg(
            n_items_located=("iso3", "size"),
            own_country=("own_country", "mean"),
            own_region=("own_region", "mean"),
            mean_distance_km=("distance_km", "mean"),
        )
        .reset_index()
    )
    agg["abroad"] = 1.0 - agg["own_country"]
    agg["outside_region"] = 1.0 - agg["own_region"]
    return agg[[c for c in HOME_COLUMNS if c in agg.columns]]


def item_geography(
    items: pd.DataFrame, table: Optional[pd.DataFrame] = None, student_iso3: Optional[Mapping[str, str]] = None
) -> pd.DataFrame:
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
    out["own_region"] = (
        (out["item_region"] == out["region"])
        .astype(float)
        .where(located & out["item_region"].notna() & out["region"].notna())
    )
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
def class_gap_decomposition(
    items: pd.DataFrame,
    responses: pd.DataFrame,
    params: mx.ScoringParams,
    metrics: Sequence[str] = ("acc", "drs"),
    n_perm: int = 10_000,
    n_boot: int = 2000,
    level: float = 0.95,
    seed: int = 0,
    correction: str = "holm",
    alpha: float = 0.05,
) -> pd.DataFrame:
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
                f = lambda lam, cls, m=m, prof=prof, idx=idx: prof[:, cls, idx[f"{m}@{lam}"]]  # noqa: E731
                total = f(b, ib) - f(a, ia)
                behaviour = 0.5 * (f(a, ib) - f(a, ia)) + 0.5 * (f(b, ib) - f(b, ia))
                for comp, arr in (("total", total), ("behaviour", behaviour), ("needs", total - behaviour)):
                    blocks.append(arr)
                    labels.append((m, comp))
            d = np.column_stack(blocks)
            res = st._paired(
                d, n_perm=n_perm, n_boot=n_boot, level=level, seed=seed, key=("decomposition", *pvals.values(), a, b)
            )
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
                        **st.inference_fields(res, level, n_boot),
                    }
                )
            )
    out_cols = [c for c in DECOMPOSITION_COLUMNS if c in keys or c not in st.PARTITION_KEYS]
    if not frames:
        return pd.DataFrame(columns=out_cols)
    out = _correct(
        pd.concat(frames, ignore_index=True),
        ("model", "template", "component"),
        correction,
        alpha,
        none_marking="too few pairs",
    )
    return out[out_cols]


# ----------------------------------------------------------------------------- families
def family_summary(*tables: pd.DataFrame, alpha: float = 0.05) -> pd.DataFrame:
    """One row per family of tests: ``analysis`` (with `` (behaviour)`` / `` (needs)`` appended
    for those components; ``class_gap_{component}`` for the decomposition),
    ``family_size`` m, ``unit``, ``n_units``, ``p_min_attainable``, ``holm_threshold``
    (alpha / m: what the smallest p must reach under Holm) and ``attainable`` (p_min <=
    alpha / m). Input: any of the tables above (and ``stats.counterfactual_disparity``)."""
    rows = []
    for t in tables:
        if t is None or not len(t) or "p_value" not in t:
            continue
        t = t[t["p_value"].notna()]
        if "analysis" in t:
            if "component" in t:  # the behaviour / needs families next to the totals
                comp = t["component"].astype(str)
                t = t.assign(
                    analysis=np.where(
                        comp == "total", t["analysis"].astype(str), t["analysis"].astype(str) + " (" + comp + ")"
                    )
                )
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
            rows.append(
                {
                    **dict(zip(keys, k, strict=False)),
                    "family_size": m,
                    "unit": g["unit"].iloc[0] if "unit" in g else "stratum",
                    "n_units": int(g[n_col].median()),
                    "p_min_attainable": pmin,
                    "holm_threshold": alpha / m,
                    "attainable": pmin <= alpha / m,
                    "n_significant": int(g["significant"].sum()),
                }
            )
    return pd.DataFrame(rows)


# ----------------------------------------------------------------------------- all of it
def geo_statistics(
    items: pd.DataFrame,
    responses: pd.DataFrame,
    params: mx.ScoringParams,
    table: Optional[pd.DataFrame] = None,
    student_iso3: Optional[Mapping[str, str]] = None,
    n_perm: int = 10_000,
    n_boot: int = 2000,
    level: float = 0.95,
    seed: int = 0,
    correction: str = "holm",
    alpha: float = 0.05,
    replicates: str = "runs",
    base: str = "base",
    other: str = "regional",
    distances: Optional[pd.DataFrame] = None,
    log: Optional[Callable[[str], object]] = None,
) -> dict[str, pd.DataFrame]:
    """Every table of this module for the partitions in ``items`` (``drs_items``) and
    ``responses`` (``drs_responses``): keys ``geo_responses``, ``region_metrics``,
    ``geo_contrasts``, ``class_gap_interactions``, ``home_bias``, ``home_bias_change``,
    ``class_gap_decomposition``, ``families``. ``log``: receives progress lines (done/total stages,
    ETA; at most one every 5 s, :class:`core.common.progress.Progress`)."""
    from ..common.progress import Progress

    n_parts = len(pd.unique(items["partition_key"])) if "partition_key" in items else 1
    progress = Progress("audit_geography", 5, log or (lambda _line: None), unit="stage")
    table = rg.load_regions() if table is None else table
    kw = dict(n_perm=n_perm, n_boot=n_boot, level=level, seed=seed, correction=correction, alpha=alpha)
    geo = response_geography(items, responses, table, student_iso3)
    iso = (
        dict(student_iso3)
        if student_iso3 is not None
        else geo.dropna(subset=["student_iso3"]).groupby("nationality")["student_iso3"].first().to_dict()
    )
    dist = _distances_for(items, iso) if distances is None else distances
    where = f"{n_parts} partition(s)"
    contrasts = geo_contrasts(
        geo, replicates=replicates, items=items, params=params, distances=dist, student_iso3=iso, table=table, **kw
    )
    progress.advance(detail=f"{where}: one-vs-rest and South/North contrasts")
    cache: dict = {}
    inter = []
    for f in ("gender", "region"):
        inter.append(
            class_gap_interactions(
                geo,
                f,
                replicates=replicates,
                items=items,
                params=params,
                distances=dist,
                student_iso3=iso,
                _cache=cache,
                **kw,
            )
        )
        progress.advance(detail=f"{where}: class-gap interactions by {f}")
    inter = pd.concat(inter, ignore_index=True)
    gi = item_geography(items, table, student_iso3)
    home = home_bias(gi)
    dec = class_gap_decomposition(items, responses, params, **kw)
    progress.advance(detail=f"{where}: home bias and the class-gap decomposition")
    regions = region_metrics(geo, n_boot=n_boot, level=level, seed=seed)
    progress.finish(detail=f"{where}: region metrics")
    return {
        "geo_responses": geo,
        "region_metrics": regions,
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


_ANALYSIS_ORDER = {"south_vs_north": 0, "region_vs_rest": 1, "nationality_vs_rest": 2}


def _who(r) -> tuple[str, str]:
    if r.analysis == "south_vs_north":
        return "students from the Global South", "the Global North"
    return f"students from {r.value}", "the other students"


def _ci3(m: float, lo: float, hi: float) -> str:
    return f"{m:+.3f} [{lo:+.3f}, {hi:+.3f}]"


def _sorted_findings(t: pd.DataFrame) -> pd.DataFrame:
    t = t.assign(_o=t["analysis"].map(_ANALYSIS_ORDER).fillna(9), _a=t["mean_diff"].abs())
    return t.sort_values(["_o", "_a"], ascending=[True, False])


def summary_sentences(tables: Mapping[str, pd.DataFrame], max_findings: int = 10) -> list[str]:
    """Plain-language sentences for the report's summary, from :func:`geo_statistics`'s
    tables: first the significant *behaviour* findings (what the model recommended differently,
    to whom, on which metric, how much, with interval and adjusted p: the group's lists minus
    the rest's lists, both scored for the group's students), then the significant *outcome*
    contrasts (the total), each with how much of it is behaviour and how much the students'
    position (needs); then the class-gap decomposition (behaviour vs needs), the significant
    interactions (behaviour first), and the change of home bias from the base to the regional
    template. Family sizes are integers."""
    out: list[str] = []
    c = tables.get("geo_contrasts")
    if c is not None and len(c):
        if "component" not in c.columns:
            c = c.assign(component="total")
        comp = c["component"].astype(str)
        sig = c["significant"].astype(bool)
        beh = _sorted_findings(c[(comp == "behaviour") & sig])
        for r in beh.head(max_findings).itertuples(index=False):
            who, ref = _who(r)
            out.append(
                f"{_where(r)}behaviour: the model recommended to {who} universities with a "
                f"{'higher' if r.mean_diff > 0 else 'lower'} {METRIC_LABELS.get(r.metric, r.metric)} than "
                f"what it recommended to {ref}, both scored for {who}: {_ci3(r.mean_diff, r.ci_low, r.ci_high)} "
                f"(paired within {r.unit}, {r.correction}-adjusted p = {_fmt_p(r.p_adjusted)}, "
                f"{int(r.family_size)} tests in the family)."
            )
        parts = {
            (
                tuple(getattr(r, k) for k in ("model", "template") if hasattr(r, k)),
                r.analysis,
                r.value,
                r.metric,
                r.component,
            ): r
            for r in c[comp != "total"].itertuples(index=False)
        }
        tot = _sorted_findings(c[(comp == "total") & sig])
        for r in tot.head(max_findings).itertuples(index=False):
            who, ref = _who(r)
            k = (tuple(getattr(r, x) for x in ("model", "template") if hasattr(r, x)), r.analysis, r.value, r.metric)
            b, n = parts.get(k + ("behaviour",)), parts.get(k + ("needs",))
            text = (
                f"{_where(r)}outcome: {METRIC_LABELS.get(r.metric, r.metric)} is "
                f"{'higher' if r.mean_diff > 0 else 'lower'} for {who} than for {ref}: "
                f"{_ci3(r.mean_diff, r.ci_low, r.ci_high)} (paired within {r.unit}, {r.correction}-adjusted "
                f"p = {_fmt_p(r.p_adjusted)}, {int(r.family_size)} tests in the family)"
            )
            if b is not None and n is not None and np.isfinite(b.mean_diff):
                if bool(getattr(n, "by_construction", False)):
                    text += (
                        f"; all of it is behaviour ({METRIC_LABELS.get(r.metric, r.metric)} does not depend on "
                        f"the student: the position part is 0 by construction)"
                    )
                else:
                    text += (
                        f"; of which behaviour {_ci3(b.mean_diff, b.ci_low, b.ci_high)}"
                        f"{'' if b.significant else ' (not significant)'} and the students' position (needs) "
                        f"{_ci3(n.mean_diff, n.ci_low, n.ci_high)}"
                    )
            out.append(text + ".")
        if beh.empty and tot.empty:
            fams = c.groupby(["analysis", comp.rename("_c")])["family_size"].max()
            out.append(
                "No geographic contrast, behaviour or outcome, is significant after correction ("
                + ", ".join(
                    f"{a}{'' if k == 'total' else f' ({k})'}: {int(v)} tests"
                    for (a, k), v in fams.dropna().items()
                    if k != "needs"
                )
                + ")."
            )
    d = tables.get("class_gap_decomposition")
    if d is not None and len(d):
        d = d[(d["value_a"] == "high") & (d["value_b"] == "low")]
        kcols = [k for k in ("model", "template") if k in d.columns]
        sig_b = d[(d["component"] == "behaviour") & d["significant"].astype(bool)]
        adapted = (
            {
                (k if isinstance(k, tuple) else (k,)): sorted(g["metric"].unique())
                for k, g in sig_b.groupby(kcols, sort=True)
            }
            if kcols and len(sig_b)
            else ({(): sorted(sig_b["metric"].unique())} if len(sig_b) else {})
        )
        for key, g in d.groupby([k for k in ("model", "template", "metric") if k in d.columns], sort=True):
            g = g.set_index("component")
            if not {"total", "behaviour", "needs"} <= set(g.index):
                continue
            t, b, n = g.loc["total"], g.loc["behaviour"], g.loc["needs"]
            if not all(np.isfinite([t.mean_diff, t.ci_low, t.ci_high, b.mean_diff, b.ci_low, b.ci_high])):
                continue  # not estimable (too few paired strata): the decomposition table says so
            where = " / ".join(str(k) for k in key[:-1])
            label = METRIC_LABELS.get(key[-1], key[-1])
            head = (
                f"{where}: the {label} gap, low minus high income, is {t.mean_diff:+.3f} "
                f"[{t.ci_low:+.3f}, {t.ci_high:+.3f}]; "
            )
            if not b.significant and not (b.ci_low <= 0 <= b.ci_high):
                out.append(
                    head + f"the part due to what the model recommended is not significant after correction "
                    f"but its interval excludes 0 (behaviour part {b.mean_diff:+.3f} [{b.ci_low:+.3f}, "
                    f"{b.ci_high:+.3f}], adjusted p = {_fmt_p(b.p_adjusted)}; too few units to conclude); the "
                    f"needs weighting accounts for {n.mean_diff:+.3f} [{n.ci_low:+.3f}, {n.ci_high:+.3f}]."
                )
            elif not b.significant and adapted.get(key[:-1]):
                others = ", ".join(METRIC_LABELS.get(m, m) for m in adapted[key[:-1]])
                out.append(
                    head + f"the {label} of the recommendations did not differ by income (behaviour part "
                    f"{b.mean_diff:+.3f} [{b.ci_low:+.3f}, {b.ci_high:+.3f}], adjusted p = "
                    f"{_fmt_p(b.p_adjusted)}; the behaviour part of {others} does differ); the {label} gap "
                    f"is the needs weighting (needs part {n.mean_diff:+.3f} [{n.ci_low:+.3f}, "
                    f"{n.ci_high:+.3f}])."
                )
            elif not b.significant:
                out.append(
                    head + f"the model did not adapt its recommendations to the student's income (behaviour "
                    f"part {b.mean_diff:+.3f} [{b.ci_low:+.3f}, {b.ci_high:+.3f}], adjusted p = "
                    f"{_fmt_p(b.p_adjusted)}); the {label} gap comes from the same distant universities being "
                    f"less accessible to low-income students (needs part {n.mean_diff:+.3f} "
                    f"[{n.ci_low:+.3f}, {n.ci_high:+.3f}])."
                )
            else:
                out.append(
                    head + f"the model recommended different universities by income (behaviour part "
                    f"{b.mean_diff:+.3f} [{b.ci_low:+.3f}, {b.ci_high:+.3f}], adjusted p = "
                    f"{_fmt_p(b.p_adjusted)}); the metric's needs weighting adds {n.mean_diff:+.3f} "
                    f"[{n.ci_low:+.3f}, {n.ci_high:+.3f}]."
                )
    i = tables.get("class_gap_interactions")
    if i is not None and len(i):
        if "component" not in i.columns:
            i = i.assign(component="total")
        sig = i[(i["kind"] == "interaction") & i["significant"].astype(bool) & (i["component"] != "needs")]
        sig = sig.assign(_o=(sig["component"] != "behaviour").astype(int)).sort_values("_o", kind="stable")
        for r in sig.head(max_findings).itertuples(index=False):
            other = "the rest" if r.value_b == "rest" else r.value_a
            who = r.value_a if r.value_b == "rest" else r.value_b
            label = METRIC_LABELS.get(r.metric, r.metric)
            if r.component == "behaviour":
                out.append(
                    f"{_where(r)}behaviour: how differently the model recommended to low- and high-income "
                    f"students differs for {who} from {other}: the behaviour part of the {label} class gap "
                    f"({r.gap}, both classes' lists scored for the same student) differs by "
                    f"{_ci3(r.mean_diff, r.ci_low, r.ci_high)} (adjusted p = {_fmt_p(r.p_adjusted)}, "
                    f"{int(r.family_size)} tests in the family)."
                )
            else:
                out.append(
                    f"{_where(r)}outcome: the {label} class gap ({r.gap}) differs for {who} from {other} by "
                    f"{_ci3(r.mean_diff, r.ci_low, r.ci_high)} (adjusted p = {_fmt_p(r.p_adjusted)}, "
                    f"{int(r.family_size)} tests in the family)."
                )
    h = tables.get("home_bias_change")
    if h is not None and len(h) and "own_region_change" in h:
        for model, g in h.groupby("model", sort=True):
            cols = [
                c
                for c in g.columns
                if c.startswith("own_region_") and c not in ("own_region_base", "own_region_change")
            ]
            if not cols or g["own_region_change"].isna().all():
                continue
            out.append(
                f"{model}: with the regional template the share of recommendations in the student's own region "
                f"goes from {g['own_region_base'].mean():.0%} to {g[cols[0]].mean():.0%} on average over "
                f"{g['nationality'].nunique()} nationalities; mean distance changes by "
                f"{g['mean_distance_km_change'].mean():+,.0f} km."
            )
    return out
