"""The region table (data/regions/regions.csv): load, validate, look up, attach.

Every country of the study grid and of the QS corpus has a row with its UN M49 sub-region
(``un_region``), continent, the audit's ``region`` (country_converter's 7-continent scheme:
Africa, Asia, Europe, North America, South America, Oceania) and a Global North / Global South
split (``north_south``: UN M49 developed regions). Source and rule: data/regions/README.md.

Pure: pandas only. Nationalities are profile names ("South Korea"); items carry ISO3 codes.
"""

from __future__ import annotations

from functools import lru_cache
from pathlib import Path
from typing import Iterable, Mapping, Optional, Sequence

import pandas as pd

REGIONS_CSV = Path(__file__).resolve().parents[3] / "data" / "regions" / "regions.csv"
COLUMNS = ("iso3", "country", "un_region", "continent", "region", "north_south", "oecd")
NORTH_SOUTH = ("Global North", "Global South")


class RegionError(ValueError):
    """A country without a region, or a malformed region table."""


def validate_regions(table: pd.DataFrame) -> pd.DataFrame:
    """Checks the table's columns, unique ISO3 codes, no missing region and the North/South
    labels; returns it unchanged. Raises :class:`RegionError`."""
    missing = [c for c in COLUMNS if c not in table.columns]
    if missing:
        raise RegionError(f"region table lacks the column(s) {missing}")
    if table["iso3"].duplicated().any():
        raise RegionError(f"duplicate ISO3 codes: {sorted(table.loc[table['iso3'].duplicated(), 'iso3'])}")
    for col in ("iso3", "country", "un_region", "continent", "region", "north_south"):
        empty = table[col].isna() | (table[col].astype(str).str.strip() == "")
        if empty.any():
            raise RegionError(f"{col} missing for {sorted(table.loc[empty, 'iso3'].astype(str))}")
    bad = sorted(set(table["north_south"]) - set(NORTH_SOUTH))
    if bad:
        raise RegionError(f"north_south must be one of {NORTH_SOUTH}, got {bad}")
    return table


def source_line(path: Path | str = REGIONS_CSV) -> str:
    """The CSV's first (comment) line: the table's version and source."""
    with open(path, encoding="utf-8") as fh:
        first = fh.readline().strip()
    return first.lstrip("# ").strip() if first.startswith("#") else ""


@lru_cache(maxsize=4)
def _load(path: str) -> pd.DataFrame:
    table = pd.read_csv(path, comment="#", dtype=str, keep_default_na=False)
    return validate_regions(table)


def load_regions(path: Path | str | None = None) -> pd.DataFrame:
    """The validated region table (a copy; cached per path)."""
    return _load(str(path or REGIONS_CSV)).copy()


def region_of(iso3: Optional[str], column: str = "region", table: Optional[pd.DataFrame] = None) -> Optional[str]:
    """The region (or ``north_south``, ``un_region``, ``continent``) of one ISO3 code; None for
    a missing code; :class:`RegionError` for a code the table lacks."""
    if iso3 is None or (isinstance(iso3, float) and pd.isna(iso3)):
        return None
    t = load_regions() if table is None else table
    hit = t.loc[t["iso3"] == str(iso3).upper(), column]
    if hit.empty:
        raise RegionError(f"no region for ISO3 {iso3!r}: regenerate data/regions/regions.csv")
    return str(hit.iloc[0])


def home_iso3(nationalities: Iterable[str], aliases: Mapping[str, str] | None = None) -> dict[str, str]:
    """Profile nationality names -> ISO3 through the project's country resolver (core.reference.geo)."""
    from .geo import CountryResolver

    res = CountryResolver(aliases)
    out = {}
    for n in pd.unique(pd.Series(list(nationalities), dtype=object).dropna()):
        iso = res.iso3(n)
        if iso is None:
            raise RegionError(f"home {n!r} does not resolve to a country")
        out[n] = iso
    return out


def attach_regions(
    frame: pd.DataFrame,
    iso3_col: str = "iso3",
    prefix: str = "",
    columns: Sequence[str] = ("region", "north_south"),
    table: Optional[pd.DataFrame] = None,
    strict: bool = True,
) -> pd.DataFrame:
    """A copy of ``frame`` with ``{prefix}{column}`` for each of ``columns``, looked up by the
    ISO3 code in ``iso3_col``. A missing code gives missing regions; an unknown code raises
    (``strict``) or gives missing regions."""
    t = load_regions() if table is None else table
    codes = frame[iso3_col].astype(object)
    known = set(t["iso3"])
    unknown = sorted({c for c in codes.dropna().astype(str) if c not in known})
    if unknown and strict:
        raise RegionError(f"no region for ISO3 {unknown[:10]}: regenerate data/regions/regions.csv")
    out = frame.copy()
    lookup = t.set_index("iso3")
    for col in columns:
        out[f"{prefix}{col}"] = codes.map(lookup[col]).astype(object)
    return out


def attach_student_regions(
    frame: pd.DataFrame,
    nationality_col: Optional[str] = None,
    columns: Sequence[str] = ("region", "north_south"),
    table: Optional[pd.DataFrame] = None,
    iso3_of: Mapping[str, str] | None = None,
) -> pd.DataFrame:
    """A copy of a profile-level frame (profiles, drs_responses) with ``student_iso3`` and the
    student's ``region`` / ``north_south`` (unprefixed: they are profile attributes). Profiles
    without a nationality (reduced-context templates) get missing regions. ``nationality_col``: the
    design's home axis by default."""
    from . import axes

    nat = frame[nationality_col or axes.home()]
    mapping = dict(iso3_of) if iso3_of is not None else home_iso3(nat.dropna().unique())
    out = frame.copy()
    out["student_iso3"] = nat.map(mapping).astype(object)
    return attach_regions(out, "student_iso3", "", columns, table)
