"""Rule 7, the fuzzy choice: among the rapidfuzz token-sort hits of a text, the look-alikes whose
distinctive words and qualifiers are alike too (:func:`_alike`, :func:`_words_alike`,
:func:`_near_generic`), then the one match within the stated country, or without one a best hit
clear of ties in several countries (:func:`_fuzzy_choice`)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Optional

from ..match_names import ARTICLES, CONNECTORS, GENERIC_WORDS, NameWords
from .index import MatchParams, UniversityIndex
from .rules import Match, _ambiguous


def _words_alike(a: str, b: str, cutoff: float) -> bool:
    """One word and its misspelling: equal, the same letters (a swapped pair) when short, else
    rapidfuzz ratio at least ``cutoff``."""
    from rapidfuzz import fuzz

    if a == b or (len(a) == len(b) and sorted(a) == sorted(b)):
        return True
    if len(a) <= 4 or len(b) <= 4:
        return False
    return fuzz.ratio(a, b) >= cutoff


_VOCABULARY: dict[int, tuple] = {}
_KNOWN: dict[int, frozenset] = {}  # the canonical words of a word table
_NEAR_GENERIC: dict[tuple[int, str], bool] = {}


def _near_generic(word: str, words: NameWords) -> bool:
    """A word of the table, a connector or its misspelling ("Univeristy", "Tehcnology", "fo")."""
    key = (id(words), word)
    hit = _NEAR_GENERIC.get(key)
    if hit is None:
        from rapidfuzz import fuzz, process

        vocab = _VOCABULARY.get(id(words))
        if vocab is None:
            generic = set(words.types) | set(words.generic) | CONNECTORS | GENERIC_WORDS
            generic |= {k for k, v in words.canonical.items() if v in words.types or v in words.generic}
            vocab = _VOCABULARY[id(words)] = tuple(sorted(generic))
        if word in vocab:
            hit = True
        elif len(word) <= 4:
            hit = any(len(g) == len(word) and sorted(g) == sorted(word) for g in vocab)
        else:
            hit = process.extractOne(word, vocab, scorer=fuzz.ratio, score_cutoff=80) is not None
        if len(_NEAR_GENERIC) > 200_000:
            _NEAR_GENERIC.clear()
        _NEAR_GENERIC[key] = hit
    return hit


def _fuzzy_choice(
    hits: list[tuple[int, float]], iso3: Optional[str], idx: UniversityIndex, params: MatchParams, base: str = ""
) -> Match:
    """Pick among fuzzy hits (position, score), best first: within the stated country only, and
    only where the distinctive words are alike too; without a country, ties in several
    countries are ambiguous."""
    if not hits:
        return Match(None, 0.0, "none")
    core = set(idx.text_key(base)[1]) if idx.words is not None and base else set()
    if core and " ".join(w for w in base.split() if idx.words.canonical.get(w, w) in core) in idx.country_words:
        # a name made of a country and nothing else ("University of America") is no look-alike of a
        # university named after the country's people or a place in it ("American University");
        # with a qualifier it may be a name of its own ("National University of Singapore (NU)S")
        return Match(None, float(max(h[1] for h in hits)), "none")
    if idx.words is not None and base:
        hits = _alike_hits(hits, iso3, idx, params, base)
        if not hits:
            return Match(None, 0.0, "none")
    return _best_hit(hits, iso3, idx, params)


@dataclass(frozen=True)
class _Text:
    """What a fuzzy hit is compared with: the text's distinctive words (misspelt generic words
    left out), its letters without spaces, its qualifiers, its words the word table does not know,
    and whether it is a name of one distinctive word."""

    words: list
    squeezed: str
    qual: set
    unknown: list
    single: bool


def _alike_hits(
    hits: list[tuple[int, float]], iso3: Optional[str], idx: UniversityIndex, params: MatchParams, base: str
) -> list[tuple[int, float]]:
    """The hits whose distinctive words are alike too (:func:`_alike`); none when the text has
    generic words only."""
    nw = idx.words
    text_words = [
        w for w in nw.proper(idx.text_key(base)[1], articles=True) if w in ARTICLES or not _near_generic(w, nw)
    ]
    if not [w for w in text_words if w not in ARTICLES]:  # generic words only: nothing to be alike
        return []
    squeezed = base.replace(" ", "")
    # the qualifiers that make another institution (federal, state, national, autonomous,
    # technical, catholic, ...): a look-alike may misspell them, never add, drop or change one
    text_core = idx.text_key(base)[1]
    text_qual = {w for w in text_core if w in nw.distinct}
    known = _KNOWN.get(id(nw))
    if known is None:
        known = _KNOWN[id(nw)] = frozenset(nw.canonical.values())
    unknown = [w for w in text_core if len(w) > 4 and w not in known]
    single = len([w for w in text_words if w not in ARTICLES]) == 1
    text = _Text(text_words, squeezed, text_qual, unknown, single)
    return [h for h in hits if _alike(h[0], text, iso3, idx, params)]


def _alike(pos: int, text: _Text, iso3: Optional[str], idx: UniversityIndex, params: MatchParams) -> bool:
    """Each distinctive word of the corpus name has its like in the text, and each of the text's
    in the corpus name ("Kochi" is not "Koç", "El Salvador" not "Salvador"); within the stated
    country the text may add a campus ("University of the Philippines Diliman")."""
    from rapidfuzz import fuzz

    corpus_words = idx.core_text[pos].split()
    other = idx.base[pos].replace(" ", "")
    squeezed, text_qual, unknown, text_words = text.squeezed, text.qual, text.unknown, text.words
    if len(other) == len(squeezed) and sorted(other) == sorted(squeezed) and fuzz.ratio(other, squeezed) >= 90:
        return True  # letters swapped across a space: "University ofS eoul"
    qual = idx.qualifiers[pos]
    if qual != text_qual and (
        any(not any(_words_alike(t, q, params.core_min) for q in qual) for t in text_qual)
        or any(not any(_words_alike(q, u, params.core_min) for u in (*text_qual, *unknown)) for q in qual)
    ):
        return False  # ("Technology" / "Technological" are alike; a misspelt "Fedreal" is "Federal")
    # a name of one distinctive word (a place) is short: one changed letter makes another
    # place ("Tonghua" is not "Donghua", "Brasil" not "Brasília")
    cut = params.single_min if text.single and len(corpus_words) == 1 else params.core_min
    covered = all(any(_words_alike(c, t, cut) for t in text_words) for c in corpus_words)
    if not covered or not corpus_words:
        return False
    if iso3 and idx.iso3[pos] == iso3:
        return True
    return all(any(_words_alike(t, c, params.core_min) for c in corpus_words) for t in text_words)


def _best_hit(hits: list[tuple[int, float]], iso3: Optional[str], idx: UniversityIndex, params: MatchParams) -> Match:
    """The best of the alike hits: within the stated country the one clear of the next by half a
    point; without one, a best hit at or above ``fuzzy_accept`` with no tie in several countries."""
    hits = sorted(hits, key=lambda h: -h[1])
    if iso3:
        same = [h for h in hits if idx.iso3[h[0]] == iso3]
        if not same:
            return Match(None, float(hits[0][1]), "none")
        if len(same) == 1 or same[0][1] - same[1][1] >= 0.5:
            second = same[1] if len(same) > 1 else None
            return Match(
                same[0][0],
                float(same[0][1]),
                "fuzzy",
                runner_up=None if second is None else int(second[0]),
                runner_up_score=None if second is None else float(second[1]),
            )
        return _ambiguous([h[0] for h in same if h[1] >= same[0][1] - 0.5], idx, iso3, float(same[0][1]))
    best = hits[0][1]
    top = [h for h in hits if h[1] >= best - params.tie_margin]
    if len(top) > 1 and (top[0][1] - top[1][1] < 0.5 or len({idx.iso3[h[0]] for h in top}) > 1):
        return _ambiguous([h[0] for h in top], idx, None, float(best))
    if best >= params.fuzzy_accept:
        second = hits[1] if len(hits) > 1 else None
        return Match(
            top[0][0],
            float(best),
            "fuzzy",
            runner_up=None if second is None else int(second[0]),
            runner_up_score=None if second is None else float(second[1]),
        )
    return Match(None, float(best), "none")
