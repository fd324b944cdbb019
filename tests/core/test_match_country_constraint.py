"""METHOD.md §9 (stated country): a fuzzy, prefix, acronym, structural or partial match only lands
in the stated country; only a reviewed alias or an exact name may place a university elsewhere
(flagged ``country_conflict``); without a stated country, look-alikes in several countries are
``ambiguous``. One test per failure class, on a small invented corpus (the real export is not
needed), plus the classes of the issue on the real export when it is present."""

import pandas as pd
import pytest

from fairness_assets.core.reference import corpus, geo
from fairness_assets.core.understanding import match
from fairness_assets.core.understanding import understand as understanding
from resources.settings import ALIASES_FILE, UNIVERSITY_ALIASES_FILE

NAMES = [  # (name, iso3, country)
    ("University of Vorn", "CHE", "Switzerland"),
    ("University of Science and Technology of Qarth", "CHN", "China"),
    ("Aldor University at Kingsbridge", "CAN", "Canada"),
    ("Aldor University Belmont", "GBR", "United Kingdom"),
    ("Kesh University", "TUR", "Turkey"),
    ("Universidad del Marro", "ARG", "Argentina"),
    ("Zentara Institute of Technology (ZIT)", "USA", "United States"),
    ("Zentara Polytechnic (ZIT)", "IND", "India"),
    ("Norvale University", "GBR", "United Kingdom"),
    ("The University of Norvale, Australia (UON)", "AUS", "Australia"),
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
    aliases = {
        match.name_forms("Aldor University")[0]: [(match.name_forms("Aldor University at Kingsbridge")[0], "CAN")],
        match.name_forms("ZIT Boston")[0]: [(match.name_forms("Zentara Institute of Technology (ZIT)")[0], "USA")],
    }
    return match.UniversityIndex.build(unis, aliases)


def got(idx, text, iso3=None):
    m = match.match_one(text, iso3, idx)
    batched = match._match_many([text], [iso3], idx, match.MatchParams())[0]
    assert (batched.index, batched.method) == (m.index, m.method), "batched and per-name matching disagree"
    return (None if m.index is None else idx.names[m.index]), m.method


def test_fuzzy_look_alike_in_another_country_is_refused(idx):
    # "University of Berlin" (Germany) once became University of Bern (Switzerland)
    assert got(idx, "University of Vorin", "DEU")[0] is None
    assert got(idx, "University of Science and Technology of Qarthy", "FJI")[0] is None


def test_fuzzy_match_within_the_stated_country_still_works(idx):
    assert got(idx, "Univeristy of Vorn", "CHE") == ("University of Vorn", "fuzzy")


def test_fuzzy_needs_alike_distinctive_words(idx):
    # "Kochi University" is not "Koç University", whatever the country: the generic words agree,
    # the names do not
    assert got(idx, "Keshiro University")[0] is None
    assert got(idx, "Keshiro University", "JPN")[0] is None


def test_article_of_a_proper_name_is_kept(idx):
    # "Universidad de El Salvador" is not "Universidad del Salvador"
    assert got(idx, "Universidad de El Marro")[0] is None
    assert got(idx, "Universidad de El Marro", "SLV")[0] is None


def test_prefix_in_another_country_is_refused(idx):
    assert got(idx, "University of Science and Technology", "FJI")[0] is None
    assert got(idx, "Aldor University at", "JAM")[0] is None


def test_short_alias_of_one_country_is_not_used_for_another(idx):
    # "Queen's University" stated in Jamaica: a Canadian short name that is also the start of a
    # British university's name
    assert got(idx, "Aldor University", "JAM")[0] is None
    assert got(idx, "Aldor University", "CAN")[0] == "Aldor University at Kingsbridge"
    assert got(idx, "Aldor University")[0] == "Aldor University at Kingsbridge"


def test_alias_and_exact_name_may_cross_countries(idx):
    assert got(idx, "ZIT Boston", "GBR") == ("Zentara Institute of Technology (ZIT)", "alias")
    assert got(idx, "Kesh University", "JPN") == ("Kesh University", "exact")


def test_acronym_is_constrained_to_the_stated_country(idx):
    assert got(idx, "ZIT", "IND")[0] == "Zentara Polytechnic (ZIT)"
    assert got(idx, "ZIT", "USA")[0] == "Zentara Institute of Technology (ZIT)"
    assert got(idx, "ZIT", "FRA")[0] is None
    assert got(idx, "ZIT") == (None, "ambiguous")


def test_look_alikes_in_several_countries_without_a_country_are_ambiguous(idx):
    # "The University of Norvale, Australia": the country is the export's qualifier
    assert got(idx, "University of Norvale") == (None, "ambiguous")
    assert got(idx, "University of Norvale", "GBR")[0] == "Norvale University"
    assert got(idx, "University of Norvale", "AUS")[0] == "The University of Norvale, Australia (UON)"


@pytest.fixture(scope="module")
def resolver():
    return geo.CountryResolver(geo.load_aliases(ALIASES_FILE))


@pytest.fixture(scope="module")
def qs_index(qs_export, resolver):
    unis, _, _ = corpus.load_corpus(qs_export, resolver.resolve)
    return match.UniversityIndex.build(unis, match.load_university_aliases(UNIVERSITY_ALIASES_FILE))


@pytest.mark.parametrize(
    "text,country,alias_without_country",
    [
        ("University of Berlin", "Germany", False),
        ("University of Science and Technology of Fiji", "Fiji", False),
        ("Queen's University", "Jamaica", True),  # without a country the reviewed alias (Kingston) holds
        ("Kochi University", "Japan", False),
        ("Mie University", "Japan", False),
        ("Universidad de El Salvador", "El Salvador", False),
    ],
)
def test_issue_cases_never_land_in_another_country(qs_index, resolver, text, country, alias_without_country):
    iso3 = resolver.iso3(country)
    m = match.match_one(text, iso3, qs_index)
    assert m.index is None or qs_index.iso3[m.index] == iso3, (text, qs_index.names[m.index])
    m = match.match_one(text, None, qs_index)  # nor a guess without the country
    if alias_without_country:
        assert m.method == "alias"
    else:
        assert m.index is None or qs_index.iso3[m.index] == iso3, (text, qs_index.names[m.index])


def test_conflict_only_through_alias_or_exact_on_the_real_export(qs_index, resolver):
    items = pd.DataFrame(
        {
            "response_id": "r",
            "item_index": [0, 1, 2],
            "parse_status": "ok",
            "parse_method": "json",
            "n_items_found": 3,
            "n_duplicates": 0,
            "university_text": ["UC Berkeley", "University of Tokyo", "Universidad de los Andes"],
            "program_text": ["MEng", "MSc", "MBA"],
            "country_text": ["United Kingdom", "China", "Chile"],
        }
    )
    out = understanding.match_items(items, resolver, qs_index)
    assert list(out["country_conflict"]) == [True, True, False]
    assert list(out["match_method"]) == ["alias", "exact", "exact"]
    assert out["matched_name"].iloc[2] == "Universidad de los Andes - Chile"
