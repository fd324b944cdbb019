"""Responses files read a chunk at a time, and staged by partition (issue 19, item 5).

The reader validates CHUNK_ROWS rows at a time: whatever the chunk size, read_responses and
import_responses give the same frames, rejects and notes. stage_responses converts a file once into
one Parquet folder per (model, template) and reads back only the partitions asked for, equal to
import_responses for the same pairs; its memory does not grow with the file."""

import gzip
import json
import tracemalloc

import pandas as pd
import pytest

from fairness_assets.core.generation import responses as R
from fairness_assets.core.reference.geo import CountryResolver, load_aliases
from fairness_assets.core.reference.prompts import load_templates
from resources.settings import ALIASES_FILE, EXAMPLE_RESPONSES, TEMPLATES_DIR

RES = CountryResolver(load_aliases(ALIASES_FILE))
TEMPLATES = load_templates(TEMPLATES_DIR)
BASE = {
    "model": "m",
    "template": "base",
    "gender": "female",
    "economic_class": "low",
    "nationality": "Nigeria",
    "run": 0,
    "response": "1. MIT - MSc Computer Science (USA)",
}


def dirty_rows() -> list[dict]:
    """Answers as written with every kind of reject and note, spread over many chunks."""
    rows, nats = [], ["Nigeria", "Brasil", "India", "Kenya", "Peru", "Atlantis", "", "Chile"]
    for i in range(40):
        r = dict(
            BASE,
            run=i % 7,
            nationality=nats[i % 8],
            gender=["female", "male", "robot", "woman"][i % 4],
            model=["m", "n"][i % 2],
        )
        if i % 5 == 0:
            r["template"] = ["regional", "nope", "gender_only", "academic"][(i // 5) % 4]
        if i % 9 == 0:
            r["response"] = "a\x00b"
        if i % 11 == 0:
            r["model"] = "x|y"
        if i % 13 == 0:
            r["run"] = ["2.5", "abc", 3.0, None][i % 4]
        if i % 6 == 0:
            r.update(economic_class="", nationality="")
        rows.append(r)
    return rows + [dict(BASE), dict(BASE)]  # a sample repeated in the last chunk


def item_rows() -> list[dict]:
    rows = []
    for i in range(30):
        r = {k: v for k, v in BASE.items() if k != "response"}
        r.update(
            run=i // 4,
            university=f"University {i}",
            program="MSc CS" if i % 3 else None,
            country="USA",
            model=["m", "n"][i % 2],
        )
        if i % 7 == 0:
            r["item_index"] = 5 - i % 3
        if i % 8 == 0:
            r["template"] = "nope"
        rows.append(r)
    return rows


def write(tmp_path, rows, kind, name="r"):
    p = tmp_path / f"{name}.{kind}"
    csv_bytes = pd.DataFrame(rows).to_csv(index=False).encode("utf-8")
    if kind == "csv":
        p.write_bytes(csv_bytes)
    elif kind == "csv.gz":
        p.write_bytes(gzip.compress(csv_bytes))
    elif kind == "jsonl":
        p.write_text("\n".join(json.dumps(r) for r in rows) + "\n", encoding="utf-8")
    else:
        pd.DataFrame(rows).astype(str).to_parquet(p)
    return p


def assert_same_read(a, b):
    pd.testing.assert_frame_equal(a[0], b[0])
    pd.testing.assert_frame_equal(a[1].rejects, b[1].rejects)
    pd.testing.assert_frame_equal(a[1].notes, b[1].notes)
    assert (a[1].rows_read, a[1].rows_used, a[1].split_items) == (b[1].rows_read, b[1].rows_used, b[1].split_items)


def assert_same_import(a, b):
    pd.testing.assert_frame_equal(a.generations, b.generations, check_dtype=len(a.generations) > 0)
    pd.testing.assert_frame_equal(a.rejects, b.rejects, check_dtype=len(a.rejects) > 0)
    pd.testing.assert_frame_equal(a.notes, b.notes, check_dtype=len(a.notes) > 0)
    assert (a.rows_read, a.split_items, a.sha256, a.models, a.pairs) == (
        b.rows_read,
        b.split_items,
        b.sha256,
        b.models,
        b.pairs,
    )


FILES = [
    ("dirty", "csv"),
    ("dirty", "jsonl"),
    ("dirty", "parquet"),
    ("dirty", "csv.gz"),
    ("items", "csv"),
    ("items", "jsonl"),
]


@pytest.mark.parametrize("name,kind", FILES)
def test_any_chunk_size_reads_the_same(tmp_path, monkeypatch, name, kind):
    p = write(tmp_path, dirty_rows() if name == "dirty" else item_rows(), kind)
    monkeypatch.setattr(R.reading, "CHUNK_ROWS", 10**6)
    whole = R.read_responses(p, RES.iso3)
    imports = {
        pairs and frozenset(pairs): R.import_responses(p, TEMPLATES, RES.iso3, pairs=pairs)
        for pairs in (None, {("m", "base")}, {("n", "regional"), ("m", "nope")})
    }
    assert whole[1].rows_read == len(dirty_rows() if name == "dirty" else item_rows())
    assert imports[None].rows_rejected > 0 and len(imports[None].generations) > 0  # the fixture has both
    for size in (1, 7):  # the file is larger than one chunk
        monkeypatch.setattr(R.reading, "CHUNK_ROWS", size)
        assert_same_read(whole, R.read_responses(p, RES.iso3))
    monkeypatch.setattr(R.reading, "CHUNK_ROWS", 3)
    for pairs, imported in imports.items():
        assert_same_import(imported, R.import_responses(p, TEMPLATES, RES.iso3, pairs=pairs and set(pairs)))


def test_a_chunk_also_closes_on_its_text_size(tmp_path, monkeypatch):
    p = write(tmp_path, dirty_rows(), "jsonl")
    whole = R.read_responses(p, RES.iso3)
    monkeypatch.setattr(R.reading, "CHUNK_CHARS", 100)  # about one row per chunk
    assert_same_read(whole, R.read_responses(p, RES.iso3))


def test_jsonl_whose_later_rows_bring_the_response_column(tmp_path, monkeypatch):
    # the first rows have no 'response' key (read as empty answers), later ones do: not split into items
    rows = [{k: v for k, v in dict(BASE, run=i).items() if i > 4 or k != "response"} for i in range(8)]
    p = write(tmp_path, rows, "jsonl")
    monkeypatch.setattr(R.reading, "CHUNK_ROWS", 2)
    df, rep = R.read_responses(p, RES.iso3)
    assert not rep.split_items and rep.rows_used == 8
    assert list(df["response"].isna()) == [True] * 5 + [False] * 3
    imported = R.import_responses(p, TEMPLATES, RES.iso3)
    assert len(imported.generations) == 8 and imported.generations["response_format"].eq("text").all()


def test_missing_column_of_a_jsonl_file_is_named_after_reading_it_all(tmp_path, monkeypatch):
    rows = [{k: v for k, v in dict(BASE, run=i).items() if k != "run" or i == 5} for i in range(6)]
    p = write(tmp_path, rows, "jsonl")
    monkeypatch.setattr(R.reading, "CHUNK_ROWS", 2)
    _, rep = R.read_responses(p, RES.iso3)  # 'run' exists (row 6): the others are rejected, not the file
    assert rep.rows_used == 1 and set(rep.rejects["column"]) == {"run"}
    p.write_text("\n".join(json.dumps({k: v for k, v in r.items() if k != "run"}) for r in rows) + "\n")
    with pytest.raises(R.ResponsesFileError, match=r"r\.jsonl: missing column\(s\) \['run'\]"):
        R.read_responses(p, RES.iso3)


def test_the_example_file_and_an_empty_file(tmp_path):
    imported = R.import_responses(EXAMPLE_RESPONSES, TEMPLATES, RES.iso3)
    assert len(imported.generations) == 12 and imported.rows_rejected == 0
    p = tmp_path / "r.csv"
    p.write_text("model,template,run,gender,response\n")
    with pytest.raises(R.ResponsesFileError, match=r"r\.csv: the responses file has no rows"):
        R.import_responses(p, TEMPLATES, RES.iso3)


def test_models_of_a_file_without_keeping_its_rows(tmp_path, monkeypatch):
    p = write(tmp_path, dirty_rows(), "csv")
    monkeypatch.setattr(R.reading, "CHUNK_ROWS", 5)
    df, _ = R.read_responses(p)
    assert R.response_models(p) == set(df["model"]) == {"m", "n", "x|y"}
    with pytest.raises(R.ResponsesFileError, match="responses file not found"):
        R.response_models(tmp_path / "nope.jsonl")


# -- staging ---------------------------------------------------------------------------------------
@pytest.mark.parametrize("name,kind", [("dirty", "jsonl"), ("dirty", "parquet"), ("items", "csv")])
def test_staged_partitions_equal_the_import(tmp_path, monkeypatch, name, kind):
    p = write(tmp_path, dirty_rows() if name == "dirty" else item_rows(), kind)
    monkeypatch.setattr(R.reading, "CHUNK_ROWS", 4)
    staged = R.stage_responses(p, TEMPLATES, RES.iso3, tmp_path / "staged")
    for pairs in (
        None,
        {("m", "base")},
        {("n", "base"), ("m", "base")},
        {("n", "regional"), ("m", "nope")},
        {("nobody", "base")},
    ):
        expected = R.import_responses(p, TEMPLATES, RES.iso3, pairs=pairs)
        assert_same_import(expected, staged.imported(pairs))
        assert_same_import(
            expected, R.import_responses(p, TEMPLATES, RES.iso3, pairs=pairs, staging=tmp_path / "staged")
        )
    whole = R.import_responses(p, TEMPLATES, RES.iso3)
    assert staged.pairs == set(zip(whole.generations["model"], whole.generations["template"], strict=False))
    for pair, part in staged.iter_partitions():
        expected = whole.generations[
            (whole.generations["model"] == pair[0]) & (whole.generations["template"] == pair[1])
        ].reset_index(drop=True)
        pd.testing.assert_frame_equal(part, expected)
    assert staged.n_generations == len(whole.generations)
    summary = staged.summary()
    assert summary.generations.empty and list(summary.generations.columns) == R.GENERATION_COLUMNS
    pd.testing.assert_frame_equal(summary.rejects, whole.rejects)


def test_a_staged_file_is_read_once_and_restaged_when_it_changes(tmp_path, monkeypatch):
    p = write(tmp_path, dirty_rows(), "jsonl")
    first = R.stage_responses(p, TEMPLATES, RES.iso3, tmp_path / "staged")
    reads = []
    real = R._raw_chunks
    monkeypatch.setattr(R.reading, "_raw_chunks", lambda path: reads.append(path) or real(path))
    again = R.stage_responses(p, TEMPLATES, RES.iso3, tmp_path / "staged")
    assert reads == [] and again.partitions == first.partitions  # the same file: nothing read again
    p.write_text(json.dumps(dict(BASE, model="other")) + "\n")
    changed = R.stage_responses(p, TEMPLATES, RES.iso3, tmp_path / "staged")
    assert len(reads) == 1 and changed.pairs == {("other", "base")}
    assert len(changed.generations()) == 1 and changed.rejects().empty


def test_one_staging_folder_per_file_path(tmp_path):
    a, b = tmp_path / "a" / "r.jsonl", tmp_path / "b" / "r.jsonl"
    assert R.staging_folder(tmp_path / "home", a) == R.staging_folder(tmp_path / "home", str(a))
    assert R.staging_folder(tmp_path / "home", a) != R.staging_folder(tmp_path / "home", b)
    assert R.staging_folder(tmp_path / "home", a).parent == tmp_path / "home" / "staged-responses"


def test_staging_a_bad_file_names_it(tmp_path):
    p = tmp_path / "r.jsonl"
    p.write_text(json.dumps(BASE) + "\n{not json\n")
    with pytest.raises(R.ResponsesFileError, match=r"r\.jsonl: line 2: not valid JSON"):
        R.stage_responses(p, TEMPLATES, RES.iso3, tmp_path / "staged")
    assert not (tmp_path / "staged" / "manifest.json").exists()
    with pytest.raises(R.ResponsesFileError, match="responses file not found"):
        R.stage_responses(tmp_path / "nope.csv", TEMPLATES, RES.iso3, tmp_path / "staged")


# -- memory ----------------------------------------------------------------------------------------
def _traced_peak(fn) -> int:
    tracemalloc.start()
    try:
        fn()
        return tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()


def grid_file(tmp_path, n_models: int, name: str):
    """``n_models`` models x 2 templates x 150 answers of ~2 KB each."""
    answer = "\n".join(f"{k}. University number {k} - MSc Data Science (Germany)" for k in range(1, 40))
    rows = [
        dict(BASE, model=f"model-{m}", template=t, run=run, response=f"{answer} {m}-{run}")
        for m in range(n_models)
        for t in ("base", "regional")
        for run in range(150)
    ]
    return write(tmp_path, rows, "jsonl", name)


@pytest.mark.slow
def test_staging_memory_does_not_grow_with_the_file(tmp_path, monkeypatch):
    monkeypatch.setattr(R.reading, "CHUNK_ROWS", 100)
    small, large = grid_file(tmp_path, 2, "small"), grid_file(tmp_path, 10, "large")  # 1.4 MB, 6.8 MB
    R.stage_responses(write(tmp_path, [BASE], "jsonl", "warm"), TEMPLATES, RES.iso3, tmp_path / "warm")  # imports
    peaks = {
        p.name: _traced_peak(lambda p=p: R.stage_responses(p, TEMPLATES, RES.iso3, tmp_path / p.stem))
        for p in (small, large)
    }
    assert peaks["large.jsonl"] < 1.5 * peaks["small.jsonl"], peaks  # 5x the rows, about the same memory
    assert peaks["large.jsonl"] < 0.5 * large.stat().st_size, peaks
    whole = _traced_peak(lambda: R.import_responses(large, TEMPLATES, RES.iso3))  # what holding the file costs
    assert peaks["large.jsonl"] < 0.5 * whole, (peaks, whole)
    # one partition read back: its rows, not the file's
    staged = R.stage_responses(large, TEMPLATES, RES.iso3, tmp_path / "large")
    one = _traced_peak(lambda: staged.generations({("model-3", "base")}))
    assert one < 0.25 * large.stat().st_size and len(staged.generations({("model-3", "base")})) == 150


@pytest.mark.parametrize("kind,limit", [("jsonl", 3), ("csv", 10)])
def test_importing_one_10_mb_answer_stays_bounded(tmp_path, kind, limit):
    # an 11 MB file: one 10 MB answer (a model stuck in a loop) among ordinary ones. The whole file used
    # to be read and decoded at once, and the CSV reader held it twice more (150 MB for the CSV)
    long = "1. MIT - MSc Physics (USA)\n" + ("You could also consider ETH Zurich. " * 300_000)[:10_000_000]
    rows = [dict(BASE, run=i, response=long if i == 0 else BASE["response"] * 12) for i in range(2000)]
    p = write(tmp_path, rows, kind)
    size = p.stat().st_size
    assert 10.5e6 < size < 12e6
    imported = []
    peak = _traced_peak(lambda: imported.append(R.import_responses(p, TEMPLATES, RES.iso3)))
    gens = imported[0].generations
    assert len(gens) == 2000 and gens.loc[0, "response"] == long  # stored whole
    assert peak < limit * size, f"peak {peak / 1e6:.0f} MB for a {size / 1e6:.0f} MB file"
