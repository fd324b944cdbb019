"""Text helpers every stage uses, written once: accent folding, trimming to a length, finding the user's
exception inside a framework's error wrappers, and reading YAML. Pure functions: no Dagster, no database."""

from __future__ import annotations

import re
import unicodedata
from typing import Any

import yaml

# libyaml's C loader where PyYAML was built with it (the wheels are): the same documents and errors with their marks,
# 5-30x faster than the pure-Python loader (a design is read by every step of every run); else the Python one
SAFE_LOADER = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


def strip_accents(text: Any) -> str:
    """``text`` without its accents (NFKD, combining marks removed): ``"Côte d'Ivoire"`` ->
    ``"Cote d'Ivoire"``; case and everything else kept."""
    t = unicodedata.normalize("NFKD", str(text))
    return "".join(ch for ch in t if not unicodedata.combining(ch))


def fold_accents(text: Any) -> str:
    """``text`` without accents and case-folded: the form names are compared in."""
    return strip_accents(text).casefold()


def trim(text: Any, limit: int, *, one_line: bool = False) -> str:
    """``text`` stripped (``one_line``: its whitespace, newlines included, collapsed to single
    spaces), cut to at most ``limit`` characters with ``…`` where it was cut."""
    t = " ".join(str(text).split()) if one_line else str(text).strip()
    return t if len(t) <= limit else t[: max(0, limit - 1)].rstrip() + "\u2026"


def user_exception(error: Any) -> Any:
    """The first error of a chain (``.cls_name``, ``.cause``: Dagster's ``SerializableErrorInfo``)
    that is not one of the framework's own wrappers (class name starting with ``Dagster``): the
    user code's exception; the last of the chain when all are wrappers; None for None."""
    while error is not None and error.cause is not None and (error.cls_name or "").startswith("Dagster"):
        error = error.cause
    return error


def slug(text: str) -> str:
    """``text`` as an id part: accents folded, lower case, every run of other characters than a-z and 0-9 one
    hyphen, no hyphen at either end."""
    t = strip_accents(text).lower()
    return re.sub(r"[^a-z0-9]+", "-", t).strip("-")


def load_yaml(text: str) -> Any:
    """``text`` as ``yaml.safe_load`` reads it (the safe tags only), with the C loader where there is one. A text
    the C loader refuses is read again by the Python loader, whose error the user sees: it names what it found
    ("found character '\\t'", "found undefined alias 'y'") where libyaml's does not."""
    try:
        return yaml.load(text, Loader=SAFE_LOADER)  # noqa: S506 (a safe loader: SafeLoader or its C twin)
    except yaml.YAMLError:
        return yaml.load(text, Loader=yaml.SafeLoader)  # noqa: S506


def compose_yaml(text: str) -> Any:
    """``text``'s node tree (every node with its start mark), as ``yaml.compose`` makes it, with the C loader where
    there is one; a refused text raises the Python loader's error, as :func:`load_yaml`."""
    try:
        return yaml.compose(text, Loader=SAFE_LOADER)
    except yaml.YAMLError:
        return yaml.compose(text, Loader=yaml.SafeLoader)
