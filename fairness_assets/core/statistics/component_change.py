"""Base vs regional, component by component (issue 20, item 5; METHOD.md §10; docs/method.md,
"Base vs regional: did the behaviour part move?").

The regional template asks the model to adapt to where the student lives. Whether it did is a
question about the model's behaviour (the lists it gave each group, scored for the same student),
not only about the outcome (which also moves when the same lists land differently for students
in different places). This module lines up each group contrast of a model's base partition with
the same contrast of its regional partition, component by component (``total`` / ``behaviour`` /
``needs``), and tests whether the component changed:

- counterfactual pairs (``behaviour_needs`` of ``core.statistics.decompose``: attribute, value_a < value_b;
  ``mean_diff`` = b - a);
- geographic one-vs-rest contrasts (``geo_contrasts`` of ``core.statistics.geostats``: analysis, value vs
  the rest; here ``value_a`` = the reference ("rest", or the other value), ``value_b`` = the value,
  so ``mean_diff`` = value_b - value_a in both kinds).

**Rule** (:data:`RULE`). The two templates are separate generations: their estimates are
independent samples of the model's answers. The per-unit differences behind each stored mean are
not stored, so no test paired across templates can be made from the stored rows. The change
``regional - base`` is tested with Welch's t-test on each template's stored mean, SD and number
of units (``se² = sd²/n`` per template, Welch-Satterthwaite degrees of freedom), two-sided. The
units of the counterfactual pairs are strata (the same profiles in both templates): if a
stratum's effect carries over from one template to the other the two means are positively
correlated and the true variance of the change is smaller than the Welch variance, so the test
can only be conservative. The p-values are adjusted with Holm within each family (model x source
x analysis x component: e.g. every nationality pair and metric of one model's behaviour part),
and a component *moved* when its adjusted p <= alpha. Being significant in one template and not
in the other is not a test of change and is not used. ``intervals_overlap`` (the two stored
bootstrap intervals overlap) is given for reading only. Needs rows that are 0 by construction in
both templates are not tested, nor any component of a contrast whose share metric (own-country,
own-region, US+UK) is 0 or 1 for the group's own lists in a template (a rare event that did not
happen: the stored SD then holds none of the group's sampling variation, and a test on it would
find changes that are not there).

Pure: pandas and numpy only (and the Holm / BH adjustment of ``core.statistics.stats``).
"""

from __future__ import annotations

import math
from typing import Mapping, Optional

import numpy as np
import pandas as pd

from ..common import metric_catalogue as catalogue
from . import stats as st
from .inference import DEFAULT_INFERENCE, InferenceParams

COMPONENTS = ("total", "behaviour", "needs")
SOURCES = ("behaviour_needs", "geo_contrasts")
RULE = "welch_holm"
RULE_TEXT = (
    "Welch t-test of regional - base on each template's stored mean, SD and units (independent "
    "generations; shared strata could only make it conservative), Holm within model x source x analysis "
    "x component; moved = adjusted p <= alpha. Not tested: needs 0 by construction, and shares that are "
    "0 or 1 for the group in a template. Significant in one template and not the other is not a test of change."
)
SHARE_METRICS = catalogue.shares()  # shares of a list, possibly rare events
STATUSES = ("moved", "not moved", "not testable", "0 by construction", "only in base", "only in regional")
KEYS = ["model", "source", "analysis", "value_a", "value_b", "metric", "component"]
CHANGE_COLUMNS = KEYS + [
    "unit",
    "n_base",
    "mean_base",
    "ci_low_base",
    "ci_high_base",
    "p_adjusted_base",
    "significant_base",
    "n_regional",
    "mean_regional",
    "ci_low_regional",
    "ci_high_regional",
    "p_adjusted_regional",
    "significant_regional",
    "change",
    "se_change",
    "df_change",
    "ci_low_change",
    "ci_high_change",
    "level",
    "p_change",
    "correction",
    "family_size",
    "p_change_adjusted",
    "alpha",
    "moved",
    "direction",
    "intervals_overlap",
    "status",
    "rule",
    "note",
]
METRIC_WORDS = catalogue.words()  # (more, fewer): what a higher / lower value of the metric means for the lists
METRIC_LABELS = {**catalogue.labels("decompose"), **catalogue.labels("geography")}


# ----------------------------------------------------------------------------- Student t, numpy only
def _betacf(a: np.ndarray, b: np.ndarray, x: np.ndarray, iters: int = 300) -> np.ndarray:
    """Continued fraction of the regularized incomplete beta (modified Lentz), vectorized."""
    tiny = 1e-300
    qab, qap, qam = a + b, a + 1.0, a - 1.0
    c = np.ones_like(x)
    d = 1.0 - qab * x / qap
    d = np.where(np.abs(d) < tiny, tiny, d)
    d = 1.0 / d
    h = d.copy()
    for m in range(1, iters + 1):
        m2 = 2.0 * m
        aa = m * (b - m) * x / ((qam + m2) * (a + m2))
        d = 1.0 + aa * d
        d = np.where(np.abs(d) < tiny, tiny, d)
        c = 1.0 + aa / c
        c = np.where(np.abs(c) < tiny, tiny, c)
        d = 1.0 / d
        h = h * d * c
        aa = -(a + m) * (qab + m) * x / ((a + m2) * (qap + m2))
        d = 1.0 + aa * d
        d = np.where(np.abs(d) < tiny, tiny, d)
        c = 1.0 + aa / c
        c = np.where(np.abs(c) < tiny, tiny, c)
        d = 1.0 / d
        delta = d * c
        h = h * delta
        if np.all(np.abs(delta - 1.0) < 1e-14):
            break
    return h


def _betainc(a: np.ndarray, b: np.ndarray, x: np.ndarray) -> np.ndarray:
    """Regularized incomplete beta I_x(a, b) for arrays (a, b > 0, 0 <= x <= 1)."""
    a, b, x = np.broadcast_arrays(np.asarray(a, float), np.asarray(b, float), np.asarray(x, float))
    out = np.full(x.shape, np.nan)
    ok = np.isfinite(a) & np.isfinite(b) & np.isfinite(x) & (a > 0) & (b > 0)
    out[ok & (x <= 0)] = 0.0
    out[ok & (x >= 1)] = 1.0
    mid = ok & (x > 0) & (x < 1)
    if not mid.any():
        return out
    a, b, x = a[mid], b[mid], x[mid]
    lg = np.vectorize(math.lgamma, otypes=[float])
    front = np.exp(lg(a + b) - lg(a) - lg(b) + a * np.log(x) + b * np.log1p(-x))
    direct = x < (a + 1.0) / (a + b + 2.0)
    res = np.empty(x.shape)
    if direct.any():
        res[direct] = front[direct] * _betacf(a[direct], b[direct], x[direct]) / a[direct]
    if (~direct).any():
        i = ~direct
        res[i] = 1.0 - front[i] * _betacf(b[i], a[i], 1.0 - x[i]) / b[i]
    out[mid] = np.clip(res, 0.0, 1.0)
    return out


def t_two_sided_p(t, df) -> np.ndarray:
    """P(|T| >= |t|) for Student's t with ``df`` degrees of freedom (df may be fractional);
    df = inf gives the normal tail."""
    t, df = np.broadcast_arrays(np.asarray(t, float), np.asarray(df, float))
    out = np.full(t.shape, np.nan)
    normal = np.isinf(df) & ~np.isnan(t)
    if normal.any():
        out[normal] = np.vectorize(math.erfc, otypes=[float])(np.abs(t[normal]) / math.sqrt(2.0))
    fin = np.isfinite(df) & (df > 0) & ~np.isnan(t)
    if fin.any():
        tt, dd = t[fin], df[fin]
        with np.errstate(over="ignore", invalid="ignore"):
            x = np.where(np.isinf(tt), 0.0, dd / (dd + tt * tt))
        out[fin] = _betainc(dd / 2.0, np.full(dd.shape, 0.5), x)
    return out


def t_quantile(q: float, df) -> np.ndarray:
    """The ``q`` quantile (q > 0.5) of Student's t with ``df`` degrees of freedom (bisection)."""
    if not 0.5 < q < 1.0:
        raise ValueError(f"q must lie in (0.5, 1), got {q}")
    df = np.asarray(df, float)
    target = 2.0 * (1.0 - q)  # two-sided tail
    lo, hi = np.zeros(df.shape), np.full(df.shape, 1e4)
    for _ in range(80):
        mid = 0.5 * (lo + hi)
        big = t_two_sided_p(mid, df) > target  # tail still too heavy: the quantile lies above mid
        lo, hi = np.where(big, mid, lo), np.where(big, hi, mid)
    out = 0.5 * (lo + hi)
    return np.where(np.isnan(df) | (df <= 0), np.nan, out)


# ----------------------------------------------------------------------------- aligning the two templates
def as_flags(values: pd.Series) -> pd.Series:
    """A boolean column as stored (bool, 1.0/0.0, "True"/"False") as booleans."""

    def one(v):
        if isinstance(v, (bool, np.bool_)):
            return bool(v)
        if v is None or (isinstance(v, float) and math.isnan(v)):
            return False
        if isinstance(v, (int, float, np.integer, np.floating)):
            return bool(v)
        return str(v).strip().lower() in ("true", "1", "yes")

    return values.map(one).astype(bool)


def _num(df: pd.DataFrame, col: str) -> pd.Series:
    return pd.to_numeric(df[col], errors="coerce") if col in df.columns else pd.Series(np.nan, index=df.index)


def contrast_rows(table: Optional[pd.DataFrame], source: str) -> pd.DataFrame:
    """One template's contrasts in the common shape: ``source, analysis, value_a, value_b, metric,
    component, unit, n, mean, sd, ci_low, ci_high, p_adjusted, significant, by_construction``.

    ``source``: ``behaviour_needs`` (core.statistics.decompose; analysis = the attribute, unit = strata) or
    ``geo_contrasts`` (core.statistics.geostats; value_a = the reference, value_b = the value). A table stored
    before the split (no ``component``) gives its rows as ``total``."""
    cols = [
        "source",
        "analysis",
        "value_a",
        "value_b",
        "metric",
        "component",
        "unit",
        "n",
        "mean",
        "sd",
        "ci_low",
        "ci_high",
        "p_adjusted",
        "significant",
        "by_construction",
        "degenerate",
    ]
    if source not in SOURCES:
        raise ValueError(f"source must be one of {SOURCES}, got {source!r}")
    if table is None or table.empty:
        return pd.DataFrame(columns=cols)
    t = table
    if source == "behaviour_needs":
        need = ["attribute", "value_a", "value_b", "metric", "mean_diff"]
        analysis, va, vb = t.get("attribute"), t.get("value_a"), t.get("value_b")
        n, unit = _num(t, "n_pairs"), "strata"
    else:
        need = ["analysis", "value", "reference", "metric", "mean_diff"]
        analysis, va, vb = t.get("analysis"), t.get("reference"), t.get("value")
        n = _num(t, "n_units")
        unit = t["unit"].astype(str) if "unit" in t.columns else "units"
    missing = [c for c in need if c not in t.columns]
    if missing:
        raise ValueError(f"the {source} table lacks the column(s) {missing}")
    out = pd.DataFrame(
        {
            "source": source,
            "analysis": analysis.astype(str),
            "value_a": va.astype(str),
            "value_b": vb.astype(str),
            "metric": t["metric"].astype(str),
            "component": t["component"].astype(str) if "component" in t.columns else "total",
            "unit": unit,
            "n": n,
            "mean": _num(t, "mean_diff"),
            "sd": _num(t, "sd_diff"),
            "ci_low": _num(t, "ci_low"),
            "ci_high": _num(t, "ci_high"),
            "p_adjusted": _num(t, "p_adjusted"),
            "significant": as_flags(t["significant"]) if "significant" in t.columns else False,
            "by_construction": as_flags(t["by_construction"]) if "by_construction" in t.columns else False,
        }
    )
    # a share that is 0 or 1 for the group's own lists (e.g. no own-country item at all): the stored SD
    # holds none of the group's sampling variation, so no test of the change is made (every component)
    own = _num(t, "mean_value")
    edge = (out["metric"].isin(SHARE_METRICS) & ((own == 0) | (own == 1))).to_numpy()
    contrast = ["analysis", "value_a", "value_b", "metric"]
    out["degenerate"] = pd.Series(edge, index=out.index).groupby([out[c] for c in contrast]).transform("any")
    return out[cols].reset_index(drop=True)


def _side(tables: Mapping[str, pd.DataFrame]) -> pd.DataFrame:
    frames = [contrast_rows((tables or {}).get(s), s) for s in SOURCES]
    frames = [f for f in frames if len(f)]
    if not frames:
        return contrast_rows(None, SOURCES[0])
    out = pd.concat(frames, ignore_index=True)
    dup = out.duplicated(KEYS[1:], keep=False)
    if dup.any():
        first = out[dup].iloc[0]
        raise ValueError(
            "two rows for the same contrast in one template: " + ", ".join(f"{k}={first[k]}" for k in KEYS[1:])
        )
    return out


def component_change(
    base: Mapping[str, pd.DataFrame],
    regional: Mapping[str, pd.DataFrame],
    *,
    model: str = "",
    inference: InferenceParams = DEFAULT_INFERENCE,
) -> pd.DataFrame:
    """Every contrast of one model, base vs regional, per component: both templates' estimates,
    the change ``regional - base`` with its Welch interval and test, adjusted within each family
    (model x source x analysis x component), and whether it *moved* (module docstring, :data:`RULE`).

    ``base`` / ``regional``: the model's tables of each template, by name: ``behaviour_needs``
    (core.statistics.decompose) and / or ``geo_contrasts`` (core.statistics.geostats); either may be missing. Returns
    one row per contrast x metric x component found in either template (``CHANGE_COLUMNS``),
    ``status`` one of :data:`STATUSES`; ``direction`` ``higher`` / ``lower`` (regional vs base)
    where the change is tested. ``inference``: its ``level`` (of the Welch interval), ``correction``
    and ``alpha`` (resamples, permutations and seed are not used: the test is Welch's)."""
    alpha, level, correction = inference.alpha, inference.level, inference.correction
    b, r = _side(base), _side(regional)
    keys = KEYS[1:]
    m = b.merge(r, on=keys, how="outer", suffixes=("_base", "_regional"), indicator=True)
    if m.empty:
        return pd.DataFrame(columns=CHANGE_COLUMNS)
    nb, nr = m["n_base"].to_numpy(float), m["n_regional"].to_numpy(float)
    sb, sr = m["sd_base"].to_numpy(float), m["sd_regional"].to_numpy(float)
    mb, mr = m["mean_base"].to_numpy(float), m["mean_regional"].to_numpy(float)
    both = (m["_merge"] == "both").to_numpy()
    by_c = (as_flags(m["by_construction_base"]) & as_flags(m["by_construction_regional"])).to_numpy()
    edge = (as_flags(m["degenerate_base"]) | as_flags(m["degenerate_regional"])).to_numpy()
    testable = (
        both
        & ~by_c
        & ~edge
        & (nb >= 2)
        & (nr >= 2)
        & np.isfinite(sb)
        & np.isfinite(sr)
        & np.isfinite(mb)
        & np.isfinite(mr)
    )
    with np.errstate(invalid="ignore", divide="ignore"):
        vb, vr = sb**2 / nb, sr**2 / nr
        se = np.sqrt(vb + vr)
        dfw = (vb + vr) ** 2 / (vb**2 / (nb - 1) + vr**2 / (nr - 1))
        change = mr - mb
        t = change / se
    zero_se = testable & (se == 0)
    dfw = np.where(testable & ~zero_se, dfw, np.nan)
    p = np.where(
        testable & ~zero_se,
        t_two_sided_p(np.where(testable & ~zero_se, t, 0.0), np.where(testable & ~zero_se, dfw, 1.0)),
        np.nan,
    )
    p = np.where(zero_se, np.where(change == 0, 1.0, 0.0), p)  # both templates constant: the change is exact
    q = np.where(testable & ~zero_se, t_quantile(0.5 + level / 2.0, np.where(testable & ~zero_se, dfw, 1.0)), np.nan)
    q = np.where(zero_se, 0.0, q)
    out = pd.DataFrame(
        {
            "model": model,
            **{k: m[k] for k in keys},
            "unit": m["unit_base"].where(m["unit_base"].notna(), m["unit_regional"]),
            "n_base": m["n_base"],
            "mean_base": m["mean_base"],
            "ci_low_base": m["ci_low_base"],
            "ci_high_base": m["ci_high_base"],
            "p_adjusted_base": m["p_adjusted_base"],
            "significant_base": as_flags(m["significant_base"]),
            "n_regional": m["n_regional"],
            "mean_regional": m["mean_regional"],
            "ci_low_regional": m["ci_low_regional"],
            "ci_high_regional": m["ci_high_regional"],
            "p_adjusted_regional": m["p_adjusted_regional"],
            "significant_regional": as_flags(m["significant_regional"]),
            "change": np.where(both, change, np.nan),
            "se_change": np.where(testable, se, np.nan),
            "df_change": dfw,
            "ci_low_change": np.where(testable, change - q * se, np.nan),
            "ci_high_change": np.where(testable, change + q * se, np.nan),
            "level": level,
            "p_change": p,
            "correction": correction,
        }
    )
    out["family_size"] = 0
    out["p_change_adjusted"] = np.nan
    fam = ["source", "analysis", "component"]
    pv = out["p_change"].to_numpy(float)
    for idx in out.groupby(fam, sort=False, dropna=False).indices.values():
        out.loc[out.index[idx], "p_change_adjusted"] = st.adjust_pvalues(pv[idx], correction)
        out.loc[out.index[idx], "family_size"] = int((~np.isnan(pv[idx])).sum())
    out["family_size"] = out["family_size"].astype(np.int64)
    out["alpha"] = alpha
    moved = (out["p_change_adjusted"] <= alpha).fillna(False).to_numpy(bool)
    out["moved"] = moved
    out["direction"] = np.where(moved, np.where(out["change"] > 0, "higher", "lower"), "")
    lo_b, hi_b = out["ci_low_base"].astype(float), out["ci_high_base"].astype(float)
    lo_r, hi_r = out["ci_low_regional"].astype(float), out["ci_high_regional"].astype(float)
    has_ci = lo_b.notna() & hi_b.notna() & lo_r.notna() & hi_r.notna()
    out["intervals_overlap"] = np.where(has_ci, ((lo_b <= hi_r) & (lo_r <= hi_b)).astype(object), None)
    merge = m["_merge"].to_numpy()
    few = both & ~by_c & ~testable
    status = np.where(
        merge == "left_only",
        "only in base",
        np.where(
            merge == "right_only",
            "only in regional",
            np.where(
                by_c & both, "0 by construction", np.where(few, "not testable", np.where(moved, "moved", "not moved"))
            ),
        ),
    )
    out["status"] = status
    out["rule"] = np.where(testable, RULE, "")
    note = np.full(len(out), "", dtype=object)
    note[few] = "fewer than 2 units or no SD in a template: the change cannot be tested"
    note[few & edge] = (
        "the group's own share is 0 or 1 in a template: the stored SD lacks the group's sampling "
        "variation, the change is not tested"
    )
    note[by_c & both] = "needs is 0 by construction in both templates"
    note[merge == "left_only"] = "the contrast is not in the regional template"
    note[merge == "right_only"] = "the contrast is not in the base template"
    note[zero_se] = "no variation in either template: the change is exact"
    out["note"] = note
    order = {c: i for i, c in enumerate(("behaviour", "total", "needs"))}
    out = out.assign(_s=~out["moved"], _c=out["component"].map(order).fillna(9), _a=-out["change"].abs().fillna(-1.0))
    out = out.sort_values(["_c", "_s", "source", "analysis", "_a", "value_a", "value_b", "metric"], kind="stable").drop(
        columns=["_s", "_c", "_a"]
    )
    return out[CHANGE_COLUMNS].reset_index(drop=True)


def by_comparison(table: pd.DataFrame) -> list[tuple[tuple[str, str], pd.DataFrame]]:
    """The rows of each template comparison of a base-vs-other table, in the order they first appear:
    ``((base, other), rows)``; a table without the ``base_template`` / ``other_template`` columns (stored
    before designs had comparisons) is the study's base vs regional."""
    if table is None or not len(table) or not {"base_template", "other_template"} <= set(table.columns):
        return [(("base", "regional"), table)]
    return [
        ((str(b), str(o)), table[(table["base_template"] == b) & (table["other_template"] == o)])
        for b, o in dict.fromkeys(zip(table["base_template"], table["other_template"], strict=True))
    ]


def model_verdicts(change: pd.DataFrame) -> pd.DataFrame:
    """Per model: how many behaviour / outcome (total) / needs parts were tested and how many
    moved, and ``behaviour_moved`` (any behaviour part moved)."""
    cols = [
        "model",
        "behaviour_tested",
        "behaviour_moved_n",
        "total_tested",
        "total_moved_n",
        "needs_tested",
        "needs_moved_n",
        "behaviour_moved",
    ]
    if change is None or change.empty:
        return pd.DataFrame(columns=cols)
    rows = []
    tested_status = {"moved", "not moved"}
    for model, g in change.groupby("model", sort=True):
        row = {"model": model}
        for comp in COMPONENTS:
            c = g[g["component"] == comp]
            row[f"{comp}_tested"] = int(c["status"].isin(tested_status).sum())
            row[f"{comp}_moved_n"] = int((c["status"] == "moved").sum())
        row["behaviour_moved"] = row["behaviour_moved_n"] > 0
        rows.append(row)
    return pd.DataFrame(rows, columns=cols)
