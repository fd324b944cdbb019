"""A design's template comparisons (issue 34): pairs ``[base, other]`` of its templates that ask the same students,
the model compared with itself across them (the study's base vs regional, METHOD.md §8.4; an operator system prompt
or a conversation vs the bare question; a language vs English). Read from the design file with errors naming file,
line and field; a design that declares none gets the study's."""

from __future__ import annotations

from typing import Sequence

import yaml

from ..common.text import load_yaml

# the template comparison of a design that declares none, or of answers scored without a design: the study's
# base vs regional (METHOD.md §8.4), drawn where a model has both partitions
DEFAULT_COMPARISONS = (("base", "regional"),)


def read_comparisons(src, templates, named_set: str | None = None) -> tuple[tuple[str, str], ...]:
    """The design's template comparisons: pairs ``[base, other]`` of its templates, asked of the same
    profiles (one profile set; or the crossed profiles stating who they are, ``base``, and the same students
    called by a name, ``other`` of the ``named_set``: stated vs signalled, core/reference/names.py), each pair
    once."""
    raw = src.doc.get("comparisons") or []
    if not isinstance(raw, list):
        raise src.error(("comparisons",), "comparisons are a list of [base template, other template] pairs")
    sets = {t.name: t.profile_set for t in templates}
    out: list[tuple[str, str]] = []
    for i, pair in enumerate(raw):
        at = ("comparisons", i)
        if not (isinstance(pair, list) and len(pair) == 2 and all(isinstance(x, str) for x in pair)):
            raise src.error(at, f"a comparison is [base template, other template], got {pair!r}")
        base, other = pair
        for name in pair:
            if name not in sets:
                raise src.error(at, f"no template {name!r} in the design (its templates: {', '.join(sets)})")
        if base == other:
            raise src.error(at, f"a template compared with itself ({base!r})")
        stated_vs_named = named_set is not None and (sets[base], sets[other]) == ("full", named_set)
        if sets[base] != sets[other] and not stated_vs_named:
            raise src.error(
                at,
                f"{base!r} asks the {sets[base]!r} profiles and {other!r} the {sets[other]!r} ones: a comparison "
                "pairs the same students (or a stated template, first, with a named one)",
            )
        if (base, other) in out:
            raise src.error(at, f"the comparison {base!r} vs {other!r} is listed twice")
        out.append((base, other))
    return tuple(out)


def comparisons_of(design) -> tuple[tuple[str, str], ...]:
    """The template comparisons of ``design``: those it declares, else (none declared, or no design)
    :data:`DEFAULT_COMPARISONS`, the study's base vs regional."""
    if design is not None and design.comparisons:
        return design.comparisons
    return DEFAULT_COMPARISONS


def restricted_text(text: str, templates: Sequence[str]) -> str:
    """A design's text with its template list cut to ``templates`` (kept in the design's order, then the
    others), and its comparisons to those whose two templates remain."""
    doc = load_yaml(text)
    entries = doc.get("templates") or []
    listed = [t if isinstance(t, str) else t.get("name") for t in entries]
    kept_entries = [e for e, name in zip(entries, listed, strict=True) if name in templates]
    doc["templates"] = kept_entries + [t for t in templates if t not in listed]
    kept = [c for c in doc.get("comparisons") or [] if all(t in templates for t in c)]
    doc.pop("comparisons", None)
    if kept:
        doc["comparisons"] = kept
    return yaml.safe_dump(doc, allow_unicode=True, sort_keys=False)
