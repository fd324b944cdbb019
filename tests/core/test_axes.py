"""The axis catalogue (fairness_assets/core/reference/axes.py): the active design's axes, each with its
position kind; the study's by default; the profiles, prompts and tables read it at call time."""

from __future__ import annotations

import dataclasses
import threading

import pytest

from fairness_assets.core.reference import axes, profiles
from fairness_assets.core.understanding import quality


def test_the_study_axes_and_their_position_kinds():
    assert axes.names() == ("gender", "economic_class", "nationality")
    assert {a.name: a.position for a in axes.axes_of()} == {
        "gender": "none",
        "economic_class": "lambda",
        "nationality": "home",
    }
    assert axes.names(position="home") == ("nationality",) and axes.home() == "nationality"
    assert axes.lambda_axis() == "economic_class"
    assert axes.names(exclude=("home",)) == ("gender", "economic_class")
    assert axes.words()["economic_class"] == "income"
    assert axes.labels()["economic_class"] == "economic class"
    assert axes.profile_sets() == {
        "gender_only": "gender",
        "class_only": "economic_class",
        "nationality_only": "nationality",
    }
    assert dict(axes.axis("economic_class").lambdas) == {"high": 0.0001, "middle": 0.0005, "low": 0.001}


def _with_disability() -> axes.Catalogue:
    extra = axes.Axis("disability", "disability", "disability", "none", "disability_only", ("none", "blind"))
    return axes.Catalogue((*axes.current().axes, extra))


def test_what_the_modules_read_follows_the_active_design():
    with axes.use(_with_disability()):
        assert profiles.profile_columns() == ["profile_id", "profile_set", *axes.names()]
        assert axes.names()[-1] == "disability"
        assert quality.group_attributes() == axes.names()
    assert "disability" not in axes.names() and quality.group_attributes() == axes.names()


def test_each_thread_has_its_own_active_design():
    seen = {}

    def other():
        seen["other"] = axes.names()

    with axes.use(_with_disability()):
        t = threading.Thread(target=other)
        t.start()
        t.join()
        seen["mine"] = axes.names()
    assert "disability" in seen["mine"] and "disability" not in seen["other"]


def test_bad_entries_and_lookups_name_the_problem():
    with pytest.raises(KeyError, match="no axis 'disability' in the design.*gender, economic_class, nationality"):
        axes.axis("disability")
    with pytest.raises(ValueError, match="unknown position kind 'distance'"):
        axes.Axis("x", "x", "x", "distance", "x_only")
    with pytest.raises(ValueError, match="unknown position kind 'far'"):
        axes.names(position="far")
    first = axes.current().axes[0]
    with pytest.raises(ValueError, match=r"axes declared twice: \['gender'\]"):
        axes.Catalogue((*axes.current().axes, dataclasses.replace(first)))
    home = axes.axis("nationality")
    with pytest.raises(ValueError, match="more than one 'home' axis"):
        axes.Catalogue((*axes.current().axes, dataclasses.replace(home, name="birthplace")))
    with pytest.raises(TypeError, match="use\\(\\) takes a Catalogue"):
        axes.use(("gender",))
