"""The reviewed table of university systems and places with several universities
(``data/aliases/systems_and_cities.csv``, issue 21.1): the names a partial, prefix or suffix
completion must not complete to one university.

A text such as "University of Rome", "Universidad Nacional de Buenos Aires" or "California State
University" gives a name that the corpus shares among several universities of one country (Sapienza,
Tor Vergata and Roma Tre; the UBA, the ITBA and the UNICEN; the campuses of a system). Completing it
to the one corpus name that happens to start with it, or to hold all its words, is a guess that puts
the wrong university's rank, country and distance into the student's score; the matcher answers
``ambiguous`` with the table's universities as the candidates instead.

The table is proposed from the corpus by :func:`propose` (``benchmarks/build_systems_and_cities.py``)
and reviewed by hand: a row is used only when its ``reviewed`` column says ``yes``; ``no`` keeps a
rejected proposal from coming back unreviewed. Kinds:

``city``    a place that several corpus universities of one country carry in their name ("Rome",
            "Buenos Aires", "Lyon")
``region``  a state, province or region likewise shared ("Texas", "California")
``system``  the name of a university system whose campuses are separate corpus universities
            ("University of California", "California State University", "State University of New
            York")
``name``    a shared word that is neither (a person, a saint: "Carlos", "Pontifical"); proposed so
            that the review sees it, and refused the same way when reviewed ``yes``

The matcher refuses a completion when the text's given name -- its distinctive words: the words that
are not institution words, connectors or qualifiers -- is exactly a reviewed ``city``/``region``/
``name`` row of the country (or, without a stated country, of any country), or when the text's whole
name is a reviewed ``system`` row. Only completions are refused: an exact corpus name ("University of
Milan"), a reviewed alias or a former name still match.
"""

from __future__ import annotations

import csv
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Iterable

from .match_names import ARTICLES, CONNECTORS, INSTITUTION, name_forms, name_key, normalize_name

KINDS = ("city", "region", "system", "name")
FIELDS = ["kind", "name", "iso3", "covers", "reviewed", "source"]
SEP = " | "


@dataclass(frozen=True)
class GroupRow:
    kind: str
    name: str
    iso3: str
    covers: tuple  # corpus names, as the export writes them
    reviewed: str  # "yes", "no" or "" (proposed, not reviewed)
    source: str


def given_name(base: str, words) -> tuple:
    """The sorted distinctive words of a normalised name (institution words, connectors, articles
    and qualifiers such as national, state, technical left out), folded through the word table:
    the part of "Universidad Nacional de Buenos Aires" that names something, ("aires", "buenos")."""
    return tuple(sorted(words.proper(name_key(base, words)[1])))


def _proper_sequence(base: str, words) -> list[str]:
    """The distinctive words of a normalised name in their order (for the n-grams of places)."""
    out = []
    for tok in base.split():
        w = words.canonical.get(tok, tok)
        if w in words.types or w in CONNECTORS or w in ARTICLES or w in words.generic or len(w) < 2 or w.isdigit():
            out.append("|")  # a break: places are runs of distinctive words
            continue
        out.append(w)
    return out


def _runs(seq: list[str], longest: int = 3) -> set[tuple]:
    grams = set()
    n = len(seq)
    for i in range(n):
        for k in range(1, longest + 1):
            part = seq[i : i + k]
            if len(part) < k or "|" in part:
                break
            grams.add(tuple(sorted(part)))
    return grams


def _heads(name: str) -> list[str]:
    """The institution-naming parts of a corpus name before or after a separator: "University of
    California, Berkeley" -> "University of California"; "Stony Brook University, State University
    of New York" -> both parts; "University of Texas at Austin" -> "University of Texas"."""
    plain = re.sub(r"\s*\([^()]*\)\s*", " ", name).strip()
    parts = re.split(r"\s*,\s*|\s+[-–—|]\s+|\s+at\s+|\s+in\s+|\s*[\"“”]", plain)
    return [p.strip() for p in parts if p.strip() and p.strip() != plain and INSTITUTION.search(p)]


def propose(names: Iterable[str], iso3s: Iterable[str], words, country_words: Iterable[str] = ()) -> list[GroupRow]:
    """Proposals from the corpus (unreviewed rows, kind guessed):

    * places: a run of one to three distinctive words that two or more universities of one country
      carry in their names, kept only when no longer run covers the same universities ("buenos
      aires", not "buenos"); country names are left out (the matcher refuses those by itself);
      kind ``name`` (the reviewer sets city, region or name);
    * systems: an institution-naming part of a name -- before a comma, a dash, "at" or a quoted
      campus, or after a comma -- that starts two or more names of one country and is no corpus
      name itself ("University of California", "California State University"), or whose initials
      other names of the country carry ("State University of New York": "... SUNY").
    """
    names, iso3s = list(names), list(iso3s)
    countries = {normalize_name(c) for c in country_words}
    bases = [name_forms(n)[0] for n in names]
    exact = set(bases)
    by_country: dict[str, list[int]] = {}
    for i, c in enumerate(iso3s):
        by_country.setdefault(c, []).append(i)
    rows: list[GroupRow] = []
    for c, members in sorted(by_country.items()):
        rows += _place_rows(c, members, names, bases, words, countries)
        rows += _system_rows(c, members, names, bases, words, exact)
    return rows


def _place_rows(
    c: str, members: list[int], names: list[str], bases: list[str], words, countries: set
) -> list[GroupRow]:
    """Places of country ``c``: the runs of distinctive words two or more of its names carry."""
    rows: list[GroupRow] = []
    grams: dict[tuple, set[int]] = {}
    for i in members:
        for g in _runs(_proper_sequence(bases[i], words)):
            grams.setdefault(g, set()).add(i)
    shared = {g: s for g, s in grams.items() if len(s) >= 2}
    for g, s in sorted(shared.items()):
        if any(len(h) > len(g) and set(g) <= set(h) and t == s for h, t in shared.items()):
            continue  # a part of a longer shared run ("buenos" of "buenos aires", "hong" of "hong kong")
        if " ".join(g) in countries or " ".join(reversed(g)) in countries:
            continue  # a country: the matcher refuses it by itself
        covered = tuple(names[i] for i in sorted(s))
        rows.append(
            GroupRow(
                "name",
                _display(g, [names[i] for i in sorted(s)]),
                c,
                covered,
                "",
                f"corpus: {len(s)} universities of {c} carry the name",
            )
        )
    return rows


def _system_rows(c: str, members: list[int], names: list[str], bases: list[str], words, exact: set) -> list[GroupRow]:
    """Systems of country ``c``: an institution-naming part that starts two or more of its names
    (or whose initials they carry) and is no corpus name itself."""
    rows: list[GroupRow] = []
    heads: dict[str, set[int]] = {}
    for i in members:
        for h in _heads(names[i]):
            heads.setdefault(name_forms(h)[0], set()).add(i)
    for i in members:  # "University of California Davis": a head without a separator
        for h in list(heads):
            if bases[i].startswith(h + " "):
                heads[h].add(i)
    for h, s in sorted(heads.items()):
        if h in exact or not given_name(h, words):
            continue  # a corpus name itself, or no name at all ("University of", "National Research University")
        initials = "".join(t[0] for t in h.split() if t not in ("of", "the", "de", "at", "and"))
        s = set(s) | {i for i in members if len(initials) >= 3 and initials in bases[i].split()}
        if len(s) >= 2:
            covered = tuple(names[i] for i in sorted(s))
            rows.append(
                GroupRow(
                    "system",
                    _original(h, names[min(s)]),
                    c,
                    covered,
                    "",
                    f"corpus: the start or a part of {len(s)} names of {c}",
                )
            )
    return rows


def _display(gram: tuple, names: list[str]) -> str:
    """The run as one of its corpus names writes it ("Buenos Aires"), else title case."""
    want = set(gram)
    for n in names:
        toks = re.findall(r"[\w'’.-]+", n)
        norm = [normalize_name(t) for t in toks]
        for i in range(len(toks)):
            for k in range(1, 4):
                if set(norm[i : i + k]) == want and len(norm[i : i + k]) == len(gram):
                    return " ".join(toks[i : i + k])
    return " ".join(w.title() for w in gram)


def _original(head: str, name: str) -> str:
    toks = name.split()
    for k in range(1, len(toks) + 1):
        if normalize_name(" ".join(toks[:k]).strip(",")) == head:
            return " ".join(toks[:k]).strip(",")
    for part in _heads(name):
        if normalize_name(part) == head:
            return part
    return head.title()


def load(path: str | Path) -> list[GroupRow]:
    """Read the table; raises on a malformed row (an unknown kind, no covers)."""
    rows = []
    with open(path, newline="", encoding="utf-8") as fh:
        for lineno, r in enumerate(csv.DictReader(fh), start=2):
            kind, name = (r.get("kind") or "").strip(), (r.get("name") or "").strip()
            covers = tuple(x.strip() for x in (r.get("covers") or "").split(SEP.strip()) if x.strip())
            reviewed = (r.get("reviewed") or "").strip().lower()
            if kind not in KINDS or not name or not covers or reviewed not in ("yes", "no", ""):
                raise ValueError(
                    f"{path}: line {lineno}: need kind ({', '.join(KINDS)}), name, covers and "
                    f"reviewed yes/no/empty, got {r!r}"
                )
            rows.append(
                GroupRow(
                    kind, name, (r.get("iso3") or "").strip().upper(), covers, reviewed, (r.get("source") or "").strip()
                )
            )
    return rows


def write(path: str | Path, rows: list[GroupRow]) -> None:
    with open(path, "w", newline="", encoding="utf-8") as fh:
        w = csv.writer(fh, lineterminator="\n")
        w.writerow(FIELDS)
        for r in sorted(rows, key=lambda r: (r.iso3, r.kind, r.name.casefold())):
            w.writerow([r.kind, r.name, r.iso3, SEP.join(r.covers), r.reviewed, r.source])


def merge(proposed: list[GroupRow], existing: list[GroupRow]) -> list[GroupRow]:
    """New proposals beside the reviewed rows: a reviewed row (yes or no) keeps its kind, review and
    source; its covers are brought up to date with the corpus; a reviewed row no longer proposed
    stays (a reviewer may add a row by hand, with a source)."""

    def key(r: GroupRow) -> tuple:
        return (normalize_name(r.name), r.iso3)

    old = {key(r): r for r in existing}
    out, seen = [], set()
    for p in proposed:
        k = key(p)
        seen.add(k)
        o = old.get(k)
        if o is not None and o.reviewed:
            out.append(
                GroupRow(
                    o.kind,
                    o.name,
                    o.iso3,
                    p.covers if o.source.startswith("corpus") else o.covers,
                    o.reviewed,
                    o.source,
                )
            )
        else:
            out.append(p)
    out.extend(r for k, r in old.items() if k not in seen and r.reviewed)
    return out


def reviewed_rows(rows: list[GroupRow]) -> list[GroupRow]:
    return [r for r in rows if r.reviewed == "yes"]
