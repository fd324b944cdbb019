"""The paired engine of the geographic tests, over ``stats.paired_test``: units (strata x runs),
per-unit cell sums and means, and the Holm / BH correction within each family of a table."""

from __future__ import annotations

from typing import Sequence

import numpy as np
import pandas as pd

from .. import stats as st
from ..inference import InferenceParams
from .frames import REPLICATES, Replicates


def _correct(
    out: pd.DataFrame, family: Sequence[str], *, inference: InferenceParams, none_marking: str = "too few units"
) -> pd.DataFrame:
    """``out`` with ``inference.correction`` applied within each ``family`` (``correction``, ``family_size``,
    ``p_adjusted``), ``alpha``, ``significant`` and ``marking`` (``none_marking`` where there is no test)."""
    correction, alpha = inference.correction, inference.alpha
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
    keys = st.key_frame(df, unit_cols) if unit_cols else None
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


def _unit_cols(part: pd.DataFrame, strata: Sequence[str], replicates: Replicates) -> tuple[list[str], str]:
    if replicates not in REPLICATES:
        raise ValueError(f"replicates must be one of {REPLICATES}, got {replicates!r}")
    cols = [c for c in strata if c in part.columns and part[c].notna().any()]
    if replicates == "runs" and "run" in part.columns and part["run"].nunique() > 1:
        return cols + ["run"], " x ".join(cols + ["run"]) if cols else "run"
    return cols, " x ".join(cols) if cols else "all"


def _prep(responses: pd.DataFrame, metrics: Sequence[str]) -> tuple[pd.DataFrame, list[str]]:
    present = [m for m in metrics if m in responses.columns]
    df, keys = st.scored_responses(responses, present)
    return df, keys
