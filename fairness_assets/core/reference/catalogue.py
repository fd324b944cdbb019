"""The types of an audit's axes (METHOD.md §11): :class:`Axis` (its name, label, placeholder word,
position kind, values with their wordings, lambdas and aliases) and :class:`Catalogue` (the axes of one
design), and :class:`DesignError`, the error of a design that cannot be used. Pure data; the active
catalogue is :mod:`.axes`', the design file's reader :mod:`.design`."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal, Optional


class DesignError(ValueError):
    """A design that cannot be used; the message names the file, the line and the field."""


Position = Literal["home", "lambda", "none"]
POSITIONS: tuple[str, ...] = ("home", "lambda", "none")


@dataclass(frozen=True)
class Axis:
    name: str
    label: str  # in tables and figures
    word: str  # in sentences and as the prompt's placeholder
    position: Position
    profile_set: str  # the reduced-context profile set that states this axis alone
    values: tuple[str, ...] = ()
    method: str = "§2"
    wording: tuple[tuple[str, str], ...] = ()  # (value, the words it puts into the prompt)
    lambdas: tuple[tuple[str, float], ...] = ()  # (value, Acc decay per km) of a lambda axis
    aliases: tuple[str, ...] = ()  # other names of the axis's column in a responses file
    value_aliases: tuple[tuple[str, str], ...] = ()  # (another spelling in a responses file, the value)

    def __post_init__(self) -> None:
        if self.position not in POSITIONS:
            raise ValueError(f"axis {self.name!r}: unknown position kind {self.position!r} (the kinds: {POSITIONS})")

    def spellings(self) -> dict[str, str]:
        """{lower-case spelling: value} of the values: each value, its words and its aliases."""
        out = {v.lower(): v for v in self.values}
        out |= {w.lower(): v for v, w in self.wording if w.lower() not in out}
        out |= {a.lower(): v for a, v in self.value_aliases if a.lower() not in out}
        return out

    def words_of(self, value: str) -> str:
        """The words ``value`` puts into a prompt (the value itself where the design gives none)."""
        return dict(self.wording).get(value, value)

    @property
    def ordered(self) -> bool:
        """Whether tables list this axis's values in the design's order (a home axis's countries are
        listed by name)."""
        return self.position != "home"

    def as_dict(self) -> dict:
        return {
            "name": self.name,
            "label": self.label,
            "word": self.word,
            "position": self.position,
            "profile_set": self.profile_set,
            "values": list(self.values),
            "wording": [list(w) for w in self.wording],
            "lambdas": [list(x) for x in self.lambdas],
            "aliases": list(self.aliases),
            "value_aliases": [list(x) for x in self.value_aliases],
        }


@dataclass(frozen=True)
class Catalogue:
    """The axes of one design, in the order every derived tuple lists them."""

    axes: tuple[Axis, ...]

    def __post_init__(self) -> None:
        seen = [a.name for a in self.axes]
        twice = sorted({n for n in seen if seen.count(n) > 1})
        if twice:
            raise ValueError(f"axes declared twice: {twice}")
        for kind in ("home", "lambda"):
            of_kind = [a.name for a in self.axes if a.position == kind]
            if len(of_kind) > 1:
                raise ValueError(f"more than one {kind!r} axis: {of_kind} (a design has at most one)")

    def axis(self, name: str) -> Axis:
        for a in self.axes:
            if a.name == name:
                return a
        raise KeyError(f"no axis {name!r} in the design (its axes: {', '.join(a.name for a in self.axes)})")

    def by_position(self, kind: str) -> Optional[Axis]:
        """The design's axis of position ``kind`` (``home`` or ``lambda``: at most one), or None."""
        for a in self.axes:
            if a.position == kind:
                return a
        return None
