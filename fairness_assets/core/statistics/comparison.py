"""Model comparison (issue 22): every pair of models audited on the same template and grid,
paired by profile and run (the same prompt and the same seed), and a leaderboard that claims no
rank the data cannot support. Pure: plain frames in, plain frames out.

**Differences** (:func:`compare_models`), for models A and B (A before B in name order), each
paired over the units both audits hold:

- ``metrics``: DRS, Acc, Rep, Acad per response, B - A, paired by (profile, run) and averaged per
  profile over the runs both audits hold: the unit is the profile, as in the audit's counterfactual
  tests (the runs are replicates of one prompt, not independent units). Both lists are
  scored for the same student, so the whole difference is behaviour (what the two models
  recommended); its needs part is 0 by construction (``component`` = ``behaviour``).
- ``rates``: parse rate (the answer gave at least one item), match rate (matched items / items),
  US+UK share of the located items (from the scored items, when given), per response, B - A.
- ``geography`` (given the corpus): country coverage and GRS per corpus country, B - A; figures of a
  whole partition, so the units are the runs (the interval resamples the same runs for both models,
  the test swaps the two models' answers run by run).
- ``gaps``: does B widen or narrow a group gap (:func:`gaps`, from the active design's axes)? The
  lambda axis's gap (its last value minus its first: the study's class gap, low - high income), the
  gaps of each ``none`` axis (each value minus its first: the study's female - male, transgender -
  male) and, with a home axis, the Global-South gap (South - North home countries), each metric: per
  unit (the other attributes' stratum and the run) the gap of B minus the gap of A.
  ``direction`` says whether B's gap is wider or narrower than A's (the sign of the change against
  the sign of A's gap).

Every difference has its percentile bootstrap interval over units (profiles; strata x runs for the
gaps; runs for the geography) and a sign-flip p
(``core.statistics.stats.paired_test``, the kernel of every test of the audit), adjusted within its family
(template x pair x family) by Holm or BH. A difference is ``significant`` when its adjusted p is
at most alpha.

**Leaderboard** (:func:`leaderboard`): per template and metric, each model's mean with its
interval, and its rank as a range: best = 1 + the number of models significantly better on that
metric, worst = the number of models minus those significantly worse. "1-2" means the data put
the model first or second; a rank is claimed alone only when every other model differs
significantly.
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass
from typing import Iterable, Literal, Mapping, Optional, Sequence

import numpy as np
import pandas as pd

from ..common import metric_catalogue as catalogue
from ..reference import axes
from ..reference import regions as rg
from . import stats as st
from .inference import DEFAULT_INFERENCE, Correction, InferenceParams

METRICS = catalogue.names("response")
HIGHER_IS_BETTER = catalogue.directions()
DIFFERENCE_COLUMNS = (
    "template",
    "model_a",
    "model_b",
    "family",
    "metric",
    "gap",
    "country",
    "component",
    "n_units",
    "mean_a",
    "mean_b",
    "mean_diff",
    "ci_low",
    "ci_high",
    "p_value",
    "p_adjusted",
    "family_size",
    "significant",
    "direction",
    "correction",
)
_UNIT = ["profile_id", "run"]
NORTH_SOUTH_GAP = ("north_south", "Global South", "Global North")


def gaps() -> tuple[tuple[str, str, str], ...]:
    """The group gaps of the family ``gaps``, (attribute, value, reference value: the gap is value -
    reference), from the active design: the lambda axis's last value minus its first (the study's
    ``economic_class: low - high``), each other value of each ``none`` axis minus its first (the
    study's ``gender: female - male``, ``transgender - male``), then, with a home axis, the Global
    South minus the North."""
    out = []
    lam = axes.lambda_axis()
    if lam and len(axes.values(lam)) >= 2:
        out.append((lam, axes.values(lam)[-1], axes.values(lam)[0]))
    for name in axes.names(position="none"):
        vals = axes.values(name)
        out += [(name, v, vals[0]) for v in vals[1:]]
    if axes.home():
        out.append(NORTH_SOUTH_GAP)
    return tuple(out)


def __getattr__(name: str):
    # GAPS, read at access time: the active design's
    if name == "GAPS":
        return gaps()
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def _response_values(responses: pd.DataFrame, items: Optional[pd.DataFrame], us_uk: Sequence[str]) -> pd.DataFrame:
    """One row per response with the compared values (metrics, parse and match rates, US+UK share)."""
    r = responses.copy()
    n_items = pd.to_numeric(r.get("n_items", 0), errors="coerce").fillna(0)
    n_matched = pd.to_numeric(r.get("n_matched", 0), errors="coerce").fillna(0)
    r["parse_rate"] = (n_items > 0).astype(float)
    r["match_rate"] = np.where(n_items > 0, n_matched / n_items.where(n_items > 0, 1), np.nan)
    for m in METRICS:
        r[m] = pd.to_numeric(r[m], errors="coerce") if m in r else np.nan
    if items is not None and len(items) and "iso3" in items:
        located = items[items["iso3"].notna()]
        share = located.assign(_h=located["iso3"].isin(list(us_uk)).astype(float)).groupby("response_id")["_h"].mean()
        r["us_uk_share"] = r["response_id"].map(share)
    return r


def _north_south(nationalities: Iterable) -> dict:
    try:
        table = rg.load_regions()
    except Exception:  # noqa: BLE001 - no region table: no South/North gap
        return {}
    iso = rg.home_iso3(sorted({str(n) for n in nationalities if pd.notna(n)}))
    ns = table.drop_duplicates("iso3").set_index("iso3")["north_south"] if "north_south" in table else pd.Series()
    return {n: ns.get(i) for n, i in iso.items() if i in ns.index}


def _wide(values: pd.DataFrame, unit: list[str], cols: list[str], a: str, b: str) -> tuple[pd.DataFrame, pd.DataFrame]:
    """The two models' values on the units both hold, aligned."""
    va = values[values["model"] == a].groupby(unit, dropna=False)[cols].mean()
    vb = values[values["model"] == b].groupby(unit, dropna=False)[cols].mean()
    common = va.index.intersection(vb.index)
    return va.loc[common], vb.loc[common]


def _rows(
    d: np.ndarray, mean_a, mean_b, cols: list[str], base: dict, gaps=None, key=(), *, inference: InferenceParams
) -> list[dict]:
    res = st.paired_test(d, inference=inference, key=key)
    out = []
    for j, c in enumerate(cols):
        g = gaps[j] if gaps is not None else ""
        out.append(
            {
                **base,
                "metric": c,
                "gap": g,
                "country": "",
                "n_units": int(res["n"][j]),
                "mean_a": float(mean_a[j]),
                "mean_b": float(mean_b[j]),
                "mean_diff": float(res["mean"][j]),
                "ci_low": float(res["lo"][j]),
                "ci_high": float(res["hi"][j]),
                "p_value": float(res["p"][j]),
            }
        )
    return out


PairsMode = Literal["auto", "all", "reference"]
PAIRS_MODES: tuple[str, ...] = ("auto", "all", "reference")
ALL_PAIRS_UP_TO = 8  # ``auto``: every pair up to this many models on a template, the reference beyond


@dataclass(frozen=True)
class PairChoice:
    """Which pairs of models are compared (FAIRNESS_COMPARISON_PAIRS, FAIRNESS_COMPARISON_REFERENCE): ``mode``
    auto | all | reference; ``reference``: the reference model (None: chosen, :func:`reference_model`);
    ``prefer``: models preferred as the reference where present (a release gate's baseline)."""

    mode: PairsMode = "auto"
    reference: Optional[str] = None
    prefer: tuple[str, ...] = ()


def model_pairs(models: Sequence[str], choice: PairChoice = PairChoice()) -> list[tuple[str, str]]:
    """The pairs (a, b), a < b, of ``models`` compared: every pair (``all``; ``auto`` up to
    :data:`ALL_PAIRS_UP_TO` models), or each model with the reference (``reference``; ``auto`` beyond,
    :func:`reference_model`)."""
    if choice.mode not in PAIRS_MODES:
        raise ValueError(f"pairs must be one of {PAIRS_MODES}, got {choice.mode!r}")
    models = sorted(set(models))
    if choice.mode == "all" or (choice.mode == "auto" and len(models) <= ALL_PAIRS_UP_TO):
        return list(itertools.combinations(models, 2))
    ref = reference_model(models, choice.reference, choice.prefer)
    return [(min(ref, m), max(ref, m)) for m in models if m != ref]


def reference_model(models: Sequence[str], reference: Optional[str] = None, prefer: Sequence[str] = ()) -> str:
    """The reference of ``models``: ``reference`` when it is one of them (ValueError naming them otherwise), else
    the first of ``prefer`` among them (a release gate's baseline), else the active design's first model among
    them, else the first in name order."""
    models = sorted(set(models))
    if reference:
        if reference not in models:
            raise ValueError(f"reference model {reference!r} has no scored partition here (models: {models})")
        return reference
    design = axes.current_design()
    listed = [m for m in (*prefer, *(design.models if design is not None else ())) if m in models]
    return listed[0] if listed else models[0]


def compare_models(
    responses: pd.DataFrame,
    items: Optional[pd.DataFrame] = None,
    *,
    inference: InferenceParams = DEFAULT_INFERENCE,
    us_uk: Sequence[str] = ("USA", "GBR"),
    corpus: Optional[pd.DataFrame] = None,
    params=None,
    pairs: PairChoice = PairChoice(),
) -> pd.DataFrame:
    """The pairs of models of every template in ``responses`` (``drs_responses`` of several
    partitions; ``items``: their ``drs_items``, for the US+UK share) that :func:`model_pairs` gives for
    ``pairs`` (a :class:`PairChoice`: every pair up to 8 models by default): one row per difference
    (:data:`DIFFERENCE_COLUMNS`). Empty when no template has two models. ``inference``: resamples,
    permutations, level, seed, correction, alpha.

    Given the ``corpus`` (``qs_corpus``) and the scoring ``params`` too, also the partition-level
    figures (family ``geography``): country coverage and GRS per corpus country, B - A, with the runs
    as units (:func:`_run_level_rows`)."""
    need = {"model", "template", "profile_id", "run"}
    missing = need - set(responses.columns)
    if missing:
        raise ValueError(f"compare_models: the responses lack the column(s) {sorted(missing)}")
    values = _response_values(responses, items, us_uk)
    home = axes.home()
    ns = _north_south(values[home].dropna().unique()) if home is not None and home in values else {}
    if ns:
        values["north_south"] = values[home].map(ns)
    rows: list[dict] = []
    for template, part in values.groupby("template", sort=True):
        models = sorted(part["model"].astype(str).unique())
        for a, b in model_pairs(models, pairs):
            base = {"template": template, "model_a": a, "model_b": b, "component": "behaviour"}
            for family, cols in (
                ("metrics", [m for m in METRICS if part[m].notna().any()]),
                (
                    "rates",
                    [c for c in ("parse_rate", "match_rate", "us_uk_share") if c in part and part[c].notna().any()],
                ),
            ):
                if not cols:
                    continue
                va, vb = _wide(part, _UNIT, cols, a, b)
                if not len(va):
                    continue
                # paired by (profile, run); the unit of the interval and the test is the profile (the
                # mean of its paired differences over the runs both audits hold), as in the audit's
                # counterfactual tests: the runs are replicates of one profile, not independent units
                d = (vb - va).groupby(level="profile_id", sort=True).mean()
                ma = va.where(vb.notna()).groupby(level="profile_id", sort=True).mean()
                mb = vb.where(va.notna()).groupby(level="profile_id", sort=True).mean()
                rows += _rows(
                    d.to_numpy(dtype=float),
                    np.nanmean(ma.to_numpy(dtype=float), axis=0),
                    np.nanmean(mb.to_numpy(dtype=float), axis=0),
                    cols,
                    {**base, "family": family},
                    key=("comparison", template, a, b, family),
                    inference=inference,
                )
            rows += _gap_rows(part, a, b, base, inference=inference)
            if corpus is not None and params is not None and items is not None and len(items):
                rows += _run_level_rows(items, part, a, b, base, corpus, params, inference=inference)
    out = pd.DataFrame(
        rows,
        columns=[
            c
            for c in DIFFERENCE_COLUMNS
            if c not in ("p_adjusted", "family_size", "significant", "direction", "correction")
        ],
    )
    return _adjust(out, inference=inference)


def _gap_rows(part: pd.DataFrame, a: str, b: str, base: dict, *, inference: InferenceParams) -> list[dict]:
    """B's group gaps against A's, per metric (family ``gaps``)."""
    rows = []
    mets = [m for m in METRICS if part[m].notna().any()]
    strata = axes.names(exclude=("home",))  # the study's gender x class
    for attr, hi_v, lo_v in gaps():
        if attr not in part or not mets:
            continue
        others = [c for c in (*strata, "north_south") if c in part and c != attr]
        if attr == "north_south":
            others = [c for c in strata if c in part]
        sub = part[part[attr].isin([hi_v, lo_v])]
        if sub[attr].nunique() < 2:
            continue
        unit = others + ["run"]
        # the mean of each side per unit (stratum x run), then the gap per unit and model
        means = sub.groupby(["model", attr] + unit, dropna=False)[mets].mean()
        try:
            g_hi = means.xs(hi_v, level=attr)
            g_lo = means.xs(lo_v, level=attr)
        except KeyError:
            continue
        gap = (g_hi - g_lo).dropna(how="all")
        if a not in gap.index.get_level_values("model") or b not in gap.index.get_level_values("model"):
            continue
        ga, gb = gap.xs(a, level="model"), gap.xs(b, level="model")
        common = ga.index.intersection(gb.index)
        if len(common) < 2:
            continue
        ga, gb = ga.loc[common], gb.loc[common]
        d = gb.to_numpy(dtype=float) - ga.to_numpy(dtype=float)
        label = f"{attr}: {hi_v} - {lo_v}"
        rows += _rows(
            d,
            np.nanmean(ga.to_numpy(dtype=float), axis=0),
            np.nanmean(gb.to_numpy(dtype=float), axis=0),
            mets,
            {**base, "family": "gaps"},
            gaps=[label] * len(mets),
            key=("comparison-gap", base["template"], a, b, attr, hi_v, lo_v),
            inference=inference,
        )
    return rows


class _RunCounts:
    """Per run of one model: recommendations per corpus university and the located countries."""

    def __init__(self, items: pd.DataFrame, runs: np.ndarray, uni_pos: Mapping, country_pos: Mapping):
        self.uni = np.zeros((len(runs), len(uni_pos)))
        self.located = np.zeros((len(runs), len(country_pos)))
        run_pos = {r: i for i, r in enumerate(runs)}
        r = items["run"].map(run_pos)
        u = pd.to_numeric(items["university_id"], errors="coerce").map(uni_pos)
        ok = r.notna() & u.notna()
        np.add.at(self.uni, (r[ok].astype(int).to_numpy(), u[ok].astype(int).to_numpy()), 1.0)
        c = items["iso3"].map(country_pos)
        okc = r.notna() & c.notna()
        self.located[r[okc].astype(int).to_numpy(), c[okc].astype(int).to_numpy()] = 1.0


def _geo_figures(weights: np.ndarray, ca: _RunCounts, cb: _RunCounts, geo: dict) -> tuple[np.ndarray, np.ndarray]:
    """(coverage, GRS per country) of the runs weighted by ``weights`` (k, runs) for each side
    (``ca`` gets the weights, ``cb`` 1 - weights when ``geo["swap"]``), the formulas of
    ``metrics.grs_by_country`` and ``metrics.concentration``: (k,) and (k, countries)."""
    counts = weights @ ca.uni
    located = (weights @ ca.located) > 0
    if cb is not None:
        counts = counts + (1.0 - weights) @ cb.uni
        located = located | (((1.0 - weights) @ cb.located) > 0)
    member, rep_local, total, avail, eps = geo["member"], geo["rep_local"], geo["total"], geo["avail"], geo["eps"]
    recs = (counts > 0).astype(float) @ member
    n_rec = counts @ member
    num = counts @ (member * rep_local[:, None])
    repr_ = np.minimum(1.0, recs / total)
    scaled = np.minimum(1.0, repr_ / (avail + eps))
    with np.errstate(invalid="ignore", divide="ignore"):
        covg = np.where(n_rec > 0, num / np.where(n_rec > 0, n_rec, 1.0), 0.0)
    grs = np.where(n_rec > 0, np.sqrt(scaled * covg), 0.0)
    coverage = located[:, geo["corpus_country"]].sum(axis=1) / max(1, int(geo["corpus_country"].sum()))
    return coverage, grs


def _geo_setup(corpus: pd.DataFrame, params) -> dict:
    from ..reference.corpus import avail, local_rep
    from ..scoring import metrics as mx

    ranks = mx.band_ranks(corpus["rank_raw"], params.band_rule).to_numpy(dtype=float)
    iso = corpus["iso3"].astype(str).to_numpy()
    countries = sorted(set(iso))
    cpos = {c: i for i, c in enumerate(countries)}
    frame = pd.DataFrame({"iso3": iso, "rank": ranks})
    grp = frame.groupby("iso3")["rank"]
    rep_local = local_rep(ranks, grp.transform("min").to_numpy(), grp.transform("max").to_numpy())
    member = np.zeros((len(corpus), len(countries)))
    member[np.arange(len(corpus)), [cpos[c] for c in iso]] = 1.0
    total = member.sum(axis=0)
    return {
        "uni_pos": {u: i for i, u in enumerate(pd.to_numeric(corpus["university_id"]).astype(np.int64))},
        "countries": countries,
        "country_pos": cpos,
        "member": member,
        "rep_local": rep_local,
        "total": total,
        "avail": avail(total, len(corpus)),
        "eps": params.epsilon,
    }


def _run_level_rows(
    items: pd.DataFrame,
    part: pd.DataFrame,
    a: str,
    b: str,
    base: dict,
    corpus: pd.DataFrame,
    params,
    *,
    inference: InferenceParams,
) -> list[dict]:
    """Country coverage and GRS per corpus country, B - A (family ``geography``). They are figures of a
    whole partition, so the units are the runs both audits hold: the interval resamples runs (the same
    runs for both models), the two-sided test swaps the two models' answers run by run (every swap
    when 2^runs <= n_perm, else n_perm random ones). Countries neither model recommended are left out
    (GRS 0 for both)."""
    geo = _geo_setup(corpus, params)
    ids = set(part.loc[part["model"] == a, "response_id"]) | set(part.loc[part["model"] == b, "response_id"])
    it = items[items["response_id"].isin(ids)]
    if "run" not in it.columns or "model" not in it.columns:
        return []
    runs = np.array(sorted(set(it.loc[it["model"] == a, "run"]) & set(it.loc[it["model"] == b, "run"])))
    if len(runs) < 2:
        return []
    ca = _RunCounts(it[it["model"] == a], runs, geo["uni_pos"], geo["country_pos"])
    cb = _RunCounts(it[it["model"] == b], runs, geo["uni_pos"], geo["country_pos"])
    geo["corpus_country"] = np.ones(len(geo["countries"]), dtype=bool)
    one = np.ones((1, len(runs)))
    cov_a, grs_a = _geo_figures(one, ca, None, geo)
    cov_b, grs_b = _geo_figures(one, cb, None, geo)
    shown = np.flatnonzero((grs_a[0] > 0) | (grs_b[0] > 0))
    obs = np.r_[cov_b - cov_a, (grs_b - grs_a)[0, shown]]
    rng = st.cell_rng(inference.seed, "comparison-geography", base["template"], a, b)
    n = len(runs)
    w = st.boot_weights(rng, n, inference.n_boot)
    bcov_a, bgrs_a = _geo_figures(w, ca, None, geo)
    bcov_b, bgrs_b = _geo_figures(w, cb, None, geo)
    boot = np.c_[bcov_b - bcov_a, (bgrs_b - bgrs_a)[:, shown]]
    q = [(1 - inference.level) / 2, 1 - (1 - inference.level) / 2]
    lo, hi = np.quantile(boot, q, axis=0)
    exact = n < 63 and 2**n <= inference.n_perm
    if exact:
        keep = ((np.arange(2**n)[:, None] >> np.arange(n)[None, :]) & 1).astype(float)
    else:
        keep = rng.integers(0, 2, size=(inference.n_perm, n)).astype(float)
    # a swap vector: keep[r] = 1 leaves run r as it is, 0 swaps the two models' answers in it
    pa_cov, pa_grs = _geo_figures(keep, ca, cb, geo)
    pb_cov, pb_grs = _geo_figures(keep, cb, ca, geo)
    perm = np.c_[pb_cov - pa_cov, (pb_grs - pa_grs)[:, shown]]
    tol = 1e-9 * np.maximum(1.0, np.abs(obs))
    count = (np.abs(perm) >= np.abs(obs) - tol).sum(axis=0)
    p = count / keep.shape[0] if exact else (count + 1.0) / (inference.n_perm + 1.0)
    means_a = np.r_[cov_a, grs_a[0, shown]]
    means_b = np.r_[cov_b, grs_b[0, shown]]
    names = ["country_coverage"] + ["grs"] * len(shown)
    where = [""] + [geo["countries"][i] for i in shown]
    return [
        {
            **base,
            "family": "geography",
            "metric": m,
            "gap": "",
            "country": c,
            "n_units": n,
            "mean_a": float(ma),
            "mean_b": float(mb),
            "mean_diff": float(o),
            "ci_low": float(low),
            "ci_high": float(h),
            "p_value": float(pv),
        }
        for m, c, ma, mb, o, low, h, pv in zip(names, where, means_a, means_b, obs, lo, hi, p, strict=False)
    ]


def _adjust(out: pd.DataFrame, *, inference: InferenceParams) -> pd.DataFrame:
    correction: Correction = inference.correction
    alpha = inference.alpha
    out = out.copy()
    out["p_adjusted"] = np.nan
    out["family_size"] = 0
    if len(out):
        for _, idx in out.groupby(["template", "model_a", "model_b", "family"], sort=False).groups.items():
            p = out.loc[idx, "p_value"].to_numpy(dtype=float)
            ok = ~np.isnan(p)
            adj = np.full(len(p), np.nan)
            if ok.any():
                adj[ok] = st.adjust_pvalues(p[ok], correction)
            out.loc[idx, "p_adjusted"] = adj
            out.loc[idx, "family_size"] = int(ok.sum())
    out["family_size"] = out["family_size"].astype(np.int64)
    out["significant"] = out["p_adjusted"].le(alpha).fillna(False).astype(bool)
    widen = np.sign(out["mean_diff"]) == np.sign(out["mean_a"])
    out["direction"] = np.where(
        out["family"] != "gaps",
        "",
        np.where(
            out["mean_diff"].abs() < 1e-12, "unchanged", np.where(widen, "B's gap is wider", "B's gap is narrower")
        ),
    )
    out["correction"] = correction
    return out[list(DIFFERENCE_COLUMNS)]


def leaderboard(
    responses: pd.DataFrame,
    differences: pd.DataFrame,
    items: Optional[pd.DataFrame] = None,
    *,
    inference: InferenceParams = DEFAULT_INFERENCE,
    us_uk: Sequence[str] = ("USA", "GBR"),
) -> pd.DataFrame:
    """Models x metrics per template (the study's Table 3): mean, percentile bootstrap interval over
    profiles (each the mean over its runs), and the rank range the paired comparisons support (module
    docstring). ``inference``: its ``n_boot``, ``level`` and ``seed`` (no test here)."""
    values = _response_values(responses, items, us_uk)
    rows = []
    cols = [c for c in (*METRICS, "parse_rate", "match_rate", "us_uk_share") if c in values]
    for template, part in values.groupby("template", sort=True):
        models = sorted(part["model"].astype(str).unique())
        for model in models:
            v = part[part["model"] == model].groupby(["profile_id"], dropna=False)[cols].mean()
            res = st.paired_test(
                v.to_numpy(dtype=float), inference=inference, key=("leaderboard", template, model), test=False
            )
            for j, c in enumerate(cols):
                if res["n"][j] == 0:
                    continue
                rows.append(
                    {
                        "template": template,
                        "model": model,
                        "metric": c,
                        "n_units": int(res["n"][j]),
                        "mean": float(res["mean"][j]),
                        "ci_low": float(res["lo"][j]),
                        "ci_high": float(res["hi"][j]),
                    }
                )
    board = pd.DataFrame(rows, columns=["template", "model", "metric", "n_units", "mean", "ci_low", "ci_high"])
    if board.empty:
        return board.assign(
            rank_best=pd.Series(dtype="int64"), rank_worst=pd.Series(dtype="int64"), rank="", tied_with=""
        )
    better, worse, tied = [], [], []
    diffs = differences[differences["family"].isin(["metrics", "rates"])] if len(differences) else differences
    verdicts = _verdicts(diffs)  # one lookup a pair (a scan of the differences a pair grew as models^4)
    models_of = board.groupby(["template", "metric"], sort=False)["model"].agg(list).to_dict()
    for r in board.itertuples(index=False):
        others = [m for m in models_of[(r.template, r.metric)] if m != r.model]
        up = high = 0
        ties = []
        for other in others:
            side = _significantly(verdicts, r.template, r.metric, r.model, other)
            if side == 0:
                ties.append(other)
            elif side > 0:
                high += 1  # r is significantly better than o
            else:
                up += 1
        n = len(others) + 1
        better.append(1 + up)
        worse.append(n - high)
        tied.append(", ".join(ties))
    board["rank_best"], board["rank_worst"], board["tied_with"] = better, worse, tied
    board["rank"] = [
        str(b) if b == w else f"{b}-{w}" for b, w in zip(board["rank_best"], board["rank_worst"], strict=False)
    ]
    return board


def _verdicts(diffs: pd.DataFrame) -> dict[tuple, tuple[bool, float]]:
    """{(template, metric, model_a, model_b): (significant, mean_diff)} of the differences (the first row of a
    key, as a scan would find it)."""
    if diffs is None or not len(diffs):
        return {}
    keys = zip(diffs["template"], diffs["metric"], diffs["model_a"], diffs["model_b"], strict=True)
    out: dict[tuple, tuple[bool, float]] = {}
    for key, sig, diff in zip(keys, diffs["significant"], diffs["mean_diff"], strict=True):
        out.setdefault(key, (bool(sig), float(diff)))
    return out


def _significantly(verdicts: dict, template: str, metric: str, model: str, other: str) -> int:
    """+1 when ``model`` is significantly better than ``other`` on ``metric`` (paired, adjusted),
    -1 when significantly worse, 0 otherwise (no comparison counts as a tie). ``verdicts``: :func:`_verdicts`."""
    a, b = sorted([model, other])
    found = verdicts.get((template, metric, a, b))
    if found is None or not found[0]:
        return 0
    b_higher = found[1] > 0
    model_higher = b_higher if model == b else not b_higher
    good = model_higher == HIGHER_IS_BETTER.get(metric, True)
    return 1 if good else -1


def comparison_summary(differences: pd.DataFrame, max_lines: int = 10) -> list[str]:
    """Plain-language sentences of the significant differences (largest first)."""
    if differences is None or not len(differences):
        return []
    sig = differences[differences["significant"]]
    out = []
    for r in sig.reindex(sig["mean_diff"].abs().sort_values(ascending=False).index).head(max_lines).itertuples():
        text = lambda v: v if isinstance(v, str) else ""  # noqa: E731 - a cell read back from storage may be NaN
        what = f"the {text(r.gap)} gap in {r.metric}" if r.family == "gaps" else str(r.metric)
        country = text(getattr(r, "country", ""))
        what += f" of {country}" if country else ""
        extra = f" ({text(r.direction)})" if text(r.direction) else ""
        out.append(
            f"{r.template}: {r.model_b} - {r.model_a}, {what}: {r.mean_diff:+.3f} "
            f"[{r.ci_low:+.3f}, {r.ci_high:+.3f}], adjusted p {_fmt_p(r.p_adjusted)} "
            f"({int(r.family_size)} tests){extra}."
        )
    return out


def _fmt_p(p: float) -> str:
    return "<0.001" if p < 0.001 else f"{p:.3f}"


def tables_for(
    responses: pd.DataFrame,
    items: Optional[pd.DataFrame] = None,
    *,
    inference: InferenceParams = DEFAULT_INFERENCE,
    **kw,
) -> Mapping[str, pd.DataFrame]:
    """``{"differences": ..., "leaderboard": ...}`` of :func:`compare_models` and :func:`leaderboard`, both
    with ``inference``; ``kw``: the other options of :func:`compare_models` (``us_uk`` reaches the
    leaderboard too)."""
    diffs = compare_models(responses, items, inference=inference, **kw)  # pairs, reference: in kw
    board_kw = {k: v for k, v in kw.items() if k in ("us_uk",)}
    return {
        "differences": diffs,
        "leaderboard": leaderboard(responses, diffs, items, inference=inference, **board_kw),
    }


def tables_job(job: Mapping) -> Mapping[str, pd.DataFrame]:
    """:func:`tables_for` of one template (``job``: ``responses``, ``items``, ``inference`` and the options of
    :func:`compare_models` under ``options``), as a job of core/reference/workers.py."""
    return tables_for(job["responses"], job["items"], inference=job["inference"], **job["options"])
