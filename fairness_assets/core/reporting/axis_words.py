"""The active design's axes as the report, the sentences, the scorecard and the figures name them
(issue 34): every function reads the active catalogue (core/reference/axes.py) when it is called, so
a report follows the design it is built under. Pure: no pandas, no Dagster.

The study's words come out of its design file, not out of this module: its ``gender`` axis (position
``none``) reads "gender", its ``economic_class`` axis (``lambda``) "income" with the values
"high-income", "middle-income", "low-income", its ``nationality`` axis (``home``) "nationality".
"""

from __future__ import annotations

from typing import Iterable, Optional

from ..reference import axes


# ----------------------------------------------------------------------------- English helpers
def join(words: Iterable[str], last: str = "and") -> str:
    """``a``, ``a and b``, ``a, b and c`` (``last`` the final conjunction)."""
    w = [str(x) for x in words]
    if len(w) <= 1:
        return "".join(w)
    return f"{', '.join(w[:-1])} {last} {w[-1]}"


def plural(word: str) -> str:
    """The plural of an English noun (its last word), enough for axis labels: nationality ->
    nationalities, class -> classes, region -> regions."""
    if not word:
        return word
    lower = word.lower()
    if lower.endswith("y") and len(word) > 1 and lower[-2] not in "aeiou":
        return word[:-1] + "ies"
    if lower.endswith(("s", "x", "z", "ch", "sh")):
        return word + "es"
    return word + "s"


def elided(first: str, second: str) -> str:
    """Two words that share a hyphenated ending, the first cut before it: ``low- and high-income``;
    ``a and b`` otherwise."""
    if "-" in first and "-" in second and first.rsplit("-", 1)[1] == second.rsplit("-", 1)[1]:
        return f"{first.rsplit('-', 1)[0]}- and {second}"
    return f"{first} and {second}"


# ----------------------------------------------------------------------------- one axis
def _entry(attr: str) -> Optional[axes.Axis]:
    try:
        return axes.axis(str(attr))
    except KeyError:
        return None


def position(attr: str) -> Optional[str]:
    """The position kind of axis ``attr`` (``home``, ``lambda``, ``none``), None where the design has
    no such axis."""
    a = _entry(attr)
    return a.position if a else None


def label(attr: str) -> str:
    """Axis ``attr``'s label in tables and figures (``attr`` itself where the design has no such axis)."""
    a = _entry(attr)
    return a.label if a else str(attr)


def word(attr: str) -> str:
    """Axis ``attr``'s word in sentences (``attr`` itself where the design has no such axis)."""
    a = _entry(attr)
    return a.word if a else str(attr)


def short(attr: str) -> str:
    """The axis's short name: its one-at-a-time profile set less ``_only`` (the study's ``class`` of
    ``class_only``), else its name; underscores read as spaces. Names the figures ``top_*_by_<short>``
    and the lambda axis's gap (the study's "class gap")."""
    a = _entry(attr)
    if a is None:
        return str(attr).replace("_", " ")
    s = a.profile_set[: -len("_only")] if a.profile_set.endswith("_only") and len(a.profile_set) > 5 else a.name
    return s.replace("_", " ")


def value_words(attr: str, value) -> str:
    """A value as the report names a group: the lambda axis's value by its words (the study's
    ``low`` as "low-income"), any other value as it is."""
    a = _entry(attr)
    if a is not None and a.position == "lambda":
        return a.words_of(str(value))
    return str(value)


def who(attr: str, value) -> str:
    """The students of one value: the home axis's "students from X", any other axis's "X students"
    (the lambda axis's value in its words); an attribute the design does not declare: "students from X"."""
    a = _entry(attr)
    if a is None or a.position == "home":
        return f"students from {value}"
    return f"{value_words(attr, value)} students"


def canonical(attr) -> str:
    """The axis an attribute's spelling names (its name, label, word, short name or an alias of the
    design, any case); anything else lower-cased as it is."""
    s = str(attr).strip().lower()
    cat = axes.axes_of()
    names = {a.name.lower(): a.name for a in cat}
    if s in names:
        return names[s]
    for a in cat:
        if s in {a.label.lower(), a.word.lower(), short(a.name).lower(), *(x.lower() for x in a.aliases)}:
            return a.name
    return s


# ----------------------------------------------------------------------------- the design's axes
def by_axes() -> tuple[str, ...]:
    """The axes the figures draw a panel per value of: the lambda axis, then the ``none`` axes (the
    study's economic class, then gender); the home axis's values are too many for panels."""
    lam = axes.lambda_axis()
    return ((lam,) if lam else ()) + axes.names(position="none")


def lambda_gap() -> Optional[tuple[str, str]]:
    """(first, last) value of the lambda axis in the design's order: its gap is last minus first (the
    study's low - high); None without a lambda axis or with fewer than two values."""
    lam = axes.lambda_axis()
    vals = axes.values(lam) if lam else ()
    return (vals[0], vals[-1]) if len(vals) >= 2 else None


def gap_name() -> str:
    """What the report calls the lambda axis's gap: its short name (the study's "class" gap);
    "lambda-axis" without one."""
    lam = axes.lambda_axis()
    return short(lam) if lam else "lambda-axis"


def position_of(subject: str = "the student") -> str:
    """What the needs part scores the lists for: "where the student lives" (a home axis) and "their
    <word>" (a lambda axis: the study's "their income")."""
    home, lam = axes.home(), axes.lambda_axis()
    parts = ([f"where {subject} lives"] if home else []) + ([f"their {word(lam)}"] if lam else [])
    return join(parts) if parts else f"{subject}'s position (this design has no axis that moves it)"


def position_inputs() -> list[str]:
    """The parts of a student's position (METHOD.md §10-11): the home axis's home country and capital
    distances, the lambda axis's distance weighting (the study's "income weighting")."""
    home, lam = axes.home(), axes.lambda_axis()
    return (["home country", "capital distances"] if home else []) + ([f"{word(lam)} weighting"] if lam else [])


def no_home_reason() -> str:
    """Why a design without a home axis has no geography of the students."""
    return "the design has no home axis (no student has a home country, capital or region)"
