"""The rows of a responses file checked: column aliases and value maps, storable text, the run's
parse, the file's columns, and one chunk validated (:func:`_validate`) into the rows that can be
used, the rejects (file row, column, value, reason) and the notes of altered text.

The profile columns are the axes of the active catalogue (core/reference/axes.py), read at call time:
a column per axis (its name, or one of its aliases), each value read through the axis's spellings,
the home axis's values checked with the resolver a caller gives."""

from __future__ import annotations

import json
import math
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Callable, Iterable, Optional

import numpy as np
import pandas as pd

from ...reference import axes
from ...reference.design import FULL_SET
from ...reference.names import NAME_COLUMN
from ...reference.profiles import profile_id

if TYPE_CHECKING:
    from ...reference.design import Design

REQUIRED = ("model", "template", "run")
SAMPLE_KEY = ["model", "template", "profile_id", "run"]
REJECT_COLUMNS = ["row", "column", "value", "reason"]
NOTE_COLUMNS = ["row", "column", "note"]
ITEM_COLS = ("university", "program", "country")
# the synonyms of the columns that are not an axis (an axis's come from its ``aliases``)
_ALIASES = {
    "name": NAME_COLUMN,  # the student's name of a named profile (core/reference/names.py)
    "student": NAME_COLUMN,
    "student name": NAME_COLUMN,
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
# the columns no axis alias may take over
_RESERVED = frozenset((*REQUIRED, "response", "item_index", *ITEM_COLS))
_COUNT_WORDS = ("no", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine", "ten")


def profile_columns() -> tuple[str, ...]:
    """The profile columns of a responses file: the axes of the active catalogue, in its order."""
    return axes.names()


def __getattr__(name: str):
    # PROFILE_COLS: the profile columns of the active catalogue, read when asked for (never at import)
    if name == "PROFILE_COLS":
        return profile_columns()
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def column_aliases() -> dict[str, str]:
    """{lower-case column name: the column it is}: the synonyms of the other columns, and each axis's
    name and aliases (the active catalogue's)."""
    out = dict(_ALIASES)
    for a in axes.axes_of():
        for name in (a.name, *a.aliases):
            key = str(name).strip().lower()
            if key not in _RESERVED:
                out[key] = a.name
    return out


def canonical_columns(columns: Iterable, aliases: Optional[dict[str, str]] = None) -> list[str]:
    """The file's column names as the reader knows them (case-insensitive, aliases resolved)."""
    aliases = column_aliases() if aliases is None else aliases
    return [aliases.get(str(c).strip().lower(), str(c).strip().lower()) for c in columns]


def crossed_axes(design: Optional["Design"]) -> Optional[tuple[str, ...]]:
    """The axes a ``full`` profile states: the design's crossed ones, or None (every axis of the active
    catalogue) without a design."""
    return None if design is None else tuple(design.grid.axes)


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
    applies it to every text value it writes (resources/database/)."""
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
    profile = profile_columns()
    if not any(c in columns for c in profile):
        raise ResponsesFileError(f"{path}: needs at least one of the profile columns {list(profile)}")
    return split


@dataclass
class _Chunk:
    """One chunk of a responses file, validated (:func:`_validate`)."""

    used: pd.DataFrame  # the rows that can be used (read_responses' frame)
    rejects: list  # (row, column, value, reason) of the rows that cannot
    notes: list  # (row, column, note) of the used rows whose text was altered
    rows_read: int
    split: bool  # the file holds answers already split into items


def _text(df: pd.DataFrame, col: str) -> pd.Series:
    """A column of ``df`` as stripped text (None for an empty cell, or one that is not a single value)."""
    s = df[col].astype("object")
    s = s.where(s.notna(), None)
    return s.map(lambda v: None if v is None or isinstance(v, _NOT_SCALAR) or str(v).strip() == "" else str(v).strip())


def _check_structured(df: pd.DataFrame, rows: np.ndarray, split: bool, rejects: list) -> dict:
    """A JSON object or array (or a Parquet list, bytes) where one value belongs: the row is rejected,
    never turned into a partition or a profile named after the value's repr. Returns, per column
    read, the mask of such cells (the run's are reported with the run's own reason)."""
    used_cols = [
        c
        for c in REQUIRED + profile_columns() + (ITEM_COLS + ("item_index",) if split else ("response",))
        if c in df.columns
    ]
    structured = {}
    for col in used_cols:
        mask = df[col].map(lambda v: isinstance(v, _NOT_SCALAR)).to_numpy(dtype=bool)
        structured[col] = mask
        if col == "run":
            continue  # reported with the run's own reason (_check_run)
        for r, v in zip(rows[mask], df.loc[mask, col], strict=False):
            rejects.append((r, col, _shown(v), f"{col} must be a single value (text or a number), not {_kind(v)}"))
    return structured


def _check_pair(df: pd.DataFrame, out: pd.DataFrame, structured: dict, rejects: list) -> None:
    """``model`` and ``template`` set on ``out``; a row with either empty is rejected."""
    for c in ("model", "template"):
        out[c] = _text(df, c).to_numpy()
        for r in out.loc[out[c].isna().to_numpy() & ~structured[c], "source_row"]:
            rejects.append((r, c, None, f"empty {c}"))


def _check_run(df: pd.DataFrame, rows: np.ndarray, out: pd.DataFrame, rejects: list) -> None:
    """``run`` set on ``out`` (:func:`_parse_run`); a row whose run is not a whole number in range is rejected."""
    runs = []
    for r, v in zip(rows, df["run"].astype("object").where(df["run"].notna(), None), strict=False):
        number, reason = _parse_run(v)
        runs.append(number)
        if reason:
            rejects.append(
                (r, "run", None if v is None else (_shown(v) if isinstance(v, _NOT_SCALAR) else str(v)), reason)
            )
    out["run"] = pd.array(runs, dtype="Int64")


def _check_profile_values(df: pd.DataFrame, out: pd.DataFrame, resolve_home, rejects: list) -> None:
    """Each axis of the active catalogue set on ``out``: a value is read through the axis's spellings
    (case-insensitive) and an unknown one rejected; the home axis's values are kept as written, and
    one that ``resolve_home`` (when given) cannot resolve is rejected."""
    home = axes.home()
    for a in axes.axes_of():
        s = _text(df, a.name)
        if a.name == home:
            if resolve_home is not None:
                uniq = {v: resolve_home(v) for v in pd.unique(s.dropna())}
                bad = s.notna() & s.map(lambda v, uniq=uniq: v is not None and uniq.get(v) is None)
                for r, v in zip(out.loc[bad.to_numpy(), "source_row"], s[bad], strict=False):
                    rejects.append((r, a.name, v, f"{a.name} is not a country that can be resolved"))
        else:
            spelled = a.spellings()
            s = s.map(lambda v, spelled=spelled: None if v is None else spelled.get(v.lower(), "\x00" + v))
            bad = s.notna() & s.str.startswith("\x00")  # text is NUL-free here (made storable above)
            for r, v in zip(out.loc[bad.to_numpy(), "source_row"], s[bad], strict=False):
                rejects.append((r, a.name, v[1:], f"unknown {a.name} (use one of {list(a.values)})"))
        out[a.name] = s.to_numpy()


def _attributes_rule(names: tuple[str, ...], crossed: tuple[str, ...]) -> str:
    """What a profile must state, in words (the reason of a row that states something else)."""
    n = len(crossed)
    count = _COUNT_WORDS[n] if n < len(_COUNT_WORDS) else str(n)
    if not crossed:
        return "a profile needs exactly one attribute (reduced context; the grid crosses none)"
    if set(crossed) == set(names):
        return f"a profile needs all {count} attributes, or exactly one (reduced context)"
    listed = ", ".join(crossed)
    return f"a profile needs the {count} attributes the grid crosses ({listed}), or exactly one (reduced context)"


def _profile_sets(stated: np.ndarray, names: tuple[str, ...], crossed: tuple[str, ...]) -> np.ndarray:
    """The profile set of each row (``stated``: rows x axes, whether the row states the axis): ``full``
    for a row stating exactly the crossed axes, an axis's one-at-a-time set for a row stating it alone,
    "" otherwise."""
    count = stated.sum(axis=1)
    pset = np.full(len(stated), "", dtype=object)
    if crossed:
        idx = [names.index(n) for n in crossed]
        pset[stated[:, idx].all(axis=1) & (count == len(crossed))] = FULL_SET
    one = (count == 1) & (pset == "")
    if one.any():
        sets = np.asarray([axes.axis(n).profile_set for n in names], dtype=object)
        pset[one] = sets[stated[one].argmax(axis=1)]
    return pset


def _check_profile_set(out: pd.DataFrame, structured: dict, rejects: list, crossed: Optional[tuple] = None) -> None:
    """``profile_set`` and ``profile_id`` set on ``out``: a row stating every crossed axis (``crossed``;
    every axis of the catalogue when None) is a ``full`` profile, one stating exactly one axis is that
    axis's one-at-a-time profile; any other row is rejected, naming the axes it states."""
    names = profile_columns()
    crossed = names if crossed is None else tuple(crossed)
    stated = out[list(names)].notna().to_numpy(dtype=bool).reshape(len(out), len(names))
    pset = _profile_sets(stated, names, crossed)
    structured_profile = np.logical_or.reduce([structured[col] for col in names])
    rule = _attributes_rule(names, crossed)
    for i in np.flatnonzero((pset == "") & ~structured_profile):
        said = [n for n, on in zip(names, stated[i], strict=True) if on]
        rejects.append(
            (out["source_row"].iat[i], "/".join(names), None, f"{rule}; the row states {', '.join(said) or 'none'}")
        )
    spec = _names_spec()
    named = out[NAME_COLUMN] if spec is not None and NAME_COLUMN in out else pd.Series([None] * len(out))
    named = named.where(named.notna(), None).to_numpy(dtype=object)
    if spec is not None:  # a crossed row with a name: the named profile set, the name in its id
        pset = np.where((pset == FULL_SET) & (named != None), spec.profile_set, pset)  # noqa: E711
    out["profile_set"] = pset
    ids: dict[tuple, str] = {}
    column = []
    for s, name, *values in zip(pset, named, *(out[n] for n in names), strict=True):
        if not s:
            column.append(None)
            continue
        key = (s, name, *values)
        if key not in ids:
            stated = {n: v for n, v in zip(names, values, strict=True) if isinstance(v, str)}
            ids[key] = profile_id(s, stated, name if s != FULL_SET else None)
        column.append(ids[key])
    out["profile_id"] = column


def _names_spec():
    """The active design's names block (core/reference/names.py), or None."""
    design = axes.current_design()
    return design.names if design is not None else None


def _add_answer(df: pd.DataFrame, out: pd.DataFrame, split: bool) -> None:
    """The answer set on ``out``: its items' columns (``university``, ``program``, ``country``,
    ``item_index``), or its ``response``."""
    if split:
        for col in ITEM_COLS:
            out[col] = _text(df, col).to_numpy()
        idx = pd.to_numeric(_text(df, "item_index"), errors="coerce") if "item_index" in df.columns else None
        out["item_index"] = idx.to_numpy() if idx is not None else np.nan
    else:
        resp = df["response"].astype("object")
        out["response"] = (
            resp.where(resp.notna(), None)
            .map(lambda v: None if v is None or isinstance(v, _NOT_SCALAR) else str(v))
            .to_numpy()
        )


def _add_text_notes(out: pd.DataFrame, notes: list) -> None:
    """``text_note`` set on ``out``: what was altered in each row's text (None when nothing was)."""
    by_row: dict[int, str] = {}
    for r, col, note in notes:
        by_row[r] = f"{by_row[r]}; {col}: {note}" if r in by_row else f"{col}: {note}"
    out["text_note"] = [by_row.get(r) for r in out["source_row"]] if by_row else None
    out["text_note"] = out["text_note"].astype(object)


def _number_items(used: pd.DataFrame, offsets: dict) -> None:
    """Items without an explicit position numbered in file order per response (``offsets``: how many
    item rows each sample had in the earlier chunks; updated)."""
    keys = list(zip(*(used[k] for k in SAMPLE_KEY), strict=False))
    order = used.groupby(SAMPLE_KEY, sort=False, dropna=False).cumcount().to_numpy()
    if offsets:
        order = order + np.asarray([offsets.get(k, 0) for k in keys], dtype=np.int64)
    for k in keys:
        offsets[k] = offsets.get(k, 0) + 1
    used["item_index"] = used["item_index"].fillna(pd.Series(order, index=used.index)).astype(np.int64)


def _validate(
    df: pd.DataFrame,
    rows: np.ndarray,
    split: bool,
    resolve_home: Optional[Callable[[str], Optional[str]]],
    offsets: dict,
    crossed: Optional[tuple] = None,
) -> _Chunk:
    """Validate one chunk (column names already canonical). ``offsets`` carries, from chunk to
    chunk, how many item rows each sample has had so far (items are numbered in file order);
    ``crossed``: the axes a ``full`` profile states (every axis of the active catalogue when None)."""
    # a column the file has but this chunk lacks (a JSON object without the key) is an empty one
    for c in REQUIRED + profile_columns() + (ITEM_COLS if split else ("response",)):
        if c not in df.columns:
            df[c] = None
    df = df.reset_index(drop=True)
    notes = _make_storable(df, rows)
    out = pd.DataFrame({"source_row": rows})
    rejects: list = []
    structured = _check_structured(df, rows, split, rejects)
    _check_pair(df, out, structured, rejects)
    _check_run(df, rows, out, rejects)
    _check_profile_values(df, out, resolve_home, rejects)
    if _names_spec() is not None:  # a named profile's name (the design's names block)
        out[NAME_COLUMN] = _text(df, NAME_COLUMN).to_numpy() if NAME_COLUMN in df.columns else None
    _check_profile_set(out, structured, rejects, crossed)
    _add_answer(df, out, split)
    del df
    _add_text_notes(out, notes)

    rejects.sort(key=lambda t: t[0])  # stable: a row's reasons in the order they were found
    bad_rows = {r for r, *_ in rejects}
    used = out[~out["source_row"].isin(bad_rows)].reset_index(drop=True) if bad_rows else out
    if split:
        _number_items(used, offsets)
    kept_notes = [n_ for n_ in notes if n_[0] not in bad_rows]
    return _Chunk(used, rejects, kept_notes, len(out), split)
