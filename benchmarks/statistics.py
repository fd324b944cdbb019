"""Benchmark: the statistics of docs/statistics.md on the study grid, and the vectorised
bootstrap against a plain one-resample-at-a-time loop, measured in the same run.

Synthetic per-response scores for the study's full grid (360 profiles x 10 runs) under three
models x three templates (base, regional, academic): 32,400 responses. Times
``core.reporting.audit_report.partition_statistics`` (run variability + counterfactual disparity with
2,000 bootstrap resamples and 10,000 permutations) over every partition, and compares the
vectorised percentile bootstrap of one headline mean (resampling the 360 profiles) with a Python
loop that draws and averages one resample at a time (same seed scheme, same quantiles: the
intervals agree).

    .venv/bin/python benchmarks/statistics.py [--runs 10] [--repeats 5] [--no-write]
"""

from __future__ import annotations

import argparse
import os
import platform
import sys
import time
from datetime import date
from pathlib import Path

import numpy as np
import pandas as pd

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))

from _doc import write_section  # noqa: E402

from fairness_assets.core.reporting import audit_report  # noqa: E402
from fairness_assets.core.statistics import stats  # noqa: E402
from fairness_assets.core.statistics.inference import InferenceParams  # noqa: E402
from resources.settings import design_values  # noqa: E402


def synthetic_responses(runs: int, seed: int = 5) -> pd.DataFrame:
    preset = design_values("study")
    rng = np.random.default_rng(seed)
    grid = pd.MultiIndex.from_product(
        [preset["gender"], preset["economic_class"], preset["nationality"]],
        names=["gender", "economic_class", "nationality"],
    ).to_frame(index=False)
    frames = []
    for model in ("model-a", "model-b", "model-c"):
        for template in ("base", "regional", "academic"):
            g = grid.loc[grid.index.repeat(runs)].reset_index(drop=True)
            g["run"] = np.tile(np.arange(runs), len(grid))
            g["profile_id"] = "full:" + g["gender"] + ":" + g["economic_class"] + ":" + g["nationality"].str.lower()
            effect = np.where(g["economic_class"] == "low", -0.03, 0.0)  # a planted class gap
            for m in ("drs", "acc", "rep"):
                g[m] = np.clip(0.6 + effect + rng.normal(0, 0.08, len(g)), 0, 1)
            g["acad"] = np.clip(0.4 + rng.normal(0, 0.1, len(g)), 0, 1) if template == "academic" else np.nan
            g["n_items"] = 3
            g["n_matched"] = 3
            g["parse_status"] = "ok"
            g["model"], g["template"] = model, template
            g["response_id"] = model + "|" + template + "|" + g["profile_id"] + "|" + g["run"].astype(str)
            frames.append(g)
    return pd.concat(frames, ignore_index=True)


HUBS = ("USA", "GBR", "CAN", "AUS", "DEU")


def synthetic_study_items(
    runs: int = 10,
    models=("model-a",),
    templates=("base", "regional"),
    seed: int = 7,
    planted_region: str | None = None,
    planted: float = 0.0,
    class_blind: bool = True,
    unis_per_country: int = 20,
    profile_blind: bool = False,
    steer_nationality: str | None = None,
    steer: float = 0.0,
):
    """A synthetic study-sized audit scored by the real code (core.scoring.metrics.drs_items): 360
    profiles x ``runs`` x 3 items per model x template. Each item is a university in the
    student's own country, in another country of the student's region, or in a hub (US, UK,
    Canada, Australia, Germany); the regional template makes own-country/region likelier.
    ``class_blind``: the choice never depends on the class (otherwise low-income students get
    more home universities). ``planted``: for students of ``planted_region``, this share of
    items is drawn from the worse-ranked half of the country's universities (a lower Rep).
    ``profile_blind``: the own-country / own-region picks are those of a nationality drawn at
    random for each item, not the student's: what a student gets depends on nothing in the
    profile (a model blind to the profile). ``steer_nationality`` / ``steer``: for students of
    that nationality, this share of the items is replaced by a university in another country of
    the student's own region (a model steering them toward their own region). The extra random
    draws of these options come after the others: without them the data are unchanged.
    Returns (items, responses, params)."""
    from fairness_assets.core.reference import geo, regions
    from fairness_assets.core.scoring import metrics

    preset = design_values("study")
    rng = np.random.default_rng(seed)
    table = regions.load_regions()
    nat_iso = regions.home_iso3(preset["nationality"])
    countries = sorted(set(nat_iso.values()) | set(HUBS))
    reg_of = table.set_index("iso3")["region"]
    corpus = pd.DataFrame(
        {"university_id": np.arange(len(countries) * unis_per_country), "iso3": np.repeat(countries, unis_per_country)}
    )
    corpus["rank"] = rng.integers(1, 1400, len(corpus))
    corpus = corpus.sort_values(["iso3", "rank"]).reset_index(drop=True)
    corpus["university_id"] = np.arange(len(corpus))
    corpus["rank_raw"] = corpus["rank"].astype(str)
    corpus["name"] = "U" + corpus["university_id"].astype(str)
    corpus["country"] = corpus["iso3"]
    dist = geo.distance_lookup(geo.capital_distance_matrix(geo.capitals_table(countries)))
    cidx = {c: i for i, c in enumerate(countries)}
    same_region = {c: [o for o in countries if o != c and reg_of[o] == reg_of[c]] or [c] for c in countries}
    grid = pd.MultiIndex.from_product(
        [preset["gender"], preset["economic_class"], preset["nationality"]],
        names=["gender", "economic_class", "nationality"],
    ).to_frame(index=False)
    frames = []
    for model in models:
        for template in templates:
            g = grid.loc[grid.index.repeat(runs * 3)].reset_index(drop=True)
            g["run"] = np.tile(np.repeat(np.arange(runs), 3), len(grid))
            g["item_index"] = np.tile(np.arange(3), len(grid) * runs)
            g["profile_id"] = "full:" + g["gender"] + ":" + g["economic_class"] + ":" + g["nationality"].str.lower()
            g["model"], g["template"] = model, template
            g["response_id"] = model + "|" + template + "|" + g["profile_id"] + "|" + g["run"].astype(str)
            s_iso = g["nationality"].map(nat_iso).to_numpy()
            own_iso = s_iso
            if profile_blind:  # the "home" of a nationality drawn at random, whoever the student is
                nat_list = np.array(sorted(nat_iso.values()), dtype=object)
                s_iso = nat_list[np.random.default_rng([seed, len(frames), 1]).integers(0, len(nat_list), len(g))]
            p_home, p_reg = (0.35, 0.35) if template == "regional" else (0.15, 0.15)
            home_boost = 0.0 if class_blind else np.where(g["economic_class"] == "low", 0.25, 0.0)
            u = rng.random(len(g))
            where = np.where(u < p_home + home_boost, 0, np.where(u < p_home + p_reg + home_boost, 1, 2))
            hub = np.array(HUBS, dtype=object)[rng.integers(0, len(HUBS), len(g))]
            reg_pick = np.array(
                [
                    same_region[c][k % len(same_region[c])]
                    for c, k in zip(s_iso, rng.integers(0, 1000, len(g)), strict=False)
                ],
                dtype=object,
            )
            iso = np.where(where == 0, s_iso, np.where(where == 1, reg_pick, hub))
            k = rng.integers(0, unis_per_country, len(g))
            if planted_region and planted:
                hit = (g["nationality"].map(lambda n: reg_of[nat_iso[n]]) == planted_region).to_numpy() & (
                    rng.random(len(g)) < planted
                )
                k = np.where(hit, unis_per_country // 2 + k % (unis_per_country // 2), k)
            if steer_nationality and steer:
                srng = np.random.default_rng([seed, len(frames), 2])
                hit = (g["nationality"] == steer_nationality).to_numpy() & (srng.random(len(g)) < steer)
                picks = np.array(
                    [
                        same_region[c][j % len(same_region[c])]
                        for c, j in zip(own_iso, srng.integers(0, 1000, len(g)), strict=False)
                    ],
                    dtype=object,
                )
                iso = np.where(hit, picks, iso)
            g["university_id"] = np.array([cidx[c] for c in iso]) * unis_per_country + k
            g["iso3"] = iso
            g["university_text"] = "U" + g["university_id"].astype(str)
            g["tags"] = None
            g["parse_status"] = "ok"
            frames.append(g)
    recs = pd.concat(frames, ignore_index=True)
    params = metrics.ScoringParams()
    items = metrics.drs_items(recs, corpus, dist, nat_iso, params)
    responses = metrics.drs_responses(items, recs)
    return items, responses, params


def loop_bootstrap(values_by_unit: list[np.ndarray], n_boot: int, level: float, rng: np.random.Generator):
    """The percentile cluster bootstrap of a mean, one resample at a time."""
    n = len(values_by_unit)
    means = np.empty(n_boot)
    for b in range(n_boot):
        pick = rng.integers(0, n, n)
        drawn = np.concatenate([values_by_unit[i] for i in pick])
        means[b] = drawn.mean()
    return np.quantile(means, [(1 - level) / 2, 1 - (1 - level) / 2])


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--runs", type=int, default=10)
    ap.add_argument("--n-boot", type=int, default=2000)
    ap.add_argument("--n-perm", type=int, default=10_000)
    ap.add_argument(
        "--repeats",
        type=int,
        default=1,
        help="time the two statistics this many times each and report the median (a shared machine)",
    )
    ap.add_argument("--no-write", action="store_true")
    args = ap.parse_args()
    load = os.getloadavg()

    responses = synthetic_responses(args.runs)
    inference = InferenceParams(n_boot=args.n_boot, n_perm=args.n_perm)
    times_all, cpu_all = [], []
    for _ in range(args.repeats):
        t0, c0 = time.perf_counter(), time.process_time()
        results = {
            key: audit_report.partition_statistics(part, inference=inference)
            for key, part in responses.groupby(["model", "template"], sort=True)
        }
        times_all.append(time.perf_counter() - t0)
        cpu_all.append(time.process_time() - c0)
    t_all = float(np.median(times_all))
    n_tests = sum(len(r["counterfactual_disparity"]) for r in results.values())
    n_var = sum(len(r["run_variability"]) for r in results.values())
    low_high = pd.concat([r["counterfactual_disparity"] for r in results.values()])
    low_high = low_high[
        (low_high["attribute"] == "economic_class")
        & (low_high["value_a"] == "high")
        & (low_high["value_b"] == "low")
        & (low_high["metric"] == "drs")
    ]
    detected = int(low_high["significant"].sum())

    # one headline mean (overall DRS of one partition, resampling its 360 profiles): vectorised vs loop
    part = responses[(responses["model"] == "model-a") & (responses["template"] == "base")]
    by_profile = [g["drs"].to_numpy() for _, g in part.groupby("profile_id", sort=True)]
    reps = 5
    t0 = time.perf_counter()
    for _ in range(reps):
        vec = stats.run_variability(part, metrics=("drs",), by=(None,), inference=InferenceParams(n_boot=args.n_boot))
    t_vec = (time.perf_counter() - t0) / reps
    t0 = time.perf_counter()
    loop_ci = loop_bootstrap(by_profile, args.n_boot, 0.95, np.random.default_rng(0))
    t_loop = time.perf_counter() - t0
    row = vec[(vec["unit"] == "profile")].iloc[0]
    # the two use different random draws: the intervals agree to Monte Carlo error
    agree = abs(row["ci_low"] - loop_ci[0]) < 0.01 and abs(row["ci_high"] - loop_ci[1]) < 0.01

    lines = [
        "",  # the header, written once every figure is measured (below)
        "",
        "| what | figure |",
        "| --- | --- |",
        f"| responses (study grid: 360 profiles x {args.runs} runs x 3 models x 3 templates) | {len(responses):,} |",
        f"| run variability rows + counterfactual tests computed | {n_var:,} + {n_tests:,} |",
        f"| all statistics of all 9 partitions ({args.n_boot:,} bootstrap resamples, {args.n_perm:,} permutations) | "
        f"{t_all:.2f} s |",
        "| planted low-vs-high class gap (-0.03 DRS) found significant (Holm) | "
        f"{detected} of {len(low_high)} partitions |",
        f"| vectorised `run_variability` of overall DRS, one partition (intervals over runs and over profiles) | "
        f"{t_vec * 1000:.1f} ms |",
        "| the profile interval alone, one resample at a time (2,000 draws of 360 profiles) | "
        f"{t_loop * 1000:.1f} ms |",
        f"| ratio, loop / vectorised (same run) | {t_loop / t_vec:.1f}x |",
        f"| the two intervals agree (to 0.01) | {'yes' if agree else 'NO'} |",
    ]
    # the geographic statistics of issue 15 (core/statistics/geostats/) on the same grid, scored items
    from fairness_assets.core.statistics import geostats

    items, gresp, params = synthetic_study_items(
        args.runs,
        models=("model-a", "model-b", "model-c"),
        templates=("base", "regional", "academic"),
        planted_region="Africa",
        planted=0.3,
    )
    times_geo, cpu_geo = [], []
    for _ in range(args.repeats):
        t0, c0 = time.perf_counter(), time.process_time()
        geo = geostats.geo_statistics(geostats.Positions(items, params), gresp, inference=inference)
        times_geo.append(time.perf_counter() - t0)
        cpu_geo.append(time.process_time() - c0)
    t_geo = float(np.median(times_geo))
    totals = [a + b for a, b in zip(times_all, times_geo, strict=False)]
    cpu_totals = [a + b for a, b in zip(cpu_all, cpu_geo, strict=False)]
    fam = geo["families"]
    fam_text = fam[(fam["model"] == "model-a") & (fam["template"] == "base")]
    c = geo["geo_contrasts"]
    afr = c[
        (c["analysis"] == "region_vs_rest")
        & (c["value"] == "Africa")
        & (c["metric"] == "rep")
        & (c["component"] == "total")
    ]
    afr_b = c[
        (c["analysis"] == "region_vs_rest")
        & (c["value"] == "Africa")
        & (c["metric"] == "rep")
        & (c["component"] == "behaviour")
    ]
    n_rows = c["component"].value_counts()
    dec = geo["class_gap_decomposition"]
    beh = dec[(dec["component"] == "behaviour") & (dec["value_a"] == "high") & (dec["value_b"] == "low")]
    lines += [
        f"| geographic statistics (`geostats.geo_statistics`: regions, one-vs-rest, interactions, home bias, "
        f"behaviour vs needs) for {len(gresp):,} responses / {len(items):,} items | {t_geo:.2f} s |",
        f"| statistics + geographic statistics, total (target < 10 s on 2 cores; median of the repeats' sums) | "
        f"{float(np.median(totals)):.2f} s |",
        f"| the same, CPU time of the process (one BLAS thread: the wall time of an otherwise idle machine; "
        f"statistics / geographic) | {float(np.median(cpu_totals)):.2f} s ({float(np.median(cpu_all)):.2f} / "
        f"{float(np.median(cpu_geo)):.2f}) |",
        f"| planted Africa Rep effect (30% of items from the worse half) found significant (Holm) | "
        f"{int(afr['significant'].sum())} of {len(afr)} partitions |",
        f"| geographic contrasts: rows total / behaviour / needs (behaviour: the group's lists minus the rest's, "
        f"scored for the group's students) | {n_rows.get('total', 0):,} / {n_rows.get('behaviour', 0):,} / "
        f"{n_rows.get('needs', 0):,} |",
        f"| the planted Africa Rep effect as behaviour (Rep does not depend on the student: all of it) | "
        f"{int(afr_b['significant'].sum())} of {len(afr_b)} partitions |",
        f"| class-blind synthetic model: behaviour part of the low - high gap significant | "
        f"{int(beh['significant'].sum())} of {len(beh)} (partition x metric) |",
        "",
        "Families of the geographic tests (one model x template; Monte Carlo sign-flip, smallest p = 1/(n_perm+1)):",
        "",
        fam_text[
            ["analysis", "family_size", "unit", "n_units", "p_min_attainable", "holm_threshold", "attainable"]
        ].to_markdown(index=False, floatfmt=".2g"),
    ]
    lines[0] = (
        f"Measured {date.today().isoformat()} on {platform.machine()} ({os.cpu_count()} cores), "
        f"Python {platform.python_version()}, numpy {np.__version__}, pandas {pd.__version__}; "
        f"`.venv/bin/python benchmarks/statistics.py --repeats {args.repeats}`. Load average {load[0]:.2f} "
        f"{load[1]:.2f} {load[2]:.2f} at the start (a shared machine: other jobs ran beside it, so the times are "
        f"noisy); times are the median of {args.repeats} repeat(s)"
        + (
            f" (statistics + geographic statistics, each repeat: {', '.join(f'{t:.2f}' for t in totals)} s)"
            if args.repeats > 1
            else ""
        )
        + "."
    )
    text = "\n".join(lines)
    print(text)
    if not args.no_write:
        write_section("Statistics", text)


if __name__ == "__main__":
    main()
