"""Every rule but fuzzy (rules 1-6 of the package docstring), in order: :func:`_match_fast` tries
the reviewed aliases and exact names, a text naming several universities, the first part of
"<a university> - <a comment>", acronyms and translated heads, a bare place name, the name's
structure (:func:`_match_structure`), a prefix and a part of one corpus name
(:func:`_match_partial`)."""

from __future__ import annotations

import re
from typing import Optional

from ..match_names import (
    ARTICLES,
    CLOSING_PAREN,
    CONNECTORS,
    DASH_PARTS,
    GENERIC_WORDS,
    INSTITUTION,
    LEAD_ACRONYM,
    LIST_MARK,
    TRANSLATED,
    TU,
    NameWords,
    last_proper,
    multilingual_key,
    name_forms,
    name_key,
    spelling_skeleton,
)
from .index import UniversityIndex
from .rules import (
    _AMBIGUOUS,
    Match,
    _ambiguous,
    _choose,
    _choose_exact,
    _choose_local,
    _local_short_name,
    _lookup_alias,
    _names_several,
    _refuse_completion,
)


def _match_fast(text: Optional[str], iso3: Optional[str], idx: UniversityIndex) -> tuple[Optional[Match], str]:
    """Every rule but fuzzy; (None, base) when only fuzzy matching is left to try."""
    base, acros = name_forms(text)
    if not base and not acros:
        return Match(None, 0.0, "none"), base
    # an acronym in parentheses is evidence only when it closes the text ("Harvard (MIT)'s rival ..." is not)
    if text is not None and (not CLOSING_PAREN.search(str(text)) or str(text).count("(") > 1):
        acros = []
    keys = [k for k in [base, *acros] if k]
    m, several = _by_whole_name(text, base, keys, iso3, idx)
    if m is not None:
        return m, base
    if several is None and _is_a_list(text, idx):
        return Match(None, 0.0, "several"), base
    m = _by_first_part(text, iso3, idx)
    if m is not None:
        return m, base
    for k in keys:
        m = _by_acronym(k, iso3, idx)
        if m is None:
            m = _by_translation(k, iso3, idx)
        if m is not None:
            return m, base
    words = base.split()
    distinctive = [w for w in words if w not in GENERIC_WORDS]
    if not distinctive:
        return Match(None, 0.0, "none"), base
    m = _by_place_name(base, words, iso3, idx)
    nw = idx.words
    if m is None and nw is not None:
        m = _match_structure(str(text), base, iso3, idx, nw)
    if m is None:
        m = _by_prefix(base, words, iso3, idx)
    if m is None and nw is not None:
        m = _match_partial(base, iso3, idx, nw)
    return m, base


def _is_a_list(text: Optional[str], idx: UniversityIndex) -> bool:
    """The text lists several universities on one line (:func:`_names_several`)."""
    return bool(text is not None and LIST_MARK.search(str(text)) and _names_several(str(text), idx))


def _by_whole_name(
    text: Optional[str], base: str, keys: list[str], iso3: Optional[str], idx: UniversityIndex
) -> tuple[Optional[Match], Optional[bool]]:
    """Rules 1-2 for each key (the name, then its acronyms): a reviewed alias, then an exact name;
    with whether the text was found to list several universities (None when not asked)."""
    several = None
    for k in keys:
        if k != base and several is None:  # "A (X), B (Y), C (UCLA)": a list, not UCLA
            several = _is_a_list(text, idx)
            if several:
                return Match(None, 0.0, "several"), several
        m = _by_alias(k, iso3, idx)
        if m is None and idx.multilingual:
            m = _by_multilingual(multilingual_key(text) if k == base else k, iso3, idx)
            if m is None and k == base:
                m = _by_multilingual_head(text, iso3, idx)
        if m is None:
            m = _by_exact(k, base, iso3, idx)
        if m is not None:
            return m, several
    return None, several


def _by_alias(k: str, iso3: Optional[str], idx: UniversityIndex) -> Optional[Match]:
    """1. aliases (reviewed); an alias pointing elsewhere than the stated country yields to a
    university of that country carrying the same acronym ("NTU" in Taiwan)."""
    for table, method in ((idx.alias, "alias"), (idx.historical, "historical")):
        if k in table:
            cands = _lookup_alias(table, k, idx, iso3)
            if iso3 and cands and all(idx.iso3[c] != iso3 for c in cands) and _local_short_name(k, cands, idx):
                continue  # "Queen's University" stated in Jamaica: a Canadian short name, not the Canadian one
            if iso3 and cands and all(idx.iso3[c] != iso3 for c in cands):
                local = [c for c in idx.acronym.get(k, []) if idx.iso3[c] == iso3]
                if len(local) == 1:
                    return Match(local[0], 99.0, "acronym")
            choice = _choose(cands, idx, iso3)
            if choice is not None:
                return Match(choice, 100.0, method)
    return None


_HAN_NATIONAL = "国立"  # the prefix of Taiwan's national universities (國立), folded


def _by_multilingual(key: str, iso3: Optional[str], idx: UniversityIndex) -> Optional[Match]:
    """1b. the reviewed multilingual alias table (issue 35: "Université de Cambridge", "清华大学",
    "جامعة القاهرة"), as strong as an alias; then, for an Arabic or Devanagari name, its spelling
    skeleton (``multilingual_variant``: "جامعة هارفرد" = "جامعة هارفارد"), never over an alias."""
    for table, k, score, method in (
        (idx.multilingual, key, 100.0, "multilingual"),
        (idx.skeletons, spelling_skeleton(key), 98.0, "multilingual_variant"),
    ):
        if k and k in table:
            choice = _choose(_lookup_alias(table, k, idx, iso3), idx, iso3)
            if choice is not None and iso3 and idx.iso3[choice] != iso3 and _HAN_NATIONAL + k in table:
                # "清華大學" stated in Taiwan: the stated country's "國立清華大學", not Beijing's
                local = [c for c in _lookup_alias(table, _HAN_NATIONAL + k, idx, iso3) if idx.iso3[c] == iso3]
                choice = local[0] if len(local) == 1 else choice
            if choice is not None:
                return Match(choice, score, method)
    return None


_COMMA = re.compile("[,،，、]")
# institution words of the tail after a comma (folded as multilingual_key folds them): a list, not a place
_INSTITUTION_WORD = re.compile("大学|学院|جامعه|معهد|كليه|اكاديميه|विश्वविद्यालय|संस्थान|यूनिवर्सिटी|कॉलेज")


def _by_multilingual_head(text: Optional[str], iso3: Optional[str], idx: UniversityIndex) -> Optional[Match]:
    """ "<a name of the multilingual table>, <a place>" ("पंजाब विश्वविद्यालय, चंडीगढ़"): the name
    before the comma, when what follows names no institution (then the text is a list)."""
    parts = _COMMA.split(str(text or ""), maxsplit=1)
    if len(parts) < 2:
        return None
    tail = multilingual_key(parts[1])
    if not tail or tail in idx.multilingual or tail in idx.alias or tail in idx.exact:
        return None
    if INSTITUTION.search(tail) or _INSTITUTION_WORD.search(tail):
        return None
    m = _by_multilingual(multilingual_key(parts[0]), iso3, idx)
    return None if m is None else Match(m.index, 98.0, m.method)


def _by_exact(k: str, base: str, iso3: Optional[str], idx: UniversityIndex) -> Optional[Match]:
    """2. exact (a whole name before a part of one); an acronym -- in parentheses, or the "- UIS"
    part of a corpus name -- is not a full name: it obeys the stated country (METHOD.md §9)."""
    if k in idx.part_acronyms or (k != base and " " not in k):
        if k in idx.exact or k in idx.exact_part:
            choice = _choose_local([*idx.exact.get(k, []), *idx.exact_part.get(k, [])], idx, iso3)
            if choice is not None and choice is not _AMBIGUOUS:
                return Match(choice, 99.0, "acronym")
    elif k in idx.exact or k in idx.exact_part:
        choice = _choose_exact(idx.exact.get(k, []), idx.exact_part.get(k, []), idx, iso3)
        if choice is not None:
            if (k, choice) in idx.completing_parts and k not in idx.exact:
                # "California State University" of "... - Los Angeles": a completion, refused
                # for a system, a shared place or a country
                refused = _refuse_completion(k, iso3, idx, idx.exact_part.get(k, []))
                if refused is not None:
                    return refused
                if k in idx.sep_heads.get(choice, ()):  # "University of Nebraska" of "... - Lincoln": a campus
                    return _ambiguous([choice], idx, iso3)
            return Match(choice, 100.0, "exact")
    return None


_WHOLE_NAME_METHODS = ("alias", "exact", "historical", "multilingual", "acronym")


def _by_first_part(text: Optional[str], iso3: Optional[str], idx: UniversityIndex) -> Optional[Match]:
    """ "<a university> - <a comment or a place>": the first part, when it is a name on its own."""
    head = DASH_PARTS.split(str(text or ""), maxsplit=1)
    if len(head) == 2:
        m, _ = _match_fast(head[0], iso3, idx)
        if m is not None and m.index is not None and m.method in _WHOLE_NAME_METHODS:
            return Match(m.index, 98.0, "part")
    return None


def _by_acronym(k: str, iso3: Optional[str], idx: UniversityIndex) -> Optional[Match]:
    """3. acronym (within the stated country), then an acronym that is a corpus name's first word."""
    if k in idx.acronym:
        choice = _choose_local(idx.acronym[k], idx, iso3)
        if choice is _AMBIGUOUS:
            return _ambiguous(idx.acronym[k], idx, iso3)
        if choice is not None:
            return Match(choice, 99.0, "acronym")
    # an acronym that is a corpus name's first word ("KTH" of "KTH Royal Institute of
    # Technology"): within the stated country; without one, only a unique one of 3+ letters
    if k in idx.lead_acronyms and (iso3 or len(k) >= 3):
        choice = _choose_local(idx.lead_acronyms[k], idx, iso3)
        if choice is _AMBIGUOUS:
            return _ambiguous(idx.lead_acronyms[k], idx, iso3)
        if choice is not None:
            return Match(choice, 99.0, "acronym")
    return None


def _by_translation(k: str, iso3: Optional[str], idx: UniversityIndex) -> Optional[Match]:
    """ "TU Darmstadt" and "Universidad de Stanford": the older translated forms of a corpus name."""
    # "TU Darmstadt" -> "Technical University of Darmstadt" / "Technische Universität Darmstadt"
    tu = TU.match(k)
    if tu:
        for form in (f"technical university of {tu.group(1)}", f"technische universitat {tu.group(1)}"):
            choice = _choose_local(idx.exact.get(form, []), idx, iso3)
            if choice is not None and choice is not _AMBIGUOUS:
                return Match(choice, 96.0, "translated")
    # translated generic head: "Universidad de Stanford" -> "Stanford University"
    tm = TRANSLATED.match(k)
    if tm:
        rest = tm.group(2)
        for form in (f"{rest} university", f"university of {rest}"):
            choice = _choose_local(idx.exact.get(form, []), idx, iso3)
            if choice is not None and choice is not _AMBIGUOUS:
                return Match(choice, 96.0, "translated")
    return None


def _by_place_name(base: str, words: list[str], iso3: Optional[str], idx: UniversityIndex) -> Optional[Match]:
    """A bare place name: "Stanford" -> "stanford university", "university of stanford"."""
    if not any(w in GENERIC_WORDS for w in words):
        for form in (f"{base} university", f"university of {base}"):
            choice = _choose_local(idx.exact.get(form, []), idx, iso3)
            if choice is not None and choice is not _AMBIGUOUS:
                return Match(choice, 97.0, "exact")
    return None


def _by_prefix(base: str, words: list[str], iso3: Optional[str], idx: UniversityIndex) -> Optional[Match]:
    """5. prefix of exactly one corpus name (word boundary), within the stated country; the text
    must name something ("Universidad Nacional" does not), and without a stated country the rest
    of the corpus name must not make it another institution ("Hefei University" + "of
    Technology"; "Khalifa University" stated in the UAE is its university of that name)."""
    nw = idx.words
    if len(words) >= 2 and (nw is None or nw.proper(idx.text_key(base)[1])):
        pref = idx.with_prefix(base + " ")
        if nw is not None and not iso3:
            pref = [i for i in pref if not any(w in nw.distinct for w in name_key(idx.base[i][len(base) :], nw)[1])]
        local = [i for i in pref if not iso3 or idx.iso3[i] == iso3]
        if local:
            refused = _refuse_completion(base, iso3, idx, local)
            if refused is not None:
                return refused
        choice = _choose_local(pref, idx, iso3)
        if choice is _AMBIGUOUS:  # "University of California": the start of several names, not a guess
            return _ambiguous(pref, idx, iso3)
        if choice is not None:
            if base in idx.sep_heads.get(choice, ()):
                # what the corpus name adds is a campus, district or person qualifier ('University
                # of Rome "Tor Vergata"', "University of Hawaii at Manoa"): not this one university
                return _ambiguous([choice], idx, iso3)
            return Match(choice, 95.0, "prefix")
    return None


def _match_structure(text: str, base: str, iso3: Optional[str], idx: UniversityIndex, nw: NameWords) -> Optional[Match]:
    """Rules 3b-4: initials + the rest of the name, then the same distinctive words and institution words."""
    # "UNC Chapel Hill", "PUC-Rio de Janeiro", "LMU Munich"
    lead = LEAD_ACRONYM.match(text.strip())
    if lead:
        rest = name_key(name_forms(lead.group(2))[0], nw)[1]
        if rest:
            choice = _choose_local(idx.initials.get((lead.group(1).lower(), rest), []), idx, iso3)
            if choice is _AMBIGUOUS:
                return _ambiguous(idx.initials.get((lead.group(1).lower(), rest), []), idx, iso3)
            if choice is not None:
                return Match(choice, 95.0, "acronym")
    types, core = idx.text_key(base)
    if not core or not nw.proper(core):  # "Universidad Nacional", "Technical University": no name
        return None
    cands = idx.keys.get((types, core), [])
    if not types:  # a bare name ("Waseda", "Duke"): any institution word on the corpus side
        cands = idx.by_core.get(core, []) if len(core) <= 3 else []
    choice = _choose_local(cands, idx, iso3)
    if choice is _AMBIGUOUS:
        return _ambiguous(cands, idx, iso3)
    if choice is not None:
        if (types, core, choice) in idx.derived_only and types:
            # the same structure as a part of a longer name ("Naples University" = "University of
            # Naples" of "University of Naples - Federico II"): a completion, refused likewise
            refused = _refuse_completion(base, iso3, idx, [choice])
            if refused is not None:
                return refused
        return Match(choice, 97.0, "structure")
    # the same structure as a reviewed alias ("Munich University", "Universität München" =
    # "University of Munich"); not the alias itself, so within the stated country
    if types and (types, core) in idx.alias_keys:
        choice = _choose_local(idx.alias_keys[(types, core)], idx, iso3)
        if choice is not None and choice is not _AMBIGUOUS:
            return Match(choice, 97.0, "structure")
    return None


def _match_partial(base: str, iso3: Optional[str], idx: UniversityIndex, nw: NameWords) -> Optional[Match]:
    """Rule 6: the text's distinctive words are a part of one corpus name's, and what the corpus
    name adds is neither a word that makes another institution (technical, medical, a field) nor
    institution words of another kind. A text whose distinctive words are only a country
    ("Universidad de Colombia") or only generic words is never completed."""
    from collections import Counter

    types, core = idx.text_key(base)
    if not types or not core:
        return None
    if not [w for w in nw.proper(core) if len(w) >= 3]:
        return None
    proper = set(nw.proper(core))
    need = Counter(core)
    lists = [idx.postings.get(w) for w in need]
    if not all(lists):
        return None
    shared = set(min(lists, key=len)).intersection(*map(set, lists))
    cands, containing, qualified = _partial_candidates(shared, types, need, proper, base, iso3, idx, nw)
    if len(containing) > 1:  # "University of Berlin": Humboldt, Freie, Technische, ... a guess
        return _ambiguous(sorted(containing), idx, iso3) if cands or qualified else None
    if cands or qualified:
        refused = _refuse_completion(base, iso3, idx, cands or qualified)
        if refused is not None:
            return refused
    if qualified and not cands:
        return _ambiguous(qualified, idx, iso3)
    choice = _choose_local(cands, idx, iso3)
    if choice is _AMBIGUOUS:
        return _ambiguous(cands, idx, iso3)
    if choice is not None:
        return Match(choice, 94.0, "partial")
    return None


def _partial_candidates(
    shared: set,
    types: frozenset,
    need,
    proper: set,
    base: str,
    iso3: Optional[str],
    idx: UniversityIndex,
    nw: NameWords,
) -> tuple[list[int], set, list[int]]:
    """The corpus names (forms ``shared``) holding all the text's distinctive words ``need``:
    those that only add an epithet before them (candidates), every one that holds them
    (containing), and those whose addition is a place or another institution (qualified)."""
    from collections import Counter

    last = last_proper(base, nw)
    cands, containing, qualified = [], set(), []
    for f in shared:
        i, ftypes, fcore = idx.forms[f]
        if iso3 and idx.iso3[i] != iso3:
            continue
        have = Counter(fcore)
        if any(have[w] < n for w, n in need.items()):
            continue
        containing.add(i)
        extra = have - need
        if ftypes != types or not extra or any(w in nw.distinct or w in idx.country_words for w in extra):
            continue
        # the long name may add an epithet before the text's name ("Albert-Ludwigs-Universität
        # Freiburg", "Johannes Gutenberg Universität Mainz"), never a proper name after it: that is
        # the institution's own name ("Universidad de Bogotá - Jorge Tadeo Lozano")
        if idx.form_last[f] != last:
            continue
        if _qualifies_place(idx.base[i], proper, nw) or _another_institution_before(idx.base[i], proper, nw):
            qualified.append(i)  # "Universidad de Oriente Santiago de Cuba": a place named "Santiago de ..."
            continue
        cands.append(i)
    return cands, containing, qualified


def _another_institution_before(corpus_base: str, proper: set, nw: NameWords) -> bool:
    """What the corpus name adds before the text's name holds an institution of its own, two
    institution words in all: "Indiana University–Purdue University Indianapolis" is not the
    "University of Indianapolis" -- a system or a joint institution, not an epithet."""
    canon = [nw.canonical.get(t, t) for t in corpus_base.split()]
    first = next((j for j, w in enumerate(canon) if w in proper), None)
    if first is None:
        return False
    return sum(1 for w in canon[:first] if w in nw.types) >= 2


def _qualifies_place(corpus_base: str, proper: set, nw: NameWords) -> bool:
    """The corpus name joins a word of its own to the text's first distinctive word with a
    connector: "Santiago de Cuba", "Provincia de Buenos Aires" -- another place, not an epithet."""
    toks = corpus_base.split()
    canon = [nw.canonical.get(t, t) for t in toks]
    for j, w in enumerate(canon):
        if w in proper:
            if (
                j >= 2
                and canon[j - 1] in CONNECTORS
                and canon[j - 2] not in proper
                and canon[j - 2] not in nw.types
                and canon[j - 2] not in CONNECTORS
                and canon[j - 2] not in ARTICLES
                and canon[j - 2] not in nw.generic
            ):
                return True
            return False
    return False
