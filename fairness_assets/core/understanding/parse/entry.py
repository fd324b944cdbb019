"""The entry point: :func:`parse_response` tries each strategy in turn (JSON, table, key-value
lines, list, prose), drops placeholders, de-duplicates and keeps the first k items, and tells a
refusal or a question back from an unparseable answer; :func:`check_limits` checks k and the
per-answer length limit."""

from __future__ import annotations

import re
from functools import lru_cache
from typing import Callable, Iterable, Optional

from .lists import _parse_kv, _parse_list
from .program import _split_item, holds_program
from .prose import _parse_prose
from .shared import (
    _UNI_WORDS,
    MAX_ANSWER_CHARS,
    MAX_ITEMS,
    STATUS_OK,
    STATUS_PARTIAL,
    STATUS_REFUSED,
    STATUS_UNPARSEABLE,
    Item,
    ParseResult,
    _fold,
    _never_country,
)
from .structured import _parse_json, _parse_table

_FULL_WIDTH = {0xFF08: " (", 0xFF09: ") "}
_BIDI = re.compile("[\u200e\u200f\u061c\u202a-\u202e\u2066-\u2069]")
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
    from ..tags import normalize_program

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
    text = _BIDI.sub("", text)  # right-to-left text's direction marks (Arabic answers) hold no content
    text = text.translate(_FULL_WIDTH)  # Chinese and Japanese answers' full-width parentheses
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
