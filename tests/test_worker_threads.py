"""tests/conftest.threads_per_worker: each pytest-xdist worker's share of the cores, given to torch as
OMP_NUM_THREADS (three workers each on both cores of a 2-core machine made the built-in model's tests 2-6x slower)."""

from __future__ import annotations

import os

import pytest

from tests import conftest


@pytest.mark.parametrize(("cores", "workers", "share"), [(2, 3, 1), (2, 2, 1), (4, 1, 4), (8, 3, 2), (1, 4, 1)])
def test_each_worker_gets_its_share_of_the_cores_and_at_least_one(monkeypatch, cores, workers, share):
    monkeypatch.setattr(conftest.os, "sched_getaffinity", lambda _pid: set(range(cores)), raising=False)
    monkeypatch.setenv("PYTEST_XDIST_WORKER_COUNT", str(workers))
    assert conftest.threads_per_worker() == share


def test_in_a_worker_the_share_is_in_the_environment_unless_the_caller_set_one():
    if "PYTEST_XDIST_WORKER_COUNT" not in os.environ:
        pytest.skip("not in a pytest-xdist worker: the suite sets OMP_NUM_THREADS only there")
    assert os.environ.get("OMP_NUM_THREADS"), "conftest sets OMP_NUM_THREADS in every xdist worker"
    assert int(os.environ["OMP_NUM_THREADS"]) >= 1
