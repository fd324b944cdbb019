"""University text -> corpus university (or none), with a score and the method used.

Order of evidence, strongest first:

1. ``alias``    the reviewed alias table (``data/aliases/universities.csv``): MIT, UCL, UC Berkeley,
                Technische Universität München, ...
2. ``exact``    the normalised name (accents, case, punctuation, "the", "&" folded; a trailing
                parenthetical such as "(MIT)" ignored) equals a corpus name
3. ``acronym``  the text is the acronym a corpus name carries in parentheses ("IITB", "UCB"),
                when only one university carries it
4. ``prefix``   the text is the start of exactly one corpus name ("Imperial College")
5. ``fuzzy``    rapidfuzz token-sort similarity; at or above ``fuzzy_accept`` always, between
                ``fuzzy_min`` and ``fuzzy_accept`` only when the stated country agrees

Among equally good candidates the stated country decides; a match in another country than the
one the model wrote is kept (the model often misplaces universities) and flagged
``country_conflict``. Every distinct (text, country) pair is matched once.
"""

from __future__ import annotations

import csv
import re
import unicodedata
from dataclasses import dataclass, field
from pathlib import Path
from typing import Mapping, Optional

import numpy as np
import pandas as pd

MATCHER_VERSION = "match-1"  # bump when matching rules change (recorded in every report's provenance)

_GENERIC_WORDS = {
    "university", "universidad", "universidade", "universite", "universitat", "universita", "univ",
    "of", "the", "de", "da", "do", "di", "del", "des", "la", "le", "and", "for", "in", "at",
    "institute", "institut", "instituto", "college", "school", "technology", "technical", "science",
    "sciences", "national", "state", "federal", "polytechnic", "academy", "studies", "research",
}
_INSTITUTION = re.compile(
    r"(?i)\b(univ\w*|institut\w*|college|school|polytechn\w*|politecnico|academy|hochschule|ecole|école|escuela|tecnol\w*)\b"
)
_TRANSLATED = re.compile(
    r"^(universidad|universidade|universite|universita|universitat|universiteit|universitet|universitas|universiti)"
    r"(?:\s+(?:de|di|del|da|do|van|zu|of))?\s+(.+)$"
)
_ABBREV = [
    (re.compile(p), r) for p, r in (
        (r"\buniv\b", "university"), (r"\bu of\b", "university of"), (r"\bst\b", "saint"),
        (r"\binst\b", "institute"), (r"\btech\b", "technology"), (r"\bnatl\b", "national"),
    )
]
_APOS = re.compile(r"[’'`´ʻʼ‘]")
_NONWORD = re.compile(r"[^\w()]+")
_LEAD_THE = re.compile(r"^\s*the\s+")
_WS = re.compile(r"\s+")


def normalize_name(text: Optional[str]) -> str:
    """Fold a university name for comparison (keeps a parenthetical; see :func:`name_forms`)."""
    if text is None:
        return ""
    t = unicodedata.normalize("NFKD", str(text))
    t = "".join(ch for ch in t if not unicodedata.combining(ch)).casefold()
    t = t.replace("&", " and ").replace("ß", "ss")
    t = _APOS.sub("", t)
    t = _NONWORD.sub(" ", t)
    for pat, rep in _ABBREV:
        t = pat.sub(rep, t)
    t = _LEAD_THE.sub("", t)
    return _WS.sub(" ", t).strip()


def name_forms(text: Optional[str]) -> tuple[str, list[str]]:
    """(name without parentheticals, acronyms found in parentheses)."""
    n = normalize_name(text)
    acronyms = [re.sub(r"^the\s+", "", a.strip()) for a in re.findall(r"\(([^()]*)\)", n) if a.strip()]
    base = re.sub(r"\s*\([^()]*\)\s*", " ", n)
    base = re.sub(r"[()]", " ", base)
    base = re.sub(r"^\s*the\s+", "", base)
    return re.sub(r"\s+", " ", base).strip(), acronyms


@dataclass(frozen=True)
class MatchParams:
    fuzzy_accept: float = 92.0  # accept regardless of country
    fuzzy_min: float = 86.0  # accept when the stated country agrees
    tie_margin: float = 2.0  # candidates this close to the best count as ties


@dataclass
class UniversityIndex:
    """Lookup structures over a corpus (columns university_id, name, iso3)."""

    ids: np.ndarray
    names: np.ndarray
    iso3: np.ndarray
    base: list[str]
    exact: dict[str, list[int]]
    acronym: dict[str, list[int]]
    alias: dict[str, list[tuple[str, Optional[str]]]] = field(default_factory=dict)
    _sorted: list[tuple[str, int]] = field(default_factory=list, repr=False)

    def with_prefix(self, prefix: str) -> list[int]:
        """Positions of the corpus names whose normalised form starts with ``prefix``."""
        import bisect

        if not self._sorted:
            self._sorted = sorted((b, i) for i, b in enumerate(self.base))
        lo = bisect.bisect_left(self._sorted, (prefix, -1))
        out = []
        for b, i in self._sorted[lo:]:
            if not b.startswith(prefix):
                break
            out.append(i)
        return out

    @classmethod
    def build(cls, corpus: pd.DataFrame, aliases: Optional[Mapping[str, list[tuple[str, Optional[str]]]]] = None):
        ids = corpus["university_id"].to_numpy()
        names = corpus["name"].astype(str).to_numpy()
        iso3 = corpus["iso3"].astype(str).to_numpy()
        base, exact, acr = [], {}, {}
        for i, n in enumerate(names):
            b, acros = name_forms(n)
            base.append(b)
            exact.setdefault(b, []).append(i)
            # "KAIST - Korea Advanced Institute ...", "University of Canterbury | Te Whare ...":
            # each part is a name of its own when it is an acronym or names an institution
            for part in re.split(r"\s+[-|·–—]\s+", n):
                if part.strip() == n.strip():
                    continue
                pb, _ = name_forms(part)
                if pb and (re.fullmatch(r"[A-Z][A-Z0-9&]{1,9}", part.strip()) or _INSTITUTION.search(part)):
                    exact.setdefault(pb, []).append(i)
            full = normalize_name(n)
            if full != b:
                exact.setdefault(re.sub(r"[()]", " ", full).replace("  ", " ").strip(), []).append(i)
            for a in acros:
                if len(a) >= 2:
                    acr.setdefault(a, []).append(i)
        return cls(ids, names, iso3, base, exact, acr, dict(aliases or {}))


def load_university_aliases(path: str | Path) -> dict[str, list[tuple[str, Optional[str]]]]:
    """Reviewed aliases: CSV ``alias,name[,iso3,note]``; ``name`` is the corpus spelling."""
    out: dict[str, list[tuple[str, Optional[str]]]] = {}
    with open(path, newline="", encoding="utf-8") as fh:
        for lineno, row in enumerate(csv.DictReader(fh), start=2):
            alias, name = (row.get("alias") or "").strip(), (row.get("name") or "").strip()
            if not alias or not name:
                raise ValueError(f"{path}: line {lineno}: need alias and name, got {row!r}")
            iso3 = (row.get("iso3") or "").strip().upper() or None
            out.setdefault(name_forms(alias)[0], []).append((name_forms(name)[0], iso3))
    return out


@dataclass(frozen=True)
class Match:
    index: Optional[int]  # position in the index, None when unmatched
    score: float
    method: str


def _choose(cands: list[int], idx: UniversityIndex, iso3: Optional[str]) -> Optional[int]:
    cands = list(dict.fromkeys(cands))
    if len(cands) == 1:
        return cands[0]
    if iso3:
        same = [c for c in cands if idx.iso3[c] == iso3]
        if len(same) == 1:
            return same[0]
    return None  # ambiguous


def match_one(text: Optional[str], iso3: Optional[str], idx: UniversityIndex, params: MatchParams = MatchParams()) -> Match:
    """Match one university text (see the module docstring for the order of evidence)."""
    from rapidfuzz import fuzz, process

    fast, base = _match_fast(text, iso3, idx)
    if fast is not None:
        return fast
    hits = process.extract(base, idx.base, scorer=fuzz.token_sort_ratio, limit=8, score_cutoff=params.fuzzy_min)
    return _fuzzy_choice([(h[2], h[1]) for h in hits], iso3, idx, params)


def _match_fast(text: Optional[str], iso3: Optional[str], idx: UniversityIndex) -> tuple[Optional[Match], str]:
    """Every rule but fuzzy; (None, base) when only fuzzy matching is left to try."""
    base, acros = name_forms(text)
    if not base and not acros:
        return Match(None, 0.0, "none"), base
    keys = [k for k in [base, *acros] if k]
    for k in keys:
        # 1. aliases (reviewed); an alias pointing elsewhere than the stated country yields to
        #    a university of that country carrying the same acronym ("NTU" in Taiwan)
        if k in idx.alias:
            targets = idx.alias[k]
            cands = [i for name, t_iso in targets for i in idx.exact.get(name, []) if not t_iso or idx.iso3[i] == t_iso]
            if iso3 and cands and all(idx.iso3[c] != iso3 for c in cands):
                local = [c for c in idx.acronym.get(k, []) if idx.iso3[c] == iso3]
                if len(local) == 1:
                    return Match(local[0], 99.0, "acronym"), base
            choice = _choose(cands, idx, iso3)
            if choice is not None:
                return Match(choice, 100.0, "alias"), base
        # 2. exact
        if k in idx.exact:
            choice = _choose(idx.exact[k], idx, iso3)
            if choice is not None:
                return Match(choice, 100.0, "exact"), base
        # 3. acronym
        if k in idx.acronym:
            choice = _choose(idx.acronym[k], idx, iso3)
            if choice is not None:
                return Match(choice, 99.0, "acronym"), base
        # "TU Darmstadt" -> "Technical University of Darmstadt" / "Technische Universität Darmstadt"
        tu = re.match(r"^tu\s+(.+)$", k)
        if tu:
            for form in (f"technical university of {tu.group(1)}", f"technische universitat {tu.group(1)}"):
                if form in idx.exact:
                    choice = _choose(idx.exact[form], idx, iso3)
                    if choice is not None:
                        return Match(choice, 96.0, "translated"), base
        # translated generic head: "Universidad de Stanford" -> "Stanford University"
        tm = _TRANSLATED.match(k)
        if tm:
            rest = tm.group(2)
            for form in (f"{rest} university", f"university of {rest}"):
                if form in idx.exact:
                    choice = _choose(idx.exact[form], idx, iso3)
                    if choice is not None:
                        return Match(choice, 96.0, "translated"), base
    words = base.split()
    distinctive = [w for w in words if w not in _GENERIC_WORDS]
    if not distinctive:
        return Match(None, 0.0, "none"), base
    # a bare place name: "Stanford" -> "stanford university", "university of stanford"
    if not any(w in _GENERIC_WORDS for w in words):
        for form in (f"{base} university", f"university of {base}"):
            if form in idx.exact:
                choice = _choose(idx.exact[form], idx, iso3)
                if choice is not None:
                    return Match(choice, 97.0, "exact"), base
    # 4. prefix of exactly one corpus name (word boundary)
    if len(words) >= 2:
        pref = idx.with_prefix(base + " ")
        choice = _choose(pref, idx, iso3)
        if choice is not None:
            return Match(choice, 95.0, "prefix"), base
        if len(pref) > 1:  # "University of California": the start of several names, not a guess
            return Match(None, 0.0, "ambiguous"), base
    return None, base


def _fuzzy_choice(hits: list[tuple[int, float]], iso3: Optional[str], idx: UniversityIndex, params: MatchParams) -> Match:
    """Pick among fuzzy hits (position, score), best first; the stated country breaks ties."""
    if not hits:
        return Match(None, 0.0, "none")
    hits = sorted(hits, key=lambda h: -h[1])
    best = hits[0][1]
    top = [h for h in hits if h[1] >= best - params.tie_margin]
    if iso3:
        same = [h for h in top if idx.iso3[h[0]] == iso3]
        if same:
            if len(same) == 1 or same[0][1] > same[1][1]:
                return Match(same[0][0], float(same[0][1]), "fuzzy")
            return Match(None, float(best), "ambiguous")
    if len(top) > 1 and top[0][1] - top[1][1] < 0.5:
        return Match(None, float(best), "ambiguous")
    if best >= params.fuzzy_accept:
        return Match(top[0][0], float(best), "fuzzy")
    return Match(None, float(best), "none")


def _match_many(texts: list, iso3s: list, idx: UniversityIndex, params: MatchParams) -> list[Match]:
    """Fast rules per text, then one batched rapidfuzz ``cdist`` for the rest (all cores)."""
    from rapidfuzz import fuzz, process

    out: list[Optional[Match]] = []
    pending: list[tuple[int, str]] = []
    for i, (t, c) in enumerate(zip(texts, iso3s)):
        m, base = _match_fast(t, c, idx)
        out.append(m)
        if m is None:
            pending.append((i, base))
    if pending:
        scores = process.cdist([b for _, b in pending], idx.base, scorer=fuzz.token_sort_ratio,
                               score_cutoff=params.fuzzy_min, dtype=np.float32, workers=-1)
        for row, (i, _) in enumerate(pending):
            cols = np.flatnonzero(scores[row])
            hits = [(int(j), float(scores[row, j])) for j in cols[np.argsort(-scores[row, cols], kind="stable")[:8]]]
            out[i] = _fuzzy_choice(hits, iso3s[i], idx, params)
    return out  # type: ignore[return-value]


def match_universities(
    items: pd.DataFrame,
    idx: UniversityIndex,
    params: MatchParams = MatchParams(),
    text_col: str = "university_text",
    iso3_col: str = "stated_iso3",
) -> pd.DataFrame:
    """Match every row; each distinct (text, stated country) pair is matched once.

    Returns a frame aligned with ``items``: ``university_id``, ``matched_name``, ``match_score``,
    ``match_method``, ``university_iso3``.
    """
    keys = pd.DataFrame({"t": items[text_col].astype("object"), "c": items[iso3_col].astype("object")})
    keys = keys.where(keys.notna(), None)
    uniq = keys.drop_duplicates().reset_index(drop=True)
    res = _match_many(list(uniq["t"]), list(uniq["c"]), idx, params)
    pos = np.array([-1 if m.index is None else m.index for m in res], dtype=np.int64)
    ok = pos >= 0
    uniq["university_id"] = pd.array(np.where(ok, idx.ids[np.where(ok, pos, 0)], 0), dtype="Int64")
    uniq.loc[~ok, "university_id"] = pd.NA
    uniq["matched_name"] = np.where(ok, idx.names[np.where(ok, pos, 0)], None)
    uniq["university_iso3"] = np.where(ok, idx.iso3[np.where(ok, pos, 0)], None)
    uniq["match_score"] = [m.score for m in res]
    uniq["match_method"] = [m.method for m in res]
    merged = keys.merge(uniq, on=["t", "c"], how="left", sort=False)
    merged.index = items.index
    return merged.drop(columns=["t", "c"])
