"""Responses -> recommended items: parse every response, resolve stated countries, match.

Framework-free glue over :mod:`parse`, :mod:`geo` and :mod:`match`, shared by the Dagster
assets and the command line. Every response yields at least one row: a response without any
item keeps one row with ``item_index`` 0 and empty item fields, so nothing is dropped and the
parse rate can be read off the table.
"""

from __future__ import annotations

import functools
from typing import Callable, Optional

import numpy as np
import pandas as pd

from ..reference import axes
from ..reference.geo import CountryResolver, canonical_name
from .match import MatchParams, UniversityIndex, match_universities
from .parse import MAX_ANSWER_CHARS, MAX_ITEMS, STATUS_OK, check_limits, parse_response

DEFAULT_MATCH = MatchParams()  # the default matching parameters (frozen: one shared instance is safe)

ITEM_COLUMNS = [
    "response_id",
    "item_index",
    "parse_status",
    "parse_method",
    "n_items_found",
    "n_duplicates",
    "n_items_left_out",
    "university_text",
    "program_text",
    "country_text",
    "answer_chars",
    "answer_truncated",
]


def parse_responses(
    responses: pd.Series,
    is_country: Optional[Callable[[str], bool]] = None,
    progress: Optional[Callable[[int, int], None]] = None,
    max_items: int = MAX_ITEMS,
    max_chars: int = MAX_ANSWER_CHARS,
) -> pd.DataFrame:
    """One row per item (or one empty row per response without items).

    ``responses``: response texts indexed by response id. Identical texts are parsed once. Only
    the first ``max_chars`` characters of an answer are parsed (the per-answer length limit):
    ``answer_chars`` is the whole answer's length and ``answer_truncated`` says it was cut.
    """
    check_limits(max_items, max_chars)
    texts = responses.astype("object")
    if is_country is not None:  # the same short texts are asked about again and again: ask once each
        is_country = functools.lru_cache(maxsize=1 << 16)(is_country)
    codes, uniques = pd.factorize(texts.fillna(_MISSING), sort=False)
    per_text: list[list[tuple]] = []
    for k, text in enumerate(uniques):
        p = parse_response(None if text == _MISSING else text, is_country, max_items, max_chars)
        if p.items:
            per_text.append(
                [
                    (
                        i,
                        p.status,
                        p.method,
                        p.n_found,
                        p.n_duplicates,
                        p.n_left_out,
                        it.university,
                        it.program,
                        it.country,
                        p.answer_chars,
                        p.truncated,
                    )
                    for i, it in enumerate(p.items)
                ]
            )
        else:
            per_text.append([(0, p.status, p.method, 0, 0, 0, None, None, None, p.answer_chars, p.truncated)])
        if progress and ((k + 1) % 5000 == 0 or k + 1 == len(uniques)):
            progress(k + 1, len(uniques))
    ids = texts.index.to_numpy()
    rows = [(ids[r], *row) for r, code in enumerate(codes) for row in per_text[code]]
    out = pd.DataFrame(rows, columns=ITEM_COLUMNS)
    for col in ("item_index", "n_items_found", "n_duplicates", "n_items_left_out", "answer_chars"):
        out[col] = out[col].astype(np.int64)
    out["answer_truncated"] = out["answer_truncated"].astype(bool)
    return out


_MISSING = "\x00<missing>"


def match_items(
    items: pd.DataFrame,
    resolver: CountryResolver,
    index: UniversityIndex,
    params: MatchParams = DEFAULT_MATCH,
    max_items: int = MAX_ITEMS,
) -> pd.DataFrame:
    """Add stated country, corpus match and the item's canonical country (METHOD.md §5–6).

    The item's country is the matched corpus university's; for an unmatched item, the
    country the model wrote if it resolves, else missing. ``country_conflict`` flags a
    match located elsewhere than the model said.
    """
    stated = resolver.resolve(items["country_text"].where(items["country_text"].notna(), None), strict=False)
    out = items.copy()
    out["stated_iso3"] = stated["iso3"].to_numpy()
    # every match explains itself (issue 21): its rule family, and the runner-up of a completion or
    # fuzzy match (stored as match_runner_up / match_runner_up_score)
    m = (
        match_universities(out, index, params)
        .drop(columns=["runner_up_id"], errors="ignore")
        .rename(columns={"runner_up_name": "match_runner_up", "runner_up_score": "match_runner_up_score"})
    )
    for col in m.columns:
        out[col] = m[col].to_numpy()
    out.loc[out["university_text"].isna(), ["match_method", "match_rule"]] = None
    matched = out["university_id"].notna()
    out["iso3"] = np.where(matched, out["university_iso3"], out["stated_iso3"])
    out["iso3"] = out["iso3"].where(pd.notna(out["iso3"]), None)
    names = {i: canonical_name(i) for i in pd.unique(out["iso3"].dropna())}
    out["country"] = out["iso3"].map(names)
    out["country_conflict"] = matched & out["stated_iso3"].notna() & (out["stated_iso3"] != out["university_iso3"])
    out.loc[~matched | out["stated_iso3"].isna(), "country_conflict"] = False
    return _drop_matched_duplicates(out.drop(columns=["university_iso3"]), max_items)


def _drop_matched_duplicates(items: pd.DataFrame, max_items: int = MAX_ITEMS) -> pd.DataFrame:
    """An exact repeat within a response (METHOD.md §9) is one item: the same corpus university,
    also under two spellings ("MIT", "Massachusetts Institute of Technology"), with the same
    program after normalisation (none twice counts as the same). Keep the first, renumber, and
    update status and counts. The same university with two different programs is two
    recommendations."""
    from .tags import normalize_program

    programs = pd.unique(items["program_text"].dropna())
    norm = {p: normalize_program(p) for p in programs}
    program_key = items["program_text"].map(norm).fillna("")
    keyed = pd.DataFrame({"r": items["response_id"], "u": items["university_id"], "p": program_key})
    dup = items["university_id"].notna() & keyed.duplicated(["r", "u", "p"], keep="first")
    if not dup.any():
        return items
    extra = dup.groupby(items["response_id"]).sum()
    out = items[~dup].copy()
    out["item_index"] = out.groupby("response_id").cumcount().astype(np.int64)
    out["n_duplicates"] = out["n_duplicates"] + out["response_id"].map(extra).fillna(0).astype(np.int64)
    n_items = out.groupby("response_id")["item_index"].transform("size")
    has_items = out["university_text"].notna()
    out.loc[has_items & (n_items < max_items), "parse_status"] = "partial"
    return out.reset_index(drop=True)


def is_country_fn(resolver: CountryResolver) -> Callable[[str], bool]:
    return lambda text: resolver.iso3(text) is not None


NON_EXACT_COLUMNS = [
    "university_text",
    "stated_iso3",
    "matched_name",
    "match_rule",
    "match_method",
    "match_score",
    "match_runner_up",
    "match_runner_up_score",
    "items",
]


def non_exact_matches(items: pd.DataFrame, n: int = 20) -> pd.DataFrame:
    """The ``n`` most frequent matches not made by an exact name (issue 21: a reader audits them at
    a glance): one row per (text, stated country, matched name, rule), with the score, the
    runner-up candidate of a completion or fuzzy match, and how many items it covers; most
    frequent first, then by text. Empty (with these columns) when every match is exact."""
    if items.empty or "match_rule" not in items:
        return pd.DataFrame(columns=NON_EXACT_COLUMNS)
    rows = items[items["university_id"].notna() & items["match_rule"].notna() & (items["match_rule"] != "exact")]
    if rows.empty:
        return pd.DataFrame(columns=NON_EXACT_COLUMNS)
    cols = [c for c in NON_EXACT_COLUMNS[:-1] if c in rows.columns]
    keys = rows[cols].astype(object).where(rows[cols].notna(), "")
    out = keys.groupby(cols, sort=False, dropna=False).size().rename("items").reset_index()
    out = out.sort_values(["items", "university_text"], ascending=[False, True], kind="stable").head(n)
    return out.replace({"": None}).reset_index(drop=True)


__all__ = ["parse_responses", "match_items", "non_exact_matches", "is_country_fn", "ITEM_COLUMNS", "STATUS_OK"]


def attach_tags(items: pd.DataFrame, tag_fn: Callable[[pd.Series], pd.DataFrame]) -> pd.DataFrame:
    """Add ``program_norm`` and ``tags`` (JSON list) to items; each distinct program tagged once."""
    import json

    from .tags import normalize_program

    programs = pd.unique(items["program_text"].dropna())
    norm_of = {p: normalize_program(p) or None for p in programs}
    out = items.copy()
    out["program_norm"] = out["program_text"].map(norm_of)
    tags = tag_fn(pd.Series(programs, dtype=object))
    tag_json = {n: json.dumps(list(t)) for n, t in zip(tags["program_norm"], tags["tags"], strict=False)}
    out["tags"] = out["program_norm"].map(lambda n: None if n is None or n != n else tag_json.get(n, "[]"))
    return out


def generation_fields() -> list[str]:
    """The columns of a generation each of its recommendations carries: its partition, audit, response,
    model, template and profile, one column per axis of the active design (the study's gender,
    economic_class, nationality; core/reference/axes.py) and the run."""
    return ["partition_key", "audit_id", "response_id", "model", "template", "profile_id", *axes.names(), "run"]


def build_recommendations(
    generations: pd.DataFrame,
    resolver: CountryResolver,
    index: UniversityIndex,
    tag_fn: Callable[[pd.Series], pd.DataFrame],
    params: MatchParams = DEFAULT_MATCH,
    progress: Optional[Callable[[int, int], None]] = None,
    max_items: int = MAX_ITEMS,
    max_chars: int = MAX_ANSWER_CHARS,
) -> pd.DataFrame:
    """Generations -> one row per recommended item (parse, match, tag); the first ``max_items``
    distinct items of an answer are kept, the others counted in ``n_items_left_out``; an answer
    longer than ``max_chars`` is parsed up to it and its rows say so (``answer_truncated``).

    ``tag_fn`` maps program texts to a frame ``program_norm, tags`` (the tagger resource).
    """
    texts = pd.Series(generations["response"].to_numpy(), index=generations["response_id"].to_numpy())
    items = parse_responses(texts, is_country_fn(resolver), progress, max_items, max_chars)
    items = match_items(items, resolver, index, params, max_items)
    items = attach_tags(items, tag_fn)
    meta = generations[generation_fields()].drop_duplicates("response_id")
    out = items.merge(meta, on="response_id", how="left", validate="many_to_one")
    if out["model"].isna().any():
        raise ValueError("recommendations: items whose response id is not among the generations")
    return out


def recommendations_from_items(
    items_in: pd.DataFrame,
    resolver: CountryResolver,
    index: UniversityIndex,
    tag_fn: Callable[[pd.Series], pd.DataFrame],
    params: MatchParams = DEFAULT_MATCH,
    max_items: int = MAX_ITEMS,
) -> pd.DataFrame:
    """Answers already split into items (one row per item with ``university``, ``program``,
    ``country``, ``item_index`` and the sample columns) -> recommendation rows, without parsing.

    As for answers as written (METHOD.md §9): the first ``max_items`` items with a university
    are scored, the rest counted in ``n_items_left_out`` (and ``n_items_found`` holds them all);
    a response is ``ok`` with ``max_items`` items, ``partial`` with fewer.
    """
    from .parse import clean

    df = items_in.sort_values(["response_id", "item_index"], kind="stable").copy()
    for src, dst in (("university", "university_text"), ("program", "program_text"), ("country", "country_text")):
        df[dst] = df[src].map(clean)
    has = df["university_text"].notna()
    found = has.groupby(df["response_id"]).transform("sum").astype(np.int64)
    df["n_items_found"] = found
    df["n_duplicates"] = 0
    # rows without a university: dropped where the response has items, else one row kept
    df = df[has | (found == 0)]
    df = df[has | ~df["response_id"].duplicated()].copy()
    df["item_index"] = df.groupby("response_id").cumcount().astype(np.int64)
    df = df[df["item_index"] < max_items].copy()
    n = df["n_items_found"]
    df["n_items_left_out"] = np.maximum(n - max_items, 0).astype(np.int64)
    df["parse_status"] = np.where(n >= max_items, "ok", np.where(n > 0, "partial", "unparseable"))
    df["parse_method"] = "pre-split"
    df["answer_chars"] = None  # not an answer as written: nothing parsed, nothing cut
    df["answer_truncated"] = False
    items = df[ITEM_COLUMNS]
    items = match_items(items, resolver, index, params, max_items)
    items = attach_tags(items, tag_fn)
    meta = df[generation_fields()].drop_duplicates("response_id")
    return items.merge(meta, on="response_id", how="left", validate="many_to_one")


def recommendations_for(
    generations: pd.DataFrame,
    resolver: CountryResolver,
    index: UniversityIndex,
    tag_fn: Callable[[pd.Series], pd.DataFrame],
    params: MatchParams = DEFAULT_MATCH,
    progress: Optional[Callable[[int, int], None]] = None,
    max_items: int = MAX_ITEMS,
    max_chars: int = MAX_ANSWER_CHARS,
) -> pd.DataFrame:
    """Generations of either ``response_format`` -> recommendation rows: answers as written
    (``text``, the default when the column is absent) are parsed, each up to ``max_chars``
    characters (:func:`build_recommendations`); answers imported already split (``items``) are
    not (:func:`recommendations_from_items`)."""
    from ..generation.responses import ITEMS_FORMAT, items_from_generations

    fmt = generations["response_format"] if "response_format" in generations else pd.Series("text", generations.index)
    is_items = (fmt == ITEMS_FORMAT).to_numpy()
    parts = []
    if (~is_items).any() or not len(generations):
        parts.append(
            build_recommendations(
                generations[~is_items], resolver, index, tag_fn, params, progress, max_items, max_chars
            )
        )
    if is_items.any():
        parts.append(
            recommendations_from_items(
                items_from_generations(generations[is_items]), resolver, index, tag_fn, params, max_items
            )
        )
    return parts[0] if len(parts) == 1 else pd.concat(parts, ignore_index=True)
