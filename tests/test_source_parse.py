"""tests/helpers/source.parse: CPython 3.11's spurious AST recursion-depth SystemError is retried, nothing else."""

from __future__ import annotations

import ast

import pytest

from tests.helpers import source


def test_the_spurious_recursion_depth_error_is_retried(monkeypatch):
    real, calls = ast.parse, []

    def flaky(text, filename="<unknown>"):
        calls.append(filename)
        if len(calls) < 3:
            raise SystemError("AST constructor recursion depth mismatch (before=144, after=204)")
        return real(text, filename=filename)

    monkeypatch.setattr(source.ast, "parse", flaky)
    tree = source.parse("x = 1\n", filename="a.py")
    assert isinstance(tree.body[0], ast.Assign) and calls == ["a.py"] * 3


def test_it_gives_up_after_the_last_attempt_and_raises_other_errors_at_once(monkeypatch):
    calls = []

    def broken(text, filename="<unknown>"):
        calls.append(filename)
        raise SystemError("AST constructor recursion depth mismatch (before=1, after=2)")

    monkeypatch.setattr(source.ast, "parse", broken)
    monkeypatch.setattr(source.time, "sleep", lambda _s: None)
    with pytest.raises(SystemError, match="recursion depth mismatch"):
        source.parse("x = 1\n")
    assert len(calls) == source.ATTEMPTS
    monkeypatch.undo()
    with pytest.raises(SyntaxError):
        source.parse("def (:\n")
