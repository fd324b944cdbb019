"""The matcher's answer and its choices: :class:`Match` (one text's match), :data:`RULE_FAMILIES`
and :func:`rule_of` (the family a match explains itself with), ``ambiguous`` with its candidates
(:func:`_ambiguous`), the choice among candidates (:func:`_choose`, :func:`_choose_local`,
:func:`_choose_exact`), the reviewed aliases looked up, a text naming several universities
(:func:`_names_several`) and the refusal of a completion (:func:`_refuse_completion`, issue 21.1)."""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Optional

from ..match_names import INSTITUTION, multilingual_key, name_forms, name_key
from .index import UniversityIndex


@dataclass(frozen=True)
class Match:
    """One text's match. ``method`` is the rule's own name; :func:`rule_of` maps it to its family.
    ``runner_up``/``runner_up_score``: for a completion (prefix, partial) or a fuzzy match, the
    best other candidate (its position) and its token-sort similarity; ``candidates``: for an
    ``ambiguous`` text, the positions it could have meant (those a refused completion would choose
    from)."""

    index: Optional[int]  # position in the index, None when unmatched
    score: float
    method: str
    runner_up: Optional[int] = None
    runner_up_score: Optional[float] = None
    candidates: tuple = ()


# the rule families a match explains itself with (issue 21.3): method -> family; unmatched
# methods (none, ambiguous, several) have no family
RULE_FAMILIES = {
    "exact": "exact",
    "part": "exact",
    "alias": "alias",
    "historical": "alias",
    "multilingual": "alias",
    "multilingual_variant": "alias",
    "acronym": "acronym",
    "structure": "structure",
    "translated": "structure",
    "prefix": "completion",
    "partial": "completion",
    "fuzzy": "fuzzy",
}


def rule_of(method: Optional[str]) -> Optional[str]:
    """The family of a match method: exact, alias, acronym, structure, completion or fuzzy;
    None for an unmatched text (none, ambiguous, several)."""
    return RULE_FAMILIES.get(method) if method else None


def _ambiguous(cands, idx: "UniversityIndex", iso3: Optional[str], score: float = 0.0) -> Match:
    """``ambiguous`` with its candidates (within the stated country when one is stated and any are there)."""
    cands = list(dict.fromkeys(int(c) for c in cands))
    if iso3:
        local = [c for c in cands if idx.iso3[c] == iso3]
        cands = local or cands
    return Match(None, score, "ambiguous", candidates=tuple(cands[:20]))


_AMBIGUOUS = object()


def _choose(cands: list[int], idx: UniversityIndex, iso3: Optional[str]) -> Optional[int]:
    """One candidate, the stated country's only one, else None (exact and alias rules: these may
    land in another country than the stated one)."""
    cands = list(dict.fromkeys(cands))
    if len(cands) == 1:
        return cands[0]
    if iso3:
        same = [c for c in cands if idx.iso3[c] == iso3]
        if len(same) == 1:
            return same[0]
    return None  # ambiguous


def _choose_local(cands: list[int], idx: UniversityIndex, iso3: Optional[str]):
    """Structural and look-alike rules: with a stated country only its universities count.
    Returns a position, None (no candidate) or ``_AMBIGUOUS`` (several)."""
    cands = list(dict.fromkeys(cands))
    if iso3:
        cands = [c for c in cands if idx.iso3[c] == iso3]
    if not cands:
        return None
    return cands[0] if len(cands) == 1 else _AMBIGUOUS


def _choose_exact(full: list[int], part: list[int], idx: UniversityIndex, iso3: Optional[str]):
    """A whole corpus name before one part of a name ("Universidad de los Andes" is the Colombian
    university's whole name and a part of "Universidad de los Andes - Chile"); within the stated
    country both count."""
    if iso3:
        same = list(dict.fromkeys(c for c in [*full, *part] if idx.iso3[c] == iso3))
        if len(same) == 1:
            return same[0]
        if len(same) > 1:
            local_full = [c for c in dict.fromkeys(full) if idx.iso3[c] == iso3]
            return local_full[0] if len(local_full) == 1 else None
    for group in (full, part):
        if group:
            return _choose(group, idx, None)
    return None


def _names_several(text: str, idx: UniversityIndex) -> bool:
    """A text holding several university names: "A, B, C, ..." (a whole list on one line) or
    "A - B" where the parts are the names of different universities."""
    pieces = [p for p in re.split(r"\s*[,;]\s+|\s+[-–—|]\s+", text) if p.strip()]
    if len(pieces) < 2:
        return False
    found = set()
    for p in pieces:
        if not (INSTITUTION.search(p) or re.fullmatch(r"\(?[A-Z][A-Za-z&]*[A-Z]\w*\)?", p.strip())):
            continue  # "Harvard University, Cambridge": a place, not a second name
        b, acros = name_forms(p)
        for k in (b, *acros):
            hits = (
                idx.exact.get(k)
                or idx.exact_part.get(k)
                or [c for n, _ in idx.alias.get(k, []) for c in idx.exact.get(n, [])]
                or [
                    c
                    for n, _ in idx.multilingual.get(multilingual_key(p) if k == b else k, [])
                    for c in idx.exact.get(n, [])
                ]
            )
            if hits:
                found.add(frozenset(hits))
                break
    return len(found) >= 2


def _local_short_name(key: str, targets: list[int], idx: UniversityIndex) -> bool:
    """An alias that is also the start of another university's name ("Queen's University":
    Kingston, and Belfast) is a short name in its own country, not a name of its own."""
    return any(i not in targets for i in idx.with_prefix(key + " "))


def _lookup_alias(table, k, idx, iso3):
    targets = table[k]
    return [i for name, t_iso in targets for i in idx.exact.get(name, []) if not t_iso or idx.iso3[i] == t_iso]


def _given_words(base: str, idx: UniversityIndex) -> list[str]:
    """The text's distinctive words in their order, as written (not folded through the word
    table): what a country name is compared with."""
    nw = idx.words
    proper = set(nw.proper(idx.text_key(base)[1]))
    return [t for t in base.split() if nw.canonical.get(t, t) in proper]


def _refuse_completion(base: str, iso3: Optional[str], idx: UniversityIndex, cands) -> Optional[Match]:
    """Issue 21.1: a completion (prefix, partial, a part of a longer corpus name) is refused --
    ``ambiguous`` with the candidates -- when the text's given name is a country ("Universidad de
    Cuba", "Universidad Nacional de Perú"), a place or name that several corpus universities of
    the country share ("University of Rome", "Universidad Nacional de Buenos Aires"), or a
    university system ("California State University"), per the reviewed table
    ``data/aliases/systems_and_cities.csv``. None when the completion may stand."""
    nw = idx.words
    if nw is None:
        return None
    given = _given_words(base, idx)
    if not given:
        return None
    key = idx.text_key(base)
    for c_iso, pos in idx.system_keys.get(key, ()):
        if not iso3 or c_iso == iso3:
            return _ambiguous([*pos, *cands], idx, iso3)
    gn = tuple(sorted(nw.proper(key[1])))
    for c_iso, _, pos in idx.groups.get(gn, ()):
        if not iso3 or c_iso == iso3:
            # the candidates of the text's kind first ("University of Massachusetts": the
            # universities, not MIT), else all the place's
            same_kind = [i for i in pos if key[0] and key[0] <= name_key(idx.base[i], nw)[0]]
            return _ambiguous([*(same_kind or pos), *cands], idx, iso3)
    if " ".join(given) in idx.country_words:
        return _ambiguous(cands, idx, iso3)
    return None
