"""Lists scored for other students: every list of a cell (the axes other than the home one x run: the
study's gender x class x run) scored for every home-axis value's student of the same cell (home
country, region, the cell's lambda), the capital distances this needs, and the behaviour cells of the
one-vs-rest contrasts pooled into their units. The home and lambda axes are the active design's
(core/reference/axes.py)."""

from __future__ import annotations

import dataclasses
import functools
from typing import Mapping, Sequence

import numpy as np
import pandas as pd

from ...reference import axes
from ...scoring import metrics as mx
from .. import decompose as dc
from .. import stats as st
from .frames import CROSS_METRICS
from .paired import _ratio


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


@dataclasses.dataclass(frozen=True, eq=False)
class _CellCodes:
    """One partition's items coded by cell: ``values`` the nationalities (sorted), and per item
    the code of its stratum (``s_code``: the other profile attributes, gender x class), of its
    nationality in ``values`` (``v_code``) and of its run (``r_code``, -1 without one); ``n_s`` strata
    and ``n_r`` runs (at least 1)."""

    values: np.ndarray
    s_code: np.ndarray
    v_code: np.ndarray
    r_code: np.ndarray
    n_s: int
    n_r: int


def _list_cross(
    part: pd.DataFrame,
    codes: _CellCodes,
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
    the one-vs-rest contrasts); the own-country / own-region shares over the located items. ``codes``:
    the cells of ``part``'s items; ``mat`` / ``pos_of``: the capital distances as an array and the
    position of each country in it (``decompose.distance_table``)."""
    values = codes.values
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
        lam_axis = axes.lambda_axis()
        lam = (
            part[lam_axis].map(dict(params.lambdas)).to_numpy(dtype=float)
            if lam_axis is not None and lam_axis in part.columns
            else np.full(len(part), np.nan)  # no lambda axis: no Acc
        )
        acc = mx.accessibility(dist, lam[:, None])
        n = len(part)
        rep = pd.to_numeric(part["rep"], errors="coerce").to_numpy(dtype=float)
        acad = (
            pd.to_numeric(part["acad"], errors="coerce").to_numpy(dtype=float)
            if "acad" in part.columns
            else np.full(n, np.nan)
        )
        # metrics.weighted_mean (weights renormalised over the available components), with the item's Rep and
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
    rs, rv, rr = codes.s_code[first], codes.v_code[first], codes.r_code[first]
    ok = rr >= 0
    g_has = ~np.isnan(g)
    n_v = len(values)
    shape = (codes.n_s, n_v, max(codes.n_r, 1))
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
    it = dc.scored_items(items)
    home = axes.home()
    it = it[it[home].notna()] if home is not None and home in it.columns else it.iloc[0:0]
    mets = [m for m in CROSS_METRICS if m in metrics]
    if it.empty or not mets:
        return {}
    mat, pos_of = dc.distance_table(distances)
    keys = [k for k in st.PARTITION_KEYS if k in it.columns]
    out = {}
    for pvals, part in st.partitions(it, keys):
        others = [a for a in st.profile_attributes() if a != home and a in part.columns]
        kf = st.key_frame(part, others)
        s_code = kf.groupby(others, sort=True).ngroup().to_numpy() if others else np.zeros(len(part), np.int64)
        values = np.array(sorted(part[home].unique()), dtype=object)
        v_code = pd.Categorical(part[home], categories=values).codes.astype(np.int64)
        runs = np.array(sorted(part["run"].dropna().unique()))
        r_code = pd.Categorical(part["run"], categories=runs).codes.astype(np.int64)
        n_s, n_r = int(s_code.max()) + 1, max(len(runs), 1)
        codes = _CellCodes(values, s_code, v_code, r_code, n_s, n_r)
        G = _list_cross(part, codes, mets, mat, pos_of, student_iso3, params, table)
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
    home = axes.home()
    if "distance_km" in items.columns and home is not None and home in items.columns:
        pairs = pd.DataFrame(
            {
                "a": items[home].map(dict(student_iso3)),
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
    from ...reference import geo

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
