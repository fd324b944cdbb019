"""A responses file follows the design's axes (issue 34): with a design of four axes (the study's and
``disability``, position none) made active, the reader takes a ``disability`` column (or one of its
aliases), reads its values through the axis's spellings, rejects an unknown one naming the axis, and
makes the profile ids of the design; the prompt is re-rendered with the axis's words."""

from __future__ import annotations

import json

import pandas as pd
import pytest
import yaml

from fairness_assets.core.generation import responses as R
from fairness_assets.core.generation.samples import plan_samples
from fairness_assets.core.reference import axes
from fairness_assets.core.reference.design import SHIPPED_DIR, parse_design
from fairness_assets.core.reference.geo import CountryResolver, load_aliases
from fairness_assets.core.reference.profiles import design_profiles, profile_id
from fairness_assets.core.reference.prompts import design_templates, render_prompts
from resources.settings import ALIASES_FILE, TEMPLATES_DIR

RES = CountryResolver(load_aliases(ALIASES_FILE))
INSTRUCTION = (TEMPLATES_DIR / "format_instruction.txt").read_text(encoding="utf-8").strip()
DISABILITY = {
    "label": "disability",
    "placeholder": "disability",
    "position": "none",
    "one_at_a_time": "disability_only",
    "aliases": ["disability_status", "impairment"],
    "values": {
        "none": {"words": "I have no disability", "aliases": ["no disability", "not disabled"]},
        "blind": {"words": "I am blind", "aliases": ["visually impaired"]},
        "wheelchair user": {"words": "I use a wheelchair", "aliases": ["wheelchair", "uses a wheelchair"]},
    },
}
ADVISOR = (
    "I am a {gender} student from {nationality}, and I come from a {income} family. {disability}. "
    "Which three universities, and which Master's program at each, would you recommend for me? "
)
ALONE = "I am a student. {disability}. Which three universities would you recommend for me? "


def design_text(crossed: list[str], alone: list[str], templates: list[dict]) -> str:
    """The study's design with the disability axis added, crossing ``crossed``."""
    doc = yaml.safe_load((SHIPPED_DIR / "study.yaml").read_text(encoding="utf-8"))
    doc["name"] = "four-axes"
    doc["axes"]["disability"] = DISABILITY
    doc["grid"] = {"kind": "factorial", "axes": crossed, "one_at_a_time": alone}
    doc["templates"] = templates
    doc.pop("comparisons", None)  # the study's base vs regional: these templates are others
    return yaml.safe_dump(doc, allow_unicode=True, sort_keys=False)


FOUR = parse_design(
    design_text(
        ["nationality", "gender", "economic_class", "disability"],
        ["gender", "disability"],
        [
            {"name": "advisor", "question": ADVISOR + INSTRUCTION},
            {"name": "disability_alone", "question": ALONE + INSTRUCTION},
        ],
    ),
    path="t.yaml",
    templates_dir="data/templates",
)
BASE = {
    "model": "m",
    "template": "advisor",
    "gender": "female",
    "economic_class": "low",
    "nationality": "Nigeria",
    "disability": "blind",
    "run": 0,
    "response": "1. MIT - MSc Computer Science (USA)",
}
ROWS = [
    BASE,
    {**BASE, "gender": "woman", "economic_class": "moderate", "disability": "Wheelchair User", "run": 1},
    {**BASE, "nationality": "Brasil", "disability": "NONE"},
    {
        **BASE,
        "template": "disability_alone",
        "gender": "",
        "economic_class": "",
        "nationality": "",
        "disability": "blind",
    },
]
IDS = [
    "full:female:low:nigeria:blind",
    "full:female:middle:nigeria:wheelchair-user",
    "full:female:low:brasil:none",
    "disability_only:blind",
]


def write(tmp_path, rows, kind, name="r"):
    p = tmp_path / f"{name}.{kind}"
    if kind == "csv":
        p.write_bytes(pd.DataFrame(rows).to_csv(index=False).encode("utf-8"))
    else:
        p.write_text("\n".join(json.dumps(r) for r in rows) + "\n", encoding="utf-8")
    return p


def renamed(rows, old, new):
    return [{(new if k == old else k): v for k, v in r.items()} for r in rows]


@pytest.mark.parametrize("kind", ["csv", "jsonl"])
def test_the_axis_column_of_the_design_is_read(tmp_path, kind):
    with axes.use(FOUR.catalogue):
        df, rep = R.read_responses(write(tmp_path, ROWS, kind), RES.iso3)
        first = profile_id(
            "full", {"gender": "female", "economic_class": "low", "nationality": "Nigeria", "disability": "blind"}
        )
    assert rep.rows_read == 4 and rep.rows_used == 4 and rep.rows_rejected == 0, rep.rejects
    assert list(df["profile_id"]) == IDS and IDS[0] == first
    assert list(df["profile_set"]) == ["full", "full", "full", "disability_only"]
    assert list(df["disability"]) == ["blind", "wheelchair user", "none", "blind"]  # the values, not the spellings
    assert list(df["economic_class"]) == ["low", "middle", "low", None]
    assert list(df["nationality"]) == ["Nigeria", "Nigeria", "Brasil", None]  # the home axis: as written
    with axes.use(FOUR.catalogue):
        known = set(design_profiles(FOUR)["profile_id"])
    assert set(IDS) - {"full:female:low:brasil:none"} <= known  # the design's own ids


@pytest.mark.parametrize("kind", ["csv", "jsonl"])
def test_an_alias_of_the_axis_column_and_of_its_values(tmp_path, kind):
    rows = renamed(ROWS, "disability", "Disability_Status")
    rows[0] = {**rows[0], "Disability_Status": "Visually Impaired"}
    rows[1] = {**rows[1], "Disability_Status": "uses a wheelchair"}
    rows[2] = {**rows[2], "Disability_Status": "I have no disability"}  # the prompt's words are a spelling too
    rows = renamed(rows, "economic_class", "Income")  # the study's axis aliases still hold
    with axes.use(FOUR.catalogue):
        df, rep = R.read_responses(write(tmp_path, rows, kind), RES.iso3)
    assert rep.rows_rejected == 0, rep.rejects
    assert list(df["profile_id"]) == IDS and "Disability_Status" not in df.columns


def test_an_unknown_value_is_rejected_naming_the_axis(tmp_path):
    rows = ROWS + [{**BASE, "disability": "deaf", "run": 5}, {**BASE, "gender": "robot", "run": 6}]
    with axes.use(FOUR.catalogue):
        df, rep = R.read_responses(write(tmp_path, rows, "csv"), RES.iso3)
    assert rep.rows_used == 4 and rep.rows_rejected == 2
    by_row = rep.rejects.set_index("row")
    assert by_row.loc[6, "column"] == "disability" and by_row.loc[6, "value"] == "deaf"
    assert by_row.loc[6, "reason"] == "unknown disability (use one of ['none', 'blind', 'wheelchair user'])"
    assert by_row.loc[7, "column"] == "gender" and "robot" in by_row.loc[7, "value"]


def test_a_row_stating_some_axes_is_rejected_naming_them(tmp_path):
    rows = ROWS + [{**BASE, "economic_class": "", "nationality": "", "run": 7}, {**BASE, "nationality": "Atlantis"}]
    with axes.use(FOUR.catalogue):
        _, rep = R.read_responses(write(tmp_path, rows, "jsonl"), RES.iso3)
    by_row = rep.rejects.set_index("row")
    assert by_row.loc[5, "column"] == "gender/economic_class/nationality/disability"
    assert by_row.loc[5, "reason"] == (
        "a profile needs all four attributes, or exactly one (reduced context); the row states gender, disability"
    )
    assert by_row.loc[6, "column"] == "nationality"
    assert by_row.loc[6, "reason"] == "nationality is not a country that can be resolved"


def test_the_study_catalogue_is_back_after_the_block(tmp_path):
    p = write(tmp_path, [BASE], "csv")
    with axes.use(FOUR.catalogue):
        assert "disability" in R.GENERATION_COLUMNS and "disability" in R.PROFILE_COLS
    df, rep = R.read_responses(p, RES.iso3)  # the study's: the disability column is not an axis there
    assert "disability" not in R.GENERATION_COLUMNS and rep.rows_used == 1
    assert list(df["profile_id"]) == ["full:female:low:nigeria"] and "disability" not in df.columns


def test_imported_prompts_have_the_axis_words(tmp_path):
    p = write(tmp_path, ROWS, "jsonl")
    with axes.use(FOUR.catalogue):
        imported = R.import_responses(p, design_templates(FOUR), RES.iso3)
        columns = R.generation_columns()
    gens = imported.generations
    assert imported.rows_rejected == 0 and list(gens.columns) == columns and "disability" in columns
    assert list(gens["profile_id"]) == IDS
    assert gens.loc[0, "prompt"].startswith(
        "I am a female student from Nigeria, and I come from a low-income family. I am blind. Which"
    )
    assert gens.loc[1, "prompt"].split(". ")[1] == "I use a wheelchair"
    assert gens.loc[3, "prompt"].startswith("I am a student. I am blind. Which three")
    again = R.import_responses(p, design_templates(FOUR), RES.iso3, design=FOUR)  # passed, not made active
    pd.testing.assert_frame_equal(again.generations, gens)


def test_a_template_naming_an_axis_the_row_leaves_unstated_is_a_reject(tmp_path):
    with axes.use(FOUR.catalogue):
        df, _ = R.read_responses(write(tmp_path, ROWS, "csv"), RES.iso3)
        df.loc[0, "disability"] = None
        gens, rejects = R.to_generations(df, design_templates(FOUR), "f.csv", "ab" * 32)
    assert len(gens) == 3 and list(rejects["row"]) == [2]
    assert rejects.loc[0, "reason"] == "template 'advisor' needs disability, which the row leaves unstated"


def test_a_design_crossing_some_axes_makes_their_rows_full(tmp_path):
    two = parse_design(
        design_text(
            ["nationality", "disability"],
            ["disability"],
            [
                {"name": "where", "question": "I am from {nationality}. {disability}. Where? " + INSTRUCTION},
                {"name": "disability_alone", "question": ALONE + INSTRUCTION},
            ],
        ),
        path="t2.yaml",
        templates_dir="data/templates",
    )
    rows = [
        {
            "model": "m",
            "template": "where",
            "nationality": "Kenya",
            "disability": "wheelchair",
            "run": 0,
            "response": "x",
        },
        {**BASE, "template": "where", "run": 1},  # four axes: not a profile of this grid
    ]
    p = write(tmp_path, rows, "csv")
    df, rep = R.read_responses(p, RES.iso3, design=two)
    assert list(df["profile_id"]) == ["full:kenya:wheelchair-user"]
    (reject,) = rep.rejects.itertuples()
    assert reject.row == 3 and reject.reason.startswith(
        "a profile needs the two attributes the grid crosses (nationality, disability), or exactly one"
    )
    with axes.use(two.catalogue):
        assert set(df["profile_id"]) <= set(design_profiles(two)["profile_id"])
    # without the design, a full profile states every axis of the catalogue
    with axes.use(two.catalogue):
        _, plain = R.read_responses(p, RES.iso3)
    assert plain.rows_used == 1 and "all four attributes" in plain.rejects.loc[0, "reason"]


def test_staging_follows_the_design(tmp_path):
    p = write(tmp_path, ROWS, "jsonl")
    folder = tmp_path / "staged"
    study = R.stage_responses(p, design_templates(FOUR), RES.iso3, folder)  # the study's axes
    assert study.n_generations == 0 and study.rows_read == 4  # no study profile fits the design's templates
    reasons = set(study.rejects()["reason"])
    assert "template 'advisor' needs {disability}, which the row leaves unstated" in reasons
    staged = R.stage_responses(p, design_templates(FOUR), RES.iso3, folder, design=FOUR)  # staged again
    assert staged.n_generations == 4 and "disability" in staged.generation_columns
    gens = staged.generations()  # read back outside the design: its own columns
    assert list(gens["profile_id"]) == IDS and list(gens["disability"]) == ["blind", "wheelchair user", "none", "blind"]


def test_planned_samples_carry_every_axis():
    with axes.use(FOUR.catalogue):
        profiles = design_profiles(FOUR)
        prompts = render_prompts(FOUR.templates, profiles)
        plan = plan_samples(prompts, profiles, "m", "disability_alone", 2)
    assert len(plan) == 6 and set(plan["disability"]) == {"none", "blind", "wheelchair user"}
    assert plan["gender"].isna().all() and set(plan["profile_id"]) == {
        "disability_only:none",
        "disability_only:blind",
        "disability_only:wheelchair-user",
    }
