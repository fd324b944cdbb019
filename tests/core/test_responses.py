"""Bring-your-own responses files: formats, validation, rejects."""

import json

import pandas as pd
import pytest

from fairness_assets.core.generation import responses as R
from fairness_assets.core.generation.samples import response_id, sample_seed
from fairness_assets.core.reference.geo import CountryResolver, load_aliases
from fairness_assets.core.reference.prompts import load_templates
from resources.settings import ALIASES_FILE, EXAMPLE_RESPONSES, TEMPLATES_DIR

RES = CountryResolver(load_aliases(ALIASES_FILE))
ROWS = [
    {
        "model": "m",
        "template": "base",
        "gender": "female",
        "economic_class": "low",
        "nationality": "Nigeria",
        "run": 0,
        "response": "[]",
    },
    {
        "model": "m",
        "template": "base",
        "gender": "woman",
        "economic_class": "moderate",
        "nationality": "Brasil",
        "run": "1",
        "response": "x",
    },
    {
        "model": "m",
        "template": "gender_only",
        "gender": "male",
        "economic_class": "",
        "nationality": "",
        "run": 0,
        "response": "y",
    },
]


def write(tmp_path, rows, kind):
    df = pd.DataFrame(rows)
    p = tmp_path / f"r.{kind}"
    if kind == "csv":
        df.to_csv(p, index=False)
    elif kind == "jsonl":
        p.write_text("\n".join(json.dumps(r) for r in rows) + "\n")
    else:
        df.astype(str).to_parquet(p)
    return p


@pytest.mark.parametrize("kind", ["csv", "jsonl", "parquet"])
def test_formats_read_alike(tmp_path, kind):
    df, rep = R.read_responses(write(tmp_path, ROWS, kind), RES.iso3)
    assert rep.rows_read == 3 and rep.rows_used == 3 and rep.rows_rejected == 0
    assert list(df["profile_id"]) == ["full:female:low:nigeria", "full:female:middle:brasil", "gender_only:male"]
    assert list(df["run"]) == [0, 1, 0]


def test_missing_column_names_file_and_column(tmp_path):
    p = write(tmp_path, [{k: v for k, v in r.items() if k != "run"} for r in ROWS], "csv")
    with pytest.raises(R.ResponsesFileError, match=r"r\.csv: missing column\(s\) \['run'\]"):
        R.read_responses(p)


def test_bad_json_line_is_named(tmp_path):
    p = tmp_path / "r.jsonl"
    p.write_text(json.dumps(ROWS[0]) + "\n{not json\n")
    with pytest.raises(R.ResponsesFileError, match=r"r\.jsonl: line 2: not valid JSON"):
        R.read_responses(p)


def test_unusable_rows_are_reported_not_dropped_silently(tmp_path):
    rows = ROWS + [
        {**ROWS[0], "gender": "robot"},
        {**ROWS[0], "run": "-1"},
        {**ROWS[0], "nationality": "Atlantis"},
        {**ROWS[0], "nationality": ""},  # two of three attributes
        {**ROWS[0], "model": ""},
    ]
    df, rep = R.read_responses(write(tmp_path, rows, "csv"), RES.iso3)
    assert rep.rows_used == 3 and rep.rows_rejected == 5
    by_row = rep.rejects.set_index("row")
    assert by_row.loc[5, "column"] == "gender" and "robot" in str(by_row.loc[5, "value"])
    assert by_row.loc[6, "column"] == "run"
    assert by_row.loc[7, "column"] == "nationality"
    assert "exactly one" in by_row.loc[8, "reason"]
    assert by_row.loc[9, "column"] == "model"


def test_to_generations_renders_prompts_and_rejects_misfits(tmp_path):
    rows = ROWS + [{**ROWS[0], "template": "nope"}, {**ROWS[2], "template": "base"}, dict(ROWS[0])]
    df, _ = R.read_responses(write(tmp_path, rows, "jsonl"), RES.iso3)
    gens, rejects = R.to_generations(df, load_templates(TEMPLATES_DIR), "file.jsonl", "ab" * 32)
    assert len(gens) == 3
    assert set(rejects["reason"].str.slice(0, 12)) == {"unknown temp", "template 'ba", "repeats an e"}
    first = gens.iloc[0]
    assert first["prompt"].startswith("I am a female student from Nigeria, and I come from a low-income family.")
    assert first["response_id"] == response_id("m", "base", "full:female:low:nigeria", 0)
    assert first["seed"] == sample_seed("m", "base", "full:female:low:nigeria", 0)
    assert first["partition_key"] == "m|base" and first["audit_id"] == "import-abababababab"


def test_seeds_are_stable_and_distinct():
    assert sample_seed("a", "b", "c", 0) == sample_seed("a", "b", "c", 0)
    assert len({sample_seed("a", "b", "c", r) for r in range(1000)}) == 1000


def test_example_file_is_valid():
    df, rep = R.read_responses(EXAMPLE_RESPONSES, RES.iso3)
    assert rep.rows_rejected == 0 and len(df) == 12
