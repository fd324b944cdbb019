"""Drift between two audit runs of the same model x template (re-audits).

``headline_metrics`` flattens one audit's tables into a tidy frame of the numbers a re-audit
watches (DRS/Acc/Rep/Acad overall and per group, US+UK share, country coverage, volume and
diversity, and GRS/Repr/Rep_covg per country); ``contrast_metrics`` adds the group contrasts
with their behaviour / needs split (issue 20; METHOD.md §10): each counterfactual pair of an
attribute with few values (gender, income) and each geographic one-vs-rest contrast, per
component (scopes ``contrast_total`` / ``contrast_behaviour`` / ``contrast_needs``: the
difference, and whether it was significant); ``compare`` lines two such frames up and gives the
change of every metric; ``component_drift`` shows, for every contrast significant in either audit,
its behaviour part (what the model did) next to its outcome, previous vs current. An audit
archived before the split has no contrast rows: its contrasts read ``no previous record``, not
``new``. Pure pandas: no Dagster, no database.
"""

from __future__ import annotations

from typing import Optional

import numpy as np
import pandas as pd

from ..common import metric_catalogue as catalogue

KEYS = ["scope", "group_by", "group", "metric"]
HEADLINE_COLUMNS = KEYS + ["value"]
DRIFT_COLUMNS = KEYS + ["previous", "current", "change", "pct_change", "status"]

SUMMARY_METRICS = list(catalogue.names("response"))
CONCENTRATION_METRICS = list(catalogue.names("concentration"))
VOLUME_METRICS = list(catalogue.names("volume"))
GRS_METRICS = list(catalogue.names("grs"))

# group contrasts per component (issue 20): scope per component, group_by the attribute or the
# geographic analysis, group "value_b vs value_a" (the difference is value_b - value_a), metric the
# metric (its mean difference) or "<metric> significant" (1 / 0: adjusted p <= alpha)
CONTRAST_SCOPES = {"total": "contrast_total", "behaviour": "contrast_behaviour", "needs": "contrast_needs"}
SIGNIFICANT = " significant"
MAX_PAIR_VALUES = 5  # counterfactual attributes with at most this many values are archived pair by pair
NO_PREVIOUS_RECORD = "no previous record"
COMPONENT_DRIFT_COLUMNS = ["analysis", "contrast", "metric"] + [
    f"{comp}_{what}"
    for comp in ("behaviour", "total", "needs")
    for what in ("previous", "current", "change", "significant_previous", "significant_current")
]


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
        frames.append(
            pd.DataFrame(
                {
                    "scope": "overall",
                    "group_by": name,
                    "group": "all",
                    "metric": present,
                    "value": pd.to_numeric(pd.Series([row[m] for m in present]), errors="coerce"),
                }
            )
        )
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


def _flag(values: pd.Series) -> pd.Series:
    return values.map(
        lambda v: (
            str(v).strip().lower() in ("true", "1", "1.0", "yes") if not isinstance(v, (bool, np.bool_)) else bool(v)
        )
    ).astype(bool)


def contrast_metrics(
    behaviour_needs: Optional[pd.DataFrame] = None,
    geo_contrasts: Optional[pd.DataFrame] = None,
    max_pair_values: int = MAX_PAIR_VALUES,
) -> pd.DataFrame:
    """One audit's group contrasts per component as headline rows ``(scope, group_by, group,
    metric, value)``: for each component (scope ``contrast_total`` / ``contrast_behaviour`` /
    ``contrast_needs``) the mean difference (metric = the metric) and whether it is significant
    (metric ``"<metric> significant"``, 1 or 0, where it was tested).

    ``behaviour_needs``: core.statistics.decompose's table of one partition; the pairs of attributes with at
    most ``max_pair_values`` values (gender, income: 3 pairs each) are kept; the 780 nationality
    pairs of the study are summarised by the nationality-vs-rest contrasts instead.
    ``geo_contrasts``: core.statistics.geostats's one-vs-rest contrasts (group ``"<value> vs <reference>"``).
    Rows that are 0 by construction are left out. Either table may be missing, or stored before
    the split (no ``component``: its rows are ``total``)."""
    frames = []
    for table, kind in ((behaviour_needs, "pairs"), (geo_contrasts, "geo")):
        if table is None or table.empty:
            continue
        t = table
        if kind == "pairs":
            need = ["attribute", "value_a", "value_b", "metric", "mean_diff"]
        else:
            need = ["analysis", "value", "reference", "metric", "mean_diff"]
        missing = [c for c in need if c not in t.columns]
        if missing:
            raise ValueError(
                f"the {'behaviour_needs' if kind == 'pairs' else 'geo_contrasts'} table lacks the column(s) {missing}"
            )
        if kind == "pairs":
            n_values = (
                pd.concat(
                    [
                        t[["attribute", "value_a"]].rename(columns={"value_a": "v"}),
                        t[["attribute", "value_b"]].rename(columns={"value_b": "v"}),
                    ]
                )
                .groupby("attribute")["v"]
                .nunique()
            )
            t = t[t["attribute"].map(n_values).le(max_pair_values)]
            group_by, group = t["attribute"].astype(str), t["value_b"].astype(str) + " vs " + t["value_a"].astype(str)
        else:
            group_by, group = t["analysis"].astype(str), t["value"].astype(str) + " vs " + t["reference"].astype(str)
        comp = t["component"].astype(str) if "component" in t.columns else pd.Series("total", index=t.index)
        keep = comp.isin(list(CONTRAST_SCOPES))
        if "by_construction" in t.columns:
            keep &= ~_flag(t["by_construction"])
        scope = comp.map(CONTRAST_SCOPES)
        base = pd.DataFrame({"scope": scope, "group_by": group_by, "group": group, "metric": t["metric"].astype(str)})
        frames.append(base[keep].assign(value=pd.to_numeric(t["mean_diff"], errors="coerce")[keep]))
        if "significant" in t.columns:
            tested = keep & (
                pd.to_numeric(t["p_value"], errors="coerce").notna()
                if "p_value" in t.columns
                else pd.Series(True, index=t.index)
            )
            sig = base[tested].assign(
                metric=base["metric"][tested] + SIGNIFICANT, value=_flag(t["significant"])[tested].astype(float)
            )
            frames.append(sig)
    if not frames:
        return pd.DataFrame(columns=HEADLINE_COLUMNS)
    out = pd.concat(frames, ignore_index=True)[HEADLINE_COLUMNS]
    out["value"] = out["value"].astype(float)
    return out.drop_duplicates(KEYS, keep="first").reset_index(drop=True)


def is_contrast(drift: pd.DataFrame) -> pd.Series:
    """Rows of a headline or drift table that are group contrasts (scopes ``contrast_*``)."""
    return drift["scope"].astype(str).isin(list(CONTRAST_SCOPES.values()))


def compare(previous: pd.DataFrame, current: pd.DataFrame, tolerance: float = 1e-9) -> pd.DataFrame:
    """Change of every headline metric from ``previous`` to ``current``.

    ``change`` is current - previous; ``pct_change`` is the change in percent of the previous
    value (NaN where the previous value is 0 or missing). ``status``: ``changed``,
    ``unchanged`` (|change| <= tolerance), ``new`` (only in the current audit), ``gone`` (only
    in the previous one), ``undefined`` (missing in both, e.g. Rep_covg of a country never
    recommended), ``no previous record`` (a contrast of a scope the previous audit did not archive
    at all: archived before the behaviour / needs split). Rows are sorted by scope, then by the
    size of the change.
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
    status = np.where(
        both & (out["previous"].isna() ^ out["current"].isna()), np.where(out["previous"].isna(), "new", "gone"), status
    )
    # a contrast scope the previous audit did not archive at all (archived before the split): not "new"
    unrecorded = [sc for sc in CONTRAST_SCOPES.values() if not (previous["scope"] == sc).any()]
    status = np.where((out["_merge"] == "right_only") & out["scope"].isin(unrecorded), NO_PREVIOUS_RECORD, status)
    out["status"] = status
    out = out.drop(columns="_merge")
    out["_size"] = out["change"].abs().fillna(-1.0)
    out = out.sort_values(
        ["scope", "_size", "group_by", "group", "metric"], ascending=[True, False, True, True, True], kind="stable"
    ).drop(columns="_size")
    return out[DRIFT_COLUMNS].reset_index(drop=True)


def largest_changes(drift: pd.DataFrame, n: int = 15) -> pd.DataFrame:
    """The ``n`` rows with the largest absolute change (any scope), for display."""
    if drift.empty:
        return drift
    order = drift["change"].abs().fillna(-1.0).sort_values(ascending=False, kind="stable").index
    return drift.loc[order].head(n).reset_index(drop=True)


def component_drift(drift: pd.DataFrame, only_significant: bool = True) -> pd.DataFrame:
    """The group contrasts of a drift table (:func:`compare` of rows with :func:`contrast_metrics`)
    one row per contrast x metric, its components side by side: ``behaviour_previous``,
    ``behaviour_current``, ``behaviour_change``, ``behaviour_significant_previous`` /
    ``_current`` (True / False / None where not tested), the same for ``total`` and ``needs``.
    ``only_significant``: only the contrasts whose behaviour part or outcome is significant in
    either audit. Sorted by the size of the behaviour change."""
    if drift is None or drift.empty or "scope" not in drift.columns:
        return pd.DataFrame(columns=COMPONENT_DRIFT_COLUMNS)
    d = drift[is_contrast(drift)]
    if d.empty:
        return pd.DataFrame(columns=COMPONENT_DRIFT_COLUMNS)
    comp = d["scope"].map({v: k for k, v in CONTRAST_SCOPES.items()})
    sig = d["metric"].astype(str).str.endswith(SIGNIFICANT)
    metric = d["metric"].astype(str).where(~sig, d["metric"].astype(str).str[: -len(SIGNIFICANT)])
    d = d.assign(c_comp=comp, c_sig=sig, c_metric=metric)
    rows: dict = {}
    for r in d.itertuples(index=False):
        key = (r.group_by, r.group, r.c_metric)
        row = rows.setdefault(key, {"analysis": r.group_by, "contrast": r.group, "metric": r.c_metric})
        prev = None if pd.isna(r.previous) else float(r.previous)
        cur = None if pd.isna(r.current) else float(r.current)
        if r.c_sig:
            row[f"{r.c_comp}_significant_previous"] = None if prev is None else prev > 0.5
            row[f"{r.c_comp}_significant_current"] = None if cur is None else cur > 0.5
        else:
            row[f"{r.c_comp}_previous"], row[f"{r.c_comp}_current"] = prev, cur
            row[f"{r.c_comp}_change"] = None if prev is None or cur is None else cur - prev
    out = pd.DataFrame(list(rows.values()))
    out = out.reindex(columns=COMPONENT_DRIFT_COLUMNS)
    for c in [c for c in out.columns if "_significant_" in c]:  # True / False, None where not tested
        out[c] = pd.Series(
            [None if v is None or (isinstance(v, float) and np.isnan(v)) else bool(v) for v in out[c]],
            index=out.index,
            dtype=object,
        )
    if only_significant:
        flags = [
            c for c in out.columns if "_significant_" in c and (c.startswith("behaviour") or c.startswith("total"))
        ]
        keep = out[flags].apply(lambda col: col.map(lambda v: v is True)).any(axis=1)
        out = out[keep]
    size = pd.to_numeric(out["behaviour_change"], errors="coerce").abs().fillna(-1.0)
    return (
        out.assign(_s=-size)
        .sort_values(["_s", "analysis", "contrast", "metric"], kind="stable")
        .drop(columns="_s")
        .reset_index(drop=True)
    )
