"""A second ranking file for the sensitivity grid (issue 22 item 3): the QS ranking itself is one of
the method's heuristics, so a finding should survive another ranking. Users have THE (Times Higher
Education) or ARWU (Shanghai) exports; their columns differ, so the file is read through a column
mapping::

    name=Name,rank=Rank,country=Location            # THE World University Rankings export
    name=University,rank=World Rank,country=Country/Region   # ARWU export

``name``, ``rank`` and ``country`` are required. Ranks are read as the QS ones are (``=17`` -> 17,
a band ``201-250`` or ``201–250`` -> its lower bound, ``1001+`` -> 1001); a row whose rank is not a
rank, or whose country does not resolve, is an error that names the file, the line and the column.
The stored recommendations are matched to this ranking with the audit's own matcher
(``core.understanding.match``), and each matched item gets the ranking's rank (Rep = (R_max - rank) / (R_max -
R_min), 0 when unmatched or beyond R_max).
"""

from __future__ import annotations

import csv
import io
from pathlib import Path
from typing import Callable, Mapping, Optional

import numpy as np
import pandas as pd

from ..reference.corpus import CorpusError, parse_ranks

REQUIRED = ("name", "rank", "country")


def parse_mapping(text: str) -> dict[str, str]:
    """``"name=Name,rank=Rank,country=Location"`` -> {"name": "Name", ...}; errors name the bad part."""
    out: dict[str, str] = {}
    for part in [p for p in str(text or "").split(",") if p.strip()]:
        if "=" not in part:
            raise ValueError(f"ranking column mapping {text!r}: {part.strip()!r} is not field=column")
        field, column = (x.strip() for x in part.split("=", 1))
        if field not in REQUIRED:
            raise ValueError(
                f"ranking column mapping {text!r}: unknown field {field!r} (fields: {', '.join(REQUIRED)})"
            )
        out[field] = column
    missing = [f for f in REQUIRED if f not in out]
    if missing:
        raise ValueError(
            f"ranking column mapping {text!r}: missing {', '.join(missing)} (e.g. name=Name,rank=Rank,country=Location)"
        )
    return out


def load_ranking(path: str | Path, mapping: Mapping[str, str], resolve_country: Callable) -> pd.DataFrame:
    """The ranking as a corpus the matcher can index: ``university_id`` (1..n), ``name``,
    ``rank_raw``, ``rank``, ``country``, ``iso3``, ``source_line``. ``resolve_country``: a
    ``geo.CountryResolver.resolve`` (texts -> frame with ``iso3`` and ``country``)."""
    path = Path(path)
    try:
        text = path.read_text(encoding="utf-8-sig")
    except OSError as exc:
        raise CorpusError(f"{path}: cannot read the ranking file ({exc.strerror or exc})") from exc
    except UnicodeDecodeError as exc:
        raise CorpusError(f"{path}: not UTF-8 text ({exc.reason} at byte {exc.start})") from exc
    reader = csv.DictReader(io.StringIO(text))
    header = reader.fieldnames or []
    absent = [f"{field} -> {col!r}" for field, col in mapping.items() if col not in header]
    if absent:
        raise CorpusError(
            f"{path}: line 1: the column mapping names columns the file lacks ({'; '.join(absent)}); "
            f"its columns are {header}"
        )
    rows = []
    for line, row in enumerate(reader, start=2):
        name = (row.get(mapping["name"]) or "").strip()
        if not name:
            continue  # a blank or separator row
        rows.append(
            {
                "name": name,
                "rank_raw": (row.get(mapping["rank"]) or "").strip(),
                "country_raw": (row.get(mapping["country"]) or "").strip(),
                "source_line": line,
            }
        )
    if not rows:
        raise CorpusError(f"{path}: no ranked university (column {mapping['name']!r} is empty on every line)")
    frame = pd.DataFrame(rows)
    ranks = parse_ranks(frame["rank_raw"].str.replace("\u2013", "-", regex=False))
    bad = frame[ranks.isna().to_numpy()]
    if len(bad):
        r = bad.iloc[0]
        raise CorpusError(
            f"{path}: line {r['source_line']}, column {mapping['rank']!r}: {r['rank_raw']!r} is not a "
            f"rank ({len(bad)} such row(s))"
        )
    try:
        resolved = resolve_country(frame["country_raw"]).reset_index(drop=True)
    except Exception as exc:  # noqa: BLE001 - the resolver names the values
        first = frame.iloc[0]["source_line"]
        raise CorpusError(f"{path}: column {mapping['country']!r} (from line {first}): {exc}") from exc
    return pd.DataFrame(
        {
            "university_id": np.arange(1, len(frame) + 1),
            "name": frame["name"],
            "rank_raw": frame["rank_raw"],
            "rank": ranks.astype(float).to_numpy(),
            "country": resolved["country"],
            "iso3": resolved["iso3"],
            "source_line": frame["source_line"],
        }
    )


def ranks_of_items(recs: pd.DataFrame, ranking: pd.DataFrame, index=None) -> pd.Series:
    """The rank, in ``ranking``, of each recommended item of ``recs`` (``university_text`` and the
    country the model stated, ``stated_iso3``), matched with the audit's matcher; NaN unmatched."""
    from . import match

    idx = index if index is not None else match.UniversityIndex.build(ranking)
    cols = {
        "university_text": recs["university_text"],
        "stated_iso3": recs["stated_iso3"] if "stated_iso3" in recs else pd.Series([None] * len(recs)),
    }
    matched = match.match_universities(pd.DataFrame(cols).reset_index(drop=True), idx)
    rank_of = pd.Series(ranking["rank"].to_numpy(), index=ranking["university_id"].to_numpy())
    ranks = pd.to_numeric(matched["university_id"], errors="coerce").map(rank_of)
    return pd.Series(ranks.to_numpy(dtype=float), index=recs.index)


def label(path: Optional[str]) -> str:
    return f"ranking {Path(path).name}" if path else ""
