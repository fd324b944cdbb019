"""Strategy 3, lists: numbered or bulleted items, possibly spanning several lines with
"Program:" / "Country:" sub-lines (:func:`_parse_list`; a heading split into its parts by
:func:`_split_head`, "A - B" rejoined when B continues A's name), and strategy 3b, blocks of
"University: ...", "Program: ...", "Country: ..." lines without list markers (:func:`_parse_kv`)."""

from __future__ import annotations

import re
from functools import lru_cache
from typing import Callable, Optional

from .program import _DEGREE
from .shared import _CONNECTORS, _PAREN, _PROG_WORDS, _UNI_WORDS, KEY_CHARS, Item, _key_kind, clean
from .structured import _assign_segments

# a number of any script (\d: Arabic-Indic "١", Devanagari "१") and its mark, the ideographic "1、" and
# full-width "1．" / "1）" included
_LIST_MARK = re.compile(
    r"^\s{0,6}(?:(?:\d{1,2}|[a-cA-C]|[ivx]{1,3})(?:[.)\]:]\s+|[、．）]\s*)|\(\d{1,2}\)\s+|[-*•●▪◦+–]\s+|#{1,6}\s*\d{0,2}[.)]?\s+)"
    r"(?=\S)"
)
_SUBLINE = re.compile(rf"^\s*(?:[-*•●▪◦+–]\s*)?\**\s*({KEY_CHARS}{{2,30}}?)\s*\**\s*[:：]\s*\**\s*(.+?)\s*$")
_DASHES = re.compile(r"\s+[-–—]{1,2}\s+|\s*[–—]\s*")


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
    from ..tags import tag_rules

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
    items = []
    for block in _list_blocks(text):
        item = _block_item(block, is_country)
        if item is not None:
            items.append(item)
    return items


def _list_blocks(text: str) -> list[list[str]]:
    """The list's items, each as its heading (list marker removed) and the lines that follow it."""
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
    return blocks


def _block_item(block: list[str], is_country: Callable[[str], bool]) -> Optional[Item]:
    """One list item -> its Item, its "University:" / "Program:" / "Country:" sub-lines winning
    over what its heading says; None when it names no university."""
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
        return None
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
        return Item(clean(uni), clean(prog), clean(ctry))
    return None


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
