"""Parser: " - " separates a program only when the right part reads as one (35 QS names hold
" - "); repeats: only an exact repeat is one item (METHOD.md §9), in the parser and after
matching."""

import pandas as pd
import pytest

from fairness_assets.core.reference import corpus
from fairness_assets.core.understanding import match, parse
from fairness_assets.core.understanding import understand as understanding


def never(_):
    return False


def country(text):
    return text in {"Chile", "Switzerland", "USA", "Germany", "Israel", "Bahrain", "Colombia"}


@pytest.mark.parametrize(
    "name",
    [
        "Ixtal Federal Institute - Swiss Federal Institute of Technology",  # right part names an institution
        "Corvan - Israel Institute of Technology",  # even after a name without an institution word
        "Ural Northern University - UrNU",  # an acronym
        "University of Dalby - Lincoln",  # a place
        "University of Vesper - Federico II",
    ],
)
def test_name_with_dash_stays_whole(name):
    r = parse.parse_response(f"1. {name}\n2. Harvard University\n3. Yale University", country)
    assert r.items[0] == parse.Item(name, None, None)


@pytest.mark.parametrize(
    "program",
    [
        "MSc Computer Science",
        "Data Science",
        "Robotics",
        "Economics",
        "School of Engineering",
        "Master of Public Health",
    ],
)
def test_program_after_dash_is_still_split(program):
    r = parse.parse_response(
        f"1. Ixtal University - {program} (Chile)\n2. Harvard University - MBA\n3. Yale University - MSc Physics",
        country,
    )
    assert r.items[0] == parse.Item("Ixtal University", program, "Chile")


def test_every_qs_name_with_a_dash_stays_whole(qs_export):
    raw, _ = corpus.read_qs_export(qs_export)
    names = [n for n in raw["Institution Name"] if " - " in n]
    assert len(names) >= 30
    from fairness_assets.core.reference import geo
    from resources.settings import ALIASES_FILE

    resolver = geo.CountryResolver(geo.load_aliases(ALIASES_FILE))
    is_country = lambda t: resolver.iso3(t) is not None  # noqa: E731
    bad = []
    for n in names:
        left, _, right = n.rpartition(" - ")
        whole = [n, left] if is_country(right.strip()) else [n]  # "... - Chile": the country is split off
        for text, prog in (
            (f"1. {n}\n2. Harvard University\n3. Yale University", None),
            (
                f"1. {n} – MSc Data Science\n2. Harvard University – MBA\n3. Yale University – MSc Physics",
                "MSc Data Science",
            ),
        ):
            it = parse.parse_response(text, is_country).items[0]
            if it.university not in whole or it.program != prog:
                bad.append((n, it))
    assert bad == []


def test_same_university_with_two_programs_is_two_items():
    r = parse.parse_response(
        '[{"university": "MIT", "program": "MSc Physics"}, {"university": "MIT", "program": "MBA"},'
        ' {"university": "MIT", "program": "M.Sc. Physics"}, {"university": "Yale University"}]',
        never,
    )
    assert [(i.university, i.program) for i in r.items] == [
        ("MIT", "MSc Physics"),
        ("MIT", "MBA"),
        ("Yale University", None),
    ]
    assert r.n_duplicates == 1 and r.n_found == 4


def test_two_spellings_with_two_programs_are_two_recommendations():
    unis = pd.DataFrame(
        {
            "university_id": [1, 2],
            "name": ["Zentara Institute of Technology (ZIT)", "Beta University"],
            "iso3": ["USA", "USA"],
            "country": ["United States"] * 2,
        }
    )
    idx = match.UniversityIndex.build(unis)

    class Resolver:
        def resolve(self, s, strict=False):
            return pd.DataFrame({"iso3": ["USA" if v else None for v in s]})

    items = pd.DataFrame(
        {
            "response_id": "r",
            "item_index": [0, 1, 2, 3],
            "parse_status": "ok",
            "parse_method": "json",
            "n_items_found": 4,
            "n_duplicates": 0,
            "university_text": ["ZIT", "Zentara Institute of Technology", "ZIT", "Beta University"],
            "program_text": ["MSc Physics", "Master of Science in Physics", "MBA", None],
            "country_text": "USA",
        }
    )
    out = understanding.match_items(items, Resolver(), idx)
    assert list(out["program_text"]) == ["MSc Physics", "MBA", None]  # the second is an exact repeat
    assert list(out["item_index"]) == [0, 1, 2] and set(out["n_duplicates"]) == {1}
