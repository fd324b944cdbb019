"""tests/helpers/source.parse: CPython 3.11's spurious AST recursion-depth SystemError is retried, nothing else."""

from __future__ import annotations

import ast

import pytest

from tests.helpers import source


def test_the_spurious_recursion_depth_error_is_retried(monkeypatch):
    real, calls = source.PARSE, []

    def flaky(text, filename="<unknown>", *args, **kwargs):
        calls.append(filename)
        if len(calls) < 3:
            raise SystemError("AST constructor recursion depth mismatch (before=144, after=204)")
        return real(text, filename)

    monkeypatch.setattr(source, "PARSE", flaky)
    tree = source.parse("x = 1\n", filename="a.py")
    assert isinstance(tree.body[0], ast.Assign) and calls == ["a.py"] * 3


def test_it_gives_up_after_the_last_attempt_and_raises_other_errors_at_once(monkeypatch):
    calls = []

    def broken(text, filename="<unknown>", *args, **kwargs):
        calls.append(filename)
        raise SystemError("AST constructor recursion depth mismatch (before=1, after=2)")

    monkeypatch.setattr(source, "PARSE", broken)
    monkeypatch.setattr(source.time, "sleep", lambda _s: None)
    with pytest.raises(SystemError, match="recursion depth mismatch"):
        source.parse("x = 1\n")
    assert len(calls) == source.ATTEMPTS
    monkeypatch.undo()
    with pytest.raises(SyntaxError):
        source.parse("def (:\n")


def test_every_ast_parse_of_the_worker_retries_it_pytests_rewriting_included(monkeypatch):
    """tests/conftest.py installs the retry as ``ast.parse`` itself, so pytest's assertion rewriting (which calls
    ``ast.parse`` when a test imports a module of a plugin's package) and every library retry too."""
    from _pytest.assertion import rewrite

    assert ast.parse is source.parse and rewrite.ast.parse is source.parse
    real, calls = source.PARSE, []

    def flaky(text, filename="<unknown>", *args, **kwargs):
        calls.append(filename)
        if len(calls) < 2:
            raise SystemError("AST constructor recursion depth mismatch (before=192, after=251)")
        return real(text, filename, *args, **kwargs)

    monkeypatch.setattr(source, "PARSE", flaky)
    tree = ast.parse("x = 1\n", "b.py", "exec", type_comments=True)
    assert isinstance(tree.body[0], ast.Assign) and calls == ["b.py", "b.py"]
