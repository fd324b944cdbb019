"""core/reference/workers.py: jobs in worker processes keep their order, run under the caller's design
(a spawned figure worker drew the study's figures for any design before it), and fail one by one."""

from __future__ import annotations

import pandas as pd
import pytest

from fairness_assets.core.reference import axes, workers
from fairness_assets.core.reference import design as design_core
from fairness_assets.core.reporting.figures import partition as figures


def _axis_names(job):
    return job, axes.names()


def _fails_on_two(job):
    if job == 2:
        raise KeyError(f"job {job} has no value")
    return job * 10


@pytest.fixture(scope="module")
def beyond():
    return design_core.load_design("beyond_study", templates_dir=design_core.SHIPPED_DIR.parent / "templates")


@pytest.mark.parametrize("n_workers", [1, 2])
def test_jobs_run_in_order_under_the_callers_design(beyond, n_workers):
    study = axes.names()
    with axes.use_design(beyond):
        out = workers.map_partitions(_axis_names, range(5), workers=n_workers)
    assert [job for job, _ in out] == list(range(5))
    with axes.use_design(beyond):
        expected = axes.names()
    assert all(names == expected for _, names in out)
    assert expected != study  # the design has axes the study lacks: the test can fail


@pytest.mark.parametrize("n_workers", [1, 2])
def test_a_failing_job_comes_back_in_its_place(n_workers):
    out = workers.map_partitions(_fails_on_two, [1, 2, 3], workers=n_workers, errors="return")
    assert out[0] == 10 and out[2] == 30
    failed = out[1]
    assert isinstance(failed, workers.JobFailed) and isinstance(failed.error, KeyError)
    assert "job 2 has no value" in failed.traceback and "_fails_on_two" in failed.traceback
    with pytest.raises(KeyError) as caught:
        failed.reraise()
    assert isinstance(caught.value.__cause__, workers.RemoteTraceback)
    with pytest.raises(KeyError):
        workers.map_partitions(_fails_on_two, [1, 2, 3], workers=n_workers)


def test_errors_must_be_named():
    with pytest.raises(ValueError, match="errors must be"):
        workers.map_partitions(_fails_on_two, [1], workers=1, errors="ignore")


def test_figures_drawn_in_workers_follow_the_design(beyond):
    """The figures of a design's partitions, drawn in two worker processes, are the design's (27 names for
    the eight-axis design, not the study's 15) and the same as drawn in this process."""
    jobs = [({"drs_items": pd.DataFrame(), "grs_by_country": pd.DataFrame()}, "m", t) for t in ("a", "b")]
    with axes.use_design(beyond):
        here = figures.many_partition_figures(jobs, 1)
        there = figures.many_partition_figures(jobs, 2)
        expected = [n for n in figures.figure_names() if not n.startswith(("base_vs", "model_comparison", "drift"))]
    assert [[f.name for f in fs] for fs in there] == [[f.name for f in fs] for fs in here]
    assert sorted(f.name for f in there[0]) == sorted(expected)
    assert len(there[0]) > 15


def _in_a_fork(queue):
    try:
        queue.put(workers.map_partitions(_fails_on_two, [1, 3], workers=2))
    except Exception as exc:  # noqa: BLE001 - sent to the test
        queue.put(repr(exc))
    finally:
        workers.shutdown()  # a forked child ends without atexit: stop its workers, or they outlive it


def test_a_forked_process_starts_its_own_workers():
    """A process forked from one whose workers run (a fork-based executor) does not use its parent's pool,
    whose threads stay behind (it would wait for ever): it starts its own."""
    import multiprocessing

    assert workers.map_partitions(_fails_on_two, [1, 3], workers=2) == [10, 30]  # the parent's pool exists
    ctx = multiprocessing.get_context("fork")
    queue = ctx.Queue()
    child = ctx.Process(target=_in_a_fork, args=(queue,))
    child.start()
    try:
        assert queue.get(timeout=60) == [10, 30]
    finally:
        child.join(timeout=30)
        if child.is_alive():
            child.kill()
    assert workers.map_partitions(_fails_on_two, [1, 3], workers=2) == [10, 30]  # and the parent's still works


def test_workers_end_when_the_run_that_started_them_is_killed(tmp_path):
    """A run's process killed with SIGKILL (no exit handler runs) leaves no worker behind: each worker
    watches the process that started it and ends when it is gone."""
    import os
    import signal
    import subprocess
    import sys
    import time
    from pathlib import Path

    root = Path(__file__).resolve().parents[2]
    script = tmp_path / "run.py"
    script.write_text(
        "import os, sys, time\n"
        f"sys.path.insert(0, {str(root)!r})\n"
        "from fairness_assets.core.reference import workers\n"
        "def pid(_):\n    return os.getpid()\n"
        "if __name__ == '__main__':\n"
        "    print(' '.join(map(str, set(workers.map_partitions(pid, range(4), workers=2)))), flush=True)\n"
        "    time.sleep(120)\n"
    )
    run = subprocess.Popen([sys.executable, str(script)], stdout=subprocess.PIPE, text=True)
    try:
        pids = [int(p) for p in run.stdout.readline().split()]
        assert len(pids) == 2 and run.pid not in pids  # two worker processes: the test can fail
        assert all(os.path.exists(f"/proc/{p}") for p in pids)
        os.kill(run.pid, signal.SIGKILL)
        run.wait(timeout=30)
        deadline = time.monotonic() + 20
        while time.monotonic() < deadline and any(_alive(p) for p in pids):
            time.sleep(0.2)
        assert not any(_alive(p) for p in pids), "a worker outlived the killed run"
    finally:
        if run.poll() is None:
            run.kill()


def _alive(pid: int) -> bool:
    """Whether ``pid`` runs (a zombie, ended but not yet reaped by init, does not)."""
    try:
        with open(f"/proc/{pid}/status") as f:
            return "State:\tZ" not in f.read()
    except OSError:
        return False
