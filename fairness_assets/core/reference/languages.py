"""Templates in another language than English (METHOD.md §11, issue 35): a template's ``language`` (a BCP 47 code
CLDR knows), the words of the axes' values in it (``words``), and their checks against the design's axes; the
home axis's countries take CLDR's names in the language (core/reference/localized.py). Errors name the design
file, the line and the field (``err`` / ``src.error`` of core/reference/design.py)."""

from __future__ import annotations

from typing import Any

ENGLISH = "en"  # the language of a template that names none, and of the shipped format instruction


def template_language(spec: dict, err) -> str:
    """The template's ``language`` (default English), a BCP 47 code CLDR knows ("fr", "pt-BR", "zh-Hant")."""
    raw = spec.get("language")
    if raw is None:
        return ENGLISH
    code = str(raw).strip()
    try:
        from babel import Locale, UnknownLocaleError

        Locale.parse(code.replace("-", "_"))
    except (ValueError, TypeError, UnknownLocaleError):
        raise err(("language",), f"unknown language {code!r} (a BCP 47 code: en, fr, pt-BR, zh-Hant)") from None
    return code


def template_words(raw: Any, err) -> tuple[tuple[str, tuple[tuple[str, str], ...]], ...]:
    """``words: {axis: {value: words}}``: the values' words in the template's language."""
    if raw is None:
        return ()
    if not isinstance(raw, dict):
        raise err(("words",), "words is a mapping {axis: {value: words in the template's language}}")
    out = []
    for axis, values in raw.items():
        if not isinstance(values, dict) or not values:
            raise err(("words", axis), f"the words of {axis!r} are a mapping {{value: words}}")
        for value, text in values.items():
            if not str(text or "").strip():
                raise err(("words", axis, value), f"value {value!r} of {axis!r} has no words")
        out.append((str(axis), tuple((str(v), str(t).strip()) for v, t in values.items())))
    return tuple(out)


def check_words(src, at: tuple, t, cat) -> None:
    """A template's ``words`` name axes and values of the design; a template in another language than English
    gives the words of every value of each axis it states, but for the home axis, whose countries CLDR names
    in that language (core/reference/localized.py)."""
    names = {a.name: a for a in cat.axes}
    inline = t.source.startswith(f"{src.path}#")
    where = (lambda *sub: (*at, *sub)) if inline else (lambda *sub: at)
    for axis, values in t.words:
        if axis not in names:
            raise src.error(where("words", axis), f"template {t.name!r}: words of unknown axis {axis!r}")
        unknown = [v for v, _ in values if v not in names[axis].values]
        if unknown:
            raise src.error(
                where("words", axis, unknown[0]),
                f"template {t.name!r}: {axis!r} has no value {unknown[0]!r} (its values: {list(names[axis].values)})",
            )
    if t.language == ENGLISH:
        return
    from .localized import country_name

    used = t.placeholders()
    for a in cat.axes:
        if a.word not in used:
            continue
        given = t.words_of(a.name)
        for value in a.values:
            if value in given or (a.position == "home" and country_name(value, t.language)):
                continue
            raise src.error(
                where("words", a.name),
                f"template {t.name!r} ({t.language}): value {value!r} of {a.name!r} has no wording in "
                f"{t.language!r} (give it under words.{a.name})",
            )
