"""The synthetic students of METHOD.md §2: the full grid and the reduced-context profiles."""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Sequence

import pandas as pd

from ..common.text import strip_accents
from . import axes

GENDERS = axes.values("gender")
ECONOMIC_CLASSES = axes.values("economic_class")
PROFILE_COLUMNS = ["profile_id", "profile_set", *axes.names()]


def slug(text: str) -> str:
    t = strip_accents(text).lower()
    return re.sub(r"[^a-z0-9]+", "-", t).strip("-")


@dataclass(frozen=True)
class Grid:
    genders: Sequence[str]
    economic_classes: Sequence[str]
    nationalities: Sequence[str]

    def __post_init__(self) -> None:
        for name, values, allowed in (
            (axes.axis("gender").label, self.genders, GENDERS),
            (axes.axis("economic_class").label, self.economic_classes, ECONOMIC_CLASSES),
        ):
            bad = [v for v in values if v not in allowed]
            if bad:
                raise ValueError(f"unknown {name} value(s) {bad!r}; allowed: {list(allowed)}")
        for name, values in (
            (axes.axis("gender").label, self.genders),
            (axes.axis("economic_class").label, self.economic_classes),
            (axes.axis("nationality").label, self.nationalities),
        ):
            if not values:
                raise ValueError(f"the audit grid needs at least one {name}")
            dup = sorted({v for v in values if list(values).count(v) > 1})
            if dup:
                raise ValueError(f"duplicate {name} value(s) in the audit grid: {dup!r}")
        slugs = [slug(n) for n in self.nationalities]
        if len(set(slugs)) != len(slugs) or not all(slugs):
            raise ValueError(f"nationality names must be distinct and non-empty: {list(self.nationalities)!r}")


def profile_id(profile_set: str, gender=None, economic_class=None, nationality=None) -> str:
    """The stable, readable id of a profile, e.g. ``full:female:low:nigeria``."""
    if profile_set == "full":
        return f"full:{gender}:{economic_class}:{slug(nationality)}"
    if profile_set == "gender_only":
        return f"gender_only:{gender}"
    if profile_set == "class_only":
        return f"class_only:{economic_class}"
    if profile_set == "nationality_only":
        return f"nationality_only:{slug(nationality)}"
    raise ValueError(f"unknown profile set {profile_set!r}")


def full_profiles(grid: Grid) -> pd.DataFrame:
    """Every gender x class x nationality combination, with a stable readable id."""
    rows = [
        (profile_id("full", g, c, n), "full", g, c, n)
        for n in grid.nationalities
        for g in grid.genders
        for c in grid.economic_classes
    ]
    return pd.DataFrame(rows, columns=PROFILE_COLUMNS)


def reduced_profiles(grid: Grid) -> pd.DataFrame:
    """One attribute at a time: gender-only, class-only and nationality-only profiles."""
    rows = (
        [(profile_id("gender_only", gender=g), "gender_only", g, None, None) for g in grid.genders]
        + [(profile_id("class_only", economic_class=c), "class_only", None, c, None) for c in grid.economic_classes]
        + [
            (profile_id("nationality_only", nationality=n), "nationality_only", None, None, n)
            for n in grid.nationalities
        ]
    )
    return pd.DataFrame(rows, columns=PROFILE_COLUMNS)


def all_profiles(grid: Grid) -> pd.DataFrame:
    return pd.concat([full_profiles(grid), reduced_profiles(grid)], ignore_index=True)
