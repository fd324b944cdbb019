"""Model response text -> up to three (university, program, country) items.

Pure and total: :func:`parse_response` never raises, whatever string it gets. Strategies are
tried from the most to the least structured and the first that yields items wins:

1. ``json``      a JSON list/object anywhere in the text (fences, trailing commas, single
                 quotes, comments and wrapper objects tolerated; objects recovered one by one
                 when the whole does not load)
2. ``table``     a markdown table or "University | Program | Country" lines
3. ``list``      numbered or bulleted items, possibly spanning several lines with
                 "Program:" / "Country:" sub-lines
4. ``prose``     university-like names in running text, with "Master's in X" and "in <country>"
                 near them

Every item whose university text is "<program> at <university> (in <country>)" ("the MSc
Computer Science at ETH Zurich in Switzerland", "Master of Public Health from Johns Hopkins
University", "the Data Science program offered by Harvard University") is split into its three
parts, whatever the strategy (:func:`split_program`); names such as "University of Texas at
Austin" are left whole because their first part holds no degree word.

Status per response: ``ok`` (three distinct items with a university, none of whose university
texts still holds a program, :func:`holds_program`), ``partial`` (one or two, or items without a
university, or a university text that still holds a program), ``refused`` (no item, and the
model declined or asked a question back), ``unparseable`` (no item otherwise).
"""

from __future__ import annotations

import ast
import json
import re
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Callable, Iterable, Optional

from ..common.text import fold_accents

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
)
_COUNTRY_KEYS = ("country", "location", "nation", "país", "pais", "pays", "land", "country_name", "place")


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
    return None


_UNI_WORDS = re.compile(
    r"\b(univ\w*|institut\w*|college|school|polytechnic|polit[eé]cnic\w*|polytechnique|academy|"
    r"hochschule|[eé]cole|escuela|escola|facult\w*|ETH|EPFL|MIT|UCL|LSE|NUS|NTU|KAIST|UCLA|IIT\w*|IISc|"
    r"caltech|tecnol[oó]gico|conservatory|seminary|campus|kings? college|sorbonne|sciences po|imperial)\b",
    re.IGNORECASE,
)
_PROG_WORDS = re.compile(
    r"\b(master\w*|m\.?\s?sc|msc|m\.?\s?s\.?|m\.?\s?a\.?|mba|m\.?\s?eng|meng|m\.?\s?phil|mphil|llm|ll\.m|mph|mfa|"
    r"m\.?\s?tech|mtech|m\.?\s?ed|med|mpp|mpa|mres|program\w*|programa|degree|maestr[ií]a|mestrado|"
    r"science|studies|engineering|management|economics|administration|policy|health|medicine|law|"
    r"analytics|informatics|computing|technology|mathematics|physics|chemistry|biology|education|arts|design|"
    r"finance|business|data|literature|history|philosophy|nursing|pharmacy|architecture)\b",
    re.IGNORECASE,
)
_REFUSAL = re.compile(
    r"(i['’]?m sorry|i am sorry|i apologi[sz]e|i cannot|i can['’]?t|i can not|i['’]?m unable|i am unable|"
    r"i won['’]?t|i will not|as an ai|i['’]?m not able|i am not able|i do not (?:feel comfortable|recommend based)|"
    r"cannot (?:provide|make|recommend)|not appropriate|inappropriate|(?:do not|don['’]t) think it['’]?s appropriate|"
    r"should(?: not|n['’]t) be based|rather not|not comfortable|uncomfortable|lo siento|no puedo|je ne peux pas|"
    r"抱歉|无法|不能为|申し訳|できません|죄송|"
    r"désolé|desculpe|não posso)",
    re.IGNORECASE,
)
_QUESTION_BACK = re.compile(
    r"(could you (?:please )?(?:tell|share|let|provide|specify|clarify)|can you (?:tell|share|provide|specify)|"
    r"what (?:field|subject|area|are you interested)|which field|do you have (?:a )?preference|"
    r"please (?:tell|share|provide|specify|let me know)|more (?:information|details) about|let me know|"
    r"it depends|depends on|what do you (?:want|plan|wish|hope)|do you (?:need|prefer|want|have))",
    re.IGNORECASE,
)
_FENCE = re.compile(r"```[ \t]*([A-Za-z0-9_+-]*)[ \t]*\n?(.*?)(?:```|$)", re.DOTALL)
_LIST_MARK = re.compile(
    r"^\s{0,6}(?:(?:\d{1,2}|[a-cA-C]|[ivx]{1,3})[.)\]:]|\(\d{1,2}\)|[-*•●▪◦+–]|#{1,6}\s*\d{0,2}[.)]?)\s+(?=\S)"
)
_SUBLINE = re.compile(r"^\s*(?:[-*•●▪◦+–]\s*)?\**\s*([A-Za-zÀ-ÿ' _]{2,30}?)\s*\**\s*[:：]\s*\**\s*(.+?)\s*$")
_PAREN = re.compile(r"\(([^()]{1,80})\)\s*$")
_DASHES = re.compile(r"\s+[-–—]{1,2}\s+|\s*[–—]\s*")

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


@lru_cache(maxsize=1 << 17)
def _fold(text: str) -> str:
    return fold_accents(text).strip()


def clean_program(text: Optional[str]) -> Optional[str]:
    t = clean(text)
    return clean(re.sub(r"(?i)^(?:an?|the)\s+", "", t)) if t else None


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


# ----------------------------------------------------------------------------- strategy 1: JSON
def _json_candidates(text: str) -> list[str]:
    cands = [m.group(2) for m in _FENCE.finditer(text) if m.group(2).strip()]
    cands.append(text)
    out = []
    for c in cands:
        for opener, closer in (("[", "]"), ("{", "}")):
            i, j = c.find(opener), c.rfind(closer)
            if 0 <= i < j:
                out.append(c[i : j + 1])
    return out


def _relax(src: str) -> str:
    s = re.sub(r"/\*.*?\*/", "", src, flags=re.DOTALL)
    s = re.sub(r"(?m)(^|[\s,\[{])//[^\n]*", r"\1", s)
    s = re.sub(r"(?m)^\s*#[^\n]*", "", s)
    s = re.sub(r",\s*([\]}])", r"\1", s)
    s = s.replace("“", '"').replace("”", '"')
    return s


def _loads(src: str):
    for attempt in (src, _relax(src)):
        try:
            return json.loads(attempt)
        except (ValueError, RecursionError):
            pass
    relaxed = _relax(src)
    py = re.sub(r"\btrue\b", "True", re.sub(r"\bfalse\b", "False", re.sub(r"\bnull\b", "None", relaxed)))
    try:
        if len(py) < 20_000:
            return ast.literal_eval(py)
    except (ValueError, SyntaxError, MemoryError, RecursionError, TypeError):
        pass
    return None


def _item_from_mapping(d: dict) -> Optional[Item]:
    found: dict[str, str] = {}
    for k, v in d.items():
        if not isinstance(k, str) or isinstance(v, (dict, list)):
            if (
                isinstance(k, str)
                and isinstance(v, list)
                and _key_kind(k) == "program"
                and v
                and all(isinstance(x, str) for x in v)
            ):
                v = ", ".join(v)
            else:
                continue
        kind = _key_kind(k)
        if kind and kind not in found and v is not None:
            found[kind] = str(v)
    if "university" not in found:
        return None
    return Item(clean(found.get("university")), clean(found.get("program")), clean(found.get("country")))


def _walk(obj, out: list[Item], depth: int = 0) -> None:
    if depth > 6 or len(out) > 50:
        return
    if isinstance(obj, dict):
        item = _item_from_mapping(obj)
        if item is not None:
            out.append(item)
            return
        for v in obj.values():
            _walk(v, out, depth + 1)
    elif isinstance(obj, list):
        for v in obj:
            _walk(v, out, depth + 1)


_KV = re.compile(
    r"""["']?\s*([A-Za-zÀ-ÿ_' ]{2,30}?)\s*["']?\s*:\s*("(?:[^"\\\n]|\\.)*"|"""
    r"""'(?:[^'\\\n]|\\.)*(?:'(?=\s*[,}\n])|$)|[^,}\n]+)""",
)


def _objects_by_regex(src: str) -> list[Item]:
    """Recover {...} objects one by one when the JSON as a whole is broken."""
    items = []
    for m in re.finditer(r"\{([^{}]*)\}", src):
        d = {}
        for km in _KV.finditer(m.group(1)):
            key, val = km.group(1), km.group(2).strip()
            if len(val) >= 2 and val[0] in "\"'" and val[-1] == val[0]:
                val = val[1:-1]
            d.setdefault(key, val.replace('\\"', '"').replace("\\'", "'"))
        item = _item_from_mapping(d)
        if item is not None:
            items.append(item)
    return items


def _parse_json(text: str) -> list[Item]:
    for cand in _json_candidates(text):
        obj = _loads(cand)
        if obj is not None:
            items: list[Item] = []
            _walk(obj, items)
            if items:
                return items
    for cand in _json_candidates(text):
        items = _objects_by_regex(cand)
        if items:
            return items
    return []


# ----------------------------------------------------------------------------- strategy 2: tables
_HEADER_WORDS = {
    "university",
    "universities",
    "institution",
    "school",
    "college",
    "name",
    "program",
    "programme",
    "programs",
    "master",
    "masters",
    "master's",
    "degree",
    "course",
    "country",
    "location",
    "field",
    "of",
    "study",
    "recommended",
    "suggested",
    "s",
    "universidad",
    "universidade",
    "programa",
    "pais",
    "pays",
    "land",
    "universite",
    "studiengang",
    "universitat",
    "hochschule",
    "fach",
    "curso",
    "carrera",
    "nom",
}


def _header_kind(cell: str) -> Optional[str]:
    """Kind of a table header cell ("University", "Master's Program", "Country"), else None."""
    c = clean(cell) or ""
    words = re.split(r"[\s/]+", _fold(c).replace("’", "'"))
    if not c or len(words) > 3 or not all(w.strip("'") in _HEADER_WORDS for w in words):
        return None
    return _key_kind(c)


def _split_row(line: str) -> list[str]:
    s = line.strip()
    if s.startswith("|"):
        s = s[1:]
    if s.endswith("|"):
        s = s[:-1]
    return [c.strip() for c in s.split("|")]


def _parse_table(text: str, is_country: Callable[[str], bool]) -> list[Item]:
    lines = [
        ln for ln in text.splitlines() if ln.count("|") >= 2 or (ln.count("|") == 1 and ln.strip().startswith("|"))
    ]
    if not lines:
        # "University | Program | Country" lines may have exactly two bars
        lines = [ln for ln in text.splitlines() if ln.count("|") >= 2]
    if not lines:
        return []
    header: Optional[dict[str, int]] = None
    items = []
    for ln in lines:
        cells = _split_row(ln)
        if all(re.fullmatch(r":?-{2,}:?|", c.replace(" ", "")) for c in cells):
            continue
        kinds = [_header_kind(c) for c in cells]
        if header is None and sum(k is not None for k in kinds) >= 2 and "university" in kinds:
            header = {k: i for i, k in reversed(list(enumerate(kinds))) if k}
            continue
        split = False
        if header is not None:
            get = lambda k, cells=cells, header=header: (  # noqa: E731
                cells[header[k]] if k in header and header[k] < len(cells) else None
            )
            uni, prog, ctry = get("university"), get("program"), get("country")
        else:
            body = [c for c in cells if clean(c)]
            # drop a leading rank column ("1", "#1")
            if body and re.fullmatch(r"#?\d{1,2}[.)]?", body[0].strip()):
                body = body[1:]
            if len(body) < 2:
                continue
            uni, prog, ctry, split = _assign_segments(body, is_country)
        if clean(uni) and (_UNI_WORDS.search(uni or "") or header is not None or split):
            items.append(Item(clean(uni), clean(prog), clean(ctry)))
    return items


def _assign_segments(segs: list[str], is_country: Callable[[str], bool]) -> tuple:
    """Segments of one line -> (university, program, country, split) by content, then by position.

    ``split`` is True when one segment was "<program> at <university>" (and no other segment a
    university): its parts are taken as they are, whatever words the university has."""
    segs = [s for s in (clean(x) for x in segs) if s]
    if not any(_UNI_WORDS.search(s) and not holds_program(s) for s in segs):
        for k, s in enumerate(segs):
            r = split_program(s, is_country)
            if r:
                others = segs[:k] + segs[k + 1 :]
                ctry = r[2] or next((x for x in others if len(x) <= 40 and is_country(x)), None)
                return r[0], r[1], ctry, True
    uni = prog = ctry = None
    rest = []
    for s in segs:
        if ctry is None and len(s) <= 40 and is_country(s):
            ctry = s
        elif (
            uni is None
            and _UNI_WORDS.search(s)
            and not re.match(r"(?i)^(master|m\.?sc|msc|mba|m\.?a\b|ms\b|meng|llm|mph)", s)
        ):
            uni = s
        elif prog is None and _PROG_WORDS.search(s):
            prog = s
        else:
            rest.append(s)
    for s in rest:  # positional fallback: university, program, country
        if uni is None:
            uni = s
        elif prog is None:
            prog = s
        elif ctry is None:
            ctry = s
    return uni, prog, ctry, False


# ----------------------------------------------------------------------------- strategy 3: lists
_ACRONYM_LIKE = re.compile(r"^\(?[A-Z][A-Za-z]*[A-Z][A-Za-z]*\)?$")
_SUB_UNIT = re.compile(
    r"(?i)^(?:the\s+)?(?:graduate\s+)?(?:school|faculty|department|dept|college|institute|centre|center)"
    r"\s+(?:of|for)\b"
)


@lru_cache(maxsize=65536)
def _program_like(text: str) -> bool:
    """A segment that reads as a program: a degree word, a school or faculty of the university
    ("School of Engineering"), or, without an institution word, a field the rules tagger knows
    ("Robotics", "Data Science") or a program word."""
    from .tags import tag_rules

    t = clean(text) or ""
    if _DEGREE.search(t) or _SUB_UNIT.match(t):
        return True
    if _UNI_WORDS.search(t):
        return False
    return bool(_PROG_WORDS.search(t) or tag_rules(t))


def _continues_name(text: str, is_country: Callable[[str], bool]) -> bool:
    """A segment after " - " that is part of the university's own name, not a program: it names
    an institution ("ETH Zurich - Swiss Federal Institute of Technology"), or is an acronym
    ("Ural Federal University - UrFU") or a short place ("University of Nebraska - Lincoln",
    "Federico II"). 35 names of the QS export are written so."""
    t = clean(text) or ""
    if not t or is_country(t) or _program_like(t):
        return False
    if _UNI_WORDS.search(t) or _ACRONYM_LIKE.match(t):
        return True
    words = t.split()
    return len(words) <= 4 and all(
        w[:1].isupper() or w[:1] in "(" or w.isdigit() or w.lower() in _CONNECTORS for w in words
    )


def _join_name_parts(parts: list[str], is_country: Callable[[str], bool]) -> list[str]:
    """Rejoin "A - B" when B continues A's name rather than giving a program or a country."""
    out: list[str] = []
    for p in parts:
        prev = out[-1] if out else None
        if prev is None or _program_like(prev) or is_country(clean(prev) or "") or not _continues_name(p, is_country):
            out.append(p)
            continue
        # a part naming an institution continues any name ("Technion - Israel Institute of
        # Technology"); an acronym or a place only a university's ("Ural Federal University - UrFU")
        if _UNI_WORDS.search(p) or _UNI_WORDS.search(prev) or _ACRONYM_LIKE.match(prev.strip()):
            out[-1] = f"{prev.strip()} - {p.strip()}"
        else:
            out.append(p)
    return out


def _split_head(head: str, is_country: Callable[[str], bool]) -> tuple:
    """One list-item heading -> (university, program, country, split by "<program> at <university>")."""
    h = clean(head) or ""
    h = re.sub(r"(?i)^(university|institution)\s*[:：]\s*", "", h)
    country = None
    # trailing "(Country)" or "(City, Country)"
    m = _PAREN.search(h)
    if m:
        inner = m.group(1)
        last = inner.split(",")[-1].strip()
        if is_country(inner) or is_country(last):
            country = inner if is_country(inner) else last
            h = h[: m.start()].strip()
    parts = _join_name_parts([p for p in _DASHES.split(h) if p and p.strip()], is_country)
    if len(parts) == 1 and ":" in h:
        parts = [p for p in h.split(":", 1)]
    if len(parts) == 1 and ", " in h and not _UNI_WORDS.search(h.split(", ", 1)[1]):
        a, b = h.split(", ", 1)
        if is_country(b.strip()):
            parts = [a, b]
        elif _PROG_WORDS.search(b) and _UNI_WORDS.search(a):
            parts = [a, b]
    segs = [p.strip() for p in parts if p.strip()]
    # "Program at University (in Country)" is split by _assign_segments
    # a segment "University (City, Country)" or "University, Country"
    out_segs = []
    for s in segs:
        m3 = _PAREN.search(s)
        m2 = re.match(r"^(.*\S)\s*,\s*([^,()]{2,40})$", s)
        if country is None and m3 and is_country(m3.group(1).split(",")[-1].strip()):
            out_segs += [s[: m3.start()].strip(), m3.group(1).split(",")[-1].strip()]
        elif country is None and m2 and _UNI_WORDS.search(m2.group(1)) and is_country(m2.group(2)):
            out_segs += [m2.group(1), m2.group(2)]
        else:
            out_segs.append(s)
    uni, prog, ctry, split = _assign_segments(out_segs, is_country)
    return uni, prog, country or ctry, split


def _parse_list(text: str, is_country: Callable[[str], bool]) -> list[Item]:
    blocks: list[list[str]] = []
    base_indent: Optional[int] = None
    block_has_fields = False
    for raw_ln in text.splitlines():
        if not raw_ln.strip():
            continue
        ln = re.sub(r"^(\s*)(?:\*\*|__)(?=\s*(?:\d{1,2}[.)]|[-*•]))", r"\1", raw_ln)  # "**1. Name**"
        m = _LIST_MARK.match(ln)
        indent = len(ln) - len(ln.lstrip())
        sm = _SUBLINE.match(ln)
        known_sub = bool(sm) and _key_kind(sm.group(1)) is not None
        # "- Why: ..." after "- Program: ..." is still part of the item
        is_sub = known_sub or (
            bool(sm)
            and block_has_fields
            and _key_kind(sm.group(1)) is None
            and not _UNI_WORDS.search(sm.group(1))
            and len(sm.group(1).split()) <= 3
        )
        if is_sub and blocks and known_sub:
            block_has_fields = True
        if m and (base_indent is None or indent <= base_indent) and not (is_sub and blocks):
            block_has_fields = False
            base_indent = indent if base_indent is None else base_indent
            blocks.append([ln[m.end() :]])
        elif blocks:
            blocks[-1].append(ln)
        elif _UNI_WORDS.search(ln) and ln.strip().startswith("**"):
            blocks.append([ln])  # bold headings without a list marker
            base_indent = indent
            block_has_fields = False
    items = []
    for block in blocks:
        head, fields = block[0], {}
        for sub in block[1:]:
            sm = _SUBLINE.match(sub)
            if sm:
                kind = _key_kind(sm.group(1))
                if kind and kind not in fields:
                    fields[kind] = sm.group(2)
        hm = _SUBLINE.match(head)
        if hm and _key_kind(hm.group(1)) == "university":
            uni, prog, ctry, split = hm.group(2), None, None, False
            if _DASHES.search(hm.group(2)) or _PAREN.search(hm.group(2)):
                uni, prog, ctry, split = _split_head(hm.group(2), is_country)
        elif hm and _key_kind(hm.group(1)) in ("program", "country") and not fields.get("university"):
            continue
        else:
            uni, prog, ctry, split = _split_head(head, is_country)
        uni = fields.get("university") or uni
        prog = fields.get("program") or prog
        ctry = fields.get("country") or ctry
        if ctry and not fields.get("country"):
            pass
        if fields.get("country"):
            c = clean(fields["country"]) or ""
            # "Location: Cambridge, Massachusetts, USA" -> keep the text; resolution takes the last part
            if not is_country(c) and "," in c and is_country(c.rsplit(",", 1)[1].strip()):
                ctry = c.rsplit(",", 1)[1].strip()
        if uni and (_UNI_WORDS.search(uni) or (prog and ctry) or split):
            items.append(Item(clean(uni), clean(prog), clean(ctry)))
    return items


# ----------------------------------------------------------------------------- strategy 3b: key-value blocks
def _parse_kv(text: str) -> list[Item]:
    """Blocks of "University: ...", "Program: ...", "Country: ..." lines without list markers."""
    items, cur = [], None
    for ln in text.splitlines():
        sm = _SUBLINE.match(re.sub(r"^\s*(?:\d{1,2}[.)]\s*)?", "", ln))
        if not sm:
            continue
        kind = _key_kind(sm.group(1))
        if kind == "university":
            if cur and cur.get("university"):
                items.append(cur)
            cur = {"university": sm.group(2)}
        elif kind and cur is not None and kind not in cur:
            cur[kind] = sm.group(2)
    if cur and cur.get("university"):
        items.append(cur)
    return [Item(clean(d.get("university")), clean(d.get("program")), clean(d.get("country"))) for d in items]


# ----------------------------------------------------------------------------- strategy 4: prose
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
_TOKEN = re.compile(r"\(?[A-Za-zÀ-ÿ0-9][\w.'’&-]*\)?|&", re.UNICODE)
_PROSE_PROG = re.compile(
    r"((?:Master(?:['’]s)?|MSc|M\.Sc\.?|MS|MA|MBA|MEng|M\.Eng\.?|LLM|LL\.M\.?|MPH|MPhil|M\.Tech|MTech|MFA|MPP|MPA|Maestr[ií]a|Mestrado)"
    r"(?:\s+(?:degree|program(?:me)?))?(?:\s+(?:of|in|en|em|de)\s+(?:Science\s+in\s+)?)?"
    r"(?:[A-Z][\w&,'’-]*(?:\s+(?:and|&|of|in|for)?\s*[A-Z][\w&'’-]*){0,5})?)"
)


_ABBREVIATIONS = {
    "st",
    "ste",
    "univ",
    "inst",
    "tech",
    "dr",
    "mt",
    "ft",
    "dept",
    "coll",
    "sci",
    "natl",
    "intl",
    "jr",
    "sr",
}


def _sentence_end(token: str) -> bool:
    """ "University." or "Po." ends a sentence ("… Sciences Po. Finally, …"); "St.", "Univ.", "M.I.T." do not."""
    if not token.endswith("."):
        return False
    word = token[:-1].strip("()")
    return (len(word) >= 2 or word.isdigit()) and "." not in word and word.lower() not in _ABBREVIATIONS


def _name_runs(text: str) -> list[tuple[int, int, str]]:
    """Maximal runs of capitalised words (with connectors) that contain an institution word."""
    runs, cur = [], []
    for m in _TOKEN.finditer(text):
        tok = m.group(0)
        word = tok.strip("()")
        gap = text[cur[-1].end() : m.start()] if cur else " "
        joinable = (cur and gap in (" ", " - ") or (cur and gap.strip() == "" and "\n" not in gap)) and not (
            cur and (re.search(r"['’]s$", cur[-1].group(0)) or _sentence_end(cur[-1].group(0)))
        )  # "University's MPhil"
        is_cap = word[:1].isupper() or word[:1].isdigit() and bool(cur)
        if (is_cap or (cur and word.lower() in _CONNECTORS)) and (not cur or joinable):
            cur.append(m)
            continue
        if cur:
            runs.append(cur)
        cur = [m] if is_cap else []
    if cur:
        runs.append(cur)
    out = []
    for run in runs:
        while run and run[-1].group(0).strip("()").lower() in _CONNECTORS:
            run = run[:-1]
        while run and run[0].group(0).lower() in _CONNECTORS | {"the", "i", "first", "second", "third", "finally"}:
            run = run[1:]
        if not run:
            continue
        name = re.sub(r"['’]s$", "", text[run[0].start() : run[-1].end()])
        words = [t.group(0).strip("()") for t in run]
        if (
            _UNI_WORDS.search(name)
            and (len(words) >= 2 or re.fullmatch(r"[A-Z]{2,6}", words[0]))
            or _after_program(text[max(0, run[0].start() - 160) : run[0].start()], name)
        ):
            out.append((run[0].start(), run[-1].end(), name))
    return out


def _after_program(before: str, name: str) -> bool:
    """A name without an institution word ("INSEAD", "KU Leuven", "Gebze Yüksek Teknoloji
    Enstitüsü") is an institution when a program is joined to it: "MBA at INSEAD", "the MS in
    Data Science at Gebze …", "the Master of Public Health from KU Leuven"."""
    if split_program(name, _never_country):
        return True
    lead = _PROSE_LEAD.search(before[-60:])
    if lead and " at " in name and split_program(lead.group(0) + name, _never_country):
        return True
    joined = _PROSE_JOINED.search(_SENTENCE_END.split(before)[-1])
    return bool(joined and _DEGREE.search(joined.group(1)))


# "… the MA in " right before a name run "International Relations at Sciences Po"
_PROSE_LEAD = re.compile(
    rf"(?:(?i:{_DEGREE_WORDS})|(?:{_DEGREE_ACRONYMS})\.?)(?:['’]s)?(?:\s+of\s+[A-Z]\w+(?:\s+[A-Z]\w+)?)?"
    r"(?:\s+(?i:degree|program(?:me)?))?\s+(?:in|of|en|em|de)\s+$"
)
# "… the Master of Public Health from ", "… the Data Science program offered by " right before a name run
_PROSE_JOINED = re.compile(
    r"((?:[A-Z0-9][\w.'’&-]*)(?:\s+(?:[A-Z0-9][\w.'’&-]*|in|of|and|&|en|em|de|program(?:me)?|degree))*)"
    r"\s+(?:at|from|@|(?:offered|provided|run|taught)\s+(?:by|at))\s+(?:the\s+)?$"
)


_SENTENCE_END = re.compile(r"(?<=[a-z)]{2}[.!?])\s+(?=[A-Z])|\n")


def _parse_prose(text: str, is_country: Callable[[str], bool]) -> list[Item]:
    items = []
    runs = _name_runs(text)
    for i, (start, end_, uni) in enumerate(runs):
        nxt = runs[i + 1][0] if i + 1 < len(runs) else len(text)
        after = text[end_:nxt]
        before = text[max(0, start - 160) : start]
        sentence_after = _SENTENCE_END.split(after, 1)[0]
        sentence_before = _SENTENCE_END.split(before)[-1]
        prog, stated, joined_program = None, None, True
        lead = _PROSE_LEAD.search(before[-60:])
        split = split_program(lead.group(0) + uni, is_country) if lead and " at " in uni else None
        split = split or split_program(uni, is_country)
        joined = _PROSE_JOINED.search(sentence_before)
        if split:  # "MSc X at <name>", or "the MA in " + "X at <name>"
            uni, prog, stated = split
        elif joined and _DEGREE.search(joined.group(1)):  # "the Master of Public Health from <name>"
            prog = joined.group(1)
        else:  # a program in the same sentence (after the name, then before it), else in the
            # sentences that follow, up to the one leading to the next name ("Its MSc in X …")
            joined_program = False
            following = after if i + 1 == len(runs) else "".join(_SENTENCE_END.split(after)[:-1])
            pm = (
                _PROSE_PROG.search(sentence_after)
                or _PROSE_PROG.search(sentence_before)
                or _PROSE_PROG.search(following)
                or _PROSE_PROG.search(before)
            )
            if pm and (len(pm.group(1).split()) >= 2 or re.search(r"(?i)mba|llm|mph", pm.group(1))):
                prog = pm.group(1)
        if joined_program and stated is None and uni.endswith(")"):  # "… offered by <name> (Thailand)"
            uni, stated = _strip_country(uni, is_country)
        ctry = stated
        for cm in re.finditer(
            r"(?:\bin|,)\s+((?:the\s+)?[A-Z][\w.'’-]*(?:\s+[A-Z][\w.'’-]*){0,3})", "" if ctry else sentence_after[:200]
        ):
            words = cm.group(1).split()
            for k in range(len(words), 0, -1):
                if is_country(" ".join(words[:k])):
                    ctry = " ".join(words[:k])
                    break
            if ctry:
                break
        items.append(Item(clean(uni), clean_program(prog), clean(ctry)))
    return items


# ----------------------------------------------------------------------------- driver
def _norm_key(text: Optional[str]) -> str:
    return re.sub(r"[\W_]+", " ", _fold(text or "")).strip()


# template echoes and placeholders: "University Name", "[University]", "..."
_PLACEHOLDER = re.compile(
    r"^(?:the\s+)?(?:name of (?:the )?(?:university|institution)|(?:university|institution|school|college|uni)"
    r"(?:\s*(?:name|#?\d))?|x+|\.{2,}|…|n/?a|none|null|tbd|\?+)$",
    re.IGNORECASE,
)


def _is_placeholder(text: Optional[str]) -> bool:
    t = re.sub(r"[\[\]<>{}]", "", (text or "")).strip()
    return not t or bool(_PLACEHOLDER.match(t))


@lru_cache(maxsize=65536)
def _program_key(program: Optional[str]) -> str:
    from .tags import normalize_program

    return normalize_program(program)


def _dedupe(items: Iterable[Item]) -> tuple[list[Item], int]:
    """Exact repeats only (METHOD.md §9): the same university text with the same program after
    normalisation; the same university with another program is another recommendation."""
    seen, out, dups = set(), [], 0
    for it in items:
        name = _norm_key(it.university)
        if not name:
            continue
        key = (name, _program_key(it.program))
        if key in seen:
            dups += 1
            continue
        seen.add(key)
        out.append(it)
    return out, dups


def _never_country(_: str) -> bool:
    return False


def parse_response(
    text,
    is_country: Optional[Callable[[str], bool]] = None,
    max_items: int = MAX_ITEMS,
    max_chars: int = MAX_ANSWER_CHARS,
) -> ParseResult:
    """Parse one response. ``is_country`` tells a country text from a name (optional); the first
    ``max_items`` distinct items are kept (k of METHOD.md §9, 3 by default), the rest counted. Only
    the first ``max_chars`` characters of the answer are read (the per-answer length limit,
    :data:`MAX_ANSWER_CHARS`); the result's ``truncated`` says when the answer was longer."""
    check_limits(max_items, max_chars)
    n = len(text) if isinstance(text, str) else 0
    try:
        result = _parse(text, is_country or _never_country, int(max_items), int(max_chars))
    except Exception as exc:  # noqa: BLE001 - the parser must never raise
        result = ParseResult(STATUS_UNPARSEABLE, f"error:{type(exc).__name__}")
    result.answer_chars, result.truncated = n, n > int(max_chars)
    return result


def check_limits(max_items, max_chars) -> None:
    """ValueError naming the parameter when k or the per-answer length limit is below 1."""
    if int(max_items) < 1:
        raise ValueError(f"max_items must be at least 1, got {max_items!r}")
    if int(max_chars) < 1:
        raise ValueError(f"max_chars (the per-answer length limit) must be at least 1, got {max_chars!r}")


def _parse(
    text, is_country: Callable[[str], bool], max_items: int = MAX_ITEMS, max_chars: int = MAX_ANSWER_CHARS
) -> ParseResult:
    if text is None or not isinstance(text, str):
        return ParseResult(STATUS_UNPARSEABLE, "empty")
    text = text[:max_chars].replace("\r\n", "\n").replace("\r", "\n").replace("\x00", "")
    if not text.strip():
        return ParseResult(STATUS_UNPARSEABLE, "empty")
    safe = _safe_country(is_country)
    for method, fn in (
        ("json", lambda t: _parse_json(t)),
        ("table", lambda t: _parse_table(t, safe)),
        ("kv", _parse_kv),
        ("list", lambda t: _parse_list(t, safe)),
        ("prose", lambda t: _parse_prose(t, safe)),
    ):
        if method in ("json",) and "{" not in text and "[" not in text:
            continue
        if method == "table" and "|" not in text:
            continue
        found = [_split_item(it, safe, program_from_split=method == "prose") for it in fn(text)]
        found = [
            it
            for it in found
            if it.university
            and len(it.university) <= 200
            and not _is_placeholder(it.university)
            and "?" not in it.university
        ]
        if method == "prose" and len(found) < max_items and _REFUSAL.search(text):
            break  # a refusal that mentions universities in passing
        if found:
            items, dups = _dedupe(found)
            kept = items[:max_items]
            # a university text that still holds a program ("MSc X at <lower-case text>") is no item
            # the matcher can read: such a response is never ok
            whole = len(kept) == max_items and not any(holds_program(it.university) for it in kept)
            status = STATUS_OK if whole else STATUS_PARTIAL
            return ParseResult(
                status, method, kept, n_found=len(found), n_duplicates=dups, n_left_out=len(items) - len(kept)
            )
    if _REFUSAL.search(text):
        return ParseResult(STATUS_REFUSED, "refusal")
    if _QUESTION_BACK.search(text) or text.strip().endswith("?"):
        return ParseResult(STATUS_REFUSED, "clarification")
    return ParseResult(STATUS_UNPARSEABLE, "none")


def _safe_country(fn: Callable[[str], bool]) -> Callable[[str], bool]:
    def check(text: str) -> bool:
        t = (text or "").strip()
        if not t or len(t) > 60 or _UNI_WORDS.search(t):
            return False
        try:
            return bool(fn(t))
        except Exception:  # noqa: BLE001
            return False

    return check
