"""The audit report (HTML + Markdown) and the plain-language disparity summary."""

from __future__ import annotations

import base64
import re

import numpy as np
import pandas as pd
import pytest

from fairness_assets.core.reporting import figures as F
from fairness_assets.core.reporting import report as R
from tests.core.test_figures import assert_valid_png, scored_tables

INJECTION = "<script>alert('x')</script>"


def hand_stats() -> pd.DataFrame:
    """A counterfactual-disparity table as core/statistics/stats.py writes it: a < b in sorted order,
    mean_diff and its interval of value_b - value_a."""
    rows = [
        dict(
            model="m1",
            template="base",
            attribute="economic_class",
            value_a="high",
            value_b="low",
            metric="drs",
            n_pairs=40,
            mean_diff=-0.031,
            ci_low=-0.050,
            ci_high=-0.012,
            p_value=0.001,
            p_adjusted=0.004,
            significant=True,
            marking="**",
        ),
        dict(
            model="m1",
            template="base",
            attribute="gender",
            value_a="female",
            value_b="male",
            metric="drs",
            n_pairs=40,
            mean_diff=0.004,
            ci_low=-0.012,
            ci_high=0.02,
            p_value=0.6,
            p_adjusted=1.0,
            significant=False,
            marking="",
        ),
        dict(
            model="m1",
            template="base",
            attribute="nationality",
            value_a="Tonga",
            value_b="United States",
            metric="acc",
            n_pairs=12,
            mean_diff=0.21,
            ci_low=0.12,
            ci_high=0.3,
            p_value=1e-5,
            p_adjusted=1e-4,
            significant=True,
            marking="***",
        ),
    ]
    return pd.DataFrame(rows)


def hand_summary() -> pd.DataFrame:
    """drs_summary of two models; the largest gap is m2's economic class (low vs high, 0.120)."""
    rows = []
    for model, by_class, by_gender in (
        ("m1", {"high": 0.50, "middle": 0.49, "low": 0.469}, {"male": 0.49, "female": 0.486, "transgender": 0.47}),
        ("m2", {"high": 0.60, "middle": 0.55, "low": 0.48}, {"male": 0.52, "female": 0.53, "transgender": 0.51}),
    ):
        rows.append(dict(model=model, template="base", group_by="overall", group="all", responses=90, drs=0.5))
        rows += [
            dict(model=model, template="base", group_by="economic_class", group=g, responses=30, drs=v)
            for g, v in by_class.items()
        ]
        rows += [
            dict(model=model, template="base", group_by="gender", group=g, responses=30, drs=v)
            for g, v in by_gender.items()
        ]
    return pd.DataFrame(rows).assign(acc=0.3, rep=0.6, acad=float("nan"))


def quality_table() -> pd.DataFrame:
    return pd.DataFrame(
        {
            "check": ["parse_rate", "three_items_rate", "group_parse_gap"],
            "passed": [True, True, False],
            "observed": [0.97, 0.91, 0.12],
            "threshold": [0.9, 0.8, 0.05],
        }
    )


@pytest.fixture(scope="module")
def tables(tmp_path_factory, qs_export):
    return scored_tables(tmp_path_factory.mktemp("report-data"), qs_export)


@pytest.fixture(scope="module")
def rendered(tables):
    part = F.partition_tables(tables, "m1", "gender_only")
    figures = F.all_partition_figures(part)
    figures += F.base_vs_regional_figures(
        tables["base_vs_regional_drs_change"], tables["base_vs_regional_grs_change"], model="m1"
    )
    summary = tables["drs_summary"].copy()
    summary.loc[summary.index[1], "group"] = INJECTION  # a hostile value coming from the data
    grs = tables["grs_by_country"]
    report_tables = {
        "DRS, Acc, Rep by group": summary,
        "GRS per country": grs,
        "Counterfactual disparities": hand_stats(),
        f"Recommendations {INJECTION}": tables["drs_items"][
            ["model", "template", "university_text", "matched_name"]
        ].assign(university_text=lambda d: d["university_text"].where(d.index != d.index[0], INJECTION)),
    }
    provenance = {
        "models": {"m1": "sha256:" + "a" * 64, "m2": "rev-2"},
        "decoding": {"temperature": 0.75, "top_p": 0.95, "max_new_tokens": 300},
        "corpus_sha256": "b" * 64,
        "parser_version": "parse 1.2",
        "note": INJECTION,
    }
    sentences = R.disparity_summary(
        R.DisparityTables(tables["drs_summary"], hand_stats(), grs, concentration=tables["concentration"])
    )
    kwargs = dict(
        content=R.ReportContent(
            tables=report_tables,
            figures=figures,
            summary=sentences,
            notes=["DRS renormalises the weights where Acad is missing."],
        ),
        title=f"Audit of m1 {INJECTION}",
        provenance=provenance,
        quality=quality_table(),
    )
    html, md = R.render_report(**kwargs)
    return dict(html=html, md=md, figures=figures, kwargs=kwargs, sentences=sentences)


def test_html_has_every_section(rendered):
    html = rendered["html"]
    assert html.startswith("<!DOCTYPE html>") and html.rstrip().endswith("</html>")
    for sid, title in R.SECTIONS:
        assert f'<section id="{sid}"><h2>{title}</h2>' in html
    for name in ("DRS, Acc, Rep by group", "GRS per country", "Counterfactual disparities"):
        assert "<h3" in html and name in html
    assert "sha256:" + "a" * 64 in html and "&quot;temperature&quot;: 0.75" in html  # provenance as a table
    assert "parse_rate" in html and 'badge pass">PASS' in html and 'badge fail">FAIL' in html
    assert "2 of 3 checks passed" in html
    assert "Showing the first 200 of" in html  # long tables are cut, and say so


def test_html_embeds_every_figure_and_lists_skipped_ones(rendered):
    html, figures = rendered["html"], rendered["figures"]
    drawn = [f for f in figures if not f.skipped]
    skipped = [f for f in figures if f.skipped]
    assert drawn and skipped
    uris = re.findall(r'src="data:image/png;base64,([A-Za-z0-9+/=]+)"', html)
    assert len(uris) == len(drawn)
    assert [base64.b64decode(u) for u in uris] == [f.png for f in drawn]
    for f in skipped:
        assert f.slug in html and f.skipped_reason in html
    # self-contained: no external resource
    assert not re.findall(r'(?:src|href)="(?!data:|#)', html)
    assert "http://" not in html and "https://" not in html


def test_everything_from_data_is_escaped(rendered):
    html, md = rendered["html"], rendered["md"]
    assert "<script" not in html.lower()
    assert "&lt;script&gt;alert(&#x27;x&#x27;)&lt;/script&gt;" in html
    assert html.count("&lt;script&gt;") >= 4  # title, provenance, table cell, table name
    assert "<script" not in md.lower() and "&lt;script&gt;" in md


def test_significance_is_marked(rendered):
    html, md = rendered["html"], rendered["md"]
    assert html.count('<span class="badge sig">significant</span>') == 2
    assert '<span class="badge ns">not significant</span>' in html
    assert '<tr class="sig-row">' in html and '<strong class="mark">**</strong>' in html
    assert "**significant**" in md and "not significant" in md and r"**\*\*\***" in md


def test_markings_of_non_results_are_not_emphasised():
    stats = hand_stats().assign(marking=["significant", "not significant", "significant"])
    html = R.table_html(stats)
    assert html.count('<strong class="mark">significant</strong>') == 2
    assert '<span class="quiet">not significant</span>' in html
    md = R.table_markdown(stats.drop(columns=["significant"]))
    assert "| **significant** |" in md and "| not significant |" in md and "**not" not in md


def test_markdown_has_tables_and_image_links(rendered, tables):
    md, figures = rendered["md"], rendered["figures"]
    for _, title in R.SECTIONS:
        assert f"## {title}" in md
    header = "| " + " | ".join(c.replace("_", r"\_") for c in tables["drs_summary"].columns) + " |"
    assert header in md
    assert "| key | value |" in md and "| check | passed | observed | threshold |" in md
    files = R.figure_files(figures)
    links = re.findall(r"!\[[^\]]*\]\((figures/[^)]+\.png)\)", md)
    assert links == list(files) and len(links) == sum(not f.skipped for f in figures)
    for path, png in files.items():
        assert path.startswith("figures/m1__")
        assert_valid_png(png)
    assert "data:image" not in md
    assert "Figures not drawn" in md


def test_same_input_gives_same_report(rendered):
    assert R.render_report(**rendered["kwargs"]) == (rendered["html"], rendered["md"])


def test_empty_report_still_has_every_section():
    html, md = R.render_report()
    for sid, title in R.SECTIONS:
        assert f'id="{sid}"' in html and f"## {title}" in md
    assert "No figures were given" in html and "No provenance was given" in md


def test_number_formatting():
    df = pd.DataFrame(
        {
            "responses": [12, 3],
            "drs": [0.123456, float("nan")],
            "p_adjusted": [0.0001, 0.2],
            "grs_change_pct": [12.345, -3.0],
            "rank": [1.0, 601.0],
            "name": ["a|b", "c"],
        }
    )
    md = R.table_markdown(df)
    assert "| 12 | 0.1235 | &lt;0.001 | +12.3% | 1 | a\\|b |" in md
    assert "| 3 | \u2014 | 0.200 | -3.0% | 601 | c |" in md


# ----------------------------------------------------------------------------- disparity summary
def test_disparity_summary_names_the_largest_gap_first():
    sentences = R.disparity_summary(R.DisparityTables(hand_summary()))
    assert sentences[0].startswith(
        "Under model m2 (base template), DRS for low-income students was 0.120 lower "
        "than for high-income students (0.480 vs 0.600; 30 and 30 responses)"
    )
    gaps = R.largest_gaps(hand_summary())
    assert list(gaps.iloc[0][["model", "attribute", "low_group", "high_group"]]) == [
        "m2",
        "economic_class",
        "low",
        "high",
    ]
    assert gaps["gap"].is_monotonic_decreasing and len(gaps) == 4


def test_disparity_summary_adds_the_test_oriented_like_the_sentence():
    sentences = R.disparity_summary(R.DisparityTables(hand_summary(), hand_stats()))
    m1_class = next(s for s in sentences if s.startswith("Under model m1 (base template), DRS for low-income"))
    assert "was 0.031 lower than for high-income students" in m1_class
    # the test row (a=high, b=low) is b - a = low - high: the sentence's own orientation
    assert "low minus high: paired difference -0.031; 95% CI [-0.050, -0.012]; 40 pairs; adjusted p = 0.004" in m1_class
    assert m1_class.endswith("significant after Holm correction.")
    m1_gender = next(s for s in sentences if s.startswith("Under model m1 (base template), DRS for transgender"))
    assert "no counterfactual test of this pair was given" in m1_gender
    m2 = next(s for s in sentences if s.startswith("Under model m2"))
    assert "no counterfactual test" in m2
    # a significant test not covered by the group gaps gets its own sentence
    tonga = next(s for s in sentences if "Tonga" in s)
    assert (
        "accessibility (Acc) for students from Tonga was 0.210 lower than for otherwise identical students "
        "from United States"
    ) in tonga and "significant after Holm correction" in tonga
    assert "Tonga minus United States: paired difference -0.210; 95% CI [-0.300, -0.120]; 12 pairs" in tonga
    # the non-significant gender test (female vs male) is not a pair of the largest gender gap: no sentence
    assert not any("female minus male" in s for s in sentences)


def test_disparity_summary_reports_non_significance_and_the_correction_given():
    summary = hand_summary()
    summary = summary[(summary["model"] == "m1") & (summary["group"].isin(["overall", "all", "male", "female"]))]
    stats = hand_stats().assign(correction="bh")
    (s,) = R.disparity_summary(R.DisparityTables(summary, stats[stats["attribute"] == "gender"]))
    assert "female students was 0.004 lower than for male students" in s
    # the test row (a=female, b=male) is male - female = +0.004: flipped to read female - male
    assert "female minus male: paired difference -0.004; 95% CI [-0.020, +0.012]" in s
    assert s.endswith("not significant after Benjamini-Hochberg correction.")


def test_disparity_summary_without_a_test():
    summary = hand_summary()
    summary = summary[summary["model"] == "m1"]
    stats = (
        hand_stats()
        .iloc[[0]]
        .assign(
            p_value=float("nan"),
            p_adjusted=float("nan"),
            significant=False,
            marking="too few pairs",
            n_pairs=1,
            level=0.9,
        )
    )
    s = R.disparity_summary(R.DisparityTables(summary, stats))[0]
    assert "low minus high: paired difference -0.031; 90% CI [-0.050, -0.012]; 1 pair; too few pairs." in s


def test_disparity_summary_for_one_partition_without_model_columns():
    summary = hand_summary()
    one = summary[summary["model"] == "m1"].drop(columns=["model", "template"])
    s = R.disparity_summary(R.DisparityTables(one), model="llama", template="regional")
    assert s[0].startswith("Under model llama (regional template), DRS for low-income students was 0.031 lower")


def test_disparity_summary_grs_and_concentration():
    grs = pd.DataFrame(
        {
            "model": "m1",
            "template": "base",
            "country": ["United States", "United Kingdom", "India", "Russia", "Nigeria"],
            "total_unis": [199, 90, 45, 48, 2],
            "n_recommendations": [60, 30, 0, 0, 10],
            "grs": [0.9, 0.8, 0.0, 0.0, 0.28],
        }
    )
    conc = pd.DataFrame({"model": ["m1"], "template": ["base"], "us_uk_share": [0.9], "country_coverage": [0.03]})
    s = R.disparity_summary(R.DisparityTables(hand_summary().iloc[0:0], grs=grs, concentration=conc))
    assert s[0] == (
        "Under model m1 (base template), 2 of 5 corpus countries were never recommended (GRS 0), "
        "among them Russia (48 ranked universities), India (45 ranked universities); the 3 most "
        "recommended countries (United States, United Kingdom, Nigeria) took 100% of the "
        "recommendations matched to the corpus."
    )
    assert s[1] == (
        "Under model m1 (base template), 90% of the recommendations were located in the US or the UK, "
        "and 3% of the corpus's countries appeared at all."
    )


def test_real_summary_sentences(rendered):
    sentences = rendered["sentences"]
    assert any(s.startswith("Under model m1 (base template), DRS for") for s in sentences)
    assert any("corpus countries were never recommended" in s for s in sentences)
    assert any("US or the UK" in s for s in sentences)
    assert all(s in rendered["html"] or R._esc(s) in rendered["html"] for s in sentences)


def _gender_summary():
    return pd.DataFrame(
        {
            "group_by": ["gender", "gender"],
            "group": ["female", "male"],
            "responses": [60, 40],
            "drs": [0.560, 0.405],
            "acc": [0.5, 0.5],
            "rep": [0.5, 0.5],
            "acad": [np.nan, np.nan],
            "model": ["m", "m"],
            "template": ["base", "base"],
        }
    )


def _gender_test(mean_diff):
    """female vs male; mean_diff is male minus female (value_b - value_a)."""
    return pd.DataFrame(
        [
            {
                "model": "m",
                "template": "base",
                "attribute": "gender",
                "value_a": "female",
                "value_b": "male",
                "metric": "drs",
                "n_pairs": 40,
                "mean_diff": mean_diff,
                "ci_low": mean_diff - 0.03,
                "ci_high": mean_diff + 0.03,
                "p_value": 0.01,
                "p_adjusted": 0.03,
                "significant": True,
            }
        ]
    )


def test_a_group_gap_that_disagrees_with_its_paired_difference_says_which_is_the_finding():
    """'male was 0.155 lower' next to 'paired difference +0.041' (issue 23.6): the sentence says the
    paired difference is the finding and why the group means differ."""
    from fairness_assets.core.reporting import report

    text = " ".join(report.disparity_summary(report.DisparityTables(_gender_summary(), stats=_gender_test(+0.041))))
    assert "was 0.155 lower" in text and "paired difference +0.041" in text
    assert "The paired difference (+0.041) is the finding" in text and "group means (-0.155)" in text
    consistent = " ".join(
        report.disparity_summary(report.DisparityTables(_gender_summary(), stats=_gender_test(-0.150)))
    )
    assert "paired difference -0.150" in consistent and "is the finding" not in consistent
