"""Prompt templates as versioned data (template files, or inline in a design), and rendering them for
profiles (METHOD.md §3, §11). A template is a conversation (:class:`~.design.Template`): an optional
operator system prompt, optional earlier turns and the question, with the placeholders of any axis of
the design."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Iterable, Sequence

import pandas as pd

from . import axes
from .design import ENGLISH, Design, DesignError, Template, parse_design
from .names import NAME_COLUMN

PromptTemplate = Template  # the name the rest of the code knew


class TemplateError(ValueError):
    """A template file that cannot be used; the message names the file."""


def load_templates(folder: str | Path, names: Sequence[str] | None = None) -> dict[str, Template]:
    """The template files of a folder (``*.yaml``), or the named ones, each checked against the active axis
    catalogue as a design listing it would check it. A named template that does not fit is an error naming
    it; unnamed, a file whose placeholders the active design lacks (a template of another design) is left
    out. Unknown names raise."""
    folder = Path(folder)
    if not (folder / "format_instruction.txt").exists():
        missing = folder / "format_instruction.txt"
        raise TemplateError(f"{missing}: missing (the format instruction every template ends with)")
    found_names = sorted(p.stem for p in folder.glob("*.yaml"))
    wanted = list(names) if names is not None else found_names
    unknown = [n for n in wanted if n not in found_names]
    if unknown:
        raise TemplateError(f"unknown template(s) {unknown!r} in {folder}; available: {found_names}")
    out: dict[str, Template] = {}
    for name in wanted:
        try:
            out[name] = _load_one(folder, name)
        except DesignError as exc:
            if names is not None or not _fits_elsewhere(str(exc)):
                # the message names the template file; the folder's internal listing has no line to show
                rest = str(exc).split(": templates[0]", 1)[-1]
                raise TemplateError(re.sub(r"^(\.\w+)*: ", "", rest)) from None
    return out


def _fits_elsewhere(message: str) -> bool:
    """Whether a template file's error only says it was written for other axes than the active ones."""
    return "unknown placeholder" in message or "never uses the placeholder" in message


def _load_one(folder: Path, name: str) -> Template:
    import yaml

    cat = axes.current()
    doc = {
        "name": "templates",
        "axes": {a.name: _axis_doc(a) for a in cat.axes},
        "grid": {"kind": "factorial", "axes": list(axes.names()), "one_at_a_time": list(axes.names())},
        "templates": [name],
    }
    return parse_design(yaml.safe_dump(doc, allow_unicode=True), path=str(folder), templates_dir=folder).templates[0]


def audit_templates(folder: str | Path) -> dict[str, Template]:
    """The templates an audit knows: the files of ``folder`` that fit the active design, and the active
    design's own templates (:func:`~.axes.current_design`), which take precedence."""
    found = load_templates(folder)
    design = axes.current_design()
    return {**found, **(design_templates(design) if design is not None else {})}


def _axis_doc(a: axes.Axis) -> dict:
    lam = dict(a.lambdas)
    values = {v: ({"words": w, "lambda": lam[v]} if v in lam else w) for v, w in a.wording} or {v: v for v in a.values}
    return {
        "label": a.label,
        "placeholder": a.word,
        "position": a.position,
        "one_at_a_time": a.profile_set,
        "values": values or {"-": "-"},
    }


def design_templates(design: Design) -> dict[str, Template]:
    return {t.name: t for t in design.templates}


def student_interests(templates: Iterable[PromptTemplate]) -> dict[str, tuple[str, ...]]:
    """Template name -> the student's stated interest T_s (only templates that state one)."""
    return {t.name: tuple(t.student_interest) for t in templates if t.student_interest}


def prompt_words(template: Template, profiles: pd.DataFrame) -> list[dict[str, str]]:
    """{placeholder: words} of each profile for ``template``: the words of each value the template states;
    an error naming the template and the axis where a profile leaves a stated axis empty."""
    cat = axes.current()
    used = template.placeholders()
    stated = [a for a in cat.axes if a.word in used]
    out: list[dict[str, str]] = [{} for _ in range(len(profiles))]
    for a in stated:
        col = profiles[a.name]
        if col.isna().any():
            raise ValueError(
                f"template {template.name!r} needs {a.name} for every profile; some of set "
                f"{template.profile_set!r} leave it unstated"
            )
        wording = dict(a.wording) if template.language == ENGLISH else _localized_words(template, a, pd.unique(col))
        for row, v in zip(out, col, strict=True):
            row[a.word] = wording.get(v, v)
    _name_words(template, profiles, used, out)
    return out


def _name_words(template: Template, profiles: pd.DataFrame, used: set, out: list[dict]) -> None:
    """The student's name for a named template's {name} (core/reference/names.py): the profile's recorded
    name; an error naming the template where a profile has none."""
    design = axes.current_design()
    spec = design.names if design is not None else None
    if spec is None or spec.placeholder not in used:
        return
    names = profiles[NAME_COLUMN] if NAME_COLUMN in profiles.columns else pd.Series([None] * len(profiles))
    if names.isna().any():
        raise ValueError(
            f"template {template.name!r} says the student's name ({{{spec.placeholder}}}); some profiles of set "
            f"{template.profile_set!r} have none (the named profiles carry it in {NAME_COLUMN!r})"
        )
    for row, name in zip(out, names, strict=True):
        row[spec.placeholder] = str(name)


def _localized_words(template: Template, axis: axes.Axis, values) -> dict[str, str]:
    """The words of ``values`` of ``axis`` in the template's language: the template's ``words``, and for the
    home axis CLDR's name of the country; ValueError naming the template, the axis and the value otherwise
    (a values override may bring countries the design does not list)."""
    from .localized import country_name

    given = template.words_of(axis.name)
    out = {}
    for v in values:
        words = given.get(v) or (country_name(str(v), template.language) if axis.position == "home" else None)
        if not words:
            raise ValueError(
                f"template {template.name!r} ({template.language}): value {v!r} of {axis.name!r} has no wording in "
                f"{template.language!r}"
            )
        out[v] = words
    return out


def render_prompts(templates: Iterable[Template], profiles: pd.DataFrame) -> pd.DataFrame:
    """Every (template, profile) prompt where the profile belongs to the template's profile set: the
    question's text, or the JSON list of a conversation's messages."""
    frames = []
    for t in templates:
        sub = profiles[profiles["profile_set"] == t.profile_set]
        if sub.empty:
            continue
        texts = [t.render(w) for w in prompt_words(t, sub)]
        frames.append(
            pd.DataFrame(
                {
                    "prompt_id": t.name + "|" + sub["profile_id"],
                    "template": t.name,
                    "template_version": t.version,
                    "template_hash": t.sha256,
                    "profile_id": sub["profile_id"].to_numpy(),
                    "prompt": texts,
                }
            )
        )
    cols = ["prompt_id", "template", "template_version", "template_hash", "profile_id", "prompt"]
    return pd.concat(frames, ignore_index=True) if frames else pd.DataFrame(columns=cols)


def as_chat(prompt: str) -> str | list[dict]:
    """What a model is sent for a stored prompt: the text of a plain question, or the messages of a
    conversation template (a JSON list of ``{"role", "content"}`` ending with the user's question)."""
    if not (isinstance(prompt, str) and prompt.startswith('[{"role"')):
        return prompt
    import json

    try:
        messages = json.loads(prompt)
    except ValueError:
        return prompt
    ok = (
        isinstance(messages, list)
        and messages
        and all(isinstance(m, dict) and set(m) == {"role", "content"} for m in messages)
        and messages[-1]["role"] == "user"
    )
    return messages if ok else prompt
