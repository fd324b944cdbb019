"""Model comparison (issue 22 item 1): synthetic models with a known difference on the study grid
(360 profiles x 10 runs), compared pair by pair on the same profiles and runs."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from fairness_assets.core.statistics import comparison as C
from fairness_assets.core.statistics.inference import InferenceParams
from resources.settings import design_values

N_BOOT, N_PERM = 300, 2000


def _grid(runs: int = 10) -> pd.DataFrame:
    p = design_values("study")
    g = pd.MultiIndex.from_product(
        [p["gender"], p["economic_class"], p["nationality"]], names=["gender", "economic_class", "nationality"]
    ).to_frame(index=False)
    g = g.loc[g.index.repeat(runs)].reset_index(drop=True)
    g["run"] = np.tile(np.arange(runs), len(g) // runs)
    g["profile_id"] = "full:" + g["gender"] + ":" + g["economic_class"] + ":" + g["nationality"].str.lower()
    return g


def model(name: str, seed: int, drs_shift: float = 0.0, class_gap: float = 0.0, template: str = "base") -> pd.DataFrame:
    """One model's responses: metrics drawn around fixed means; ``drs_shift`` moves every DRS and
    Acc, ``class_gap`` lowers the low-income students' DRS and Acc (a class gap of that size)."""
    rng = np.random.default_rng(seed)
    g = _grid()
    low = np.where(g["economic_class"] == "low", -class_gap, 0.0)
    for m, mu in (("drs", 0.5), ("acc", 0.4), ("rep", 0.6)):
        shift = drs_shift + low if m in ("drs", "acc") else 0.0
        g[m] = np.clip(mu + shift + rng.normal(0, 0.08, len(g)), 0, 1)
    g["acad"] = np.nan
    g["n_items"], g["n_matched"], g["parse_status"] = 3, 3, "ok"
    g["model"], g["template"] = name, template
    g["response_id"] = name + "|" + template + "|" + g["profile_id"] + "|" + g["run"].astype(str)
    return g


def _compare(*frames):
    return C.tables_for(pd.concat(frames, ignore_index=True), inference=InferenceParams(n_boot=N_BOOT, n_perm=N_PERM))


def row(diffs, metric, family="metrics", gap=""):
    r = diffs[(diffs["metric"] == metric) & (diffs["family"] == family) & (diffs["gap"] == gap)]
    assert len(r) == 1, r
    return r.iloc[0]


def test_a_better_model_is_found_better_and_ranked_first():
    out = _compare(model("model-a", 1), model("model-b", 2, drs_shift=0.03))
    d = out["differences"]
    drs = row(d, "drs")
    assert drs["significant"] and drs["ci_low"] > 0 and abs(drs["mean_diff"] - 0.03) < 0.01
    assert drs["component"] == "behaviour" and drs["n_units"] == 360  # profiles, each over its 10 runs
    assert not row(d, "rep")["significant"]  # Rep was not changed
    board = out["leaderboard"]
    ranks = board[board["metric"] == "drs"].set_index("model")["rank"].to_dict()
    assert ranks == {"model-b": "1", "model-a": "2"}
    assert board[board["metric"] == "rep"].set_index("model")["rank"].to_dict() == {"model-a": "1-2", "model-b": "1-2"}


def test_two_identical_models_differ_in_nothing_and_share_their_ranks():
    a = model("model-a", 1)
    b = a.assign(model="model-b", response_id=a["response_id"].str.replace("model-a", "model-b"))
    out = _compare(a, b)
    d = out["differences"]
    assert len(d) and not d["significant"].any()
    assert (d["mean_diff"].abs() < 1e-12).all()
    assert set(out["leaderboard"]["rank"]) == {"1-2"}


def test_profile_blind_models_of_the_same_distribution_are_not_found_different():
    out = _compare(model("model-a", 1), model("model-b", 2))
    assert not out["differences"]["significant"].any(), out["differences"][out["differences"]["significant"]]


def test_a_wider_class_gap_is_found_and_named_wider():
    out = _compare(model("model-a", 1, class_gap=0.0), model("model-b", 2, class_gap=0.05))
    gap = row(out["differences"], "drs", "gaps", "economic_class: low - high")
    assert gap["significant"] and gap["mean_diff"] < 0 and abs(gap["mean_diff"] + 0.05) < 0.015
    narrower = _compare(model("model-a", 1, class_gap=0.06), model("model-b", 2, class_gap=0.0))
    g2 = row(narrower["differences"], "drs", "gaps", "economic_class: low - high")
    assert g2["significant"] and g2["direction"] == "B's gap is narrower"
    assert row(out["differences"], "drs", "gaps", "economic_class: low - high")["direction"] == "B's gap is wider"


def test_three_models_are_ranked_with_ties_where_the_data_cannot_tell():
    out = _compare(model("model-a", 1), model("model-b", 2, drs_shift=0.001), model("model-c", 3, drs_shift=0.05))
    ranks = out["leaderboard"].query("metric == 'drs'").set_index("model")["rank"].to_dict()
    assert ranks["model-c"] == "1"
    assert ranks["model-a"] == ranks["model-b"] == "2-3"
    fam = out["differences"].groupby(["model_a", "model_b", "family"])["family_size"].first()
    assert (fam > 0).all()


def test_templates_are_compared_separately_and_bad_input_is_named():
    out = _compare(model("model-a", 1), model("model-b", 2), model("model-a", 4, template="regional"))
    assert set(out["differences"]["template"]) == {"base"}  # regional has one model: nothing to compare
    with pytest.raises(ValueError, match="profile_id"):
        C.compare_models(pd.DataFrame({"model": ["a"], "template": ["base"], "run": [0]}))


def _geo_items(model_name: str, shares: dict, seed: int, runs: int = 10) -> pd.DataFrame:
    """Items of one model: per run 60 recommendations drawn over the corpus universities with
    per-country ``shares`` (iso3 -> probability)."""
    rng = np.random.default_rng(seed)
    corpus = _corpus()
    rows = []
    for run in range(runs):
        for k in range(60):
            iso = rng.choice(list(shares), p=list(shares.values()))
            uid = int(rng.choice(corpus.loc[corpus["iso3"] == iso, "university_id"]))
            rows.append(
                {
                    "response_id": f"{model_name}|base|p{k}|{run}",
                    "model": model_name,
                    "template": "base",
                    "run": run,
                    "university_id": uid,
                    "iso3": iso,
                }
            )
    return pd.DataFrame(rows)


def _corpus() -> pd.DataFrame:
    iso = ["AAA"] * 10 + ["BBB"] * 10 + ["CCC"] * 5
    return pd.DataFrame(
        {"university_id": range(1, 26), "iso3": iso, "country": iso, "rank_raw": [str(r) for r in range(1, 26)]}
    )


def test_coverage_and_grs_per_country_are_compared_with_the_runs_as_units():
    from fairness_assets.core.scoring import metrics as mx

    params = mx.ScoringParams()
    ia = _geo_items("model-a", {"AAA": 0.5, "BBB": 0.5}, 1)
    ib = _geo_items("model-b", {"AAA": 0.4, "BBB": 0.3, "CCC": 0.3}, 2)
    items = pd.concat([ia, ib], ignore_index=True)
    resp = items.drop_duplicates("response_id").assign(
        profile_id=lambda d: d["response_id"].str.split("|").str[2],
        drs=0.5,
        acc=0.5,
        rep=0.5,
        acad=np.nan,
        n_items=1,
        n_matched=1,
    )
    d = C.compare_models(
        resp, items, inference=InferenceParams(n_boot=300, n_perm=2000), corpus=_corpus(), params=params
    )
    geo = d[d["family"] == "geography"].set_index(["metric", "country"])
    # the observed GRS of each model is metrics.grs_by_country's
    for name, it, col in (("model-a", ia, "mean_a"), ("model-b", ib, "mean_b")):
        ref = mx.grs_by_country(it, _corpus(), params).set_index("iso3")["grs"]
        for iso in ("AAA", "BBB", "CCC"):
            if ("grs", iso) in geo.index:
                assert abs(geo.loc[("grs", iso), col] - ref[iso]) < 1e-12, (name, iso)
    ccc = geo.loc[("grs", "CCC")]
    assert ccc["mean_a"] == 0 and ccc["mean_b"] > 0 and ccc["significant"] and ccc["n_units"] == 10
    cov = geo.loc[("country_coverage", "")]
    assert abs(cov["mean_diff"] - 1 / 3) < 1e-12 and cov["significant"]
    assert int(d.loc[d["family"] == "geography", "family_size"].iloc[0]) == len(geo)


def test_summary_sentences_read_back_from_storage_name_the_country_and_no_nan():
    """The report builds its sentences from the stored table, where empty text cells come back as
    NaN: a GRS sentence names its country, a metric sentence carries no "(nan)"."""
    rows = pd.DataFrame(
        [
            {
                "template": "base",
                "model_a": "a",
                "model_b": "b",
                "family": "geography",
                "metric": "grs",
                "gap": np.nan,
                "country": "NGA",
                "mean_diff": 0.2,
                "ci_low": 0.1,
                "ci_high": 0.3,
                "p_adjusted": 0.001,
                "family_size": 4,
                "significant": True,
                "direction": np.nan,
            },
            {
                "template": "base",
                "model_a": "a",
                "model_b": "b",
                "family": "metrics",
                "metric": "drs",
                "gap": np.nan,
                "country": np.nan,
                "mean_diff": -0.05,
                "ci_low": -0.07,
                "ci_high": -0.03,
                "p_adjusted": 0.002,
                "family_size": 4,
                "significant": True,
                "direction": np.nan,
            },
        ]
    )
    lines = C.comparison_summary(rows)
    assert lines[0].startswith("base: b - a, grs of NGA: +0.200") and "nan" not in " ".join(lines)
    assert lines[1].startswith("base: b - a, drs: -0.050")
