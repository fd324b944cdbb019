"""A responses file read a chunk at a time: its kind (CSV/TSV, JSON Lines, Parquet, gzipped or not),
the readers of each kind, the validated chunks (:mod:`.validating`) and their assembly into
:func:`read_responses` (and :func:`response_models`). The profile columns are the axes of the active
catalogue (or of the ``design`` a caller gives, made active while the file is read)."""

from __future__ import annotations

import csv
import gzip
import json
from pathlib import Path
from typing import TYPE_CHECKING, Callable, Iterator, Optional

import numpy as np
import pandas as pd

from ...reference import axes
from ...reference.corpus import unique_column_names
from .validating import (
    NOTE_COLUMNS,
    REJECT_COLUMNS,
    ResponsesFileError,
    ResponsesReport,
    _check_columns,
    _Chunk,
    _validate,
    canonical_columns,
    column_aliases,
    crossed_axes,
)

if TYPE_CHECKING:
    from ...reference.design import Design

Resolver = Callable[[str], Optional[str]]  # the home axis's check: a value -> its country, or None

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


class _SplitChanged(Exception):
    """A JSON Lines file whose first rows had no 'response' (or had one) and later rows did: read again."""

    def __init__(self, split: bool):
        self.split = split


def _chunks(
    path: Path, resolve_home: Optional[Resolver], split: Optional[bool] = None, crossed: Optional[tuple] = None
) -> Iterator[_Chunk]:
    """The file's validated chunks. The columns of a CSV or Parquet file are known from the first
    chunk; a JSON Lines file's are the union of its objects' keys, checked once all are read (and
    :class:`_SplitChanged` raised when later rows change what the first ones said). ``crossed``: the
    axes a ``full`` profile states (every axis of the active catalogue when None)."""
    if not path.exists():
        raise ResponsesFileError(f"{path}: responses file not found")
    complete = not _file_kind(path).startswith((".jsonl", ".ndjson"))
    columns: dict[str, None] = {}
    offsets: dict = {}
    rows_read = 0
    cache: dict = {}
    resolve = None
    if resolve_home is not None:  # each distinct home value resolved once for the whole file

        def resolve(v):
            if v not in cache:
                cache[v] = resolve_home(v)
            return cache[v]

    aliases = column_aliases()
    for df, rows in _raw_chunks(path):
        df.columns = canonical_columns(df.columns, aliases)
        columns.update(dict.fromkeys(df.columns))
        if not len(df):
            continue
        if split is None:
            split = _check_columns(path, list(columns)) if complete else "response" not in columns
        rows_read += len(df)
        yield _validate(df, rows, split, resolve, offsets, crossed)
    if not rows_read:
        raise ResponsesFileError(f"{path}: the responses file has no rows")
    if not complete and _check_columns(path, list(columns)) != split:
        raise _SplitChanged(not split)


def _read_all(
    path: Path,
    resolve_home: Optional[Resolver],
    each: Callable[[_Chunk], None],
    reset: Callable[[], None],
    crossed: Optional[tuple] = None,
) -> None:
    """Feed the file's validated chunks to ``each``; ``reset`` forgets what ``each`` kept when a
    JSON Lines file must be read again (its later rows changed whether it is split into items)."""
    split = None
    while True:
        try:
            for chunk in _chunks(path, resolve_home, split, crossed):
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
    resolve_home: Optional[Resolver] = None,
    *,
    design: Optional["Design"] = None,
) -> tuple[pd.DataFrame, ResponsesReport]:
    """Read and validate a responses file.

    Returns one row per response (or per item when the file is already split) with the
    columns ``source_row``, ``model``, ``template``, ``run``, one per axis of the active catalogue
    (the design's: ``design``'s when given), ``profile_set``, ``profile_id``, ``text_note`` (what was
    altered to make the row's text storable, else None) and ``response`` (or ``university``,
    ``program``, ``country``, ``item_index``), plus the report of unusable rows and of altered rows.
    ``resolve_home`` checks the home axis's values (a value it maps to None is rejected). A row stating
    every axis the design's grid crosses (every axis, without a design) is a ``full`` profile, one
    stating one axis that axis's one-at-a-time profile. The file is read a chunk at a time
    (:data:`CHUNK_ROWS`); the result is the same whatever the chunk size.
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

    with axes.using(design.catalogue if design is not None else None):
        _read_all(path, resolve_home, each, reset, crossed_axes(design))
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


def response_models(
    path: str | Path,
    resolve_home: Optional[Resolver] = None,
    *,
    design: Optional["Design"] = None,
) -> set[str]:
    """The models of the usable rows of a responses file (those :func:`read_responses` returns),
    read a chunk at a time without keeping the rows; errors as :func:`read_responses`."""
    models: set[str] = set()

    def each(chunk: _Chunk) -> None:
        models.update(chunk.used["model"].dropna().astype(str))

    with axes.using(design.catalogue if design is not None else None):
        _read_all(Path(path), resolve_home, each, models.clear, crossed_axes(design))
    return models
