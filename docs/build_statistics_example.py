"""Builds two worked examples of docs/statistics.md from the code: the run variability and
counterfactual disparity of fairness_assets/core/statistics/stats.py, and the split of a counterfactual
contrast into total / behaviour / needs of fairness_assets/core/statistics/decompose.py.

    .venv/bin/python docs/build_statistics_example.py           # rewrite both sections in place
    .venv/bin/python docs/build_statistics_example.py --print   # print them

Each section lies between its two markers below; tests/core/test_stats.py and
tests/core/test_decompose.py recompute them and fail when the page and the code disagree.
"""

from __future__ import annotations

import math
import sys
from pathlib import Path

import numpy as np
import pandas as pd

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "docs"))

import _generated  # noqa: E402

from fairness_assets.core.reference import geo, regions  # noqa: E402
from fairness_assets.core.scoring import metrics  # noqa: E402
from fairness_assets.core.statistics import decompose  # noqa: E402
from fairness_assets.core.statistics.stats import (  # noqa: E402
    adjust_pvalues,
    counterfactual_disparity,
    disparity_display,
    run_variability,
)

DOC = ROOT / "docs" / "statistics.md"
BEGIN = "<!-- BEGIN GENERATED EXAMPLE: docs/build_statistics_example.py -->"
END = "<!-- END GENERATED EXAMPLE -->"
DEC_BEGIN = "<!-- BEGIN GENERATED DECOMPOSITION EXAMPLE: docs/build_statistics_example.py -->"
DEC_END = "<!-- END GENERATED DECOMPOSITION EXAMPLE -->"

NATIONALITIES = ("Brazil", "India", "Kenya", "Poland")
RUNS = 3


def example_responses() -> pd.DataFrame:
    """48 illustrative responses: 2 genders x 2 classes x 4 nationalities x 3 runs, DRS rounded to
    two decimals. Built in: women's DRS is 0.04 lower, class has no effect; one response (male, low, India, run 2)
    failed to parse (n_items 0)."""
    rng = np.random.default_rng(2025)
    level = {"Brazil": 0.55, "India": 0.40, "Kenya": 0.45, "Poland": 0.60}
    rows = []
    for nat in NATIONALITIES:
        for gender in ("female", "male"):
            for klass in ("high", "low"):
                pid = f"full:{gender}:{klass}:{nat.lower()}"
                for run in range(RUNS):
                    drs = level[nat] - (0.04 if gender == "female" else 0.0)  # class has no effect
                    drs = round(float(drs + rng.normal(0, 0.02)), 2)
                    failed = (gender, klass, nat, run) == ("male", "low", "India", 2)
                    rows.append(
                        {
                            "response_id": f"{pid}#{run}",
                            "model": "example-model",
                            "template": "base",
                            "profile_id": pid,
                            "gender": gender,
                            "economic_class": klass,
                            "nationality": nat,
                            "run": run,
                            "n_items": 0 if failed else 3,
                            "drs": np.nan if failed else drs,
                        }
                    )
    return pd.DataFrame(rows)


def _md(df: pd.DataFrame, floatfmt: str = ".4f", numparse: bool = True) -> str:
    return df.to_markdown(index=False, floatfmt=floatfmt, disable_numparse=not numparse)


def _f(x: float, nd: int = 4) -> str:
    return f"{x:.{nd}f}"


def render_example() -> str:
    resp = example_responses()
    wide = resp.pivot_table(
        index=["nationality", "economic_class", "gender"], columns="run", values="drs", aggfunc="first", dropna=False
    ).reset_index()
    wide.columns = [c if isinstance(c, str) else f"run {c}" for c in wide.columns]
    wide["profile mean"] = wide[[f"run {r}" for r in range(RUNS)]].mean(axis=1)
    runs_tbl = wide.copy()
    for r in range(RUNS):
        runs_tbl[f"run {r}"] = runs_tbl[f"run {r}"].map(lambda v: "failed" if pd.isna(v) else f"{v:.2f}")
    runs_tbl["profile mean"] = runs_tbl["profile mean"].map(lambda v: f"{v:.4f}")

    var = run_variability(resp, metrics=("drs",), by=(None,))
    var_tbl = var[
        ["group_by", "group", "metric", "unit", "n_units", "n_responses", "n_scored", "mean", "sd", "ci_low", "ci_high"]
    ]
    run_means = resp.groupby("run")["drs"].mean()
    run_counts = resp.groupby("run")["drs"].count()
    n_resamples = math.comb(2 * RUNS - 1, RUNS)
    scored = resp["drs"].notna()

    dis = counterfactual_disparity(
        resp, attributes=("gender", "economic_class"), metrics=("drs",), family=("model", "template")
    )
    pairs = wide.pivot_table(
        index=["economic_class", "nationality"], columns="gender", values="profile mean"
    ).reset_index()
    pairs["d = male - female"] = pairs["male"] - pairs["female"]
    g = dis[dis["attribute"] == "gender"].iloc[0]
    c = dis[dis["attribute"] == "economic_class"].iloc[0]
    n = int(g["n_pairs"])
    d = pairs["d = male - female"].to_numpy()
    n_pos = int((d > 0).sum())
    holm = adjust_pvalues([g["p_value"], c["p_value"]], "holm")
    bh = adjust_pvalues([g["p_value"], c["p_value"]], "bh")
    dis_tbl = dis[
        [
            "attribute",
            "value_a",
            "value_b",
            "metric",
            "n_pairs",
            "mean_diff",
            "sd_diff",
            "ci_low",
            "ci_high",
            "p_value",
            "p_method",
            "n_perm",
            "p_adjusted",
            "marking",
        ]
    ]
    shown = disparity_display(dis)[
        ["attribute", "comparison", "metric", "n_pairs", "difference", "p_adjusted", "marking"]
    ]

    return f"""{BEGIN}
## Worked example

The numbers in this section are computed by `docs/build_statistics_example.py`, which builds the
data below and calls the functions of `fairness_assets/core/statistics/stats.py`;
`tests/core/test_stats.py` rebuilds the section and fails if this page differs.

**Data.** An illustrative `example-model`, template `base`: 2 genders x 2 economic classes x 4
nationalities = 16 profiles, {RUNS} runs each, 48 responses (DRS only; the other metrics work the same
way). The data were made with women's DRS 0.04 lower than men's, no class effect, plus noise. One response
failed to parse (`n_items` 0): it counts as a response and is left out of every mean.

{
        _md(
            runs_tbl[["nationality", "economic_class", "gender", *[f"run {r}" for r in range(RUNS)], "profile mean"]],
            numparse=False,
        )
    }

### Run-to-run variability (`run_variability`, overall, DRS)

{_md(var_tbl)}

- `mean` is the mean over the {int(scored.sum())} scored responses, {_f(resp.loc[scored, "drs"].mean())}: the
  headline figure.
- Unit `run`: the per-run means are {", ".join(_f(v) for v in run_means)} (scored responses per run:
  {", ".join(str(int(v)) for v in run_counts)}); their SD (ddof 1) is {_f(run_means.std(ddof=1))}. The interval \
redraws {RUNS} runs with replacement
  2,000 times and recomputes the mean over the drawn runs' responses; with only {RUNS} runs there are
  only {n_resamples} distinct resamples, so this interval is coarse (see Limits).
- Unit `profile`: the SD of the 16 profile means is {_f(wide["profile mean"].std(ddof=1))}; the interval
  redraws 16 profiles. It is much wider: the profiles differ far more from each other (by
  nationality above all) than the runs do.

### Counterfactual disparity (`counterfactual_disparity`, DRS)

Gender: each stratum is one (economic class, nationality); the values sort as female < male, so
d = mean(male) - mean(female), over each profile's scored runs:

{_md(pairs[["economic_class", "nationality", "female", "male", "d = male - female"]])}

- n_pairs = {n}; mean_diff = {_f(g["mean_diff"])}; sd_diff = {_f(g["sd_diff"])}; the bootstrap
  interval (resampling the {n} strata, 2,000 times) is [{_f(g["ci_low"])}, {_f(g["ci_high"])}].
- Permutation test: 2^{n} = {2**n} <= n_perm = 10,000, so the test is exact. {n_pos} of the {n}
  differences are positive; the sign vectors that give |sum of signed d| at least as large as the
  observed one number {int(round(g["p_value"] * 2**n))} of {2**n}, so p = {_f(g["p_value"])}.
- Economic class (strata: gender x nationality, d = mean(low) - mean(high)): mean_diff =
  {_f(c["mean_diff"])}, p = {_f(c["p_value"])}.
- Correction. Here the family is the whole partition (`family=("model", "template")`), m = 2 tests.
  Holm: the smaller p is multiplied by 2, the larger by 1 and raised to at least the previous
  value: {_f(holm[0])} (gender), {_f(holm[1])} (class). Benjamini-Hochberg would give {_f(bh[0])} and {_f(bh[1])}.

{_md(dis_tbl)}

As the report shows it (`disparity_display`):

{_md(shown, numparse=False)}
{END}"""


# ----------------------------------------------------------------------------- behaviour and needs
DEC_NATIONALITIES = ("Brazil", "India", "Kenya", "Mexico", "Poland", "Vietnam")
DEC_HUBS = ("USA", "GBR")
DEC_RUNS = 2
DEC_SHOWN = ("female", "Kenya")  # the stratum worked through by hand


def example_items() -> tuple[pd.DataFrame, pd.DataFrame, dict, metrics.ScoringParams]:
    """(items, capital distances, nationality -> ISO3, scoring parameters) of an illustrative
    model that steers low-income students home: 2 genders x 2 classes (high, low) x 6
    nationalities x 2 runs x 3 items. Each item is a university in the student's own country
    (Rep about 0.5) or in the US / UK (Rep about 0.9); a high-income student gets a home
    university with probability 0.2, a low-income student with probability 0.6. Rep rounded to
    two decimals; real capital distances (``core.reference.geo``)."""
    rng = np.random.default_rng(20)
    iso = regions.home_iso3(DEC_NATIONALITIES)
    countries = sorted(set(iso.values()) | set(DEC_HUBS))
    dist = geo.distance_lookup(geo.capital_distance_matrix(geo.capitals_table(countries)))
    rows = []
    for nat in DEC_NATIONALITIES:
        for gender in ("female", "male"):
            for klass in ("high", "low"):
                pid = f"full:{gender}:{klass}:{nat.lower()}"
                for run in range(DEC_RUNS):
                    for k in range(3):
                        home = rng.random() < (0.6 if klass == "low" else 0.2)
                        country = iso[nat] if home else DEC_HUBS[int(rng.integers(0, 2))]
                        rep = round(float(np.clip((0.5 if home else 0.9) + rng.normal(0, 0.05), 0, 1)), 2)
                        rows.append(
                            {
                                "response_id": f"{pid}#{run}",
                                "model": "example-model",
                                "template": "base",
                                "profile_id": pid,
                                "gender": gender,
                                "economic_class": klass,
                                "nationality": nat,
                                "run": run,
                                "item_index": k,
                                "university_text": f"U{k}",
                                "iso3": country,
                                "rep": rep,
                                "acad": np.nan,
                            }
                        )
    return pd.DataFrame(rows), dist, iso, metrics.ScoringParams()


def example_decomposition() -> pd.DataFrame:
    items, dist, iso, params = example_items()
    return decompose.behaviour_needs(
        items, dist, iso, params, attributes=("economic_class",), metrics=("drs", "acc", "rep")
    )


def _ci4(row) -> str:
    return f"{row['mean_diff']:+.4f} [{row['ci_low']:+.4f}, {row['ci_high']:+.4f}]"


def _acc(d_km: np.ndarray, lam: float) -> np.ndarray:
    return np.exp(-lam * d_km)


def stratum_cross(items: pd.DataFrame, dist: pd.DataFrame, iso: dict, params: metrics.ScoringParams) -> pd.DataFrame:
    """Per stratum (gender x nationality), F[x; y] for Acc: the mean over the runs of the mean
    Acc of the lists class x's profile received, scored for class y's student (same home, y's
    lambda). Computed here directly from the distances (not with core.statistics.decompose)."""
    out = []
    for (gender, nat), s in items.groupby(["gender", "nationality"], sort=True):
        home = iso[nat]
        f = {}
        for x in ("high", "low"):
            lists = s[s["economic_class"] == x]
            d = dist.loc[home, lists["iso3"]].to_numpy(dtype=float)
            for y in ("high", "low"):
                per_response = pd.Series(_acc(d, params.lambdas[y]), index=lists.index).groupby(lists["run"]).mean()
                f[(x, y)] = float(per_response.mean())
        out.append(
            {
                "gender": gender,
                "nationality": nat,
                **{f"F[{x}; {y}]": f[(x, y)] for x in ("high", "low") for y in ("high", "low")},
            }
        )
    t = pd.DataFrame(out)
    t["total"] = t["F[low; low]"] - t["F[high; high]"]
    t["behaviour"] = 0.5 * (t["F[low; high]"] - t["F[high; high]"]) + 0.5 * (t["F[low; low]"] - t["F[high; low]"])
    t["needs"] = t["total"] - t["behaviour"]
    return t


def render_decompose_example() -> str:
    items, dist, iso, params = example_items()
    t = example_decomposition()
    cross = stratum_cross(items, dist, iso, params)
    g, nat = DEC_SHOWN
    one = items[(items["gender"] == g) & (items["nationality"] == nat)]
    lists = one.assign(km=dist.loc[iso[nat], one["iso3"]].to_numpy(dtype=float))
    lists_tbl = pd.DataFrame(
        {
            "class": lists["economic_class"],
            "run": lists["run"].astype(str),
            "university in": lists["iso3"],
            "km from home": lists["km"].map(lambda v: f"{v:,.0f}"),
            "Rep": lists["rep"].map(lambda v: f"{v:.2f}"),
            "Acc for a high-income student": [f"{v:.3f}" for v in _acc(lists["km"].to_numpy(), params.lambdas["high"])],
            "Acc for a low-income student": [f"{v:.3f}" for v in _acc(lists["km"].to_numpy(), params.lambdas["low"])],
        }
    )
    row = cross[(cross["gender"] == g) & (cross["nationality"] == nat)].iloc[0]
    fcols = ["F[high; high]", "F[high; low]", "F[low; high]", "F[low; low]"]
    cross_tbl = cross[["gender", "nationality", *fcols, "total", "behaviour", "needs"]]
    order = {"total": 0, "behaviour": 1, "needs": 2}
    rows = t.assign(_o=t["component"].map(order)).sort_values(["metric", "_o"], kind="stable")
    rows = rows.set_index("metric").loc[["acc", "rep", "drs"]].reset_index()
    out_tbl = pd.DataFrame(
        {
            "metric": rows["metric"],
            "component": rows["component"],
            "strata": rows["n_pairs"].astype(str),
            "low - high": rows["mean_diff"].map(lambda v: f"{v:+.4f}"),
            "95% interval": [
                f"[{lo:+.4f}, {hi:+.4f}]" if pd.notna(lo) else ""
                for lo, hi in zip(rows["ci_low"], rows["ci_high"], strict=False)
            ],
            "p": rows["p_value"].map(lambda v: "" if pd.isna(v) else f"{v:.4f}"),
            "Holm p": rows["p_adjusted"].map(lambda v: "" if pd.isna(v) else f"{v:.4f}"),
            "family size": rows["family_size"].astype(str),
            "marking": rows["marking"],
        }
    )
    r = {
        (m, c): t[(t["metric"] == m) & (t["component"] == c)].iloc[0]
        for m in ("acc", "rep", "drs")
        for c in ("total", "behaviour", "needs")
    }
    acc_b = r[("acc", "behaviour")]
    n_strata = int(r[("acc", "total")]["n_pairs"])
    if not (
        r[("acc", "behaviour")]["mean_diff"] > 0 > r[("acc", "needs")]["mean_diff"]
        and r[("rep", "behaviour")]["mean_diff"] < 0
    ):
        raise ValueError("the example's data no longer show the steering the text describes: change the seed")
    acc_t = r[("acc", "total")]
    acc_story = (
        "nothing: the two classes end up with about the same Acc"
        if not acc_t["significant"]
        else f"that low-income students get {'more' if acc_t['mean_diff'] > 0 else 'less'} accessible universities"
    )
    home_share = (
        items.assign(home=items["iso3"] == items["nationality"].map(iso)).groupby("economic_class")["home"].mean()
    )
    return f"""{DEC_BEGIN}
### Worked example: behaviour and needs of a counterfactual contrast

The numbers in this subsection are computed by `docs/build_statistics_example.py` with
`decompose.behaviour_needs` (2,000 bootstrap resamples, 10,000 sign vectors, Holm, seed 0);
`tests/core/test_decompose.py` rebuilds it and fails if this page differs, and recomputes the
stratum table below by hand from the distances.

**Data.** An illustrative `example-model`, template `base`, that steers low-income students home:
2 genders x 2 classes (high, low) x {len(DEC_NATIONALITIES)} nationalities ({", ".join(DEC_NATIONALITIES)}) x
{DEC_RUNS} runs x 3 items. Each item is a university in the student's own country (Rep about 0.5) or in
the US or the UK (Rep about 0.9); a low-income student gets a home university with probability
0.6, a high-income one with 0.2 (here {home_share["low"]:.0%} and {home_share["high"]:.0%} of the items). \
Acc uses the real capital
distances and the default lambdas ({params.lambdas["high"]:g} per km for high income,
{params.lambdas["low"]:g} for low income). The contrast is the class pair high, low: d = low - high,
one unit per stratum (gender x nationality, runs averaged), {n_strata} strata.

**One stratum by hand** ({g}, {nat}). The lists each class's profile received, with every item's
Acc computed for both students (same home, each class's lambda):

{_md(lists_tbl, numparse=False)}

F[x; y] is the mean over the runs of the mean Acc of the lists class x's profile received, scored
for class y's student. Here F[high; high] = {row["F[high; high]"]:.4f}, F[low; low] = {row["F[low; low]"]:.4f},
F[low; high] = {row["F[low; high]"]:.4f} (the low-income lists, scored for the high-income student) and
F[high; low] = {row["F[high; low]"]:.4f} (the high-income lists, scored for the low-income student). So:

- total = F[low; low] - F[high; high] = {row["total"]:+.4f}: the outcome, as `counterfactual_disparity` reports it;
- behaviour = 1/2 (F[low; high] - F[high; high]) + 1/2 (F[low; low] - F[high; low]) =
  1/2 ({row["F[low; high]"] - row["F[high; high]"]:+.4f}) + \
1/2 ({row["F[low; low]"] - row["F[high; low]"]:+.4f}) = {row["behaviour"]:+.4f}:
  the low-income lists minus the high-income lists, scored for the same student;
- needs = total - behaviour = {row["needs"]:+.4f}: the same lists scored for the low-income position
  (lambda {params.lambdas["low"]:g}) minus for the high-income position.

**Every stratum** (Acc):

{_md(cross_tbl)}

**The table `behaviour_needs`** (Acc, Rep, DRS = (Acc + Rep) / 2 here, no Acad in `base`; Holm
within each component across the metrics):

{_md(out_tbl, numparse=False)}

**How to read it.** The Acc outcome gap, low minus high income, is {_ci4(r[("acc", "total")])}
({r[("acc", "total")]["marking"]}). Read alone, it says {acc_story}. The split shows what lies under it. The
behaviour part is {_ci4(acc_b)} ({acc_b["marking"]}): for the same student, the lists the model gave
low-income students are {"more" if acc_b["mean_diff"] > 0 else "less"} accessible \
than the lists it gave high-income students
(it sent them home: {home_share["low"]:.0%} of their items against {home_share["high"]:.0%}). The needs part is
{_ci4(r[("acc", "needs")])} ({r[("acc", "needs")]["marking"]}): with a lambda \
{params.lambdas["low"] / params.lambdas["high"]:g} times as large, the same
lists score far lower for a low-income student. The outcome is the sum of the two, per stratum
and in the means. Rep does not depend on the student, so its whole gap, {_ci4(r[("rep", "total")])}, is
behaviour and its needs part is 0 by construction (not tested): the model steered low-income
students to {"lower" if r[("rep", "behaviour")]["mean_diff"] < 0 else "higher"}-ranked universities. \
DRS = (Acc + Rep) / 2 mixes both: behaviour
{_ci4(r[("drs", "behaviour")])} (the Acc gained by being sent home against the Rep lost), needs
{_ci4(r[("drs", "needs")])}. In a report, the behaviour rows say what the model did (here: it steered
low-income students home, to lower-ranked universities); the needs rows say what the metric's
needs weighting does to the same lists, whoever recommended them. (`share_of_total`, component /
total, is not shown: it is unstable \
when a total is near 0{", as the Acc total is here" if not acc_t["significant"] else ""}.)
{DEC_END}"""


def write(doc: Path = DOC) -> None:
    _generated.replace(doc, BEGIN, END, render_example())
    _generated.replace(doc, DEC_BEGIN, DEC_END, render_decompose_example())


def section_in_doc(doc: Path = DOC) -> str:
    return _generated.section(doc, BEGIN, END)


def decompose_section_in_doc(doc: Path = DOC) -> str:
    return _generated.section(doc, DEC_BEGIN, DEC_END)


if __name__ == "__main__":
    if "--print" in sys.argv:
        print(render_example())
        print()
        print(render_decompose_example())
    else:
        write()
