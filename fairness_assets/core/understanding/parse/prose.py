"""Strategy 4, prose: university-like names in running text (:func:`_name_runs`: runs of
capitalised words holding an institution word, or joined to a program), with "Master's in X"
and "in <country>" near them (:func:`_parse_prose`)."""

from __future__ import annotations

import re
from typing import Callable

from .program import _DEGREE, _DEGREE_ACRONYMS, _DEGREE_WORDS, _strip_country, clean_program, split_program
from .shared import _CONNECTORS, _UNI_WORDS, Item, _never_country, clean

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
