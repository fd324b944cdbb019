"""Stated vs signalled (METHOD.md §11; issue 35): the same contrast when the student states the attribute
("I am a female student from Nigeria") and when only a name signals it ("My name is Amara Okafor").

Two templates of one design and model: the *stated* one (a crossed profile set: the attributes in the prompt)
and the *signalled* one (the named profile set, core/reference/names.py: each crossed profile once per name).
Both are restricted to the cells they share (the combinations of the crossed axes' values: a value no name
signals, or a country without names, is left out of both, and counted). The unit is the student: a profile,
its runs averaged (a stated profile; a named profile, that is, one name: the names are the units of a cell's
variability).

For each axis the name signals, each value v and each response metric:

- ``gap_stated``: the mean over the students stating v minus the mean over the students stating another value
  (one-vs-rest; for a two-valued axis only the second value against the first), Welch's interval and test;
- ``gap_signalled``: the same contrast for the students whose name signals v;
- ``difference = gap_signalled - gap_stated``: does the model treat the name differently from the stated
  attribute? Its standard error adds the two gaps' (the templates' students are independent), with
  Welch-Satterthwaite degrees of freedom over the four groups.

Each of the three quantities forms one Holm (or BH) family per model and template pair, over every axis,
value and metric: a profile-blind model gives no finding at the family-wise rate ``alpha`` per quantity.

Behaviour and needs (METHOD.md §10): a cell's students stand in the same place whether they state the
attribute or a name signals it (the name's country is the home; the stated class is the same), so the
``difference`` is behaviour. The two gaps are outcomes on a ``home`` or ``lambda`` axis (the groups stand in
different places) and behaviour on a ``none`` axis; ``component_gap`` says which.

Pure: numpy and pandas; no Dagster, no database."""

from __future__ import annotations

from typing import Mapping, Optional, Sequence

import numpy as np
import pandas as pd

from .component_change import t_quantile, t_two_sided_p
from .inference import DEFAULT_INFERENCE, InferenceParams
from .stats import adjust_pvalues

QUANTITIES = ("stated", "signalled", "difference")
SIGNALLED_COLUMNS = [
    "model",
    "stated_template",
    "signalled_template",
    "axis",
    "value",
    "metric",
    "n_stated",
    "n_signalled",
    "n_cells",
    "n_cells_excluded",
    "gap_stated",
    "ci_low_stated",
    "ci_high_stated",
    "p_stated",
    "p_adjusted_stated",
    "significant_stated",
    "gap_signalled",
    "ci_low_signalled",
    "ci_high_signalled",
    "p_signalled",
    "p_adjusted_signalled",
    "significant_signalled",
    "difference",
    "ci_low_difference",
    "ci_high_difference",
    "p_difference",
    "p_adjusted_difference",
    "significant_difference",
    "level",
    "correction",
    "family_size",
    "alpha",
    "component_gap",
    "component",
    "marking",
]
SHOWN = (
    "model",
    "signalled_template",
    "axis",
    "value",
    "metric",
    "n_stated",
    "n_signalled",
    "gap_stated",
    "p_adjusted_stated",
    "gap_signalled",
    "p_adjusted_signalled",
    "difference",
    "ci_low_difference",
    "ci_high_difference",
    "p_adjusted_difference",
    "marking",
)


class SignalledError(ValueError):
    """Responses the comparison cannot use: a missing column, or no shared cell; names what is missing."""


def _units(responses: pd.DataFrame, metric: str) -> tuple[np.ndarray, np.ndarray]:
    """(cell, mean of ``metric`` over the student's runs) of each student (profile) with a scored response."""
    scored = responses[responses[metric].notna()]
    g = scored.groupby("profile_id", sort=True)
    return g["_cell"].first().to_numpy(), g[metric].mean().to_numpy(float)


def _cell_keys(frame: pd.DataFrame, crossed: Sequence[str]) -> pd.Series:
    """Each row's cell: its crossed axes' values joined by a unit separator."""
    out = pd.Series([""] * len(frame), index=frame.index, dtype=object)
    for i, axis in enumerate(crossed):
        out = out + ("\x1f" if i else "") + frame[axis].astype(str)
    return out


def _moments(values: np.ndarray) -> tuple[int, float, float]:
    n = len(values)
    return n, (float(values.mean()) if n else np.nan), (float(values.var(ddof=1)) / n if n > 1 else np.nan)


def _welch(parts: Sequence[tuple[int, float]]) -> tuple[float, float]:
    """(variance, Satterthwaite degrees of freedom) of a sum of independent group means with (n, variance of the
    mean) ``parts``; NaN where a group has fewer than two units."""
    if any(n < 2 or np.isnan(v) for n, v in parts):
        return np.nan, np.nan
    var = sum(v for _, v in parts)
    return var, (var**2 / sum(v**2 / (n - 1) for n, v in parts) if var > 0 else np.inf)


def _tests(out: pd.DataFrame, level: float) -> pd.DataFrame:
    """Each quantity's Welch interval and two-sided p from its estimate, variance and degrees of freedom (all
    rows at once: the t distribution's quantile is solved numerically); a zero variance gives the exact value."""
    for q, est in (("stated", "gap_stated"), ("signalled", "gap_signalled"), ("difference", "difference")):
        e, var, df = (out[c].to_numpy(float) for c in (est, f"_var_{q}", f"_df_{q}"))
        ok = np.isfinite(var) & (var > 0) & np.isfinite(df)
        se = np.sqrt(np.where(ok, var, 1.0))
        dfs = np.where(ok, df, 1.0)
        quant = np.where(ok, t_quantile(0.5 + level / 2.0, dfs), np.nan)
        p = np.where(ok, t_two_sided_p(np.where(ok, e / se, 0.0), dfs), np.nan)
        exact = var == 0
        out[f"ci_low_{q}"] = np.where(exact, e, e - quant * se)
        out[f"ci_high_{q}"] = np.where(exact, e, e + quant * se)
        out[f"p_{q}"] = np.where(exact, np.where(e == 0, 1.0, 0.0), p)
    return out.drop(columns=[c for c in out.columns if c.startswith(("_var_", "_df_"))])


def _gap(of_unit: np.ndarray, values: np.ndarray, value: str, rest: Optional[str]) -> tuple:
    """The moments of the students of ``value`` and of the rest (or of ``rest``): ((n, mean, var), (n, mean, var))."""
    in_v = of_unit == value
    other = ~in_v if rest is None else of_unit == rest
    return _moments(values[in_v]), _moments(values[other])


def stated_vs_signalled(
    stated: pd.DataFrame,
    signalled: pd.DataFrame,
    *,
    signals: Sequence[str],
    crossed: Sequence[str],
    positions: Mapping[str, str],
    orders: Mapping[str, Sequence[str]],
    metrics: Sequence[str],
    inference: InferenceParams = DEFAULT_INFERENCE,
) -> pd.DataFrame:
    """The stated-vs-signalled table of one model (module doc): ``stated`` and ``signalled`` are the responses of
    the two templates (``profile_id``, the ``crossed`` axes, ``run``, the ``metrics``); ``signals``: the axes
    the names signal; ``positions``: {axis: home | lambda | none}; ``orders``: {axis: its values in the design's
    order}. Columns :data:`SIGNALLED_COLUMNS` but the first three (model and templates: the caller's)."""
    for label, frame in (("stated", stated), ("signalled", signalled)):
        missing = sorted({"profile_id", *crossed, *metrics} - set(frame.columns))
        if missing:
            raise SignalledError(f"the {label} template's responses lack column(s) {missing}")
    cells = [_cell_keys(frame, crossed) for frame in (stated, signalled)]
    shared = set(cells[0]) & set(cells[1])
    if not shared:
        raise SignalledError("the stated and the signalled template share no cell of the crossed axes")
    excluded = len(set(cells[0]) ^ set(cells[1]))
    s = stated.assign(_cell=cells[0].to_numpy())[cells[0].isin(shared).to_numpy()]
    n = signalled.assign(_cell=cells[1].to_numpy())[cells[1].isin(shared).to_numpy()]
    level = inference.level
    units = {m: (_units(s, m), _units(n, m)) for m in metrics}
    rows = []
    for axis in signals:
        at = list(crossed).index(axis)
        axis_of_cell = {c: c.split("\x1f")[at] for c in shared}
        present = [v for v in orders[axis] if v in set(axis_of_cell.values())]
        contrasts = [(present[1], present[0])] if len(present) == 2 else [(v, None) for v in present]
        if len(present) < 2:
            continue
        for metric in metrics:
            (s_cells, s_vals), (n_cells, n_vals) = units[metric]
            if not len(s_vals) or not len(n_vals):
                continue
            s_of = np.asarray([axis_of_cell[c] for c in s_cells], dtype=object)
            n_of = np.asarray([axis_of_cell[c] for c in n_cells], dtype=object)
            for value, rest in contrasts:
                (sa, sb), (na, nb) = _gap(s_of, s_vals, value, rest), _gap(n_of, n_vals, value, rest)
                gap_s, gap_n = sa[1] - sb[1], na[1] - nb[1]
                var_s, df_s = _welch([(sa[0], sa[2]), (sb[0], sb[2])])
                var_n, df_n = _welch([(na[0], na[2]), (nb[0], nb[2])])
                var_d, df_d = _welch([(k, v) for k, _, v in (sa, sb, na, nb)])
                rows.append(
                    {
                        "axis": axis,
                        "value": value if rest is None else f"{value} vs {rest}",
                        "metric": metric,
                        "n_stated": sa[0],
                        "n_signalled": na[0],
                        "n_cells": len(shared),
                        "n_cells_excluded": excluded,
                        "gap_stated": gap_s,
                        "gap_signalled": gap_n,
                        "difference": gap_n - gap_s,
                        **{"_var_stated": var_s, "_df_stated": df_s, "_var_signalled": var_n, "_df_signalled": df_n},
                        **{"_var_difference": var_d, "_df_difference": df_d},
                        "component_gap": "behaviour" if positions.get(axis) == "none" else "outcome",
                    }
                )
    if not rows:
        return pd.DataFrame(columns=SIGNALLED_COLUMNS[3:])
    return _families(_tests(pd.DataFrame(rows), level), inference)


def _families(out: pd.DataFrame, inference: InferenceParams) -> pd.DataFrame:
    """Each quantity adjusted within its family (every row of the table); the marking of the difference."""
    out = out.assign(level=inference.level, correction=inference.correction, alpha=inference.alpha)
    for q in QUANTITIES:
        out[f"p_adjusted_{q}"] = adjust_pvalues(out[f"p_{q}"].to_numpy(float), inference.correction)
    out["family_size"] = int(out["p_difference"].notna().sum())
    for q in QUANTITIES:
        out[f"significant_{q}"] = (out[f"p_adjusted_{q}"] <= inference.alpha).fillna(False).astype(bool)
    out["component"] = "behaviour"  # the difference: the same cells, the same places (module doc)
    out["marking"] = np.where(
        out["p_difference"].isna(),
        "too few students",
        np.where(out["significant_difference"], "significant", "not significant"),
    )
    return out[SIGNALLED_COLUMNS[3:]]
