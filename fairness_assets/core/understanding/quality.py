"""Parse-quality indicators of a recommendations table (inputs of the expectation suite).

Per response: parsed (ok/partial), exactly three items, duplicates. Per item: matched to the
corpus, country resolved. Per group (each value of each axis of the active design: the study's
gender, class, nationality): parse and match rates and the gap between the best and the worst group,
a finding in itself.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from ..reference import axes


def group_attributes() -> tuple[str, ...]:
    """The attributes the groups are made of: every axis of the active design, read at call time."""
    return axes.names()


def response_frame(recs: pd.DataFrame) -> pd.DataFrame:
    """One row per response with 0/1 indicators."""
    first = recs.drop_duplicates("response_id")
    items = recs[recs["university_text"].notna()]
    n_items = items.groupby("response_id").size()
    matched = items.groupby("response_id")["university_id"].apply(lambda s: s.notna().sum())
    out = pd.DataFrame(
        {
            "response_id": first["response_id"].to_numpy(),
            **{a: first[a].to_numpy() for a in group_attributes() if a in first},
            "parse_status": first["parse_status"].to_numpy(),
        }
    )
    out["parsed"] = out["parse_status"].isin(["ok", "partial"]).astype(np.int64)
    out["n_items"] = out["response_id"].map(n_items).fillna(0).astype(np.int64)
    out["three_items"] = (out["n_items"] == 3).astype(np.int64)
    out["n_matched"] = out["response_id"].map(matched).fillna(0).astype(np.int64)
    return out


def item_frame(recs: pd.DataFrame) -> pd.DataFrame:
    """One row per parsed item with 0/1 indicators and a duplicate key."""
    items = recs[recs["university_text"].notna()].copy()
    items["matched"] = items["university_id"].notna().astype(np.int64)
    items["country_resolved"] = items["iso3"].notna().astype(np.int64)
    uid = items["university_id"].astype("object").where(items["university_id"].notna(), None)
    key = uid.map(lambda v: None if v is None else str(int(v)))
    key = key.where(key.notna(), "text:" + items["university_text"].astype(str).str.casefold().str.strip())
    # METHOD.md §9: the same university with two different programs is two recommendations; only an
    # exact repeat (same university, same normalised program) is a duplicate
    if "program_norm" in items:
        program = items["program_norm"].astype(object).where(items["program_norm"].notna(), "").astype(str)
    elif "program_text" in items:
        program = (
            items["program_text"].astype(object).where(items["program_text"].notna(), "").astype(str).str.casefold()
        )
    else:
        program = pd.Series("", index=items.index)
    items["item_key"] = items["response_id"].astype(str) + "#" + key + "#" + program
    return items


def group_rates(responses: pd.DataFrame, items: pd.DataFrame) -> pd.DataFrame:
    """Parse and match rates per attribute value, with the group size."""
    rows = []
    for attr in group_attributes():
        if attr not in responses or responses[attr].isna().all():
            continue
        parse = responses.dropna(subset=[attr]).groupby(attr)["parsed"].agg(["mean", "size"])
        match = items.dropna(subset=[attr]).groupby(attr)["matched"].mean() if attr in items else pd.Series(dtype=float)
        for value, r in parse.iterrows():
            rows.append((attr, value, int(r["size"]), float(r["mean"]), float(match.get(value, np.nan))))
    return pd.DataFrame(rows, columns=["attribute", "group", "responses", "parse_rate", "match_rate"])


def group_gaps(rates: pd.DataFrame) -> pd.DataFrame:
    """Per attribute: the largest difference between two groups' parse and match rates."""
    if rates.empty:
        return pd.DataFrame(columns=["attribute", "parse_gap", "match_gap", "worst_parse_group", "worst_match_group"])
    out = []
    for attr, g in rates.groupby("attribute", sort=False):
        pm = g["match_rate"].dropna()
        out.append(
            (
                attr,
                float(g["parse_rate"].max() - g["parse_rate"].min()),
                float(pm.max() - pm.min()) if len(pm) else 0.0,
                str(g.loc[g["parse_rate"].idxmin(), "group"]),
                str(g.loc[g["match_rate"].idxmin(), "group"]) if len(pm) else "",
            )
        )
    return pd.DataFrame(out, columns=["attribute", "parse_gap", "match_gap", "worst_parse_group", "worst_match_group"])
