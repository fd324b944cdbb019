"""The matcher errors found in the built-in model's own answers (tests/fixtures/eval_builtin.jsonl,
docs/parse_match.md): one test per class of error, on an invented corpus (the real export is not
needed), then the labelled answers themselves on the real export when it is present."""

import pandas as pd
import pytest

from fairness_assets.core.reference import corpus, geo
from fairness_assets.core.understanding import match
from resources.settings import ALIASES_FILE, UNIVERSITY_ALIASES_FILE

NAMES = [  # (name, iso3, country)
    ("Universidad Minera de Palto - UMP", "COL", "Colombia"),
    ("Universitas Marga Utara", "IDN", "Indonesia"),
    ("Universidade Federal do Rio Verde do Leste", "BRA", "Brazil"),
    ("Universidad Nacional de Corvia", "COL", "Colombia"),
    ("Dornhua University", "CHN", "China"),
    ("University of Velmarstad", "NOR", "Norway"),
    ("Fundación Universidad de Quelta-Ramón Ibarra Solís", "COL", "Colombia"),
    ("Albrecht-Rudolfs-Universität Sigmar", "DEU", "Germany"),
    ("Ludwig-Konrad-Universität Tarnow", "DEU", "Germany"),
    ("Technische Universität Tarnow", "DEU", "Germany"),
]
ALIASES = {  # a reviewed English name, as "University of Munich" -> LMU
    "University of Tarnow": ("Ludwig-Konrad-Universität Tarnow", "DEU"),
}


@pytest.fixture(scope="module")
def idx():
    unis = pd.DataFrame(
        {
            "university_id": range(1, len(NAMES) + 1),
            "name": [n for n, _, _ in NAMES],
            "iso3": [i for _, i, _ in NAMES],
            "country": [c for _, _, c in NAMES],
        }
    )
    aliases = {match.name_forms(a)[0]: [(match.name_forms(n)[0], iso)] for a, (n, iso) in ALIASES.items()}
    return match.UniversityIndex.build(unis, aliases, historical={})


def got(idx, text, iso3=None):
    m = match.match_one(text, iso3, idx)
    batched = match._match_many([text], [iso3], idx, match.MatchParams())[0]
    assert (batched.index, batched.method) == (m.index, m.method), "batched and per-name matching disagree"
    return (None if m.index is None else idx.names[m.index]), m.method


def test_an_acronym_is_not_a_full_name_and_obeys_the_stated_country(idx):
    # "Universiti Islam Indonesia (UIS)" (Indonesia) once became Universidad Industrial de
    # Santander - UIS (Colombia) through the bracketed acronym, as an "exact" name
    assert got(idx, "Universiti Marga Utara (UMP)", "IDN") == ("Universitas Marga Utara", "structure")
    assert got(idx, "UMP", "IDN")[0] is None
    # within its own country, or without a country, the acronym still names the university
    assert got(idx, "UMP", "COL")[0] == "Universidad Minera de Palto - UMP"
    assert got(idx, "UMP")[0] == "Universidad Minera de Palto - UMP"
    # the full name itself may still cross countries (flagged country_conflict by the caller)
    assert got(idx, "Universidad Minera de Palto - UMP", "IDN")[0] == "Universidad Minera de Palto - UMP"


def test_a_look_alike_never_adds_drops_or_changes_a_qualifier(idx):
    # "Universidade do Estado do Rio Grande do Norte" is not the Federal University, nor is
    # "Universidade do Rio Grande do Sul"; "Universidad Nacional Autónoma de Colombia" is not the
    # Universidad Nacional de Colombia
    for text in (
        "Universidade do Estado do Rio Verde do Leste",
        "Universidade do Rio Verde do Leste",
        "Universidade Estadual do Rio Verde do Leste",
    ):
        assert got(idx, text, "BRA")[0] is None, text
        assert got(idx, text)[0] is None, text
    assert got(idx, "Universidad Nacional Autónoma de Corvia", "COL")[0] is None
    # a misspelt name with its qualifier, even misspelt, is still a look-alike
    assert (
        got(idx, "Universidade Federal do Rio Vrede do Leste", "BRA")[0] == "Universidade Federal do Rio Verde do Leste"
    )
    assert (
        got(idx, "Universidade Fedreal do Rio Verde do Leste", "BRA")[0] == "Universidade Federal do Rio Verde do Leste"
    )
    assert got(idx, "Universidad Nacional de Corviaa", "COL")[0] == "Universidad Nacional de Corvia"


def test_a_one_word_name_needs_a_closer_likeness(idx):
    # "University of Tonghua" is not Donghua University: in a short place name one changed letter
    # makes another place
    assert got(idx, "University of Tornhua", "CHN")[0] is None
    assert got(idx, "Tornhua University")[0] is None
    # a swapped pair, or one letter missing from a long name, is still a misspelling
    assert got(idx, "Dornuha University", "CHN")[0] == "Dornhua University"
    assert got(idx, "University of Velmarstd", "NOR")[0] == "University of Velmarstad"


def test_a_partial_name_is_never_completed_with_the_institution_s_own_proper_name(idx):
    # "University of Bogotá" is not Fundación Universidad De Bogotá-Jorge Tadeo Lozano: what follows
    # the place is the institution's name; an epithet before it ("Albert-Ludwigs-") is not
    assert got(idx, "University of Quelta")[0] is None
    assert got(idx, "University of Quelta", "COL")[0] is None
    assert got(idx, "University of Sigmar") == ("Albrecht-Rudolfs-Universität Sigmar", "partial")


def test_name_structure_variants_of_an_alias_reach_its_university(idx):
    # "Munich University" and "Universität München" are "University of Munich", a reviewed alias
    # of LMU, and not a guess between LMU and TUM
    assert got(idx, "University of Tarnow") == ("Ludwig-Konrad-Universität Tarnow", "alias")
    for text in ("Tarnow University", "Universität Tarnow", "Universidad de Tarnow"):
        assert got(idx, text)[0] == "Ludwig-Konrad-Universität Tarnow", text
        assert got(idx, text, "DEU")[0] == "Ludwig-Konrad-Universität Tarnow", text
    # a variant is not the reviewed alias: it does not cross the stated country
    assert got(idx, "Tarnow University", "AUT")[0] is None
    assert got(idx, "University of Tarnow", "AUT")[0] == "Ludwig-Konrad-Universität Tarnow"


# -- the labelled answers, on the real export ----------------------------------------------------
@pytest.fixture(scope="module")
def qs_index(qs_export):
    resolver = geo.CountryResolver(geo.load_aliases(ALIASES_FILE))
    unis, _, _ = corpus.load_corpus(qs_export, resolver.resolve)
    return match.UniversityIndex.build(unis, match.load_university_aliases(UNIVERSITY_ALIASES_FILE))


@pytest.mark.parametrize(
    "text,iso3,expected",
    [
        ("Universiti Islam Indonesia (UIS)", "IDN", "Universitas Islam Indonesia"),
        ("Universidade do Estado do Rio Grande do Norte", "BRA", None),
        ("Universidade do Rio Grande do Sul", "BRA", None),
        ("Universidad Nacional Autónoma de Colombia", "COL", None),
        ("University of Tonghua", "CHN", None),
        ("University of Bogotá", None, None),  # "Bogotá" stated as the country does not resolve
        ("Munich University", None, "Ludwig-Maximilians-Universität München"),
        ("Universität München", "DEU", "Ludwig-Maximilians-Universität München"),
        ("Universidade do Brasil", "BRA", "Universidade Federal do Rio de Janeiro"),  # its name 1937-1965
    ],
)
def test_built_in_model_answers(qs_index, text, iso3, expected):
    m = match.match_one(text, iso3, qs_index)
    assert (None if m.index is None else qs_index.names[m.index]) == expected, m
