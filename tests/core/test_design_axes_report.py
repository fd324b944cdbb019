"""The report, its sentences, the scorecard and the figures follow the active design's axes (issue 34):
under a design with a fourth ``none`` axis (``disability``) every part that lists the axes names it, by
its label and word, as it names the study's gender; under a design without a home axis nothing crashes,
and the geography parts say why they are skipped. Inputs built by hand, as in test_scorecard.py."""

from __future__ import annotations

import re

import pandas as pd
import pytest

from fairness_assets.core.reference import axes
from fairness_assets.core.reporting import audit_report as AR
from fairness_assets.core.reporting import figures as F
from fairness_assets.core.reporting import report as R
from fairness_assets.core.reporting import scorecard as S
from fairness_assets.core.reporting.sentences import change as change_sentences
from fairness_assets.core.reporting.sentences import geography as geography_sentences

NAN = re.compile(r"\bnan\b", re.I)
DISABILITY = axes.Axis(
    "disability",
    label="disability",
    word="disability",
    position="none",
    profile_set="disability_only",
    values=("none", "blind", "wheelchair user"),
)


def _study() -> tuple[axes.Axis, ...]:
    return tuple(axes.axis(n) for n in ("gender", "economic_class", "nationality"))  # the default: the study's


@pytest.fixture
def four_axes():
    with axes.use(axes.Catalogue((*_study(), DISABILITY))) as cat:
        yield cat


@pytest.fixture
def no_home():
    gender, cls, _ = _study()
    with axes.use(axes.Catalogue((gender, cls, DISABILITY))) as cat:
        yield cat


# ----------------------------------------------------------------------------- inputs
def _items(with_home: bool = True) -> pd.DataFrame:
    rows = []
    countries = [("Kenya", "KEN"), ("France", "FRA"), ("Japan", "JPN"), ("United States", "USA")]
    for i in range(36):
        country, iso = countries[i % 4]
        rows.append(
            {
                "model": "m",
                "template": "base",
                "response_id": f"r{i}",
                "run": 1,
                "gender": ("male", "female", "transgender")[i % 3],
                "economic_class": ("high", "middle", "low")[(i // 3) % 3],
                "disability": DISABILITY.values[(i // 9) % 3],
                **(
                    {"nationality": ("Nigeria", "India")[i % 2], "student_iso3": ("NGA", "IND")[i % 2]}
                    if with_home
                    else {}
                ),
                "country": country,
                "iso3": iso,
                "matched_name": f"University {i % 5}",
                "university_text": f"University {i % 5}",
                "program_norm": ("physics", "law", "medicine")[i % 3],
            }
        )
    return pd.DataFrame(rows)


def _behaviour_needs() -> pd.DataFrame:
    base = {"model": "m", "template": "base", "n_pairs": 40.0, "family_size": 6.0, "correction": "holm"}
    pair = {**base, "attribute": "disability", "value_a": "none", "value_b": "blind"}
    return pd.DataFrame(
        [
            {**pair, "metric": "drs", "component": "behaviour", "mean_diff": -0.05, "ci_low": -0.07, "ci_high": -0.03,
             "p_value": 0.001, "p_adjusted": 0.004, "significant": True},
            {**pair, "metric": "drs", "component": "needs", "mean_diff": 0.0, "ci_low": 0.0, "ci_high": 0.0,
             "p_value": None, "p_adjusted": None, "significant": False, "by_construction": True},
            {**pair, "metric": "drs", "component": "total", "mean_diff": -0.05, "ci_low": -0.07, "ci_high": -0.03,
             "p_value": 0.001, "p_adjusted": 0.004, "significant": True},
            {**pair, "metric": "rep", "component": "behaviour", "mean_diff": 0.001, "ci_low": -0.01, "ci_high": 0.01,
             "p_value": 0.8, "p_adjusted": 0.9, "significant": False},
        ]
    )  # fmt: skip


def _drs_summary() -> pd.DataFrame:
    rows = [("overall", "all", 36, 0.5)]
    rows += [("gender", g, 12, v) for g, v in (("male", 0.50), ("female", 0.49), ("transgender", 0.51))]
    rows += [("economic_class", c, 12, v) for c, v in (("high", 0.55), ("middle", 0.50), ("low", 0.45))]
    rows += [("disability", d, 12, v) for d, v in (("none", 0.56), ("blind", 0.44), ("wheelchair user", 0.50))]
    return pd.DataFrame(
        [{"group_by": b, "group": g, "responses": n, "drs": v, "acc": v, "rep": v, "acad": None} for b, g, n, v in rows]
    )


def _partition(items: pd.DataFrame) -> AR.PartitionResult:
    responses = items.drop_duplicates("response_id").assign(
        parse_status="ok", n_items=1, n_matched=1, drs=0.5, acc=0.5, rep=0.5
    )
    return AR.PartitionResult(
        "m",
        "base",
        items,
        {"drs_responses": responses, "drs_summary": _drs_summary()},
        pd.DataFrame(),
        statistics={"behaviour_needs": _behaviour_needs()},
    )


def _build(part: AR.PartitionResult, geography=None) -> tuple[str, str, list]:
    return AR.build_report(
        [part],
        provenance={"code version": "test"},
        quality=None,
        audit_wide=AR.AuditWideResults(geography=geography),
        figures_by_partition={part.key: []},
    )


def _summary(html: str) -> list[str]:
    block = html.split('<section id="summary">', 1)[1].split("</section>", 1)[0]
    return [R.html.unescape(re.sub(r"<[^>]+>", "", li)) for li in re.findall(r"<li>(.*?)</li>", block, re.S)]


def _section(html: str, sid: str) -> str:
    return R.html.unescape(html.split(f'<section id="{sid}">', 1)[1].split("</section>", 1)[0])


# ----------------------------------------------------------------------------- a fourth, `none` axis
def test_the_figures_have_a_disability_panel_like_gender(four_axes):
    names = F.FIGURE_NAMES
    for kind in ("locations", "universities", "programs"):
        assert {f"top_{kind}_by_class", f"top_{kind}_by_gender", f"top_{kind}_by_disability"} <= set(names)
    figs = {f.name: f for f in F.all_partition_figures({"drs_items": _items()}, "m", "base")}
    assert set(figs) >= {n for n in names if n.startswith("top_")} | {"nationality_heatmap"}
    by = figs["top_locations_by_disability"]
    assert not by.skipped and "by disability" in by.title
    assert not figs["nationality_heatmap"].skipped
    # a template whose profiles do not state it: skipped, naming the axis by its label
    skipped = F.top_figure(_items().drop(columns="disability"), "programs", "disability")
    assert skipped.name == "top_programs_by_disability" and "state no disability" in skipped.skipped_reason
    # the values in the design's order: blind is drawn before wheelchair user, as declared
    assert F.ORDER["disability"] == list(DISABILITY.values)


def test_base_vs_regional_lists_disability_after_the_study_axes(four_axes):
    change = pd.DataFrame(
        [
            {
                "model": "m",
                "group_by": b,
                "group": g,
                "drs_change_pct": 1.0,
                "acc_change_pct": 2.0,
                "rep_change_pct": 3.0,
            }
            for b, g in (("overall", "all"), ("disability", "blind"), ("gender", "male"), ("economic_class", "low"))
        ]
    )
    fig = F.base_vs_regional_drs(change, "m")
    assert not fig.skipped
    assert "overall and by gender, economic class and disability" in fig.caption


def test_the_sentences_name_disability_and_its_needs_part_is_zero_by_construction(four_axes):
    bn = _behaviour_needs()
    lines = R.behaviour_findings(bn, model="m", template="base")
    assert any("to blind students than to otherwise identical none students" in s for s in lines), lines
    assert any("by disability the lists differed in" in s for s in lines), lines
    split = R.outcome_split_sentence(
        bn, model="m", template="base", attribute="disability", metric="drs", low="blind", high="none"
    )
    assert split and "0 by construction: disability does not move the student's position" in split
    gaps = R.disparity_summary(R.DisparityTables(_drs_summary()), metrics=("drs",), model="m", template="base")
    assert any("for blind students was 0.120 lower than for none students" in s for s in gaps), gaps
    # base vs regional of a disability contrast: its values name the groups, as the study's gender values do
    row = {"source": "behaviour_needs", "analysis": "disability", "value_a": "none", "value_b": "blind"}
    assert change_sentences._who(row) == ("blind profiles", "none profiles")


def test_the_scorecard_names_disability(four_axes):
    found = S.behaviour_findings(_behaviour_needs())
    assert list(found["attribute"]) == ["disability"]
    assert found.iloc[0]["lower"] == "blind students" and found.iloc[0]["higher"] == "otherwise identical none students"
    md = S.markdown(S.build(pd.DataFrame(columns=list(S.ROW_COLUMNS)), found))
    assert "(disability, counterfactual pair)" in md


def test_the_report_lists_disability_in_its_sections(four_axes):
    html, md, _ = _build(_partition(_items()), geography={"geo_contrasts": pd.DataFrame()})
    summary = _summary(html)
    assert any("blind students" in s for s in summary), summary
    behaviour = _section(html, "behaviour")
    assert "two values of gender, income, nationality or disability" in behaviour
    assert "for every gender or disability pair, the needs part is 0 by construction" in behaviour
    assert re.search(r"<td>disability</td>", html)  # the behaviour / needs table's rows
    geo = _section(html, "geography")
    assert "paired within gender x income x disability strata" in geo
    assert "gender_only, class_only or disability_only template only" in geo
    assert "no low- and high-income profiles with a gender, a disability or a region" in geo
    assert "(disability, counterfactual pair)" in _section(html, "scorecard")
    assert not NAN.search(html) and not NAN.search(md)


# ----------------------------------------------------------------------------- no home axis
def test_without_a_home_axis_the_figures_skip_the_home_parts(no_home):
    assert "home_heatmap" in F.FIGURE_NAMES and "nationality_heatmap" not in F.FIGURE_NAMES
    items = _items(with_home=False)
    figs = {f.name: f for f in F.all_partition_figures({"drs_items": items}, "m", "base")}
    assert figs["home_heatmap"].skipped and "no home axis" in figs["home_heatmap"].skipped_reason
    assert not figs["top_locations_by_disability"].skipped
    geo_items = items.assign(region=None, item_region="Europe")
    flow = F.region_flow(geo_items, "m", "base")
    assert flow.skipped and "no home axis" in flow.skipped_reason
    assert F._student_countries(items) == ([], [])


def test_without_a_home_axis_the_report_says_why_geography_is_skipped(no_home):
    items = _items(with_home=False)
    geography = {
        "geo_contrasts": pd.DataFrame(),
        "home_bias": pd.DataFrame(),
        "geo_items": items.assign(region=None, item_region="Europe"),
    }
    html, md, figures = _build(_partition(items), geography)
    geo = _section(html, "geography")
    assert "This design has no home axis" in geo
    assert "Home bias: skipped, the design has no home axis" in geo
    assert "the region flow and the locations by region are not drawn: the design has no home axis" in geo
    assert not any(f.name in F.GEO_FIGURE_NAMES for f in figures)
    assert "two values of gender, income or disability" in _section(html, "behaviour")
    assert "(each side's income weighting)" in _section(html, "behaviour")
    assert not NAN.search(html) and not NAN.search(md)
    # the geographic sentences and the scorecard read the tables without a home column
    change = pd.DataFrame(
        {"model": ["m"], "own_region_base": [0.2], "own_region_regional": [0.3], "own_region_change": [0.1],
         "mean_distance_km_change": [-100.0]}
    )  # fmt: skip
    lines = geography_sentences.summary_sentences({"home_bias_change": change})
    assert lines and "on average; mean distance" in lines[0]
    assert S.behaviour_findings(geo_contrasts=pd.DataFrame()).empty


def test_without_a_lambda_axis_the_gap_parts_say_why():
    gender, _, nationality = _study()
    with axes.use(axes.Catalogue((gender, nationality, DISABILITY))):
        tables, notes = AR.geography_tables({"geo_contrasts": pd.DataFrame()})
        assert not tables
        assert any("the design has no lambda axis" in n for n in notes), notes
        assert geography_sentences.summary_sentences({"class_gap_decomposition": pd.DataFrame()}) == []
        assert AR.behaviour_intro().count("(each side's home country and capital distances)") == 1
