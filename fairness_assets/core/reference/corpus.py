"""Reading a QS World University Rankings export into a clean corpus table.

Pure functions: a path or text in, pandas frames and plain dataclasses out. The country
names are resolved by a callable handed in (see :mod:`fairness_assets.core.reference.geo`), so this
module knows nothing about where country knowledge comes from.

METHOD.md §4: ranks look like ``1``, ``=17``, ``601-650``, ``1201-1400``, ``1401+``.
Decision: ``=17`` -> 17, a band -> its lower bound, ``1401+`` -> 1401; the raw text is kept.
"""

from __future__ import annotations

import codecs
import csv
import hashlib
import io
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable

import numpy as np
import pandas as pd

RANK_COLUMN = "2024 RANK"
NAME_COLUMN = "Institution Name"
COUNTRY_COLUMN = "Country"
CODE_COLUMN = "Country Code"
# A numeric rank must lie in 1..MAX_RANK: no ranking lists more universities, so a larger number
# (or 0) is a typo, and it must fit the results database's integer column.
MAX_RANK = 100_000

# The QS export carries a second header row of short names ("rank display", "institution",
# "location", ...). It is recognised by its content, not by its position alone.
_SHORT_HEADER_MARKERS = {
    RANK_COLUMN: {"rank display"},
    NAME_COLUMN: {"institution"},
    COUNTRY_COLUMN: {"location"},
}

# 17 | =17 | 601-650 | 601–650 | 1201 - 1400 | 1401+ | 1401 +   (whitespace tolerated)
_RANK_RE = re.compile(r"^=?\s*(\d+)\s*(?:[-\u2010-\u2015]\s*(\d+)|\+)?$")


class CorpusError(ValueError):
    """A ranking file that cannot be used; the message names file, row and column."""


@dataclass(frozen=True)
class RepParams:
    """Global reputation scaling, METHOD.md §5: Rep = (R_max - R) / (R_max - R_min)."""

    r_min: float = 1.0
    r_max: float = 1200.0

    def __post_init__(self) -> None:
        if not self.r_max > self.r_min:
            raise ValueError(f"R_max ({self.r_max}) must be greater than R_min ({self.r_min})")


@dataclass
class CorpusReport:
    """What happened while reading; shown as asset metadata and logged."""

    path: str
    sha256: str
    encoding: str
    rows_read: int
    duplicates_dropped: int
    duplicate_examples: list[str] = field(default_factory=list)
    had_short_header_row: bool = False
    warnings: list[str] = field(default_factory=list)
    rank_column: str = ""  # the file's column read as the rank (the configured one, or the fallback named in warnings)


def file_sha256(path: str | Path) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as fh:
        for chunk in iter(lambda: fh.read(1 << 20), b""):
            h.update(chunk)
    return h.hexdigest()


def parse_rank(raw: str) -> int | None:
    """Numeric rank of one QS rank cell, or None when it is not a rank."""
    if raw is None:
        return None
    m = _RANK_RE.match(str(raw).strip())
    if not m:
        return None
    lo = int(m.group(1))
    hi = m.group(2)
    if hi is not None and int(hi) < lo:
        return None
    return lo


def parse_ranks(raw: pd.Series) -> pd.Series:
    """Vectorised :func:`parse_rank`: nullable Int64, <NA> where a cell is not a rank."""
    s = raw.astype("string").str.strip()
    parts = s.str.extract(_RANK_RE)
    lo = pd.to_numeric(parts[0], errors="coerce")
    hi = pd.to_numeric(parts[1], errors="coerce")
    lo = lo.where(~(hi.notna() & (hi < lo)))
    return lo.astype("Int64")


# Byte-order marks, longest first (the UTF-32-LE mark begins with the UTF-16-LE one).
_BOMS = (
    (codecs.BOM_UTF32_LE, "utf-32-le"),
    (codecs.BOM_UTF32_BE, "utf-32-be"),
    (codecs.BOM_UTF8, "utf-8"),
    (codecs.BOM_UTF16_LE, "utf-16-le"),
    (codecs.BOM_UTF16_BE, "utf-16-be"),
)


def _decode(data: bytes, path: str) -> tuple[str, str, list[str]]:
    """Text of a ranking file: the encoding its byte-order mark names (UTF-8, UTF-16 LE/BE,
    UTF-32 LE/BE), else UTF-8, else Windows-1252 with a warning. A file that none of these
    decode fails with an error that says the encoding is the problem and names the file."""
    for bom, encoding in _BOMS:
        if data.startswith(bom):
            try:
                text = data[len(bom) :].decode(encoding)
            except UnicodeDecodeError as exc:
                raise CorpusError(
                    f"{path}: the encoding is the problem: the file starts with a {encoding.upper()} byte-order "
                    f"mark but is not valid {encoding.upper()} (byte {exc.start + len(bom)}: {exc.reason}); "
                    "re-save it as UTF-8"
                ) from None
            break
    else:
        encoding = "utf-8"
        try:
            text = data.decode("utf-8")
        except UnicodeDecodeError as exc:
            if b"\x00" in data:
                raise CorpusError(
                    f"{path}: the encoding is the problem: not UTF-8 (byte {exc.start}) and it holds NUL bytes, "
                    "as UTF-16 or UTF-32 text without a byte-order mark does; re-save it as UTF-8 (or with a BOM)"
                ) from None
            try:
                text = data.decode("cp1252")
            except UnicodeDecodeError as exc2:
                raise CorpusError(
                    f"{path}: the encoding is the problem: neither UTF-8 (byte {exc.start}) nor Windows-1252 "
                    f"(byte {exc2.start}); re-save it as UTF-8"
                ) from None
            return (
                text,
                "cp1252",
                [f"{path}: not valid UTF-8 (byte {exc.start}); read as Windows-1252 — check accented names"],
            )
    if text.count("\x00") * 8 > len(text):
        # ASCII saved as UTF-16/32 without a byte-order mark is valid UTF-8 full of NULs
        raise CorpusError(
            f"{path}: the encoding is the problem: the text is full of NUL characters, as UTF-16 or UTF-32 "
            "without a byte-order mark is when read as UTF-8; re-save it as UTF-8 (or with a BOM)"
        )
    return text, encoding, []


_ESCAPED = re.compile(r"\\(['\"\\])")
_SPACE_LIKE = re.compile(r"[\u00a0\u2000-\u200a\u202f\u205f\u3000]")


def clean_institution_name(name: str) -> str:
    """An institution name as the export means it: its escaping undone (the 2024 export writes
    ``Université Côte d\\'Azur`` and ``King Mongkut\\'s …`` with a literal backslash), no-break
    and other unusual spaces made plain spaces (``Università\\xa0di Padova``) and the ends
    stripped. Nothing else changes: the name stays the export's spelling (line breaks too)."""
    t = _ESCAPED.sub(r"\1", str(name))
    return _SPACE_LIKE.sub(" ", t).strip()


class CSVLineError(ValueError):
    """A CSV text that cannot be split into records; ``line`` is where the bad record starts."""

    def __init__(self, line: int, message: str):
        super().__init__(f"line {line}: {message}")
        self.line = line
        self.reason = message


def csv_records(text: str, delimiter: str = ",") -> list[tuple[int, list[str]]]:
    """The records of CSV ``text``, each with the physical line (1-based) where it starts.

    A quoted field may hold line breaks, so a record can span lines: the line numbers are
    those of the file, not record counts. A blank line is an empty record. A quoted field that
    is never closed, or text after a closing quote, raises :class:`CSVLineError` naming the line
    where that record starts.
    """
    if csv.field_size_limit() < 2**31 - 1:  # answers and names may be longer than csv's 128 KiB default
        csv.field_size_limit(2**31 - 1)
    reader = csv.reader(io.StringIO(text, newline=""), delimiter=delimiter, strict=True)
    out: list[tuple[int, list[str]]] = []
    consumed = 0
    while True:
        try:
            fields = next(reader)
        except StopIteration:
            return out
        except csv.Error as exc:
            reason = str(exc)
            if "unexpected end of data" in reason:
                reason = "a quoted field that starts in this record is never closed"
            elif "expected after" in reason:
                reason = f"text after a closing quote (line {reader.line_num}: {exc})"
            raise CSVLineError(consumed + 1, reason) from None
        out.append((consumed + 1, fields))
        consumed = reader.line_num


def unique_column_names(names: list[str]) -> list[str]:
    """Header names made unique the way pandas does (``a``, ``a.1``, ...)."""
    seen: dict[str, int] = {}
    out = []
    for name in names:
        if name in seen:
            seen[name] += 1
            new = f"{name}.{seen[name]}"
            while new in seen:
                seen[name] += 1
                new = f"{name}.{seen[name]}"
            seen[new] = 0
            out.append(new)
        else:
            seen[name] = 0
            out.append(name)
    return out


_COLUMN_ALIASES = {
    NAME_COLUMN: ("Institution Name", "Institution", "institution", "University", "Name"),
    COUNTRY_COLUMN: ("Country", "Location", "Country/Territory", "location", "Country / Territory"),
}


def _canonical_columns(df: pd.DataFrame, rank_column: str, warnings: list[str], path: str):
    """Other QS export years name columns differently ("Location", "2025 RANK"): map them,
    saying so in the warnings; ambiguous or absent columns are left for the caller to report.

    Returns the frame and the name of the file's column read as the rank: ``rank_column``
    when the file has it, else the most recent year's rank column (the warning names both, and
    errors are reported against the column actually read, which keeps its name)."""
    folded = {c.casefold(): c for c in df.columns}
    renames = {}
    for canonical, aliases in _COLUMN_ALIASES.items():
        if canonical in df.columns:
            continue
        found = next((folded[a.casefold()] for a in aliases if a.casefold() in folded), None)
        if found is not None:
            renames[found] = canonical
            warnings.append(f"{path}: reading column {found!r} as {canonical!r}")
    df = df.rename(columns=renames)
    if rank_column not in df.columns:
        ranks = sorted((c for c in df.columns if re.fullmatch(r"(?i)(\d{4}\s+)?rank", c)), reverse=True)
        if ranks:
            others = f" (rank columns in the file: {', '.join(repr(c) for c in ranks)})" if len(ranks) > 1 else ""
            warnings.append(
                f"{path}: the configured rank column {rank_column!r} is not in the header; using {ranks[0]!r} "
                f"instead, the most recent year's rank column{others}; configure the rank column "
                "(ReferenceDataResource.rank_column, score --rank-column) to read another"
            )
            return df, ranks[0]
    return df, rank_column


def read_qs_export(
    path: str | Path,
    rank_column: str = RANK_COLUMN,
) -> tuple[pd.DataFrame, CorpusReport]:
    """Read a QS export as text cells. Returns the raw rows and a report.

    The returned frame has the original columns plus ``source_line`` (the 1-based physical
    line of the file where the row starts, counting header lines; a quoted name that spans
    lines does not shift later rows) so later errors can point at the row. ``rank_column`` is
    the configured rank column; when the file lacks it, another year's rank column is read
    instead, named in the report's warnings and in ``report.rank_column``.
    """
    path = str(path)
    p = Path(path)
    if not p.exists():
        raise CorpusError(f"{path}: ranking file not found")
    if p.is_dir():
        raise CorpusError(f"{path}: is a folder, expected a QS export CSV file")
    data = p.read_bytes()
    if not data.strip():
        raise CorpusError(f"{path}: the ranking file is empty")
    text, encoding, warnings = _decode(data, path)
    try:
        records = csv_records(text)
    except CSVLineError as exc:
        raise CorpusError(f"{path}: line {exc.line}: not a readable CSV file ({exc.reason})") from None
    while records and not any(f.strip() for f in records[0][1]):
        records.pop(0)
    if not records:
        raise CorpusError(f"{path}: the ranking file is empty")
    header_line, header = records.pop(0)
    columns = unique_column_names([str(c).strip() for c in header])
    width = len(columns)
    cells, lines = [], []
    for line, fields in records:
        if len(fields) > width and any(f.strip() for f in fields[width:]):
            raise CorpusError(
                f"{path}: line {line}: {len(fields)} fields, but the header (line {header_line}) has {width} columns"
            )
        cells.append((fields + [""] * width)[:width])
        lines.append(line)
    df = pd.DataFrame(cells, columns=columns, dtype=object)
    df, rank_column = _canonical_columns(df, rank_column, warnings, path)
    required = (rank_column, NAME_COLUMN, COUNTRY_COLUMN)
    missing = [c for c in required if c not in df.columns]
    if missing:
        raise CorpusError(
            f"{path}: missing column(s) {', '.join(repr(c) for c in missing)} in the header row "
            f"(line {header_line}); found {', '.join(repr(c) for c in df.columns)}"
        )
    # physical line numbers: the line of the file where each record starts (a quoted name may
    # span lines, so this is not the record count)
    df["source_line"] = np.asarray(lines, dtype=np.int64)
    for col in required:
        df[col] = df[col].str.strip()
    df[NAME_COLUMN] = df[NAME_COLUMN].map(clean_institution_name)
    original = [c for c in df.columns if c != "source_line"]
    blank = df[original].apply(lambda c: c.str.strip() == "").all(axis=1) if len(df) else pd.Series(dtype=bool)
    df = df[~blank]
    had_short = False
    if len(df):
        first = df.iloc[0]
        if (
            all(
                str(first[c]).strip().lower() in markers
                for c, markers in _SHORT_HEADER_MARKERS.items()
                if c in df.columns and c != RANK_COLUMN
            )
            or str(first[rank_column]).strip().lower() in _SHORT_HEADER_MARKERS[RANK_COLUMN]
        ):
            had_short = True
            df = df.iloc[1:]
    if df.empty:
        raise CorpusError(f"{path}: the ranking file has a header but no university rows")
    report = CorpusReport(
        path=path,
        sha256=hashlib.sha256(data).hexdigest(),
        encoding=encoding,
        rows_read=len(df),
        duplicates_dropped=0,
        had_short_header_row=had_short,
        warnings=warnings,
        rank_column=rank_column,
    )
    return df.reset_index(drop=True), report


def build_corpus(
    raw: pd.DataFrame,
    report: CorpusReport,
    resolve_country: Callable[[pd.Series], pd.DataFrame],
    rep: RepParams = RepParams(),
    rank_column: str = RANK_COLUMN,
    max_rank: int = MAX_RANK,
) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Clean raw QS rows into (universities, countries).

    ``resolve_country`` maps a Series of country texts to a frame with columns ``country``
    (canonical name) and ``iso3``, raising when a name cannot be resolved (the error is then
    re-raised naming the file lines of every unresolved name).

    The rank is read from the column :func:`read_qs_export` used (``report.rank_column``;
    ``rank_column`` when the report does not say), and errors name that column. A rank outside
    ``1..max_rank`` (0, for instance) is an error naming the line.

    universities: one row per university with ``university_id`` (stable within the file),
    ``name``, ``rank_raw``, ``rank``, ``country_raw``, ``country``, ``iso3``, ``rep``,
    ``local_rank_min``, ``local_rank_max``, ``rep_local``, ``source_line``.
    countries: one row per corpus country with ``n_universities``, ``avail``,
    ``local_rank_min``, ``local_rank_max``.
    """
    path = report.path
    rank_column = report.rank_column or rank_column
    df = raw.copy()
    # exact duplicates (every original column equal) are dropped with a warning
    original_cols = [c for c in df.columns if c != "source_line"]
    dup = df.duplicated(subset=original_cols, keep="first")
    if dup.any():
        report.duplicates_dropped = int(dup.sum())
        report.duplicate_examples = [
            f"line {int(line)}: {name}"
            for line, name in zip(df.loc[dup, "source_line"].head(5), df.loc[dup, NAME_COLUMN].head(5), strict=False)
        ]
        report.warnings.append(
            f"{path}: dropped {report.duplicates_dropped} exact duplicate row(s), e.g. "
            + "; ".join(report.duplicate_examples)
        )
        df = df[~dup]

    for col in (NAME_COLUMN, COUNTRY_COLUMN):
        empty = df[col] == ""
        if empty.any():
            line = int(df.loc[empty, "source_line"].iloc[0])
            raise CorpusError(f"{path}: line {line}, column {col!r}: empty value ({int(empty.sum())} row(s) affected)")
    ranks = parse_ranks(df[rank_column])
    bad = ranks.isna()
    if bad.any():
        first = df.index[bad][0]
        raise CorpusError(
            f"{path}: line {int(df.at[first, 'source_line'])}, column {rank_column!r}: "
            f"unparseable rank {df.at[first, rank_column]!r} "
            f"({int(bad.sum())} row(s) affected; expected forms 17, =17, 601-650, 1401+)"
        )
    out_of_range = (ranks < 1) | (ranks > max_rank)
    if out_of_range.any():
        first = df.index[out_of_range.to_numpy(dtype=bool)][0]
        raise CorpusError(
            f"{path}: line {int(df.at[first, 'source_line'])}, column {rank_column!r}: "
            f"rank {df.at[first, rank_column]!r} is outside 1..{max_rank} "
            f"({int(out_of_range.sum())} row(s) affected)"
        )
    # same name twice in the same country with different data: ambiguous for matching
    key = df[NAME_COLUMN].str.casefold() + "\x00" + df[COUNTRY_COLUMN].str.casefold()
    clash = key.duplicated(keep=False)
    if clash.any():
        lines = df.loc[clash, "source_line"].tolist()
        raise CorpusError(
            f"{path}: lines {lines[:6]}, column {NAME_COLUMN!r}: the same university appears "
            f"more than once with different data ({df.loc[clash, NAME_COLUMN].iloc[0]!r})"
        )

    df = df.reset_index(drop=True)
    resolved = _resolve_countries(df, resolve_country, path)
    uni = pd.DataFrame(
        {
            "university_id": np.arange(1, len(df) + 1, dtype=np.int64),
            "name": df[NAME_COLUMN].to_numpy(),
            "rank_raw": df[rank_column].to_numpy(),
            "rank": ranks.to_numpy(dtype=np.int64),
            "country_raw": df[COUNTRY_COLUMN].to_numpy(),
            "country_code_raw": df[CODE_COLUMN].str.strip().to_numpy() if CODE_COLUMN in df else "",
            "country": resolved["country"].to_numpy(),
            "iso3": resolved["iso3"].to_numpy(),
            "source_line": df["source_line"].to_numpy(dtype=np.int64),
        }
    )
    uni["rep"] = global_rep(uni["rank"].to_numpy(dtype=float), rep)
    grp = uni.groupby("iso3")["rank"]
    uni["local_rank_min"] = grp.transform("min").astype(np.int64)
    uni["local_rank_max"] = grp.transform("max").astype(np.int64)
    uni["rep_local"] = local_rep(
        uni["rank"].to_numpy(dtype=float),
        uni["local_rank_min"].to_numpy(dtype=float),
        uni["local_rank_max"].to_numpy(dtype=float),
    )
    total = len(uni)
    uni["country_universities"] = uni.groupby("iso3")["university_id"].transform("size").astype(np.int64)
    uni["country_avail"] = avail(uni["country_universities"], total)
    countries = (
        uni.groupby(["iso3", "country"], as_index=False)
        .agg(
            n_universities=("university_id", "size"),
            local_rank_min=("rank", "min"),
            local_rank_max=("rank", "max"),
            best_university=("name", "first"),
        )
        .sort_values(["n_universities", "country"], ascending=[False, True])
        .reset_index(drop=True)
    )
    countries["avail"] = avail(countries["n_universities"], total)
    return uni, countries


def _resolve_countries(df: pd.DataFrame, resolve_country: Callable[[pd.Series], pd.DataFrame], path: str):
    """``resolve_country`` over the country column; a name it cannot resolve is an error that
    names the value, its lines and the resolver's own message."""
    countries = df[COUNTRY_COLUMN]
    try:
        resolved = resolve_country(countries).reset_index(drop=True)
        failure = None
    except Exception as exc:  # noqa: BLE001 - the resolver's error type is its own
        resolved, failure = None, exc
    if failure is None and not resolved["iso3"].isna().any():
        return resolved
    if failure is None:
        unresolved = set(countries[resolved["iso3"].isna().to_numpy()])
    else:
        unresolved = set()
        for name in pd.unique(countries):  # find which names failed, one at a time
            try:
                one = resolve_country(pd.Series([name], dtype=object))
                ok = not one["iso3"].isna().any()
            except Exception:  # noqa: BLE001
                ok = False
            if not ok:
                unresolved.add(name)
        if not unresolved:  # the resolver fails as a whole, not on one name: nothing to add
            raise failure
    where = []
    for name in sorted(unresolved, key=lambda n: int(df.loc[countries == n, "source_line"].iloc[0])):
        lines = df.loc[countries == name, "source_line"].astype(int).tolist()
        shown = ", ".join(map(str, lines[:5])) + (f", … ({len(lines)} rows)" if len(lines) > 5 else "")
        where.append(f"{name!r} (line{'s' if len(lines) > 1 else ''} {shown})")
    first = int(df.loc[countries.isin(unresolved), "source_line"].min())
    cause = f": {failure}" if failure is not None else ""
    raise CorpusError(
        f"{path}: line {first}, column {COUNTRY_COLUMN!r}: country name(s) that do not resolve: "
        f"{'; '.join(where)}{cause}"
    ) from failure


def load_corpus(
    path: str | Path,
    resolve_country: Callable[[pd.Series], pd.DataFrame],
    rep: RepParams = RepParams(),
    rank_column: str = RANK_COLUMN,
) -> tuple[pd.DataFrame, pd.DataFrame, CorpusReport]:
    """:func:`read_qs_export` then :func:`build_corpus`: (universities, countries, report)."""
    raw, report = read_qs_export(path, rank_column)
    universities, countries = build_corpus(raw, report, resolve_country, rep, rank_column)
    return universities, countries, report


def global_rep(rank: np.ndarray, rep: RepParams = RepParams()) -> np.ndarray:
    """Rep(u) = (R_max - R_u)/(R_max - R_min), 0 beyond R_max or for a missing rank."""
    rank = np.asarray(rank, dtype=float)
    out = (rep.r_max - rank) / (rep.r_max - rep.r_min)
    out = np.where(np.isnan(rank) | (rank > rep.r_max), 0.0, out)
    return np.clip(out, 0.0, 1.0)


def avail(n_universities, total: int):
    """Avail_c = n_c / N (METHOD.md §6): the country's share of the corpus's universities; the one
    definition (corpus, country table and GRS use it). 0 for an empty corpus."""
    return n_universities / total if total else n_universities * 0.0


def local_rep(rank: np.ndarray, lo: np.ndarray, hi: np.ndarray) -> np.ndarray:
    """Rep_local(u) = (R_max_c - R_u)/(R_max_c - R_min_c); 1 where the country's range is empty."""
    rank, lo, hi = (np.asarray(a, dtype=float) for a in (rank, lo, hi))
    span = hi - lo
    with np.errstate(divide="ignore", invalid="ignore"):
        out = np.where(span > 0, (hi - rank) / np.where(span > 0, span, 1.0), 1.0)
    return out
