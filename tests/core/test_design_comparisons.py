"""A design's template comparisons (issue 34 item 3, ``advisor.yaml``: the model compared with itself through an
operator system prompt and as the third turn of a conversation, against the bare question; the study's base vs
regional is the same comparison): the design file declares them and refuses bad ones naming file, line and
field; the report's tables, sentences and figures are drawn per comparison, named by its templates; the
study's (base vs regional) read as before."""

from __future__ import annotations

import pandas as pd
import pytest

from fairness_assets.core.reference.design import DesignError, load_design
from fairness_assets.core.reporting import audit_report
from fairness_assets.core.reporting import figures as fig
from fairness_assets.core.reporting.audit_report.drawing import comparison_figures
from fairness_assets.core.reporting.sentences import change as change_sentences
from fairness_assets.core.statistics import component_change as cc
from resources.settings import TEMPLATES_DIR

from .test_design import BASE, INSTRUCTION, line_of, variant, write


def test_the_shipped_designs_declare_their_comparisons():
    assert load_design("study", templates_dir=TEMPLATES_DIR).comparisons == (("base", "regional"),)
    advisor = load_design("advisor", templates_dir=TEMPLATES_DIR)
    assert advisor.comparisons == (("advisor_bare", "advisor_system"), ("advisor_bare", "advisor_turn3"))
    assert load_design("demo", templates_dir=TEMPLATES_DIR).comparisons == ()


# a design with two templates asking the same students, and a third asking fewer
TWO = (
    variant(
        "runs: 1",
        """  - name: r
    system: You are the admissions advisor of an online platform.
    question: I am a {gender} student from {country}, and I come from a {income} family. INSTR
  - name: g
    question: I am a {gender} student. INSTR
comparisons:
  - [q, r]
runs: 1""",
        BASE,
    )
    .replace(
        "grid:\n  kind: factorial\n  axes: [country, gender, income]",
        "grid:\n  kind: factorial\n  axes: [country, gender, income]\n  one_at_a_time: [gender]",
    )
    .replace("INSTR", INSTRUCTION)
)


def test_a_valid_comparison_is_read(tmp_path):
    design = load_design(str(write(tmp_path, TWO)), templates_dir=TEMPLATES_DIR)
    assert design.comparisons == (("q", "r"),)
    assert design.template("g").profile_set != design.template("q").profile_set


@pytest.mark.parametrize(
    "pair, words",
    [
        ("[q, x]", ["no template 'x' in the design", "q, r, g"]),
        ("[q, q]", ["a template compared with itself ('q')"]),
        ("[q, g]", ["'q' asks the 'full' profiles and 'g' the", "pairs the same students"]),
        ("[q]", ["a comparison is [base template, other template]"]),
    ],
)
def test_a_bad_comparison_is_refused_naming_file_line_and_field(tmp_path, pair, words):
    text = variant("  - [q, r]", f"  - {pair}", TWO)
    path = write(tmp_path, text)
    with pytest.raises(DesignError) as info:
        load_design(str(path), templates_dir=TEMPLATES_DIR)
    message = str(info.value)
    assert message.startswith(f"{path}:{line_of(text, f'  - {pair}')}: comparisons[0]: "), message
    for w in words:
        assert w in message, message


def test_a_comparison_listed_twice_is_refused(tmp_path):
    text = variant("  - [q, r]", "  - [q, r]\n  - [q, r]", TWO)
    path = write(tmp_path, text)
    with pytest.raises(DesignError, match=r"comparisons\[1\]: the comparison 'q' vs 'r' is listed twice"):
        load_design(str(path), templates_dir=TEMPLATES_DIR)


# ---- the report per comparison ------------------------------------------------------------------------


def _change(mean_base: float, mean_other: float, model: str = "m") -> pd.DataFrame:
    """One behaviour part of a gender contrast, base vs other (core.statistics.component_change's table)."""

    def side(mean):
        return pd.DataFrame(
            {
                "attribute": "gender",
                "value_a": "male",
                "value_b": "female",
                "metric": "acc",
                "component": "behaviour",
                "n_pairs": 40,
                "mean_diff": mean,
                "sd_diff": 0.05,
                "ci_low": mean - 0.01,
                "ci_high": mean + 0.01,
                "p_adjusted": 0.5,
                "significant": False,
                "by_construction": False,
            },
            index=[0],
        )

    return cc.component_change({"behaviour_needs": side(mean_base)}, {"behaviour_needs": side(mean_other)}, model=model)


def _tagged(table: pd.DataFrame, base: str, other: str) -> pd.DataFrame:
    return table.assign(base_template=base, other_template=other)


def test_each_comparison_has_its_own_sentences_named_by_its_templates():
    change = pd.concat(
        [
            _tagged(_change(0.0, 0.30), "advisor_bare", "advisor_system"),  # moved
            _tagged(_change(0.0, 0.001), "advisor_bare", "advisor_turn3"),  # not moved
        ],
        ignore_index=True,
    )
    text = change_sentences.summary_sentences(change)
    assert text[0].startswith("m: the advisor_system template moved what the model did: 1 of 1 behaviour parts")
    assert "Welch test of advisor_system - advisor_bare" in text[0]
    assert "than the advisor_bare template did" in text[1] and "in advisor_system" in text[1]
    assert text[2].startswith("m: the advisor_turn3 template did not move what the model did")
    assert not any("regional" in s for s in text), text


def test_the_study_comparison_reads_as_before_with_or_without_the_template_columns():
    plain = _change(0.0, 0.30)
    tagged = _tagged(plain, "base", "regional")
    assert change_sentences.summary_sentences(plain) == change_sentences.summary_sentences(tagged)
    assert change_sentences.summary_sentences(plain)[0].startswith("m: the regional template moved what the model did")
    assert list(audit_report.component_change_tables(plain)) == list(audit_report.component_change_tables(tagged))
    titles = list(audit_report.component_change_tables(tagged))
    assert titles[0].startswith("Base vs regional: did the regional template move what the model did?")
    assert titles[1].startswith("Base vs regional: the contrasts whose part moved (change = regional - base;")


def _drs_change(model: str, base: str, other: str, pct: float) -> pd.DataFrame:
    return pd.DataFrame(
        {
            "group_by": ["overall", "gender", "gender"],
            "group": ["all", "male", "female"],
            "drs_change_pct": [pct, pct, -pct],
            "acc_change_pct": [pct, pct, -pct],
            "rep_change_pct": [0.0, 0.0, 0.0],
            "model": model,
            "base_template": base,
            "other_template": other,
        }
    )


def _grs_change(model: str, base: str, other: str) -> pd.DataFrame:
    return pd.DataFrame(
        {
            "iso3": ["USA", "GBR"],
            "country": ["United States", "United Kingdom"],
            "grs_base": [0.5, 0.2],
            "grs_regional": [0.4, 0.3],
            "model": model,
            "base_template": base,
            "other_template": other,
        }
    )


def test_the_report_tables_and_figures_are_drawn_per_comparison():
    pairs = [("advisor_bare", "advisor_system"), ("advisor_bare", "advisor_turn3")]
    tables = {
        "drs_change": pd.concat([_drs_change("m", b, o, 10.0 * (i + 1)) for i, (b, o) in enumerate(pairs)]),
        "grs_change": pd.concat([_grs_change("m", b, o) for b, o in pairs]),
        "component_change": pd.concat([_tagged(_change(0.0, 0.30), b, o) for b, o in pairs], ignore_index=True),
    }
    shown = audit_report.headline_tables([], tables)
    for base, other in pairs:
        compared = f"{base[:1].upper()}{base[1:]} vs {other}"
        drs = shown[f"{compared}: drs change (%)"]
        assert "base_template" not in drs.columns and len(drs) == 3  # the title names the comparison
        assert f"{compared}: grs change (%)" in shown
        assert any(t.startswith(f"{compared}: did the {other} template move") for t in shown)
    assert shown["Advisor_bare vs advisor_turn3: drs change (%)"]["drs_change_pct"].iloc[0] == 20.0
    names = [f.name for f in comparison_figures([], tables) if not f.skipped_reason]
    assert names == [
        "advisor_bare_vs_advisor_system_drs",
        "advisor_bare_vs_advisor_system_grs",
        "advisor_bare_vs_advisor_turn3_drs",
        "advisor_bare_vs_advisor_turn3_grs",
    ]


def test_the_study_figures_keep_their_names_and_titles():
    drs, grs = _drs_change("m", "base", "regional", 5.0), _grs_change("m", "base", "regional")
    tagged = fig.base_vs_regional_figures(drs, grs, model="m")
    plain = fig.base_vs_regional_figures(
        drs.drop(columns=["base_template", "other_template"]),
        grs.drop(columns=["base_template", "other_template"]),
        model="m",
    )
    assert [f.name for f in tagged] == [f.name for f in plain] == ["base_vs_regional_drs", "base_vs_regional_grs"]
    assert [f.title for f in tagged] == [f.title for f in plain]
    assert tagged[0].title.startswith("Base \u2192 regional template: change in DRS, Acc, Rep")
    assert "from the base to the regional template" in tagged[0].caption
