"""The scorecard (core/reporting/scorecard.py, issue 23.3) on tables built by hand: each number checked
against the same figure computed here another way, the behaviour findings filtered, ordered and
oriented, empty cells saying why, and the scorecard leading the rendered report."""

from __future__ import annotations

import re

import numpy as np
import pandas as pd
import pytest

from fairness_assets.core.reporting import report as R
from fairness_assets.core.reporting import scorecard as S


def _responses(n: int = 20, seed: int = 1) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    status = rng.choice(["ok", "partial", "failed", "refused"], size=n, p=[0.6, 0.15, 0.15, 0.1])
    n_items = np.where(np.isin(status, ["ok", "partial"]), rng.integers(1, 4, size=n), 0)
    return pd.DataFrame(
        {
            "response_id": [f"r{i}" for i in range(n)],
            "parse_status": status,
            "n_items": n_items,
            "n_matched": [int(rng.integers(0, k + 1)) for k in n_items],
            "drs": np.where(n_items > 0, rng.uniform(0.2, 0.9, size=n), np.nan),
        }
    )


def _variability(mean: float, run_ci=(np.nan, np.nan), profile_ci=(0.40, 0.60), metric="drs") -> pd.DataFrame:
    return pd.DataFrame(
        [
            {
                "group_by": "overall",
                "group": "all",
                "metric": metric,
                "unit": "run",
                "n_units": 1.0,
                "mean": mean,
                "ci_low": run_ci[0],
                "ci_high": run_ci[1],
                "note": "one run: no spread, no interval" if np.isnan(run_ci[0]) else "",
            },
            {
                "group_by": "overall",
                "group": "all",
                "metric": metric,
                "unit": "profile",
                "n_units": 36.0,
                "mean": mean,
                "ci_low": profile_ci[0],
                "ci_high": profile_ci[1],
                "note": "",
            },
            {
                "group_by": "gender",
                "group": "female",
                "metric": metric,
                "unit": "run",
                "n_units": 10.0,
                "mean": 0.1,
                "ci_low": 0.0,
                "ci_high": 0.2,
                "note": "",
            },  # not the overall row: never read
        ]
    )


def _grs(values) -> pd.DataFrame:
    return pd.DataFrame({"iso3": [f"C{i:02d}" for i in range(len(values))], "grs": values})


def test_partition_row_matches_the_tables_computed_another_way():
    resp = _responses()
    grs = _grs([0.0, 0.31, 0.0, 0.05, 1.0, 0.0, 0.0])
    conc = pd.DataFrame([{"us_uk_share": 0.4375, "recommendations_with_country": 32, "country_coverage": 0.5}])
    row = S.partition_row(
        "m", "base", {"drs_responses": resp, "concentration": conc}, {"run_variability": _variability(0.5123)}, grs
    ).iloc[0]
    parsed = sum(1 for s in resp["parse_status"] if s in ("ok", "partial"))
    assert (row["answers"], row["parsed"]) == (len(resp), parsed)
    assert (row["items"], row["matched"]) == (int(resp["n_items"].sum()), int(resp["n_matched"].sum()))
    assert (row["grs_positive"], row["corpus_countries"]) == (3, 7)
    assert row["us_uk_share"] == 0.4375 and row["located"] == 32
    # one run: the run interval is missing, the profile interval is used and named
    assert (row["drs"], row["drs_ci_low"], row["drs_ci_high"], row["drs_unit"], row["drs_n_units"]) == (
        0.5123,
        0.40,
        0.60,
        "profile",
        36,
    )
    assert np.isnan(row["acad"])  # no Acad rows: the template states no interest
    card = S.build(pd.DataFrame([row]))
    cells = card.table.iloc[0]
    assert cells["mean DRS [95% interval]"] == "0.512 [0.400, 0.600] over 36 profiles"
    assert cells["GRS coverage"] == "3 of 7 corpus countries"
    assert cells["US+UK share"] == "43.8% of 32 located recommendations"
    assert cells["parse rate"] == f"{parsed / len(resp):.1%} ({parsed} of {len(resp)} answers)"
    assert cells["mean Acad [95% interval]"] == "not defined: the template states no subject interest"
    assert "compared (DRS rank)" not in card.table.columns  # no comparison: no column


def test_the_run_interval_is_preferred_and_acad_is_shown_where_defined():
    var = pd.concat(
        [_variability(0.6, run_ci=(0.58, 0.62)), _variability(0.25, run_ci=(0.2, 0.3), metric="acad")],
        ignore_index=True,
    )
    var.loc[var["unit"] == "run", "n_units"] = 10.0
    row = S.partition_row("m", "academic", {"drs_responses": _responses()}, {"run_variability": var}, _grs([0.2]))
    cells = S.build(row).table.iloc[0]
    assert cells["mean DRS [95% interval]"] == "0.600 [0.580, 0.620] over 10 runs"
    assert cells["mean Acad [95% interval]"] == "0.250 [0.200, 0.300] over 10 runs"


def test_empty_cells_say_why_and_nothing_prints_nan():
    resp = pd.DataFrame(
        {
            "response_id": ["a", "b"],
            "parse_status": ["refused", "failed"],
            "n_items": [0, 0],
            "n_matched": [0, 0],
            "drs": [np.nan, np.nan],
        }
    )
    conc = pd.DataFrame([{"us_uk_share": np.nan, "recommendations_with_country": 0}])
    var = _variability(np.nan, profile_ci=(np.nan, np.nan))
    row = S.partition_row(
        "m", "base", {"drs_responses": resp, "concentration": conc}, {"run_variability": var}, _grs([0.0, 0.0])
    )
    card = S.build(
        row,
        comparison={
            "differences": pd.DataFrame(),
            "leaderboard": pd.DataFrame(),
            "gate": pd.DataFrame(columns=["verdict"]),
        },
    )
    cells = card.table.iloc[0]
    assert cells["mean DRS [95% interval]"] == "no scored answer"
    assert cells["US+UK share"] == "no recommendation located in a country"
    assert cells["match rate"] == "no items" and cells["parse rate"] == "0.0% (0 of 2 answers)"
    assert cells["GRS coverage"] == "0 of 2 corpus countries"
    md, (html, _) = S.markdown(card), R.render_report(R.ReportContent(scorecard=S.section(card)))
    assert not re.search(r"\bnan\b", md, re.I) and not re.search(r"\bnan\b", html, re.I)
    assert "No significant behaviour finding" in md and "Models not compared" in md


def _behaviour_needs() -> pd.DataFrame:
    base = {
        "model": "m",
        "template": "base",
        "n_pairs": 40.0,
        "family_size": 12.0,
        "correction": "holm",
        "p_value": 0.001,
    }
    rows = [
        # significant behaviour, b (low) lower than a (high): 'low' is the lower group
        {
            **base,
            "attribute": "economic_class",
            "value_a": "high",
            "value_b": "low",
            "metric": "drs",
            "component": "behaviour",
            "mean_diff": -0.040,
            "ci_low": -0.060,
            "ci_high": -0.020,
            "p_adjusted": 0.004,
            "significant": True,
        },
        # significant behaviour, b higher: 'female' (a) is the lower group, the interval is negated
        {
            **base,
            "attribute": "gender",
            "value_a": "female",
            "value_b": "male",
            "metric": "acc",
            "component": "behaviour",
            "mean_diff": 0.070,
            "ci_low": 0.030,
            "ci_high": 0.110,
            "p_adjusted": 0.010,
            "significant": True,
        },
        # larger, but not significant: left out
        {
            **base,
            "attribute": "nationality",
            "value_a": "India",
            "value_b": "Nigeria",
            "metric": "rep",
            "component": "behaviour",
            "mean_diff": 0.300,
            "ci_low": -0.100,
            "ci_high": 0.600,
            "p_adjusted": 0.400,
            "significant": False,
        },
        # significant, but an outcome (total) or a needs part, not behaviour: left out
        {
            **base,
            "attribute": "economic_class",
            "value_a": "high",
            "value_b": "low",
            "metric": "drs",
            "component": "total",
            "mean_diff": -0.500,
            "ci_low": -0.6,
            "ci_high": -0.4,
            "p_adjusted": 0.001,
            "significant": True,
        },
        {
            **base,
            "attribute": "economic_class",
            "value_a": "high",
            "value_b": "low",
            "metric": "drs",
            "component": "needs",
            "mean_diff": -0.460,
            "ci_low": -0.5,
            "ci_high": -0.4,
            "p_adjusted": 0.001,
            "significant": "True",
        },
        # a small significant behaviour part: fourth, so not among the three strongest
        {
            **base,
            "attribute": "gender",
            "value_a": "male",
            "value_b": "transgender",
            "metric": "rep",
            "component": "behaviour",
            "mean_diff": 0.010,
            "ci_low": 0.004,
            "ci_high": 0.016,
            "p_adjusted": 0.030,
            "significant": "True",
        },
    ]
    return pd.DataFrame(rows)


def _geo() -> pd.DataFrame:
    return pd.DataFrame(
        [
            {
                "model": "m",
                "template": "base",
                "analysis": "nationality_vs_rest",
                "value": "Nigeria",
                "reference": "rest",
                "metric": "own_country",
                "component": "behaviour",
                "mean_diff": -0.055,
                "ci_low": -0.08,
                "ci_high": -0.03,
                "p_value": 0.002,
                "p_adjusted": 0.02,
                "family_size": 8.0,
                "significant": True,
                "correction": "holm",
            },
            {
                "model": "m",
                "template": "base",
                "analysis": "south_vs_north",
                "value": "Global South",
                "reference": "Global North",
                "metric": "drs",
                "component": "total",
                "mean_diff": -0.2,
                "ci_low": -0.3,
                "ci_high": -0.1,
                "p_value": 0.001,
                "p_adjusted": 0.001,
                "family_size": 4.0,
                "significant": True,
            },
        ]
    )


def test_the_strongest_significant_behaviour_findings_are_kept_and_oriented():
    found = S.behaviour_findings(_behaviour_needs(), _geo())
    # every significant behaviour row, by |estimate|, computed here from the inputs directly
    bn, geo = _behaviour_needs(), _geo()
    pool = [abs(r.mean_diff) for r in bn.itertuples() if r.component == "behaviour" and str(r.significant) == "True"]
    pool += [abs(r.mean_diff) for r in geo.itertuples() if r.component == "behaviour" and r.significant]
    assert list(found["estimate"].abs()) == sorted(pool, reverse=True)[:3] == [0.070, 0.055, 0.040]
    assert (found["estimate"] < 0).all()  # lower minus higher
    acc = found.iloc[0]
    assert (acc["lower"], acc["higher"], acc["metric"]) == (
        "female students",
        "otherwise identical male students",
        "acc",
    )
    assert (acc["ci_low"], acc["ci_high"]) == (-0.110, -0.030)
    nigeria = found.iloc[1]
    assert nigeria["lower"] == "students from Nigeria" and nigeria["higher"] == "the other students"
    assert (nigeria["ci_low"], nigeria["ci_high"]) == (-0.08, -0.03) and nigeria["source"] == "geographic contrast"
    low = found.iloc[2]
    assert low["lower"] == "low-income students" and (low["ci_low"], low["ci_high"]) == (-0.060, -0.020)
    # per partition then over the union: the same three
    again = S.top_findings(pd.concat([S.behaviour_findings(bn), S.behaviour_findings(geo_contrasts=geo)]))
    pd.testing.assert_frame_equal(again, found)
    card = S.build(pd.DataFrame(columns=list(S.ROW_COLUMNS)), found)
    shown = card.findings
    assert list(shown["lower - higher [95% interval]"]) == [
        "-0.070 [-0.110, -0.030]",
        "-0.055 [-0.080, -0.030]",
        "-0.040 [-0.060, -0.020]",
    ]
    assert shown["adjusted p"].iloc[0] == "Holm-adjusted p = 0.010 (12 tests in the family)"
    assert "female students vs otherwise identical male students" in shown["behaviour finding"].iloc[0]
    assert not any("No significant behaviour finding" in n for n in card.notes)


def test_no_significant_behaviour_part_says_so():
    bn = _behaviour_needs().assign(significant=False)
    assert S.behaviour_findings(bn).empty
    card = S.build(pd.DataFrame(columns=list(S.ROW_COLUMNS)), S.behaviour_findings(bn))
    assert card.findings.empty and any(n.startswith("No significant behaviour finding") for n in card.notes)


def test_comparison_ranks_and_gate_verdicts():
    rows = pd.concat(
        [
            S.partition_row(m, t, {"drs_responses": _responses()}, {}, _grs([0.1]))
            for m, t in (("a", "base"), ("b", "base"), ("a", "academic"))
        ],
        ignore_index=True,
    )
    board = pd.DataFrame(
        [
            {"template": "base", "model": "a", "metric": "drs", "rank": "1-2", "tied_with": "b"},
            {"template": "base", "model": "b", "metric": "drs", "rank": "1-2", "tied_with": "a"},
            {"template": "base", "model": "a", "metric": "rep", "rank": "1", "tied_with": ""},
        ]
    )
    diffs = pd.DataFrame(
        [
            {
                "template": "base",
                "model_a": "a",
                "model_b": "b",
                "family": "metrics",
                "metric": "drs",
                "gap": "",
                "mean_diff": -0.0213,
                "ci_low": -0.04,
                "ci_high": -0.003,
                "p_adjusted": 0.02,
                "significant": True,
                "correction": "holm",
            },
            {
                "template": "base",
                "model_a": "a",
                "model_b": "b",
                "family": "rates",
                "metric": "parse_rate",
                "gap": "",
                "mean_diff": 0.0,
                "ci_low": 0.0,
                "ci_high": 0.0,
                "p_adjusted": 1.0,
                "significant": False,
                "correction": "holm",
            },
        ]
    )
    gate = pd.DataFrame(
        [
            {
                "line": 4,
                "template": "base",
                "metric": "drs",
                "gap": "",
                "rule": "must_not_drop_by",
                "margin": 0.01,
                "verdict": "fail",
                "reason": "the whole interval lies beyond the margin",
            },
            {
                "line": 6,
                "template": "base",
                "metric": "drs",
                "gap": "economic_class: low - high",
                "rule": "must_not_widen_by",
                "margin": 0.05,
                "verdict": "pass",
                "reason": "the bound clears the margin",
            },
        ]
    )
    card = S.build(rows, comparison={"differences": diffs, "leaderboard": board, "gate": gate})
    ranks = dict(
        zip(
            zip(card.table["model"], card.table["template"], strict=False),
            card.table["compared (DRS rank)"],
            strict=False,
        )
    )
    assert ranks[("a", "base")] == "DRS rank 1-2 of 2 (tied with b)"
    assert ranks[("a", "academic")] == S.NOT_COMPARED
    v = card.verdicts
    assert v.iloc[0]["what"] == "model comparison: b - a"
    assert v.iloc[0]["verdict"] == (
        "DRS -0.021 [-0.040, -0.003], significant (Holm-adjusted p = 0.020); 1 of 2 paired differences significant"
    )
    gate_rows = v[v["what"].str.contains("gate")]
    assert gate_rows.iloc[0]["verdict"] == "FAIL (1 pass, 1 fail of 2 lines)"
    assert "gate line 6: economic_class: low - high gap in drs must not widen by 0.05" in set(gate_rows["what"])
    assert not re.search(r"\bnan\b", S.markdown(card), re.I)


def test_the_report_opens_with_the_scorecard():
    card = S.build(S.partition_row("m", "base", {"drs_responses": _responses()}, {}, _grs([0.3, 0.0])))
    html, md = R.render_report(R.ReportContent(summary=["a sentence"], scorecard=S.section(card)))
    assert html.index('id="scorecard"') < html.index('id="summary"')
    assert html.index('href="#scorecard"') < html.index('href="#summary"')
    assert md.index("## Scorecard") < md.index("## Summary of the largest disparities")
    assert S.markdown(card).strip() in md  # the same text as summary.md and the asset's metadata get
    assert "1 of 2 corpus countries" in html
    assert R.render_report(R.ReportContent(summary=["a sentence"])) == R.render_report(
        R.ReportContent(summary=["a sentence"], scorecard=None)
    )


@pytest.mark.parametrize("bad", [None, pd.DataFrame()])
def test_partition_row_without_tables(bad):
    row = S.partition_row("m", "t", {}, {"run_variability": bad}, bad).iloc[0]
    cells = S.build(pd.DataFrame([row])).table.iloc[0]
    assert cells["GRS coverage"] == "no GRS stored" and cells["parse rate"] == "no answers"
