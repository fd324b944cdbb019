"""Identity by name (issue 35 items 1 and 6): the named profiles of a design, and the stated-vs-signalled
statistic on synthetic models with known effects.

- A model that steers students with Nigerian names (lower DRS) but treats students who *state* Nigeria like
  everyone else is found in the signalled contrast with the right sign, not in the stated one, and the
  difference is significant with the sign of the effect.
- A model that treats the stated attribute and the name alike (the same steering both ways) gives gaps in both
  and no difference.
- A profile-blind model gives no finding on any quantity.
"""

from __future__ import annotations

import textwrap

import numpy as np
import pandas as pd
import pytest

from fairness_assets.core.reference import axes, names, profiles
from fairness_assets.core.reference.design import SHIPPED_DIR, DesignError, parse_design
from fairness_assets.core.statistics.signalled import SIGNALLED_COLUMNS, SignalledError, stated_vs_signalled

TEMPLATES = SHIPPED_DIR.parent / "templates"
COUNTRIES = ["Nigeria", "India", "Germany", "Brazil", "Japan", "Mexico", "France", "Kenya"]
DESIGN = textwrap.dedent(
    f"""
    name: names-test
    axes:
      gender:
        position: none
        values: {{male: male, female: female, transgender: transgender}}
      economic_class:
        position: lambda
        placeholder: income
        values:
          high: {{words: high-income, lambda: 0.0001}}
          middle: {{words: middle-income, lambda: 0.0005}}
          low: {{words: low-income, lambda: 0.001}}
      nationality:
        position: home
        values: [{", ".join(COUNTRIES + ["Egypt"])}]
    grid:
      kind: factorial
      axes: [nationality, gender, economic_class]
    names:
      signals:
        nationality: country
        gender: {{male: male, female: female}}
      per_cell: 20
      seed: 35
    templates:
      - base
      - name: base_named
        question: >-
          My name is {{name}} and my family is {{income}}. Which three universities, and which master's program
          at each, would you recommend? Answer only with a JSON list of exactly three objects with the keys
          "university", "program" and "country".
    runs: 2
    """
)


@pytest.fixture(scope="module")
def design():
    return parse_design(DESIGN, path="names-test.yaml", templates_dir=TEMPLATES)


@pytest.fixture(scope="module")
def table(design):
    with axes.use_design(design):
        return profiles.design_profiles(design)


def test_each_covered_cell_has_at_least_per_cell_distinct_names_recorded_with_the_profiles(design, table):
    named = table[table["profile_set"] == "named"]
    assert names.NAME_COLUMN in table.columns and named[names.NAME_COLUMN].notna().all()
    per_cell = named.groupby(["nationality", "gender"])[names.NAME_COLUMN].nunique()
    assert (per_cell >= 20).all(), per_cell[per_cell < 20]
    # the cells without names: transgender (no list signals it) and Egypt (no faker locale)
    assert set(named["gender"]) == {"male", "female"} and "Egypt" not in set(named["nationality"])
    assert len(per_cell) == len(COUNTRIES) * 2
    assert named["profile_id"].is_unique and named[names.NAME_COLUMN].is_unique
    # the design's size counts the named profiles without drawing them
    assert design.size()["prompts_per_template"]["base_named"] == len(named)
    cov = names.coverage(design.names, table[table["profile_set"] == "full"].to_dict("records"))
    assert set(cov.loc[cov["names"] == 0, "why"].str.split(" ").str[0]) == {"no"}


def test_the_draw_is_seeded_and_a_name_is_drawn_within_one_locale(design, table):
    with axes.use_design(design):
        again = profiles.design_profiles(design)
    pd.testing.assert_frame_equal(table, again)
    other = parse_design(DESIGN.replace("seed: 35", "seed: 36"), path="x.yaml", templates_dir=TEMPLATES)
    with axes.use_design(other):
        drawn = profiles.design_profiles(other)
    assert set(drawn[names.NAME_COLUMN].dropna()) != set(table[names.NAME_COLUMN].dropna())
    # Nigeria pools the Yoruba, Igbo and Hausa lists: every full name is of one of them
    lists = names.faker_names("NGA", "female")
    nigerian = table[(table["nationality"] == "Nigeria") & (table["gender"] == "female")][names.NAME_COLUMN]
    for full in nigerian.dropna():
        given, family = full.split(" ", 1)
        assert any(given in g and family in f for g, f, _ in lists), full


def test_the_named_prompt_says_the_name_and_never_the_signalled_attributes(design, table):
    from fairness_assets.core.reference import prompts

    with axes.use_design(design):
        rendered = prompts.render_prompts(design.templates, table)
    named = rendered[rendered["template"] == "base_named"].merge(table, on="profile_id")
    assert len(named) == (table["profile_set"] == "named").sum()
    for _, r in named.head(50).iterrows():
        assert r[names.NAME_COLUMN] in r["prompt"]
        assert r["nationality"] not in r["prompt"] and f" {r['gender']} " not in f" {r['prompt']} "


@pytest.mark.parametrize(
    ("question", "message"),
    [
        ("My name is {name}, a {gender} student ({income}).", r"states \['gender'\], which the name signals"),
        ("My name is {name}.", "never uses the placeholder of economic_class"),
    ],
)
def test_a_named_template_that_states_what_the_name_signals_or_leaves_out_an_axis_is_refused(question, message):
    text = DESIGN.replace(
        "My name is {name} and my family is {income}. Which three universities, and which master's program\n"
        "      at each, would you recommend? Answer only with a JSON list of exactly three objects with the keys\n"
        '      "university", "program" and "country".',
        question + ' Answer only with a JSON list of exactly three objects with the keys "university", "program" '
        'and "country".',
    )
    with pytest.raises(DesignError, match=message):
        parse_design(text, path="bad.yaml", templates_dir=TEMPLATES)


@pytest.mark.parametrize(
    ("old", "new", "message"),
    [
        ("nationality: country", "economic_class: country", "signals a country, so it must be the home axis"),
        ("{male: male, female: female}", "{male: man}", "'man' is not a list"),
        ("per_cell: 20", "per_cell: 0", "names.per_cell must be a whole number >= 1"),
        ("seed: 35", "seed: 35\n  colour: red", "unknown key 'colour'"),
    ],
)
def test_a_bad_names_block_is_refused_naming_the_field(old, new, message):
    with pytest.raises(DesignError, match=message):
        parse_design(DESIGN.replace(old, new, 1), path="bad.yaml", templates_dir=TEMPLATES)


# ---- the statistic on synthetic models -----------------------------------------------------------------


def _responses(table: pd.DataFrame, profile_set: str, effect, *, runs: int = 2, seed: int = 0) -> pd.DataFrame:
    """One response per profile and run: drs = 0.5 + noise + effect(profile row)."""
    rng = np.random.default_rng(seed)
    sub = table[table["profile_set"] == profile_set]
    rows = sub.loc[sub.index.repeat(runs)].assign(run=np.tile(np.arange(runs), len(sub)))
    shift = rows.apply(effect, axis=1).to_numpy(float) if len(rows) else np.zeros(0)
    drs = 0.5 + rng.normal(0, 0.1, len(rows)) + shift
    return rows.assign(drs=drs, acc=rng.normal(0.4, 0.1, len(rows)))


def _table(design, stated, signalled):
    cat = design.catalogue
    return stated_vs_signalled(
        stated,
        signalled,
        signals=design.names.signalled,
        crossed=design.grid.axes,
        positions={a.name: a.position for a in cat.axes},
        orders={a.name: list(a.values) for a in cat.axes},
        metrics=["drs", "acc"],
    )


def _row(out, axis, value, metric="drs"):
    hit = out[(out["axis"] == axis) & (out["value"] == value) & (out["metric"] == metric)]
    assert len(hit) == 1, out[["axis", "value", "metric"]]
    return hit.iloc[0]


def test_a_model_steering_nigerian_names_only_is_found_in_the_signalled_contrast(design, table):
    def steer_names(r):
        return -0.3 if r["nationality"] == "Nigeria" else 0.0

    stated = _responses(table, "full", lambda r: 0.0, seed=1)
    signalled = _responses(table, "named", steer_names, seed=2)
    out = _table(design, stated, signalled)
    assert list(out.columns) == SIGNALLED_COLUMNS[3:]
    nga = _row(out, "nationality", "Nigeria")
    assert nga["gap_signalled"] < -0.2 and nga["significant_signalled"]
    assert not nga["significant_stated"] and abs(nga["gap_stated"]) < 0.1
    assert nga["difference"] < -0.2 and nga["significant_difference"] and nga["ci_high_difference"] < 0
    assert nga["component"] == "behaviour" and nga["component_gap"] == "outcome"  # a home axis's gap
    # the transgender profiles and Egypt have no names: left out of both, and counted
    shared = len(COUNTRIES) * 2 * 3
    assert nga["n_cells"] == shared and nga["n_cells_excluded"] == (len(COUNTRIES) + 1) * 3 * 3 - shared
    assert nga["n_stated"] == 6 and nga["n_signalled"] >= 20 * 2
    others = out[(out["value"] != "Nigeria") & (out["metric"] == "drs") & (out["axis"] == "nationality")]
    assert (others["gap_signalled"] > 0).all()  # one-vs-rest: the rest now includes the steered Nigerians
    assert not out[out["metric"] == "acc"]["significant_difference"].any()
    gender = _row(out, "gender", "female vs male")
    assert gender["component_gap"] == "behaviour" and not gender["significant_difference"]


def test_a_model_treating_name_and_stated_attribute_alike_has_gaps_but_no_difference(design, table):
    def steer(r):
        return -0.3 if r["nationality"] == "Nigeria" else 0.0

    out = _table(design, _responses(table, "full", steer, seed=3), _responses(table, "named", steer, seed=4))
    nga = _row(out, "nationality", "Nigeria")
    assert nga["significant_stated"] and nga["significant_signalled"]
    assert not nga["significant_difference"] and abs(nga["difference"]) < 0.1


def test_a_profile_blind_model_gives_findings_at_no_more_than_the_family_wise_rate(design, table):
    """A profile-blind model (the same noise for every student, stated or named): over 40 draws, each quantity's
    family (every axis, value and metric) has a finding in at most a few of them (alpha = 0.05 per family)."""
    flags = {q: [] for q in ("stated", "signalled", "difference")}
    for seed in range(40):
        out = _table(
            design,
            _responses(table, "full", lambda r: 0.0, seed=seed),
            _responses(table, "named", lambda r: 0.0, seed=seed + 1000),
        )
        assert len(out) == 2 * (len(COUNTRIES) + 1)  # 8 countries + female vs male, two metrics
        for q in flags:
            flags[q].append(bool(out[f"significant_{q}"].any()))
    rates = {q: float(np.mean(v)) for q, v in flags.items()}
    assert all(r <= 0.125 for r in rates.values()), rates
    out = _table(design, _responses(table, "full", lambda r: 0.0, seed=5), _responses(table, "named", lambda r: 0.0))
    assert (out["marking"] == "not significant").all()


def test_templates_sharing_no_cell_or_lacking_a_column_are_refused_naming_why(design, table):
    stated = _responses(table, "full", lambda r: 0.0)
    signalled = _responses(table, "named", lambda r: 0.0)
    with pytest.raises(SignalledError, match="share no cell"):
        _table(design, stated[stated["nationality"] == "India"], signalled[signalled["nationality"] == "Kenya"])
    with pytest.raises(SignalledError, match=r"signalled template's responses lack column\(s\) \['acc'\]"):
        _table(design, stated, signalled.drop(columns=["acc"]))


def test_a_responses_file_gives_named_answers_by_the_students_name_and_a_row_without_one_is_rejected(
    design, table, tmp_path
):
    """score's import (core.generation.responses): a named template's row with its student_name becomes that
    named profile, its prompt saying the name; a named template's row without a name, or a stated template's
    row with one, is rejected with a reason that names student_name, never dropped."""
    from fairness_assets.core.generation import responses as R
    from fairness_assets.core.reference.prompts import design_templates

    named = table[table["profile_set"] == "named"].iloc[0]
    answer = '[{"university": "MIT", "program": "MSc Physics", "country": "United States"}]'
    base = {"model": "m", "run": 0, "gender": named["gender"], "economic_class": named["economic_class"]}
    base["nationality"] = named["nationality"]
    rows = [
        {**base, "template": "base_named", "student_name": named[names.NAME_COLUMN], "response": answer},
        {**base, "template": "base_named", "student_name": "", "response": answer},
        {**base, "template": "base", "student_name": "Ada Obi", "response": answer},
        {**base, "template": "base", "student_name": "", "response": answer},
    ]
    path = tmp_path / "answers.csv"
    pd.DataFrame(rows).to_csv(path, index=False)
    with axes.use_design(design):
        out = R.import_responses(path, design_templates(design), design=design)
    gens, rejects = out.generations, out.rejects
    assert set(gens["template"]) == {"base_named", "base"} and len(gens) == 2
    kept = gens[gens["template"] == "base_named"].iloc[0]
    assert kept["profile_id"] == named["profile_id"] and named[names.NAME_COLUMN] in kept["prompt"]
    assert len(rejects) == 2 and rejects["reason"].str.contains("student_name").all(), rejects.to_string()
