"""The report's geography section (issue 15.6): geographic findings first in the summary, the
section's tables and its two figures (region flow, locations coloured by region), and a report
without geography unchanged. Synthetic study-grid audit scored by the real code
(benchmarks/statistics.py), statistics by core/statistics/geostats/."""

from __future__ import annotations

import base64
import html as htmllib
import re
from pathlib import Path

import pandas as pd
import pytest

from fairness_assets.core.reporting import audit_report as AR
from fairness_assets.core.reporting import figures as F
from fairness_assets.core.reporting import report as R
from fairness_assets.core.reporting.sentences import geography as geography_sentences
from fairness_assets.core.scoring import metrics
from fairness_assets.core.statistics import geostats as gs
from fairness_assets.core.statistics.inference import InferenceParams
from tests.core.test_figures import assert_valid_png
from tests.helpers.scripts import load_script

ROOT = Path(__file__).resolve().parents[2]
SECTION = '<section id="geography"><h2>Geography: regions, home bias, behaviour vs needs</h2>'
NAN = re.compile(r"\bnan\b", re.IGNORECASE)


def _bench():
    return load_script("benchmarks/statistics.py", "bench_statistics")


@pytest.fixture(scope="module")
def audit():
    """One model under the base and regional templates (360 profiles x 2 runs x 3 items), with
    a planted lower reputation for students from Africa; geography of all partitions."""
    items, resp, params = _bench().synthetic_study_items(runs=2, planted_region="Africa", planted=0.4)
    geo = gs.geo_statistics(gs.Positions(items, params), resp, inference=InferenceParams(n_boot=200, n_perm=500))
    geo["geo_items"] = gs.item_geography(items)
    parts = []
    for (model, template), it in items.groupby(["model", "template"], sort=True):
        r = resp[(resp["model"] == model) & (resp["template"] == template)]
        stats = AR.partition_statistics(r, inference=InferenceParams(n_boot=100, n_perm=200))
        grs = pd.DataFrame(
            {"country": ["X"], "iso3": ["XXX"], "grs": [0.0], "n_recommendations": [0], "total_unis": [1]}
        )
        parts.append(
            AR.PartitionResult(
                model, template, it, {"drs_responses": r, "drs_summary": metrics.drs_summary(r)}, grs, statistics=stats
            )
        )
    return parts, geo


def _build(parts, geography=None):
    # partition figures are given (none): the test draws only the geography figures
    kw = dict(provenance={"code version": "test"}, quality=None, figures_by_partition={p.key: [] for p in parts})
    if geography is None:
        return AR.build_report(parts, **kw)
    return AR.build_report(parts, audit_wide=AR.AuditWideResults(geography=geography), **kw)


@pytest.fixture(scope="module")
def report(audit):
    parts, geo = audit
    html, md, figures = _build(parts, geo)
    return dict(html=html, md=md, figures=figures)


def _summary_items(html: str) -> list[str]:
    block = html.split('<section id="summary">', 1)[1].split("</section>", 1)[0]
    ul = block.split("<ul>", 1)[1].split("</ul>", 1)[0]
    return [htmllib.unescape(s) for s in re.findall(r"<li>(.*?)</li>", ul, flags=re.S)]


def _section(html: str) -> str:
    return html.split(SECTION, 1)[1].split("</section>", 1)[0]


# ----------------------------------------------------------------------------- with geography
def test_section_has_every_table_and_sits_before_the_tables(report):
    html, md = report["html"], report["md"]
    assert SECTION in html
    assert html.index('<section id="quality">') < html.index(SECTION) < html.index('<section id="tables">')
    assert '<a href="#geography">Geography: regions, home bias, behaviour vs needs</a>' in html
    assert "## Geography: regions, home bias, behaviour vs needs" in md
    assert md.index("## Parse quality") < md.index("## Geography") < md.index("## Tables")
    sec = _section(html)
    for title in (
        "Metrics by student region and North/South",
        "Geographic contrasts, one vs the rest",
        "Families of tests: size, smallest attainable p",
        "Class gap (low - high) interactions",
        "Class gap (low - high) per gender and per region",
        "split into behaviour",
        "Home bias per nationality",
        "Home bias from the base to the regional template",
    ):
        assert title in sec, title
    # contrasts: intervals, adjusted p and family sizes are columns; significant rows carry the badge
    contrasts = sec.split("Geographic contrasts, one vs the rest", 1)[1].split("</table>", 1)[0]
    for col in ("ci_low", "ci_high", "p_adjusted", "family_size", "p_min_attainable"):
        assert f"<th>{col}</th>" in contrasts
    assert '<span class="badge sig">significant</span>' in contrasts
    assert "Global South" in contrasts
    # the family table: size, smallest attainable p, Holm threshold
    fam = sec.split("Families of tests", 1)[1].split("</table>", 1)[0]
    for col in ("family_size", "p_min_attainable", "holm_threshold", "attainable"):
        assert f"<th>{col}</th>" in fam
    assert not NAN.search(html) and not NAN.search(md)


def test_significant_contrasts_first_and_a_bounded_number_of_others(audit):
    _, geo = audit
    c = geo["geo_contrasts"]
    shown, left = AR.geography_contrasts_shown(c, non_significant=3)
    n_sig = int(c["significant"].sum())
    assert n_sig >= 1
    assert shown["significant"].iloc[:n_sig].all() and not shown["significant"].iloc[n_sig:].any()
    per_family = shown[~shown["significant"]].groupby(["model", "template", "analysis"]).size()
    assert (per_family <= 3).all()
    assert left == int(c["p_value"].notna().sum()) - len(shown)
    # South vs North comes before the regions and the nationalities among the significant rows
    order = shown[shown["significant"]]["analysis"].map(
        {"south_vs_north": 0, "region_vs_rest": 1, "nationality_vs_rest": 2}
    )
    for _, g in shown[shown["significant"]].assign(_o=order).groupby(["model", "template"]):
        assert g["_o"].is_monotonic_increasing


def test_both_figures_per_partition_are_drawn_in_the_section(audit, report):
    parts, _ = audit
    html, md, figures = report["html"], report["md"], report["figures"]
    geo_figs = [f for f in figures if f.name in F.GEO_FIGURE_NAMES]
    assert [(f.model, f.template, f.name) for f in geo_figs] == [
        (p.model, p.template, n) for p in parts for n in F.GEO_FIGURE_NAMES
    ]
    sec = _section(html)
    for f in geo_figs:
        assert not f.skipped, f.skipped_reason
        img = assert_valid_png(f.png)
        assert img.shape[0] > 200 and img.shape[1] > 400
        # embedded in the geography section, linked from the Markdown, written with the report's files
        assert f'id="fig-{f.slug}"' in sec and base64.b64encode(f.png).decode("ascii") in sec
        assert R.figure_path(f) in md and R.figure_path(f) in R.figure_files(figures)
    # not repeated under "Figures"
    figures_section = html.split('<section id="figures">', 1)[1]
    assert not any(f'id="fig-{f.slug}"' in figures_section for f in geo_figs)


def test_figures_keep_to_their_partition(audit):
    _, geo = audit
    gi = geo["geo_items"]
    base = gi[(gi["template"] == "base") & gi["iso3"].notna()]
    f = F.locations_by_region(gi, "model-a", "base")
    assert f"({len(base)} recommendations located in a country)" in f.caption
    assert "Europe" in f.caption and "Africa" in f.caption
    flow = F.region_flow(gi, "model-a", "regional")
    assert flow.template == "regional" and "own-region share" in flow.caption
    # the same input draws the same bytes
    assert F.region_flow(gi, "model-a", "regional").png == flow.png


def test_figures_skipped_with_a_reason():
    empty = pd.DataFrame(columns=["model", "template", "iso3", "region", "item_region"])
    for fn in (F.region_flow, F.locations_by_region):
        f = fn(empty, "m", "t")
        assert f.skipped and "no recommended items" in f.skipped_reason
        assert fn(None, "m", "t").skipped
    no_nat = pd.DataFrame(
        {
            "model": "m",
            "template": "gender_only",
            "iso3": ["USA", "GBR"],
            "region": [None, None],
            "item_region": ["North America", "Europe"],
        }
    )
    f = F.region_flow(no_nat, "m", "gender_only")
    assert f.skipped and "nationality" in f.skipped_reason
    assert not F.locations_by_region(no_nat, "m", "gender_only").skipped  # locations need no student region
    f = F.region_flow(pd.DataFrame({"iso3": ["USA"]}), "m", "t")
    assert f.skipped and "item_geography" in f.skipped_reason


def test_summary_starts_with_the_geographic_findings(audit, report):
    parts, geo = audit
    items = _summary_items(report["html"])
    expected = geography_sentences.summary_sentences({k: v for k, v in geo.items() if isinstance(v, pd.DataFrame)})
    assert expected and items[: len(expected)] == expected
    first = items[0]
    assert "Global South" in first and "adjusted p" in first and re.search(r"\[[+-]\d\.\d{3}, [+-]\d\.\d{3}\]", first)
    assert "tests in the family" in first
    # then the disparity sentences of the report without geography, in the same order
    without = _summary_items(_build(parts)[0])
    assert without and items[len(expected) :] == without
    assert report["md"].split("## Summary of the largest disparities", 1)[1].lstrip().startswith("- " + R._md(first))


# ----------------------------------------------------------------------------- without geography
def test_report_without_geography_is_unchanged(audit):
    parts, _ = audit
    html, md, figures = _build(parts)
    for given in (None, {}):
        assert AR.build_report(
            parts,
            provenance={"code version": "test"},
            quality=None,
            figures_by_partition={p.key: [] for p in parts},
            audit_wide=AR.AuditWideResults(geography=given),
        ) == (html, md, figures)
    assert "Geography" not in html and "Geography" not in md and 'id="geography"' not in html
    nav = re.search(r"<nav><ul>(.*?)</ul></nav>", html).group(1)
    assert re.findall(r'href="#([a-z]+)"', nav) == ["scorecard"] + [sid for sid, _ in R.SECTIONS]  # issue 23.3
    assert not any(f.name in F.GEO_FIGURE_NAMES for f in figures)
    # render_report given no section is the report as rendered without the sections argument
    kw = dict(tables={"x": pd.DataFrame({"a": [1]})}, summary=["s."])
    assert R.render_report(R.ReportContent(**kw), title="t", provenance={"a": 1}) == R.render_report(
        R.ReportContent(**kw, sections=()), title="t", provenance={"a": 1}
    )


# ----------------------------------------------------------------------------- empty geography
def test_geography_with_empty_tables_says_why(audit):
    parts, geo = audit
    empty = {k: v.iloc[0:0] for k, v in geo.items()}
    html, md, figures = _build(parts, empty)
    assert SECTION in html
    sec = _section(html)
    assert "Metrics by region: not shown, the table is empty" in sec
    assert "Geographic contrasts: none could be tested" in sec
    assert "Home bias: not shown" in sec and "Behaviour vs needs: no class gap could be split" in sec
    assert "Class-gap interactions: none could be computed" in sec
    assert "nationality" in sec  # the reason names what is missing
    geo_figs = [f for f in figures if f.name in F.GEO_FIGURE_NAMES]
    assert len(geo_figs) == 2 * len(parts) and all(f.skipped for f in geo_figs)
    assert "Figures not drawn" in sec and all(f.skipped_reason in sec for f in geo_figs)
    assert not NAN.search(html) and not NAN.search(md)
    # the summary has no geographic sentence, only the disparity ones
    assert _summary_items(html) == _summary_items(_build(parts)[0])


def test_geography_with_missing_keys_and_no_items(audit):
    parts, geo = audit
    html, md, figures = _build(parts, {"geo_contrasts": [], "families": None})  # geo_contrasts() returns [] when empty
    sec = _section(html)
    assert "Geographic contrasts: none could be tested" in sec
    assert "no item geography (geo_items) was given" in sec
    assert not any(f.name in F.GEO_FIGURE_NAMES for f in figures)
    assert not NAN.search(html) and not NAN.search(md)
    # only the home-bias tables: the rest say why they are absent, the figures are drawn
    html2, _, figures2 = _build(parts, {"home_bias": geo["home_bias"], "geo_items": geo["geo_items"]})
    sec2 = _section(html2)
    assert "Home bias per nationality" in sec2 and "Metrics by region: not shown" in sec2
    assert sum(not f.skipped for f in figures2 if f.name in F.GEO_FIGURE_NAMES) == 2 * len(parts)
