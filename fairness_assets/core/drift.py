"""Drift between two audit runs of the same model x template (re-audits).

``headline_metrics`` flattens one audit's tables into a tidy frame of the numbers a re-audit
watches (DRS/Acc/Rep/Acad overall and per group, US+UK share, country coverage, volume and
diversity, and GRS/Repr/Rep_covg per country); ``compare`` lines two such frames up and gives
the change of every metric. Pure pandas: no Dagster, no database.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

KEYS = ["scope", "group_by", "group", "metric"]
HEADLINE_COLUMNS = KEYS + ["value"]
DRIFT_COLUMNS = KEYS + ["previous", "current", "change", "pct_change", "status"]

SUMMARY_METRICS = ["drs", "acc", "rep", "acad"]
CONCENTRATION_METRICS = ["us_uk_share", "country_coverage", "countries_recommended"]
VOLUME_METRICS = ["responses", "recommendations", "matched_recommendations", "unique_universities",
                  "unique_programs", "unique_countries"]
GRS_METRICS = ["grs", "repr", "rep_covg", "n_recommendations"]


def audit_base(audit_id: str, audit_round: str = "") -> str:
    """What makes two audits comparable: the audit id without its re-audit round. Generated
    audits carry the grid and decoding hash (``demo-1a2b...``), so a changed grid or decoding is
    a different base; imported files (``import-<file hash>``) are all one base, ``import``."""
    base = audit_id[: -len(audit_round) - 1] if audit_round and audit_id.endswith(f"-{audit_round}") else audit_id
    return "import" if base.startswith("import-") else base


def headline_metrics(tables: dict[str, pd.DataFrame], grs: pd.DataFrame) -> pd.DataFrame:
    """One audit's headline numbers as rows ``(scope, group_by, group, metric, value)``.

    ``tables`` holds the analysis tables of one partition (``drs_summary``, ``concentration``,
    ``volume_diversity``; any may be missing), ``grs`` its GRS table (one row per corpus
    country). Scopes: ``group`` (overall, by gender, by class), ``overall`` and ``country``.
    """
    frames = []
    summary = tables.get("drs_summary")
    if summary is not None and len(summary):
        present = [m for m in SUMMARY_METRICS if m in summary.columns]
        long = summary.melt(id_vars=["group_by", "group"], value_vars=present, var_name="metric", value_name="value")
        frames.append(long.assign(scope="group"))
    for name, wanted in (("concentration", CONCENTRATION_METRICS), ("volume_diversity", VOLUME_METRICS)):
        t = tables.get(name)
        if t is None or t.empty:
            continue
        present = [m for m in wanted if m in t.columns]
        row = t.iloc[0]
        frames.append(pd.DataFrame({"scope": "overall", "group_by": name, "group": "all", "metric": present,
                                    "value": pd.to_numeric(pd.Series([row[m] for m in present]), errors="coerce")}))
    if grs is not None and len(grs):
        present = [m for m in GRS_METRICS if m in grs.columns]
        long = grs.melt(id_vars=["iso3"], value_vars=present, var_name="metric", value_name="value")
        frames.append(long.rename(columns={"iso3": "group"}).assign(scope="country", group_by="country"))
    if not frames:
        return pd.DataFrame(columns=HEADLINE_COLUMNS)
    out = pd.concat(frames, ignore_index=True)[HEADLINE_COLUMNS]
    out["group"] = out["group"].astype(str)
    out["value"] = pd.to_numeric(out["value"], errors="coerce").astype(float)
    return out.reset_index(drop=True)


def compare(previous: pd.DataFrame, current: pd.DataFrame, tolerance: float = 1e-9) -> pd.DataFrame:
    """Change of every headline metric from ``previous`` to ``current``.

    ``change`` is current - previous; ``pct_change`` is the change in percent of the previous
    value (NaN where the previous value is 0 or missing). ``status``: ``changed``,
    ``unchanged`` (|change| <= tolerance), ``new`` (only in the current audit), ``gone`` (only
    in the previous one), ``undefined`` (missing in both, e.g. Rep_covg of a country never
    recommended). Rows are sorted by scope, then by the size of the change.
    """
    prev = previous[HEADLINE_COLUMNS].rename(columns={"value": "previous"})
    cur = current[HEADLINE_COLUMNS].rename(columns={"value": "current"})
    out = prev.merge(cur, on=KEYS, how="outer", indicator=True)
    out["change"] = out["current"] - out["previous"]
    with np.errstate(divide="ignore", invalid="ignore"):
        pct = out["change"].to_numpy(dtype=float) / np.abs(out["previous"].to_numpy(dtype=float)) * 100.0
    pct[~np.isfinite(pct)] = np.nan
    out["pct_change"] = pct
    both = out["_merge"] == "both"
    status = np.where(out["_merge"] == "left_only", "gone", np.where(out["_merge"] == "right_only", "new", "changed"))
    defined = out["previous"].notna() & out["current"].notna()
    status = np.where(both & defined & (out["change"].abs() <= tolerance), "unchanged", status)
    status = np.where(both & out["previous"].isna() & out["current"].isna(), "undefined", status)
    status = np.where(both & (out["previous"].isna() ^ out["current"].isna()),
                      np.where(out["previous"].isna(), "new", "gone"), status)
    out["status"] = status
    out = out.drop(columns="_merge")
    out["_size"] = out["change"].abs().fillna(-1.0)
    out = out.sort_values(["scope", "_size", "group_by", "group", "metric"], ascending=[True, False, True, True, True],
                          kind="stable").drop(columns="_size")
    return out[DRIFT_COLUMNS].reset_index(drop=True)


def largest_changes(drift: pd.DataFrame, n: int = 15) -> pd.DataFrame:
    """The ``n`` rows with the largest absolute change (any scope), for display."""
    if drift.empty:
        return drift
    order = drift["change"].abs().fillna(-1.0).sort_values(ascending=False, kind="stable").index
    return drift.loc[order].head(n).reset_index(drop=True)
