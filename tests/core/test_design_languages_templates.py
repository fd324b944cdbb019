"""The study's regional and academic questions in the student's own language (issue 35; METHOD.md §11):
``languages.yaml`` asks the study's three full-grid templates (base, regional, academic) in English and seven
other languages; each translation is an inline template with its ``language``, the base translation's words and
format instruction (the JSON keys in English), renders for every crossed profile with the country's CLDR name,
and is compared with its English template."""

from __future__ import annotations

import pytest
import yaml

from fairness_assets.core.reference import axes
from fairness_assets.core.reference.design import load_design
from fairness_assets.core.reference.localized import country_name
from fairness_assets.core.reference.profiles import design_profiles
from fairness_assets.core.reference.prompts import render_prompts
from resources.settings import TEMPLATES_DIR

LANGUAGES = ("fr", "es", "pt", "de", "ar", "hi", "zh")
QUESTIONS = ("base", "regional", "academic")
NEW = ("regional", "academic")
KEYS = ('"university"', '"program"', '"country"')
SAMPLE = "full:female:low:nigeria"


@pytest.fixture(scope="module")
def languages():
    design = load_design("languages", templates_dir=TEMPLATES_DIR)
    axes.use_design(design)
    profiles = design_profiles(design)
    prompts = render_prompts(design.templates, profiles)
    yield design, profiles, prompts
    axes.reset()


@pytest.fixture(scope="module")
def specs(languages):
    design, _, _ = languages
    with open(design.path, encoding="utf-8") as f:
        doc = yaml.safe_load(f)
    return {t["name"]: t for t in doc["templates"] if isinstance(t, dict)}


def test_the_design_asks_the_three_study_questions_in_eight_languages(languages):
    design, _, _ = languages
    names = design.template_names()
    for question in QUESTIONS:
        assert question in names
        assert design.template(question).language == "en"
        for language in LANGUAGES:
            assert design.template(f"{question}_{language}").language == language
    stated = [t for t in design.templates if t.profile_set == "full"]  # the named variant aside
    assert len(stated) == len(QUESTIONS) * (1 + len(LANGUAGES))
    assert design.size()["prompts_per_template"]["academic_zh"] == 360
    study = load_design("study", templates_dir=TEMPLATES_DIR)
    for question in NEW:  # the English questions are the study's files
        assert design.template(question).sha256 == study.template(question).sha256


def test_the_comparisons_pair_each_english_question_with_its_seven_translations(languages):
    design, _, _ = languages
    expected = {(q, f"{q}_{lang}") for q in QUESTIONS for lang in LANGUAGES}
    across = [c for c in design.comparisons if not c[1].endswith("_named")]  # stated vs named aside
    assert set(across) == expected
    assert len(across) == len(expected)


@pytest.mark.parametrize("question", NEW)
def test_every_translation_renders_for_every_crossed_profile(languages, question):
    design, profiles, prompts = languages
    full = set(profiles.loc[profiles["profile_set"] == "full", "profile_id"])
    assert len(full) == 360
    for language in LANGUAGES:
        rows = prompts[prompts["template"] == f"{question}_{language}"]
        assert set(rows["profile_id"]) == full and len(rows) == 360, language
        left = rows[rows["prompt"].str.contains("{", regex=False)]
        assert left.empty, left["prompt"].iloc[0]


@pytest.mark.parametrize("question", NEW)
@pytest.mark.parametrize("language", LANGUAGES)
def test_a_translated_prompt_states_the_student_in_its_language(languages, question, language):
    design, _, prompts = languages
    t = design.template(f"{question}_{language}")
    base = design.template(f"base_{language}")
    row = prompts[(prompts["template"] == t.name) & (prompts["profile_id"] == SAMPLE)]
    text = row["prompt"].iloc[0]
    nigeria = country_name("Nigeria", language)
    assert nigeria and nigeria in text, text
    assert t.words_of("gender")["female"] in text and t.words_of("economic_class")["low"] in text, text
    assert "low-income" not in text and "female" not in text  # no English value words
    for axis in ("gender", "economic_class"):  # the base translation's words in the same language
        assert t.words_of(axis) == base.words_of(axis)
    assert t.placeholders() == design.template(question).placeholders()


@pytest.mark.parametrize("question", NEW)
@pytest.mark.parametrize("language", LANGUAGES)
def test_the_format_instruction_is_the_base_translations_with_the_english_keys(specs, question, language):
    spec, base = specs[f"{question}_{language}"], specs[f"base_{language}"]
    instruction = spec["format_instruction"]
    assert instruction == base["format_instruction"]
    for key in KEYS:
        assert key in instruction, (key, instruction)
    assert spec["question"].strip().endswith(instruction)


def test_the_academic_translations_state_the_studys_student_interest(languages):
    design, _, _ = languages
    interest = design.template("academic").student_interest
    assert interest == ("Engineering & Technology",)
    for language in LANGUAGES:
        assert design.template(f"academic_{language}").student_interest == interest
        assert design.template(f"regional_{language}").student_interest == ()
