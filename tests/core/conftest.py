"""Fixtures shared by the tests of core/ (one definition, not one per test file)."""

from __future__ import annotations

import pytest

from tests.helpers.scripts import load_script


@pytest.fixture(scope="session")
def bench():
    """benchmarks/statistics.py as a module: its ``synthetic_study_items`` is the synthetic,
    study-sized audit (real capitals and regions, scored by ``core.scoring.metrics``) the geographic
    tests and the geographic false-positive benchmark use. A test file may still define its own
    ``bench`` fixture, which takes precedence."""
    return load_script("benchmarks/statistics.py", "bench_statistics")
