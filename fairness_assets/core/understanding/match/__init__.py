"""University text -> corpus university (or none), with a score and the method used.

Order of evidence, strongest first:

1. ``alias``      the reviewed alias table (``data/aliases/universities.csv``): MIT, UCL, UC
                  Berkeley, Technische Universität München, ...; ``historical`` the reviewed table
                  of former names (``data/aliases/historical_names.csv``: Université Paris-Sud ->
                  Université Paris-Saclay)
1b. ``multilingual`` the reviewed multilingual alias table
                  (``data/aliases/multilingual_universities.csv``, issue 35): names in French,
                  Spanish, Portuguese, German, Arabic, Hindi and Chinese ("Escuela Politécnica
                  Federal de Zúrich", "清华大学", "جامعة القاهرة", "हार्वर्ड विश्वविद्यालय"), looked up
                  by a script-aware key (:func:`multilingual_key`: NFKC, Arabic letter variants,
                  traditional = simplified characters, no nukta or joiners), also before ", <a
                  place>"; ``multilingual_variant``: an Arabic or Devanagari name spelt another way
                  (its spelling skeleton), only where no alias matched
2. ``exact``      the normalised name (accents, case, punctuation, "the", "&" folded; a trailing
                  parenthetical such as "(MIT)" ignored) equals a corpus name; a whole corpus name
                  wins over one part of a name such as "Universidad de los Andes - Chile"
3. ``acronym``    the text is the acronym a corpus name carries in parentheses ("IITB", "UCB"),
                  or the acronym that is a corpus name's first word ("KTH" of "KTH Royal Institute
                  of Technology"; within the stated country, or unique and of 3+ letters), or
                  starts with the initials of a corpus name's first words ("UNC Chapel Hill",
                  "PUC-Rio de Janeiro", "LMU Munich")
4. ``structure``  the same name in another structure or language: "University of Osaka" / "Osaka
                  University", "University of Hamburg" / "Universität Hamburg", "Universität Köln"
                  / "University of Cologne" (institution words, connectors and city names folded
                  through ``data/aliases/name_words.csv``; ``translated`` for the older rules
                  "Universidad de Stanford" and "TU Darmstadt"); also the same structure as a
                  reviewed alias ("Munich University" = the alias "University of Munich")
5. ``prefix``     the text is the start of exactly one corpus name ("Imperial College")
6. ``partial``    the text's distinctive words are a part of exactly one corpus name's, which adds
                  only names of persons or regions before them (an epithet), never a word that
                  makes another institution nor a name after them ("University of Freiburg" ->
                  Albert-Ludwigs-Universitaet Freiburg; "Hefei University" is not Hefei University
                  of Technology; "University of Bogotá" not Universidad de Bogotá-Jorge Tadeo Lozano)
7. ``fuzzy``      rapidfuzz token-sort similarity; at or above ``fuzzy_accept`` without a stated
                  country, from ``fuzzy_min`` within the stated country, and only when the
                  distinctive words are themselves alike (``Kochi`` is not ``Koç``; a name of one
                  word needs ``single_min``: ``Tonghua`` is not ``Donghua``) and the qualifiers
                  that make another institution (federal, state, national, autonomous, technical,
                  ...) are the same, misspelt at most

Completions (issue 21.1). Rules 5-6, and an exact match on one part of a longer corpus name
("California State University" of "California State University - Los Angeles"), complete a name
to one university. A completion is refused -- ``ambiguous``, with the candidates in
``Match.candidates`` -- when the text's given name (its distinctive words) is a country
("Universidad de Cuba", "Universidad Nacional de Perú"; the corpus's countries and
``data/aliases/countries.csv``), a place or name that several corpus universities of the country
share ("University of Rome", "Universidad Nacional de Buenos Aires"), or a university system
("California State University", "State University of New York") -- the last two from the reviewed
table ``data/aliases/systems_and_cities.csv`` (:mod:`match_tables`) -- or when what the corpus name
adds is a campus, district or person qualifier after the text's name (a quoted name, "at X",
"- X": 'University of Rome "Tor Vergata"', "University of Hawaii at Manoa") or a place the text's
name is part of ("Santiago de Cuba", "Provincia de Buenos Aires"), or another institution before
the text's name ("Indiana University–Purdue University Indianapolis"). Exact names and reviewed aliases
are never refused: the table says what may not be guessed, not what may not be named.

Every match explains itself: :func:`rule_of` maps ``method`` to its family (exact, alias, acronym,
structure, completion, fuzzy); completions and fuzzy matches name the runner-up candidate.

A text that states no country may name one in its closing parentheses ("Universität Freiburg
(Schweiz)"): that country is the stated one.

The stated country (METHOD.md §9): when the model states a country that resolves, rules 3-7 only
land in that country, and so does an acronym wherever it is found (in parentheses after the
text's name, or the "- UIS" part of a corpus name): it is not a full name. Only a reviewed alias
or an exact name may place the university in another country (the item is then flagged
``country_conflict`` by the caller). Without a stated country, candidates in several countries
are ``ambiguous``, never a guess. A text that names
several universities (a whole list on one line, "A - B" naming two different ones) is
``several``, unmatched. Every distinct (text, country) pair is matched once.

Modules (the name forms and word table are in :mod:`..match_names`, the reviewed systems and
places in :mod:`..match_tables`):

- :mod:`.index`: :class:`MatchParams`, :class:`UniversityIndex` and the reviewed alias and campus
  tables it reads (:func:`load_university_aliases`, :func:`load_multilingual_aliases`,
  :func:`load_campuses`);
- :mod:`.rules`: :class:`Match`, :data:`RULE_FAMILIES` and :func:`rule_of`, the choice among
  candidates, ``ambiguous``, a text naming several universities, the refusal of a completion;
- :mod:`.fast`: rules 1-6, every rule but fuzzy, tried in order by ``_match_fast``;
- :mod:`.fuzzy`: rule 7, the fuzzy choice among rapidfuzz hits;
- :mod:`.entry`: :func:`match_one`, :func:`match_universities` and :data:`MATCHER_VERSION`.
"""

from __future__ import annotations

from ..match_names import (
    CAMPUSES_FILE,
    DATA_DIR,
    GROUPS_FILE,
    HISTORICAL_NAMES_FILE,
    MULTILINGUAL_FILE,
    NAME_WORDS_FILE,
    load_name_words,
    multilingual_key,
    name_forms,
    normalize_name,
)
from .entry import (
    MATCHER_VERSION,
    _match_many,  # noqa: F401 - match._match_many: the tests compare it with match_one
    match_one,
    match_universities,
)
from .fast import _match_fast  # noqa: F401 - match._match_fast: tests/core/test_match.py wraps it
from .fuzzy import _fuzzy_choice  # noqa: F401 - match._fuzzy_choice: tests/core/test_match_explain.py
from .index import (
    MatchParams,
    UniversityIndex,
    load_campuses,
    load_multilingual_aliases,
    load_university_aliases,
)
from .rules import RULE_FAMILIES, Match, rule_of

__all__ = [
    "CAMPUSES_FILE",
    "DATA_DIR",
    "GROUPS_FILE",
    "HISTORICAL_NAMES_FILE",
    "MATCHER_VERSION",
    "MULTILINGUAL_FILE",
    "NAME_WORDS_FILE",
    "RULE_FAMILIES",
    "Match",
    "MatchParams",
    "UniversityIndex",
    "load_campuses",
    "load_multilingual_aliases",
    "load_name_words",
    "load_university_aliases",
    "match_one",
    "match_universities",
    "multilingual_key",
    "name_forms",
    "normalize_name",
    "rule_of",
]
