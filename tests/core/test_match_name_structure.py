"""METHOD.md §9 (corpus names): official long names, English and native forms and "University
of X" / "X University" are one university when they share the distinctive name and the country.
One test per rule, on an invented corpus; the real export's classes where it is present."""

import csv

import pandas as pd
import pytest

from fairness_assets.core.reference import corpus, geo
from fairness_assets.core.understanding import match
from resources.settings import ALIASES_FILE, UNIVERSITY_ALIASES_FILE

NAMES = [  # (name, iso3, country)
    ("Vellmar University", "JPN", "Japan"),
    ("Universität Tarnholm", "DEU", "Germany"),
    ("University of Koln", "DEU", "Germany"),  # the corpus spells the exonym: "Köln" in the text
    ("Albrecht-Rudolfs-Universität Sigmar", "DEU", "Germany"),
    ("Hollin University of Technology", "CHN", "China"),
    ("Freie Universität Dornach", "DEU", "Germany"),
    ("Technische Universität Dornach", "DEU", "Germany"),
    ("Humbert-Universität zu Dornach", "DEU", "Germany"),
    ("Universidad Nacional de Colombia", "COL", "Colombia"),
    ("University of Nortown, Chapel Rise", "USA", "United States"),
    ("Universidad de los Pinos", "COL", "Colombia"),
    ("Universidad de los Pinos - Chile", "CHL", "Chile"),
    ("Estrela Sul University", "BRA", "Brazil"),
    ("Universidade Estadual de Varzea (Univar)", "BRA", "Brazil"),
    ("Universidade Federal de Varzea", "BRA", "Brazil"),
]


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
    return match.UniversityIndex.build(unis, {}, historical={})


def got(idx, text, iso3=None):
    m = match.match_one(text, iso3, idx)
    batched = match._match_many([text], [iso3], idx, match.MatchParams())[0]
    assert (batched.index, batched.method) == (m.index, m.method), "batched and per-name matching disagree"
    return (None if m.index is None else idx.names[m.index]), m.method


@pytest.mark.parametrize("text", ["University of Vellmar", "Vellmar Universität", "Universidad de Vellmar"])
def test_university_of_x_is_x_university(idx, text):
    assert got(idx, text)[0] == "Vellmar University"


@pytest.mark.parametrize("text", ["University of Tarnholm", "Tarnholm University", "Universite de Tarnholm"])
def test_native_and_english_forms_are_one_name(idx, text):
    assert got(idx, text)[0] == "Universität Tarnholm"


def test_city_exonyms_from_the_word_table(idx):
    assert got(idx, "Universität Köln")[0] == "University of Koln"  # Köln folds to koln
    words = match.load_name_words(match.NAME_WORDS_FILE)
    assert words.canonical["munchen"] == "munich" and words.canonical["wien"] == "vienna"


def test_official_long_name_completes_a_short_one(idx):
    # "University of Freiburg" -> "Albert-Ludwigs-Universitaet Freiburg": the long name only adds
    # the names of persons
    assert got(idx, "University of Sigmar", "DEU") == ("Albrecht-Rudolfs-Universität Sigmar", "partial")
    assert got(idx, "Universität Sigmar")[0] == "Albrecht-Rudolfs-Universität Sigmar"


def test_partial_name_never_adds_a_word_that_makes_another_institution(idx):
    # "Hefei University" is not "Hefei University of Technology"
    assert got(idx, "Hollin University")[0] is None


def test_partial_name_shared_by_several_universities_is_ambiguous(idx):
    # "University of Berlin": Humboldt, Freie and Technische Universität all hold "Berlin"
    assert got(idx, "University of Dornach") == (None, "ambiguous")
    assert got(idx, "University of Dornach", "DEU") == (None, "ambiguous")


def test_a_country_alone_is_never_completed(idx):
    # "Universidad de Colombia" is not "Universidad Nacional de Colombia"
    assert got(idx, "Universidad de Colombia")[0] is None


def test_state_federal_and_national_universities_are_other_institutions(idx):
    # "Universidade de Pernambuco" is not the Federal University of Pernambuco
    assert got(idx, "Universidade de Varzea")[0] is None
    # but "Estadual" and "do Estado" are the same word
    assert got(idx, "Universidade do Estado de Varzea")[0] == "Universidade Estadual de Varzea (Univar)"


def test_initials_and_the_rest_of_the_name(idx):
    # "UNC Chapel Hill", "PUC-Rio de Janeiro"
    assert got(idx, "UN Chapel Rise") == ("University of Nortown, Chapel Rise", "acronym")
    assert got(idx, "ESU-Brazil")[0] is None  # the rest must be the name's own rest


def test_whole_corpus_name_beats_a_part_of_another(idx):
    assert got(idx, "Universidad de los Pinos") == ("Universidad de los Pinos", "exact")
    assert got(idx, "Universidad de los Pinos", "CHL")[0] == "Universidad de los Pinos - Chile"


def test_generic_words_alone_name_nothing(idx):
    for text in ("Universidad Nacional", "Technical University", "University of Technology"):
        assert got(idx, text)[0] is None


def test_word_table_is_valid():
    words = match.load_name_words(match.NAME_WORDS_FILE)
    assert "university" in words.types and "technical" in words.distinct
    with open(match.NAME_WORDS_FILE, newline="", encoding="utf-8") as fh:
        rows = list(csv.DictReader(fh))
    assert len({r["word"] for r in rows}) == len(rows), "a word twice in the word table"


# -- the real export -------------------------------------------------------------------------------
@pytest.fixture(scope="module")
def qs_index(qs_export):
    resolver = geo.CountryResolver(geo.load_aliases(ALIASES_FILE))
    unis, _, _ = corpus.load_corpus(qs_export, resolver.resolve)
    return match.UniversityIndex.build(unis, match.load_university_aliases(UNIVERSITY_ALIASES_FILE)), unis


def test_historical_names_point_at_corpus_universities(qs_index):
    idx, unis = qs_index
    names = {match.name_forms(n)[0] for n in unis["name"]}
    table = match.load_university_aliases(match.HISTORICAL_NAMES_FILE)
    missing = [t for targets in table.values() for t, _ in targets if t not in names]
    assert missing == []
    assert match.match_one("Université Paris-Sud", None, idx).method == "historical"


@pytest.mark.parametrize(
    "text,iso3",
    [
        ("University of Osaka", "JPN"),
        ("University of Durham", "GBR"),
        ("University of Hamburg", "DEU"),
        ("University of Freiburg", "DEU"),
        ("Universität Köln", "DEU"),
        ("Technische Universität Darmstadt", "DEU"),
        ("University of Erlangen-Nuremberg", "DEU"),
        ("UNC Chapel Hill", "USA"),
        ("PUC-Rio de Janeiro", "BRA"),
        ("Université de Genève", "CHE"),
        ("Universidade Estadual do Rio de Janeiro", "BRA"),
    ],
)
def test_real_structures_match_without_and_with_the_country(qs_index, text, iso3):
    idx, _ = qs_index
    for stated in (None, iso3):
        m = match.match_one(text, stated, idx)
        assert m.index is not None and idx.iso3[m.index] == iso3, (text, stated, m)


def test_corpus_escaping_is_undone_for_matching(qs_index):
    idx, unis = qs_index
    assert not unis["name"].str.contains("\\\\", regex=False).any()
    assert not unis["name"].str.contains("\u00a0").any()
    m = match.match_one("Université Côte d'Azur", None, idx)
    assert m.method == "exact"
