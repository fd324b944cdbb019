"""An audit design as data (issue 34; METHOD.md §11): who the students are (the axes), what they say and
whom they ask (the templates, as conversations), which students are asked (the grid), how often
(runs) and which models.

A design is a YAML file (``data/designs/study.yaml`` is the study, ``demo.yaml`` the demo; a user's own
anywhere). :func:`load_design` reads and validates it: every error is a :class:`DesignError` naming the
file, the line and the field, and nothing is generated before the design is valid. The design's axes
become the axis catalogue of the audit (:mod:`.axes`), so that every table, test and sentence
downstream follows the design and the code names no axis.

The file::

    name: my-audit
    axes:
      gender:                          # the axis's name: the profile column
        label: gender                  # in tables and figures (default: the name, "_" as " ")
        placeholder: gender            # {gender} in a template (default: the name)
        position: none                 # none | lambda | home (METHOD.md §11)
        one_at_a_time: gender_only     # the profile set stating this axis alone (default: NAME_only)
        values: {male: male, female: female}   # value: the words it puts into the prompt
      economic_class:
        position: lambda
        values:
          high: {words: high-income, lambda: 0.0001}   # a lambda axis: each value's Acc decay per km
      nationality:
        position: home
        values: [Nigeria, India]       # a list: each value's words are the value
    grid:
      kind: factorial                  # factorial | sample | one_at_a_time
      axes: [nationality, gender, economic_class]   # crossed; the first varies slowest
      one_at_a_time: [gender, economic_class]        # the reduced-context profile sets, too
      # sample: size: 500, seed: 7, pair_coverage: 2
    templates:
      - base                           # a template file of the templates folder, or inline:
      - name: advisor
        system: You are the advising assistant of ...
        turns: [{role: user, content: ...}, {role: assistant, content: ...}]
        question: I am a {gender} student ... Answer only with a JSON list ...
    runs: 10
    models: [llama-3.1-8b-instruct]
    quality: {min_match_rate: 0.3}

Pure: reads YAML, returns frozen dataclasses; no Dagster, no database.
"""

from __future__ import annotations

import hashlib
import itertools
import json
import string
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal, Mapping, Optional, Sequence

import numpy as np
import yaml

from ..common.text import compose_yaml, load_yaml
from .catalogue import POSITIONS, Axis, Catalogue, DesignError
from .comparisons import read_comparisons
from .grid_rows import crossed_rows, sample_rows
from .languages import ENGLISH, check_words, template_language, template_words
from .names import NamesSpec, check_named_template, named_sizes, read_names

GridKind = Literal["factorial", "sample", "one_at_a_time"]
GRID_KINDS: tuple[str, ...] = ("factorial", "sample", "one_at_a_time")
FULL_SET = "full"  # the profile set of the crossed grid
ROLES = ("user", "assistant")
DEFAULT_MAX_PROMPTS = 100_000
SHIPPED_DIR = Path(__file__).resolve().parents[3] / "data" / "designs"

_TOP_KEYS = {"name", "description", "sources", "axes", "grid", "templates", "runs", "models", "quality", "comparisons"}
_TOP_KEYS |= {"names"}  # identity by name (core/reference/names.py)
_AXIS_KEYS = {
    "label",
    "placeholder",
    "position",
    "one_at_a_time",
    "values",
    "word",
    "method",
    "description",
    "aliases",
    "sources",
}
_GRID_KEYS = {"kind", "axes", "one_at_a_time", "size", "seed", "pair_coverage"}
_TEMPLATE_KEYS = {
    "name",
    "version",
    "system",
    "turns",
    "question",
    "student_interest",
    "profile_set",
    "description",
    "language",
    "format_instruction",
    "words",
}


# ---- reading the YAML with the line of every field ------------------------------------------------


class _Located:
    """The document of a YAML file with the line (1-based) of every field, to name it in errors."""

    def __init__(self, path: str, text: str):
        self.path = path
        try:
            node = compose_yaml(text)
        except yaml.YAMLError as exc:
            mark = getattr(exc, "problem_mark", None)
            line = f"{mark.line + 1}" if mark is not None else "?"
            raise DesignError(f"{path}:{line}: not readable YAML ({getattr(exc, 'problem', exc)})") from None
        self.lines: dict[tuple, int] = {}
        if node is not None:
            self._walk(node, ())
        self.doc = load_yaml(text) if node is not None else None

    def _walk(self, node, path: tuple) -> None:
        self.lines[path] = node.start_mark.line + 1
        if isinstance(node, yaml.MappingNode):
            seen: set = set()
            for k, v in node.value:
                key = k.value
                if key in seen:
                    name = ".".join(str(x) for x in (*path, key))
                    raise DesignError(f"{self.path}:{k.start_mark.line + 1}: {name}: {key!r} is given twice")
                seen.add(key)
                self.lines[(*path, key)] = k.start_mark.line + 1
                self._walk(v, (*path, key))
                self.lines[(*path, key)] = k.start_mark.line + 1
        elif isinstance(node, yaml.SequenceNode):
            for i, v in enumerate(node.value):
                self._walk(v, (*path, i))

    def error(self, path: Sequence, message: str) -> DesignError:
        """A :class:`DesignError` at the line of ``path`` (its nearest located parent)."""
        p = tuple(path)
        while p and p not in self.lines:
            p = p[:-1]
        line = self.lines.get(p, 1)
        name = ".".join(str(x) if not isinstance(x, int) else f"[{x}]" for x in path).replace(".[", "[")
        return DesignError(f"{self.path}:{line}: {name or '(top)'}: {message}")


# ---- the design ------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Grid:
    """Which profiles are asked: the crossed set (``full``: factorial, or a seeded sample with pair
    coverage) and the one-at-a-time sets (the reduced context)."""

    kind: GridKind
    axes: tuple[str, ...]  # crossed, the first varying slowest
    one_at_a_time: tuple[str, ...] = ()
    size: Optional[int] = None
    seed: int = 0
    pair_coverage: int = 0


@dataclass(frozen=True)
class Template:
    """A prompt template as a conversation: an optional operator system prompt, optional earlier turns,
    and the question; placeholders ``{word}`` of any axis in any part. ``sha256`` is the file's bytes
    for a template file (as recorded before designs existed) and the canonical JSON of the template
    for an inline one, turns and system prompt included."""

    name: str
    version: int
    profile_set: str
    question: str
    sha256: str
    source: str  # the file, or "DESIGN#templates[i]"
    system: Optional[str] = None
    turns: tuple[tuple[str, str], ...] = ()
    student_interest: tuple[str, ...] = ()
    # the prompt's language (a BCP 47 code, METHOD.md §11) and, for another language than English, the words
    # of the axes' values in it: ((axis, ((value, words), ...)), ...)
    language: str = ENGLISH
    words: tuple[tuple[str, tuple[tuple[str, str], ...]], ...] = ()

    def words_of(self, axis: str) -> dict[str, str]:
        """{value: words} this template gives for ``axis`` (in its language); empty where it gives none."""
        return dict(dict(self.words).get(axis, ()))

    @property
    def text(self) -> str:
        return self.question

    @property
    def path(self) -> str:
        return self.source

    @property
    def is_conversation(self) -> bool:
        return bool(self.system or self.turns)

    def placeholders(self) -> set[str]:
        parts = [self.question, self.system or "", *(c for _, c in self.turns)]
        return {f for part in parts for _, f, _, _ in string.Formatter().parse(part) if f}

    def render(self, words: Mapping[str, str]) -> str:
        """The prompt for one profile, ``words`` {placeholder: words}: the question's text, or, for a
        conversation, the JSON list of its messages (``{"role", "content"}``) ending with the question."""
        question = self.question.format(**words)
        if not self.is_conversation:
            return question
        messages = [{"role": "system", "content": self.system.format(**words)}] if self.system else []
        messages += [{"role": r, "content": c.format(**words)} for r, c in self.turns]
        messages.append({"role": "user", "content": question})
        return json.dumps(messages, ensure_ascii=False)


@dataclass(frozen=True)
class Design:
    name: str
    path: str
    catalogue: Catalogue
    grid: Grid
    templates: tuple[Template, ...]
    runs: int
    models: tuple[str, ...]
    quality: tuple[tuple[str, float], ...] = ()
    description: str = ""
    sources: tuple[str, ...] = field(default_factory=tuple)
    # (base template, other template): the model compared with itself across two templates (METHOD.md §8.4's
    # base vs regional; an operator system prompt or a conversation vs the bare question)
    comparisons: tuple[tuple[str, str], ...] = ()
    names: Optional[NamesSpec] = None  # identity by name: the axes a name signals, its source (names.py)

    @property
    def axes(self) -> tuple[Axis, ...]:
        return self.catalogue.axes

    def template(self, name: str) -> Template:
        for t in self.templates:
            if t.name == name:
                return t
        raise KeyError(f"design {self.name!r} has no template {name!r}; its templates: {self.template_names()}")

    def template_names(self) -> list[str]:
        return [t.name for t in self.templates]

    def lambdas(self) -> dict[str, float]:
        """{value: lambda} of the design's ``lambda`` axis (empty without one)."""
        lam = self.catalogue.by_position("lambda")
        return dict(lam.lambdas) if lam else {}

    def profile_set_sizes(self) -> dict[str, int]:
        """Profiles per profile set (the sample's stated size for a sampled grid)."""
        return set_sizes(self)

    def size(self) -> dict[str, Any]:
        """The size of the design: prompts per template and per model, samples (x runs) per model and in
        all (x models)."""
        sets = self.profile_set_sizes()
        per_template = {t.name: sets.get(t.profile_set, 0) for t in self.templates}
        prompts = sum(per_template.values())
        return {
            "prompts_per_template": per_template,
            "prompts_per_model": prompts,
            "runs": self.runs,
            "samples_per_model": prompts * self.runs,
            "models": len(self.models),
            "samples": prompts * self.runs * len(self.models),
        }

    def as_json(self) -> str:
        """The design's content, canonical (its hash is part of every profile's config hash)."""
        return json.dumps(
            {
                "name": self.name,
                "axes": [a.as_dict() for a in self.axes],
                "grid": self.grid.__dict__,
                "templates": [(t.name, t.sha256) for t in self.templates],
                "runs": self.runs,
                "models": list(self.models),
                "quality": list(self.quality),
                **({"comparisons": [list(c) for c in self.comparisons]} if self.comparisons else {}),
            },
            sort_keys=True,
            default=list,
        )


# ---- reading each part -------------------------------------------------------------------------------


def _value(src: _Located, at: tuple, position: str, value: Any, words: Any) -> tuple[str, str, Any, list]:
    """One value of an axis: ``(value, its words, its lambda or None, its aliases)``, checked."""
    if not isinstance(value, (str, int, float)) or isinstance(value, bool) or str(value).strip() == "":
        raise src.error(at, f"a value must be a non-empty name, got {value!r}")
    value, lam, also = str(value), None, []
    if isinstance(words, dict):
        bad = sorted(set(words) - {"words", "lambda", "aliases"})
        if bad:
            raise src.error((*at, bad[0]), f"unknown key {bad[0]!r} (a value has words, lambda and aliases)")
        also = words.get("aliases") or []
        if not isinstance(also, list):
            raise src.error((*at, "aliases"), "aliases are a list of other spellings of the value")
        lam, words = words.get("lambda"), words.get("words")
    if words is None or str(words).strip() == "":
        raise src.error(at, f"value {value!r} has no wording (the words it puts into the prompt)")
    if position == "lambda":
        if lam is None:
            raise src.error(at, f"value {value!r} of a lambda axis needs its lambda (Acc decay per km)")
        if not isinstance(lam, (int, float)) or isinstance(lam, bool) or not lam >= 0:
            raise src.error((*at, "lambda"), f"lambda must be a number >= 0 per km, got {lam!r}")
    elif lam is not None:
        raise src.error((*at, "lambda"), f"only a lambda axis takes lambdas (this axis is {position!r})")
    return value, str(words), lam, [str(x) for x in also]


def _position(src: _Located, where: tuple, spec: dict) -> str:
    unknown = sorted(set(spec) - _AXIS_KEYS)
    if unknown:
        raise src.error((*where, unknown[0]), f"unknown key {unknown[0]!r} (an axis has {sorted(_AXIS_KEYS)})")
    position = spec.get("position")
    if position is None:
        raise src.error(where, f"no position kind (one of {', '.join(POSITIONS)})")
    if position not in POSITIONS:
        kinds = ", ".join(POSITIONS)
        raise src.error((*where, "position"), f"unknown position kind {position!r} (the kinds: {kinds})")
    return position


def _axis(src: _Located, name: str, spec: Any) -> Axis:
    where = ("axes", name)
    if not isinstance(spec, dict):
        raise src.error(where, "an axis is a mapping with position and values")
    position = _position(src, where, spec)
    raw = spec.get("values")
    if not raw:
        raise src.error((*where, "values") if "values" in spec else where, "the axis has no values")
    if isinstance(raw, list):
        items = [(v, v, i) for i, v in enumerate(raw)]
    elif isinstance(raw, dict):
        items = [(k, v, k) for k, v in raw.items()]
    else:
        raise src.error((*where, "values"), "values are a list, or a mapping {value: its words}")
    values, wording, lambdas, value_aliases = [], [], [], []
    for value, words, key in items:
        at = (*where, "values", key)
        value, words, lam, also = _value(src, at, position, value, words)
        if value in values:
            raise src.error(at, f"duplicate value {value!r}")
        values.append(value)
        wording.append((value, words))
        lambdas += [(value, float(lam))] if lam is not None else []
        value_aliases += [(x, value) for x in also]
    return Axis(
        name=name,
        label=str(spec.get("label") or name.replace("_", " ")),
        word=str(spec.get("placeholder") or spec.get("word") or name),
        position=position,
        profile_set=str(spec.get("one_at_a_time") or f"{name}_only"),
        values=tuple(values),
        method=str(spec.get("method") or "§11"),
        wording=tuple(wording),
        lambdas=tuple(lambdas),
        aliases=_names(src, (*where, "aliases"), spec.get("aliases")),
        value_aliases=tuple(value_aliases),
    )


def _names(src: _Located, at: tuple, raw: Any) -> tuple[str, ...]:
    if raw is None:
        return ()
    if not isinstance(raw, list) or not all(isinstance(x, str) for x in raw):
        raise src.error(at, f"a list of names, got {raw!r}")
    return tuple(raw)


def _catalogue(src: _Located) -> Catalogue:
    raw = src.doc.get("axes")
    if not isinstance(raw, dict) or not raw:
        raise src.error(("axes",), "a design declares its axes as a mapping {name: {position, values, ...}}")
    axes = []
    for name, spec in raw.items():
        if not isinstance(name, str) or not name.isidentifier():
            raise src.error(("axes", name), f"an axis name is a plain identifier (letters, digits, _), got {name!r}")
        axes.append(_axis(src, name, spec))
    for kind in ("home", "lambda"):
        of_kind = [a.name for a in axes if a.position == kind]
        if len(of_kind) > 1:
            raise src.error(
                ("axes", of_kind[1], "position"),
                f"a second {kind!r} axis ({of_kind[0]!r} is one): a design has at most one (METHOD.md §11)",
            )
    for what in ("word", "profile_set"):
        seen: dict[str, str] = {}
        for a in axes:
            v = getattr(a, what)
            if v in seen:
                key = "placeholder" if what == "word" else "one_at_a_time"
                raise src.error(("axes", a.name, key), f"{key} {v!r} is also axis {seen[v]!r}'s")
            seen[v] = a.name
    if any(a.profile_set == FULL_SET for a in axes):
        raise src.error(("axes",), f"{FULL_SET!r} is the crossed grid's profile set, not an axis's one_at_a_time")
    return Catalogue(tuple(axes))


def _grid(src: _Located, cat: Catalogue) -> Grid:
    raw = src.doc.get("grid") or {}
    if not isinstance(raw, dict):
        raise src.error(("grid",), "the grid is a mapping with its kind")
    unknown = sorted(set(raw) - _GRID_KEYS)
    if unknown:
        raise src.error(("grid", unknown[0]), f"unknown key {unknown[0]!r} (a grid has {sorted(_GRID_KEYS)})")
    kind = raw.get("kind", "factorial")
    if kind not in GRID_KINDS:
        raise src.error(("grid", "kind"), f"unknown grid kind {kind!r} (the kinds: {', '.join(GRID_KINDS)})")
    names = [a.name for a in cat.axes]

    def axis_list(key: str, default: list[str]) -> tuple[str, ...]:
        got = raw.get(key, default)
        if not isinstance(got, list):
            raise src.error(("grid", key), "a list of axis names")
        for i, n in enumerate(got):
            if n not in names:
                raise src.error(("grid", key, i), f"unknown axis {n!r} (the design's axes: {', '.join(names)})")
        if len(set(got)) != len(got):
            raise src.error(("grid", key), f"an axis named twice in {list(got)}")
        return tuple(got)

    crossed = () if kind == "one_at_a_time" else axis_list("axes", names)
    single = axis_list("one_at_a_time", names if kind == "one_at_a_time" else [])
    if kind != "one_at_a_time" and not crossed:
        raise src.error(("grid", "axes"), "a crossed grid needs at least one axis")
    if kind == "one_at_a_time" and not single:
        raise src.error(("grid", "one_at_a_time"), "a one-at-a-time grid needs at least one axis")
    size, seed, cover = _sample_spec(src, raw, kind, cat, crossed)
    return Grid(kind, crossed, single, size, seed, cover)


def _sample_spec(src: _Located, raw: dict, kind: str, cat: Catalogue, crossed: tuple) -> tuple:
    """``(size, seed, pair_coverage)`` of the grid, checked: only a sample has a size or a pair coverage."""
    size = raw.get("size")
    seed, cover = raw.get("seed", 0), raw.get("pair_coverage", 0)
    for key, v in (("seed", seed), ("pair_coverage", cover)):
        if not isinstance(v, int) or isinstance(v, bool) or v < 0:
            raise src.error(("grid", key), f"{key} must be a whole number >= 0, got {v!r}")
    if kind == "sample":
        if not isinstance(size, int) or isinstance(size, bool) or size < 1:
            at = ("grid", "size") if "size" in raw else ("grid",)
            raise src.error(at, f"a sample needs a size >= 1, got {size!r}")
        full = int(np.prod([len(cat.axis(n).values) for n in crossed]))
        if size > full:
            raise src.error(("grid", "size"), f"a sample of {size} from a factorial grid of {full} profiles")
    elif size is not None or "pair_coverage" in raw:
        at = ("grid", "size" if size is not None else "pair_coverage")
        raise src.error(at, "only a sample has a size or pair coverage")
    return size, seed, cover


def _file_template(src: _Located, at: tuple, name: str, folder: Path, instruction: str) -> Template:
    path = folder / f"{name}.yaml"
    if not path.is_file():
        avail = sorted(p.stem for p in folder.glob("*.yaml"))
        raise src.error(at, f"no template file {path} (the folder has: {', '.join(avail) or 'none'})")
    raw = path.read_bytes()
    try:
        doc = load_yaml(raw.decode("utf-8"))
    except (UnicodeDecodeError, yaml.YAMLError) as exc:
        raise src.error(at, f"{path}: not a readable YAML template ({exc})") from None
    if not isinstance(doc, dict) or "text" not in doc or "name" not in doc:
        raise src.error(at, f"{path}: a template file is a mapping with name, version and text")
    if str(doc["name"]) != name:
        raise src.error(at, f"{path} declares the template {doc['name']!r}, not {name!r}")
    spec = {"name": name, "version": doc.get("version", 1), "question": str(doc["text"]).strip()}
    for key in ("system", "turns", "student_interest", "profile_set"):
        if doc.get(key):
            spec[key] = doc[key]
    return _template_spec(src, at, spec, str(path), hashlib.sha256(raw).hexdigest(), instruction)


def _template_spec(src: _Located, at: tuple, spec: dict, source: str, sha: str, instruction: str) -> Template:
    from .subjects import QS_AREAS

    inline = source.startswith(f"{src.path}#")

    def err(sub: tuple, message: str) -> DesignError:  # a template file is named in its errors
        return src.error((*at, *sub), message if inline else f"{source}: {message}")

    unknown = sorted(set(spec) - _TEMPLATE_KEYS)
    if unknown:
        raise err((unknown[0],), f"unknown key {unknown[0]!r} (a template has {sorted(_TEMPLATE_KEYS)})")
    if not spec.get("question"):
        raise err((), "a template needs its question")
    question = str(spec["question"]).strip()
    language = template_language(spec, err)
    if language != ENGLISH:  # the format instruction in the template's own language
        own = str(spec.get("format_instruction") or "").strip()
        if not own:
            raise err(("language",), f"a template in {language!r} gives its format_instruction in that language")
        if not question.endswith(own):
            raise err(("question",), f"the question must end with its format_instruction {own!r}")
    elif spec.get("format_instruction"):
        raise err(("format_instruction",), "an English template ends with the shipped format instruction")
    elif instruction and not question.endswith(instruction):
        raise err(("question",), f"the question must end with the format instruction {instruction!r}")
    words = template_words(spec.get("words"), err)
    turns = []
    for i, turn in enumerate(spec.get("turns") or []):
        if not isinstance(turn, dict) or turn.get("role") not in ROLES or not turn.get("content"):
            raise err(("turns", i), f"a turn is {{role: {' | '.join(ROLES)}, content: text}}, got {turn!r}")
        turns.append((turn["role"], str(turn["content"]).strip()))
    if turns and turns[-1][0] != "assistant":
        raise err(("turns", len(turns) - 1), "the earlier turns end with the assistant's (the question follows)")
    interest = tuple(spec.get("student_interest") or ())
    bad = [a for a in interest if a not in QS_AREAS]
    if bad:
        raise err(("student_interest",), f"{bad!r} not among the QS areas {list(QS_AREAS)}")
    version = spec.get("version", 1)
    if not isinstance(version, int) or isinstance(version, bool):
        raise err(("version",), f"version is a whole number, got {version!r}")
    return Template(
        name=str(spec["name"]),
        version=version,
        profile_set=str(spec.get("profile_set") or ""),
        question=question,
        sha256=sha,
        source=source,
        system=str(spec["system"]).strip() if spec.get("system") else None,
        turns=tuple(turns),
        student_interest=interest,
        language=language,
        words=words,
    )


def _profile_set(
    src: _Located, at: tuple, t: Template, cat: Catalogue, grid: Grid, names: Optional[NamesSpec] = None
) -> Template:
    """The template with its profile set: the one that states exactly the axes its placeholders name (a template
    using the names' placeholder: the named set, names.py)."""
    by_word = {a.word: a for a in cat.axes}
    if not t.source.startswith(f"{src.path}#"):
        located = src

        class _Named:  # errors of a template file name the file
            path = located.path

            def error(self, path, message):
                return located.error(path, f"{t.source}: {message}")

        src = _Named()  # type: ignore[assignment]
    used = t.placeholders()
    named = names is not None and names.placeholder in used
    used -= {names.placeholder} if named else set()
    unknown = sorted(used - set(by_word))
    if unknown:
        part = (
            "question"
            if f"{{{unknown[0]}}}" in t.question
            else "system"
            if f"{{{unknown[0]}}}" in (t.system or "")
            else "turns"
        )
        raise src.error(
            (*at, part) if t.source.startswith(f"{src.path}#") else at,
            f"template {t.name!r}: unknown placeholder {{{unknown[0]}}} (the axes' placeholders: "
            f"{', '.join('{' + w + '}' for w in by_word)})",
        )
    stated = {by_word[w].name for w in used}
    if named:
        check_named_template(src, at, t.name, names, stated, grid.axes)
        from dataclasses import replace

        return replace(t, profile_set=names.profile_set)
    sets = {FULL_SET: set(grid.axes)} if grid.axes else {}
    sets |= {cat.axis(n).profile_set: {n} for n in grid.one_at_a_time}
    fits = [s for s, axes in sets.items() if axes == stated]
    if t.profile_set:
        if t.profile_set not in sets:
            raise src.error(
                (*at, "profile_set"),
                f"template {t.name!r}: the grid has no profile set {t.profile_set!r} (it has {', '.join(sets)})",
            )
        if t.profile_set not in fits:
            left = sorted(sets[t.profile_set] - stated)
            what = (
                f"never uses the placeholder of {', '.join(left)}"
                if left
                else f"states {sorted(stated - sets[t.profile_set])}"
            )
            raise src.error(at, f"template {t.name!r} {what}, which its profile set {t.profile_set!r} crosses")
        return t
    if not fits:
        left = sorted(set(grid.axes) - stated)
        hint = (
            f"never uses the placeholder of {', '.join(left)}, which the grid crosses"
            if left and stated <= set(grid.axes)
            else f"states {sorted(stated)}"
        )
        raise src.error(
            at,
            f"template {t.name!r} {hint}; no profile set of the grid states exactly these axes "
            f"({'; '.join(f'{s}: {sorted(a)}' for s, a in sets.items())})",
        )
    from dataclasses import replace

    return replace(t, profile_set=fits[0])


def _templates(
    src: _Located, cat: Catalogue, grid: Grid, folder: Path, names: Optional[NamesSpec] = None
) -> tuple[Template, ...]:
    raw = src.doc.get("templates")
    if not isinstance(raw, list) or not raw:
        raise src.error(("templates",), "a design lists its templates (file names, or inline templates)")
    instr_path = folder / "format_instruction.txt"
    instruction = instr_path.read_text(encoding="utf-8").strip() if instr_path.is_file() else ""
    out: list[Template] = []
    for i, spec in enumerate(raw):
        at = ("templates", i)
        if isinstance(spec, str):
            t = _file_template(src, at, spec, folder, instruction)
        elif isinstance(spec, dict) and spec.get("name"):
            canonical = json.dumps(spec, sort_keys=True, ensure_ascii=False, default=str)
            sha = hashlib.sha256(canonical.encode("utf-8")).hexdigest()
            t = _template_spec(src, at, dict(spec), f"{src.path}#templates[{i}]", sha, instruction)
        else:
            raise src.error(at, "a template is a file name, or a mapping with name and question")
        if t.name in {o.name for o in out}:
            raise src.error(at, f"template {t.name!r} listed twice")
        out.append(_profile_set(src, at, t, cat, grid, names))
        check_words(src, at, t, cat)
    return tuple(out)


def _whole(src: _Located, key: str, default: Any, minimum: int) -> int:
    v = src.doc.get(key, default)
    if not isinstance(v, int) or isinstance(v, bool) or v < minimum:
        raise src.error((key,), f"{key} must be a whole number >= {minimum}, got {v!r}")
    return v


def parse_design(text: str, *, path: str = "<design>", templates_dir: str | Path) -> Design:
    """The design written in ``text`` (its file ``path``, named in errors), its template files read
    from ``templates_dir``; :class:`DesignError` naming the file, line and field otherwise."""
    src = _Located(path, text)
    if not isinstance(src.doc, dict):
        raise src.error((), "a design is a mapping with name, axes, grid, templates, runs and models")
    unknown = sorted(set(src.doc) - _TOP_KEYS)
    if unknown:
        raise src.error((unknown[0],), f"unknown key {unknown[0]!r} (a design has {sorted(_TOP_KEYS)})")
    name = src.doc.get("name")
    if not isinstance(name, str) or not name.strip():
        raise src.error(("name",), "a design needs a name")
    cat = _catalogue(src)
    grid = _grid(src, cat)
    names = read_names(src, cat, grid.axes)
    templates = _templates(src, cat, grid, Path(templates_dir), names)
    if grid.kind == "sample":  # a pair coverage the grid cannot meet is refused now, with its line
        try:
            sample_rows(Design(name, path, cat, grid, templates, 1, ()))
        except DesignError as exc:
            field = "size" if ": grid.size: " in str(exc) else "pair_coverage"
            raise src.error(("grid", field), str(exc).split(f": grid.{field}: ", 1)[-1]) from None
    models = src.doc.get("models") or []
    if not isinstance(models, list) or not all(isinstance(m, str) for m in models):
        raise src.error(("models",), f"models is a list of registry names, got {models!r}")
    quality = src.doc.get("quality") or {}
    if not isinstance(quality, dict):
        raise src.error(("quality",), "quality is a mapping {threshold: value}")
    design = Design(
        name=name.strip(),
        path=path,
        catalogue=cat,
        grid=grid,
        templates=templates,
        runs=_whole(src, "runs", 1, 1),
        models=tuple(models),
        quality=tuple(sorted(quality.items())),
        description=str(src.doc.get("description") or "").strip(),
        sources=tuple(str(s) for s in (src.doc.get("sources") or ())),
        comparisons=read_comparisons(src, templates, names.profile_set if names else None),
        names=names,
    )
    return design


def check_size(design: Design, max_prompts: int = DEFAULT_MAX_PROMPTS) -> None:
    """Refuse a design asking a model more prompts than ``max_prompts``, naming its size and the setting
    that raises the limit (FAIRNESS_MAX_PROMPTS), before anything is generated."""
    prompts = grid_size(design)
    if prompts > max_prompts:
        line = _line_of(design.path, "grid")
        raise DesignError(
            f"{design.path}:{line}: grid: the design asks each model {prompts:,} prompts, over the limit of "
            f"{max_prompts:,} prompts a model (raise it with the setting FAIRNESS_MAX_PROMPTS, the audit "
            f"grid's max_prompts)"
        )


def _line_of(path: str, key: str) -> int:
    """The line of the top-level ``key`` in the design file at ``path`` (1 where it cannot be read)."""
    try:
        return _Located(path, Path(path).read_text(encoding="utf-8")).lines.get((key,), 1)
    except (OSError, DesignError, UnicodeDecodeError):
        return 1


def set_sizes(design: Design) -> dict[str, int]:
    """Profiles per profile set of the grid, counted without drawing them (a sample has its size)."""
    cat, g = design.catalogue, design.grid
    sets = {}
    if g.axes:
        sets[FULL_SET] = g.size if g.kind == "sample" else int(np.prod([len(cat.axis(n).values) for n in g.axes]))
    sets |= {cat.axis(n).profile_set: len(cat.axis(n).values) for n in g.one_at_a_time}
    if design.names is not None and g.axes:  # the named profiles: each covered cell's names (names.py)
        sets[design.names.profile_set] = named_sizes(design.names, crossed_rows(design))
    return sets


def grid_size(design: Design) -> int:
    """Prompts per model, counted without drawing the profiles."""
    sets = set_sizes(design)
    return sum(sets.get(t.profile_set, 0) for t in design.templates)


def resolve_design(name_or_path: str, *, folder: str | Path = SHIPPED_DIR) -> Path:
    """The file of a design: a path to a YAML file, or the name of a design in ``folder``."""
    p = Path(name_or_path)
    if p.suffix in (".yaml", ".yml") or p.is_file():
        if not p.is_file():
            raise DesignError(f"{p}: no such design file")
        return p
    candidate = Path(folder) / f"{name_or_path}.yaml"
    if not candidate.is_file():
        avail = sorted(q.stem for q in Path(folder).glob("*.yaml"))
        raise DesignError(f"unknown design {name_or_path!r} (no {candidate}); shipped: {', '.join(avail)}")
    return candidate


def load_design(name_or_path: str, *, templates_dir: str | Path, folder: str | Path = SHIPPED_DIR) -> Design:
    """The design named (shipped in ``folder``) or at a path, validated."""
    path = resolve_design(name_or_path, folder=folder)
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise DesignError(f"{path}: cannot be read ({exc})") from None
    return parse_design(text, path=str(path), templates_dir=templates_dir)


def with_values(design: Design, overrides: Mapping[str, Sequence[str]]) -> Design:
    """The design with some axes restricted to the values named (``{axis: [values]}``), in that order. A
    ``home`` axis may take countries the design does not list (their words are the names)."""
    from dataclasses import replace

    axes = []
    for a in design.axes:
        if a.name not in overrides:
            axes.append(a)
            continue
        chosen = [str(v) for v in overrides[a.name]]
        if not chosen:
            raise DesignError(f"{design.path}: values override of {a.name!r} is empty")
        if len(set(chosen)) != len(chosen):
            raise DesignError(f"{design.path}: values override of {a.name!r} names a value twice: {chosen}")
        words, lam = dict(a.wording), dict(a.lambdas)
        bad = [v for v in chosen if v not in words and a.position != "home"]
        if bad:
            raise DesignError(f"{design.path}: axis {a.name!r} has no value(s) {bad} (its values: {list(a.values)})")
        axes.append(
            replace(
                a,
                values=tuple(chosen),
                wording=tuple((v, words.get(v, v)) for v in chosen),
                lambdas=tuple((v, lam[v]) for v in chosen if v in lam),
            )
        )
    unknown = sorted(set(overrides) - {a.name for a in design.axes})
    if unknown:
        raise DesignError(f"{design.path}: values override names unknown axis {unknown[0]!r}")
    return replace(design, catalogue=Catalogue(tuple(axes)))


def all_pairs(names: Sequence[str]) -> list[tuple[str, str]]:
    return list(itertools.combinations(names, 2))
