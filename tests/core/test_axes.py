"""The axis catalogue (fairness_assets/core/reference/axes.py, issue 33.2): each axis declared once, with
its position kind, and the profiles, prompts and tables read from it."""

from __future__ import annotations

import dataclasses

import pytest

from fairness_assets.core.reference import axes, profiles, prompts
from fairness_assets.core.understanding import quality


def test_the_study_axes_and_their_position_kinds():
    assert axes.names() == ("gender", "economic_class", "nationality")
    assert {a.name: a.position for a in axes.AXES} == {
        "gender": "none",
        "economic_class": "lambda",
        "nationality": "home",
    }
    assert axes.names(position="home") == ("nationality",)
    assert axes.names(exclude=("home",)) == ("gender", "economic_class")
    assert axes.words()["economic_class"] == "income"
    assert axes.labels()["economic_class"] == "economic class"


def test_what_the_modules_read_is_the_catalogue():
    assert profiles.GENDERS == axes.values("gender") and profiles.ECONOMIC_CLASSES == axes.values("economic_class")
    assert profiles.PROFILE_COLUMNS == ["profile_id", "profile_set", *axes.names()]
    assert quality.GROUP_ATTRIBUTES == axes.names()
    assert prompts.PLACEHOLDERS["full"] == {"gender", "income", "nationality"}
    assert {s: p for s, p in prompts.PLACEHOLDERS.items() if s != "full"} == {
        "gender_only": {"gender"},
        "class_only": {"income"},
        "nationality_only": {"nationality"},
    }


def test_bad_entries_and_lookups_name_the_problem():
    with pytest.raises(KeyError, match="no axis 'disability' is declared.*gender, economic_class, nationality"):
        axes.axis("disability")
    with pytest.raises(ValueError, match="unknown position kind 'distance'"):
        axes.Axis("x", "x", "x", "distance", "x_only")
    with pytest.raises(ValueError, match="unknown position kind 'far'"):
        axes.names(position="far")
    with pytest.raises(ValueError, match="axis 'nationality' has no declared values"):
        axes.values("nationality")
    with pytest.raises(ValueError, match=r"axes declared twice: \['gender'\]"):
        axes._check(axes.AXES + (dataclasses.replace(axes.AXES[0]),))
