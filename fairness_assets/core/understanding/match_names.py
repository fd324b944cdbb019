"""University names as the matcher compares them (issue 33.1: split from match.py, which and
match_tables.py both read it, so they no longer import each other): folding a name
(:func:`normalize_name`), its forms (:func:`name_forms`), the reviewed name words
(:class:`NameWords`, data/aliases/name_words.csv) and the key of a name's proper words
(:func:`name_key`), with the word lists and patterns they share.

Names in other scripts (issue 35): the key of the reviewed multilingual alias table
(:func:`multilingual_key`), the traditional Chinese characters' simplified forms
(:func:`chinese_variants`) and the spelling skeleton of an Arabic or Devanagari name
(:func:`spelling_skeleton`), the fallback key."""

from __future__ import annotations

import csv
import re
import unicodedata
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
# reviewed: names in French, Spanish, Portuguese, German, Arabic, Hindi and Chinese (issue 35)
MULTILINGUAL_FILE = DATA_DIR / "multilingual_universities.csv"
CHINESE_VARIANTS_FILE = DATA_DIR / "chinese_variants.csv"  # traditional -> simplified characters

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
        "em",
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
# French elision: "Université d'Oxford" is "Université de Oxford" ("d'Annunzio" alike on both sides)
_ELISION = re.compile(r"\bd[’'`´ʻʼ‘]\s*(?=[^\W\d_])")
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
    t = _ELISION.sub("de ", t)
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


# Names in other scripts (issue 35): the key of the multilingual alias table
# (data/aliases/multilingual_universities.csv) and its fallback, the spelling skeleton.
_INVISIBLE = re.compile("[\u00ad\u0640\u061c\u180e\u200b-\u200f\u202a-\u202e\u2060-\u2064\u2066-\u2069\ufeff]")
_OTHER_SCRIPT = re.compile(r"[^\W\d_A-Za-z\u00c0-\u024f\u1e00-\u1eff]")
_HAN = "\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff"
_HAN_SPACE = re.compile(f"(?<=[{_HAN}])\\s+|\\s+(?=[{_HAN}])")
_HAS_HAN = re.compile(f"[{_HAN}]")
_ARABIC = re.compile("[\u0600-\u06ff\u0750-\u077f\ufb50-\ufdff\ufe70-\ufeff]")
_DEVANAGARI = re.compile("[\u0900-\u097f]")
_PARENTHETICAL = re.compile(r"\([^()]*\)")
# Arabic: the vowel marks and Quranic signs; the letters written several ways (alef and its hamza
# forms, waw and yeh with hamza, alef maqsura, taa marbuta, the Persian kaf and yeh)
_ARABIC_MARKS = re.compile("[\u0610-\u061a\u064b-\u065f\u0670\u06d6-\u06ed]")
_ARABIC_FOLD = str.maketrans(
    {
        "أ": "ا",
        "إ": "ا",
        "آ": "ا",
        "ٱ": "ا",
        "ؤ": "و",
        "ئ": "ي",
        "ى": "ي",
        "ة": "ه",
        "ک": "ك",
        "ی": "ي",
        "ھ": "ه",
        "ء": "",
    }
)
# the article of an institution word that opens a name, as English "The": "الجامعة ..." = "جامعة ..."
_ARABIC_LEAD_ARTICLE = re.compile("^ال(?=(?:جامعه|معهد|كليه|اكاديميه|مدرسه)(?:\\s|$))")
_NUKTA = "\u093c"


@lru_cache(maxsize=1)
def chinese_variants(path: str = str(CHINESE_VARIANTS_FILE)) -> dict[int, str]:
    """The reviewed table of traditional Chinese characters and their simplified forms
    (``data/aliases/chinese_variants.csv``: ``traditional,simplified,note``), as a ``str.translate``
    table; empty when the file is absent. A row that is not one character each fails naming its line."""
    table: dict[int, str] = {}
    if not Path(path).exists():
        return table
    with open(path, newline="", encoding="utf-8") as fh:
        for lineno, row in enumerate(csv.DictReader(fh), start=2):
            trad, simp = (row.get("traditional") or "").strip(), (row.get("simplified") or "").strip()
            if len(trad) != 1 or len(simp) != 1:
                raise ValueError(
                    f"{path}: line {lineno}: need one traditional and one simplified character, got {row!r}"
                )
            table[ord(trad)] = simp
    return table


def other_script(text: Optional[str]) -> bool:
    """The text holds letters of a script other than Latin (Arabic, Devanagari, Han, ...)."""
    return bool(text) and bool(_OTHER_SCRIPT.search(str(text)))


def multilingual_key(text: Optional[str]) -> str:
    """The key a name is looked up by in the multilingual alias table: a Latin-script name's
    normalised form (:func:`name_forms`, as the reviewed alias table); a name in another script
    after Unicode NFKC, without the invisible format characters (zero-width joiners, direction
    marks, the Arabic tatweel) and parentheticals, Latin accents and case folded, and per script:
    Arabic without its vowel marks, with one alef, waw, yeh and haa for their written variants
    and without the article of an opening institution word; Devanagari without nukta; Chinese in
    simplified characters (``chinese_variants.csv``) without spaces. Punctuation becomes a space."""
    if text is None:
        return ""
    t = _INVISIBLE.sub("", unicodedata.normalize("NFKC", str(text)))
    if not other_script(t):
        return name_forms(t)[0]
    t = _PARENTHETICAL.sub(" ", t)
    t = _ARABIC_MARKS.sub("", t).translate(_ARABIC_FOLD).replace(_NUKTA, "")
    t = t.translate(chinese_variants())
    t = "".join(c for c in unicodedata.normalize("NFD", t) if not "\u0300" <= c <= "\u036f")
    t = unicodedata.normalize("NFC", t).casefold()
    t = "".join(c if unicodedata.category(c)[0] in "LMN" else " " for c in t)
    t = _HAN_SPACE.sub("", _WS.sub(" ", t).strip())
    return _ARABIC_LEAD_ARTICLE.sub("", t)


# the spelling skeleton: Arabic without its long-vowel letters (after the first letter), Devanagari
# with one nasal sign, short and long vowels alike, single consonants for doubled ones, no virama;
# spaces dropped. "هارفرد" = "هارفارد",
# "कैंब्रिज" = "कैम्ब्रिज", "हारवर्ड यूनिवर्सिटी" = "हार्वर्ड विश्वविद्यालय".
_ARABIC_VOWEL_LETTERS = re.compile("(?<!^)[اوي]")
_DEVANAGARI_NASAL = re.compile("[ङञणनम]\u094d(?=[\u0915-\u0939])")
_DEVANAGARI_DOUBLE = re.compile("([\u0915-\u0939])\u094d\\1")  # a doubled consonant: "मिल्लिया" = "मिलिया"
_DEVANAGARI_FOLD = str.maketrans(
    {
        "\u0901": "\u0902",  # candrabindu -> anusvara
        "\u0940": "\u093f",  # ii -> i
        "\u0942": "\u0941",  # uu -> u
        "\u0949": "\u094b",  # candra o -> o
        "\u0945": "\u0947",  # candra e -> e
        "ई": "इ",
        "ऊ": "उ",
        "ऑ": "ओ",
        "ऍ": "ए",
        "\u094d": None,  # virama
    }
)
_DEVANAGARI_WORDS = {"युनिवरसिटि": "विशवविदयालय"}  # "यूनिवर्सिटी" (university), transliterated
# institution words, in their folded spelling: they do not count towards the skeleton's length
_INSTITUTION_WORDS = frozenset({"جامعه", "الجامعه", "معهد", "المعهد", "كليه", "الكليه", "विशवविदयालय", "संसथान"})
SKELETON_MIN = 4  # letters besides the institution words: a shorter skeleton is no evidence


def spelling_skeleton(key: str) -> str:
    """The fallback key of a :func:`multilingual_key` in Arabic or Devanagari script ("" for any
    other, and when its words besides the institution words have under :data:`SKELETON_MIN`
    letters in the skeleton): the same name spelt another way in its script has the same
    skeleton. Never a key of its own: only what no alias matched."""
    if not key or _HAS_HAN.search(key) or not (_ARABIC.search(key) or _DEVANAGARI.search(key)):
        return ""
    words = []
    for w in key.split():
        if _DEVANAGARI.search(w):
            w = _DEVANAGARI_NASAL.sub("\u0902", _DEVANAGARI_DOUBLE.sub(r"\1", w)).translate(_DEVANAGARI_FOLD)
            w = _DEVANAGARI_WORDS.get(w, w)
        words.append(w)
    own = "".join(w for w in words if w not in _INSTITUTION_WORDS)
    if len(_ARABIC_VOWEL_LETTERS.sub("", own)) < SKELETON_MIN:
        return ""
    return _ARABIC_VOWEL_LETTERS.sub("", "".join(words))
