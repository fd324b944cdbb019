"""The corpus as the matcher looks it up: :class:`MatchParams` (the fuzzy thresholds),
:class:`UniversityIndex` (every lookup structure over the corpus names, built once per corpus) and
the reviewed tables it reads besides the name words: :func:`load_university_aliases` (aliases and
former names) and :func:`load_campuses` (names that add a campus to a system's name).

Also the reviewed multilingual alias table (:func:`load_multilingual_aliases`, issue 35) and the
countries a text may name in its closing parentheses."""

from __future__ import annotations

import csv
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Mapping, Optional

import numpy as np
import pandas as pd

from .. import match_tables
from ..match_names import (
    ARTICLES,
    CAMPUSES_FILE,
    CONNECTORS,
    COUNTRY_ALIASES_FILE,
    GROUPS_FILE,
    HISTORICAL_NAMES_FILE,
    INSTITUTION,
    MULTILINGUAL_FILE,
    NAME_WORDS_FILE,
    PAREN,
    PARTS,
    NameWords,
    default_words,
    last_proper,
    multilingual_key,
    name_forms,
    name_key,
    normalize_name,
    other_script,
    spelling_skeleton,
)


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
    # the reviewed multilingual alias table (issue 35): multilingual_key -> [(corpus name, iso3)],
    # and the spelling skeletons of its Arabic and Devanagari aliases that name one university
    multilingual: dict[str, list[tuple[str, Optional[str]]]] = field(default_factory=dict)
    skeletons: dict[str, list[tuple[str, Optional[str]]]] = field(default_factory=dict)
    country_iso3: dict[str, str] = field(default_factory=dict)  # a country's name, normalised -> iso3
    _key_cache: dict = field(default_factory=dict, repr=False)

    def text_key(self, base: str) -> tuple[frozenset, tuple]:
        """:func:`name_key` of a text's normalised name, computed once per name."""
        k = self._key_cache.get(base)
        if k is None:
            if len(self._key_cache) > 500_000:
                self._key_cache.clear()
            k = self._key_cache[base] = name_key(base, self.words)
        return k

    def country_in_parentheses(self, text: Optional[str]) -> Optional[str]:
        """The country a text names in its closing parentheses ("Universität Freiburg (Schweiz)",
        "清华大学（中国）"): the stated country of a text that states none; None when there is none
        or the name is not only a country's."""
        m = _CLOSING_PARENTHETICAL.search(str(text or ""))
        return self.country_iso3.get(normalize_name(m.group(1))) if m else None

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
        multilingual: Optional[Mapping[str, list[tuple[str, Optional[str]]]]] = None,
    ):
        """``words``, ``historical``, ``groups`` (rows of :mod:`match_tables`, the reviewed
        systems and places with several universities), ``campuses`` (:func:`load_campuses`:
        corpus names that add a campus to a system's name without a separator) and
        ``multilingual`` (:func:`load_multilingual_aliases`: names in other languages) default to
        the reviewed tables in ``data/aliases``."""
        ids = corpus["university_id"].to_numpy()
        names = corpus["name"].astype(str).to_numpy()
        iso3 = corpus["iso3"].astype(str).to_numpy()
        if words is None:
            words = default_words(str(NAME_WORDS_FILE))
        if historical is None:
            historical = load_university_aliases(HISTORICAL_NAMES_FILE) if HISTORICAL_NAMES_FILE.exists() else {}
        country_words = _country_words(corpus)
        if groups is None:
            groups = match_tables.load(GROUPS_FILE) if GROUPS_FILE.exists() else []
        if campuses is None:
            campuses = load_campuses(CAMPUSES_FILE) if CAMPUSES_FILE.exists() else {}
        if multilingual is None:
            multilingual = load_multilingual_aliases(MULTILINGUAL_FILE) if MULTILINGUAL_FILE.exists() else {}
        t = _NameTables(words, country_words, campuses)
        for i, n in enumerate(names):
            t.add_name(i, n)
        postings: dict[str, list[int]] = {}
        for f, (_, _, core) in enumerate(t.forms):
            for w in set(core):
                postings.setdefault(w, []).append(f)
        # a Latin-script alias of another language varies in structure as an English one does
        latin = {k: v for k, v in (multilingual or {}).items() if not other_script(k)}
        alias_keys = _alias_keys({**latin, **dict(aliases or {})}, words, t.exact, iso3)
        group_map, system_keys = _group_keys(groups, words, t.exact, iso3)
        return cls(
            ids,
            names,
            iso3,
            t.base,
            t.exact,
            t.acr,
            dict(aliases or {}),
            exact_part=t.exact_part,
            historical=dict(historical or {}),
            words=words,
            keys=t.keys,
            by_core=t.by_core,
            forms=t.forms,
            postings=postings,
            initials=t.initials,
            core_text=t.core_text,
            country_words=frozenset(country_words),
            part_acronyms=frozenset(t.part_acronyms - set(t.exact)),
            qualifiers=t.qualifiers,
            form_last=t.form_last,
            alias_keys=alias_keys,
            groups=group_map,
            system_keys=system_keys,
            lead_acronyms=t.lead_acronyms,
            sep_heads=t.sep_heads,
            derived_only=frozenset(t.derived_forms - t.whole_forms),
            completing_parts=frozenset(t.completing_parts),
            country_iso3=_country_iso3(corpus),
            multilingual=dict(multilingual or {}),
            skeletons=_skeletons(multilingual),
        )


_CLOSING_PARENTHETICAL = re.compile(r"[(（]([^()（）]+)[)）]\s*$")
# country names that also name a place elsewhere a university is named after ("University of Georgia")
_NOT_ONLY_A_COUNTRY = frozenset({"georgia"})


def _country_iso3(corpus: pd.DataFrame) -> dict[str, str]:
    """The corpus's country names and the country alias table's (normalised) -> iso3, each naming
    one country."""
    found: dict[str, set] = {}
    for col in ("country", "country_raw"):
        if col in corpus and "iso3" in corpus:
            for c, i in zip(corpus[col], corpus["iso3"], strict=True):
                if isinstance(c, str) and isinstance(i, str):
                    found.setdefault(normalize_name(c), set()).add(i)
    if COUNTRY_ALIASES_FILE.exists():
        with open(COUNTRY_ALIASES_FILE, newline="", encoding="utf-8") as fh:
            for r in csv.DictReader(fh):
                if (r.get("alias") or "").strip() and (r.get("iso3") or "").strip():
                    found.setdefault(normalize_name(r["alias"]), set()).add(r["iso3"].strip().upper())
    return {k: next(iter(v)) for k, v in found.items() if k and len(v) == 1 and k not in _NOT_ONLY_A_COUNTRY}


def _country_words(corpus: pd.DataFrame) -> set:
    """The corpus's country names and the country alias table's, normalised: what a given name
    that is only a country is recognised by."""
    country_words = set()
    for col in ("country", "country_raw"):
        if col in corpus:
            country_words.update(normalize_name(c) for c in corpus[col].dropna().astype(str))
    if COUNTRY_ALIASES_FILE.exists():  # "Brasil", "Perú", "Deutschland": the country alias table
        with open(COUNTRY_ALIASES_FILE, newline="", encoding="utf-8") as fh:
            country_words.update(normalize_name(r.get("alias")) for r in csv.DictReader(fh))
    country_words.discard("")
    return country_words


@dataclass
class _NameTables:
    """The per-name lookup tables of :meth:`UniversityIndex.build`, filled one corpus name at a time."""

    words: NameWords
    country_words: set
    campuses: Mapping[str, frozenset]
    base: list = field(default_factory=list)
    exact: dict = field(default_factory=dict)
    exact_part: dict = field(default_factory=dict)
    acr: dict = field(default_factory=dict)
    lead_acronyms: dict[str, list[int]] = field(default_factory=dict)
    sep_heads: dict[int, frozenset] = field(default_factory=dict)
    whole_forms: set = field(default_factory=set)
    derived_forms: set = field(default_factory=set)
    completing_parts: set = field(default_factory=set)
    keys: dict[tuple, list[int]] = field(default_factory=dict)
    by_core: dict[tuple, list[int]] = field(default_factory=dict)
    forms: list[tuple[int, frozenset, tuple]] = field(default_factory=list)
    initials: dict[tuple[str, tuple], list[int]] = field(default_factory=dict)
    core_text: list = field(default_factory=list)
    part_acronyms: set = field(default_factory=set)
    qualifiers: list = field(default_factory=list)
    form_last: list = field(default_factory=list)

    def add_form(self, i: int, b: str, derived: bool = False) -> None:
        words = self.words
        types, core = name_key(b, words)
        if not core or (derived and not words.proper(core)):
            return
        self.keys.setdefault((types, core), []).append(i)
        (self.derived_forms if derived else self.whole_forms).add((types, core, i))
        self.by_core.setdefault(core, []).append(i)
        self.forms.append((i, types, core))
        self.form_last.append(last_proper(b, words))

    def add_name(self, i: int, n: str) -> None:
        words = self.words
        b, acros = name_forms(n)
        self.base.append(b)
        self.exact.setdefault(b, []).append(i)
        self.add_form(i, b)
        self.qualifiers.append(frozenset(w for w in name_key(b, words)[1] if w in words.distinct))
        self.core_text.append(" ".join(words.proper(name_key(b, words)[1], articles=True)))
        self.add_parts(i, n)
        full = normalize_name(n)
        if full != b:
            self.exact.setdefault(re.sub(r"[()]", " ", full).replace("  ", " ").strip(), []).append(i)
        # "The University of Newcastle, Australia": the country is the export's qualifier
        q = re.match(r"^(.*\S)\s*,\s*([^,]+)$", re.sub(r"\s*\([^()]*\)\s*$", "", n.strip()))
        if q and normalize_name(q.group(2)) in self.country_words:
            self.add_form(i, name_forms(q.group(1))[0], derived=True)
        self.add_acronyms(i, n, acros)
        # a name before a campus or district qualifier: 'University of Rome "Tor Vergata"',
        # "University of Texas at Austin", "California State University - Los Angeles"
        head = _campus_head(n, self.country_words)
        heads = ({head} if head and head != b else set()) | set(self.campuses.get(b, ()))
        if heads:  # "University of Minnesota" of "University of Minnesota Twin Cities" (reviewed table)
            self.sep_heads[i] = frozenset(heads)
        self.add_initials(i, b)

    def add_parts(self, i: int, n: str) -> None:
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
                self.completing_parts.add((name_forms(part)[0], i))
            pb, _ = name_forms(part)
            is_acronym = re.fullmatch(r"[A-Z][A-Z0-9&]{1,9}", part.strip())
            if pb and (is_acronym or INSTITUTION.search(part)):
                self.exact_part.setdefault(pb, []).append(i)
                if is_acronym:
                    self.part_acronyms.add(pb)
                self.add_form(i, pb, derived=True)

    def add_acronyms(self, i: int, n: str, acros: list[str]) -> None:
        for a in acros:
            if len(a) >= 2:
                self.acr.setdefault(a, []).append(i)
        # an acronym that is the name's first word: "KTH Royal Institute of Technology"
        lead = re.match(r"^(?:The\s+)?([A-Z][A-Z0-9]{1,5})\s+(?=\S)", n.strip())
        if lead and not INSTITUTION.fullmatch(lead.group(1)):
            self.lead_acronyms.setdefault(lead.group(1).lower(), []).append(i)

    def add_initials(self, i: int, b: str) -> None:
        # initials of the first words: "UNC" + "Chapel Hill", "PUC" + "Rio de Janeiro"
        toks = [t for t in b.split() if t not in CONNECTORS and t not in ARTICLES]
        for k in range(2, min(6, len(toks) - 1) + 1):
            rest = name_key(" ".join(toks[k:]), self.words)[1]
            if rest:
                self.initials.setdefault(("".join(t[0] for t in toks[:k]), rest), []).append(i)


def _alias_keys(aliases, words: NameWords, exact: dict, iso3: np.ndarray) -> dict[tuple, list[int]]:
    """The name structure of each alias ("University of Munich" -> LMU): "Munich University" and
    "Universität München" are the same name, so they reach the alias's university too."""
    alias_keys: dict[tuple, list[int]] = {}
    for a, targets in (aliases or {}).items():
        types, core = name_key(a, words)
        if not types or not words.proper(core):
            continue  # an acronym or a bare nickname has no structure to vary
        pos = [i for n, t_iso in targets for i in exact.get(n, []) if not t_iso or iso3[i] == t_iso]
        alias_keys.setdefault((types, core), []).extend(pos)
    return alias_keys


def _skeletons(multilingual) -> dict[str, list[tuple[str, Optional[str]]]]:
    """The spelling skeleton of each Arabic and Devanagari alias (:func:`spelling_skeleton`), kept
    only where every alias with that skeleton names the same university."""
    out: dict[str, set] = {}
    for key, targets in (multilingual or {}).items():
        sk = spelling_skeleton(key)
        if sk:
            out.setdefault(sk, set()).update(targets)
    return {sk: sorted(t, key=str) for sk, t in out.items() if len({n for n, _ in t}) == 1}


def _group_keys(groups, words: NameWords, exact: dict, iso3: np.ndarray):
    """The reviewed systems and places with several universities (:mod:`match_tables`): given
    name -> [(iso3, kind, positions)], and a system's name_key -> [(iso3, positions)]."""
    group_map: dict[tuple, list[tuple[str, str, tuple]]] = {}
    system_keys: dict[tuple, list[tuple[str, tuple]]] = {}
    for row in match_tables.reviewed_rows(list(groups or [])):
        pos = tuple(
            dict.fromkeys(
                i for c in row.covers for i in exact.get(name_forms(c)[0], []) if not row.iso3 or iso3[i] == row.iso3
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
    return group_map, system_keys


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


MULTILINGUAL_COLUMNS = ("alias", "language", "script", "name", "iso3", "source", "note")


def load_multilingual_aliases(path: str | Path) -> dict[str, list[tuple[str, Optional[str]]]]:
    """The reviewed multilingual alias table (``data/aliases/multilingual_universities.csv``:
    ``alias,language,script,name,iso3,source,note``; issue 35): :func:`multilingual_key` of each
    alias -> [(the corpus name normalised, iso3)]. A row without an alias, a language, a script, a
    name or a source -- its provenance -- fails naming its line."""
    out: dict[str, list[tuple[str, Optional[str]]]] = {}
    with open(path, newline="", encoding="utf-8") as fh:
        for lineno, row in enumerate(csv.DictReader(fh), start=2):
            alias, name = (row.get("alias") or "").strip(), (row.get("name") or "").strip()
            if not alias or not name or not all((row.get(c) or "").strip() for c in ("language", "script", "source")):
                raise ValueError(f"{path}: line {lineno}: need alias, language, script, name and source, got {row!r}")
            key = multilingual_key(alias)
            if not key:
                raise ValueError(f"{path}: line {lineno}: the alias {alias!r} has no letters")
            target = (name_forms(name)[0], (row.get("iso3") or "").strip().upper() or None)
            if target not in out.setdefault(key, []):
                out[key].append(target)
    return out
