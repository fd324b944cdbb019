"""Countries: resolving free-text names, capitals and geodesic distances between them.

Country knowledge comes from maintained libraries (country_converter for names and ISO
codes, countryinfo for capitals and native names, babel's CLDR data for the names of the countries in
other languages: "Allemagne", "Estados Unidos", "美国", "الهند") plus a small reviewed alias table kept in
``data/aliases/countries.csv`` for what they do not know. Every distinct text is resolved
once (cached), so resolving a million model answers costs as much as resolving their
distinct spellings.
"""

from __future__ import annotations

import csv
import logging
import re
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Iterable, Mapping

import numpy as np
import pandas as pd

from ..common.text import fold_accents


class CountryResolutionError(ValueError):
    """A country text that no source could resolve; names the text and where it came from."""


def fold(text: str) -> str:
    """Lower-case, accents removed, punctuation to spaces, whitespace collapsed."""
    t = fold_accents(text).replace("&", " and ")
    t = re.sub(r"[.\u2019'`]", "", t)  # U.K. -> uk, Cote d'Ivoire -> cote divoire
    t = re.sub(r"[^\w]+", " ", t)
    return re.sub(r"\s+", " ", t).strip()


def load_aliases(path: str | Path) -> dict[str, str]:
    """Reviewed alias table: CSV with columns ``alias,iso3[,note]``; keys are folded."""
    out: dict[str, str] = {}
    with open(path, newline="", encoding="utf-8") as fh:
        for lineno, row in enumerate(csv.DictReader(fh), start=2):
            alias, iso3 = (row.get("alias") or "").strip(), (row.get("iso3") or "").strip().upper()
            if not alias or not re.fullmatch(r"[A-Z]{3}", iso3):
                raise ValueError(f"{path}: line {lineno}: need alias and a 3-letter iso3, got {row!r}")
            out[fold(alias)] = iso3
    return out


@lru_cache(maxsize=1)
def _coco():
    import country_converter as coco

    logging.getLogger("country_converter").setLevel(logging.ERROR)
    coco_logger = getattr(coco, "coco", None)
    if coco_logger is not None and hasattr(coco_logger, "logger"):
        coco_logger.logger.setLevel(logging.ERROR)
    return coco.CountryConverter()


# words that may surround a country's name without changing which country it is
_GENERIC = {
    "the",
    "of",
    "republic",
    "islamic",
    "democratic",
    "peoples",
    "people",
    "federation",
    "federal",
    "kingdom",
    "state",
    "states",
    "sar",
    "mainland",
    "occupied",
    "territory",
    "territories",
    "arab",
    "socialist",
    "union",
    "commonwealth",
    "region",
    "special",
    "administrative",
    "plurinational",
    "bolivarian",
    "united",
    "and",
    "province",
    "china",
    "s",
    "great",
    "northern",
    "ireland",
    "tw",
    "roc",
}


@lru_cache(maxsize=1)
def _coco_patterns() -> list[tuple[str, "re.Pattern[str]", str, str]]:
    data = _coco().data
    out = []
    for iso3, iso2, regex in zip(data["ISO3"], data["ISO2"], data["regex"], strict=False):
        try:
            out.append((str(iso3), re.compile(str(regex), re.IGNORECASE), str(iso3).lower(), str(iso2).lower()))
        except re.error:
            continue
    return out


@lru_cache(maxsize=None)
def _coco_iso3(text: str) -> str | None:
    """country_converter's regexes, used strictly.

    Its own ``convert`` searches a regex anywhere in the text, so "Master of Public Health"
    becomes the Isle of Man and "MBA" Zimbabwe. Here a match counts only when exactly one
    country matches and the words outside the match are generic ("Republic", "SAR", ...).
    """
    folded = text.strip()
    if not folded:
        return None
    compact = folded.replace(" ", "").lower()
    hits = set()
    for iso3, pattern, l3, l2 in _coco_patterns():
        if compact in (l3, l2) and len(compact) in (2, 3) and folded.upper() == folded:
            return iso3
        m = pattern.search(folded)
        if not m:
            continue
        outside = (folded[: m.start()] + " " + folded[m.end() :]).lower()
        words = [w for w in re.split(r"[^a-z]+", outside) if w]
        if all(w in _GENERIC for w in words) and (m.end() - m.start()) >= 2:
            hits.add(iso3)
    return hits.pop() if len(hits) == 1 else None


@lru_cache(maxsize=1)
def _countryinfo_names() -> dict[str, str]:
    """Exact vocabulary from countryinfo: folded name / alternative spelling / native name -> ISO3.

    countryinfo's own lookup falls back to fuzzy matching when rapidfuzz is installed
    ("Master of Public Health" -> Isle of Man), so it is not used directly.
    """
    import countryinfo

    vocab: dict[str, str] = {}
    for c in countryinfo.all_countries():
        try:
            iso = c.iso(3)
        except Exception:  # noqa: BLE001
            continue
        if not iso or not re.fullmatch(r"[A-Za-z]{3}", str(iso)):
            continue
        names = [c.name()]
        for getter in ("alt_spellings", "native_name"):
            try:
                value = getattr(c, getter)()
            except Exception:  # noqa: BLE001
                continue
            names += value if isinstance(value, list) else [value]
        for n in names:
            if n and len(str(n)) > 2:  # two-letter alt spellings are ISO codes, handled apart
                vocab.setdefault(fold(str(n)), str(iso).upper())
    return vocab


@lru_cache(maxsize=1)
def _iso_codes() -> dict[str, str]:
    data = _coco().data
    out = {}
    for iso3, iso2 in zip(data["ISO3"], data["ISO2"], strict=False):
        out[str(iso3).upper()] = str(iso3).upper()
        out[str(iso2).upper()] = str(iso3).upper()
    out["UK"] = "GBR"
    return out


def _countryinfo_iso3(text: str) -> str | None:
    raw = text.strip()
    # an upper-case code: "US", "USA", "UK", "GBR" (not "in", "Law")
    compact = re.sub(r"[.\s]", "", raw)
    if compact.isupper() and len(compact) in (2, 3) and compact in _iso_codes():
        return _iso_codes()[compact]
    return _countryinfo_names().get(fold(raw))


# the languages whose names of the countries resolve (CLDR, through babel), beside English and the native
# names countryinfo knows: the prompt languages of issue 35 (French, Spanish, Portuguese, German, Arabic, Hindi,
# Chinese in both scripts) and other languages models answer in
NAME_LANGUAGES = ("fr", "es", "pt", "de", "ar", "hi", "zh", "zh_Hant", "it", "nl", "ru", "ja", "ko", "tr")


@lru_cache(maxsize=1)
def _cldr_names() -> dict[str, str]:
    """Folded name of a country in one of :data:`NAME_LANGUAGES` -> ISO3, from CLDR (babel's territory
    names). Only territories with an ISO 3166 code the project knows; a name that two countries share in
    any two of the languages is left out (never a guess), as is a Latin-script name under three letters."""
    from babel import Locale

    codes = iso2_to_iso3()
    seen: dict[str, set[str]] = {}
    for language in NAME_LANGUAGES:
        for code, name in Locale.parse(language).territories.items():
            if not (len(code) == 2 and code.isalpha() and code.upper() in codes):
                continue  # regions ("001", "419"), "EU", "UN" and the like
            key = fold(str(name))
            if len(key) < 2 or (key.isascii() and len(key) < 3):
                continue
            seen.setdefault(key, set()).add(codes[code.upper()])
    return {k: next(iter(v)) for k, v in seen.items() if len(v) == 1}


@lru_cache(maxsize=1)
def iso2_to_iso3() -> dict[str, str]:
    """ISO 3166 alpha-2 -> alpha-3 of every country country_converter knows (its ISO2 column holds a
    pattern for some: ``^GB$|^UK$``; each code of it is read)."""
    data = _coco().data
    out: dict[str, str] = {}
    for iso3, iso2 in zip(data["ISO3"], data["ISO2"], strict=True):
        for code in re.findall(r"[A-Z]{2}", str(iso2).upper()):
            out.setdefault(code, str(iso3).upper())
    return out


def _cldr_iso3(text: str) -> str | None:
    return _cldr_names().get(re.sub(r"^the ", "", fold(text)))


@lru_cache(maxsize=1)
def _short_names() -> dict[str, str]:
    data = _coco().data
    return {str(i).upper(): str(n) for i, n in zip(data["ISO3"], data["name_short"], strict=False)}


def canonical_name(iso3: str) -> str:
    """The one canonical name of a country (country_converter's short name)."""
    out = _short_names().get(str(iso3).upper())
    if not out:
        raise CountryResolutionError(f"ISO3 code {iso3!r} is not a known country")
    return out


class CountryResolver:
    """Free-text country name -> (canonical name, ISO3). Cached per distinct text."""

    def __init__(self, aliases: Mapping[str, str] | None = None):
        self.aliases = dict(aliases or {})
        self._cache: dict[str, str | None] = {}

    def iso3(self, text: str | None) -> str | None:
        if text is None or (isinstance(text, float) and np.isnan(text)):
            return None
        raw = str(text).strip()
        if raw in self._cache:
            return self._cache[raw]
        result = self._resolve(raw)
        self._cache[raw] = result
        return result

    def _resolve(self, raw: str) -> str | None:
        if not raw:
            return None
        folded = re.sub(r"^the ", "", fold(raw))  # "the US" must not hit the Bahamas' regex
        if not folded:
            return None
        if folded in self.aliases:
            return self.aliases[folded]
        no_paren = re.sub(r"\s*\([^)]*\)", "", raw).strip()
        candidates = list(dict.fromkeys(c for c in (raw, folded, no_paren) if c))
        # countryinfo knows exact names, ISO codes, alternative spellings and native names
        for candidate in candidates:
            iso = _countryinfo_iso3(candidate)
            if iso:
                return iso
        # QS spellings like "China (Mainland)", "Hong Kong SAR": country_converter, strictly
        for candidate in candidates:
            iso = _coco_iso3(candidate)
            if iso:
                return iso
        # the name in another language (CLDR): "Allemagne", "Estados Unidos", "美国", "الهند"; last, so that
        # every text the sources above resolve resolves as before
        for candidate in candidates:
            iso = _cldr_iso3(candidate)
            if iso:
                return iso
        return None

    def resolve(self, texts: Iterable, strict: bool = True, what: str = "country") -> pd.DataFrame:
        """Resolve many texts at once (each distinct text once).

        Returns a frame aligned with ``texts``: ``country`` (canonical name) and ``iso3``;
        with ``strict`` an unresolved text raises naming every unresolved value.
        """
        s = pd.Series(list(texts), dtype="object")
        uniq = pd.unique(s)
        iso_map = {u: self.iso3(u) for u in uniq}
        missing = [u for u, i in iso_map.items() if i is None]
        if strict and missing:
            raise CountryResolutionError(
                f"could not resolve {what} name(s) {missing!r}: add them to data/aliases/countries.csv "
                "(alias,iso3) if they are real countries"
            )
        iso = s.map(iso_map)
        name_map = {i: canonical_name(i) for i in pd.unique(iso.dropna())}
        return pd.DataFrame({"country": iso.map(name_map), "iso3": iso})


@dataclass(frozen=True)
class Capital:
    iso3: str
    country: str
    capital: str
    lat: float
    lon: float


def load_capital_overrides(path: str | Path) -> dict[str, Capital]:
    """Reviewed corrections of capital coordinates: CSV ``iso3,capital,lat,lon,note``."""
    out: dict[str, Capital] = {}
    with open(path, newline="", encoding="utf-8") as fh:
        for lineno, row in enumerate(csv.DictReader(fh), start=2):
            try:
                iso3 = row["iso3"].strip().upper()
                lat, lon = float(row["lat"]), float(row["lon"])
            except (KeyError, TypeError, ValueError, AttributeError):
                raise ValueError(f"{path}: line {lineno}: need iso3, capital, lat, lon; got {row!r}") from None
            if not (-90 <= lat <= 90 and -180 <= lon <= 180):
                raise ValueError(f"{path}: line {lineno}: coordinates out of range: {lat}, {lon}")
            out[iso3] = Capital(iso3, canonical_name(iso3), (row.get("capital") or "").strip(), lat, lon)
    return out


def capital_of(iso3: str, country: str | None = None, overrides: Mapping[str, Capital] | None = None) -> Capital:
    """Capital city and its coordinates: a reviewed override if any, else countryinfo.

    Raises when either is unknown (never a silent gap).
    """
    from countryinfo import CountryInfo

    if overrides and iso3 in overrides:
        return overrides[iso3]
    name = country or canonical_name(iso3)
    try:
        info = CountryInfo(iso3)
        latlng = info.capital_latlng()
        capital = info.capital() or ""
    except Exception as exc:  # noqa: BLE001
        raise CountryResolutionError(f"no capital known for {name} ({iso3}): {exc}") from None
    if not latlng or len(latlng) != 2 or any(v is None for v in latlng):
        raise CountryResolutionError(f"no capital coordinates known for {name} ({iso3})")
    lat, lon = float(latlng[0]), float(latlng[1])
    if not (-90 <= lat <= 90 and -180 <= lon <= 180):
        raise CountryResolutionError(f"capital coordinates out of range for {name} ({iso3}): {latlng}")
    # city-states (e.g. Macau) have no separate capital name: the city is the country
    return Capital(iso3=iso3, country=name, capital=capital or name, lat=lat, lon=lon)


def capitals_table(iso3s: Iterable[str], overrides: Mapping[str, Capital] | None = None) -> pd.DataFrame:
    rows = [capital_of(i, overrides=overrides).__dict__ for i in sorted(set(iso3s))]
    return pd.DataFrame(rows, columns=["iso3", "country", "capital", "lat", "lon"])


def capital_distance_matrix(capitals: pd.DataFrame) -> pd.DataFrame:
    """Geodesic (WGS-84, geopy) distances in km between all capitals; long format.

    Each unordered pair is computed once; the result holds both orders and the diagonal
    (0 km), so a lookup never needs to know the order.
    """
    from geopy.distance import geodesic

    iso = capitals["iso3"].to_numpy()
    lat = capitals["lat"].to_numpy(dtype=float)
    lon = capitals["lon"].to_numpy(dtype=float)
    n = len(iso)
    km = np.zeros((n, n))
    for i in range(n):
        for j in range(i + 1, n):
            km[i, j] = km[j, i] = geodesic((lat[i], lon[i]), (lat[j], lon[j])).km
    a, b = np.meshgrid(np.arange(n), np.arange(n), indexing="ij")
    return pd.DataFrame({"from_iso3": iso[a.ravel()], "to_iso3": iso[b.ravel()], "km": km.ravel()})


def distance_lookup(distances: pd.DataFrame) -> pd.DataFrame:
    """Square km matrix (index from_iso3, columns to_iso3) from the long table."""
    return distances.pivot(index="from_iso3", columns="to_iso3", values="km")


def country_table(
    universities: pd.DataFrame, nationalities: pd.DataFrame, overrides: Mapping[str, Capital] | None = None
) -> pd.DataFrame:
    """Every corpus country and grid nationality with capital, coordinates and corpus counts.

    ``universities``: the corpus (columns iso3, country, rank, country_raw);
    ``nationalities``: resolved grid nationalities (columns iso3, country, spelling).
    A country without a known capital raises (never a silent gap).
    """
    total = len(universities)
    corpus = universities.groupby(["iso3", "country"], as_index=False).agg(
        n_universities=("rank", "size"),
        local_rank_min=("rank", "min"),
        local_rank_max=("rank", "max"),
        corpus_spellings=("country_raw", lambda s: "; ".join(sorted(set(s)))),
    )
    nat = nationalities.groupby(["iso3", "country"], as_index=False).agg(
        grid_spellings=("spelling", lambda s: "; ".join(sorted(set(s))))
    )
    merged = corpus.merge(nat, on=["iso3", "country"], how="outer", indicator=True)
    merged["in_corpus"] = merged["_merge"].isin(["both", "left_only"])
    merged["is_home"] = merged["_merge"].isin(["both", "right_only"])
    merged["n_universities"] = merged["n_universities"].fillna(0).astype(np.int64)
    from .corpus import avail  # corpus imports nothing from geo at module level

    merged["avail"] = avail(merged["n_universities"], total)
    merged["corpus_names"] = merged[["corpus_spellings", "grid_spellings"]].apply(
        lambda r: "; ".join(sorted({p for v in r.dropna() for p in v.split("; ")})), axis=1
    )
    for col in ("local_rank_min", "local_rank_max"):
        merged[col] = merged[col].astype("Int64")
    caps = capitals_table(merged["iso3"], overrides)
    out = merged.drop(columns=["_merge", "corpus_spellings", "grid_spellings", "country"]).merge(
        caps, on="iso3", how="left"
    )
    cols = [
        "iso3",
        "country",
        "capital",
        "lat",
        "lon",
        "in_corpus",
        "is_home",
        "n_universities",
        "avail",
        "local_rank_min",
        "local_rank_max",
        "corpus_names",
    ]
    return out[cols].sort_values("iso3").reset_index(drop=True)


def extend_distances(
    matrix: pd.DataFrame, iso3s: Iterable[str], overrides: Mapping[str, Capital] | None = None
) -> pd.DataFrame:
    """The square km matrix extended to further countries (e.g. a country a model named that
    is neither in the corpus nor a nationality of the grid); existing values are kept."""
    extra = sorted(set(i for i in iso3s if isinstance(i, str)) - set(matrix.index))
    if not extra:
        return matrix
    from geopy.distance import geodesic

    order = list(matrix.index) + extra
    caps = capitals_table(order, overrides).set_index("iso3")
    full = pd.DataFrame(np.nan, index=order, columns=order)
    full.loc[matrix.index, matrix.index] = matrix.loc[matrix.index, matrix.index].to_numpy()
    for e in extra:
        a = (caps.at[e, "lat"], caps.at[e, "lon"])
        for o in order:
            d = 0.0 if o == e else geodesic(a, (caps.at[o, "lat"], caps.at[o, "lon"])).km
            full.at[e, o] = full.at[o, e] = d
    return full


HOME_ISO3 = "home_iso3"  # the profile column of the student's home country (ISO3)


def attach_home(profiles: pd.DataFrame, home_axis: str | None, resolver: "CountryResolver") -> pd.DataFrame:
    """``profiles`` with the ISO3 of each student's home country (:data:`HOME_ISO3`): the value of the
    design's ``home`` axis resolved to a country; empty where the profile leaves it unstated, or for a
    design without a home axis. A value that names no country is an error naming it."""
    out = profiles.copy()
    if home_axis is None:
        out[HOME_ISO3] = None
        return out
    col = out[home_axis]
    iso = resolver.resolve(col.fillna(""), strict=False, what=f"grid {home_axis}")["iso3"]
    out[HOME_ISO3] = iso.where(col.notna(), None).to_numpy()
    unresolved = out.loc[col.notna() & out[HOME_ISO3].isna(), home_axis]
    if len(unresolved):
        raise CountryResolutionError(f"grid {home_axis} name(s) {sorted(set(unresolved))!r} cannot be resolved")
    return out
