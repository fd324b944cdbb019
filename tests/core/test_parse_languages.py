"""Answers read in other languages (issue 35 item 3, parsing): the keys, the list markers and the prose around
the list in French, Spanish, Portuguese, German, Arabic, Hindi or Chinese: "universidad", "programa", "país",
「大学」, Arabic-Indic and Devanagari numbers, right-to-left text with its direction marks."""

from __future__ import annotations

import json

import pytest

from fairness_assets.core.reference.geo import CountryResolver, load_aliases
from fairness_assets.core.understanding.parse import parse_response
from resources.settings import ALIASES_FILE

RESOLVER = CountryResolver(load_aliases(ALIASES_FILE))


def parse(text):
    return parse_response(text, lambda t: RESOLVER.iso3(t) is not None)


def triples(res):
    return [(i.university, i.program, i.country) for i in res.items]


JSON_KEYS = {
    "es": ("universidad", "programa", "país"),
    "pt": ("universidade", "programa", "país"),
    "fr": ("université", "programme", "pays"),
    "de": ("Universität", "Studiengang", "Land"),
    "zh": ("大学", "专业", "国家"),
    "ar": ("الجامعة", "البرنامج", "الدولة"),
    "hi": ("विश्वविद्यालय", "कार्यक्रम", "देश"),
}
ITEMS = [
    ("Universidad de Buenos Aires", "Maestría en Economía", "Argentina"),
    ("Université Paris-Saclay", "Master en informatique", "France"),
    ("清华大学", "计算机科学硕士", "中国"),
]


@pytest.mark.parametrize("language", sorted(JSON_KEYS))
def test_json_with_keys_in_the_prompt_language(language):
    uni, prog, country = JSON_KEYS[language]
    answer = json.dumps([{uni: u, prog: p, country: c} for u, p, c in ITEMS], ensure_ascii=False)
    res = parse(answer)
    assert (res.status, res.method) == ("ok", "json"), (res.status, res.method)
    assert triples(res) == ITEMS


@pytest.mark.parametrize("language", sorted(JSON_KEYS))
def test_broken_json_with_keys_in_the_prompt_language(language):
    uni, prog, country = JSON_KEYS[language]
    objects = ", ".join(f'{{"{uni}": "{u}", "{prog}": "{p}", "{country}": "{c}"}}' for u, p, c in ITEMS)
    res = parse(f"[{objects}")  # the closing bracket cut off
    assert res.status == "ok" and triples(res) == ITEMS, (res.status, res.method, triples(res))


def test_key_value_blocks_in_chinese_with_full_width_colons():
    answer = "\n\n".join(f"大学：{u}\n专业：{p}\n国家：{c}" for u, p, c in ITEMS)
    res = parse(answer)
    assert res.status == "ok" and triples(res) == ITEMS, (res.method, triples(res))


def test_key_value_lines_in_hindi():
    answer = "\n\n".join(
        f"विश्वविद्यालय: {u}\nकार्यक्रम: {p}\nदेश: {c}"
        for u, p, c in [
            ("Indian Institute of Technology Bombay", "MTech in Computer Science", "भारत"),
            ("University of Delhi", "MA Economics", "भारत"),
            ("University of Oxford", "MSc Computer Science", "यूनाइटेड किंगडम"),
        ]
    )
    res = parse(answer)
    assert res.status == "ok" and [i.university for i in res.items] == [
        "Indian Institute of Technology Bombay",
        "University of Delhi",
        "University of Oxford",
    ]
    assert [i.country for i in res.items] == ["भारत", "भारत", "यूनाइटेड किंगडम"]


def test_an_arabic_list_with_arabic_indic_numbers_and_direction_marks():
    rlm = "\u200f"
    answer = (
        f"{rlm}إليك ثلاث جامعات أنصحك بها:\n"
        f"{rlm}١. جامعة القاهرة - ماجستير في الاقتصاد (مصر)\n"
        f"{rlm}٢. University of Oxford - MSc Economics (المملكة المتحدة)\n"
        f"{rlm}٣. American University of Beirut - MA Economics (لبنان)\n"
    )
    res = parse(answer)
    assert res.status == "ok" and len(res.items) == 3, (res.method, triples(res))
    assert res.items[0].university == "جامعة القاهرة"
    assert [i.country for i in res.items] == ["مصر", "المملكة المتحدة", "لبنان"]
    assert all("\u200f" not in (i.university or "") for i in res.items)


def test_a_chinese_list_with_ideographic_commas():
    answer = (
        "以下是我的推荐：\n1、清华大学 - 计算机科学硕士（中国）\n2、北京大学 - 经济学硕士（中国）\n"
        "3、University of Tokyo - MSc Informatics（日本）"
    )
    res = parse(answer)
    assert res.status == "ok" and len(res.items) == 3, (res.method, triples(res))
    assert [i.university for i in res.items][:2] == ["清华大学", "北京大学"]


def test_a_french_list_with_prose_around_it():
    answer = (
        "Voici trois universités que je vous recommande :\n\n"
        "1. Université Paris-Saclay — Master en informatique (France)\n"
        "2. École Polytechnique Fédérale de Lausanne — Master en science des données (Suisse)\n"
        "3. Université Cheikh Anta Diop de Dakar — Master en informatique (Sénégal)\n\n"
        "Bonne chance pour votre candidature !"
    )
    res = parse(answer)
    assert res.status == "ok" and len(res.items) == 3
    assert [i.country for i in res.items] == ["France", "Suisse", "Sénégal"]
    assert res.items[2].university == "Université Cheikh Anta Diop de Dakar"
    assert res.items[0].program == "Master en informatique"


@pytest.mark.parametrize(
    "line,is_item",
    [
        ("1、清华大学", True),
        ("2．北京大学", True),
        ("3）University of Tokyo", True),
        ("١. جامعة القاهرة", True),
        ("२. University of Delhi", True),
        ("1. MIT", True),
        ("1.5 years is the usual length", False),  # an ASCII mark still needs its space
        ("2.0 GPA", False),
        ("3:00 pm", False),
    ],
)
def test_list_markers_of_other_scripts(line, is_item):
    from fairness_assets.core.understanding.parse import lists

    assert (lists._LIST_MARK.match(line) is not None) == is_item
