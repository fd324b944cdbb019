"""The matcher against the real corpus and a small synthetic one."""

import pandas as pd
import pytest

from fairness_assets.core.reference import corpus, geo
from fairness_assets.core.understanding import match
from fairness_assets.core.understanding import understand as understanding
from resources.settings import ALIASES_FILE, UNIVERSITY_ALIASES_FILE


@pytest.fixture(scope="module")
def resolver():
    return geo.CountryResolver(geo.load_aliases(ALIASES_FILE))


@pytest.fixture(scope="module")
def qs_index(qs_export, resolver):
    raw, rep = corpus.read_qs_export(qs_export)
    unis, _ = corpus.build_corpus(raw, rep, lambda s: resolver.resolve(s))
    return match.UniversityIndex.build(unis, match.load_university_aliases(UNIVERSITY_ALIASES_FILE))


def name(idx, text, iso3=None):
    m = match.match_one(text, iso3, idx)
    return None if m.index is None else idx.names[m.index], m.method


@pytest.mark.parametrize(
    "text,iso3,expected,method",
    [
        ("MIT", "USA", "Massachusetts Institute of Technology (MIT)", "alias"),
        ("Massachusetts Institute of Technology", None, "Massachusetts Institute of Technology (MIT)", "exact"),
        ("UCL", None, "UCL", "alias"),
        ("University College London", "GBR", "UCL", "alias"),
        ("LSE", None, "The London School of Economics and Political Science (LSE)", "alias"),
        ("ETH Zurich", "CHE", "ETH Zurich - Swiss Federal Institute of Technology", "alias"),
        ("Swiss Federal Institute of Technology", "CHE", "ETH Zurich - Swiss Federal Institute of Technology", "exact"),
        ("UC Berkeley", "USA", "University of California, Berkeley (UCB)", "alias"),
        ("Universidad de Chile", "CHL", "Universidad de Chile", "exact"),
        ("UCLA", None, "University of California, Los Angeles (UCLA)", "alias"),
        ("Universidade Federal de São Paulo", "BRA", "Universidade Federal de São Paulo", "exact"),
        ("Universidade Federal de Sao Paulo", "BRA", "Universidade Federal de São Paulo", "exact"),
        ("Technische Universität München", "DEU", "Technical University of Munich", "alias"),
        ("Technical University of Munich", None, "Technical University of Munich", "exact"),
        ("University of Tokyo", "JPN", "The University of Tokyo", "exact"),
        ("IITB", "IND", "Indian Institute of Technology Bombay (IITB)", "acronym"),
        ("KAIST", None, "KAIST - Korea Advanced Institute of Science & Technology", "alias"),
        ("Stanford", None, "Stanford University", "exact"),
        ("Universidad de Stanford", None, "Stanford University", "translated"),
        ("TU Darmstadt", "DEU", "Technical University of Darmstadt", "translated"),
        ("Univeristy of Nairobi", "KEN", "University of Nairobi", "fuzzy"),
        ("Imperial College", None, "Imperial College London", "alias"),
        ("University of Hawaii at Manoa", None, "University of Hawaiʻi at Mānoa", "alias"),
    ],
)
def test_known_names(qs_index, text, iso3, expected, method):
    assert name(qs_index, text, iso3) == (expected, method)


def test_stated_country_disambiguates_look_alikes(qs_index):
    assert name(qs_index, "Universidad de los Andes", "COL")[0] == "Universidad de los Andes"
    assert name(qs_index, "Universidad de los Andes", "CHL")[0] == "Universidad de los Andes - Chile"
    # an acronym aliased elsewhere yields to the stated country's own university
    assert name(qs_index, "NTU", "TWN")[0] == "National Taiwan University (NTU)"
    assert name(qs_index, "NTU", "SGP")[0] == "Nanyang Technological University, Singapore (NTU)"


@pytest.mark.parametrize("text", ["University of Atlantis", "University", "Online courses", "", None, "the"])
def test_unknown_names_stay_unmatched(qs_index, text):
    assert name(qs_index, text)[0] is None


def test_ambiguous_prefix_is_not_guessed(qs_index):
    # "University of California" is the start of many corpus names
    assert name(qs_index, "University of California", "USA") == (None, "ambiguous")


def test_country_conflict_is_flagged_and_corpus_country_wins(qs_index, resolver):
    items = pd.DataFrame(
        {
            "response_id": ["r1", "r1"],
            "item_index": [0, 1],
            "parse_status": "partial",
            "parse_method": "json",
            "n_items_found": 2,
            "n_duplicates": 0,
            "university_text": ["UC Berkeley", "Unknown Institute of Somewhere"],
            "program_text": ["MEng", "MSc"],
            "country_text": ["United Kingdom", "Brasil"],
        }
    )
    out = understanding.match_items(items, resolver, qs_index)
    assert list(out["country"]) == ["United States", "Brazil"]
    assert list(out["country_conflict"]) == [True, False]
    assert pd.isna(out["university_id"].iloc[1])


def test_two_spellings_of_one_university_are_one_item(qs_index, resolver):
    items = pd.DataFrame(
        {
            "response_id": ["r1"] * 3,
            "item_index": [0, 1, 2],
            "parse_status": "ok",
            "parse_method": "list",
            "n_items_found": 3,
            "n_duplicates": 0,
            "university_text": ["MIT", "Massachusetts Institute of Technology", "Harvard University"],
            "program_text": None,
            "country_text": "USA",
        }
    )
    out = understanding.match_items(items, resolver, qs_index)
    assert list(out["item_index"]) == [0, 1] and set(out["parse_status"]) == {"partial"}
    assert list(out["n_duplicates"]) == [1, 1]


def test_each_distinct_pair_matched_once(monkeypatch):
    unis = pd.DataFrame(
        {"university_id": [1, 2], "name": ["Alpha University", "Beta University"], "iso3": ["USA", "GBR"]}
    )
    idx = match.UniversityIndex.build(unis)
    calls = []
    real = match._match_fast

    def counting(text, iso3, index):
        calls.append((text, iso3))
        return real(text, iso3, index)

    monkeypatch.setattr(match.entry, "_match_fast", counting)
    items = pd.DataFrame(
        {"university_text": ["Alpha University"] * 1000 + ["Beta University"] * 500, "stated_iso3": ["USA"] * 1500}
    )
    out = match.match_universities(items, idx)
    assert len(calls) == 2 and len(out) == 1500
    assert out["university_id"].tolist() == [1] * 1000 + [2] * 500


def test_alias_file_is_valid_against_the_corpus(qs_export, resolver):
    raw, rep = corpus.read_qs_export(qs_export)
    unis, _ = corpus.build_corpus(raw, rep, lambda s: resolver.resolve(s))
    names = {match.name_forms(n)[0] for n in unis["name"]}
    aliases = match.load_university_aliases(UNIVERSITY_ALIASES_FILE)
    missing = [t for targets in aliases.values() for t, _ in targets if t not in names]
    assert missing == []
