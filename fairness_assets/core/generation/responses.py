"""Bring-your-own generations: reading a responses file (CSV, JSONL or Parquet).

Columns (case-insensitive; documented in docs/responses_format.md):

- ``model``, ``template``, ``run``                            required
- ``gender``, ``economic_class``, ``nationality``              the profile: all three, or exactly
                                                               one for the reduced-context templates
- ``response``                                                 the model's full answer, or
- ``university``, ``program``, ``country`` (+ ``item_index``)  answers already split into items

A file that cannot be read, or lacks a required column, fails with a message naming the file
and the column. Rows that cannot be used (an unknown gender, a missing model, a ``run`` that is
not a whole number in range, a JSON object or array where a single value belongs, ...) are not
dropped silently: they are returned in a rejects table (file row, column, reason) and counted.

Text that no results database can store alike (NUL characters, which PostgreSQL rejects; lone
surrogates, which cannot be encoded as UTF-8) is made storable by :func:`storable_text`, the
rule the results database applies to every text value it writes; a row whose text was altered
keeps it, and says so in its ``text_note`` column (and in the report's ``notes``).
"""

from __future__ import annotations

import contextlib
import csv
import gzip
import json
import math
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Callable, Iterator, Mapping, Optional

import numpy as np
import pandas as pd

from ..reference.corpus import unique_column_names
from ..reference.profiles import ECONOMIC_CLASSES, GENDERS, profile_id

if TYPE_CHECKING:
    from ..reference.prompts import PromptTemplate

REQUIRED = ("model", "template", "run")
# what a generation's ``response`` holds: the answer as written (parsed), or the JSON document of an
# answer imported already split into items (not parsed; see samples_from_items)
TEXT_FORMAT, ITEMS_FORMAT = "text", "items"
SAMPLE_KEY = ["model", "template", "profile_id", "run"]
REJECT_COLUMNS = ["row", "column", "value", "reason"]
NOTE_COLUMNS = ["row", "column", "note"]
PROFILE_COLS = ("gender", "economic_class", "nationality")
ITEM_COLS = ("university", "program", "country")
_ALIASES = {
    "class": "economic_class",
    "economic class": "economic_class",
    "income": "economic_class",
    "economicclass": "economic_class",
    "text": "response",
    "output": "response",
    "generation": "response",
    "answer": "response",
    "sample": "run",
    "run_id": "run",
    "seed_run": "run",
    "prompt_template": "template",
    "model_name": "model",
    "model_id": "model",
    "institution": "university",
    "programme": "program",
    "item": "item_index",
    "rank": "item_index",
}
_CLASS_VALUES = {
    "high": "high",
    "high-income": "high",
    "high income": "high",
    "rich": "high",
    "upper": "high",
    "middle": "middle",
    "moderate": "middle",
    "middle-income": "middle",
    "middle income": "middle",
    "low": "low",
    "low-income": "low",
    "low income": "low",
    "poor": "low",
}
_GENDER_VALUES = {g: g for g in GENDERS} | {
    "man": "male",
    "woman": "female",
    "non-binary": "transgender",
    "nonbinary": "transgender",
    "trans": "transgender",
}
# the largest run the results database's integer column holds (PostgreSQL INTEGER)
MAX_RUN = 2**31 - 1
_INT_RE = re.compile(r"[+-]?[0-9]+")
_NUMBER_RE = re.compile(r"[+-]?(?:[0-9]+\.?[0-9]*|\.[0-9]+)(?:[eE][+-]?[0-9]+)?")
_UNSTORABLE = re.compile("[\x00\ud800-\udfff]")
_SURROGATE = re.compile("[\ud800-\udfff]")
# cell values that are not a single value (a JSON object or array, a Parquet list, bytes)
_NOT_SCALAR = (dict, list, tuple, set, np.ndarray, bytes, bytearray)


def storable_text(value: str) -> tuple[str, str]:
    """``value`` as text that SQLite and PostgreSQL store alike, and what was changed (``""``
    when nothing was): NUL characters are removed (PostgreSQL rejects them in text) and lone
    surrogates (which cannot be encoded as UTF-8) are replaced by U+FFFD. The results database
    applies it to every text value it writes (resources/database.py)."""
    if value.isascii():
        if "\x00" not in value:
            return value, ""
    elif not _UNSTORABLE.search(value):
        return value, ""
    nul = value.count("\x00")
    out, surrogates = _SURROGATE.subn("\ufffd", value.replace("\x00", ""))
    changes = []
    if nul:
        changes.append(f"{nul} NUL character{'s' if nul > 1 else ''} removed")
    if surrogates:
        changes.append(
            f"{surrogates} unencodable character{'s' if surrogates > 1 else ''} (lone surrogate) replaced with U+FFFD"
        )
    return out, ", ".join(changes)


def _kind(value) -> str:
    if isinstance(value, dict):
        return "a JSON object"
    if isinstance(value, (list, tuple, set, np.ndarray)):
        return "a JSON array"
    return type(value).__name__


def _shown(value, limit: int = 80) -> str:
    """A short, printable form of a rejected value (for the rejects table and logs)."""
    try:
        text = json.dumps(value, ensure_ascii=True, default=str)
    except (TypeError, ValueError):
        text = ascii(value)
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _parse_run(value) -> tuple[Optional[int], Optional[str]]:
    """(run, None) for a whole number in 0..MAX_RUN (``3``, ``"3"``, ``3.0``, ``"1e2"``), else
    (None, the reason)."""
    whole = "run must be a whole number >= 0"
    if value is None:
        return None, f"{whole} (empty)"
    if isinstance(value, (bool, np.bool_)):
        return None, f"{whole} (got {str(value).lower()})"
    if isinstance(value, _NOT_SCALAR):
        return None, f"{whole} (got {_kind(value)})"
    if isinstance(value, (int, np.integer)):
        number = int(value)
    else:
        if isinstance(value, (float, np.floating)):
            f = float(value)
        else:
            text = str(value).strip()
            if not text:
                return None, f"{whole} (empty)"
            if _INT_RE.fullmatch(text):
                f = None
                number = int(text)
            elif _NUMBER_RE.fullmatch(text):
                f = float(text)
            else:
                return None, f"{whole} (not a number)"
        if f is not None:
            if not math.isfinite(f):
                return None, f"{whole} (not a finite number)"
            if not f.is_integer():
                return None, f"{whole} (not a whole number)"
            number = int(f)
    if number < 0:
        return None, f"{whole} (negative)"
    if number > MAX_RUN:
        return None, f"{whole} and at most {MAX_RUN} (too large)"
    return number, None


class ResponsesFileError(ValueError):
    """A responses file that cannot be used at all; names the file, row and column."""


@dataclass
class ResponsesReport:
    path: str
    rows_read: int
    rows_used: int
    rejects: pd.DataFrame = field(default_factory=lambda: pd.DataFrame(columns=["row", "column", "value", "reason"]))
    split_items: bool = False
    # rows kept whose text was altered to be storable (see storable_text): row, column, note
    notes: pd.DataFrame = field(default_factory=lambda: pd.DataFrame(columns=["row", "column", "note"]))

    @property
    def rows_rejected(self) -> int:
        return int(self.rejects["row"].nunique()) if len(self.rejects) else 0


# Files are read and validated in chunks of at most CHUNK_ROWS rows (a chunk also closes once it holds
# CHUNK_CHARS characters of text), so that reading never holds more than one chunk of the file beside
# what the caller keeps; the results are the same whatever the chunk size.
CHUNK_ROWS = 20_000
CHUNK_CHARS = 32 * 1024 * 1024


def _file_kind(path: Path) -> str:
    suffix = "".join(path.suffixes[-2:]).lower() if path.suffix.lower() == ".gz" else path.suffix.lower()
    if suffix in (".csv", ".csv.gz", ".tsv", ".tsv.gz", ".jsonl", ".ndjson", ".jsonl.gz", ".parquet", ".pq"):
        return suffix
    raise ResponsesFileError(f"{path}: unknown file type {suffix!r}; use .csv, .jsonl or .parquet")


def _csv_chunks(path: Path, gz: bool, sep: str) -> Iterator[tuple[pd.DataFrame, np.ndarray]]:
    """A CSV/TSV file as text cells, read with the csv module from the open file: NUL characters are
    kept (pandas' C parser cuts a cell at the first NUL, silently), and each row carries the physical
    line where it starts (an answer spanning lines does not shift later rows)."""
    if csv.field_size_limit() < 2**31 - 1:  # answers may be longer than csv's 128 KiB default
        csv.field_size_limit(2**31 - 1)
    opener = gzip.open if gz else open
    with opener(path, "rt", encoding="utf-8-sig", newline="") as fh:
        reader = csv.reader(fh, delimiter=sep, strict=True)
        consumed = 0
        columns: Optional[list[str]] = None
        header_line = width = 0
        cells: list[list] = []
        lines: list[int] = []
        chars = 0
        while True:
            try:
                fields = next(reader)
            except StopIteration:
                break
            except csv.Error as exc:  # the messages of core.reference.corpus.csv_records
                reason = str(exc)
                if "unexpected end of data" in reason:
                    reason = "a quoted field that starts in this record is never closed"
                elif "expected after" in reason:
                    reason = f"text after a closing quote (line {reader.line_num}: {exc})"
                raise ResponsesFileError(f"{path}: line {consumed + 1}: not a readable CSV file ({reason})") from None
            line, consumed = consumed + 1, reader.line_num
            if not fields or (len(fields) == 1 and not fields[0].strip()):  # blank lines
                continue
            if columns is None:
                header_line, columns = line, unique_column_names(fields)  # repeated names made unique as pandas does
                width = len(columns)
                continue
            if len(fields) > width and any(f.strip() for f in fields[width:]):
                raise ResponsesFileError(
                    f"{path}: line {line}: {len(fields)} fields, "
                    f"but the header (line {header_line}) has {width} columns"
                )
            cells.append((fields + [None] * width)[:width])
            lines.append(line)
            chars += sum(len(f) for f in fields)
            if len(cells) >= CHUNK_ROWS or chars >= CHUNK_CHARS:
                yield pd.DataFrame(cells, columns=columns, dtype=object), np.asarray(lines, dtype=np.int64)
                cells, lines, chars = [], [], 0
        if columns is None:
            raise ResponsesFileError(f"{path}: the responses file has no rows")
        if cells or not lines:
            yield pd.DataFrame(cells, columns=columns, dtype=object), np.asarray(lines, dtype=np.int64)


def _jsonl_chunks(path: Path, gz: bool) -> Iterator[tuple[pd.DataFrame, np.ndarray]]:
    """A JSON Lines file, one object per line, as frames of the lines' values (object cells: a
    number stays the number it was, never a float because another row lacks the key)."""
    records: list[dict] = []
    rows: list[int] = []
    chars = 0
    opener = gzip.open if gz else open
    with opener(path, "rt", encoding="utf-8-sig", newline="\n") as fh:
        for lineno, line in enumerate(fh, start=1):
            if not line.strip():
                continue
            try:  # strict=False: a raw control character (a NUL, a tab) inside a string is read
                obj = json.loads(line, strict=False)
            except ValueError as exc:
                raise ResponsesFileError(f"{path}: line {lineno}: not valid JSON ({exc})") from None
            if not isinstance(obj, dict):
                raise ResponsesFileError(f"{path}: line {lineno}: expected a JSON object per line")
            records.append(obj)
            rows.append(lineno)
            chars += len(line)
            del line
            if len(records) >= CHUNK_ROWS or chars >= CHUNK_CHARS:
                yield pd.DataFrame(records, dtype=object), np.asarray(rows, dtype=np.int64)
                records, rows, chars = [], [], 0
    yield pd.DataFrame(records, dtype=object), np.asarray(rows, dtype=np.int64)


def _parquet_chunks(path: Path) -> Iterator[tuple[pd.DataFrame, np.ndarray]]:
    """A Parquet file in record batches (rows numbered from 1)."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    pf = pq.ParquetFile(path)
    meta = pf.schema_arrow.pandas_metadata or {}
    index = {c for c in meta.get("index_columns", []) if isinstance(c, str)}  # a stored pandas index: not data
    columns = [c for c in pf.schema_arrow.names if c not in index]
    start = 1
    empty = True
    for batch in pf.iter_batches(batch_size=CHUNK_ROWS, columns=columns):
        df = pa.Table.from_batches([batch]).to_pandas()
        yield df, np.arange(start, start + len(df), dtype=np.int64)
        start += len(df)
        empty = False
    if empty:
        yield pf.schema_arrow.empty_table().select(columns).to_pandas(), np.zeros(0, dtype=np.int64)


def _raw_chunks(path: Path) -> Iterator[tuple[pd.DataFrame, np.ndarray]]:
    """The file's rows, a chunk at a time, with the file row of each; a failure names the file."""
    suffix = _file_kind(path)
    if suffix in (".csv", ".csv.gz", ".tsv", ".tsv.gz"):
        chunks = _csv_chunks(path, suffix.endswith(".gz"), "\t" if suffix.startswith(".tsv") else ",")
    elif suffix in (".jsonl", ".ndjson", ".jsonl.gz"):
        chunks = _jsonl_chunks(path, suffix.endswith(".gz"))
    else:
        chunks = _parquet_chunks(path)
    while True:
        try:
            chunk = next(chunks)
        except StopIteration:
            return
        except ResponsesFileError:
            raise
        except Exception as exc:  # noqa: BLE001 - any reader failure names the file
            raise ResponsesFileError(
                f"{path}: cannot be read as {suffix.lstrip('.')} ({type(exc).__name__}: {exc})"
            ) from None
        yield chunk


def _make_storable(df: pd.DataFrame, rows: np.ndarray) -> list[tuple]:
    """Apply :func:`storable_text` to every text cell of ``df`` (in place); returns the notes
    (file row, column, what was changed) of the cells it altered."""
    notes = []
    for j, col in enumerate(df.columns):
        s = df.iloc[:, j]
        if not (s.dtype == object or isinstance(s.dtype, pd.StringDtype)):
            continue
        for i, v in enumerate(s.to_numpy()):
            if isinstance(v, str):
                new, note = storable_text(v)
                if note:
                    df.iat[i, j] = new
                    notes.append((int(rows[i]), str(col), note))
    return notes


def _check_columns(path: Path, columns: list[str]) -> bool:
    """Whether the file (its column names, aliases resolved) holds answers already split into items;
    ResponsesFileError naming the file and the column when it cannot be used."""
    missing = [c for c in REQUIRED if c not in columns]
    if missing:
        raise ResponsesFileError(
            f"{path}: missing column(s) {missing} (found {list(columns)}); see docs/responses_format.md"
        )
    split = "response" not in columns
    if split and "university" not in columns:
        raise ResponsesFileError(f"{path}: needs a 'response' column, or 'university' (+ 'program', 'country') columns")
    if not any(c in columns for c in PROFILE_COLS):
        raise ResponsesFileError(f"{path}: needs at least one of the profile columns {list(PROFILE_COLS)}")
    return split


@dataclass
class _Chunk:
    """One chunk of a responses file, validated (:func:`_validate`)."""

    used: pd.DataFrame  # the rows that can be used (read_responses' frame)
    rejects: list  # (row, column, value, reason) of the rows that cannot
    notes: list  # (row, column, note) of the used rows whose text was altered
    rows_read: int
    split: bool  # the file holds answers already split into items


class _SplitChanged(Exception):
    """A JSON Lines file whose first rows had no 'response' (or had one) and later rows did: read again."""

    def __init__(self, split: bool):
        self.split = split


def _validate(df: pd.DataFrame, rows: np.ndarray, split: bool, resolve_nationality, offsets: dict) -> _Chunk:
    """Validate one chunk (column names already canonical). ``offsets`` carries, from chunk to
    chunk, how many item rows each sample has had so far (items are numbered in file order)."""
    # a column the file has but this chunk lacks (a JSON object without the key) is an empty one
    for c in REQUIRED + PROFILE_COLS + (ITEM_COLS if split else ("response",)):
        if c not in df.columns:
            df[c] = None
    df = df.reset_index(drop=True)
    notes = _make_storable(df, rows)
    out = pd.DataFrame({"source_row": rows})
    rejects = []

    # a JSON object or array (or a Parquet list, bytes) where one value belongs: the row is rejected,
    # never turned into a partition or a profile named after the value's repr
    used_cols = [
        c
        for c in REQUIRED + PROFILE_COLS + (ITEM_COLS + ("item_index",) if split else ("response",))
        if c in df.columns
    ]
    structured = {}
    for col in used_cols:
        mask = df[col].map(lambda v: isinstance(v, _NOT_SCALAR)).to_numpy(dtype=bool)
        structured[col] = mask
        if col == "run":
            continue  # reported with the run's own reason below
        for r, v in zip(rows[mask], df.loc[mask, col], strict=False):
            rejects.append((r, col, _shown(v), f"{col} must be a single value (text or a number), not {_kind(v)}"))

    def text(col):
        s = df[col].astype("object")  # noqa: F821 (df: the enclosing frame, deleted after the last text() call)
        s = s.where(s.notna(), None)
        return s.map(
            lambda v: None if v is None or isinstance(v, _NOT_SCALAR) or str(v).strip() == "" else str(v).strip()
        )

    for c in ("model", "template"):
        out[c] = text(c).to_numpy()
        for r in out.loc[out[c].isna().to_numpy() & ~structured[c], "source_row"]:
            rejects.append((r, c, None, f"empty {c}"))
    runs = []
    for r, v in zip(rows, df["run"].astype("object").where(df["run"].notna(), None), strict=False):
        number, reason = _parse_run(v)
        runs.append(number)
        if reason:
            rejects.append(
                (r, "run", None if v is None else (_shown(v) if isinstance(v, _NOT_SCALAR) else str(v)), reason)
            )
    out["run"] = pd.array(runs, dtype="Int64")

    g = text("gender").map(lambda v: None if v is None else _GENDER_VALUES.get(v.lower(), "\x00" + v))
    c = text("economic_class").map(lambda v: None if v is None else _CLASS_VALUES.get(v.lower(), "\x00" + v))
    n = text("nationality")
    for col, s, allowed in (("gender", g, GENDERS), ("economic_class", c, ECONOMIC_CLASSES)):
        bad = s.notna() & s.str.startswith("\x00")  # text is NUL-free here (made storable above)
        for r, v in zip(out.loc[bad.to_numpy(), "source_row"], s[bad], strict=False):
            rejects.append((r, col, v[1:], f"unknown {col} (use one of {list(allowed)})"))
    if resolve_nationality is not None:
        uniq = {v: resolve_nationality(v) for v in pd.unique(n.dropna())}
        bad = n.notna() & n.map(lambda v: v is not None and uniq.get(v) is None)
        for r, v in zip(out.loc[bad.to_numpy(), "source_row"], n[bad], strict=False):
            rejects.append((r, "nationality", v, "nationality is not a country that can be resolved"))
    out["gender"], out["economic_class"], out["nationality"] = g.to_numpy(), c.to_numpy(), n.to_numpy()
    present = out[list(PROFILE_COLS)].notna().sum(axis=1)
    pset = np.select(
        [
            present == 3,
            out["gender"].notna() & (present == 1),
            out["economic_class"].notna() & (present == 1),
            out["nationality"].notna() & (present == 1),
        ],
        ["full", "gender_only", "class_only", "nationality_only"],
        default="",
    )
    structured_profile = np.logical_or.reduce([structured[col] for col in PROFILE_COLS])
    for r in out.loc[(pset == "") & ~structured_profile, "source_row"]:
        rejects.append(
            (
                r,
                "gender/economic_class/nationality",
                None,
                "a profile needs all three attributes, or exactly one (reduced context)",
            )
        )
    out["profile_set"] = pset
    out["profile_id"] = [
        profile_id(s, gg, cc, nn) if s else None
        for s, gg, cc, nn in zip(pset, out["gender"], out["economic_class"], out["nationality"], strict=False)
    ]
    if split:
        for col in ITEM_COLS:
            out[col] = text(col).to_numpy()
        idx = pd.to_numeric(text("item_index"), errors="coerce") if "item_index" in df.columns else None
        out["item_index"] = idx.to_numpy() if idx is not None else np.nan
    else:
        resp = df["response"].astype("object")
        out["response"] = (
            resp.where(resp.notna(), None)
            .map(lambda v: None if v is None or isinstance(v, _NOT_SCALAR) else str(v))
            .to_numpy()
        )
    del df
    by_row: dict[int, str] = {}
    for r, col, note in notes:
        by_row[r] = f"{by_row[r]}; {col}: {note}" if r in by_row else f"{col}: {note}"
    out["text_note"] = [by_row.get(r) for r in out["source_row"]] if by_row else None
    out["text_note"] = out["text_note"].astype(object)

    rejects.sort(key=lambda t: t[0])  # stable: a row's reasons in the order they were found
    bad_rows = {r for r, *_ in rejects}
    used = out[~out["source_row"].isin(bad_rows)].reset_index(drop=True) if bad_rows else out
    if split:
        # items without an explicit position are numbered in file order per response
        keys = list(zip(*(used[k] for k in SAMPLE_KEY), strict=False))
        order = used.groupby(SAMPLE_KEY, sort=False, dropna=False).cumcount().to_numpy()
        if offsets:
            order = order + np.asarray([offsets.get(k, 0) for k in keys], dtype=np.int64)
        for k in keys:
            offsets[k] = offsets.get(k, 0) + 1
        used["item_index"] = used["item_index"].fillna(pd.Series(order, index=used.index)).astype(np.int64)
    kept_notes = [n_ for n_ in notes if n_[0] not in bad_rows]
    return _Chunk(used, rejects, kept_notes, len(out), split)


def _chunks(path: Path, resolve_nationality, split: Optional[bool] = None) -> Iterator[_Chunk]:
    """The file's validated chunks. The columns of a CSV or Parquet file are known from the first
    chunk; a JSON Lines file's are the union of its objects' keys, checked once all are read (and
    :class:`_SplitChanged` raised when later rows change what the first ones said)."""
    if not path.exists():
        raise ResponsesFileError(f"{path}: responses file not found")
    complete = not _file_kind(path).startswith((".jsonl", ".ndjson"))
    columns: dict[str, None] = {}
    offsets: dict = {}
    rows_read = 0
    cache: dict = {}
    resolve = None
    if resolve_nationality is not None:  # each distinct nationality resolved once for the whole file

        def resolve(v):
            if v not in cache:
                cache[v] = resolve_nationality(v)
            return cache[v]

    for df, rows in _raw_chunks(path):
        df.columns = [_ALIASES.get(str(c).strip().lower(), str(c).strip().lower()) for c in df.columns]
        columns.update(dict.fromkeys(df.columns))
        if not len(df):
            continue
        if split is None:
            split = _check_columns(path, list(columns)) if complete else "response" not in columns
        rows_read += len(df)
        yield _validate(df, rows, split, resolve, offsets)
    if not rows_read:
        raise ResponsesFileError(f"{path}: the responses file has no rows")
    if not complete and _check_columns(path, list(columns)) != split:
        raise _SplitChanged(not split)


def _read_all(path: Path, resolve_nationality, each: Callable[[_Chunk], None], reset: Callable[[], None]) -> None:
    """Feed the file's validated chunks to ``each``; ``reset`` forgets what ``each`` kept when a
    JSON Lines file must be read again (its later rows changed whether it is split into items)."""
    split = None
    while True:
        try:
            for chunk in _chunks(path, resolve_nationality, split):
                each(chunk)
            return
        except _SplitChanged as again:
            split = again.split
            reset()


def _concat(parts: list[pd.DataFrame]) -> pd.DataFrame:
    full = [p for p in parts if len(p)]
    if not full:
        return parts[0] if parts else pd.DataFrame()
    return full[0] if len(full) == 1 else pd.concat(full, ignore_index=True)


def read_responses(
    path: str | Path,
    resolve_nationality: Optional[Callable[[str], Optional[str]]] = None,
) -> tuple[pd.DataFrame, ResponsesReport]:
    """Read and validate a responses file.

    Returns one row per response (or per item when the file is already split) with the
    columns ``source_row``, ``model``, ``template``, ``run``, ``gender``, ``economic_class``,
    ``nationality``, ``profile_set``, ``profile_id``, ``text_note`` (what was altered to make
    the row's text storable, else None) and ``response`` (or ``university``, ``program``,
    ``country``, ``item_index``), plus the report of unusable rows and of altered rows. The file
    is read a chunk at a time (:data:`CHUNK_ROWS`); the result is the same whatever the chunk size.
    """
    path = Path(path)
    parts: list[pd.DataFrame] = []
    rejects: list[tuple] = []
    notes: list[tuple] = []
    state = {"rows_read": 0, "split": False}

    def each(chunk: _Chunk) -> None:
        parts.append(chunk.used)
        rejects.extend(chunk.rejects)
        notes.extend(chunk.notes)
        state["rows_read"] += chunk.rows_read
        state["split"] = chunk.split

    def reset() -> None:
        parts.clear(), rejects.clear(), notes.clear()
        state["rows_read"] = 0

    _read_all(path, resolve_nationality, each, reset)
    used = _concat(parts)
    report = ResponsesReport(
        str(path),
        rows_read=state["rows_read"],
        rows_used=len(used),
        rejects=pd.DataFrame(rejects, columns=REJECT_COLUMNS),
        split_items=state["split"],
        notes=pd.DataFrame(notes, columns=NOTE_COLUMNS),
    )
    return used, report


GENERATION_COLUMNS = [
    "partition_key",
    "audit_id",
    "response_id",
    "model",
    "template",
    "template_hash",
    "profile_id",
    "gender",
    "economic_class",
    "nationality",
    "run",
    "seed",
    "prompt",
    "response",
    "model_source",
    "model_revision",
    "backend",
    "decoding_json",
    "text_note",
    "response_format",
]


def response_models(
    path: str | Path,
    resolve_nationality: Optional[Callable[[str], Optional[str]]] = None,
) -> set[str]:
    """The models of the usable rows of a responses file (those :func:`read_responses` returns),
    read a chunk at a time without keeping the rows; errors as :func:`read_responses`."""
    models: set[str] = set()

    def each(chunk: _Chunk) -> None:
        models.update(chunk.used["model"].dropna().astype(str))

    _read_all(Path(path), resolve_nationality, each, models.clear)
    return models


def to_generations(
    responses: pd.DataFrame,
    templates: Mapping[str, "PromptTemplate"],
    source: str,
    source_sha256: str,
    seen: Optional[set] = None,
) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Imported responses -> generation rows (prompt re-rendered from the template files).

    Returns (generations, rejects): rows whose template is unknown, or whose template does
    not fit the profile, and repeated (model, template, profile, run) samples are rejected
    with a reason, never dropped silently. ``seen``: the response ids kept from earlier parts of
    the same file (updated), for a file converted a chunk at a time.
    """
    ok, rej = _to_generations(responses, templates, source, source_sha256, seen)
    return ok[GENERATION_COLUMNS], rej


def import_audit_id(source_sha256: str) -> str:
    """The audit id of the answers imported from a file with this sha256: the same file is the same audit."""
    return f"import-{source_sha256[:12]}"


def _to_generations(responses, templates, source, source_sha256, seen=None, prompts=None):
    """:func:`to_generations` keeping ``source_row``; ``prompts`` caches rendered prompts (one
    string per distinct template and profile, shared by every run and model)."""
    from .samples import sample_ids

    rejects = []
    known = responses["template"].isin(list(templates))
    for r, t in zip(responses.loc[~known, "source_row"], responses.loc[~known, "template"], strict=False):
        rejects.append((r, "template", t, f"unknown template (known: {sorted(templates)})"))
    ok = responses[known].copy()
    fits = [templates[t].profile_set == s for t, s in zip(ok["template"], ok["profile_set"], strict=False)]
    fits = np.asarray(fits, dtype=bool)
    for r, t, s in zip(
        ok.loc[~fits, "source_row"], ok.loc[~fits, "template"], ok.loc[~fits, "profile_set"], strict=False
    ):
        rejects.append(
            (r, "template", t, f"template {t!r} is for {templates[t].profile_set} profiles, row has a {s} profile")
        )
    ok = sample_ids(ok[fits])
    dup = ok.duplicated("response_id", keep="first")
    if seen:
        dup |= ok["response_id"].isin(seen)
    for r, rid in zip(ok.loc[dup, "source_row"], ok.loc[dup, "response_id"], strict=False):
        rejects.append((r, "model/template/profile/run", rid, "repeats an earlier row's sample"))
    ok = ok[~dup].reset_index(drop=True)
    if seen is not None:
        seen.update(ok["response_id"])
    prompts = {} if prompts is None else prompts
    rendered = []
    for key in zip(ok["template"], ok["gender"], ok["economic_class"], ok["nationality"], strict=False):
        if key not in prompts:
            prompts[key] = templates[key[0]].render(*key[1:])
        rendered.append(prompts[key])
    ok["prompt"] = rendered
    ok["template_hash"] = [templates[t].sha256 for t in ok["template"]]
    ok["audit_id"] = import_audit_id(source_sha256)
    ok["model_source"] = source
    ok["model_revision"] = source_sha256
    ok["backend"] = "file"
    ok["decoding_json"] = "{}"
    if "text_note" not in ok:
        ok["text_note"] = None
    if "response_format" not in ok:
        ok["response_format"] = TEXT_FORMAT
    ok["run"] = ok["run"].astype(np.int64)
    rej = pd.DataFrame(rejects, columns=REJECT_COLUMNS)
    return ok, rej


def samples_from_items(items: pd.DataFrame) -> pd.DataFrame:
    """Already-split items (:func:`read_responses` of a file with ``university``/``program``/
    ``country`` columns: one row per item) -> one row per sample, as answers are: ``response`` is
    the JSON document ``{"items": [{"university": ..., "program": ..., "country": ...}, ...]}`` of
    the sample's items in ``item_index`` order (every item kept: how many are used is the
    recommendations' rule, METHOD.md §9) and ``response_format`` is ``items``. The sample's first
    row gives ``source_row``; the items' text notes are joined."""
    cols = list(ITEM_COLS)
    if items.empty:
        return items.drop(columns=cols + ["item_index"], errors="ignore").assign(
            response=pd.Series(dtype=object), response_format=ITEMS_FORMAT
        )
    f = items.sort_values(SAMPLE_KEY + ["item_index"], kind="stable").reset_index(drop=True)
    records = f[cols].astype(object).where(f[cols].notna(), None)
    snippets = pd.Series(
        [json.dumps(dict(zip(cols, r, strict=False)), ensure_ascii=False) for r in records.itertuples(index=False)],
        index=f.index,
    )
    groups = f.groupby(SAMPLE_KEY, sort=False, dropna=False)
    first = groups.head(1).set_index(SAMPLE_KEY)
    docs = snippets.groupby([f[k] for k in SAMPLE_KEY], sort=False, dropna=False).agg(",".join)
    notes = (
        f["text_note"]
        .groupby([f[k] for k in SAMPLE_KEY], sort=False, dropna=False)
        .agg(lambda s: "; ".join(dict.fromkeys(v for v in s if v)) or None)
        if "text_note" in f
        else None
    )
    out = first.drop(columns=cols + ["item_index"], errors="ignore")
    out["response"] = ('{"items": [' + docs + "]}").reindex(out.index).to_numpy()
    if notes is not None:
        out["text_note"] = notes.reindex(out.index).to_numpy()
    out["response_format"] = ITEMS_FORMAT
    return out.reset_index()


def items_from_generations(generations: pd.DataFrame) -> pd.DataFrame:
    """Generations whose ``response_format`` is ``items`` -> one row per item (``university``,
    ``program``, ``country``, ``item_index`` 0, 1, ...) with the generation's other columns; a
    sample without items keeps one row with no university. A document that is not the items
    document of :func:`samples_from_items` raises ValueError naming the response."""
    rows, keep = [], []
    for pos, (rid, text) in enumerate(zip(generations["response_id"], generations["response"], strict=False)):
        try:
            doc = json.loads(text)
            items = doc["items"]
            if not isinstance(items, list) or not all(isinstance(i, dict) for i in items):
                raise TypeError("'items' is not a list of objects")
        except (TypeError, ValueError, KeyError) as exc:
            raise ValueError(
                f"generation {rid}: response_format is 'items' but the response is not an items "
                f"document ({exc}): {_shown(text)}"
            ) from None
        for k, item in enumerate(items or [{}]):
            rows.append([item.get(c) for c in ITEM_COLS] + [k])
            keep.append(pos)
    meta = generations.drop(columns=["response"]).iloc[keep].reset_index(drop=True)
    return pd.concat([meta, pd.DataFrame(rows, columns=list(ITEM_COLS) + ["item_index"])], axis=1)


@dataclass
class ImportedResponses:
    """A responses file made into generation rows (:func:`import_responses`)."""

    generations: pd.DataFrame
    rejects: pd.DataFrame  # row, column, value, reason: every row not used, and why
    notes: pd.DataFrame  # rows whose text was altered to be stored, and how
    rows_read: int
    split_items: bool
    sha256: str
    models: set = field(default_factory=set)  # every model the file names
    pairs: set = field(default_factory=set)  # every (model, template) the file names

    @property
    def rows_rejected(self) -> int:
        return int(self.rejects["row"].nunique()) if len(self.rejects) else 0


_PIPE_REASON = "'|' separates model and template in partition keys: rename the model"


class _Converter:
    """The validated chunks of a responses file -> generation rows, a chunk at a time: what
    :func:`import_responses` and :func:`stage_responses` share. ``keep(pair_rows)`` receives the
    generation rows (answers as written) or the item rows (already split, made samples at the end)
    of the wanted (model, template) pairs; the rejects and notes are kept here (they are small)."""

    def __init__(self, templates, source: str, sha256: str, pairs: Optional[set], keep: Callable[[pd.DataFrame], None]):
        self.templates, self.source, self.sha256, self.wanted, self.keep = templates, source, sha256, pairs, keep
        self.reset()

    def reset(self) -> None:
        self.read_rejects: list[tuple] = []
        self.piped: list[tuple] = []
        self.converted: list[pd.DataFrame] = []  # to_generations' rejects, with the row's model and template
        self.notes: list[tuple] = []
        self.rows_read = 0
        self.split = False
        self.named: set = set()
        self.seen: set = set()
        self.prompts: dict = {}
        self.empty: Optional[pd.DataFrame] = None

    def add(self, chunk: _Chunk) -> None:
        self.read_rejects.extend(chunk.rejects)
        self.notes.extend(chunk.notes)
        self.rows_read += chunk.rows_read
        self.split = chunk.split
        frame = chunk.used
        if self.empty is None:
            self.empty = frame.iloc[:0]
        if not len(frame):
            return
        piped = frame["model"].astype(str).str.contains("|", regex=False).to_numpy()
        if piped.any():
            self.piped += [
                (r, "model", m, _PIPE_REASON)
                for r, m in zip(frame.loc[piped, "source_row"], frame.loc[piped, "model"], strict=False)
            ]
            frame = frame[~piped]
        self.named.update(zip(frame["model"].astype(str), frame["template"].astype(str), strict=False))
        if self.wanted is not None:
            wanted = np.fromiter(
                ((m, t) in self.wanted for m, t in zip(frame["model"], frame["template"], strict=False)),
                dtype=bool,
                count=len(frame),
            )
            frame = frame[wanted]
        if not len(frame):
            return
        if self.split:
            self.keep(frame)  # a sample's items may lie in several chunks: made samples at the end
        else:
            self.keep(self.convert(frame))

    def convert(self, frame: pd.DataFrame) -> pd.DataFrame:
        """Answers (or samples) -> generation rows (with ``source_row``); their rejects are kept."""
        table, rejects = _to_generations(frame, self.templates, self.source, self.sha256, self.seen, self.prompts)
        if len(rejects):
            pair = frame.set_index("source_row")[["model", "template"]]
            self.converted.append(rejects.join(pair, on="row"))
        return table

    def rejects(self, pairs: Optional[set] = None, with_pair: bool = False) -> pd.DataFrame:
        """Every reject, in file order, as :func:`import_responses` gives them for ``pairs``; with
        ``with_pair``, the ``model`` and ``template`` of the rows that to_generations rejected (a
        pairs filter leaves those out when their pair is not wanted; None for the others)."""
        cols = REJECT_COLUMNS + ["model", "template"]
        parts = [
            pd.DataFrame([t + (None, None) for t in self.read_rejects], columns=cols),
            pd.DataFrame([t + (None, None) for t in self.piped], columns=cols),
        ] + self.converted
        parts = [f for f in parts if len(f)]
        if not parts:
            return pd.DataFrame(columns=cols if with_pair else REJECT_COLUMNS)
        rej = pd.concat(parts, ignore_index=True).sort_values("row", kind="stable").reset_index(drop=True)
        if pairs is not None:
            own = rej["model"].isna() | pd.Series(
                [(m, t) in pairs for m, t in zip(rej["model"], rej["template"], strict=False)], index=rej.index
            )
            rej = rej[own.to_numpy()].reset_index(drop=True)
        return rej if with_pair else rej[REJECT_COLUMNS]

    def empty_generations(self) -> pd.DataFrame:
        base = self.empty if self.empty is not None else pd.DataFrame(columns=["source_row", "model", "template"])
        if self.split:
            base = samples_from_items(base)
        return _to_generations(base, self.templates, self.source, self.sha256)[0]


def import_responses(
    path: str | Path,
    templates: Mapping[str, "PromptTemplate"],
    resolve_nationality: Optional[Callable[[str], Optional[str]]] = None,
    pairs: Optional[set] = None,
    staging: Optional[str | Path] = None,
) -> ImportedResponses:
    """Read a responses file (answers as written, or already split into items) and make it
    generation rows, keeping the (model, template) ``pairs`` when given; what cannot be used is
    in ``rejects`` with the reason. The one import path of the ``generations`` asset (and so of
    ``fairness-audit score``).

    The file is read a chunk at a time and only the rows of ``pairs`` are kept, so memory follows
    what is returned, not the file. With ``staging`` (a folder), the file is converted once into
    that folder (:func:`stage_responses`) and each later import of the same file reads only the
    partitions it asks for."""
    if staging is not None:
        return stage_responses(path, templates, resolve_nationality, staging).imported(pairs)
    from ..reference.corpus import file_sha256

    path = Path(path)
    sha = file_sha256(path) if path.exists() else ""
    kept: list[pd.DataFrame] = []
    conv = _Converter(templates, str(path), sha, pairs, kept.append)

    def reset() -> None:
        kept.clear()
        conv.reset()

    _read_all(path, resolve_nationality, conv.add, reset)
    if conv.split:
        table = conv.convert(samples_from_items(_concat(kept))) if kept else conv.empty_generations()
    else:
        table = _concat(kept) if kept else conv.empty_generations()
    return ImportedResponses(
        table[GENERATION_COLUMNS],
        conv.rejects(pairs),
        pd.DataFrame(conv.notes, columns=NOTE_COLUMNS),
        conv.rows_read,
        conv.split,
        sha,
        {m for m, _ in conv.named},
        set(conv.named),
    )


# ----------------------------------------------------------------------------- staging
STAGING_VERSION = 1
_MANIFEST = "manifest.json"


def _arrow_schema(columns: list[str], ints: tuple = ("run", "seed", "source_row", "item_index")):
    import pyarrow as pa

    return pa.schema([(c, pa.int64() if c in ints else pa.string()) for c in columns])


def _write_part(frame: pd.DataFrame, folder: Path, columns: list[str], n: int) -> None:
    import pyarrow as pa
    import pyarrow.parquet as pq

    folder.mkdir(parents=True, exist_ok=True)
    table = pa.Table.from_pandas(frame[columns], schema=_arrow_schema(columns), preserve_index=False)
    pq.write_table(table, folder / f"part-{n:06d}.parquet")


def _read_parts(folder: Path) -> pd.DataFrame:
    import pyarrow as pa
    import pyarrow.parquet as pq

    files = sorted(folder.glob("part-*.parquet"))
    return pa.concat_tables([pq.read_table(f) for f in files]).to_pandas()


_ITEM_STAGE_COLUMNS = [
    "source_row",
    "model",
    "template",
    "run",
    "gender",
    "economic_class",
    "nationality",
    "profile_set",
    "profile_id",
    "university",
    "program",
    "country",
    "item_index",
    "text_note",
]


@dataclass
class StagedResponses:
    """A responses file converted once into generation rows, stored by (model, template) as Parquet
    files in a folder (:func:`stage_responses`): the file's rejects, notes and partitions are known
    without holding its rows, and :meth:`generations` reads only the partitions asked for."""

    folder: Path
    source: str
    sha256: str
    rows_read: int
    split_items: bool
    partitions: dict  # (model, template) -> (subfolder, rows)
    named: set  # every (model, template) the file names (usable or not)

    @property
    def models(self) -> set:
        return {m for m, _ in self.named}

    @property
    def pairs(self) -> set:
        """The (model, template) pairs with usable rows."""
        return set(self.partitions)

    @property
    def n_generations(self) -> int:
        """How many generation rows the file gave (every partition)."""
        return sum(n for _, n in self.partitions.values())

    def rejects(self, pairs: Optional[set] = None) -> pd.DataFrame:
        """The rejects of the file as :func:`import_responses` gives them for ``pairs``."""
        r = pd.read_parquet(self.folder / "rejects.parquet")
        if not len(r):
            return pd.DataFrame(columns=REJECT_COLUMNS)
        if pairs is not None:  # to_generations' rejects (they name their pair) only for the pairs asked for
            own = r["model"].isna() | pd.Series(
                [(m, t) in pairs for m, t in zip(r["model"], r["template"], strict=False)], index=r.index
            )
            r = r[own.to_numpy()].reset_index(drop=True)
        return r[REJECT_COLUMNS]

    def notes(self) -> pd.DataFrame:
        n = pd.read_parquet(self.folder / "notes.parquet")
        n["row"] = n["row"].astype(np.int64)
        return n

    def generations(self, pairs: Optional[set] = None) -> pd.DataFrame:
        """The generation rows of ``pairs`` (every pair when None), in the order
        :func:`import_responses` returns them."""
        want = [p for p in self.partitions if pairs is None or p in pairs]
        frames = [_read_parts(self.folder / "partitions" / self.partitions[p][0]) for p in want]
        frames = [f for f in frames if len(f)]
        if not frames:
            return pd.read_parquet(self.folder / "empty.parquet")[GENERATION_COLUMNS]
        table = frames[0] if len(frames) == 1 else pd.concat(frames, ignore_index=True)
        order = SAMPLE_KEY if self.split_items else ["source_row"]
        if len(frames) > 1:
            table = table.sort_values(order, kind="stable").reset_index(drop=True)
        return table[GENERATION_COLUMNS]

    def iter_partitions(self, pairs: Optional[set] = None) -> Iterator[tuple[tuple[str, str], pd.DataFrame]]:
        """((model, template), generation rows) per partition, one partition in memory at a time."""
        for p in self.partitions:
            if pairs is None or p in pairs:
                yield p, self.generations({p})

    def imported(self, pairs: Optional[set] = None) -> ImportedResponses:
        """What :func:`import_responses` returns for ``pairs``, read from the staged files."""
        return ImportedResponses(
            self.generations(pairs),
            self.rejects(pairs),
            self.notes(),
            self.rows_read,
            self.split_items,
            self.sha256,
            self.models,
            set(self.named),
        )

    def summary(self) -> ImportedResponses:
        """What :func:`import_responses` returns, without the generation rows (an empty frame):
        rejects, notes, rows read, the models and pairs of the file."""
        return ImportedResponses(
            pd.read_parquet(self.folder / "empty.parquet")[GENERATION_COLUMNS],
            self.rejects(),
            self.notes(),
            self.rows_read,
            self.split_items,
            self.sha256,
            self.models,
            set(self.named),
        )


def staging_folder(root: str | Path, path: str | Path) -> Path:
    """Where a responses file is staged under ``root`` (e.g. the results folder): one folder per
    file path, so that every run importing the same file reuses it (:func:`stage_responses`
    replaces its content when the file changes)."""
    import hashlib

    digest = hashlib.sha256(str(Path(path).expanduser().resolve()).encode("utf-8")).hexdigest()[:16]
    return Path(root) / "staged-responses" / f"{Path(path).name[:40]}-{digest}"


def _staging_key(path: Path, templates: Mapping[str, "PromptTemplate"], sha: str) -> dict:
    st = path.stat()
    return {
        "version": STAGING_VERSION,
        "source": str(path.resolve()),
        "size": st.st_size,
        "mtime_ns": st.st_mtime_ns,
        "sha256": sha,
        "templates": {k: templates[k].sha256 for k in sorted(templates)},
    }


def _open_staged(folder: Path, key: dict) -> Optional[StagedResponses]:
    try:
        manifest = json.loads((folder / _MANIFEST).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    if manifest.get("key") != key:
        return None
    return StagedResponses(
        folder,
        manifest["key"]["source"],
        manifest["key"]["sha256"],
        manifest["rows_read"],
        manifest["split_items"],
        {(m, t): (sub, n) for m, t, sub, n in manifest["partitions"]},
        {tuple(p) for p in manifest["named"]},
    )


def stage_responses(
    path: str | Path,
    templates: Mapping[str, "PromptTemplate"],
    resolve_nationality: Optional[Callable[[str], Optional[str]]] = None,
    folder: str | Path = "",
) -> StagedResponses:
    """Read and validate a responses file once, a chunk at a time, and store its generation rows by
    (model, template) as Parquet files in ``folder`` (created; what this function wrote there before
    is replaced): then any partition is read back alone, without reading the file again, and
    memory never holds the whole file. A folder already holding this file (same path, size,
    modification time, SHA-256 and templates) is reused as it is. Errors, rejects and notes are
    those of :func:`import_responses`."""
    import shutil

    from ..reference.corpus import file_sha256

    path, folder = Path(path), Path(folder)
    if not str(folder):
        raise ValueError("stage_responses: give the folder to stage the responses file in")
    if not path.exists():
        raise ResponsesFileError(f"{path}: responses file not found")
    folder.mkdir(parents=True, exist_ok=True)
    with _folder_lock(folder):
        key = _staging_key(path, templates, file_sha256(path))
        staged = _open_staged(folder, key)
        if staged is not None:
            return staged
        for name in (_MANIFEST, "rejects.parquet", "notes.parquet", "empty.parquet"):
            (folder / name).unlink(missing_ok=True)
        for sub in ("partitions", "items"):
            shutil.rmtree(folder / sub, ignore_errors=True)
        subfolders: dict = {}  # (model, template) -> its folder's name
        rows: dict = {}  # (model, template) -> rows staged
        parts: dict = {}  # folder -> part files written
        gen_columns = GENERATION_COLUMNS + ["source_row"]

        def write(frame: pd.DataFrame, where: Path, columns: list[str]) -> None:
            parts[where] = parts.get(where, 0) + 1
            _write_part(frame, where, columns, parts[where] - 1)

        def keep(frame: pd.DataFrame) -> None:
            base, columns = ("items", _ITEM_STAGE_COLUMNS) if conv.split else ("partitions", gen_columns)
            for pair, part in frame.groupby(["model", "template"], sort=False):
                name = subfolders.setdefault(pair, f"p{len(subfolders):05d}")
                write(part, folder / base / name, columns)
                rows[pair] = rows.get(pair, 0) + len(part)

        def reset() -> None:
            conv.reset()
            subfolders.clear(), rows.clear(), parts.clear()
            for s in ("partitions", "items"):
                shutil.rmtree(folder / s, ignore_errors=True)

        conv = _Converter(templates, str(path), key["sha256"], None, keep)
        _read_all(path, resolve_nationality, conv.add, reset)
        if conv.split:  # one pair at a time: its items made samples, then generation rows
            for pair, name in subfolders.items():
                table = conv.convert(samples_from_items(_read_parts(folder / "items" / name)))
                rows[pair] = len(table)
                if len(table):
                    write(table, folder / "partitions" / name, gen_columns)
            shutil.rmtree(folder / "items", ignore_errors=True)
        _write_frame(
            conv.rejects(with_pair=True),
            folder / "rejects.parquet",
            REJECT_COLUMNS + ["model", "template"],
            ints=("row",),
        )
        _write_frame(
            pd.DataFrame(conv.notes, columns=NOTE_COLUMNS), folder / "notes.parquet", NOTE_COLUMNS, ints=("row",)
        )
        empty = conv.empty_generations()
        _write_frame(empty, folder / "empty.parquet", GENERATION_COLUMNS)
        partitions = [[m, t, subfolders[(m, t)], n] for (m, t), n in rows.items() if n]
        manifest = {
            "key": key,
            "rows_read": conv.rows_read,
            "split_items": conv.split,
            "partitions": partitions,
            "named": sorted(conv.named),
        }
        tmp = folder / (_MANIFEST + ".tmp")
        tmp.write_text(json.dumps(manifest), encoding="utf-8")
        tmp.replace(folder / _MANIFEST)  # written last: a folder without it is never read
    staged = _open_staged(folder, key)
    assert staged is not None
    return staged


def _write_frame(frame: pd.DataFrame, path: Path, columns: list[str], ints: tuple = ("run", "seed")) -> None:
    import pyarrow as pa
    import pyarrow.parquet as pq

    value = frame[columns].copy()
    for c in columns:
        if c not in ints:
            value[c] = value[c].map(lambda v: None if v is None or (isinstance(v, float) and math.isnan(v)) else str(v))
    pq.write_table(pa.Table.from_pandas(value, schema=_arrow_schema(columns, ints), preserve_index=False), path)


@contextlib.contextmanager
def _folder_lock(folder: Path):
    """One process stages into a folder at a time (others wait, then reuse what it wrote)."""
    try:
        import fcntl
    except ImportError:  # pragma: no cover - not POSIX: no lock
        yield
        return
    with open(folder / ".lock", "w") as fh:
        fcntl.flock(fh, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(fh, fcntl.LOCK_UN)
