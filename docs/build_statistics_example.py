"""Builds the worked example of docs/statistics.md from the code in fairness_assets/core/stats.py.

    .venv/bin/python docs/build_statistics_example.py           # rewrite the section in place
    .venv/bin/python docs/build_statistics_example.py --print   # print it

The section lies between the two markers below; tests/core/test_stats.py recomputes it and
fails when the page and the code disagree.
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

from fairness_assets.core.stats import adjust_pvalues, counterfactual_disparity, disparity_display, run_variability  # noqa: E402

DOC = ROOT / "docs" / "statistics.md"
BEGIN = "<!-- BEGIN GENERATED EXAMPLE: docs/build_statistics_example.py -->"
END = "<!-- END GENERATED EXAMPLE -->"

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
                    rows.append({"response_id": f"{pid}#{run}", "model": "example-model", "template": "base",
                                 "profile_id": pid, "gender": gender, "economic_class": klass, "nationality": nat,
                                 "run": run, "n_items": 0 if failed else 3, "drs": np.nan if failed else drs})
    return pd.DataFrame(rows)


def _md(df: pd.DataFrame, floatfmt: str = ".4f", numparse: bool = True) -> str:
    return df.to_markdown(index=False, floatfmt=floatfmt, disable_numparse=not numparse)


def _f(x: float, nd: int = 4) -> str:
    return f"{x:.{nd}f}"


def render_example() -> str:
    resp = example_responses()
    wide = resp.pivot_table(index=["nationality", "economic_class", "gender"], columns="run", values="drs",
                            aggfunc="first", dropna=False).reset_index()
    wide.columns = [c if isinstance(c, str) else f"run {c}" for c in wide.columns]
    wide["profile mean"] = wide[[f"run {r}" for r in range(RUNS)]].mean(axis=1)
    runs_tbl = wide.copy()
    for r in range(RUNS):
        runs_tbl[f"run {r}"] = runs_tbl[f"run {r}"].map(lambda v: "failed" if pd.isna(v) else f"{v:.2f}")
    runs_tbl["profile mean"] = runs_tbl["profile mean"].map(lambda v: f"{v:.4f}")

    var = run_variability(resp, metrics=("drs",), by=(None,))
    var_tbl = var[["group_by", "group", "metric", "unit", "n_units", "n_responses", "n_scored", "mean", "sd",
                   "ci_low", "ci_high"]]
    run_means = resp.groupby("run")["drs"].mean()
    run_counts = resp.groupby("run")["drs"].count()
    n_resamples = math.comb(2 * RUNS - 1, RUNS)
    scored = resp["drs"].notna()

    dis = counterfactual_disparity(resp, attributes=("gender", "economic_class"), metrics=("drs",),
                                   family=("model", "template"))
    pairs = wide.pivot_table(index=["economic_class", "nationality"], columns="gender", values="profile mean").reset_index()
    pairs["d = male - female"] = pairs["male"] - pairs["female"]
    g = dis[dis["attribute"] == "gender"].iloc[0]
    c = dis[dis["attribute"] == "economic_class"].iloc[0]
    n = int(g["n_pairs"])
    d = pairs["d = male - female"].to_numpy()
    n_pos = int((d > 0).sum())
    holm = adjust_pvalues([g["p_value"], c["p_value"]], "holm")
    bh = adjust_pvalues([g["p_value"], c["p_value"]], "bh")
    dis_tbl = dis[["attribute", "value_a", "value_b", "metric", "n_pairs", "mean_diff", "sd_diff", "ci_low", "ci_high",
                   "p_value", "p_method", "n_perm", "p_adjusted", "marking"]]
    shown = disparity_display(dis)[["attribute", "comparison", "metric", "n_pairs", "difference", "p_adjusted", "marking"]]

    return f"""{BEGIN}
## Worked example

The numbers in this section are computed by `docs/build_statistics_example.py`, which builds the
data below and calls the functions of `fairness_assets/core/stats.py`;
`tests/core/test_stats.py` rebuilds the section and fails if this page differs.

**Data.** An illustrative `example-model`, template `base`: 2 genders x 2 economic classes x 4
nationalities = 16 profiles, {RUNS} runs each, 48 responses (DRS only; the other metrics work the same
way). The data were made with women's DRS 0.04 lower than men's, no class effect, plus noise. One response
failed to parse (`n_items` 0): it counts as a response and is left out of every mean.

{_md(runs_tbl[["nationality", "economic_class", "gender", *[f"run {r}" for r in range(RUNS)], "profile mean"]], numparse=False)}

### Run-to-run variability (`run_variability`, overall, DRS)

{_md(var_tbl)}

- `mean` is the mean over the {int(scored.sum())} scored responses, {_f(resp.loc[scored, 'drs'].mean())}: the
  headline figure.
- Unit `run`: the per-run means are {", ".join(_f(v) for v in run_means)} (scored responses per run:
  {", ".join(str(int(v)) for v in run_counts)}); their SD (ddof 1) is {_f(run_means.std(ddof=1))}. The interval redraws {RUNS} runs with replacement
  2,000 times and recomputes the mean over the drawn runs' responses; with only {RUNS} runs there are
  only {n_resamples} distinct resamples, so this interval is coarse (see Limits).
- Unit `profile`: the SD of the 16 profile means is {_f(wide['profile mean'].std(ddof=1))}; the interval
  redraws 16 profiles. It is much wider: the profiles differ far more from each other (by
  nationality above all) than the runs do.

### Counterfactual disparity (`counterfactual_disparity`, DRS)

Gender: each stratum is one (economic class, nationality); the values sort as female < male, so
d = mean(male) - mean(female), over each profile's scored runs:

{_md(pairs[["economic_class", "nationality", "female", "male", "d = male - female"]])}

- n_pairs = {n}; mean_diff = {_f(g['mean_diff'])}; sd_diff = {_f(g['sd_diff'])}; the bootstrap
  interval (resampling the {n} strata, 2,000 times) is [{_f(g['ci_low'])}, {_f(g['ci_high'])}].
- Permutation test: 2^{n} = {2 ** n} <= n_perm = 10,000, so the test is exact. {n_pos} of the {n}
  differences are positive; the sign vectors that give |sum of signed d| at least as large as the
  observed one number {int(round(g['p_value'] * 2 ** n))} of {2 ** n}, so p = {_f(g['p_value'])}.
- Economic class (strata: gender x nationality, d = mean(low) - mean(high)): mean_diff =
  {_f(c['mean_diff'])}, p = {_f(c['p_value'])}.
- Correction. Here the family is the whole partition (`family=("model", "template")`), m = 2 tests.
  Holm: the smaller p is multiplied by 2, the larger by 1 and raised to at least the previous
  value: {_f(holm[0])} (gender), {_f(holm[1])} (class). Benjamini-Hochberg would give {_f(bh[0])} and {_f(bh[1])}.

{_md(dis_tbl)}

As the report shows it (`disparity_display`):

{_md(shown, numparse=False)}
{END}"""


def write(doc: Path = DOC) -> None:
    _generated.replace(doc, BEGIN, END, render_example())


def section_in_doc(doc: Path = DOC) -> str:
    return _generated.section(doc, BEGIN, END)


if __name__ == "__main__":
    if "--print" in sys.argv:
        print(render_example())
    else:
        write()
