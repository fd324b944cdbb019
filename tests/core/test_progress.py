"""core.common.progress: done/total, ETA, and a bounded rate of lines."""

import pytest

from fairness_assets.core.common.progress import Progress, duration, progress_line


class Clock:
    def __init__(self):
        self.t = 100.0

    def __call__(self):
        return self.t


def test_lines_are_bounded_in_rate_and_the_first_and_last_are_always_written():
    clock, lines = Clock(), []
    p = Progress("audit_statistics", total=10, log=lines.append, unit="partition", every_s=5.0, clock=clock)
    for i in range(10):
        clock.t += 1.0  # one unit a second: a line at most every 5 s
        p.advance(detail=f"m|t{i}")
    p.finish()
    assert lines[0].startswith("audit_statistics progress: 1/10 partitions (10%), 1 s elapsed, ETA 9 s (m|t0)")
    assert lines[1].startswith("audit_statistics progress: 6/10 partitions (60%), 6 s elapsed, ETA 4 s")
    assert lines[-1] == "audit_statistics progress: 10/10 partitions (100%), 10 s elapsed, done"
    assert len(lines) == 3  # t=1, t=6 and the finish (t=10 is within 5 s of t=6)
    p.finish()
    assert len(lines) == 3  # finish is written once


def test_eta_follows_the_mean_time_per_unit():
    assert (
        progress_line("x", 3, 12, 90.0, unit="template")
        == "x progress: 3/12 templates (25%), 1 min 30 s elapsed, ETA 4 min 30 s"
    )
    assert progress_line("x", 1, 1, 3725.0) == "x progress: 1/1 item (100%), 1 h 02 min elapsed, done"
    assert progress_line("x", 0, 0, 0.0) == "x progress: 0/0 items, 0 s elapsed, done"
    assert duration(59.6) == "1 min 00 s"


def test_negative_counts_are_refused_with_the_step_named():
    with pytest.raises(ValueError, match="progress of audit_report"):
        Progress("audit_report", total=-1, log=print)
    with pytest.raises(ValueError, match="progress of x"):
        progress_line("x", -1, 3, 0.0)


def test_geo_statistics_reports_its_stages():
    """The geography step logs progress lines, the last one 'done'."""
    from fairness_assets.core.statistics import geostats
    from fairness_assets.core.statistics.inference import InferenceParams
    from tests.helpers.scripts import load_script

    bench = load_script("benchmarks/statistics.py", "bench_statistics")
    items, responses, params = bench.synthetic_study_items(runs=1, templates=("base",), unis_per_country=3)
    lines = []
    geostats.geo_statistics(
        geostats.Positions(items, params),
        responses,
        inference=InferenceParams(n_perm=200, n_boot=100),
        log=lines.append,
    )
    assert lines and all(line.startswith("audit_geography progress: ") for line in lines)
    assert lines[-1].startswith("audit_geography progress: 5/5 stages (100%)") and "done" in lines[-1]


def test_a_one_unit_step_says_done_once():
    lines = []
    p = Progress("sensitivity", total=1, log=lines.append, clock=Clock())
    p.advance(detail="m|base")
    p.finish()
    assert lines == ["sensitivity progress: 1/1 item (100%), 0 s elapsed, done (m|base)"]
