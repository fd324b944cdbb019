"""Prompt templates as versioned data files, and rendering them for profiles (METHOD.md §3)."""

from __future__ import annotations

import hashlib
import string
from dataclasses import dataclass, field
from pathlib import Path
from typing import Iterable, Sequence

import pandas as pd
import yaml

from . import axes
from .profiles import ECONOMIC_CLASSES
from .subjects import QS_AREAS

# class value -> the income wording of the prompt
INCOME_WORDING = {"high": "high-income", "middle": "middle-income", "low": "low-income"}
# which placeholders (each axis's word) each profile set fills: every axis, or the one it states alone
PLACEHOLDERS = {"full": set(axes.words().values())} | {a.profile_set: {a.word} for a in axes.AXES}


class TemplateError(ValueError):
    """A template file that cannot be used; the message names the file."""


@dataclass(frozen=True)
class PromptTemplate:
    name: str
    version: int
    profile_set: str
    text: str
    sha256: str
    path: str
    student_interest: tuple[str, ...] = field(default_factory=tuple)

    def render(self, gender: str | None, economic_class: str | None, nationality: str | None) -> str:
        values = {
            "gender": gender,
            "income": INCOME_WORDING.get(economic_class) if economic_class else None,
            "nationality": nationality,
        }
        needed = PLACEHOLDERS[self.profile_set]
        missing = [k for k in needed if not values[k]]
        if missing:
            raise ValueError(f"template {self.name!r} needs {sorted(missing)} for this profile")
        return self.text.format(**{k: values[k] for k in needed})


def load_template(path: str | Path, format_instruction: str) -> PromptTemplate:
    path = Path(path)
    raw = path.read_bytes()
    try:
        doc = yaml.safe_load(raw.decode("utf-8"))
    except (UnicodeDecodeError, yaml.YAMLError) as exc:
        raise TemplateError(f"{path}: not a readable YAML template ({exc})") from None
    if not isinstance(doc, dict):
        raise TemplateError(f"{path}: expected a mapping with name, version, profile_set, text")
    for key in ("name", "version", "profile_set", "text"):
        if key not in doc:
            raise TemplateError(f"{path}: missing key {key!r}")
    name, text, pset = str(doc["name"]), str(doc["text"]).strip(), str(doc["profile_set"])
    if pset not in PLACEHOLDERS:
        raise TemplateError(f"{path}: profile_set {pset!r} is not one of {sorted(PLACEHOLDERS)}")
    used = {f for _, f, _, _ in string.Formatter().parse(text) if f}
    if used != PLACEHOLDERS[pset]:
        raise TemplateError(
            f"{path}: placeholders {sorted(used)} do not match profile_set {pset!r} "
            f"(expects {sorted(PLACEHOLDERS[pset])})"
        )
    if not text.endswith(format_instruction.strip()):
        raise TemplateError(f"{path}: the text must end with the format instruction {format_instruction.strip()!r}")
    interest = tuple(doc.get("student_interest") or ())
    bad = [a for a in interest if a not in QS_AREAS]
    if bad:
        raise TemplateError(f"{path}: student_interest {bad!r} not among the QS areas {list(QS_AREAS)}")
    return PromptTemplate(
        name=name,
        version=int(doc["version"]),
        profile_set=pset,
        text=text,
        sha256=hashlib.sha256(raw).hexdigest(),
        path=str(path),
        student_interest=interest,
    )


def load_templates(folder: str | Path, names: Sequence[str] | None = None) -> dict[str, PromptTemplate]:
    """All templates of a folder (``*.yaml``), or the named ones; unknown names raise."""
    folder = Path(folder)
    instr_path = folder / "format_instruction.txt"
    if not instr_path.exists():
        raise TemplateError(f"{instr_path}: missing (the format instruction every template ends with)")
    instruction = instr_path.read_text(encoding="utf-8")
    found = {}
    for p in sorted(folder.glob("*.yaml")):
        t = load_template(p, instruction)
        if t.name in found:
            raise TemplateError(f"{p}: template name {t.name!r} also defined in {found[t.name].path}")
        found[t.name] = t
    if names is None:
        return found
    unknown = [n for n in names if n not in found]
    if unknown:
        raise TemplateError(f"unknown template(s) {unknown!r} in {folder}; available: {sorted(found)}")
    return {n: found[n] for n in names}


def student_interests(templates: Iterable[PromptTemplate]) -> dict[str, tuple[str, ...]]:
    """Template name -> the student's stated interest T_s (only templates that state one)."""
    return {t.name: tuple(t.student_interest) for t in templates if t.student_interest}


def render_prompts(templates: Iterable[PromptTemplate], profiles: pd.DataFrame) -> pd.DataFrame:
    """Every (template, profile) prompt where the profile belongs to the template's profile set."""
    frames = []
    for t in templates:
        sub = profiles[profiles["profile_set"] == t.profile_set]
        if sub.empty:
            continue
        texts = [
            t.render(g, c, n) for g, c, n in zip(sub["gender"], sub["economic_class"], sub["nationality"], strict=False)
        ]
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


assert set(INCOME_WORDING) == set(ECONOMIC_CLASSES)
