"""Dirty responses files (issue 11, items 4 and 5): run values that are not whole numbers in
range, JSON objects or arrays where one value belongs, and text no database stores as is (NUL,
lone surrogates). Each is a rejected row with a reason, or a kept row that says what was altered;
never a traceback, never a partition named after a repr."""

import json

import pandas as pd
import pytest

from fairness_assets.core.generation import responses as R
from fairness_assets.core.reference.geo import CountryResolver, load_aliases
from fairness_assets.core.reference.prompts import load_templates
from resources.settings import ALIASES_FILE, TEMPLATES_DIR

RES = CountryResolver(load_aliases(ALIASES_FILE))
BASE = {
    "model": "m",
    "template": "base",
    "gender": "female",
    "economic_class": "low",
    "nationality": "Nigeria",
    "run": 0,
    "response": "MIT, USA",
}
CLEAN = [BASE, {**BASE, "gender": "male", "run": 1}]


def write(tmp_path, rows, kind, name="r"):
    p = tmp_path / f"{name}.{kind}"
    if kind == "csv":
        p.write_bytes(pd.DataFrame(rows).to_csv(index=False).encode("utf-8"))
    elif kind == "jsonl":
        p.write_text("\n".join(json.dumps(r) for r in rows) + "\n", encoding="utf-8")
    else:
        pd.DataFrame(rows).to_parquet(p)
    return p


# -- item 5: run ---------------------------------------------------------------------------------
BAD_RUN_TEXT = ["1e20", "inf", "-inf", "nan", "NaN", "2.5", "-1", "abc", "", "2147483648", "1_0", "0x1", "3 4"]


@pytest.mark.parametrize("kind", ["csv", "jsonl"])
@pytest.mark.parametrize("value", BAD_RUN_TEXT)
def test_bad_run_text_is_a_rejected_row(tmp_path, kind, value):
    rows = CLEAN + [{**BASE, "gender": "transgender", "run": value}]
    df, rep = R.read_responses(write(tmp_path, rows, kind), RES.iso3)
    assert rep.rows_used == 2 and rep.rows_rejected == 1 and list(df["run"]) == [0, 1]
    (reject,) = rep.rejects.itertuples()
    assert reject.row == (4 if kind == "csv" else 3) and reject.column == "run"
    assert reject.value == value and reject.reason.startswith("run must be a whole number >= 0")


@pytest.mark.parametrize(
    "value",
    [1e20, float("inf"), float("-inf"), float("nan"), 2.5, -1, 10**30, 2**31, True, False, [0], {"run": 0}, None],
)
def test_bad_run_json_value_is_a_rejected_row(tmp_path, value):
    rows = CLEAN + [{**BASE, "gender": "transgender", "run": value}]
    df, rep = R.read_responses(write(tmp_path, rows, "jsonl"), RES.iso3)
    assert rep.rows_used == 2 and rep.rows_rejected == 1
    (reject,) = rep.rejects.itertuples()
    assert reject.row == 3 and reject.column == "run" and reject.reason.startswith("run must be a whole number")


def test_run_reasons_say_what_is_wrong(tmp_path):
    values = ["2.5", "inf", "abc", "-1", "1e20"]
    rows = [
        {**BASE, "run": v, "nationality": n}
        for v, n in zip(values, ["India", "Kenya", "Peru", "Chile", "Japan"], strict=False)
    ]
    _, rep = R.read_responses(write(tmp_path, CLEAN + rows, "csv"), RES.iso3)
    reasons = dict(zip(rep.rejects["value"], rep.rejects["reason"], strict=False))
    assert "(not a whole number)" in reasons["2.5"] and "(not a number)" in reasons["inf"]
    assert "(not a number)" in reasons["abc"] and "(negative)" in reasons["-1"]
    assert f"at most {R.MAX_RUN}" in reasons["1e20"]


@pytest.mark.parametrize("kind", ["csv", "jsonl"])
def test_whole_number_forms_are_accepted(tmp_path, kind):
    values = ["3", " 4 ", "5.0", "1e2", "+6", str(R.MAX_RUN)] + ([7, 8.0] if kind == "jsonl" else [])
    nats = ["India", "Kenya", "Peru", "Chile", "Japan", "Ghana", "Spain", "Italy"]
    rows = [{**BASE, "run": v, "nationality": n} for v, n in zip(values, nats, strict=False)]
    df, rep = R.read_responses(write(tmp_path, rows, kind), RES.iso3)
    assert rep.rows_rejected == 0
    assert list(df["run"]) == [3, 4, 5, 100, 6, R.MAX_RUN] + ([7, 8] if kind == "jsonl" else [])


# -- item 5: a JSON object or array where one value belongs -------------------------------------
@pytest.mark.parametrize("column", ["model", "template", "gender", "economic_class", "nationality", "response"])
@pytest.mark.parametrize("value", [{"name": "gpt"}, ["gpt", "4"], []])
def test_object_or_array_in_a_field_is_a_rejected_row(tmp_path, column, value):
    rows = CLEAN + [{**BASE, "gender": "transgender", column: value}]
    df, rep = R.read_responses(write(tmp_path, rows, "jsonl"), RES.iso3)
    assert rep.rows_used == 2 and set(df["model"]) == {"m"}  # no partition named after a repr
    assert len(rep.rejects) == 1  # one reason, not a second one about the profile
    (reject,) = rep.rejects.itertuples()
    assert reject.row == 3 and reject.column == column
    assert reject.value == json.dumps(value)
    assert reject.reason == f"{column} must be a single value (text or a number), not " + (
        "a JSON object" if isinstance(value, dict) else "a JSON array"
    )


def test_object_in_model_never_becomes_a_partition(tmp_path):
    rows = [{**BASE, "model": {"id": "gpt-4o", "rev": 2}}, {**BASE, "model": ["a", "b"], "gender": "male"}]
    p = write(tmp_path, CLEAN + rows, "jsonl")
    df, rep = R.read_responses(p, RES.iso3)
    gens, _ = R.to_generations(df, load_templates(TEMPLATES_DIR), str(p), "ab" * 32)
    assert set(gens["partition_key"]) == {"m|base"} and rep.rows_rejected == 2


def test_list_cells_of_a_parquet_file_are_rejected_rows(tmp_path):
    rows = [{**r, "model": [r["model"]]} for r in CLEAN + [{**BASE, "gender": "transgender"}]]
    p = tmp_path / "r.parquet"
    pd.DataFrame(rows).to_parquet(p)  # model is a list<string> column
    df, rep = R.read_responses(p, RES.iso3)
    assert rep.rows_used == 0 and rep.rows_rejected == 3
    assert set(rep.rejects["reason"]) == {"model must be a single value (text or a number), not a JSON array"}


def test_numbers_in_text_fields_are_still_read_as_text(tmp_path):
    df, rep = R.read_responses(write(tmp_path, [{**BASE, "model": 4, "response": 12}], "jsonl"), RES.iso3)
    assert rep.rows_rejected == 0 and df.loc[0, "model"] == "4" and df.loc[0, "response"] == "12"


# -- item 4: text no database stores as is -------------------------------------------------------
@pytest.mark.parametrize("kind", ["csv", "jsonl", "parquet"])
def test_nul_in_one_response_keeps_every_row_and_flags_it(tmp_path, kind):
    rows = CLEAN + [{**BASE, "gender": "transgender", "response": "MIT\x00, USA\x00"}]
    df, rep = R.read_responses(write(tmp_path, rows, kind), RES.iso3)
    assert rep.rows_used == 3 and rep.rows_rejected == 0
    assert list(df["response"]) == ["MIT, USA"] * 3  # the whole answer kept (pandas' C parser cut it at the NUL)
    assert list(df["text_note"]) == [None, None, "response: 2 NUL characters removed"]
    row = {"csv": 4, "jsonl": 3, "parquet": 3}[kind]
    assert rep.notes.to_dict("records") == [{"row": row, "column": "response", "note": "2 NUL characters removed"}]


def test_raw_nul_byte_and_lone_surrogate_in_jsonl(tmp_path):
    p = tmp_path / "r.jsonl"
    lines = [
        json.dumps(CLEAN[0]),
        json.dumps({**BASE, "gender": "male"}).replace("MIT, USA", "MIT\x00 USA"),
        json.dumps({**BASE, "gender": "transgender", "model": "m\x00", "response": "ETH \ud800\udfff\ud800"}),
    ]
    p.write_bytes(("\n".join(lines) + "\n").encode("utf-8"))  # json.dumps escapes the surrogates: valid UTF-8
    assert b"\x00" in p.read_bytes()
    df, rep = R.read_responses(p, RES.iso3)
    assert rep.rows_used == 3 and set(df["model"]) == {"m"}
    assert list(df["response"]) == ["MIT, USA", "MIT USA", "ETH \U000103ff\ufffd"]  # a valid pair is kept
    assert df.loc[1, "text_note"] == "response: 1 NUL character removed"
    assert df.loc[2, "text_note"] == (
        "model: 1 NUL character removed; response: 1 unencodable character (lone surrogate) replaced with U+FFFD"
    )


def test_the_note_travels_with_the_generation_row(tmp_path):
    rows = CLEAN + [{**BASE, "gender": "transgender", "response": "a\x00b"}]
    p = write(tmp_path, rows, "jsonl")
    df, _ = R.read_responses(p, RES.iso3)
    gens, _ = R.to_generations(df, load_templates(TEMPLATES_DIR), str(p), "ab" * 32)
    assert list(gens["text_note"]) == [None, None, "response: 1 NUL character removed"]
    assert list(gens["response"])[-1] == "ab"


def test_rejected_rows_leave_no_note(tmp_path):
    rows = CLEAN + [{**BASE, "gender": "robot", "response": "a\x00b"}]
    df, rep = R.read_responses(write(tmp_path, rows, "csv"), RES.iso3)
    assert rep.rows_rejected == 1 and rep.notes.empty and df["text_note"].isna().all()


@pytest.mark.parametrize(
    "value,expected,note",
    [
        ("plain", "plain", ""),
        ("caf\u00e9 \U0001f393", "caf\u00e9 \U0001f393", ""),
        ("a\x00b\x00", "ab", "2 NUL characters removed"),
        ("x\udc80y", "x\ufffdy", "1 unencodable character (lone surrogate) replaced with U+FFFD"),
        (
            "\x00\ud800",
            "\ufffd",
            "1 NUL character removed, 1 unencodable character (lone surrogate) replaced with U+FFFD",
        ),
    ],
)
def test_storable_text(value, expected, note):
    assert R.storable_text(value) == (expected, note)
    expected.encode("utf-8")  # always encodable


# -- CSV rows are named by the physical line where they start ----------------------------------
def test_csv_rejects_name_the_physical_line_after_multiline_answers(tmp_path):
    rows = [
        {**BASE, "response": "1. MIT\n2. ETH\n3. NUS"},
        {**BASE, "gender": "male", "response": "a\nb"},
        {**BASE, "gender": "robot"},
    ]
    df, rep = R.read_responses(write(tmp_path, rows, "csv"), RES.iso3)
    assert list(df["source_row"]) == [2, 5] and df.loc[0, "response"] == "1. MIT\n2. ETH\n3. NUS"
    assert list(rep.rejects["row"]) == [7]


def test_csv_unclosed_quote_names_the_line(tmp_path):
    p = tmp_path / "r.csv"
    p.write_text(
        "model,template,gender,economic_class,nationality,run,response\n"
        'm,base,female,low,Nigeria,0,ok\nm,base,male,low,Nigeria,1,"never closed\n'
    )
    with pytest.raises(R.ResponsesFileError, match=r"r\.csv: line 3: not a readable CSV file \(a quoted field"):
        R.read_responses(p, RES.iso3)


def test_tsv_and_gzip_still_read(tmp_path):
    import gzip

    p = tmp_path / "r.tsv"
    pd.DataFrame(CLEAN).to_csv(p, sep="\t", index=False)
    df, rep = R.read_responses(p, RES.iso3)
    assert rep.rows_used == 2
    gz = tmp_path / "r.csv.gz"
    gz.write_bytes(gzip.compress(pd.DataFrame(CLEAN).to_csv(index=False).encode()))
    df, rep = R.read_responses(gz, RES.iso3)
    assert rep.rows_used == 2 and list(df["source_row"]) == [2, 3]
