"""The structured answers: strategy 1, a JSON list or object anywhere in the text
(:func:`_parse_json`: fences, trailing commas, single quotes, comments and wrapper objects
tolerated; objects recovered one by one when the whole does not load), and strategy 2, a
markdown table or "University | Program | Country" lines (:func:`_parse_table`), with
:func:`_assign_segments`, which gives the segments of one line their parts."""

from __future__ import annotations

import ast
import json
import re
from typing import Callable, Optional

from .program import holds_program, split_program
from .shared import _PROG_WORDS, _UNI_WORDS, KEY_CHARS, Item, _fold, _key_kind, clean

_FENCE = re.compile(r"```[ \t]*([A-Za-z0-9_+-]*)[ \t]*\n?(.*?)(?:```|$)", re.DOTALL)


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
    rf"""["']?\s*({KEY_CHARS}{{2,30}}?)\s*["']?\s*:\s*("(?:[^"\\\n]|\\.)*"|"""
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
