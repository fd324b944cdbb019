"""Prompts in the student's own language (issue 35 items 2 and 5; METHOD.md §11): a template names its
``language``, ends with the format instruction in that language and gives the words of the axes' values in it
(the home axis's countries from CLDR); ``languages.yaml`` asks the study's crossed profiles in English and
seven other languages; bad language templates are refused naming file, line and field."""

from __future__ import annotations

import pytest

from fairness_assets.core.reference import axes
from fairness_assets.core.reference.design import DesignError, load_design
from fairness_assets.core.reference.localized import country_name
from fairness_assets.core.reference.profiles import design_profiles
from fairness_assets.core.reference.prompts import render_prompts
from resources.settings import TEMPLATES_DIR

from .test_design import BASE, INSTRUCTION, line_of, variant, write

LANGUAGES = ("fr", "es", "pt", "de", "ar", "hi", "zh")


@pytest.fixture(scope="module")
def languages():
    design = load_design("languages", templates_dir=TEMPLATES_DIR)
    axes.use_design(design)
    prompts = render_prompts(design.templates, design_profiles(design))
    yield design, prompts
    axes.reset()


def test_the_languages_design_asks_the_study_grid_in_eight_languages(languages):
    design, prompts = languages
    named = ("base_named", "base_fr_named")  # the name-based variant (tests/core/test_signalled.py)
    stated = [t for t in design.templates if t.name not in named]
    assert [t.language for t in stated] == ["en", *LANGUAGES] * 3
    assert [design.template(t).language for t in named] == ["en", "fr"]
    # 29 countries with names x 2 gendered name lists x 3 classes x 7 names
    assert design.size()["prompts_per_model"] == 24 * 360 + 2 * 29 * 2 * 3 * 7
    assert design.comparisons == (("base", "base_named"), ("base_fr", "base_fr_named")) + tuple(
        (q, f"{q}_{lang}") for q in ("base", "regional", "academic") for lang in LANGUAGES
    )
    assert prompts.groupby("template").size().to_dict() == {
        t.name: 29 * 2 * 3 * 7 if t.name in named else 360 for t in design.templates
    }
    base = load_design("study", templates_dir=TEMPLATES_DIR).template("base")
    assert design.template("base").sha256 == base.sha256  # the English question is the study's file


@pytest.mark.parametrize(
    "language,nigeria,female,low",
    [
        ("fr", "Nigeria", "femme", "faible"),
        ("es", "Nigeria", "mujer", "bajos"),
        ("pt", "Nigéria", "mulher", "baixa"),
        ("de", "Nigeria", "weiblich", "niedrig"),
        ("ar", "نيجيريا", "أنثى", "منخفض"),
        ("hi", "नाइजीरिया", "महिला", "निम्न"),
        ("zh", "尼日利亚", "女", "低"),
    ],
)
def test_a_prompt_in_another_language_states_the_student_in_that_language(languages, language, nigeria, female, low):
    _, prompts = languages
    row = prompts[(prompts["template"] == f"base_{language}") & (prompts["profile_id"] == "full:female:low:nigeria")]
    text = row["prompt"].iloc[0]
    assert nigeria in text and female in text and low in text, text
    assert "low-income" not in text and "female" not in text  # no English value words
    assert '"university"' in text and '"country"' in text  # the format instruction, its keys in English


def test_every_country_of_the_study_has_a_name_in_every_language(languages):
    design, _ = languages
    home = next(a for a in design.axes if a.position == "home")
    for language in LANGUAGES:
        for country in home.values:
            assert country_name(country, language), (country, language)


def _language_template(**changes) -> str:
    spec = {
        "language": "fr",
        "format_instruction": "'Répondez uniquement en JSON.'",
        "words": "{gender: {male: homme, female: femme}, income: {high: élevé, low: faible}}",
        "question": "'Genre : {gender}. Pays : {country}. Revenu : {income}. Répondez uniquement en JSON.'",
    }
    spec.update(changes)
    lines = ["  - name: q_fr"] + [f"    {k}: {v}" for k, v in spec.items() if v is not None]
    return "\n".join(lines) + "\n"


def _with(template: str) -> str:
    return variant("runs: 1", template + "runs: 1", BASE)


def test_a_template_in_another_language_is_read(tmp_path):
    design = load_design(str(write(tmp_path, _with(_language_template()))), templates_dir=TEMPLATES_DIR)
    t = design.template("q_fr")
    assert t.language == "fr" and t.words_of("gender") == {"male": "homme", "female": "femme"}
    other = load_design(
        str(
            write(
                tmp_path,
                _with(
                    _language_template(
                        words="{gender: {male: homme, female: une femme}, income: {high: élevé, low: faible}}"
                    )
                ),
                "other.yaml",
            )
        ),
        templates_dir=TEMPLATES_DIR,
    )
    assert other.template("q_fr").sha256 != t.sha256  # the words are part of the template's hash


@pytest.mark.parametrize(
    "changes,line_text,field,words",
    [
        ({"language": "xx-YY"}, "    language: xx-YY", "templates[1].language", ["unknown language 'xx-YY'"]),
        ({"format_instruction": None}, "    language: fr", "templates[1].language", ["gives its format_instruction"]),
        (
            {"words": "{gender: {male: homme}, income: {high: élevé, low: faible}}"},
            "    words: {gender: {male: homme}, income: {high: élevé, low: faible}}",
            "templates[1].words.gender",
            ["value 'female' of 'gender' has no wording in 'fr'"],
        ),
        (
            {"words": "{gender: {male: homme, female: femme, other: autre}, income: {high: élevé, low: faible}}"},
            "    words: {gender: {male: homme, female: femme, other: autre}, income: {high: élevé, low: faible}}",
            "templates[1].words.gender.other",
            ["'gender' has no value 'other'"],
        ),
        (
            {"words": "{gender: {male: homme, female: femme}, income: {high: élevé, low: faible}, age: {x: y}}"},
            "    words: {gender: {male: homme, female: femme}, income: {high: élevé, low: faible}, age: {x: y}}",
            "templates[1].words.age",
            ["words of unknown axis 'age'"],
        ),
    ],
)
def test_a_bad_language_template_is_refused_naming_file_line_and_field(tmp_path, changes, line_text, field, words):
    text = _with(_language_template(**changes))
    path = write(tmp_path, text)
    with pytest.raises(DesignError) as info:
        load_design(str(path), templates_dir=TEMPLATES_DIR)
    message = str(info.value)
    assert message.startswith(f"{path}:{line_of(text, line_text)}: {field}: "), message
    for w in words:
        assert w in message, message


def test_an_english_template_keeps_the_shipped_format_instruction(tmp_path):
    text = variant(f"family. {INSTRUCTION}", f"family. {INSTRUCTION}\n    format_instruction: Answer in JSON.", BASE)
    path = write(tmp_path, text)
    with pytest.raises(DesignError, match="an English template ends with the shipped format instruction"):
        load_design(str(path), templates_dir=TEMPLATES_DIR)
