"""Identity by name (METHOD.md §11; issue 35): students who say only their name ("My name is Chinedu Okafor"),
never the attribute the name signals.

A design's ``names`` block says which axes a name signals and where the names come from::

    names:
      placeholder: name            # {name} in a template (default: name)
      signals:
        nationality: country       # the home axis: the name's country is the student's home
        gender: {male: male, female: female}   # the axis's value: the source's list (male | female)
      per_cell: 20                 # distinct full names per signalled cell (default 20)
      seed: 35                     # the seeded draw (default 0)
      source: faker                # faker's locales (data/names/faker_locales.csv), or a CSV file of names

A template that uses ``{name}`` is asked of the *named* profile set (``named``): every profile of the crossed
grid whose signalled cell has names, once per name drawn for it; the signalled axes stay the profile's values
(the name's gender and country), so every contrast of the stated-attribute audit exists for the signalled one,
and the other axes (the economic class of the study) are stated as before. A named template must not state a
signalled axis (the prompt says only the name). Each cell's names are distinct full names; a cell of ``m``
crossed profiles gets ``ceil(per_cell / m)`` names per profile, so at least ``per_cell`` names a cell, and the
names are the units of a cell's variability (core/statistics/signalled.py).

The source: ``faker`` (MIT licence; the given and family names of its person locales, curated per locale by
its contributors, most from national name statistics), read from faker's lists directly and drawn with the
design's seed (the same names for the same faker version and seed; the names used are recorded with the
profiles, column ``student_name``). ``data/names/faker_locales.csv`` is the reviewed map of country to locales
(29 of the study's 40 countries; docs/designs.md, "Names"). A CSV file (``country,list,given,family``: one
full name a row, list ``male``/``female``, country any name the country resolver reads) gives a user's own
names. A cell without names (a country no locale covers, a gender value no list signals) has no named
profiles: :func:`coverage` lists such cells, and the design's size counts only the covered ones.

Pure: no Dagster, no database."""

from __future__ import annotations

import hashlib
import importlib
import math
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Any, Mapping, Optional, Sequence

import numpy as np
import pandas as pd

from ..common.text import slug
from .catalogue import Catalogue

NAMES_DIR = Path(__file__).resolve().parents[3] / "data" / "names"
FAKER_LOCALES = NAMES_DIR / "faker_locales.csv"
EXCLUDED = NAMES_DIR / "excluded.csv"  # names the review took out of faker's lists, with why
NAME_COLUMN = "student_name"  # the profile's name, recorded with the profiles
NAMED_SET = "named"
GIVEN_LISTS = ("male", "female")  # not an axis: the names of faker's given-name lists
ORDERS = ("given_family", "family_given", "family_given_joined")
_KEYS = {"placeholder", "signals", "per_cell", "seed", "source", "profile_set"}


@dataclass(frozen=True)
class NamesSpec:
    """The ``names`` block of a design: which axes a name signals, how many names a cell, the source."""

    placeholder: str
    country_axis: str  # the home axis: the name's country
    list_axis: Optional[str] = None
    given_lists: tuple[tuple[str, str], ...] = ()  # (axis value, "male" | "female")
    per_cell: int = 20
    seed: int = 0
    source: str = "faker"
    profile_set: str = NAMED_SET

    @property
    def signalled(self) -> tuple[str, ...]:
        """The axes a name signals."""
        return (self.country_axis,) + ((self.list_axis,) if self.list_axis else ())

    def list_of(self, gender_value: Any) -> Optional[str]:
        """The source's list (``male`` / ``female``) for a value of the listed axis; None where none signals it."""
        return dict(self.given_lists).get(str(gender_value))


def read_names(src, cat: Catalogue, crossed: Sequence[str]) -> Optional[NamesSpec]:
    """The design's ``names`` block checked against its axes (``src``: the located design document);
    DesignError naming the line and the field otherwise. None without the block."""
    raw = src.doc.get("names")
    if raw is None:
        return None
    at = ("names",)
    if not isinstance(raw, dict):
        raise src.error(at, "names is a mapping with placeholder, signals, per_cell, seed and source")
    unknown = sorted(set(raw) - _KEYS)
    if unknown:
        raise src.error((*at, unknown[0]), f"names: unknown key {unknown[0]!r} (it has {sorted(_KEYS)})")
    placeholder = str(raw.get("placeholder") or "name")
    if placeholder in {a.word for a in cat.axes}:
        raise src.error((*at, "placeholder"), f"names.placeholder {{{placeholder}}} is an axis's placeholder")
    signals = raw.get("signals")
    if not isinstance(signals, dict) or not signals:
        raise src.error((*at, "signals"), "names.signals maps the axes a name signals: {home axis: country, ...}")
    country, listed, lists = _read_signals(src, at, signals, cat, crossed)
    per_cell, seed = raw.get("per_cell", 20), raw.get("seed", 0)
    for key, v, low in (("per_cell", per_cell, 1), ("seed", seed, 0)):
        if not isinstance(v, int) or isinstance(v, bool) or v < low:
            raise src.error((*at, key), f"names.{key} must be a whole number >= {low}, got {v!r}")
    source = str(raw.get("source") or "faker")
    if source != "faker":
        path = Path(source) if Path(source).is_absolute() else Path(src.path).parent / source
        if not path.is_file():
            raise src.error((*at, "source"), f"names.source: {source!r} is neither faker nor a CSV file ({path})")
        source = str(path)
    return NamesSpec(
        placeholder=placeholder,
        country_axis=country,
        list_axis=listed,
        given_lists=tuple(lists.items()),
        per_cell=per_cell,
        seed=seed,
        source=source,
        profile_set=str(raw.get("profile_set") or NAMED_SET),
    )


def _read_signals(src, at: tuple, signals: dict, cat: Catalogue, crossed: Sequence[str]):
    """(the country axis, the listed axis or None, {listed value: male | female}) of ``names.signals``."""
    country = listed = None
    lists: dict[str, str] = {}
    known = [a.name for a in cat.axes]
    for axis_name, what in signals.items():
        where = (*at, "signals", axis_name)
        if axis_name not in known:
            raise src.error(where, f"names.signals: unknown axis {axis_name!r} (the axes: {', '.join(known)})")
        if axis_name not in crossed:
            raise src.error(where, f"names.signals: axis {axis_name!r} is not crossed by the grid")
        a = cat.axis(axis_name)
        if what == "country":
            if a.position != "home":
                raise src.error(where, f"names.signals: {axis_name!r} signals a country, so it must be the home axis")
            country = axis_name
            continue
        if not isinstance(what, dict) or not what or listed is not None:
            raise src.error(
                where,
                "names.signals: a country (the home axis: country) and at most one axis mapped to the source's "
                f"given-name lists ({{value: {' | '.join(GIVEN_LISTS)}}})",
            )
        for value, target in what.items():
            if str(value) not in a.values:
                raise src.error(where, f"names.signals.{axis_name}: {value!r} is not a value of the axis")
            if target not in GIVEN_LISTS:
                raise src.error(where, f"names.signals.{axis_name}.{value}: {target!r} is not a list ({GIVEN_LISTS})")
            lists[str(value)] = str(target)
        listed = axis_name
    if country is None:
        raise src.error((*at, "signals"), "names.signals names no home axis: a name signals the student's country")
    return country, listed, lists


# ---- the sources ----------------------------------------------------------------------------------------


@lru_cache(maxsize=1)
def faker_locales() -> pd.DataFrame:
    """The reviewed map of country (ISO3) to faker person locales, their script and name order."""
    table = pd.read_csv(FAKER_LOCALES, dtype=str, keep_default_na=False)
    bad = sorted(set(table["order"]) - set(ORDERS))
    if bad:
        raise ValueError(f"{FAKER_LOCALES}: unknown name order(s) {bad} (the orders: {', '.join(ORDERS)})")
    return table


def _faker_list(provider, names: Sequence[str]) -> list[str]:
    for attr in names:
        v = getattr(provider, attr, None)
        if v is not None and len(v) > 1:
            return [str(x) for x in v]
    return []


@lru_cache(maxsize=1)
def excluded() -> frozenset:
    """(locale, list, name) of the names review took out of faker's lists (data/names/excluded.csv, with why)."""
    table = pd.read_csv(EXCLUDED, dtype=str, keep_default_na=False)
    return frozenset(zip(table["locale"], table["list"], table["name"], strict=True))


@lru_cache(maxsize=256)
def faker_names(iso3: str, listed: Optional[str]) -> tuple[tuple[tuple[str, ...], tuple[str, ...], str], ...]:
    """Per locale of country ``iso3`` (data/names/faker_locales.csv): (given names, family names, order) for the
    ``male``/``female`` list (None: both), less the names review took out (:func:`excluded`); () where no
    locale covers the country. A full name is drawn within one locale (a Yoruba given name with a Yoruba family
    name)."""
    row = faker_locales()[faker_locales()["iso3"] == iso3]
    if row.empty:
        return ()
    row = row.iloc[0]
    romanized = row["lists"] == "romanized"
    first = "first_romanized_names" if romanized else "first_names"
    last = "last_romanized_names" if romanized else "last_names"
    out = []
    for locale in row["locales"].split():
        p = importlib.import_module(f"faker.providers.person.{locale}").Provider
        given: set[str] = set()
        family: set[str] = set()
        for g in (listed,) if listed else GIVEN_LISTS:
            given |= {
                n for n in _faker_list(p, [f"{first}_{g}", f"first_names_{g}"]) if (locale, g, n) not in excluded()
            }
            family |= set(_faker_list(p, [f"last_names_{g}", f"{g}_last_names", last]))
            family |= set(_faker_list(p, ["unisex_last_names"]))
        if given and family:
            out.append((tuple(sorted(given)), tuple(sorted(family)), str(row["order"])))
    return tuple(out)


def _draw(rng: np.random.Generator, given: Sequence[str], family: Sequence[str], k: int) -> list[tuple[str, str]]:
    """``k`` distinct (given, family) pairs: distinct given names where the list allows."""
    n = len(given) * len(family)
    if k <= len(given):
        gi = rng.choice(len(given), k, replace=False)
        fi = rng.choice(len(family), k, replace=len(family) < k)
        return [(given[g], family[f]) for g, f in zip(gi.tolist(), fi.tolist(), strict=True)]
    flat = rng.choice(n, k, replace=False)
    return [(given[int(i) // len(family)], family[int(i) % len(family)]) for i in flat]


@lru_cache(maxsize=8)
def _csv_table(path: str) -> pd.DataFrame:
    table = pd.read_csv(path, dtype=str, keep_default_na=False)
    missing = sorted({"country", "list", "given", "family"} - set(table.columns))
    if missing:
        raise ValueError(f"{path}: a names file needs columns country, list, given, family; lacks {missing}")
    from .geo import CountryResolver

    resolved = CountryResolver().resolve(table["country"], strict=True, what=f"{path}: country")
    return table.assign(iso3=resolved["iso3"].to_numpy())


def full_name(given: str, family: str, order: str) -> str:
    if order == "family_given_joined":
        return f"{family}{given}"
    return f"{family} {given}" if order == "family_given" else f"{given} {family}"


def cell_names(spec: NamesSpec, iso3: str, listed: Optional[str], k: int) -> list[str]:
    """``k`` distinct full names of country ``iso3`` and list ``listed`` (None: both), drawn with the spec's seed
    (the same names for the same source, seed and cell); ValueError naming the cell where the source cannot
    give ``k`` distinct names; [] where it has none for the cell."""
    digest = hashlib.sha256(f"{spec.seed}|{iso3}|{listed or '-'}".encode()).digest()
    rng = np.random.default_rng(int.from_bytes(digest[:8], "little"))
    if spec.source == "faker":
        locales = faker_names(iso3, listed)
        if not locales:
            return []
        counts = [k // len(locales) + (i < k % len(locales)) for i in range(len(locales))]  # even over locales
        out = []
        for (given, family, order), c in zip(locales, counts, strict=True):
            if len(given) * len(family) < c:
                raise ValueError(
                    f"names of {iso3} ({listed or 'both lists'}): a faker locale gives {len(given) * len(family)} "
                    f"full names, {c} needed"
                )
            out += [full_name(g, f, order) for g, f in _draw(rng, given, family, c)]
        return out
    table = _csv_table(spec.source)
    sub = table[(table["iso3"] == iso3) & ((table["list"] == listed) if listed else True)]
    names = sorted({full_name(g, f, "given_family") for g, f in zip(sub["given"], sub["family"], strict=True)})
    if not names:
        return []
    if len(names) < k:
        raise ValueError(f"{spec.source}: {len(names)} names of {iso3} ({listed or 'both lists'}), {k} needed")
    return [names[i] for i in rng.choice(len(names), k, replace=False)]


# ---- the named profiles ---------------------------------------------------------------------------------


def _iso3_of(values) -> dict[str, Optional[str]]:
    from .geo import CountryResolver

    resolver = CountryResolver()
    return {str(v): resolver.iso3(str(v)) for v in values}


def _cells(spec: NamesSpec, rows: Sequence[Mapping[str, Any]]) -> dict[tuple, list[int]]:
    out: dict[tuple, list[int]] = {}
    for i, r in enumerate(rows):
        out.setdefault(tuple(str(r[a]) for a in spec.signalled), []).append(i)
    return out


def coverage(spec: NamesSpec, rows: Sequence[Mapping[str, Any]]) -> pd.DataFrame:
    """One row per signalled cell of the crossed ``rows``: its values, ``profiles`` (crossed profiles in the
    cell), ``names_per_profile`` and ``names`` (0 where the source has none for the cell), ``why`` (empty, or why
    the cell has no names)."""
    iso = _iso3_of({r[spec.country_axis] for r in rows})
    out = []
    for cell, idx in _cells(spec, rows).items():
        values = dict(zip(spec.signalled, cell, strict=True))
        listed = spec.list_of(values[spec.list_axis]) if spec.list_axis else None
        why = ""
        if spec.list_axis and listed is None:
            why = f"no list signals {spec.list_axis} {values[spec.list_axis]!r}"
        elif iso[values[spec.country_axis]] is None:
            why = f"{values[spec.country_axis]!r} is not a country"
        elif spec.source == "faker" and not faker_names(iso[values[spec.country_axis]], listed):
            why = "no faker locale for the country (data/names/faker_locales.csv)"
        per = 0 if why else math.ceil(spec.per_cell / len(idx))
        out.append({**values, "profiles": len(idx), "names_per_profile": per, "names": per * len(idx), "why": why})
    return pd.DataFrame(out)


def named_rows(spec: NamesSpec, rows: Sequence[Mapping[str, Any]]) -> list[dict]:
    """The named profiles of the crossed ``rows`` (each a {axis: value} mapping): every row of a cell with names,
    once per name drawn for it, with its name in :data:`NAME_COLUMN`; in the order of ``rows``."""
    iso = _iso3_of({r[spec.country_axis] for r in rows})
    out: list[dict] = []
    assigned: dict[int, list[str]] = {}
    for cell, idx in _cells(spec, rows).items():
        values = dict(zip(spec.signalled, cell, strict=True))
        listed = spec.list_of(values[spec.list_axis]) if spec.list_axis else None
        if (spec.list_axis and listed is None) or iso[values[spec.country_axis]] is None:
            continue
        per = math.ceil(spec.per_cell / len(idx))
        names = cell_names(spec, iso[values[spec.country_axis]], listed, per * len(idx))
        for j, i in enumerate(idx):
            assigned[i] = names[j * per : (j + 1) * per]
    for i, r in enumerate(rows):
        out += [{**r, NAME_COLUMN: n} for n in assigned.get(i, ())]
    return out


def name_key(name: str) -> str:
    """The part of a named profile's id that names it: the name's slug (letters and digits), or, for a name in
    a script the slug cannot keep, ``n`` and 10 hex digits of its hash."""
    s = slug(name)
    if s and s.isascii() and len(s.replace("-", "")) >= max(2, len(name.replace(" ", "")) // 2):
        return s
    return "n" + hashlib.sha256(name.encode("utf-8")).hexdigest()[:10]


def named_sizes(spec: NamesSpec, rows: Sequence[Mapping[str, Any]]) -> int:
    """How many named profiles ``rows`` give (without drawing the names)."""
    table = coverage(spec, rows)
    return int(table["names"].sum()) if len(table) else 0


def check_named_template(src, at: tuple, name: str, spec: NamesSpec, stated: set[str], crossed: Sequence[str]):
    """DesignError where a template using {name} states an axis the name signals, or leaves out another axis the
    grid crosses (the named profile set states the crossed axes the name does not signal)."""
    signalled = set(spec.signalled) & stated
    if signalled:
        raise src.error(
            at,
            f"template {name!r} uses {{{spec.placeholder}}} and states {sorted(signalled)}, which "
            "the name signals: a named prompt says only the name (METHOD.md §11)",
        )
    left = sorted(set(crossed) - set(spec.signalled) - stated)
    if left:
        raise src.error(
            at,
            f"template {name!r} never uses the placeholder of {', '.join(left)}, which the named "
            f"profile set {spec.profile_set!r} states",
        )
