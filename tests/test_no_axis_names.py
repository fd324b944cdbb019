"""No axis is named in the code (issue 34): the axes, their placeholders and their values live in the
design files (data/designs/*.yaml) only. This test reads every Python file of fairness_assets/ and
resources/ and fails on a string literal (docstrings aside) or a name that is an axis's name, its
placeholder or one of its values (of every shipped design; the home axis's countries aside, as
country names are the geography's data too), with a planted case."""

from __future__ import annotations

import ast
import io
import re
import tokenize
from pathlib import Path

import yaml

from tests.helpers.source import parse

ROOT = Path(__file__).resolve().parents[1]
# frozen history: a migration names the columns it moved, as they were then
EXEMPT = ("resources/migrations/versions/",)
NOT_AN_AXIS = "# not an axis:"


def forbidden_words() -> set[str]:
    words: set[str] = set()
    for path in sorted((ROOT / "data" / "designs").glob("*.yaml")):
        doc = yaml.safe_load(path.read_text(encoding="utf-8"))
        for name, spec in doc["axes"].items():
            words |= {name, str(spec.get("placeholder") or name)}
            if spec.get("position") != "home":
                values = spec["values"]
                words |= {str(v) for v in (values if isinstance(values, list) else values)}
    # words too common to be an axis's name in code ("none" is a value of several axes, "high"/"low"
    # are the study's classes and also the report's words for a band's ends)
    return {w for w in words if len(w) > 3 and w not in {"none", "high", "middle"}}


def _docstring_lines(tree: ast.AST) -> set[int]:
    lines: set[int] = set()
    for node in ast.walk(tree):
        if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)):
            body = getattr(node, "body", [])
            if body and isinstance(body[0], ast.Expr) and isinstance(getattr(body[0], "value", None), ast.Constant):
                if isinstance(body[0].value.value, str):
                    lines |= set(range(body[0].lineno, (body[0].end_lineno or body[0].lineno) + 1))
    return lines


def axis_names_in(source: str, words: set[str]) -> list[tuple[int, str]]:
    """(line, token) of every string literal or name in ``source`` naming one of ``words``."""
    pattern = re.compile(r"\b(" + "|".join(sorted(map(re.escape, words))) + r")\b")
    docs = _docstring_lines(parse(source))
    lines = source.splitlines()
    # a word that is not an axis there says so on its line (a subject's name: "gender studies")
    docs |= {i + 1 for i, line in enumerate(lines) if NOT_AN_AXIS in line}
    found = []
    for tok in tokenize.generate_tokens(io.StringIO(source).readline):
        if tok.type == tokenize.STRING and tok.start[0] not in docs:
            if pattern.search(tok.string):
                found.append((tok.start[0], tok.string[:60]))
        elif tok.type == tokenize.NAME and tok.string in words:
            found.append((tok.start[0], tok.string))
    return found


def test_no_axis_is_named_in_the_code():
    words = forbidden_words()
    assert {"gender", "nationality", "economic_class", "income"} <= words
    hits = []
    for folder in ("fairness_assets", "resources"):
        for path in sorted((ROOT / folder).rglob("*.py")):
            rel = path.relative_to(ROOT).as_posix()
            if rel.startswith(EXEMPT):
                continue
            hits += [f"{rel}:{line}: {tok}" for line, tok in axis_names_in(path.read_text(encoding="utf-8"), words)]
    assert not hits, "axis names in the code (they belong in data/designs):\n" + "\n".join(hits[:80])


def test_a_planted_axis_name_is_found():
    words = forbidden_words()
    planted = 'def f(frame):\n    """About gender, in a docstring: allowed."""\n    return frame["gender"]\n'
    assert axis_names_in(planted, words) == [(3, '"gender"')]
    assert axis_names_in("x = axes.home()\n", words) == []
    assert axis_names_in('SUBJECT = "gender studies"  # not an axis: a subject\n', words) == []
