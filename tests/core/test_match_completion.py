"""Issue 21.1-2: completion rules. A partial, prefix or part-of-a-name completion stands only when
the words it adds are an epithet or the institution's own name; it is refused -- ``ambiguous``, with
the candidates listed -- when the given name is a country, a place or name several corpus
universities of the country share, or a university system (the reviewed table
``data/aliases/systems_and_cities.csv``), or when the corpus name adds a campus, district or person
qualifier ('"Tor Vergata"', "at Austin", "- Los Angeles", "Santiago de").

One test per failure class on an invented corpus (names of invented places, so no test leans on the
real export), then the classes of the issue and names of other countries on the real export when it
is present."""

from pathlib import Path

import pandas as pd
import pytest

from fairness_assets.core.reference import corpus, geo
from fairness_assets.core.understanding import match, match_tables
from resources.settings import ALIASES_FILE, UNIVERSITY_ALIASES_FILE

NAMES = [  # (name, iso3, country)
    ("Universidad de Oriente San Lucas de Marrovia", "MRV", "Marrovia"),  # "Santiago de Cuba"
    ("University of Eastern Zembla", "ZMB", "Zembla"),  # "University of Eastern Finland"
    ("University of Orland", "ORL", "Orland"),  # the corpus holds "University of <country>" itself
    ("Sapientia University of Veldt", "VLD", "Veldtland"),  # Rome: three universities carry the city
    ('University of Veldt "Porta Nova"', "VLD", "Veldtland"),
    ("Università degli Studi Veldt Tre", "VLD", "Veldtland"),
    ('University of Kestrel "San Marco"', "VLD", "Veldtland"),  # a quoted person: the only Kestrel one
    ("Ostland State University - Port Ames", "OST", "Ostland"),  # a system: California State University
    ("Ostland State University Lake Rim", "OST", "Ostland"),
    ("University of Wexford at Greyhaven", "OST", "Ostland"),  # "at <campus>": the only Wexford one
    ("Universidad de Alta Vista (UAV)", "AVR", "Avaria"),  # Buenos Aires: the UBA ...
    ("Universidad Nacional del Centro de la Provincia de Alta Vista", "AVR", "Avaria"),  # ... the UNICEN
    ("Johann-Kepler-Universität Linzburg", "AVR", "Avaria"),  # an epithet before the name: a completion
    ("Imperial College of Vandermark", "ORL", "Orland"),  # the institution's own name after: a completion
    ("Ardent University–Belmar University Castlerock", "OST", "Ostland"),  # a joint institution (IUPUI)
    ("QRX Royal Institute of Science", "ZMB", "Zembla"),  # an acronym that is the first word
    ("KZ Institute of Mining", "ZMB", "Zembla"),
]
ROWS = [  # the reviewed table for this corpus (what the builder proposes, reviewed)
    match_tables.GroupRow(
        "city",
        "Veldt",
        "VLD",
        ("Sapientia University of Veldt", 'University of Veldt "Porta Nova"', "Università degli Studi Veldt Tre"),
        "yes",
        "test",
    ),
    match_tables.GroupRow(
        "system",
        "Ostland State University",
        "OST",
        ("Ostland State University - Port Ames", "Ostland State University Lake Rim"),
        "yes",
        "test",
    ),
    match_tables.GroupRow(
        "city",
        "Alta Vista",
        "AVR",
        ("Universidad de Alta Vista (UAV)", "Universidad Nacional del Centro de la Provincia de Alta Vista"),
        "yes",
        "test",
    ),
]


def _corpus() -> pd.DataFrame:
    return pd.DataFrame(
        {
            "university_id": range(1, len(NAMES) + 1),
            "name": [n for n, _, _ in NAMES],
            "iso3": [i for _, i, _ in NAMES],
            "country": [c for _, _, c in NAMES],
        }
    )


@pytest.fixture(scope="module")
def idx():
    return match.UniversityIndex.build(_corpus(), {}, groups=ROWS)


def got(idx, text, iso3=None):
    m = match.match_one(text, iso3, idx)
    batched = match._match_many([text], [iso3], idx, match.MatchParams())[0]
    assert (batched.index, batched.method, batched.candidates) == (m.index, m.method, m.candidates)
    return (None if m.index is None else idx.names[m.index]), m.method, {idx.names[c] for c in m.candidates}


@pytest.mark.parametrize(
    "text,iso3",
    [
        ("Universidad de Marrovia", "MRV"),
        ("Universidad de Marrovia", None),
        ("The University of Zembla", "ZMB"),
        ("Universidad de Zembla", None),
    ],
)
def test_a_country_is_no_university_name(idx, text, iso3):
    name, method, cands = got(idx, text, iso3)
    assert name is None and method == "ambiguous" and cands  # the refused completion, listed


def test_a_country_the_corpus_names_a_university_after_is_that_university(idx):
    assert got(idx, "University of Orland", "ORL")[:2] == ("University of Orland", "exact")


@pytest.mark.parametrize("iso3", ["VLD", None])
def test_a_city_with_several_universities_is_not_completed(idx, iso3):
    name, method, cands = got(idx, "University of Veldt", iso3)
    assert (name, method) == (None, "ambiguous")
    assert cands == {
        "Sapientia University of Veldt",
        'University of Veldt "Porta Nova"',
        "Università degli Studi Veldt Tre",
    }


def test_the_same_city_without_the_reviewed_row_still_refuses_the_quoted_qualifier():
    idx = match.UniversityIndex.build(_corpus(), {}, groups=[])
    name, method, cands = got(idx, "University of Veldt", "VLD")
    assert (name, method) == (None, "ambiguous") and 'University of Veldt "Porta Nova"' in cands


def test_a_row_not_reviewed_or_rejected_is_not_used():
    import dataclasses

    rows = [dataclasses.replace(r, reviewed=rv) for r, rv in zip(ROWS, ["", "no", "no"], strict=False)]
    idx = match.UniversityIndex.build(_corpus(), {}, groups=rows)
    assert not idx.groups and not idx.system_keys


@pytest.mark.parametrize("text", ["University of Kestrel", "University of Wexford"])
def test_a_campus_or_person_qualifier_is_not_completed(idx, text):
    name, method, cands = got(idx, text, None)
    assert (name, method) == (None, "ambiguous") and len(cands) == 1 and text.split()[-1] in next(iter(cands))


@pytest.mark.parametrize("iso3", ["OST", None])
def test_a_university_system_is_not_one_campus(idx, iso3):
    name, method, cands = got(idx, "Ostland State University", iso3)
    assert (name, method) == (None, "ambiguous")
    assert cands == {"Ostland State University - Port Ames", "Ostland State University Lake Rim"}


def test_a_place_inside_another_place_name_is_not_completed(idx):
    # "Universidad Nacional de Buenos Aires" is not "... del Centro de la Provincia de Buenos Aires"
    name, method, cands = got(idx, "Universidad Nacional de Alta Vista", "AVR")
    assert (name, method) == (None, "ambiguous") and len(cands) == 2
    # and without the table row, the "Provincia de" qualifier still refuses it
    bare = match.UniversityIndex.build(_corpus(), {}, groups=[])
    assert got(bare, "Universidad Nacional de Alta Vista", "AVR")[:2] == (None, "ambiguous")


def test_another_institution_before_the_name_is_no_epithet(idx):
    # "University of Indianapolis" is not "Indiana University–Purdue University Indianapolis"
    name, method, cands = got(idx, "University of Castlerock", "OST")
    assert (name, method) == (None, "ambiguous") and cands == {"Ardent University–Belmar University Castlerock"}


def test_completions_that_add_an_epithet_or_the_own_name_stand(idx):
    assert got(idx, "University of Linzburg", "AVR")[:2] == ("Johann-Kepler-Universität Linzburg", "partial")
    assert got(idx, "Imperial College", "ORL")[:2] == ("Imperial College of Vandermark", "prefix")
    # the whole name of a table's university is still that university
    assert got(idx, "Universidad de Alta Vista", "AVR")[:2] == ("Universidad de Alta Vista (UAV)", "exact")
    assert got(idx, "Sapientia University of Veldt", None)[:2] == ("Sapientia University of Veldt", "exact")


def test_an_acronym_that_is_the_first_word_of_a_name(idx):
    assert got(idx, "QRX", "ZMB")[:2] == ("QRX Royal Institute of Science", "acronym")
    assert got(idx, "QRX", None)[:2] == ("QRX Royal Institute of Science", "acronym")
    assert got(idx, "QRX", "ORL")[0] is None  # another stated country: not there
    assert got(idx, "KZ", "ZMB")[:2] == ("KZ Institute of Mining", "acronym")
    assert got(idx, "KZ", None)[0] is None  # two letters without a country: too short to be sure


# --- the table and its builder -----------------------------------------------------------------


def test_the_builder_proposes_shared_places_and_systems_from_the_corpus():
    c = _corpus()
    rows = match_tables.propose(c["name"], c["iso3"], match.load_name_words(match.NAME_WORDS_FILE), c["country"])
    by = {(r.kind, r.name, r.iso3): set(r.covers) for r in rows}
    assert by[("name", "Veldt", "VLD")] == {
        "Sapientia University of Veldt",
        'University of Veldt "Porta Nova"',
        "Università degli Studi Veldt Tre",
    }
    assert by[("name", "Alta Vista", "AVR")] == {
        "Universidad de Alta Vista (UAV)",
        "Universidad Nacional del Centro de la Provincia de Alta Vista",
    }
    assert by[("system", "Ostland State University", "OST")] == {
        "Ostland State University - Port Ames",
        "Ostland State University Lake Rim",
    }
    assert not any(r.name in ("Alta", "Vista") for r in rows)  # only the longest run covering the same names
    assert all(not r.reviewed for r in rows)  # proposals wait for review


def test_merge_keeps_the_review_and_load_refuses_malformed_rows(tmp_path):
    c = _corpus()
    proposed = match_tables.propose(c["name"], c["iso3"], match.load_name_words(match.NAME_WORDS_FILE), c["country"])
    reviewed = [match_tables.GroupRow("city", "Veldt", "VLD", ("x",), "yes", "corpus: ... reviewed")]
    merged = match_tables.merge(proposed, reviewed)
    veldt = [r for r in merged if r.name == "Veldt"]
    assert len(veldt) == 1 and veldt[0].kind == "city" and veldt[0].reviewed == "yes" and len(veldt[0].covers) == 3
    path = tmp_path / "t.csv"
    match_tables.write(path, merged)
    assert match_tables.load(path) == sorted(merged, key=lambda r: (r.iso3, r.kind, r.name.casefold()))
    path.write_text("kind,name,iso3,covers,reviewed,source\ntown,Veldt,VLD,a | b,yes,x\n", encoding="utf-8")
    with pytest.raises(ValueError):
        match_tables.load(path)


def test_the_committed_table_is_reviewed():
    rows = match_tables.load(match.GROUPS_FILE)
    assert rows and all(r.reviewed in ("yes", "no") for r in rows)
    assert all(r.kind in match_tables.KINDS and len(r.covers) >= 2 for r in rows)
    assert all("reviewed" in r.source for r in rows)


def test_every_added_usual_english_name_has_a_source():
    import csv

    for path in (match.DATA_DIR / "universities.csv", match.HISTORICAL_NAMES_FILE):
        rows = list(csv.DictReader(open(path, encoding="utf-8")))
        assert "source" in rows[0]
        for r in rows:
            if r.get("source"):
                assert r["source"].startswith("https://"), r
        assert sum(bool(r.get("source")) for r in rows) >= 2


# --- on the real export ------------------------------------------------------------------------

QS = Path(__file__).resolve().parents[3] / "shared" / "data" / "qs_world_university_rankings_2024.csv"


@pytest.fixture(scope="module")
def qs():
    if not QS.exists():
        pytest.skip("the QS export is not present")
    resolver = geo.CountryResolver(geo.load_aliases(ALIASES_FILE))
    unis, _, _ = corpus.load_corpus(QS, resolver.resolve)
    return match.UniversityIndex.build(unis, match.load_university_aliases(UNIVERSITY_ALIASES_FILE))


@pytest.mark.parametrize(
    "text,iso3",
    [
        # the classes
        ("Universidad de Cuba", "CUB"),
        ("Universidad de Finland", "FIN"),
        ("Universidad de Norway", "NOR"),
        ("The University of Norway", None),
        ("Universidad Nacional de Perú", "PER"),
        ("University of Rome", "ITA"),
        ("University of Rome", None),
        ("California State University", "USA"),
        ("University of California", "USA"),
        ("University of Texas", "USA"),
        ("State University of New York", "USA"),
        ("Universidad Nacional de Buenos Aires", "ARG"),
        # names of other countries, written for this test
        ("University of Lyon", "FRA"),
        ("Université de Toulouse", None),
        ("University of Madrid", "ESP"),
        ("University of Naples", "ITA"),
        ("Universidad de Colombia", "COL"),
        ("Universidade de Portugal", "PRT"),
        ("University of Nebraska", "USA"),
        ("University of Illinois", "USA"),
        ("Universidad de Ecuador", None),
        ("University of Indianapolis", "USA"),
        ("University of America", "USA"),  # a country is no look-alike of "American University" either
        ("Universidad de Bolivia", "BOL"),
        ("University of Vietnam", "VNM"),
    ],
)
def test_real_export_refused_completions(qs, text, iso3):
    m = match.match_one(text, iso3, qs)
    assert m.index is None, (text, qs.names[m.index])


@pytest.mark.parametrize(
    "text,iso3,expected",
    [
        ("University of Athens", "GRC", "National and Kapodistrian University of Athens"),
        ("University of Athens", None, "National and Kapodistrian University of Athens"),
        ("University of Cairo", "EGY", "Cairo University"),
        ("University of Rome La Sapienza", "ITA", "Sapienza University of Rome"),
        ("La Sapienza", None, "Sapienza University of Rome"),
        ("KTH", "SWE", "KTH Royal Institute of Technology"),
        ("EPFL", "CHE", "EPFL"),
        ("UCL", "GBR", "UCL"),
        ("LSE", "GBR", "The London School of Economics and Political Science (LSE)"),
        ("University of Iceland", "ISL", "University of Iceland"),
        ("University of Malta", "MLT", "University of Malta"),
        # other countries: usual English names, and completions that stand
        ("University of Leuven", "BEL", "KU Leuven"),
        ("University of Campinas", "BRA", "Universidade Estadual de Campinas (Unicamp)"),
        ("Universidade de Campinas", "BRA", "Universidade Estadual de Campinas (Unicamp)"),
        ("Université de Paris", None, "Université de Paris-Cité"),
        ("Kyiv University", "UKR", "Taras Shevchenko National University of Kyiv"),
        ("University of Freiburg", "DEU", "Albert-Ludwigs-Universitaet Freiburg"),
        ("University of Milan", "ITA", "University of Milan"),
        ("University of Tübingen", "DEU", "Eberhard Karls Universität Tübingen"),
        ("Imperial College", "GBR", "Imperial College London"),
        ("University of Texas at Austin", "USA", "University of Texas at Austin"),
        ("Universidad de Buenos Aires", "ARG", "Universidad de Buenos Aires (UBA)"),
        ("University of Dublin", "IRL", "Trinity College Dublin, The University of Dublin"),
        # a country with a qualifier is a name of its own, also misspelt
        ("National University of Singapore (NU)S", "SGP", "National University of Singapore (NUS)"),
        ("Natonal Taiwan University", "TWN", "National Taiwan University (NTU)"),
    ],
)
def test_real_export_usual_names_and_standing_completions(qs, text, iso3, expected):
    m = match.match_one(text, iso3, qs)
    assert m.index is not None and qs.names[m.index].strip() == expected, (text, m)


def test_real_export_candidates_of_a_refused_city(qs):
    m = match.match_one("University of Rome", "ITA", qs)
    assert m.method == "ambiguous"
    assert {qs.names[c] for c in m.candidates} == {
        "Sapienza University of Rome",
        'University of Rome "Tor Vergata"',
        "Università degli studi Roma Tre",
    }


def test_real_export_table_is_what_the_builder_proposes(qs):
    """Every proposal of the builder on the export is in the table (reviewed), so a corpus change
    that adds a shared place or a system shows up here until it is reviewed."""
    resolver = geo.CountryResolver(geo.load_aliases(ALIASES_FILE))
    unis, _, _ = corpus.load_corpus(QS, resolver.resolve)
    countries = list(unis["country"].dropna().astype(str)) + list(unis["country_raw"].dropna().astype(str))
    countries += list(geo.load_aliases(ALIASES_FILE))
    proposed = match_tables.propose(
        unis["name"].astype(str), unis["iso3"].astype(str), match.load_name_words(match.NAME_WORDS_FILE), countries
    )
    table = {(match.normalize_name(r.name), r.iso3): r for r in match_tables.load(match.GROUPS_FILE)}
    for p in proposed:
        row = table.get((match.normalize_name(p.name), p.iso3))
        assert row is not None and row.reviewed, p
        assert set(row.covers) == set(p.covers), p.name


# ----------------------------------------------------------------------------- a campus added without a separator
CAMPUS_NAMES = [  # an invented system with one campus in the corpus, and names that must still match
    ("University of Norvale Silver Falls", "OST", "Ostland"),  # the Silver Falls campus of the Norvale system
    ("Kestrel University Harbourside", "OST", "Ostland"),  # not in the table: the completion stands
]


def _campus_index(campuses):
    frame = pd.DataFrame(
        {
            "university_id": [1, 2],
            "name": [n for n, _, _ in CAMPUS_NAMES],
            "iso3": [i for _, i, _ in CAMPUS_NAMES],
            "country": [c for _, _, c in CAMPUS_NAMES],
        }
    )
    return match.UniversityIndex.build(frame, {}, groups=[], campuses=campuses)


def test_a_campus_added_without_a_separator_is_not_completed(tmp_path):
    table = tmp_path / "campuses.csv"
    table.write_text(
        "name,system,iso3,other_campuses,source\n"
        "University of Norvale Silver Falls,University of Norvale,OST,Eastmarch | Lowbridge,test\n",
        encoding="utf-8",
    )
    idx = _campus_index(match.load_campuses(table))
    for text, iso3 in (("University of Norvale", "OST"), ("University of Norvale", None)):
        name, method, cands = got(idx, text, iso3)
        assert name is None and method == "ambiguous" and cands == {"University of Norvale Silver Falls"}, text
    assert got(idx, "Norvale University", "OST")[0] is None  # the other word order is not completed either
    # the campus's whole name, and a name the table does not list, still match
    assert got(idx, "University of Norvale Silver Falls", "OST")[0] == "University of Norvale Silver Falls"
    assert got(idx, "Kestrel University", "OST")[0] == "Kestrel University Harbourside"
    # without the table, the campus is completed as before (what the table changes)
    assert got(_campus_index({}), "University of Norvale", "OST")[0] == "University of Norvale Silver Falls"


@pytest.mark.parametrize(
    "body,why",
    [
        ("University of Norvale Silver Falls,,OST,x,test\n", "need name, system and source"),
        ("University of Norvale Silver Falls,University of Norvale,OST,x,\n", "need name, system and source"),
        ("University of Norvale,University of Norvale,OST,x,test\n", "does not add a campus"),
        ("Silver Falls College,University of Norvale,OST,x,test\n", "does not add a campus"),
    ],
)
def test_a_malformed_campus_row_names_its_line(tmp_path, body, why):
    table = tmp_path / "campuses.csv"
    table.write_text("name,system,iso3,other_campuses,source\n" + body, encoding="utf-8")
    with pytest.raises(ValueError, match=rf"campuses.csv: line 2: .*{why}"):
        match.load_campuses(table)


def test_every_campus_row_is_a_name_of_the_real_export(qs):
    bases = set(qs.base)
    missing = [n for n in match.load_campuses(match.CAMPUSES_FILE) if n not in bases]
    assert not missing, missing


@pytest.mark.parametrize(
    "text,iso3",
    [
        ("University of Minnesota", "USA"),
        ("University of Minnesota", None),
        ("University of Alaska", "USA"),
        ("University of Tennessee", "USA"),
        ("Indiana University", "USA"),
        ("University of Arkansas", "USA"),
        ("University of Montana", "USA"),
        ("Rutgers University", "USA"),
        ("University of Massachusetts", "USA"),
        ("University of Missouri", "USA"),
        ("University of Maryland", None),
        ("Vietnam National University", "VNM"),
    ],
)
def test_real_export_a_system_is_not_its_one_listed_campus(qs, text, iso3):
    m = match.match_one(text, iso3, qs)
    assert m.index is None and m.method == "ambiguous" and m.candidates, (text, m)


@pytest.mark.parametrize(
    "text,iso3",
    [
        ("University of Minnesota Twin Cities", "USA"),
        ("University of Minnesota - Twin Cities", "USA"),
        ("University of Alaska Fairbanks", "USA"),
        ("University of Alabama, Birmingham", "USA"),
        ("Indiana University Bloomington", "USA"),
        ("University of Michigan-Ann Arbor", "USA"),
        ("Rutgers University–New Brunswick", "USA"),
    ],
)
def test_real_export_a_named_campus_still_matches(qs, text, iso3):
    m = match.match_one(text, iso3, qs)
    assert m.index is not None, (text, m)


@pytest.mark.parametrize(
    "text,expected",
    [
        # a reviewed alias is a decision of its own and wins over the campus table (the flagship's common name)
        ("University of Michigan", "University of Michigan-Ann Arbor"),
        ("University of Wisconsin", "University of Wisconsin-Madison"),
        # the corpus's own "The University of Alabama" (Tuscaloosa), never its Birmingham campus
        ("University of Alabama", "The University of Alabama"),
    ],
)
def test_real_export_reviewed_aliases_and_exact_names_win_over_the_campus_table(qs, text, expected):
    m = match.match_one(text, "USA", qs)
    assert m.index is not None and qs.names[m.index].strip() == expected, (text, m)
