"""What every strategy of the parser reads: the version and limits (:data:`PARSER_VERSION`,
:data:`MAX_ITEMS`, :data:`MAX_ANSWER_CHARS`), the statuses, :class:`Item` and :class:`ParseResult`,
:func:`clean` (markdown, quotes and list punctuation stripped), the accent folding, the key
vocabulary (:func:`_key_kind`: "University", "Program", "Country" and their variants) and the
regular expressions more than one strategy uses (institution and program words, a trailing
parenthesis, name connectors)."""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Optional

from ...common.text import fold_accents

PARSER_VERSION = "parse-4"  # bump when parsing rules change (recorded in every report's provenance)
MAX_ITEMS = 3
# The per-answer length limit: the parser reads the first MAX_ANSWER_CHARS characters of an answer
# (a 300-token answer is ~1,500; the study's longest are a few thousand). A longer answer (a model
# stuck in a loop, a runaway generation) is stored whole, once, but parsed only up to the limit,
# and its rows say so (ParseResult.truncated; recommendation.answer_truncated): parsing a 10 MB
# answer would otherwise cost its regular expressions and copies many times its size.
MAX_ANSWER_CHARS = 20_000

STATUS_OK, STATUS_PARTIAL, STATUS_REFUSED, STATUS_UNPARSEABLE = "ok", "partial", "refused", "unparseable"
STATUSES = (STATUS_OK, STATUS_PARTIAL, STATUS_REFUSED, STATUS_UNPARSEABLE)


@dataclass(frozen=True)
class Item:
    university: Optional[str]
    program: Optional[str]
    country: Optional[str]


@dataclass
class ParseResult:
    status: str
    method: str
    items: list[Item] = field(default_factory=list)
    n_found: int = 0  # items found before de-duplication and truncation to the first k
    n_duplicates: int = 0
    n_left_out: int = 0  # distinct items after the first k (METHOD.md §9): counted, not scored
    answer_chars: int = 0  # length of the whole answer (characters)
    truncated: bool = False  # the answer is longer than the limit: only its first max_chars were parsed


# ----------------------------------------------------------------------------- vocabulary
_UNI_KEYS = (
    "university",
    "institution",
    "university_name",
    "universityname",
    "school",
    "uni",
    "college",
    "name",
    "universidad",
    "universidade",
    "université",
    "universite",
    "universität",
    "universitat",
    "hochschule",
    # the keys of an answer in the prompt languages of issue 35 (French, Spanish, Portuguese, German,
    # Arabic, Hindi, Chinese), as a model writes them when asked in that language
    "établissement",
    "instituição",
    "institución",
    "大学",
    "大學",
    "学校",
    "院校",
    "大学名称",
    "جامعة",
    "الجامعة",
    "اسم الجامعة",
    "विश्वविद्यालय",
    "विश्वविद्यालय का नाम",
)
_PROG_KEYS = (
    "program",
    "programme",
    "program_name",
    "programname",
    "masters_program",
    "master_program",
    "masters",
    "master",
    "degree",
    "course",
    "major",
    "field",
    "programa",
    "programme_name",
    "studiengang",
    "recommended_program",
    "master's program",
    "masters program",
    "master's programme",
    "formation",
    "filière",
    "maestría",
    "mestrado",
    "carrera",
    "curso",
    "studienprogramm",
    "专业",
    "項目",
    "项目",
    "课程",
    "硕士项目",
    "硕士专业",
    "學位",
    "学位",
    "البرنامج",
    "برنامج",
    "التخصص",
    "कार्यक्रम",
    "पाठ्यक्रम",
)
_COUNTRY_KEYS = (
    "country",
    "location",
    "nation",
    "país",
    "pais",
    "pays",
    "land",
    "staat",
    "nação",
    "country_name",
    "place",
    "国家",
    "國家",
    "国家/地区",
    "الدولة",
    "البلد",
    "دولة",
    "देश",
)
# the key vocabularies folded as a key is (accents and marks off, case-folded): the comparison is fold to fold
_FOLDED_KEYS = {
    kind: frozenset(fold_accents(k).replace(" ", "_") for k in keys)
    for kind, keys in (("university", _UNI_KEYS), ("program", _PROG_KEYS), ("country", _COUNTRY_KEYS))
}


# one character of a key written in any script: a letter (Latin, Arabic, CJK, ...), the marks of Devanagari,
# Bengali and the other Indic scripts and of Arabic (not \\w), an apostrophe, a space or an underscore
KEY_CHARS = r"(?:[^\W\d]|[\u0300-\u036f\u0610-\u061a\u064b-\u065f\u0900-\u0dff' ])"


@lru_cache(maxsize=4096)
def _key_kind(key: str) -> Optional[str]:
    k = _fold(key).replace(" ", "_").strip("_:")
    k2 = k.replace("_", " ")
    if k in _UNI_KEYS or k2 in _UNI_KEYS or k.startswith("univ") or k.startswith("institu"):
        return "university"
    if k in _PROG_KEYS or k2 in _PROG_KEYS or k.startswith("program") or k.startswith("master") or "degree" in k:
        return "program"
    if k in _COUNTRY_KEYS or k2 in _COUNTRY_KEYS or k.startswith("countr") or k.startswith("locat"):
        return "country"
    for kind, keys in _FOLDED_KEYS.items():  # a key in another language or script
        if k in keys:
            return kind
    return None


_UNI_WORDS = re.compile(
    r"\b(univ\w*|institut\w*|college|school|polytechnic|polit[eé]cnic\w*|polytechnique|academy|"
    r"hochschule|[eé]cole|escuela|escola|facult\w*|ETH|EPFL|MIT|UCL|LSE|NUS|NTU|KAIST|UCLA|IIT\w*|IISc|"
    r"caltech|tecnol[oó]gico|conservatory|seminary|campus|kings? college|sorbonne|sciences po|imperial)\b"
    # the same words in scripts without spaces between words (no \b inside "清华大学"): Chinese, Japanese,
    # Arabic, Hindi
    r"|大学|大學|学院|學院|科技大|جامعة|معهد|كلية|विश्वविद्यालय|संस्थान|विद्यापीठ|महाविद्यालय",
    re.IGNORECASE,
)
_PROG_WORDS = re.compile(
    r"\b(master\w*|m\.?\s?sc|msc|m\.?\s?s\.?|m\.?\s?a\.?|mba|m\.?\s?eng|meng|m\.?\s?phil|mphil|llm|ll\.m|mph|mfa|"
    r"m\.?\s?tech|mtech|m\.?\s?ed|med|mpp|mpa|mres|program\w*|programa|degree|maestr[ií]a|mestrado|"
    r"science|studies|engineering|management|economics|administration|policy|health|medicine|law|"
    r"analytics|informatics|computing|technology|mathematics|physics|chemistry|biology|education|arts|design|"
    r"finance|business|data|literature|history|philosophy|nursing|pharmacy|architecture)\b"
    r"|硕士|碩士|专业|專業|学位|學位|ماجستير|برنامج|मास्टर|स्नातकोत्तर|एम\.?टेक|एमएससी",
    re.IGNORECASE,
)


_PAREN = re.compile(r"\(([^()]{1,80})\)\s*$")
_CONNECTORS = {
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
    "des",
    "du",
    "la",
    "le",
    "los",
    "las",
    "el",
    "der",
    "für",
    "fur",
    "and",
    "&",
    "y",
    "e",
    "at",
    "zu",
    "degli",
    "delle",
    "dei",
    "dello",
    "din",
    "bin",
    "bint",
    "ibn",
    "van",
    "von",
}


@lru_cache(maxsize=1 << 17)
def _fold(text: str) -> str:
    return fold_accents(text).strip()


_MD_LINK = re.compile(r"\[([^\]]*)\]\([^)]*\)")
_MD_EMPH = re.compile(r"(?<!\w)[*_](?=\w)|(?<=\w)[*_](?!\w)")
_SPACES = re.compile(r"\s+")
_STRIP = " \t\"'“”‘’,;:.-–—•*#>"


def clean(text: Optional[str]) -> Optional[str]:
    """Strip markdown, quotes, list punctuation and whitespace; None if nothing is left."""
    if text is None:
        return None
    t = str(text)
    return _clean(t) if len(t) <= 200 else _clean.__wrapped__(t)  # short texts recur: cleaned once


@lru_cache(maxsize=1 << 17)
def _clean(t: str) -> Optional[str]:
    if "](" in t:
        t = _MD_LINK.sub(r"\1", t)  # markdown links
    t = t.replace("**", "").replace("__", "").replace("`", "")
    if "*" in t or "_" in t:
        t = _MD_EMPH.sub("", t)
    t = _SPACES.sub(" ", t).strip(_STRIP).strip()
    return t or None


def _never_country(_: str) -> bool:
    return False
