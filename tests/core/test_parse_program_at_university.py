"""Answers that put the program in front of the university (issue 11, item 7).

"The MSc Computer Science at ETH Zurich in Switzerland", "a Master's in Economics at the London
School of Economics", "Master of Public Health from Johns Hopkins University", "the Data Science
program offered by Harvard University": the parser must split them into program, university and
country, and a response whose university text still holds a program is never ``ok``.

The measurement at the end builds such answers from the QS export (four answer formats, five
phrasings) and checks that they are split and matched as well as the bare names are; the
figures are in docs/parse_match.md.
"""

from __future__ import annotations

import json
import random
import re
from collections import Counter

import pandas as pd
import pytest

from fairness_assets.core.understanding.parse import clean, holds_program, split_program
from tests.core.test_parse import RESOLVER, is_country, parse, triples  # noqa: F401 - the same parsing helpers


# ----------------------------------------------------------------------------- shapes, one by one
@pytest.mark.parametrize(
    "text,expected",
    [
        (
            "1. The Master's in Computer Science at Stanford University in the United States\n"
            "2. The MSc in Data Science at ETH Zurich in Switzerland\n"
            "3. The MBA at the University of Oxford in the United Kingdom",
            [
                ("Stanford University", "Master's in Computer Science", "the United States"),
                ("ETH Zurich", "MSc in Data Science", "Switzerland"),
                ("University of Oxford", "MBA", "the United Kingdom"),
            ],
        ),
        (
            "1. MSc Computer Science at ETH Zurich, Switzerland\n"
            "2. Master of Public Health from Johns Hopkins University\n"
            "3. a Master's in Economics at the London School of Economics in the UK",
            [
                ("ETH Zurich", "MSc Computer Science", "Switzerland"),
                ("Johns Hopkins University", "Master of Public Health", None),
                ("London School of Economics", "Master's in Economics", "the UK"),
            ],
        ),
        (
            "- The Data Science program offered by Harvard University (USA)\n"
            "- The MS in Computer Science at the University of Texas at Austin (USA)\n"
            "- The Master of Engineering program of the University of Tokyo, Japan",
            [
                ("Harvard University", "Data Science program", "USA"),
                ("University of Texas at Austin", "MS in Computer Science", "USA"),
                ("University of Tokyo", "Master of Engineering program", "Japan"),
            ],
        ),
    ],
)
def test_list_items_program_at_university_in_country(text, expected):
    res = parse(text)
    assert res.method == "list" and res.status == "ok"
    assert triples(res) == expected


def test_json_whose_university_field_holds_the_program():
    text = json.dumps(
        [
            {"university": "the MSc in Finance at HEC Paris in France", "program": "MSc Finance", "country": "France"},
            {"university": "Master of Public Health from Johns Hopkins University", "country": "USA"},
            {"university": "MSc Computer Science at ETH Zurich, Switzerland"},
        ]
    )
    res = parse(text)
    assert res.method == "json" and res.status == "ok"
    assert triples(res) == [
        ("HEC Paris", "MSc Finance", "France"),  # the program field wins
        ("Johns Hopkins University", "Master of Public Health", "USA"),
        ("ETH Zurich", "MSc Computer Science", "Switzerland"),
    ]


def test_table_rows_program_at_university():
    text = (
        "| # | Recommendation | Country |\n|---|---|---|\n| 1 | MSc CS at ETH Zurich | Switzerland |\n"
        "| 2 | MBA at INSEAD | France |\n| 3 | MPH from Johns Hopkins University | USA |"
    )
    res = parse(text)
    assert res.method == "table" and res.status == "ok"
    assert triples(res) == [
        ("ETH Zurich", "MSc CS", "Switzerland"),
        ("INSEAD", "MBA", "France"),
        ("Johns Hopkins University", "MPH", "USA"),
    ]


def test_other_languages():
    text = (
        "1. Máster en Ciencia de Datos en la Universidad de Barcelona (España)\n"
        "2. Mestrado em Economia na Universidade de São Paulo, Brasil\n"
        "3. Master en Informatique à l'Université Paris-Saclay, France"
    )
    assert triples(parse(text)) == [
        ("Universidad de Barcelona", "Máster en Ciencia de Datos", "España"),
        ("Universidade de São Paulo", "Mestrado em Economia", "Brasil"),
        ("Université Paris-Saclay", "Master en Informatique", "France"),
    ]


def test_prose_program_at_university():
    text = (
        "I recommend the MSc Computer Science at ETH Zurich in Switzerland. Another strong choice is the "
        "Master of Public Health from Johns Hopkins University. Finally, the MA in International Relations "
        "at Sciences Po in France."
    )
    res = parse(text)
    assert res.method == "prose" and res.status == "ok"
    assert [i.university for i in res.items] == ["ETH Zurich", "Johns Hopkins University", "Sciences Po"]
    assert [i.country for i in res.items] == ["Switzerland", None, "France"]
    assert res.items[0].program == "MSc Computer Science"


@pytest.mark.parametrize(
    "name",
    [
        "University of California at Berkeley",
        "University of Texas at Austin",
        "University of North Carolina at Chapel Hill",
        "Massachusetts Institute of Technology",
        "School of Oriental and African Studies",
        "University at Buffalo SUNY",
        "Queen's University at Kingston",
        "University of Illinois at Urbana-Champaign",
        "British University in Egypt",
        "Toyota Technological Institute in Japan",
        "Graduate Institute of International and Development Studies",
    ],
)
def test_university_names_with_at_of_in_are_not_split(name):
    text = json.dumps(
        [
            {"university": name, "program": "MSc Physics", "country": "x"},
            {"university": "University of Ghana", "program": "MSc", "country": "Ghana"},
            {"university": "University of Lagos", "program": "MSc", "country": "Nigeria"},
        ]
    )
    res = parse(text)
    assert res.status == "ok" and res.items[0].university == name and res.items[0].program == "MSc Physics"
    assert not holds_program(name)


def test_university_text_still_holding_a_program_is_never_ok():
    # the part after "at" is not a name (lower case): nothing to split, so the item stays as it is
    text = json.dumps(
        [
            {"university": "Master of Science in Physics at a good school", "country": "USA"},
            {"university": "University of Ghana", "country": "Ghana"},
            {"university": "University of Lagos", "country": "Nigeria"},
        ]
    )
    res = parse(text)
    assert res.status == "partial" and len(res.items) == 3
    assert holds_program(res.items[0].university)


@pytest.mark.parametrize(
    "text,held",
    [
        ("MSc Computer Science at ETH Zurich", True),
        ("Master's in Economics from LSE", True),
        ("the Data Science program offered by Harvard", True),
        ("MBA", True),
        ("M.Sc. Physics at TU Delft", True),
        ("Stanford University", False),
        ("University of Texas at Austin", False),
        ("Imperial College London", False),
        ("Emerson College of Massachusetts", False),
    ],
)
def test_holds_program(text, held):
    assert holds_program(text) is held


def test_no_qs_name_is_taken_for_a_program(qs_export):
    """No corpus name holds a degree word or is split, as a university field or as a list item
    ("University of Texas at Austin", "Queen's University at Kingston", "British University in Egypt")."""
    from fairness_assets.core.reference import corpus

    unis, _, _ = corpus.load_corpus(qs_export, RESOLVER.resolve)
    names = list(unis["name"])
    assert [n for n in names if holds_program(n) or split_program(n, is_country)] == []
    for name in [n for n in names if re.search(r"\s(?:at|of|in|from)\s", n) and not re.search(r"[,()\-–—:]", n)]:
        res = parse(f"1. {name}\n2. University of Ghana\n3. University of Lagos")
        assert triples(res)[0] == (clean(name), None, None)  # clean() drops a closing quote, as before
        res = parse(json.dumps([{"university": name, "program": "MSc"}]))
        assert triples(res)[0] == (clean(name), "MSc", None)


# ----------------------------------------------------------------------------- measurement
FIELDS = [
    "Computer Science",
    "Data Science",
    "Public Health",
    "Economics",
    "Mechanical Engineering",
    "Finance",
    "International Relations",
    "Artificial Intelligence",
    "Education",
    "Environmental Science",
]
DEGREES = [
    "Master's in {f}",
    "MSc {f}",
    "MSc in {f}",
    "Master of Science in {f}",
    "MS in {f}",
    "MA in {f}",
    "M.Sc. in {f}",
    "MEng in {f}",
    "Master of {f}",
    "{f} Master's program",
]
PHRASINGS = [  # (item text, whether the country is written)
    ("the {p} at {u} in {c}", True),
    ("a {p} at {u}", False),
    ("{p} at {u}, {c}", True),
    ("{p} from {u}", False),
    ("the {f} program offered by {u} ({c})", True),
]
FORMATS = ["numbered", "bullets", "prose", "json"]


def _usable_names(unis: pd.DataFrame) -> pd.DataFrame:
    """Corpus names as a model would write them: trailing "(ACR)" dropped; none with commas, dashes,
    " in " or " from " (the "in Egypt" of "X in Egypt" would be read as the country); " at " kept."""
    names = unis["name"].str.replace(r"\s*\([^()]*\)\s*$", "", regex=True).str.strip()
    ok = ~names.str.contains(r"[,()\-–—]|\s(?:in|from)\s", regex=True) & unis["country"].notna()
    out = unis.loc[ok, ["university_id", "country"]].copy()
    out["text"] = names[ok]
    return out.reset_index(drop=True)


def shaped_answers(unis: pd.DataFrame, n_answers: int, seed: int = 11) -> list[dict]:
    """``n_answers`` answers of three "<program> at <university>" items each, with the truth."""
    rng = random.Random(seed)
    pool = _usable_names(unis)
    rows = []
    for k in range(n_answers):
        fmt = FORMATS[k % len(FORMATS)]
        picks = pool.sample(3, random_state=rng.randrange(2**31)).to_dict("records")
        texts, truth = [], []
        for j, u in enumerate(picks):
            f = rng.choice(FIELDS)
            shape, with_country = PHRASINGS[(k + j) % len(PHRASINGS)]
            p = rng.choice(DEGREES).format(f=f)
            texts.append(shape.format(p=p, f=f, u=u["text"], c=u["country"]))
            truth.append({"university_id": u["university_id"], "university": u["text"], "field": f})
        if fmt == "numbered":
            response = "\n".join(f"{j + 1}. {t[0].upper()}{t[1:]}" for j, t in enumerate(texts))
        elif fmt == "bullets":
            response = "Here are my suggestions:\n" + "\n".join(f"- {t[0].upper()}{t[1:]}" for t in texts)
        elif fmt == "prose":
            lead = ["I would recommend ", "Another good option is ", "Finally, consider "]
            response = " ".join(f"{a}{t}." for a, t in zip(lead, texts, strict=False))
        else:
            response = json.dumps([{"university": t} for t in texts])
        rows.append({"id": f"shape-{k}", "format": fmt, "response": response, "truth": truth})
    return rows


def _the(text: str) -> str:
    return re.sub(r"(?i)^the\s+", "", text)


def measure(records: list[dict], items: pd.DataFrame) -> dict:
    """Items of the expected answers that were split (university text = the name), matched, and
    responses that are ``ok`` while a university text still holds a program."""
    by = {
        (r, i): row
        for r, i, row in zip(items["response_id"], items["item_index"], items.to_dict("records"), strict=False)
    }
    c = Counter()
    for rec in records:
        for i, t in enumerate(rec["truth"]):
            row = by.get((rec["id"], i))
            c["items"] += 1
            if row is None or row["university_text"] is None:
                continue
            split = _the(row["university_text"]) == _the(t["university"])
            c["split"] += split
            c["program"] += split and t["field"].lower() in (row["program_text"] or "").lower()
            c["matched"] += row["university_id"] == t["university_id"]
            c["ok_holding_program"] += row["parse_status"] == "ok" and holds_program(row["university_text"])
    return dict(c)


@pytest.fixture(scope="module")
def qs_pipeline(qs_export):
    from fairness_assets.core.reference import corpus
    from fairness_assets.core.understanding import match
    from fairness_assets.core.understanding import understand as understanding
    from resources.settings import UNIVERSITY_ALIASES_FILE

    unis, _, _ = corpus.load_corpus(qs_export, RESOLVER.resolve)
    idx = match.UniversityIndex.build(unis, match.load_university_aliases(UNIVERSITY_ALIASES_FILE))

    def run(texts: pd.Series) -> pd.DataFrame:
        return understanding.match_items(understanding.parse_responses(texts, is_country), RESOLVER, idx)

    return unis, run


def test_shaped_answers_are_split_and_matched(qs_pipeline):
    unis, run = qs_pipeline
    records = shaped_answers(unis, 200)
    # control: the same names alone, as the JSON university field (what the matcher gets at best)
    control = run(
        pd.Series({r["id"]: json.dumps([{"university": t["university"]} for t in r["truth"]]) for r in records})
    )
    base = measure(records, control)
    items = run(pd.Series({r["id"]: r["response"] for r in records}))
    got = measure(records, items)
    assert got["items"] == 600
    assert got["ok_holding_program"] == 0
    assert got["split"] >= 0.97 * got["items"], got
    assert got["program"] >= 0.95 * got["items"], got
    assert got["matched"] >= base["matched"] - 0.02 * got["items"], (got, base)
