"""File and folder names built from names a user gave (models, templates, partitions, reports).

A model name comes from a responses file or the registry and may be anything: 300 characters
long (a file name may hold 255 bytes on Linux), ``org/model:v1`` (a path separator and a
character Windows refuses), ``llama 3`` beside ``llama-3`` (the same once made file-safe), ``CON``
(reserved on Windows). :func:`file_stem` turns such names into one file-name stem that is
readable, bounded, safe on Linux, macOS and Windows, and distinct for distinct names.
"""

from __future__ import annotations

import hashlib
import re
import unicodedata

HASH_CHARS = 10  # hex digits of SHA-256: 40 bits, no collision among any realistic set of names
_UNSAFE = re.compile(r"[^A-Za-z0-9._-]+")
# device names Windows refuses as a file name, also before an extension ("CON.png", "con.x-1f.png")
_RESERVED = re.compile(
    r"^(?:con|prn|aux|nul|com[0-9\u00b9\u00b2\u00b3]|lpt[0-9\u00b9\u00b2\u00b3]|conin\$|conout\$)(?:\.|$)",
    re.IGNORECASE,
)


def _readable(part: str) -> str:
    """ASCII letters, digits, ``.``, ``_`` and ``-`` only (accents folded: ``é`` -> ``e``), runs
    of anything else as one ``-``; no leading or trailing ``.``/``-`` (hidden files on Linux,
    names Windows trims)."""
    ascii_text = unicodedata.normalize("NFKD", part).encode("ascii", "ignore").decode("ascii")
    return _UNSAFE.sub("-", ascii_text).strip(".-") or "x"


def _fit(parts: list[str], budget: int, keep: int = 16) -> list[str]:
    """Each part cut so that the parts together hold at most ``budget`` characters: the longest
    part first, down to ``keep`` characters, so that short parts (a template, a figure name) stay
    whole beside a very long model name; past that, every part gets an equal share."""
    parts = list(parts)
    excess = sum(len(p) for p in parts) - budget
    for i in sorted(range(len(parts)), key=lambda j: -len(parts[j])):
        if excess <= 0:
            break
        kept = max(len(parts[i]) - excess, min(len(parts[i]), keep))
        excess -= len(parts[i]) - kept
        parts[i] = parts[i][:kept]
    if excess > 0:  # still too long: equal shares (water-filling)
        lengths, left = [len(p) for p in parts], budget
        caps = [0] * len(parts)
        for n, i in enumerate(sorted(range(len(parts)), key=lambda j: lengths[j])):
            caps[i] = min(lengths[i], max(left // (len(parts) - n), 1))
            left -= caps[i]
        parts = [p[:c] for p, c in zip(parts, caps, strict=False)]
    return [p.rstrip(".-") or p[:1] for p in parts]


def file_stem(*names: str, max_chars: int = 80, separator: str = "__") -> str:
    """A file-name stem for ``names`` (e.g. a model, a template and a figure name): their readable
    forms joined by ``separator``, cut to fit, then ``-`` and a short hash of the exact names.

    - at most ``max_chars`` characters (at least ``HASH_CHARS + 2``), ASCII only, so a whole
      file name stays far below the 255-byte limit and leaves room for a folder path;
    - no path separator, no character Windows refuses, no leading dot, never a reserved device
      name (the hash follows);
    - deterministic, and distinct names give distinct stems, also on case-insensitive file
      systems: the hash is of the exact names, in lowercase hex (``llama 3``, ``llama-3``,
      ``Llama-3`` and two 300-character names that differ in their last character all differ).

    Empty names are left out of the readable part and kept in the hash (``("m", "", "x")`` and
    ``("m", "x")`` differ).
    """
    if max_chars < HASH_CHARS + 2:
        raise ValueError(f"max_chars must be at least {HASH_CHARS + 2}, got {max_chars}")
    if not names:
        raise ValueError("file_stem needs at least one name")
    digest = hashlib.sha256("\x1f".join(str(n) for n in names).encode("utf-8", "surrogatepass")).hexdigest()[
        :HASH_CHARS
    ]
    parts = [_readable(str(n)) for n in names if str(n)] or ["x"]
    budget = max_chars - HASH_CHARS - 1 - len(separator) * (len(parts) - 1)
    if budget < len(parts):  # too many parts for the room: one readable part
        parts, budget = [_readable("-".join(str(n) for n in names if str(n)) or "x")], max_chars - HASH_CHARS - 1
    readable = separator.join(_fit(parts, budget))[: max_chars - HASH_CHARS - 1].rstrip(".-") or "x"
    if _RESERVED.match(readable.split("-")[0]):
        readable = "_" + readable[: max_chars - HASH_CHARS - 2]
    return f"{readable}-{digest}"
