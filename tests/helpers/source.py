"""``ast.parse`` for the tests that read the project's source (layers, import graph, private names, axis names).

CPython 3.11 keeps the AST constructor's recursion depth in state shared by the interpreter's threads: when
another thread of the test worker builds an AST at the same moment (the failed run did not show which thread),
``ast.parse`` can fail with ``SystemError: AST constructor recursion depth mismatch`` on valid source
(python/cpython gh-106905; it failed a CI run of ``tests/core/test_layers.py`` once in 2,000 tests).
That error alone is retried; any other error, a real ``SyntaxError`` included, is raised at once."""

from __future__ import annotations

import ast
import time

ATTEMPTS = 5


def parse(source: str, filename: str = "<unknown>") -> ast.Module:
    """``ast.parse(source, filename)``, retried up to :data:`ATTEMPTS` times on CPython 3.11's spurious
    recursion-depth ``SystemError`` (module docstring); raised after the last attempt."""
    for attempt in range(1, ATTEMPTS + 1):
        try:
            return ast.parse(source, filename=filename)
        except SystemError as exc:
            if "recursion depth mismatch" not in str(exc) or attempt == ATTEMPTS:
                raise
            time.sleep(0.05 * attempt)
    raise AssertionError("unreachable")  # the loop returns or raises
