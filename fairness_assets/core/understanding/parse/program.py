"""A university text that holds a program: "<program> at <university> (in <country>)" ("the MSc
Computer Science at ETH Zurich in Switzerland", "Master of Public Health from Johns Hopkins
University") told (:func:`holds_program`) and split into its three parts (:func:`split_program`,
:func:`_split_item`); the degree words and joiners it is read by; :func:`clean_program`."""

from __future__ import annotations

import re
from typing import Callable, Optional

from .shared import _PAREN, _UNI_WORDS, Item, clean

# "<program> at <university>": degree words no university name carries (checked against the QS
# export: tests/core/test_parse_program_at_university.py), short degree acronyms case-sensitive
_DEGREE_WORDS = (
    r"m[aá]ster\w*|maestr[ií]a\w*|mestrado\w*|magist[eè]re?|postgraduate|post-graduate|diploma|"
    r"degree|program(?:me)?s?|programa|course"
)
_DEGREE_ACRONYMS = (
    r"M\.?\s?Sc|MS|M\.S|MA|M\.A|MBA|M\.?Eng|LL\.?M|MPH|M\.?Phil|MFA|MPP|MPA|MRes|M\.?Tech|M\.?Ed|"
    r"MArch|MDes|MFin|MSCS|MSEE|MSDS|MSBA|MSF"
)
_DEGREE = re.compile(rf"\b(?i:{_DEGREE_WORDS})\b|\b(?:{_DEGREE_ACRONYMS})(?:\.|\b)")
_LEAD_DEGREE = re.compile(rf"^(?:(?i:the|an?)\s+)?(?:(?i:{_DEGREE_WORDS})\b|(?:{_DEGREE_ACRONYMS})(?:\.|\b))")
# what joins the program to the university: "at", "from", "offered by", "program of", à, an der, en la, na
_PROGRAM_AT = re.compile(
    r"\s+(?:at|@|from|à|an\s+der|en\s+(?:la|el)|na|(?:offered|provided|run|taught)\s+(?:jointly\s+)?(?:by|at))\s+"
    r"|(?:(?<=program)|(?<=programme))\s+of\s+",
    re.IGNORECASE,
)
_LEAD_ARTICLE = re.compile(r"^(?:the\s+|l['’]\s*)", re.IGNORECASE)


def holds_program(text: Optional[str]) -> bool:
    """True when a university text still holds a program: it starts with a degree ("MSc …",
    "the Master's …", "Program …") or a degree word is followed by "at"/"from"/"offered by"/"of"."""
    t = clean(text) or ""
    m = _DEGREE.search(t)
    if not m:
        return False
    if _LEAD_DEGREE.match(t):
        return True
    rest = t[m.end() :]
    return bool(_PROGRAM_AT.search(rest) or re.search(r"(?i)\s(?:of|in)\s", rest))


def _strip_country(text: str, is_country: Callable[[str], bool]) -> tuple[str, Optional[str]]:
    """ "ETH Zurich in Switzerland", "ETH Zurich, Switzerland", "ETH Zurich (Zurich, Switzerland)" ->
    ("ETH Zurich", the country); anything else is returned whole."""
    m = _PAREN.search(text)
    if m:
        inner = m.group(1).strip()
        last = inner.split(",")[-1].strip()
        if is_country(inner) or is_country(last):
            return text[: m.start()].strip(), inner if is_country(inner) else last
    m = re.match(r"^(.*\S)\s*,\s*([^,]{2,40})$", text)
    if m and is_country(m.group(2).strip()):
        return m.group(1).strip(), m.group(2).strip()
    m = re.match(r"^(.*\S)\s+in\s+([^,]{2,40})$", text)
    if m and is_country(m.group(2).strip()):
        return m.group(1).strip(), m.group(2).strip()
    return text, None


def _names_an_institution(text: str) -> bool:
    """The right-hand side of "<program> at <X>" reads as an institution: it starts with a
    capital (or a non-Latin letter) and holds no "<non-university> at <university>" itself
    ("the Master's program of Computer Science at MIT": "Computer Science" is not the university)."""
    t = _LEAD_ARTICLE.sub("", text).strip().lstrip("\"'“‘«„")
    if not t or not (t[0].isupper() or t[0].isdigit() or (t[0].isalpha() and not t[0].isascii())):
        return False
    if _LEAD_DEGREE.match(t):
        return False
    return all(_UNI_WORDS.search(t[: m.start()]) for m in _PROGRAM_AT.finditer(t))


def split_program(text: Optional[str], is_country: Callable[[str], bool]) -> Optional[tuple]:
    """ "The MSc Computer Science at ETH Zurich in Switzerland" -> ("ETH Zurich", "MSc Computer
    Science", "Switzerland"); None when the text is not "<program> <joiner> <institution>".

    The part before the joiner must hold a degree word (Master, MSc, MBA, degree, program, …) and,
    if it names an institution too, start with the degree: "University of California at Berkeley"
    and "University of Texas at Austin" are left whole."""
    t = clean(text)
    if not t or len(t) > 300 or not _DEGREE.search(t):
        return None
    for m in _PROGRAM_AT.finditer(t):
        left, right = t[: m.start()].strip(), t[m.end() :].strip()
        if not _DEGREE.search(left) or (_UNI_WORDS.search(left) and not _LEAD_DEGREE.match(left)):
            continue
        if not _names_an_institution(right):
            continue
        uni, country = _strip_country(clean(_LEAD_ARTICLE.sub("", right)) or "", is_country)
        uni, prog = clean(uni), clean_program(left)
        if uni and prog:
            return uni, prog, clean(country)
    return None


def _split_item(item: Item, is_country: Callable[[str], bool], program_from_split: bool = False) -> Item:
    """An item whose university text holds "<program> at <university>" -> the three parts. The
    item's own program and country win over the split's unless ``program_from_split``."""
    r = split_program(item.university, is_country) if item.university and _DEGREE.search(item.university) else None
    if r is None:
        return item
    uni, prog, country = r
    program = prog if program_from_split or not item.program else item.program
    return Item(uni, program, item.country or country)


def clean_program(text: Optional[str]) -> Optional[str]:
    t = clean(text)
    return clean(re.sub(r"(?i)^(?:an?|the)\s+", "", t)) if t else None
