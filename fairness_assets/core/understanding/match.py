"""University text -> corpus university (or none), with a score and the method used.

Order of evidence, strongest first:

1. ``alias``      the reviewed alias table (``data/aliases/universities.csv``): MIT, UCL, UC
                  Berkeley, Technische Universität München, ...; ``historical`` the reviewed table
                  of former names (``data/aliases/historical_names.csv``: Université Paris-Sud ->
                  Université Paris-Saclay)
2. ``exact``      the normalised name (accents, case, punctuation, "the", "&" folded; a trailing
                  parenthetical such as "(MIT)" ignored) equals a corpus name; a whole corpus name
                  wins over one part of a name such as "Universidad de los Andes - Chile"
3. ``acronym``    the text is the acronym a corpus name carries in parentheses ("IITB", "UCB"),
                  or the acronym that is a corpus name's first word ("KTH" of "KTH Royal Institute
                  of Technology"; within the stated country, or unique and of 3+ letters), or
                  starts with the initials of a corpus name's first words ("UNC Chapel Hill",
                  "PUC-Rio de Janeiro", "LMU Munich")
4. ``structure``  the same name in another structure or language: "University of Osaka" / "Osaka
                  University", "University of Hamburg" / "Universität Hamburg", "Universität Köln"
                  / "University of Cologne" (institution words, connectors and city names folded
                  through ``data/aliases/name_words.csv``; ``translated`` for the older rules
                  "Universidad de Stanford" and "TU Darmstadt"); also the same structure as a
                  reviewed alias ("Munich University" = the alias "University of Munich")
5. ``prefix``     the text is the start of exactly one corpus name ("Imperial College")
6. ``partial``    the text's distinctive words are a part of exactly one corpus name's, which adds
                  only names of persons or regions before them (an epithet), never a word that
                  makes another institution nor a name after them ("University of Freiburg" ->
                  Albert-Ludwigs-Universitaet Freiburg; "Hefei University" is not Hefei University
                  of Technology; "University of Bogotá" not Universidad de Bogotá-Jorge Tadeo Lozano)
7. ``fuzzy``      rapidfuzz token-sort similarity; at or above ``fuzzy_accept`` without a stated
                  country, from ``fuzzy_min`` within the stated country, and only when the
                  distinctive words are themselves alike (``Kochi`` is not ``Koç``; a name of one
                  word needs ``single_min``: ``Tonghua`` is not ``Donghua``) and the qualifiers
                  that make another institution (federal, state, national, autonomous, technical,
                  ...) are the same, misspelt at most

Completions (issue 21.1). Rules 5-6, and an exact match on one part of a longer corpus name
("California State University" of "California State University - Los Angeles"), complete a name
to one university. A completion is refused -- ``ambiguous``, with the candidates in
``Match.candidates`` -- when the text's given name (its distinctive words) is a country
("Universidad de Cuba", "Universidad Nacional de Perú"; the corpus's countries and
``data/aliases/countries.csv``), a place or name that several corpus universities of the country
share ("University of Rome", "Universidad Nacional de Buenos Aires"), or a university system
("California State University", "State University of New York") -- the last two from the reviewed
table ``data/aliases/systems_and_cities.csv`` (:mod:`match_tables`) -- or when what the corpus name
adds is a campus, district or person qualifier after the text's name (a quoted name, "at X",
"- X": 'University of Rome "Tor Vergata"', "University of Hawaii at Manoa") or a place the text's
name is part of ("Santiago de Cuba", "Provincia de Buenos Aires"), or another institution before
the text's name ("Indiana University–Purdue University Indianapolis"). Exact names and reviewed aliases
are never refused: the table says what may not be guessed, not what may not be named.

Every match explains itself: :func:`rule_of` maps ``method`` to its family (exact, alias, acronym,
structure, completion, fuzzy); completions and fuzzy matches name the runner-up candidate.

The stated country (METHOD.md §9): when the model states a country that resolves, rules 3-7 only
land in that country, and so does an acronym wherever it is found (in parentheses after the
text's name, or the "- UIS" part of a corpus name): it is not a full name. Only a reviewed alias
or an exact name may place the university in another country (the item is then flagged
``country_conflict`` by the caller). Without a stated country, candidates in several countries
are ``ambiguous``, never a guess. A text that names
several universities (a whole list on one line, "A - B" naming two different ones) is
``several``, unmatched. Every distinct (text, country) pair is matched once.
"""

from __future__ import annotations

import csv
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Mapping, Optional

import numpy as np
import pandas as pd

from . import match_tables
from .match_names import (
    ARTICLES,
    CAMPUSES_FILE,
    CLOSING_PAREN,
    CONNECTORS,
    COUNTRY_ALIASES_FILE,
    DASH_PARTS,
    GENERIC_WORDS,
    GROUPS_FILE,
    HISTORICAL_NAMES_FILE,
    INSTITUTION,
    LEAD_ACRONYM,
    LIST_MARK,
    NAME_WORDS_FILE,
    PAREN,
    PARTS,
    TRANSLATED,
    TU,
    NameWords,
    default_words,
    last_proper,
    name_forms,
    name_key,
    normalize_name,
)
from .match_names import (
    DATA_DIR as DATA_DIR,
)
from .match_names import (
    load_name_words as load_name_words,
)

MATCHER_VERSION = "match-5"  # bump when matching rules change (recorded in every report's provenance)


@dataclass(frozen=True)
class MatchParams:
    fuzzy_accept: float = 92.0  # accept without a stated country
    fuzzy_min: float = 86.0  # accept within the stated country
    tie_margin: float = 2.0  # candidates this close to the best count as ties
    core_min: float = 85.0  # the distinctive words must be at least this alike for a fuzzy match
    single_min: float = 90.0  # ... and a name of one distinctive word (a place) at least this alike


@dataclass
class UniversityIndex:
    """Lookup structures over a corpus (columns university_id, name, iso3)."""

    ids: np.ndarray
    names: np.ndarray
    iso3: np.ndarray
    base: list[str]
    exact: dict[str, list[int]]
    acronym: dict[str, list[int]]
    alias: dict[str, list[tuple[str, Optional[str]]]] = field(default_factory=dict)
    _sorted: list[tuple[str, int]] = field(default_factory=list, repr=False)
    exact_part: dict[str, list[int]] = field(default_factory=dict)  # one part of "A - B" names
    historical: dict[str, list[tuple[str, Optional[str]]]] = field(default_factory=dict)
    words: Optional[NameWords] = None
    keys: dict[tuple, list[int]] = field(default_factory=dict)  # name_key -> positions
    by_core: dict[tuple, list[int]] = field(default_factory=dict)  # distinctive words -> positions
    forms: list[tuple[int, frozenset, tuple]] = field(default_factory=list)  # (position, types, core)
    postings: dict[str, list[int]] = field(default_factory=dict)  # core word -> form numbers
    initials: dict[tuple[str, tuple], list[int]] = field(default_factory=dict)  # (initials, rest core)
    core_text: list[str] = field(default_factory=list)  # per position: its distinctive words
    country_words: frozenset = frozenset()
    part_acronyms: frozenset = frozenset()  # keys of exact_part that are acronyms ("UIS", "KAIST")
    qualifiers: list[frozenset] = field(default_factory=list)  # per position: its distinct words
    form_last: list[str] = field(default_factory=list)  # per form: its last proper word, in name order
    alias_keys: dict[tuple, list[int]] = field(default_factory=dict)  # name_key of an alias -> positions
    # the reviewed table of systems and places with several universities (match_tables):
    # given name -> [(iso3, kind, positions)], and a system's name_key -> [(iso3, positions)]
    groups: dict[tuple, list[tuple[str, str, tuple]]] = field(default_factory=dict)
    system_keys: dict[tuple, list[tuple[str, tuple]]] = field(default_factory=dict)
    lead_acronyms: dict[str, list[int]] = field(default_factory=dict)  # "kth" -> KTH Royal Institute of Technology
    sep_heads: dict[int, frozenset] = field(default_factory=dict)  # position -> names before a campus qualifier
    derived_only: frozenset = frozenset()  # (types, core, position) of a part of a name, not a whole name
    completing_parts: frozenset = frozenset()  # (part, position): a part whose other parts are no acronym
    _key_cache: dict = field(default_factory=dict, repr=False)

    def text_key(self, base: str) -> tuple[frozenset, tuple]:
        """:func:`name_key` of a text's normalised name, computed once per name."""
        k = self._key_cache.get(base)
        if k is None:
            if len(self._key_cache) > 500_000:
                self._key_cache.clear()
            k = self._key_cache[base] = name_key(base, self.words)
        return k

    def with_prefix(self, prefix: str) -> list[int]:
        """Positions of the corpus names whose normalised form starts with ``prefix``."""
        import bisect

        if not self._sorted:
            self._sorted = sorted((b, i) for i, b in enumerate(self.base))
        lo = bisect.bisect_left(self._sorted, (prefix, -1))
        out = []
        for b, i in self._sorted[lo:]:
            if not b.startswith(prefix):
                break
            out.append(i)
        return out

    @classmethod
    def build(
        cls,
        corpus: pd.DataFrame,
        aliases: Optional[Mapping[str, list[tuple[str, Optional[str]]]]] = None,
        words: Optional[NameWords] = None,
        historical: Optional[Mapping[str, list[tuple[str, Optional[str]]]]] = None,
        groups=None,
        campuses: Optional[Mapping[str, frozenset]] = None,
    ):
        """``words``, ``historical``, ``groups`` (rows of :mod:`match_tables`, the reviewed
        systems and places with several universities) and ``campuses`` (:func:`load_campuses`:
        corpus names that add a campus to a system's name without a separator) default to the
        reviewed tables in ``data/aliases``."""
        ids = corpus["university_id"].to_numpy()
        names = corpus["name"].astype(str).to_numpy()
        iso3 = corpus["iso3"].astype(str).to_numpy()
        if words is None:
            words = default_words(str(NAME_WORDS_FILE))
        if historical is None:
            historical = load_university_aliases(HISTORICAL_NAMES_FILE) if HISTORICAL_NAMES_FILE.exists() else {}
        country_words = set()
        for col in ("country", "country_raw"):
            if col in corpus:
                country_words.update(normalize_name(c) for c in corpus[col].dropna().astype(str))
        if COUNTRY_ALIASES_FILE.exists():  # "Brasil", "Perú", "Deutschland": the country alias table
            with open(COUNTRY_ALIASES_FILE, newline="", encoding="utf-8") as fh:
                country_words.update(normalize_name(r.get("alias")) for r in csv.DictReader(fh))
        country_words.discard("")
        if groups is None:
            groups = match_tables.load(GROUPS_FILE) if GROUPS_FILE.exists() else []
        if campuses is None:
            campuses = load_campuses(CAMPUSES_FILE) if CAMPUSES_FILE.exists() else {}
        base, exact, exact_part, acr = [], {}, {}, {}
        lead_acronyms: dict[str, list[int]] = {}
        sep_heads: dict[int, frozenset] = {}
        whole_forms, derived_forms, completing_parts = set(), set(), set()
        keys: dict[tuple, list[int]] = {}
        by_core: dict[tuple, list[int]] = {}
        forms: list[tuple[int, frozenset, tuple]] = []
        initials: dict[tuple[str, tuple], list[int]] = {}
        core_text = []
        part_acronyms, qualifiers, form_last = set(), [], []

        def add_form(i: int, b: str, derived: bool = False) -> None:
            types, core = name_key(b, words)
            if not core or (derived and not words.proper(core)):
                return
            keys.setdefault((types, core), []).append(i)
            (derived_forms if derived else whole_forms).add((types, core, i))
            by_core.setdefault(core, []).append(i)
            forms.append((i, types, core))
            form_last.append(last_proper(b, words))

        for i, n in enumerate(names):
            b, acros = name_forms(n)
            base.append(b)
            exact.setdefault(b, []).append(i)
            add_form(i, b)
            qualifiers.append(frozenset(w for w in name_key(b, words)[1] if w in words.distinct))
            core_text.append(" ".join(words.proper(name_key(b, words)[1], articles=True)))
            # "KAIST - Korea Advanced Institute ...", "University of Canterbury | Te Whare ...":
            # each part is a name of its own when it is an acronym or names an institution
            parts = PARTS.split(n)
            for part in parts:
                if part.strip() == n.strip():
                    continue
                others = [o for o in parts if o is not part]
                if INSTITUTION.search(part) and not all(
                    _PART_ACRONYM.fullmatch(o.strip()) or re.match(r"[A-Z]{2,}\b", o.strip()) for o in others
                ):
                    # "California State University - Los Angeles": the part is a completion's start
                    completing_parts.add((name_forms(part)[0], i))
                pb, _ = name_forms(part)
                is_acronym = re.fullmatch(r"[A-Z][A-Z0-9&]{1,9}", part.strip())
                if pb and (is_acronym or INSTITUTION.search(part)):
                    exact_part.setdefault(pb, []).append(i)
                    if is_acronym:
                        part_acronyms.add(pb)
                    add_form(i, pb, derived=True)
            full = normalize_name(n)
            if full != b:
                exact.setdefault(re.sub(r"[()]", " ", full).replace("  ", " ").strip(), []).append(i)
            # "The University of Newcastle, Australia": the country is the export's qualifier
            q = re.match(r"^(.*\S)\s*,\s*([^,]+)$", re.sub(r"\s*\([^()]*\)\s*$", "", n.strip()))
            if q and normalize_name(q.group(2)) in country_words:
                add_form(i, name_forms(q.group(1))[0], derived=True)
            for a in acros:
                if len(a) >= 2:
                    acr.setdefault(a, []).append(i)
            # an acronym that is the name's first word: "KTH Royal Institute of Technology"
            lead = re.match(r"^(?:The\s+)?([A-Z][A-Z0-9]{1,5})\s+(?=\S)", n.strip())
            if lead and not INSTITUTION.fullmatch(lead.group(1)):
                lead_acronyms.setdefault(lead.group(1).lower(), []).append(i)
            # a name before a campus or district qualifier: 'University of Rome "Tor Vergata"',
            # "University of Texas at Austin", "California State University - Los Angeles"
            head = _campus_head(n, country_words)
            heads = ({head} if head and head != b else set()) | set(campuses.get(b, ()))
            if heads:  # "University of Minnesota" of "University of Minnesota Twin Cities" (reviewed table)
                sep_heads[i] = frozenset(heads)
            # initials of the first words: "UNC" + "Chapel Hill", "PUC" + "Rio de Janeiro"
            toks = [t for t in b.split() if t not in CONNECTORS and t not in ARTICLES]
            for k in range(2, min(6, len(toks) - 1) + 1):
                rest = name_key(" ".join(toks[k:]), words)[1]
                if rest:
                    initials.setdefault(("".join(t[0] for t in toks[:k]), rest), []).append(i)
        postings: dict[str, list[int]] = {}
        for f, (_, _, core) in enumerate(forms):
            for w in set(core):
                postings.setdefault(w, []).append(f)
        # the name structure of each alias ("University of Munich" -> LMU): "Munich University" and
        # "Universität München" are the same name, so they reach the alias's university too
        alias_keys: dict[tuple, list[int]] = {}
        for a, targets in (aliases or {}).items():
            types, core = name_key(a, words)
            if not types or not words.proper(core):
                continue  # an acronym or a bare nickname has no structure to vary
            pos = [i for n, t_iso in targets for i in exact.get(n, []) if not t_iso or iso3[i] == t_iso]
            alias_keys.setdefault((types, core), []).extend(pos)
        group_map: dict[tuple, list[tuple[str, str, tuple]]] = {}
        system_keys: dict[tuple, list[tuple[str, tuple]]] = {}
        for row in match_tables.reviewed_rows(list(groups or [])):
            pos = tuple(
                dict.fromkeys(
                    i
                    for c in row.covers
                    for i in exact.get(name_forms(c)[0], [])
                    if not row.iso3 or iso3[i] == row.iso3
                )
            )
            if len(pos) < 2:
                continue  # not (or no longer) several corpus universities
            nb = name_forms(row.name)[0]
            if row.kind == "system":
                system_keys.setdefault(name_key(nb, words), []).append((row.iso3, pos))
            gn = match_tables.given_name(nb, words)
            if gn and row.kind != "system":
                group_map.setdefault(gn, []).append((row.iso3, row.kind, pos))
        return cls(
            ids,
            names,
            iso3,
            base,
            exact,
            acr,
            dict(aliases or {}),
            exact_part=exact_part,
            historical=dict(historical or {}),
            words=words,
            keys=keys,
            by_core=by_core,
            forms=forms,
            postings=postings,
            initials=initials,
            core_text=core_text,
            country_words=frozenset(country_words),
            part_acronyms=frozenset(part_acronyms - set(exact)),
            qualifiers=qualifiers,
            form_last=form_last,
            alias_keys=alias_keys,
            groups=group_map,
            system_keys=system_keys,
            lead_acronyms=lead_acronyms,
            sep_heads=sep_heads,
            derived_only=frozenset(derived_forms - whole_forms),
            completing_parts=frozenset(completing_parts),
        )


_CAMPUS_SEP = re.compile(r'\s+at\s+|\s*["“”]|\s+[-–—]\s+')
_PARENT = re.compile(r"(?i)\b(univ\w*|institut\w*|academy|college)\b")
_PART_ACRONYM = re.compile(r"(?=(?:[^A-Z]*[A-Z]){2})[A-Za-z0-9&-]{2,10}")


def _campus_head(name: str, country_words=frozenset()) -> str:
    """The normalised name before a campus, district or person qualifier of a corpus name, "" when
    none: 'University of Rome "Tor Vergata"', "University of Texas at Austin", "California State
    University - Los Angeles", 'Sofia University "St. Kliment Ohridski"'. A tail that is an acronym
    ("- UNC"), a country ("- Chile") or names an institution ("ETH Zurich - Swiss Federal Institute
    of Technology") is the institution's own name, not a qualifier; so are "in Prague" ("Czech
    Technical University in Prague") and a comma ("Adam Mickiewicz University, Poznań"), whose
    systems ("University of California, Berkeley") the reviewed table of systems names."""
    plain = PAREN.sub(" ", name).strip()
    m = _CAMPUS_SEP.search(plain)
    if not m or m.start() == 0:
        return ""
    tail = plain[m.end() :].strip(' "“”')
    sep = m.group(0).strip()
    if sep in ("-", "–", "—") and (
        not tail
        or _PART_ACRONYM.fullmatch(tail)
        or re.match(r"[A-Z]{2,}\b", tail)
        or _PARENT.search(tail)
        or normalize_name(tail) in country_words
    ):
        return ""
    if not tail:
        return ""
    head = plain[: m.start()]
    return name_forms(head)[0] if INSTITUTION.search(head) else ""


def load_campuses(path: str | Path) -> dict[str, frozenset]:
    """The reviewed table of corpus names that add a campus to a university system's name without
    a separator (``data/aliases/campuses.csv``: ``name,system,iso3,other_campuses,source``;
    "University of Minnesota Twin Cities" is the Twin Cities campus of the University of Minnesota,
    which has four others): normalised corpus name -> the system names a completion must not
    complete to it (issue 21.1; the separated forms, "at X", " - X", are read from the name itself).
    A row without a name, a system or a source, or whose name does not start with or extend its
    system's words, is an error naming the line."""
    out: dict[str, set] = {}
    with open(path, newline="", encoding="utf-8") as fh:
        for lineno, row in enumerate(csv.DictReader(fh), start=2):
            name, system = (row.get("name") or "").strip(), (row.get("system") or "").strip()
            if not name or not system or not (row.get("source") or "").strip():
                raise ValueError(f"{path}: line {lineno}: need name, system and source, got {row!r}")
            n, s = name_forms(name)[0], name_forms(system)[0]
            if n == s or not set(s.split()) <= set(n.split()):
                raise ValueError(f"{path}: line {lineno}: {name!r} does not add a campus to the system name {system!r}")
            out.setdefault(n, set()).add(s)
    return {k: frozenset(v) for k, v in out.items()}


def load_university_aliases(path: str | Path) -> dict[str, list[tuple[str, Optional[str]]]]:
    """Reviewed aliases: CSV ``alias,name[,iso3,note]``; ``name`` is the corpus spelling.

    The historical-name table (``old_name,name,iso3,...``) has the same shape and is read by the
    same function."""
    out: dict[str, list[tuple[str, Optional[str]]]] = {}
    with open(path, newline="", encoding="utf-8") as fh:
        for lineno, row in enumerate(csv.DictReader(fh), start=2):
            alias = (row.get("alias") or row.get("old_name") or "").strip()
            name = (row.get("name") or "").strip()
            if not alias or not name:
                raise ValueError(f"{path}: line {lineno}: need alias (or old_name) and name, got {row!r}")
            iso3 = (row.get("iso3") or "").strip().upper() or None
            out.setdefault(name_forms(alias)[0], []).append((name_forms(name)[0], iso3))
    return out


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
            )
            if hits:
                found.add(frozenset(hits))
                break
    return len(found) >= 2


def match_one(
    text: Optional[str], iso3: Optional[str], idx: UniversityIndex, params: MatchParams = MatchParams()
) -> Match:
    """Match one university text (see the module docstring for the order of evidence)."""
    from rapidfuzz import fuzz, process

    fast, base = _match_fast(text, iso3, idx)
    if fast is not None:
        return _with_runner_up(fast, base, iso3, idx)
    hits = process.extract(base, idx.base, scorer=fuzz.token_sort_ratio, limit=8, score_cutoff=params.fuzzy_min)
    return _fuzzy_choice([(h[2], h[1]) for h in hits], iso3, idx, params, base)


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


def _match_fast(text: Optional[str], iso3: Optional[str], idx: UniversityIndex) -> tuple[Optional[Match], str]:
    """Every rule but fuzzy; (None, base) when only fuzzy matching is left to try."""
    base, acros = name_forms(text)
    if not base and not acros:
        return Match(None, 0.0, "none"), base
    # an acronym in parentheses is evidence only when it closes the text ("Harvard (MIT)'s rival ..." is not)
    if text is not None and (not CLOSING_PAREN.search(str(text)) or str(text).count("(") > 1):
        acros = []
    keys = [k for k in [base, *acros] if k]
    several = None
    for k in keys:
        if k != base and several is None:  # "A (X), B (Y), C (UCLA)": a list, not UCLA
            several = bool(text is not None and LIST_MARK.search(str(text)) and _names_several(str(text), idx))
            if several:
                return Match(None, 0.0, "several"), base
        # 1. aliases (reviewed); an alias pointing elsewhere than the stated country yields to
        #    a university of that country carrying the same acronym ("NTU" in Taiwan)
        for table, method in ((idx.alias, "alias"), (idx.historical, "historical")):
            if k in table:
                cands = _lookup_alias(table, k, idx, iso3)
                if iso3 and cands and all(idx.iso3[c] != iso3 for c in cands) and _local_short_name(k, cands, idx):
                    continue  # "Queen's University" stated in Jamaica: a Canadian short name, not the Canadian one
                if iso3 and cands and all(idx.iso3[c] != iso3 for c in cands):
                    local = [c for c in idx.acronym.get(k, []) if idx.iso3[c] == iso3]
                    if len(local) == 1:
                        return Match(local[0], 99.0, "acronym"), base
                choice = _choose(cands, idx, iso3)
                if choice is not None:
                    return Match(choice, 100.0, method), base
        # 2. exact (a whole name before a part of one); an acronym -- in parentheses, or the "- UIS"
        #    part of a corpus name -- is not a full name: it obeys the stated country (METHOD.md §9)
        if k in idx.part_acronyms or (k != base and " " not in k):
            if k in idx.exact or k in idx.exact_part:
                choice = _choose_local([*idx.exact.get(k, []), *idx.exact_part.get(k, [])], idx, iso3)
                if choice is not None and choice is not _AMBIGUOUS:
                    return Match(choice, 99.0, "acronym"), base
        elif k in idx.exact or k in idx.exact_part:
            choice = _choose_exact(idx.exact.get(k, []), idx.exact_part.get(k, []), idx, iso3)
            if choice is not None:
                if (k, choice) in idx.completing_parts and k not in idx.exact:
                    # "California State University" of "... - Los Angeles": a completion, refused
                    # for a system, a shared place or a country
                    refused = _refuse_completion(k, iso3, idx, idx.exact_part.get(k, []))
                    if refused is not None:
                        return refused, base
                    if k in idx.sep_heads.get(choice, ()):  # "University of Nebraska" of "... - Lincoln": a campus
                        return _ambiguous([choice], idx, iso3), base
                return Match(choice, 100.0, "exact"), base
    if several is None and text is not None and LIST_MARK.search(str(text)) and _names_several(str(text), idx):
        return Match(None, 0.0, "several"), base
    # "<a university> - <a comment or a place>": the first part, when it is a name on its own
    head = DASH_PARTS.split(str(text or ""), maxsplit=1)
    if len(head) == 2:
        m, _ = _match_fast(head[0], iso3, idx)
        if m is not None and m.index is not None and m.method in ("alias", "exact", "historical", "acronym"):
            return Match(m.index, 98.0, "part"), base
    for k in keys:
        # 3. acronym (within the stated country)
        if k in idx.acronym:
            choice = _choose_local(idx.acronym[k], idx, iso3)
            if choice is _AMBIGUOUS:
                return _ambiguous(idx.acronym[k], idx, iso3), base
            if choice is not None:
                return Match(choice, 99.0, "acronym"), base
        # an acronym that is a corpus name's first word ("KTH" of "KTH Royal Institute of
        # Technology"): within the stated country; without one, only a unique one of 3+ letters
        if k in idx.lead_acronyms and (iso3 or len(k) >= 3):
            choice = _choose_local(idx.lead_acronyms[k], idx, iso3)
            if choice is _AMBIGUOUS:
                return _ambiguous(idx.lead_acronyms[k], idx, iso3), base
            if choice is not None:
                return Match(choice, 99.0, "acronym"), base
        # "TU Darmstadt" -> "Technical University of Darmstadt" / "Technische Universität Darmstadt"
        tu = TU.match(k)
        if tu:
            for form in (f"technical university of {tu.group(1)}", f"technische universitat {tu.group(1)}"):
                choice = _choose_local(idx.exact.get(form, []), idx, iso3)
                if choice is not None and choice is not _AMBIGUOUS:
                    return Match(choice, 96.0, "translated"), base
        # translated generic head: "Universidad de Stanford" -> "Stanford University"
        tm = TRANSLATED.match(k)
        if tm:
            rest = tm.group(2)
            for form in (f"{rest} university", f"university of {rest}"):
                choice = _choose_local(idx.exact.get(form, []), idx, iso3)
                if choice is not None and choice is not _AMBIGUOUS:
                    return Match(choice, 96.0, "translated"), base
    words = base.split()
    distinctive = [w for w in words if w not in GENERIC_WORDS]
    if not distinctive:
        return Match(None, 0.0, "none"), base
    # a bare place name: "Stanford" -> "stanford university", "university of stanford"
    if not any(w in GENERIC_WORDS for w in words):
        for form in (f"{base} university", f"university of {base}"):
            choice = _choose_local(idx.exact.get(form, []), idx, iso3)
            if choice is not None and choice is not _AMBIGUOUS:
                return Match(choice, 97.0, "exact"), base
    nw = idx.words
    if nw is not None:
        m = _match_structure(str(text), base, iso3, idx, nw)
        if m is not None:
            return m, base
    # 5. prefix of exactly one corpus name (word boundary), within the stated country; the text
    #    must name something ("Universidad Nacional" does not), and without a stated country the
    #    rest of the corpus name must not make it another institution ("Hefei University" + "of
    #    Technology"; "Khalifa University" stated in the UAE is its university of that name)
    if len(words) >= 2 and (nw is None or nw.proper(idx.text_key(base)[1])):
        pref = idx.with_prefix(base + " ")
        if nw is not None and not iso3:
            pref = [i for i in pref if not any(w in nw.distinct for w in name_key(idx.base[i][len(base) :], nw)[1])]
        local = [i for i in pref if not iso3 or idx.iso3[i] == iso3]
        if local:
            refused = _refuse_completion(base, iso3, idx, local)
            if refused is not None:
                return refused, base
        choice = _choose_local(pref, idx, iso3)
        if choice is _AMBIGUOUS:  # "University of California": the start of several names, not a guess
            return _ambiguous(pref, idx, iso3), base
        if choice is not None:
            if base in idx.sep_heads.get(choice, ()):
                # what the corpus name adds is a campus, district or person qualifier ('University
                # of Rome "Tor Vergata"', "University of Hawaii at Manoa"): not this one university
                return _ambiguous([choice], idx, iso3), base
            return Match(choice, 95.0, "prefix"), base
    if nw is not None:
        m = _match_partial(base, iso3, idx, nw)
        if m is not None:
            return m, base
    return None, base


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


def _words_alike(a: str, b: str, cutoff: float) -> bool:
    """One word and its misspelling: equal, the same letters (a swapped pair) when short, else
    rapidfuzz ratio at least ``cutoff``."""
    from rapidfuzz import fuzz

    if a == b or (len(a) == len(b) and sorted(a) == sorted(b)):
        return True
    if len(a) <= 4 or len(b) <= 4:
        return False
    return fuzz.ratio(a, b) >= cutoff


_VOCABULARY: dict[int, tuple] = {}
_KNOWN: dict[int, frozenset] = {}  # the canonical words of a word table
_NEAR_GENERIC: dict[tuple[int, str], bool] = {}


def _near_generic(word: str, words: NameWords) -> bool:
    """A word of the table, a connector or its misspelling ("Univeristy", "Tehcnology", "fo")."""
    key = (id(words), word)
    hit = _NEAR_GENERIC.get(key)
    if hit is None:
        from rapidfuzz import fuzz, process

        vocab = _VOCABULARY.get(id(words))
        if vocab is None:
            generic = set(words.types) | set(words.generic) | CONNECTORS | GENERIC_WORDS
            generic |= {k for k, v in words.canonical.items() if v in words.types or v in words.generic}
            vocab = _VOCABULARY[id(words)] = tuple(sorted(generic))
        if word in vocab:
            hit = True
        elif len(word) <= 4:
            hit = any(len(g) == len(word) and sorted(g) == sorted(word) for g in vocab)
        else:
            hit = process.extractOne(word, vocab, scorer=fuzz.ratio, score_cutoff=80) is not None
        if len(_NEAR_GENERIC) > 200_000:
            _NEAR_GENERIC.clear()
        _NEAR_GENERIC[key] = hit
    return hit


def _fuzzy_choice(
    hits: list[tuple[int, float]], iso3: Optional[str], idx: UniversityIndex, params: MatchParams, base: str = ""
) -> Match:
    """Pick among fuzzy hits (position, score), best first: within the stated country only, and
    only where the distinctive words are alike too; without a country, ties in several
    countries are ambiguous."""
    from rapidfuzz import fuzz

    if not hits:
        return Match(None, 0.0, "none")
    core = set(idx.text_key(base)[1]) if idx.words is not None and base else set()
    if core and " ".join(w for w in base.split() if idx.words.canonical.get(w, w) in core) in idx.country_words:
        # a name made of a country and nothing else ("University of America") is no look-alike of a
        # university named after the country's people or a place in it ("American University");
        # with a qualifier it may be a name of its own ("National University of Singapore (NU)S")
        return Match(None, float(max(h[1] for h in hits)), "none")
    if idx.words is not None and base:
        nw = idx.words
        text_words = [
            w for w in nw.proper(idx.text_key(base)[1], articles=True) if w in ARTICLES or not _near_generic(w, nw)
        ]
        if not [w for w in text_words if w not in ARTICLES]:  # generic words only: nothing to be alike
            return Match(None, 0.0, "none")
        squeezed = base.replace(" ", "")
        # the qualifiers that make another institution (federal, state, national, autonomous,
        # technical, catholic, ...): a look-alike may misspell them, never add, drop or change one
        text_core = idx.text_key(base)[1]
        text_qual = {w for w in text_core if w in nw.distinct}
        known = _KNOWN.get(id(nw))
        if known is None:
            known = _KNOWN[id(nw)] = frozenset(nw.canonical.values())
        unknown = [w for w in text_core if len(w) > 4 and w not in known]
        single = len([w for w in text_words if w not in ARTICLES]) == 1

        def alike(pos: int) -> bool:
            # each distinctive word of the corpus name has its like in the text, and each of the
            # text's in the corpus name ("Kochi" is not "Koç", "El Salvador" not "Salvador");
            # within the stated country the text may add a campus ("University of the
            # Philippines Diliman")
            corpus_words = idx.core_text[pos].split()
            other = idx.base[pos].replace(" ", "")
            if len(other) == len(squeezed) and sorted(other) == sorted(squeezed) and fuzz.ratio(other, squeezed) >= 90:
                return True  # letters swapped across a space: "University ofS eoul"
            qual = idx.qualifiers[pos]
            if qual != text_qual and (
                any(not any(_words_alike(t, q, params.core_min) for q in qual) for t in text_qual)
                or any(not any(_words_alike(q, u, params.core_min) for u in (*text_qual, *unknown)) for q in qual)
            ):
                return False  # ("Technology" / "Technological" are alike; a misspelt "Fedreal" is "Federal")
            # a name of one distinctive word (a place) is short: one changed letter makes another
            # place ("Tonghua" is not "Donghua", "Brasil" not "Brasília")
            cut = params.single_min if single and len(corpus_words) == 1 else params.core_min
            covered = all(any(_words_alike(c, t, cut) for t in text_words) for c in corpus_words)
            if not covered or not corpus_words:
                return False
            if iso3 and idx.iso3[pos] == iso3:
                return True
            return all(any(_words_alike(t, c, params.core_min) for c in corpus_words) for t in text_words)

        hits = [h for h in hits if alike(h[0])]
        if not hits:
            return Match(None, 0.0, "none")
    hits = sorted(hits, key=lambda h: -h[1])
    if iso3:
        same = [h for h in hits if idx.iso3[h[0]] == iso3]
        if not same:
            return Match(None, float(hits[0][1]), "none")
        if len(same) == 1 or same[0][1] - same[1][1] >= 0.5:
            second = same[1] if len(same) > 1 else None
            return Match(
                same[0][0],
                float(same[0][1]),
                "fuzzy",
                runner_up=None if second is None else int(second[0]),
                runner_up_score=None if second is None else float(second[1]),
            )
        return _ambiguous([h[0] for h in same if h[1] >= same[0][1] - 0.5], idx, iso3, float(same[0][1]))
    best = hits[0][1]
    top = [h for h in hits if h[1] >= best - params.tie_margin]
    if len(top) > 1 and (top[0][1] - top[1][1] < 0.5 or len({idx.iso3[h[0]] for h in top}) > 1):
        return _ambiguous([h[0] for h in top], idx, None, float(best))
    if best >= params.fuzzy_accept:
        second = hits[1] if len(hits) > 1 else None
        return Match(
            top[0][0],
            float(best),
            "fuzzy",
            runner_up=None if second is None else int(second[0]),
            runner_up_score=None if second is None else float(second[1]),
        )
    return Match(None, float(best), "none")


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
    params: MatchParams = MatchParams(),
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
