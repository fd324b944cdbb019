"""The response parser: formats, statuses, and that it never raises (hypothesis)."""

import json

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from fairness_assets.core.reference.geo import CountryResolver, load_aliases
from fairness_assets.core.understanding.parse import STATUSES, parse_response
from resources.settings import ALIASES_FILE

RESOLVER = CountryResolver(load_aliases(ALIASES_FILE))


def is_country(text):
    return RESOLVER.iso3(text) is not None


def parse(text):
    return parse_response(text, is_country)


def triples(res):
    return [(i.university, i.program, i.country) for i in res.items]


def test_bare_json():
    res = parse(
        json.dumps(
            [
                {"university": "MIT", "program": "MSc CS", "country": "USA"},
                {"university": "Oxford", "program": "MPhil", "country": "UK"},
                {"university": "ETH Zurich", "program": "MSc Robotics", "country": "Switzerland"},
            ]
        )
    )
    assert (res.status, res.method) == ("ok", "json")
    assert triples(res)[0] == ("MIT", "MSc CS", "USA")


def test_fenced_json_with_single_quotes_trailing_commas_and_comments():
    text = (
        "Sure!\n```json\n[\n  {'university': 'University of Toronto', 'program': 'Master of Data Science', "
        '\'country\': \'Canada\',}, // first\n  {"university": "King\'s College London", "program": "MSc AI", '
        '"country": "UK"},\n'
        " /* third */ {'university': 'NUS', 'program': 'MSc Analytics', 'country': 'Singapore'},\n]\n```\nGood luck!"
    )
    res = parse(text)
    assert res.status == "ok" and res.method == "json"
    assert [i.university for i in res.items] == ["University of Toronto", "King's College London", "NUS"]


def test_wrapped_json_and_other_key_names():
    text = json.dumps(
        {
            "recommendations": [
                {
                    "Institution": "University of Tokyo",
                    "Masters_Program": "Mechanical Engineering",
                    "Location": "Japan",
                },
                {"Name": "Seoul National University", "Degree": "MPA", "Country": "South Korea", "reason": "x"},
            ]
        }
    )
    res = parse(text)
    assert res.status == "partial" and triples(res) == [
        ("University of Tokyo", "Mechanical Engineering", "Japan"),
        ("Seoul National University", "MPA", "South Korea"),
    ]


def test_truncated_json_recovers_complete_objects():
    text = (
        '[{"university": "University of Lagos", "program": "MSc CS", "country": "Nigeria"}, '
        '{"university": "University of Ibadan", "program": "MPH", "country": "Nigeria"}, '
        '{"university": "University of Gh'
    )
    res = parse(text)
    assert res.status == "partial" and [i.university for i in res.items] == [
        "University of Lagos",
        "University of Ibadan",
    ]


def test_markdown_table():
    text = (
        "| # | University | Program | Country |\n|---|---|---|---|\n| 1 | Stanford University | MS in CS | USA |\n"
        "| 2 | University of Oxford | MSc Economics | UK |\n| 3 | University of Cape Town | MPH | South Africa |"
    )
    res = parse(text)
    assert res.method == "table" and res.status == "ok"
    assert triples(res)[2] == ("University of Cape Town", "MPH", "South Africa")


def test_pipe_lines_without_header_and_intro():
    text = (
        "Here you go:\nUniversity of Tokyo | Master of Engineering | Japan\n"
        "Kyoto University | Master of Economics | Japan"
    )
    res = parse(text)
    assert res.status == "partial" and triples(res)[0] == ("University of Tokyo", "Master of Engineering", "Japan")


@pytest.mark.parametrize("dash", ["–", "-", "—"])
def test_numbered_list_with_bold_and_country_in_parentheses(dash):
    text = (
        f"1. **MIT** {dash} MSc Computer Science (USA)\n2. **University of Cape Town** {dash} Master of Public Health "
        f"(South Africa)\n3. **Universidade de São Paulo** {dash} Mestrado em Engenharia (Brasil)"
    )
    res = parse(text)
    assert res.method == "list" and res.status == "ok"
    assert triples(res) == [
        ("MIT", "MSc Computer Science", "USA"),
        ("University of Cape Town", "Master of Public Health", "South Africa"),
        ("Universidade de São Paulo", "Mestrado em Engenharia", "Brasil"),
    ]


def test_multiline_items_with_extra_fields():
    text = (
        "**1. University of Toronto**\n- Program: Master of Data Science\n- Country: Canada\n- Why: strong.\n\n"
        "**2. University of Nairobi**\n- Program: MSc Economics\n- Country: Kenya\n- Why: close to home.\n"
    )
    res = parse(text)
    assert triples(res) == [
        ("University of Toronto", "Master of Data Science", "Canada"),
        ("University of Nairobi", "MSc Economics", "Kenya"),
    ]


def test_city_in_parentheses_and_university_comma_country():
    text = (
        "1. Stanford University (Stanford, California, USA): Master's in Computer Science\n"
        "2. Imperial College London, UK: MSc Advanced Computing\n"
        "3. ETH Zurich (Zurich, Switzerland): MSc Robotics"
    )
    assert triples(parse(text)) == [
        ("Stanford University", "Master's in Computer Science", "USA"),
        ("Imperial College London", "MSc Advanced Computing", "UK"),
        ("ETH Zurich", "MSc Robotics", "Switzerland"),
    ]


def test_key_value_blocks():
    text = (
        "University: King Saud University\nProgram: MSc Chemistry\nCountry: Saudi Arabia\n\n"
        "University: Qatar University\nProgram: MBA\nCountry: Qatar"
    )
    res = parse(text)
    assert res.method == "kv" and triples(res)[1] == ("Qatar University", "MBA", "Qatar")


def test_prose():
    text = (
        "I would recommend the University of Cape Town in South Africa, where you could pursue a Master's in Public "
        "Health. Another option is the Universidad de los Andes in Bogotá, Colombia, with its Master in Economics. "
        "Finally, consider Stellenbosch University's MPhil in Development Finance."
    )
    res = parse(text)
    assert res.method == "prose" and res.status == "ok"
    assert [i.university for i in res.items] == [
        "University of Cape Town",
        "Universidad de los Andes",
        "Stellenbosch University",
    ]
    assert res.items[0].country == "South Africa" and "Public Health" in res.items[0].program


def test_more_than_three_keeps_the_first_three_and_counts_all():
    items = [
        {"university": f"University of {c}", "program": "MSc", "country": c}
        for c in ("Ghana", "Lagos", "Nairobi", "Ibadan")
    ]
    res = parse(json.dumps(items))
    assert res.status == "ok" and len(res.items) == 3 and res.n_found == 4


def test_repeated_item_is_removed():
    items = [
        {"university": u, "program": "MSc", "country": "Kenya"}
        for u in ("University of Nairobi", "university of nairobi", "Strathmore University")
    ]
    res = parse(json.dumps(items))
    assert res.status == "partial" and len(res.items) == 2 and res.n_duplicates == 1


@pytest.mark.parametrize(
    "text,method",
    [
        ("I'm sorry, but I can't make recommendations based on gender or income.", "refusal"),
        ("I don't think it's appropriate to tailor recommendations to someone's nationality.", "refusal"),
        ("抱歉，我无法根据性别为您推荐大学。", "refusal"),
        ("Could you tell me which field you are interested in?", "clarification"),
        (
            "That depends on your interests:\n- **Field:** What do you want to study?\n"
            "- **Budget:** Do you need funding?\nLet me know!",
            "clarification",
        ),
    ],
)
def test_refusals_and_questions_back(text, method):
    res = parse(text)
    assert (res.status, res.method, res.items) == ("refused", method, [])


@pytest.mark.parametrize(
    "text",
    [
        "",
        "   ",
        "asdf qwer",
        "[]",
        "{}",
        None,
        42,
        '[{"university": "University Name", "program": "Program", "country": "Country"}]',
    ],
)
def test_unparseable(text):
    res = parse(text)
    assert res.status == "unparseable" and res.items == []


def test_status_values_are_known():
    assert set(STATUSES) == {"ok", "partial", "refused", "unparseable"}


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.text(max_size=2000))
def test_never_raises_on_any_text(text):
    res = parse(text)
    assert res.status in STATUSES and len(res.items) <= 3


FRAGMENTS = [
    "[",
    "]",
    "{",
    "}",
    '"university": ',
    "'program': ",
    '"country": "USA"',
    ",",
    "\n",
    "1. ",
    "- ",
    "**",
    "|",
    "---",
    "University of ",
    "MIT",
    "Master of ",
    "(",
    ")",
    ":",
    "```json",
    "```",
    "//",
    "I'm sorry",
    "Universidade de São Paulo",
    "–",
    "?",
    "\\",
    '"',
    "'",
    "null",
    "true",
    "🙂",
    "\x00",
    "Program:",
    "Country:",
]


@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(st.sampled_from(FRAGMENTS) | st.text(max_size=20), max_size=60).map("".join))
def test_never_raises_on_structured_garbage(text):
    res = parse(text)
    assert res.status in STATUSES
    assert all(isinstance(i.university, str) and i.university for i in res.items)


@settings(max_examples=100, deadline=None)
@given(
    st.recursive(
        st.none() | st.booleans() | st.integers() | st.text(max_size=30),
        lambda c: (
            st.lists(c, max_size=4)
            | st.dictionaries(
                st.sampled_from(["university", "program", "country", "name", "x"]) | st.text(max_size=8), c, max_size=4
            )
        ),
        max_leaves=20,
    )
)
def test_never_raises_on_any_json(obj):
    res = parse(json.dumps(obj))
    assert res.status in STATUSES
