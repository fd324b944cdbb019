"""core/statistics/geostats/: behaviour / needs of the geographic contrasts (issue 20): the one-vs-rest
contrasts and the class-gap interactions split into what the model recommended (behaviour: the
group's lists minus the rest's lists, both scored for the group's students) and the students'
position (needs = total - behaviour), on the synthetic study grid of benchmarks/statistics.py."""

import re

import numpy as np
import pytest

from fairness_assets.core.reporting.sentences import geography as geography_sentences
from fairness_assets.core.statistics import geostats as gs
from fairness_assets.core.statistics.inference import InferenceParams


def _contrasts(bench, **kw):
    items, resp, params = bench.synthetic_study_items(5, templates=("base",), **kw)
    geo = gs.response_geography(items, resp)
    return (
        gs.geo_contrasts(geo, positions=gs.Positions(items, params), inference=InferenceParams(n_boot=500)),
        items,
        resp,
        params,
    )


@pytest.fixture(scope="module")
def steered(bench):
    """A profile-blind model except that it steers students from Kenya toward universities in
    their own region (20% of their items)."""
    return _contrasts(bench, profile_blind=True, steer_nationality="Kenya", steer=0.2, seed=7)[0]


def _row(c, value, metric, component, analysis="nationality_vs_rest"):
    sel = c[
        (c["analysis"] == analysis) & (c["value"] == value) & (c["metric"] == metric) & (c["component"] == component)
    ]
    assert len(sel) == 1
    return sel.iloc[0]


@pytest.mark.slow
def test_own_region_steering_is_a_positive_significant_behaviour_part(steered):
    c = steered
    total, beh, needs = (_row(c, "Kenya", "own_region", k) for k in gs.COMPONENTS)
    # what the model did: Kenya's students got more of their own region than the others' lists give them
    assert beh["mean_diff"] > 0.1 and beh["ci_low"] > 0 and beh["significant"]
    assert beh["mean_value"] > beh["mean_reference"]
    # the outcome alone does not show it: not significant (or even negative), Kenya's position pulls it down
    assert not total["significant"] or total["mean_diff"] < 0
    assert needs["mean_diff"] < 0
    assert total["mean_diff"] == pytest.approx(beh["mean_diff"] + needs["mean_diff"], abs=1e-12)
    # the steering is the only behaviour finding of the nationality family
    sig = c[(c["component"] == "behaviour") & c["significant"] & (c["analysis"] == "nationality_vs_rest")]
    assert set(sig["value"]) == {"Kenya"}
    # and it leads the summary, as behaviour, with its interval, adjusted p and integer family size
    first = geography_sentences.summary_sentences({"geo_contrasts": c})[0]
    assert first.startswith("model-a / base: behaviour:") and "students from Kenya" in first
    assert "own-region share" in first and "higher" in first
    assert re.search(r"\[[+-]\d\.\d{3}, [+-]\d\.\d{3}\]", first) and "adjusted p" in first
    assert re.search(r", \d+ tests in the family", first)


@pytest.mark.slow
@pytest.mark.parametrize("seed", [7, 11])
def test_profile_blind_model_has_no_behaviour_contrast_beyond_chance(bench, seed):
    items, resp, params = bench.synthetic_study_items(5, templates=("base",), profile_blind=True, seed=seed)
    out = gs.geo_statistics(gs.Positions(items, params), resp, inference=InferenceParams(n_boot=500))
    c, i = out["geo_contrasts"], out["class_gap_interactions"]
    beh = c[c["component"] == "behaviour"]
    ibeh = i[(i["component"] == "behaviour") & (i["kind"] == "interaction")]
    assert len(beh) and len(ibeh)
    assert not beh["significant"].any() and not ibeh["significant"].any()
    # the unadjusted tests keep their level (also the own-country share, a rare event per list)
    assert (beh["p_value"] < 0.05).mean() <= 0.1
    assert (beh[beh["metric"] == "own_country"]["p_value"] < 0.05).mean() <= 0.1
    # while the outcomes still differ by where the students are (needs), e.g. the own-region share by region
    rn = c[(c["analysis"] == "region_vs_rest") & (c["component"] == "needs") & (c["metric"] == "own_region")]
    assert rn["significant"].any()
    text = geography_sentences.summary_sentences(out)
    assert not any(": behaviour:" in t for t in text)
    assert any(": outcome:" in t and "the students' position (needs)" in t for t in text)


@pytest.mark.slow
def test_components_add_up_and_student_independent_needs_are_zero(steered):
    c = steered
    assert set(c["component"]) == set(gs.COMPONENTS)
    keys = ["analysis", "value", "metric"]
    wide = c.pivot_table(index=keys, columns="component", values="mean_diff", aggfunc="first")
    assert np.allclose(wide["total"], wide["behaviour"] + wide["needs"], atol=1e-9, equal_nan=True)
    rep = c[c["metric"] == "rep"]
    needs = rep[rep["component"] == "needs"]
    assert (needs["mean_diff"] == 0).all() and needs["by_construction"].all() and needs["p_value"].isna().all()
    assert (needs["marking"] == gs.BY_CONSTRUCTION_NOTE).all()
    # Rep's behaviour part is its total, the same test
    wide_p = rep.pivot_table(index=keys, columns="component", values="p_value", aggfunc="first")
    assert np.allclose(wide_p["total"], wide_p["behaviour"])
    # Holm within each analysis x component: the family sizes are those of the tested rows
    for (a, comp), g in c.groupby(["analysis", "component"]):
        assert (g["family_size"] == g["p_value"].notna().sum()).all(), (a, comp)


@pytest.mark.slow
def test_totals_do_not_depend_on_the_split(bench):
    items, resp, params = bench.synthetic_study_items(2, templates=("base",), seed=3)
    geo = gs.response_geography(items, resp)
    plain = gs.geo_contrasts(geo, inference=InferenceParams(n_boot=300, n_perm=2000))
    split = gs.geo_contrasts(
        geo, positions=gs.Positions(items, params), inference=InferenceParams(n_boot=300, n_perm=2000)
    )
    tot = split[split["component"] == "total"].reset_index(drop=True)
    cols = ["analysis", "value", "metric", "mean_diff", "ci_low", "ci_high", "p_value", "p_adjusted", "family_size"]
    assert tot[cols].equals(plain[cols].reset_index(drop=True))


@pytest.mark.slow
def test_class_gap_interactions_get_components(bench):
    items, resp, params = bench.synthetic_study_items(3, templates=("base",), class_blind=False)
    geo = gs.response_geography(items, resp)
    i = gs.class_gap_interactions(
        geo, "gender", positions=gs.Positions(items, params), inference=InferenceParams(n_boot=300, n_perm=2000)
    )
    assert set(i["component"]) == set(gs.COMPONENTS)
    gaps = i[(i["kind"] == "gap") & (i["metric"] == "acc")].pivot_table(
        index="value_a", columns="component", values="mean_diff", aggfunc="first"
    )
    # a class-aware model (more home universities for low income): a positive behaviour part of the Acc gap
    assert (gaps["behaviour"] > 0.05).all()
    assert np.allclose(gaps["total"], gaps["behaviour"] + gaps["needs"], atol=1e-9)
    rep_needs = i[(i["metric"] == "rep") & (i["component"] == "needs")]
    assert (rep_needs["mean_diff"] == 0).all() and rep_needs["by_construction"].all()
    fam = i[(i["kind"] == "interaction")].groupby("component")["family_size"].max()
    assert fam["total"] == fam["behaviour"] == 3 * 3 and fam["needs"] == 3 * 2  # pairs x metrics (no Acad in base)


def _dec_row(metric, component, mean, lo, hi, p, sig):
    return {
        "model": "m",
        "template": "base",
        "metric": metric,
        "value_a": "high",
        "value_b": "low",
        "component": component,
        "mean_diff": mean,
        "ci_low": lo,
        "ci_high": hi,
        "p_adjusted": p,
        "significant": sig,
    }


def test_summary_wording_is_metric_specific():
    """'did not adapt' only when no metric's behaviour part differs; otherwise the metric is named."""
    import pandas as pd

    rows = []
    for m, beh_sig in (("acc", False), ("drs", True)):
        rows += [
            _dec_row(m, "total", -0.2, -0.25, -0.15, 0.001, True),
            _dec_row(
                m,
                "behaviour",
                -0.05 if beh_sig else -0.01,
                -0.08 if beh_sig else -0.03,
                -0.02 if beh_sig else 0.01,
                0.001 if beh_sig else 0.6,
                beh_sig,
            ),
            _dec_row(m, "needs", -0.15, -0.18, -0.12, 0.001, True),
        ]
    text = geography_sentences.summary_sentences({"class_gap_decomposition": pd.DataFrame(rows)})
    assert len(text) == 2 and not any("did not adapt" in t for t in text)
    acc = next(t for t in text if "Acc gap" in t)
    assert "the Acc of the recommendations did not differ by income" in acc and "DRS does differ" in acc
    drs = next(t for t in text if "DRS gap" in t)
    assert "recommended different universities by income" in drs
    # and when no metric differs, the model did not adapt
    for r in rows:
        if r["component"] == "behaviour":
            r.update(mean_diff=-0.01, ci_low=-0.03, ci_high=0.01, p_adjusted=0.6, significant=False)
    text = geography_sentences.summary_sentences({"class_gap_decomposition": pd.DataFrame(rows)})
    assert all("did not adapt its recommendations to the student's income" in t for t in text)


def test_summary_without_findings_gives_integer_family_sizes():
    import pandas as pd

    c = pd.DataFrame(
        {
            "model": "m",
            "template": "base",
            "analysis": ["south_vs_north"] * 3 + ["region_vs_rest"] * 3,
            "value": "x",
            "metric": "drs",
            "component": ["total", "behaviour", "needs"] * 2,
            "mean_diff": 0.01,
            "significant": False,
            "family_size": [5.0, 5.0, 4.0, 30.0, 30.0, 24.0],
        }
    )
    text = geography_sentences.summary_sentences({"geo_contrasts": c})
    assert text == [
        "No geographic contrast, behaviour or outcome, is significant after correction (region_vs_rest "
        "(behaviour): 30 tests, region_vs_rest: 30 tests, south_vs_north (behaviour): 5 tests, "
        "south_vs_north: 5 tests)."
    ]


def test_a_country_without_a_known_capital_keeps_the_items_distances(bench, monkeypatch):
    """The distances of the split are those the items were scored with; a country whose capital
    is unknown does not fail the geography (its other pairs are missing)."""
    from fairness_assets.core.reference import geo

    items, resp, params = bench.synthetic_study_items(1, templates=("base",), seed=5)
    real = geo.capital_of

    def no_kenya(iso3, *a, **k):
        if iso3 == "KEN":
            raise geo.CountryResolutionError("no capital known for Kenya (KEN)")
        return real(iso3, *a, **k)

    gs.cross._capital_distances.cache_clear()
    monkeypatch.setattr(geo, "capital_of", no_kenya)
    try:
        iso = gs.response_geography(items, resp).groupby("nationality")["student_iso3"].first().to_dict()
        d = gs.cross._distances_for(items, iso)
        kenya = items[items["nationality"] == "Kenya"].dropna(subset=["iso3", "distance_km"])
        assert len(kenya)
        for r in kenya.head(20).itertuples(index=False):
            assert d.loc["KEN", r.iso3] == pytest.approx(r.distance_km)
        geo_r = gs.response_geography(items, resp)
        c = gs.geo_contrasts(
            geo_r, positions=gs.Positions(items, params), inference=InferenceParams(n_boot=100, n_perm=200)
        )
        k = c[(c["value"] == "Kenya") & (c["metric"] == "acc") & (c["component"] == "behaviour")]
        assert len(k) == 1 and np.isfinite(k["mean_diff"].iloc[0])
    finally:
        gs.cross._capital_distances.cache_clear()
