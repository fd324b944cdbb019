"""Scoring the parser and matcher against a hand-labelled evaluation set.

An evaluation record: ``response`` text, ``expected_status`` and ``expected`` items
(``university``: exact corpus name or None; ``program_contains``; ``country``: canonical
corpus country or the stated one). An expected item counts as correct when the item at the
same position was parsed, matched to that corpus university (or, for None, left unmatched)
and, where a program is expected, carries it.
"""

from __future__ import annotations

import pandas as pd


def score_items(records: list[dict], items: pd.DataFrame) -> pd.DataFrame:
    """One row per expected item with ``parsed_ok``, ``match_ok`` and ``correct``.

    ``items``: output of :func:`understanding.match_items` with ``response_id`` = record id
    and ``matched_name``.
    """
    by_resp = {rid: g.set_index("item_index") for rid, g in items.groupby("response_id", sort=False)}
    rows = []
    for rec in records:
        got = by_resp.get(rec["id"])
        for pos, exp in enumerate(rec["expected"]):
            row = got.loc[pos] if got is not None and pos in got.index else None
            parsed = row is not None and isinstance(row["university_text"], str)
            prog_ok = True
            if parsed and exp.get("program_contains"):
                prog_ok = isinstance(row["program_text"], str) and exp["program_contains"].casefold() in row["program_text"].casefold()
            matched_name = row["matched_name"] if parsed else None
            matched_name = None if matched_name is None or pd.isna(matched_name) else matched_name
            match_ok = parsed and matched_name == exp["university"]
            rows.append({
                "id": rec["id"], "format": rec.get("format"), "position": pos,
                "expected_university": exp["university"], "university_text": row["university_text"] if parsed else None,
                "matched_name": matched_name, "parsed_ok": parsed and prog_ok, "match_ok": bool(match_ok),
                "correct": bool(parsed and prog_ok and match_ok),
            })
    return pd.DataFrame(rows)


def score_statuses(records: list[dict], items: pd.DataFrame) -> pd.DataFrame:
    status = items.drop_duplicates("response_id").set_index("response_id")["parse_status"]
    return pd.DataFrame({
        "id": [r["id"] for r in records],
        "format": [r.get("format") for r in records],
        "expected": [r["expected_status"] for r in records],
        "got": [status.get(r["id"]) for r in records],
    }).assign(correct=lambda d: d["expected"] == d["got"])
