"""The matcher's entry points: :data:`MATCHER_VERSION`, :func:`match_one` (one text),
:func:`_match_many` (the fast rules per text, then one batched fuzzy pass) and
:func:`match_universities` (a frame of items, each distinct (text, country) pair matched once),
with the runner-up a completion names (:func:`_with_runner_up`)."""

from __future__ import annotations

from typing import Optional

import numpy as np
import pandas as pd

from .fast import _match_fast
from .fuzzy import _fuzzy_choice
from .index import MatchParams, UniversityIndex
from .rules import Match, rule_of

# bump when matching rules change (recorded in every report's provenance); match-6: names in
# other languages (issue 35)
MATCHER_VERSION = "match-6"


def match_one(
    text: Optional[str],
    iso3: Optional[str],
    idx: UniversityIndex,
    params: MatchParams = MatchParams(),  # noqa: B008 - frozen: ruff knows it immutable in its own module only
) -> Match:
    """Match one university text (see the package docstring for the order of evidence); a text
    that states no country may name one in its closing parentheses ("Universität Freiburg (Schweiz)")."""
    from rapidfuzz import fuzz, process

    iso3 = iso3 or idx.country_in_parentheses(text)
    fast, base = _match_fast(text, iso3, idx)
    if fast is not None:
        return _with_runner_up(fast, base, iso3, idx)
    hits = process.extract(base, idx.base, scorer=fuzz.token_sort_ratio, limit=8, score_cutoff=params.fuzzy_min)
    return _fuzzy_choice([(h[2], h[1]) for h in hits], iso3, idx, params, base)


def _with_runner_up(m: Match, base: str, iso3: Optional[str], idx: UniversityIndex) -> Match:
    """A completion (prefix, partial) names the other corpus university nearest to the text (by
    token-sort similarity; within the stated country when one is stated): what the completion
    was chosen over."""
    if m.method not in ("prefix", "partial") or m.index is None or m.runner_up is not None:
        return m
    from rapidfuzz import fuzz, process

    choices = idx.base
    hits = process.extract(base, choices, scorer=fuzz.token_sort_ratio, limit=12)
    for _, score, j in hits:
        if j != m.index and (not iso3 or idx.iso3[j] == iso3):
            return Match(m.index, m.score, m.method, runner_up=int(j), runner_up_score=float(score))
    for _, score, j in hits:
        if j != m.index:
            return Match(m.index, m.score, m.method, runner_up=int(j), runner_up_score=float(score))
    return m


def _match_many(texts: list, iso3s: list, idx: UniversityIndex, params: MatchParams) -> list[Match]:
    """Fast rules per text, then one batched rapidfuzz ``cdist`` for the rest (all cores)."""
    from rapidfuzz import fuzz, process

    out: list[Optional[Match]] = []
    pending: list[tuple[int, str]] = []
    iso3s = [c or idx.country_in_parentheses(t) for t, c in zip(texts, iso3s, strict=False)]
    for i, (t, c) in enumerate(zip(texts, iso3s, strict=False)):
        m, base = _match_fast(t, c, idx)
        out.append(None if m is None else _with_runner_up(m, base, c, idx))
        if m is None:
            pending.append((i, base))
    if pending:
        scores = process.cdist(
            [b for _, b in pending],
            idx.base,
            scorer=fuzz.token_sort_ratio,
            score_cutoff=params.fuzzy_min,
            dtype=np.float32,
            workers=-1,
        )
        for row, (i, b) in enumerate(pending):
            cols = np.flatnonzero(scores[row])
            hits = [(int(j), float(scores[row, j])) for j in cols[np.argsort(-scores[row, cols], kind="stable")[:8]]]
            out[i] = _fuzzy_choice(hits, iso3s[i], idx, params, b)
    return out  # type: ignore[return-value]


def match_universities(
    items: pd.DataFrame,
    idx: UniversityIndex,
    params: MatchParams = MatchParams(),  # noqa: B008 - frozen, as in match_one
    text_col: str = "university_text",
    iso3_col: str = "stated_iso3",
) -> pd.DataFrame:
    """Match every row; each distinct (text, stated country) pair is matched once.

    Returns a frame aligned with ``items``: ``university_id``, ``matched_name``, ``match_score``,
    ``match_method``, ``university_iso3``, and how the match explains itself (issue 21.3):
    ``match_rule`` (the family of ``match_method``: exact, alias, acronym, structure, completion,
    fuzzy; None when unmatched), ``runner_up_id``/``runner_up_name``/``runner_up_score`` (for a
    completion or a fuzzy match, the best other candidate and its token-sort similarity, else
    missing) and ``match_candidates`` (for ``ambiguous``, the corpus names it could be, joined by
    " | "; else None).
    """
    keys = pd.DataFrame({"t": items[text_col].astype("object"), "c": items[iso3_col].astype("object")})
    keys = keys.where(keys.notna(), None)
    uniq = keys.drop_duplicates().reset_index(drop=True)
    res = _match_many(list(uniq["t"]), list(uniq["c"]), idx, params)
    pos = np.array([-1 if m.index is None else m.index for m in res], dtype=np.int64)
    ok = pos >= 0
    uniq["university_id"] = pd.array(np.where(ok, idx.ids[np.where(ok, pos, 0)], 0), dtype="Int64")
    uniq.loc[~ok, "university_id"] = pd.NA
    uniq["matched_name"] = np.where(ok, idx.names[np.where(ok, pos, 0)], None)
    uniq["university_iso3"] = np.where(ok, idx.iso3[np.where(ok, pos, 0)], None)
    uniq["match_score"] = [m.score for m in res]
    uniq["match_method"] = [m.method for m in res]
    uniq["match_rule"] = [rule_of(m.method) if m.index is not None else None for m in res]
    ru = np.array([-1 if m.runner_up is None else m.runner_up for m in res], dtype=np.int64)
    has_ru = ru >= 0
    uniq["runner_up_id"] = pd.array(np.where(has_ru, idx.ids[np.where(has_ru, ru, 0)], 0), dtype="Int64")
    uniq.loc[~has_ru, "runner_up_id"] = pd.NA
    uniq["runner_up_name"] = np.where(has_ru, idx.names[np.where(has_ru, ru, 0)], None)
    uniq["runner_up_score"] = np.array(
        [np.nan if m.runner_up_score is None else m.runner_up_score for m in res], dtype=float
    )
    uniq["match_candidates"] = [
        " | ".join(str(idx.names[c]) for c in m.candidates) if m.candidates else None for m in res
    ]
    merged = keys.merge(uniq, on=["t", "c"], how="left", sort=False)
    merged.index = items.index
    return merged.drop(columns=["t", "c"])
