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

import gzip
import json
import math
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Callable, Mapping, Optional

import numpy as np
import pandas as pd

from .corpus import CSVLineError, csv_records, unique_column_names
from .profiles import ECONOMIC_CLASSES, GENDERS, profile_id

if TYPE_CHECKING:
    from .prompts import PromptTemplate

REQUIRED = ("model", "template", "run")
# what a generation's ``response`` holds: the answer as written (parsed), or the JSON document of an
# answer imported already split into items (not parsed; see samples_from_items)
TEXT_FORMAT, ITEMS_FORMAT = "text", "items"
SAMPLE_KEY = ["model", "template", "profile_id", "run"]
PROFILE_COLS = ("gender", "economic_class", "nationality")
ITEM_COLS = ("university", "program", "country")
_ALIASES = {
    "class": "economic_class", "economic class": "economic_class", "income": "economic_class",
    "economicclass": "economic_class", "text": "response", "output": "response", "generation": "response",
    "answer": "response", "sample": "run", "run_id": "run", "seed_run": "run", "prompt_template": "template",
    "model_name": "model", "model_id": "model", "institution": "university", "programme": "program",
    "item": "item_index", "rank": "item_index",
}
_CLASS_VALUES = {
    "high": "high", "high-income": "high", "high income": "high", "rich": "high", "upper": "high",
    "middle": "middle", "moderate": "middle", "middle-income": "middle", "middle income": "middle",
    "low": "low", "low-income": "low", "low income": "low", "poor": "low",
}
_GENDER_VALUES = {g: g for g in GENDERS} | {"man": "male", "woman": "female", "non-binary": "transgender",
                                            "nonbinary": "transgender", "trans": "transgender"}
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
        changes.append(f"{surrogates} unencodable character{'s' if surrogates > 1 else ''} "
                       "(lone surrogate) replaced with U+FFFD")
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


def _read_csv(path: Path, gz: bool, sep: str) -> tuple[pd.DataFrame, np.ndarray]:
    """A CSV/TSV file as text cells, read with the csv module: NUL characters are kept (pandas'
    C parser cuts a cell at the first NUL, silently), and each row carries the physical line
    where it starts (an answer spanning lines does not shift later rows)."""
    data = gzip.decompress(path.read_bytes()) if gz else path.read_bytes()
    try:
        records = csv_records(data.decode("utf-8-sig"), sep)
    except CSVLineError as exc:
        raise ResponsesFileError(f"{path}: line {exc.line}: not a readable CSV file ({exc.reason})") from None
    records = [(line, f) for line, f in records if f and not (len(f) == 1 and not f[0].strip())]  # blank lines
    if not records:
        raise ResponsesFileError(f"{path}: the responses file has no rows")
    header_line, header = records[0]
    columns = unique_column_names(header)  # repeated names made unique as pandas does: a, a.1, ...
    width = len(columns)
    cells, lines = [], []
    for line, fields in records[1:]:
        if len(fields) > width and any(f.strip() for f in fields[width:]):
            raise ResponsesFileError(
                f"{path}: line {line}: {len(fields)} fields, but the header (line {header_line}) has {width} columns"
            )
        cells.append((fields + [None] * width)[:width])
        lines.append(line)
    return pd.DataFrame(cells, columns=columns, dtype=object), np.asarray(lines, dtype=np.int64)


def _read(path: Path) -> tuple[pd.DataFrame, np.ndarray]:
    suffix = "".join(path.suffixes[-2:]).lower() if path.suffix.lower() == ".gz" else path.suffix.lower()
    try:
        if suffix in (".csv", ".csv.gz", ".tsv", ".tsv.gz"):
            df, rows = _read_csv(path, suffix.endswith(".gz"), "\t" if suffix.startswith(".tsv") else ",")
        elif suffix in (".jsonl", ".ndjson", ".jsonl.gz"):
            records, rows = [], []
            opener = gzip.open if suffix.endswith(".gz") else open
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
            df = pd.DataFrame.from_records(records)
            rows = np.asarray(rows, dtype=np.int64)
        elif suffix in (".parquet", ".pq"):
            df = pd.read_parquet(path)
            rows = np.arange(1, len(df) + 1)  # 1-based row numbers
        else:
            raise ResponsesFileError(f"{path}: unknown file type {suffix!r}; use .csv, .jsonl or .parquet")
    except ResponsesFileError:
        raise
    except Exception as exc:  # noqa: BLE001 - any reader failure names the file
        raise ResponsesFileError(f"{path}: cannot be read as {suffix.lstrip('.')} ({type(exc).__name__}: {exc})") from None
    return df, rows


def _make_storable(df: pd.DataFrame, rows: np.ndarray) -> pd.DataFrame:
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
    return pd.DataFrame(notes, columns=["row", "column", "note"])


def read_responses(
    path: str | Path,
    resolve_nationality: Optional[Callable[[str], Optional[str]]] = None,
) -> tuple[pd.DataFrame, ResponsesReport]:
    """Read and validate a responses file.

    Returns one row per response (or per item when the file is already split) with the
    columns ``source_row``, ``model``, ``template``, ``run``, ``gender``, ``economic_class``,
    ``nationality``, ``profile_set``, ``profile_id``, ``text_note`` (what was altered to make
    the row's text storable, else None) and ``response`` (or ``university``, ``program``,
    ``country``, ``item_index``), plus the report of unusable rows and of altered rows.
    """
    path = Path(path)
    if not path.exists():
        raise ResponsesFileError(f"{path}: responses file not found")
    df, rows = _read(path)
    if df.empty:
        raise ResponsesFileError(f"{path}: the responses file has no rows")
    df.columns = [_ALIASES.get(str(c).strip().lower(), str(c).strip().lower()) for c in df.columns]
    missing = [c for c in REQUIRED if c not in df.columns]
    if missing:
        raise ResponsesFileError(
            f"{path}: missing column(s) {missing} (found {list(df.columns)}); see docs/responses_format.md"
        )
    split = "response" not in df.columns
    if split and "university" not in df.columns:
        raise ResponsesFileError(f"{path}: needs a 'response' column, or 'university' (+ 'program', 'country') columns")
    if not any(c in df.columns for c in PROFILE_COLS):
        raise ResponsesFileError(f"{path}: needs at least one of the profile columns {list(PROFILE_COLS)}")
    for c in PROFILE_COLS + (ITEM_COLS if split else ("response",)):
        if c not in df.columns:
            df[c] = None
    df = df.reset_index(drop=True)
    notes = _make_storable(df, rows)
    out = pd.DataFrame({"source_row": rows})
    rejects = []

    # a JSON object or array (or a Parquet list, bytes) where one value belongs: the row is rejected,
    # never turned into a partition or a profile named after the value's repr
    used_cols = [c for c in REQUIRED + PROFILE_COLS + (ITEM_COLS + ("item_index",) if split else ("response",))
                 if c in df.columns]
    structured = {}
    for col in used_cols:
        mask = df[col].map(lambda v: isinstance(v, _NOT_SCALAR)).to_numpy(dtype=bool)
        structured[col] = mask
        if col == "run":
            continue  # reported with the run's own reason below
        for r, v in zip(rows[mask], df.loc[mask, col]):
            rejects.append((r, col, _shown(v), f"{col} must be a single value (text or a number), not {_kind(v)}"))

    def text(col):
        s = df[col].astype("object")
        s = s.where(s.notna(), None)
        return s.map(lambda v: None if v is None or isinstance(v, _NOT_SCALAR) or str(v).strip() == ""
                     else str(v).strip())

    for c in ("model", "template"):
        out[c] = text(c).to_numpy()
        for r in out.loc[out[c].isna().to_numpy() & ~structured[c], "source_row"]:
            rejects.append((r, c, None, f"empty {c}"))
    runs = []
    for r, v in zip(rows, df["run"].astype("object").where(df["run"].notna(), None)):
        number, reason = _parse_run(v)
        runs.append(number)
        if reason:
            rejects.append((r, "run", None if v is None else (_shown(v) if isinstance(v, _NOT_SCALAR) else str(v)),
                            reason))
    out["run"] = pd.array(runs, dtype="Int64")

    g = text("gender").map(lambda v: None if v is None else _GENDER_VALUES.get(v.lower(), "\x00" + v))
    c = text("economic_class").map(lambda v: None if v is None else _CLASS_VALUES.get(v.lower(), "\x00" + v))
    n = text("nationality")
    for col, s, allowed in (("gender", g, GENDERS), ("economic_class", c, ECONOMIC_CLASSES)):
        bad = s.notna() & s.str.startswith("\x00")  # text is NUL-free here (made storable above)
        for r, v in zip(out.loc[bad.to_numpy(), "source_row"], s[bad]):
            rejects.append((r, col, v[1:], f"unknown {col} (use one of {list(allowed)})"))
    if resolve_nationality is not None:
        uniq = {v: resolve_nationality(v) for v in pd.unique(n.dropna())}
        bad = n.notna() & n.map(lambda v: v is not None and uniq.get(v) is None)
        for r, v in zip(out.loc[bad.to_numpy(), "source_row"], n[bad]):
            rejects.append((r, "nationality", v, "nationality is not a country that can be resolved"))
    out["gender"], out["economic_class"], out["nationality"] = g.to_numpy(), c.to_numpy(), n.to_numpy()
    present = out[list(PROFILE_COLS)].notna().sum(axis=1)
    pset = np.select(
        [present == 3, out["gender"].notna() & (present == 1), out["economic_class"].notna() & (present == 1),
         out["nationality"].notna() & (present == 1)],
        ["full", "gender_only", "class_only", "nationality_only"], default="",
    )
    structured_profile = np.logical_or.reduce([structured[col] for col in PROFILE_COLS])
    for r in out.loc[(pset == "") & ~structured_profile, "source_row"]:
        rejects.append((r, "gender/economic_class/nationality", None,
                        "a profile needs all three attributes, or exactly one (reduced context)"))
    out["profile_set"] = pset
    out["profile_id"] = [
        profile_id(s, gg, cc, nn) if s else None
        for s, gg, cc, nn in zip(pset, out["gender"], out["economic_class"], out["nationality"])
    ]
    if split:
        for col in ITEM_COLS:
            out[col] = text(col).to_numpy()
        idx = pd.to_numeric(text("item_index"), errors="coerce") if "item_index" in df.columns else None
        out["item_index"] = idx.to_numpy() if idx is not None else np.nan
    else:
        resp = df["response"].astype("object")
        out["response"] = resp.where(resp.notna(), None).map(
            lambda v: None if v is None or isinstance(v, _NOT_SCALAR) else str(v)).to_numpy()
    by_row = notes.groupby("row", sort=False).apply(
        lambda g: "; ".join(f"{col}: {note}" for col, note in zip(g["column"], g["note"])), include_groups=False,
    ) if len(notes) else pd.Series(dtype=object)
    out["text_note"] = out["source_row"].map(by_row).astype(object).where(out["source_row"].isin(by_row.index), None)

    rej = pd.DataFrame(rejects, columns=["row", "column", "value", "reason"]).sort_values("row", kind="stable")
    bad_rows = set(rej["row"])
    used = out[~out["source_row"].isin(bad_rows)].reset_index(drop=True)
    if split:
        # items without an explicit position are numbered in file order per response
        key = ["model", "template", "profile_id", "run"]
        order = used.groupby(key, sort=False, dropna=False).cumcount()
        used["item_index"] = used["item_index"].fillna(order).astype(np.int64)
    kept_notes = notes[~notes["row"].isin(bad_rows)].reset_index(drop=True)
    report = ResponsesReport(str(path), rows_read=len(out), rows_used=len(used), rejects=rej, split_items=split,
                             notes=kept_notes)
    return used, report


def to_generations(
    responses: pd.DataFrame,
    templates: Mapping[str, "PromptTemplate"],
    source: str,
    source_sha256: str,
) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Imported responses -> generation rows (prompt re-rendered from the template files).

    Returns (generations, rejects): rows whose template is unknown, or whose template does
    not fit the profile, and repeated (model, template, profile, run) samples are rejected
    with a reason, never dropped silently.
    """
    from .generation import sample_ids

    rejects = []
    known = responses["template"].isin(list(templates))
    for r, t in zip(responses.loc[~known, "source_row"], responses.loc[~known, "template"]):
        rejects.append((r, "template", t, f"unknown template (known: {sorted(templates)})"))
    ok = responses[known].copy()
    fits = [templates[t].profile_set == s for t, s in zip(ok["template"], ok["profile_set"])]
    fits = np.asarray(fits, dtype=bool)
    for r, t, s in zip(ok.loc[~fits, "source_row"], ok.loc[~fits, "template"], ok.loc[~fits, "profile_set"]):
        rejects.append((r, "template", t, f"template {t!r} is for {templates[t].profile_set} profiles, row has a {s} profile"))
    ok = sample_ids(ok[fits])
    dup = ok.duplicated("response_id", keep="first")
    for r, rid in zip(ok.loc[dup, "source_row"], ok.loc[dup, "response_id"]):
        rejects.append((r, "model/template/profile/run", rid, "repeats an earlier row's sample"))
    ok = ok[~dup].reset_index(drop=True)
    ok["prompt"] = [templates[t].render(g, c, n) for t, g, c, n in
                    zip(ok["template"], ok["gender"], ok["economic_class"], ok["nationality"])]
    ok["template_hash"] = [templates[t].sha256 for t in ok["template"]]
    ok["audit_id"] = f"import-{source_sha256[:12]}"
    ok["model_source"] = source
    ok["model_revision"] = source_sha256
    ok["backend"] = "file"
    ok["decoding_json"] = "{}"
    if "text_note" not in ok:
        ok["text_note"] = None
    if "response_format" not in ok:
        ok["response_format"] = TEXT_FORMAT
    cols = ["partition_key", "audit_id", "response_id", "model", "template", "template_hash", "profile_id", "gender",
            "economic_class", "nationality", "run", "seed", "prompt", "response", "model_source", "model_revision",
            "backend", "decoding_json", "text_note", "response_format"]
    ok["run"] = ok["run"].astype(np.int64)
    rej = pd.DataFrame(rejects, columns=["row", "column", "value", "reason"])
    return ok[cols], rej


def samples_from_items(items: pd.DataFrame) -> pd.DataFrame:
    """Already-split items (:func:`read_responses` of a file with ``university``/``program``/
    ``country`` columns: one row per item) -> one row per sample, as answers are: ``response`` is
    the JSON document ``{"items": [{"university": ..., "program": ..., "country": ...}, ...]}`` of
    the sample's items in ``item_index`` order (every item kept: how many are used is the
    recommendations' rule, METHOD.md §9) and ``response_format`` is ``items``. The sample's first
    row gives ``source_row``; the items' text notes are joined."""
    cols = list(ITEM_COLS)
    if items.empty:
        return items.drop(columns=cols + ["item_index"], errors="ignore").assign(response=pd.Series(dtype=object),
                                                                               response_format=ITEMS_FORMAT)
    f = items.sort_values(SAMPLE_KEY + ["item_index"], kind="stable").reset_index(drop=True)
    records = f[cols].astype(object).where(f[cols].notna(), None)
    snippets = pd.Series([json.dumps(dict(zip(cols, r)), ensure_ascii=False) for r in records.itertuples(index=False)],
                         index=f.index)
    groups = f.groupby(SAMPLE_KEY, sort=False, dropna=False)
    first = groups.head(1).set_index(SAMPLE_KEY)
    docs = snippets.groupby([f[k] for k in SAMPLE_KEY], sort=False, dropna=False).agg(",".join)
    notes = f["text_note"].groupby([f[k] for k in SAMPLE_KEY], sort=False, dropna=False).agg(
        lambda s: "; ".join(dict.fromkeys(v for v in s if v)) or None) if "text_note" in f else None
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
    for pos, (rid, text) in enumerate(zip(generations["response_id"], generations["response"])):
        try:
            doc = json.loads(text)
            items = doc["items"]
            if not isinstance(items, list) or not all(isinstance(i, dict) for i in items):
                raise TypeError("'items' is not a list of objects")
        except (TypeError, ValueError, KeyError) as exc:
            raise ValueError(f"generation {rid}: response_format is 'items' but the response is not an items "
                             f"document ({exc}): {_shown(text)}") from None
        for k, item in enumerate(items or [{}]):
            rows.append([item.get(c) for c in ITEM_COLS] + [k])
            keep.append(pos)
    meta = generations.drop(columns=["response"]).iloc[keep].reset_index(drop=True)
    return pd.concat([meta, pd.DataFrame(rows, columns=list(ITEM_COLS) + ["item_index"])], axis=1)



@dataclass
class ImportedResponses:
    """A responses file made into generation rows (:func:`import_responses`)."""

    generations: pd.DataFrame
    rejects: pd.DataFrame      # row, column, value, reason: every row not used, and why
    notes: pd.DataFrame        # rows whose text was altered to be stored, and how
    rows_read: int
    split_items: bool
    sha256: str
    models: set = field(default_factory=set)     # every model the file names
    pairs: set = field(default_factory=set)      # every (model, template) the file names

    @property
    def rows_rejected(self) -> int:
        return int(self.rejects["row"].nunique()) if len(self.rejects) else 0


def import_responses(
    path: str | Path,
    templates: Mapping[str, "PromptTemplate"],
    resolve_nationality: Optional[Callable[[str], Optional[str]]] = None,
    pairs: Optional[set] = None,
) -> ImportedResponses:
    """Read a responses file (answers as written, or already split into items) and make it
    generation rows, keeping the (model, template) ``pairs`` when given; what cannot be used is
    in ``rejects`` with the reason. The one import path of the ``generations`` asset (and so of
    ``fairness-audit score``)."""
    from .corpus import file_sha256

    frame, report = read_responses(path, resolve_nationality)
    piped = frame["model"].astype(str).str.contains("|", regex=False).to_numpy() if len(frame) else np.zeros(0, bool)
    extra = pd.DataFrame([(r, "model", m, "'|' separates model and template in partition keys: rename the model")
                          for r, m in zip(frame.loc[piped, "source_row"], frame.loc[piped, "model"])],
                         columns=["row", "column", "value", "reason"])
    frame = frame[~piped]
    if report.split_items:
        frame = samples_from_items(frame)
    named = set(zip(frame["model"].astype(str), frame["template"].astype(str))) if len(frame) else set()
    if pairs is not None:
        wanted = pd.Series([(m, t) in pairs for m, t in zip(frame["model"], frame["template"])], index=frame.index,
                           dtype=bool)
        frame = frame[wanted]
    sha = file_sha256(path)
    table, rejects = to_generations(frame, templates, str(path), sha)
    return ImportedResponses(table, pd.concat([f for f in (report.rejects, extra, rejects) if len(f)] or [rejects],
                                              ignore_index=True).sort_values(
        "row", kind="stable").reset_index(drop=True), report.notes, report.rows_read, report.split_items, sha,
        {m for m, _ in named}, named)
