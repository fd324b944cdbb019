"""Benchmark: false-positive rate of the behaviour parts (core.decompose) under the null.

A profile-blind synthetic model (every answer drawn from one distribution, whoever asks) on the
study grid (3 genders x 3 classes x 40 nationalities x 10 runs x 3 items, academic template,
planar synthetic geography), ``--seeds`` seeds. Per seed and per (attribute, component) family
(Holm at 5% within it), does any behaviour row come out significant? The family-wise rate should
be at most 5%. Also: the share of single behaviour tests with raw p <= 0.05 (calibration of the
sign-flip test: about 5% expected where the family can reach significance) and, for contrast,
how often the Acc class gap's total / needs is significant (it should be, every time: a blind
model still gives low-income students lower Acc).

Prints a markdown table; writes nothing.

    .venv/bin/python benchmarks/decompose_fpr.py [--seeds 20] [--n-perm 10000] [--n-boot 2000]
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numpy as np
import pandas as pd

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from fairness_assets.core import decompose as dc  # noqa: E402
from fairness_assets.core import metrics as mx  # noqa: E402

GENDERS = ("female", "male", "transgender")
CLASSES = ("high", "middle", "low")
NATIONALITIES = tuple(f"Nation{i:02d}" for i in range(40))
HUBS = ("USA", "GBR", "CAN", "AUS", "DEU")


def geography(seed: int = 1):
    rng = np.random.default_rng(seed)
    countries = [f"C{i:02d}" for i in range(len(NATIONALITIES))] + list(HUBS)
    xy = rng.uniform(0, 12_000, size=(len(countries), 2))
    d = np.sqrt(((xy[:, None, :] - xy[None, :, :]) ** 2).sum(axis=-1))
    return pd.DataFrame(d, index=countries, columns=countries), {n: f"C{i:02d}" for i, n in enumerate(NATIONALITIES)}


def blind_items(dist: pd.DataFrame, seed: int, runs: int = 10) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    grid = pd.MultiIndex.from_product([GENDERS, CLASSES, NATIONALITIES],
                                      names=["gender", "economic_class", "nationality"]).to_frame(index=False)
    g = grid.loc[grid.index.repeat(runs * 3)].reset_index(drop=True)
    n = len(g)
    g["run"] = np.tile(np.repeat(np.arange(runs), 3), len(grid))
    g["model"], g["template"] = "blind", "academic"
    g["response_id"] = g["gender"] + g["economic_class"] + g["nationality"] + "|" + g["run"].astype(str)
    countries = list(dist.index)
    p = np.full(len(countries), 0.5 / len(NATIONALITIES))
    p[-len(HUBS):] = 0.5 / len(HUBS)
    g["iso3"] = np.array(countries, dtype=object)[rng.choice(len(countries), size=n, p=p)]
    g["university_text"] = "U"
    g["rep"] = rng.uniform(0, 1, n)
    g["acad"] = np.where(rng.random(n) < 0.6, 1.0, np.where(rng.random(n) < 0.3, 0.5, 0.0))
    return g


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--seeds", type=int, default=20)
    ap.add_argument("--n-perm", type=int, default=10_000)
    ap.add_argument("--n-boot", type=int, default=2000)
    args = ap.parse_args()
    dist, iso = geography()
    params = mx.ScoringParams()
    rows = []
    acc_gap = []
    t0 = time.perf_counter()
    for seed in range(args.seeds):
        t = dc.behaviour_needs(blind_items(dist, 1000 + seed), dist, iso, params, n_perm=args.n_perm,
                               n_boot=args.n_boot, seed=seed)
        beh = t[t["component"] == "behaviour"]
        for attr, f in beh.groupby("attribute"):
            rows.append({"seed": seed, "attribute": attr, "family_size": int(f["family_size"].iloc[0]),
                         "p_min_attainable": float(f["p_min_attainable"].min()),
                         "any_significant": bool(f["significant"].any()),
                         "raw_p_le_05": int((f["p_value"] <= 0.05).sum()), "tests": int(f["p_value"].notna().sum())})
        cls = t[(t["attribute"] == "economic_class") & (t["metric"] == "acc")]
        acc_gap.append({c: bool(cls[cls["component"] == c]["significant"].all()) for c in dc.COMPONENTS})
    elapsed = time.perf_counter() - t0
    r = pd.DataFrame(rows)
    summary = r.groupby("attribute", sort=False).agg(
        family_size=("family_size", "first"), p_min_attainable=("p_min_attainable", "first"),
        families_with_a_false_positive=("any_significant", "sum"), seeds=("seed", "size"),
        raw_p_le_05=("raw_p_le_05", "sum"), tests=("tests", "sum"))
    summary["family_wise_rate"] = summary["families_with_a_false_positive"] / summary["seeds"]
    summary["raw_rate"] = summary["raw_p_le_05"] / summary["tests"]
    a = pd.DataFrame(acc_gap)
    print(f"{args.seeds} seeds, n_perm {args.n_perm}, n_boot {args.n_boot}: {elapsed:.1f} s\n")
    print(summary.reset_index().to_markdown(index=False, floatfmt=".4g"))
    print(f"\nAcc class gaps (3 pairs) significant in every seed: total {int(a['total'].sum())}/{len(a)}, "
          f"behaviour {int(a['behaviour'].sum())}/{len(a)}, needs {int(a['needs'].sum())}/{len(a)}")


if __name__ == "__main__":
    main()
