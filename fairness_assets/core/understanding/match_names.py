"""University names as the matcher compares them (issue 33.1: split from match.py, which and
match_tables.py both read it, so they no longer import each other): folding a name
(:func:`normalize_name`), its forms (:func:`name_forms`), the reviewed name words
(:class:`NameWords`, data/aliases/name_words.csv) and the key of a name's proper words
(:func:`name_key`), with the word lists and patterns they share."""

from __future__ import annotations

import csv
import re
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Mapping, Optional

from ..common.text import fold_accents

DATA_DIR = Path(__file__).resolve().parents[3] / "data" / "aliases"
NAME_WORDS_FILE = DATA_DIR / "name_words.csv"
HISTORICAL_NAMES_FILE = DATA_DIR / "historical_names.csv"
GROUPS_FILE = DATA_DIR / "systems_and_cities.csv"  # reviewed: names not to complete (issue 21.1)
CAMPUSES_FILE = DATA_DIR / "campuses.csv"  # reviewed: corpus names that add a campus without a separator
COUNTRY_ALIASES_FILE = DATA_DIR / "countries.csv"

GENERIC_WORDS = {
    "university",
    "universidad",
    "universidade",
    "universite",
    "universitat",
    "universita",
    "univ",
    "of",
    "the",
    "de",
    "da",
    "do",
    "di",
    "del",
    "des",
    "la",
    "le",
    "and",
    "for",
    "in",
    "at",
    "institute",
    "institut",
    "instituto",
    "college",
    "school",
    "technology",
    "technical",
    "science",
    "sciences",
    "national",
    "state",
    "federal",
    "polytechnic",
    "academy",
    "studies",
    "research",
}
# words that join the parts of a name and carry nothing ("del" = "de el": "Universidad del
# Salvador" is not "Universidad de El Salvador", so the article "el" itself is kept)
CONNECTORS = frozenset(
    {
        "of",
        "the",
        "de",
        "da",
        "do",
        "dos",
        "das",
        "di",
        "del",
        "della",
        "delle",
        "dei",
        "degli",
        "dello",
        "des",
        "du",
        "zu",
        "zum",
        "zur",
        "am",
        "an",
        "der",
        "die",
        "den",
        "for",
        "and",
        "und",
        "et",
        "e",
        "y",
        "in",
        "at",
        "en",
        "fur",
    }
)
ARTICLES = frozenset({"el", "la", "los", "las", "le", "les", "il", "lo"})
INSTITUTION = re.compile(
    r"(?i)\b(univ\w*|institut\w*|college|school|polytechn\w*|politecnico|academy|hochschule|ecole|école|escuela|tecnol\w*)\b"
)
TRANSLATED = re.compile(
    r"^(universidad|universidade|universite|universita|universitat|universiteit|universitet|universitas|universiti)"
    r"(?:\s+(?:de|di|del|da|do|van|zu|of))?\s+(.+)$"
)
# the same abbreviations in one pass (none of the replacements holds another abbreviation)
_ABBREV_MAP = {
    "univ": "university",
    "u of": "university of",
    "st": "saint",
    "inst": "institute",
    "tech": "technology",
    "natl": "national",
}
_ABBREV_ANY = re.compile(r"\b(univ|u of|st|inst|tech|natl)\b")
_APOS = re.compile(r"[’'`´ʻʼ‘]")
_NONWORD = re.compile(r"[^\w()]+")
_LEAD_THE = re.compile(r"^\s*the\s+")
_WS = re.compile(r"\s+")
PARTS = re.compile(r"\s+[-|·–—]\s+")
_PAREN_CONTENT = re.compile(r"\(([^()]*)\)")
PAREN = re.compile(r"\s*\([^()]*\)\s*")
_PAREN_CHARS = re.compile(r"[()]")
CLOSING_PAREN = re.compile(r"\)\s*$")
LIST_MARK = re.compile(r",|;|\||\s[-–—]\s")
DASH_PARTS = re.compile(r"\s+[-–—]\s+")
TU = re.compile(r"^tu\s+(.+)$")
LEAD_ACRONYM = re.compile(r"^([A-Z]{2,6})(?:\s+|-)(?=\S)(.+)$")


def normalize_name(text: Optional[str]) -> str:
    """Fold a university name for comparison (keeps a parenthetical; see :func:`name_forms`)."""
    if text is None:
        return ""
    t = str(text)
    if t.isascii():  # most names: nothing to decompose
        t = t.lower()
    else:
        t = fold_accents(t).replace("ß", "ss")
    t = t.replace("&", " and ")
    t = _APOS.sub("", t)
    t = _NONWORD.sub(" ", t)
    t = _ABBREV_ANY.sub(lambda m: _ABBREV_MAP[m.group(1)], t)
    t = _LEAD_THE.sub("", t)
    return _WS.sub(" ", t).strip()


def name_forms(text: Optional[str]) -> tuple[str, list[str]]:
    """(name without parentheticals, acronyms found in parentheses)."""
    n = normalize_name(text)
    if "(" not in n and ")" not in n:  # no parenthetical: most names
        return _LEAD_THE.sub("", n), []
    acronyms = [_LEAD_THE.sub("", a.strip()) for a in _PAREN_CONTENT.findall(n) if a.strip()]
    base = PAREN.sub(" ", n)
    base = _PAREN_CHARS.sub(" ", base)
    base = _LEAD_THE.sub("", base)
    return _WS.sub(" ", base).strip(), acronyms


@dataclass(frozen=True)
class NameWords:
    """Multilingual word equivalences (``data/aliases/name_words.csv``).

    ``canonical``: folded word -> canonical word; ``types``: canonical institution words
    (university, institute, college, school, ...); ``distinct``: canonical words that make another
    institution when added to a name (technical, technology, medical, catholic, ...)."""

    canonical: Mapping[str, str]
    types: frozenset
    distinct: frozenset
    generic: frozenset = frozenset()  # canonical words of kind distinct or word (not names)

    def proper(self, core, articles: bool = False) -> list[str]:
        """The words of a name's core that name something (a person, a place), not a kind;
        ``articles`` keeps "el", "la", ... ("El Salvador" is not "Salvador")."""
        return [w for w in core if w not in self.generic and (articles or (w not in ARTICLES and len(w) > 1))]


def load_name_words(path: str | Path = NAME_WORDS_FILE) -> NameWords:
    """Read the word table: CSV ``word,canonical,kind[,note]``, kind one of type, distinct, word,
    place (another spelling of a place) or number (a Roman numeral: "Toulouse III" = "Toulouse 3")."""
    canonical: dict[str, str] = {}
    types, distinct, generic = set(), set(), set()
    with open(path, newline="", encoding="utf-8") as fh:
        for lineno, row in enumerate(csv.DictReader(fh), start=2):
            word, canon, kind = (normalize_name(row.get(k) or "") for k in ("word", "canonical", "kind"))
            if not word or not canon or kind not in ("type", "distinct", "word", "place", "number") or " " in word:
                raise ValueError(
                    f"{path}: line {lineno}: need one word, its canonical form and a kind "
                    f"(type, distinct, word, place or number), got {row!r}"
                )
            canonical[word] = canon
            if kind == "type":
                types.add(canon)
            elif kind == "distinct":
                distinct.add(canon)
            if kind in ("distinct", "word"):
                generic.add(canon)
    return NameWords(canonical, frozenset(types), frozenset(distinct), frozenset(generic))


@lru_cache(maxsize=4)
def default_words(path: str) -> NameWords:
    return load_name_words(path)


def name_key(base: str, words: NameWords) -> tuple[frozenset, tuple]:
    """(institution words, sorted distinctive words) of a normalised name: the part of a name
    that stays the same across "University of X" / "X University" / "Universität X"."""
    types, core = set(), []
    for tok in base.split():
        w = words.canonical.get(tok, tok)
        if w in words.types:
            types.add(w)
        elif w not in CONNECTORS:
            core.append(w)
    return frozenset(types), tuple(sorted(core))


def last_proper(base: str, words: NameWords) -> str:
    """The last word of a normalised name that names something (not a connector, an article, an
    institution word or a generic word), folded through the word table; "" when none."""
    for tok in reversed(base.split()):
        w = words.canonical.get(tok, tok)
        if w in words.types or w in CONNECTORS or w in ARTICLES or w in words.generic or len(w) < 2:
            continue
        return w
    return ""
