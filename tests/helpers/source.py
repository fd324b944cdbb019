"""``ast.parse`` for the test workers, retried on CPython 3.11's spurious recursion-depth error.

CPython 3.11 keeps the AST constructor's recursion depth in state shared by the interpreter's threads: when
another thread of the test worker builds an AST at the same moment (the failed runs did not show which thread),
``ast.parse`` can fail with ``SystemError: AST constructor recursion depth mismatch`` on valid source
(python/cpython gh-106905). It failed a CI run of ``tests/core/test_layers.py`` once in 2,000 tests, and, in
pytest's assertion rewriting of a faker provider module that a test imported lazily, a whole module of 33 tests.
That error alone is retried; any other error, a real ``SyntaxError`` included, is raised at once.
:func:`install` (tests/conftest.py) makes every ``ast.parse`` of the worker retry it, pytest's own included."""

from __future__ import annotations

import ast
import time

ATTEMPTS = 5
PARSE = ast.parse  # the interpreter's own, kept before install() replaces it


def parse(source, filename="<unknown>", *args, **kwargs) -> ast.AST:
    """``ast.parse`` with its arguments, retried up to :data:`ATTEMPTS` times on CPython 3.11's spurious
    recursion-depth ``SystemError`` (module docstring); raised after the last attempt."""
    for attempt in range(1, ATTEMPTS + 1):
        try:
            return PARSE(source, filename, *args, **kwargs)
        except SystemError as exc:
            if "recursion depth mismatch" not in str(exc) or attempt == ATTEMPTS:
                raise
            time.sleep(0.05 * attempt)
    raise AssertionError("unreachable")  # the loop returns or raises


def install() -> None:
    """Every ``ast.parse`` of this process retries the spurious error: pytest's assertion rewriting parses each
    module of a plugin's package (faker's providers) when a test first imports it."""
    ast.parse = parse
