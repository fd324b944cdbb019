"""The metric catalogue (fairness_assets/core/common/metric_catalogue.py, issue 33.2): each metric declared
once, and every tuple of metric names, label map and direction of core read from it."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from fairness_assets.core.common import metric_catalogue as catalogue

CORE = Path(__file__).resolve().parents[2] / "fairness_assets" / "core"


def test_no_core_module_declares_its_own_list_of_metrics_or_labels():
    """A literal tuple, list or dict of two or more declared metric names outside the catalogue is a
    second declaration (the eight tuples and five label maps this replaced)."""
    names = "|".join(re.escape(m) for m in catalogue.BY_NAME)
    literal = re.compile(rf"""[\(\[\{{]\s*["']({names})["']\s*[:,]\s*(?:["'][^"']*["']\s*,\s*)?["']({names})["']""")
    found = []
    for path in sorted(CORE.rglob("*.py")):
        if path.name == "metric_catalogue.py":
            continue
        for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
            if re.match(r"^[A-Z_]+\s*=", line) and literal.search(line):
                found.append(f"{path.relative_to(CORE)}:{number}: {line.strip()}")
    assert not found, "metric lists declared outside core/common/metric_catalogue.py:\n" + "\n".join(found)


def test_what_the_modules_read_is_the_catalogue():
    from fairness_assets.core.reporting import audit_report, report, scorecard
    from fairness_assets.core.scoring import drift
    from fairness_assets.core.statistics import comparison, component_change, decompose, gate, geostats, stats

    response = catalogue.names("response")
    assert stats.METRICS == comparison.METRICS == audit_report.HEADLINE_METRICS == decompose.ENVY_METRICS == response
    assert tuple(drift.SUMMARY_METRICS) == response
    labels = catalogue.labels()
    assert scorecard.METRIC_NAMES == component_change.METRIC_LABELS
    for table in (scorecard.METRIC_NAMES, geostats.METRIC_LABELS, report._METRIC_SHORT):
        assert table and all(labels[m] == label for m, label in table.items())
    assert comparison.HIGHER_IS_BETTER == catalogue.directions()
    assert report.METRIC_NAMES == catalogue.prose_names()
    assert gate.RATE_METRICS == catalogue.names("gate")


def test_the_metrics_of_method_10_do_not_depend_on_the_student():
    """METHOD.md §10: Rep, Acad and the US+UK share score a list alike for every student (all
    behaviour); DRS, Acc and the home shares are scored against the student's position."""
    assert catalogue.student_independent() == ("rep", "acad", "us_uk_share")
    assert catalogue.names("geography", position_dependent=True) == ("drs", "acc", "own_country", "own_region")
    assert catalogue.names("decompose", position_dependent=True) == ("drs", "acc")
    assert catalogue.metric("us_uk_share").higher_is_better is False
    assert catalogue.metric("acad").templates.startswith("the templates that state an interest")
    for m in catalogue.METRICS:
        assert re.fullmatch(r"§\d+(\.\d+)?", m.method), (m.name, m.method)


def test_adding_a_metric_is_one_entry(monkeypatch):
    """A new entry (here: a share of universities in the student's continent) reaches the names of
    its family, in its place, the labels, the directions and the sentences' words."""
    new = catalogue.Metric(
        "own_continent",
        "answer",
        "share",
        "§10",
        ("geography",),
        label="own-continent share",
        higher_is_better=True,
        position_dependent=True,
        more="more universities on their own continent",
        fewer="fewer universities on their own continent",
    )
    metrics = (*catalogue.METRICS, new)
    monkeypatch.setattr(catalogue, "METRICS", metrics)
    monkeypatch.setattr(catalogue, "BY_NAME", {m.name: m for m in metrics})
    assert catalogue.names("geography")[-1] == "own_continent"
    assert "own_continent" in catalogue.names("geography", position_dependent=True)
    assert "own_continent" not in catalogue.student_independent()
    assert catalogue.labels()["own_continent"] == "own-continent share"
    assert catalogue.directions()["own_continent"] is True
    assert catalogue.words()["own_continent"][0].startswith("more universities")
    assert catalogue.metric("own_continent") is new


def test_a_bad_entry_is_refused_naming_it():
    with pytest.raises(ValueError, match="metric 'x': unknown families"):
        catalogue.Metric("x", "answer", "mean", "§5", ("nowhere",))
    with pytest.raises(ValueError, match="metric 'x': declare both"):
        catalogue.Metric("x", "answer", "mean", "§5", more="more")
    with pytest.raises(ValueError, match="declared twice"):
        catalogue._check((catalogue.METRICS[0], catalogue.METRICS[0]))
    with pytest.raises(ValueError, match="unknown metric family"):
        catalogue.names("everything")
    with pytest.raises(KeyError, match="no metric 'nope' is declared"):
        catalogue.metric("nope")
