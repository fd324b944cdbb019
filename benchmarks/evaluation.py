"""Scoring the parser and matcher against a hand-labelled evaluation set (a measurement, not
product code: benchmarks/eval_parse_match.py and the tests use it; issue 33.4 moved it out of core).

An evaluation record: ``response`` text, ``expected_status`` and ``expected`` items
(``university``: exact corpus name or None; ``program_contains``; ``country``: canonical
corpus country or the stated one). An expected item counts as correct when the item at the
same position was parsed, matched to that corpus university (or, for None, left unmatched)
and, where a program is expected, carries it.
"""

from __future__ import annotations

import csv
import json
import re
import unicodedata
from pathlib import Path
from typing import Mapping, Optional

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
                prog_ok = (
                    isinstance(row["program_text"], str)
                    and exp["program_contains"].casefold() in row["program_text"].casefold()
                )
            matched_name = row["matched_name"] if parsed else None
            matched_name = None if matched_name is None or pd.isna(matched_name) else matched_name
            match_ok = parsed and matched_name == exp["university"]
            rows.append(
                {
                    "id": rec["id"],
                    "format": rec.get("format"),
                    "position": pos,
                    "expected_university": exp["university"],
                    "university_text": row["university_text"] if parsed else None,
                    "matched_name": matched_name,
                    "parsed_ok": parsed and prog_ok,
                    "match_ok": bool(match_ok),
                    "correct": bool(parsed and prog_ok and match_ok),
                }
            )
    return pd.DataFrame(rows)


def score_statuses(records: list[dict], items: pd.DataFrame) -> pd.DataFrame:
    status = items.drop_duplicates("response_id").set_index("response_id")["parse_status"]
    return pd.DataFrame(
        {
            "id": [r["id"] for r in records],
            "format": [r.get("format") for r in records],
            "expected": [r["expected_status"] for r in records],
            "got": [status.get(r["id"]) for r in records],
        }
    ).assign(correct=lambda d: d["expected"] == d["got"])


# ----------------------------------------------------------------------------- external answers
# Real answers of 13 open models with hand labels (../shared/data/external, README.md there).
# The hand labels cover every item whose text differs from the name the matcher returned when
# they were written; every other item's text *is* a corpus name (checked: ``unlabelled``).
EXTERNAL_ITEMS = "biais_llm_rec_items_onepersample.jsonl"
EXTERNAL_RESPONSES = "biais_llm_rec_responses.jsonl"
EXTERNAL_LABELS = "handcheck_allpositions_nontrivial.csv"


def corpus_name_key(name) -> Optional[str]:
    """A corpus name compared the way the corpus reader cleans it (escaping undone, spaces folded)."""
    from fairness_assets.core.reference.corpus import clean_institution_name

    if name is None or (isinstance(name, float) and name != name):
        return None
    return unicodedata.normalize("NFC", clean_institution_name(str(name)))


def load_external_labels(folder) -> dict[str, dict]:
    """text -> {"label", "matched_name", "should_be"} from the hand-label CSV."""
    out = {}
    with open(Path(folder) / EXTERNAL_LABELS, newline="", encoding="utf-8") as fh:
        for row in csv.DictReader(fh):
            out[row["university_text"]] = row
    return out


def load_external_items(folder) -> pd.DataFrame:
    """One row per item (all 20 positions): ``response_id``, ``university``, ``model``, ``nationality``."""
    rows = [
        json.loads(line)
        for line in (Path(folder) / EXTERNAL_ITEMS).read_text(encoding="utf-8").splitlines()
        if line.strip()
    ]
    df = pd.DataFrame(rows)
    for col in ("nationality", "gender"):
        if col not in df:
            df[col] = None
    df["response_id"] = [f"ext{k}" for k in range(len(df))]  # one sample per item
    return df


def expected_external(text: Optional[str], labels: Mapping[str, dict], corpus_keys: set) -> tuple[str, Optional[str]]:
    """(kind, expected corpus name key) of one item text under the hand labels.

    kind: ``target`` (a QS 2024 entry exists: the name), ``none`` (correctly left unmatched),
    ``historical`` (an old name of a QS-listed institution), ``questionable`` (left out of
    both measures), ``unlabelled`` (a text neither labelled nor a corpus name)."""
    if text is None:
        return "none", None
    lab = labels.get(text)
    if lab is None:
        key = corpus_name_key(text)
        return ("target", key) if key in corpus_keys else ("unlabelled", None)
    label = lab["label"]
    if label == "correct":
        return "target", corpus_name_key(lab["matched_name"])
    if label == "correct-none":
        return "none", None
    if label in ("missed", "missed-historical"):
        return ("historical" if label == "missed-historical" else "target"), corpus_name_key(lab["should_be"])
    if label == "questionable":
        return "questionable", None
    if label == "wrong":  # should_be: a corpus name, "none (...)", or "<name> (why), not <other>"
        for cand in (lab["should_be"], re.split(r"\s+\(|,\s+not\s+", lab["should_be"])[0]):
            key = corpus_name_key(cand)
            if key in corpus_keys:
                return "target", key
        return "none", None
    raise ValueError(f"{EXTERNAL_LABELS}: unknown label {label!r} for {text!r}")


def score_external(items: pd.DataFrame, labels: Mapping[str, dict], corpus_names) -> tuple[dict, pd.DataFrame]:
    """Precision and recall of matched items against the hand labels.

    ``items``: ``university_text`` and ``matched_name`` per item. Precision: correct matches /
    matches (questionable items left out); recall: correct matches / items with a QS 2024 entry
    (historical names left out; ``recall_with_historical`` counts them).
    """
    corpus_keys = {corpus_name_key(n) for n in corpus_names}
    rows = []
    for text, got in zip(items["university_text"], items["matched_name"], strict=False):
        text = None if text is None or (isinstance(text, float) and text != text) else text
        kind, exp = expected_external(text, labels, corpus_keys)
        got_key = corpus_name_key(got)
        rows.append(
            {
                "university_text": text,
                "kind": kind,
                "expected": exp,
                "matched_name": got_key,
                "matched": got_key is not None,
                "correct": got_key is not None and got_key == exp,
            }
        )
    df = pd.DataFrame(rows)
    scored = df[df["kind"] != "questionable"]
    matched = scored[scored["matched"]]
    target = scored[scored["kind"] == "target"]
    hist = scored[scored["kind"] == "historical"]
    n_correct = int(matched["correct"].sum())
    summary = {
        "items": len(df),
        "matched": int(df["matched"].sum()),
        "questionable": int((df["kind"] == "questionable").sum()),
        "unlabelled": int((df["kind"] == "unlabelled").sum()),
        "wrong": int(len(matched) - n_correct),
        "with_qs_entry": len(target),
        "missed": int((~target["correct"]).sum()),
        "historical": len(hist),
        "historical_matched": int(hist["correct"].sum()),
        "precision": n_correct / len(matched) if len(matched) else float("nan"),
        "recall": float(target["correct"].mean()) if len(target) else float("nan"),
        "recall_with_historical": (int(target["correct"].sum()) + int(hist["correct"].sum()))
        / max(1, len(target) + len(hist)),
    }
    return summary, df


def match_external(folder, resolver, index, params=None) -> pd.DataFrame:
    """The external items (all 20 positions, one sample each) through the same path as
    ``fairness-audit score`` on a file of already-split items
    (:func:`understanding.recommendations_from_items`), without tagging."""
    from fairness_assets.core.understanding.match import MatchParams
    from fairness_assets.core.understanding.understand import recommendations_from_items

    df = load_external_items(folder)
    items_in = df.assign(
        program=None,
        country=None,
        item_index=0,
        partition_key=df["model"] + "|" + df["template"],
        audit_id="external",
        profile_id=df["nationality"].fillna(df["gender"]),
        economic_class=None,
    )
    no_tags = lambda programs: pd.DataFrame({"program_norm": [], "tags": []})  # noqa: E731
    return recommendations_from_items(items_in, resolver, index, no_tags, params or MatchParams())
