"""Benchmark: 100,000 recommendations scored through every metric table (parsing excluded).

Synthetic recommendations with a realistic distribution over the QS 2024 corpus (universities
skewed toward the top, 90% matched, the rest unmatched with a stated country), the full
profile grid of the study (360 profiles), three models x three templates. Target (issue):
under 10 s on the 2-core machine. Also checks the vectorised DRS against a plain per-row
implementation of the formulas on a sample, and reports the speed ratio measured in the same run.

    .venv/bin/python benchmarks/scoring.py [--items 100000] [--corpus QS.csv]
"""

from __future__ import annotations

import argparse
import json
import math
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

from fairness_assets.core.reference import corpus, geo, profiles  # noqa: E402
from fairness_assets.core.scoring import metrics  # noqa: E402
from resources.settings import ALIASES_FILE, CAPITALS_FILE, shipped_design  # noqa: E402

DEFAULT_CORPUS = ROOT.parent / "shared" / "data" / "qs_world_university_rankings_2024.csv"
AREAS = [
    "Engineering & Technology",
    "Life Sciences & Medicine",
    "Natural Sciences",
    "Social Sciences & Management",
    "Arts & Humanities",
]


def synth(n_items: int, unis: pd.DataFrame, seed: int = 11) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    study = shipped_design("study")
    grid = profiles.full_set(study)
    models, templates = ["llama", "gemma", "mistral"], ["base", "regional", "academic"]
    n_resp = -(-n_items // 3)
    prof = grid.iloc[rng.integers(0, len(grid), n_resp)].reset_index(drop=True)
    model = rng.choice(models, n_resp)
    template = rng.choice(templates, n_resp)
    p = 1.0 / np.sqrt(unis["rank"].to_numpy(dtype=float))
    p /= p.sum()
    pick = rng.choice(len(unis), size=n_resp * 3, p=p)
    matched = rng.random(n_resp * 3) < 0.9
    rows = np.repeat(np.arange(n_resp), 3)
    tags = rng.choice([json.dumps([a]) for a in AREAS] + ["[]", json.dumps(AREAS[:2])], n_resp * 3)
    df = pd.DataFrame(
        {
            "response_id": [f"r{i}" for i in rows],
            "item_index": np.tile([0, 1, 2], n_resp),
            "model": model[rows],
            "template": template[rows],
            "profile_id": prof["profile_id"].to_numpy()[rows],
            "gender": prof["gender"].to_numpy()[rows],
            "economic_class": prof["economic_class"].to_numpy()[rows],
            "nationality": prof["nationality"].to_numpy()[rows],
            "run": rng.integers(0, 10, n_resp * 3),
            "university_text": "x",
            "university_id": np.where(matched, unis["university_id"].to_numpy()[pick], np.nan),
            "iso3": unis["iso3"].to_numpy()[pick],
            "country": unis["country"].to_numpy()[pick],
            "matched_name": np.where(matched, unis["name"].to_numpy()[pick], None),
            "program_norm": rng.choice(
                ["computer science", "public health", "mba", "economics", "physics"], n_resp * 3
            ),
            "tags": tags,
            "parse_status": "ok",
        }
    )
    df["university_id"] = df["university_id"].astype("Int64")
    df["partition_key"] = df["model"] + "|" + df["template"]
    return df.iloc[:n_items]


def naive_drs(recs, unis, dist, students, params) -> list[float]:
    """Plain per-row formulas of METHOD.md §5, written independently of core.scoring.metrics."""
    rank = dict(zip(unis["university_id"], unis["rank"], strict=False))
    out = []
    for r in recs.itertuples(index=False):
        rep = 0.0
        if pd.notna(r.university_id) and rank[int(r.university_id)] <= params.r_max:
            rep = (params.r_max - rank[int(r.university_id)]) / (params.r_max - params.r_min)
        acc = math.exp(-params.lambdas[r.economic_class] * dist.at[students[r.nationality], r.iso3])
        interest = params.student_interest.get(r.template)
        tags = set(json.loads(r.tags))
        if interest and tags:
            acad = len(set(interest) & tags) / len(set(interest) | tags)
            out.append(params.w_acc * acc + params.w_rep * rep + params.w_acad * acad)
        else:
            out.append((params.w_acc * acc + params.w_rep * rep) / (params.w_acc + params.w_rep))
    return out


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--items", type=int, default=100_000)
    ap.add_argument("--corpus", default=str(DEFAULT_CORPUS))
    ap.add_argument("--no-write", action="store_true")
    args = ap.parse_args()
    resolver = geo.CountryResolver(geo.load_aliases(ALIASES_FILE))
    unis, _, _ = corpus.load_corpus(args.corpus, resolver.resolve)
    recs = synth(args.items, unis)
    students = {n: resolver.iso3(n) for n in recs["nationality"].unique()}
    overrides = geo.load_capital_overrides(CAPITALS_FILE)
    dist = geo.distance_lookup(
        geo.capital_distance_matrix(geo.capitals_table(set(unis["iso3"]) | set(students.values()), overrides))
    )
    params = metrics.ScoringParams(student_interest={"academic": ("Engineering & Technology",)})

    t0 = time.perf_counter()
    per = {
        key: metrics.score_partition(part, unis, dist, students, params)
        for key, part in recs.groupby("partition_key", sort=True)
    }
    for model in ("llama", "gemma", "mistral"):
        b, r = per[f"{model}|base"], per[f"{model}|regional"]
        metrics.base_vs_regional(b["drs_summary"], r["drs_summary"], b["grs_by_country"], r["grs_by_country"])
    t1 = time.perf_counter()

    sample = recs.sample(min(20_000, len(recs)), random_state=1)
    t2 = time.perf_counter()
    vec = metrics.drs_items(sample, unis, dist, students, params)["drs"].to_numpy()
    t3 = time.perf_counter()
    ref = np.asarray(naive_drs(sample, unis, dist, students, params))
    t4 = time.perf_counter()
    max_err = float(np.nanmax(np.abs(vec - ref)))
    assert max_err < 1e-12, f"vectorised DRS differs from the per-row formulas by {max_err}"
    result = {
        "items": len(recs),
        "partitions": len(per),
        "all_tables_s": t1 - t0,
        "sample": len(sample),
        "vectorised_s": t3 - t2,
        "per_row_s": t4 - t3,
        "max_abs_diff": max_err,
    }
    print(json.dumps(result, indent=2))
    if not args.no_write:
        write_doc(result)


def write_doc(r: dict) -> None:
    write_section(
        "Scoring",
        (
            f"`benchmarks/scoring.py`, {date.today().isoformat()}, {platform.machine()}, {os.cpu_count()} cores, "
            f"Python {platform.python_version()}.\n\n"
            f"{r['items']:,} synthetic recommendations (QS 2024 corpus, skewed to the top, 90% matched; the study's "
            f"360 profiles; {r['partitions']} model x template partitions) scored through every table: DRS per item "
            "and per response, GRS per country, DRS/Acc/Rep/Acad by gender and class, academic alignment, volume and "
            "diversity, reduced-context top-k, US+UK share and coverage, base vs regional per model.\n\n"
            "| figure | value |\n| --- | --- |\n"
            f"| all metric tables | **{r['all_tables_s']:.2f} s** (target < 10 s) |\n"
            f"| DRS of {r['sample']:,} items, vectorised | {r['vectorised_s']:.3f} s |\n"
            f"| the same with plain per-row formulas | {r['per_row_s']:.3f} s |\n"
            f"| ratio, same run | **{r['per_row_s'] / r['vectorised_s']:.0f}x** |\n"
            f"| largest difference between the two | {r['max_abs_diff']:.1e} |\n"
        ),
    )


if __name__ == "__main__":
    main()
