"""Builds the geographic worked example of docs/statistics.md (§7) from fairness_assets/core/statistics/geostats/.

    .venv/bin/python docs/build_geostats_example.py           # rewrite the section in place
    .venv/bin/python docs/build_geostats_example.py --print   # print it

The data are the synthetic audit of benchmarks/statistics.py (``synthetic_study_items``) at a
smaller size: one model, the base and regional templates, the study's 360 profiles x 5 runs x
3 items, scored by the real code (``core.scoring.metrics.drs_items``), with a planted lower Rep for
students from Africa and a class-blind model. ``geostats.geo_statistics`` computes every table
with the pipeline's defaults (2,000 bootstrap resamples, 10,000 sign vectors, Holm, seed 0).

The section lies between the two markers below; tests/core/test_geostats.py recomputes it and
fails when the page and the code disagree. Nothing here writes anywhere but docs/statistics.md
(and only when run without ``--print``).
"""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

import pandas as pd

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "docs"))

import _generated  # noqa: E402

from fairness_assets.core.statistics import geostats  # noqa: E402

DOC = ROOT / "docs" / "statistics.md"
BEGIN = "<!-- BEGIN GENERATED GEO EXAMPLE: docs/build_geostats_example.py -->"
END = "<!-- END GENERATED GEO EXAMPLE -->"

RUNS = 5
MODEL = "model-a"
PLANTED_REGION = "Africa"
PLANTED = 0.3
HOME_NATIONALITY = "Kenya"


def _bench():
    spec = importlib.util.spec_from_file_location("bench_statistics_geo_example", ROOT / "benchmarks" / "statistics.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def example_tables() -> tuple[dict[str, pd.DataFrame], int, int]:
    """(geo_statistics tables, number of responses, number of items) of the example audit."""
    items, responses, params = _bench().synthetic_study_items(
        RUNS,
        models=(MODEL,),
        templates=("base", "regional"),
        planted_region=PLANTED_REGION,
        planted=PLANTED,
        class_blind=True,
    )
    return geostats.geo_statistics(geostats.Positions(items, params), responses), len(responses), len(items)


def _f(x: float, d: int = 3) -> str:
    return "" if pd.isna(x) else f"{x:+.{d}f}"


def _ci(m: float, lo: float, hi: float, d: int = 3, signed: bool = True) -> str:
    if not signed:
        return f"{m:.{d}f} [{lo:.{d}f}, {hi:.{d}f}]"
    return f"{_f(m, d)} [{_f(lo, d)}, {_f(hi, d)}]"


def _p(p: float) -> str:
    return "" if pd.isna(p) else ("<0.001" if p < 0.001 else f"{p:.3f}")


def _md(df: pd.DataFrame) -> str:
    return df.to_markdown(index=False, disable_numparse=True)


def render_example() -> str:
    t, n_resp, n_items = example_tables()
    base = "base"

    # region metrics: run intervals, base template
    rm = t["region_metrics"]
    rm = rm[(rm["template"] == base) & (rm["group_by"] == "region") & (rm["unit"] == "run")]
    regions = sorted(rm["group"].unique())
    rm_rows = []
    for reg in regions:
        g = rm[rm["group"] == reg].set_index("metric")
        rm_rows.append(
            {
                "region": reg,
                "responses": f"{int(g.loc['drs', 'n_responses']):,}",
                **{
                    lab: _ci(g.loc[m, "mean"], g.loc[m, "ci_low"], g.loc[m, "ci_high"], signed=False)
                    for m, lab in (
                        ("drs", "DRS"),
                        ("rep", "Rep"),
                        ("own_country", "own-country share"),
                        ("own_region", "own-region share"),
                    )
                },
            }
        )
    rm_tbl = pd.DataFrame(rm_rows)
    rep_by = rm[rm["metric"] == "rep"].set_index("group")["mean"]
    others = rep_by.drop(PLANTED_REGION)
    top_region = list(rm[rm["metric"] == "own_region"].sort_values("mean", ascending=False)["group"].iloc[:2])

    # contrasts: South vs North (every metric), each region vs the rest (Rep)
    c_all = t["geo_contrasts"]
    c_all = c_all[c_all["template"] == base]
    c = c_all[c_all["component"] == "total"]

    def ctab(rows: pd.DataFrame) -> pd.DataFrame:
        return pd.DataFrame(
            {
                "value - reference": rows["value"] + " - " + rows["reference"],
                "metric": rows["metric"],
                "units": rows["n_units"].astype(str),
                "difference [95% interval]": [
                    _ci(m, lo, hi)
                    for m, lo, hi in zip(rows["mean_diff"], rows["ci_low"], rows["ci_high"], strict=False)
                ],
                "p": [_p(p) for p in rows["p_value"]],
                "Holm p": [_p(p) for p in rows["p_adjusted"]],
                "family size": rows["family_size"].astype(str),
                "marking": rows["marking"],
            }
        )

    sn = c[c["analysis"] == "south_vs_north"]
    sn_rep = sn[sn["metric"] == "rep"].iloc[0]
    rr = c[(c["analysis"] == "region_vs_rest") & (c["metric"] == "rep")].sort_values("value")
    afr = rr[rr["value"] == PLANTED_REGION].iloc[0]
    n_sig_rr = int(rr["significant"].sum())

    # behaviour and needs of the South - North contrasts (every metric)
    snc = c_all[c_all["analysis"] == "south_vs_north"]
    order = {"total": 0, "behaviour": 1, "needs": 2}
    snc = snc.assign(_o=snc["component"].map(order)).sort_values(["metric", "_o"], kind="stable")
    snc = snc.set_index("metric").loc[list(dict.fromkeys(sn["metric"]))].reset_index()
    bn_tbl = pd.DataFrame(
        {
            "metric": snc["metric"],
            "component": snc["component"],
            "units": snc["n_units"].astype(str),
            "South - North [95% interval]": [
                _ci(m, lo, hi) for m, lo, hi in zip(snc["mean_diff"], snc["ci_low"], snc["ci_high"], strict=False)
            ],
            "Holm p": [_p(p) for p in snc["p_adjusted"]],
            "family size": snc["family_size"].astype(str),
            "marking": snc["marking"],
        }
    )
    sn_or = {
        k: snc[(snc["metric"] == "own_region") & (snc["component"] == k)].iloc[0]
        for k in ("total", "behaviour", "needs")
    }

    # families
    fam = t["families"]
    fam = fam[fam["template"] == base]
    fam_tbl = pd.DataFrame(
        {
            "family": fam["analysis"],
            "tests": fam["family_size"].astype(str),
            "unit": fam["unit"],
            "units": fam["n_units"].astype(str),
            "smallest attainable p": [f"{p:.1e}" for p in fam["p_min_attainable"]],
            "Holm needs p <=": [f"{p:.1e}" for p in fam["holm_threshold"]],
            "attainable": ["yes" if a else "no" for a in fam["attainable"]],
            "significant": fam["n_significant"].astype(str),
        }
    )
    nat = fam[fam["analysis"] == "nationality_vs_rest"].iloc[0]

    # behaviour vs needs: Acc, low - high, base
    d = t["class_gap_decomposition"]
    d = d[(d["template"] == base) & (d["metric"] == "acc") & (d["value_a"] == "high") & (d["value_b"] == "low")]
    d = d.set_index("component").loc[["total", "behaviour", "needs"]].reset_index()
    dec_tbl = pd.DataFrame(
        {
            "component": d["component"],
            "strata": d["n_pairs"].astype(str),
            "low - high [95% interval]": [
                _ci(m, lo, hi) for m, lo, hi in zip(d["mean_diff"], d["ci_low"], d["ci_high"], strict=False)
            ],
            "share of total": [f"{s:.0%}" if pd.notna(s) else "" for s in d["share_of_total"]],
            "Holm p": [_p(p) for p in d["p_adjusted"]],
            "family size": d["family_size"].astype(str),
            "marking": d["marking"],
        }
    )
    tot, beh, nee = (d[d["component"] == k].iloc[0] for k in ("total", "behaviour", "needs"))

    # home bias: one nationality, base -> regional
    h = t["home_bias_change"]
    h = h[h["nationality"] == HOME_NATIONALITY].iloc[0]
    home_tbl = pd.DataFrame(
        [
            {
                "nationality": HOME_NATIONALITY,
                "region": h["region"],
                **{
                    lab: f"{h[f'{m}_base']:.0%} -> {h[f'{m}_regional']:.0%} ({100 * h[f'{m}_change']:+.0f} pts)"
                    for m, lab in (("own_country", "own country"), ("own_region", "own region"), ("abroad", "abroad"))
                },
                "mean distance": f"{h['mean_distance_km_base']:,.0f} -> {h['mean_distance_km_regional']:,.0f} km "
                f"({h['mean_distance_km_change']:+,.0f})",
            }
        ]
    )

    return f"""{BEGIN}
### Worked example: geography

The numbers in this subsection are computed by `docs/build_geostats_example.py` with
`geostats.geo_statistics` (2,000 bootstrap resamples, 10,000 sign vectors, Holm, seed 0);
`tests/core/test_geostats.py` rebuilds it and fails if this page differs.

**Data.** The synthetic audit of `benchmarks/statistics.py` (`synthetic_study_items`) at a smaller
size: one model, templates `base` and `regional`, the study's 360 profiles x {RUNS} runs x 3 items
= {n_resp:,} responses and {n_items:,} items, scored by the real code (`metrics.drs_items`). Each
item is a university in the student's own country, in another country of the student's region,
or in a hub (US, UK, Canada, Australia, Germany); the regional template makes the first two
likelier. Built in: for students from {PLANTED_REGION}, {PLANTED:.0%} of the items come from the
worse-ranked half of a country's universities (a lower Rep); the model is class-blind (what it
recommends never depends on the class). Figures below are for the `base` template unless said.

**Region metrics** (`region_metrics`, means with their interval over the {RUNS} runs):

{_md(rm_tbl)}

Reading: Rep is lowest for {PLANTED_REGION} ({rep_by[PLANTED_REGION]:.3f}, against
{others.min():.3f}-{others.max():.3f} elsewhere), the planted effect, while the own-region share is
highest for {top_region[0]} and {top_region[1]}, the regions of the hub countries (a hub pick is
also a home-region pick there).

**Contrasts** (`geo_contrasts`; units: gender x class x run, {int(sn_rep["n_units"])} in all;
difference = value - reference; p from the sign-flip test, Holm within the family). Global South
vs Global North, every metric:

{_md(ctab(sn))}

Each region vs the rest, Rep:

{_md(ctab(rr))}

Reading: {PLANTED_REGION}'s Rep differs from the rest's by {_f(afr["mean_diff"])} [{_f(afr["ci_low"])},
{_f(afr["ci_high"])}], Holm p {_p(afr["p_adjusted"])} among {int(afr["family_size"])} tests (the planted
effect; {n_sig_rr} of the {len(rr)} region rows are significant, and the rows are not independent:
every other region's "rest" contains {PLANTED_REGION}); the South - North Rep difference
({_f(sn_rep["mean_diff"])}, Holm p {_p(sn_rep["p_adjusted"])}) shows the same effect diluted over the
South's other regions.

**Behaviour and needs of the contrasts** (`geo_contrasts`, component `behaviour` / `needs`;
Global South vs North): behaviour is what the South's students received minus what the North's
students received, both lists scored for the South's students (their home country, region and
lambda; same gender x class x run); needs = total - behaviour, the part due to where the
students are. Rep does not depend on the student: its needs part is 0 by construction and is not
tested. Holm within each analysis x component:

{_md(bn_tbl)}

Reading: the own-region share is {_f(sn_or["total"]["mean_diff"])} for the South against the North
(the outcome), but the behaviour part is {_f(sn_or["behaviour"]["mean_diff"])}
[{_f(sn_or["behaviour"]["ci_low"])}, {_f(sn_or["behaviour"]["ci_high"])}] ({sn_or["behaviour"]["marking"]}): this
synthetic model recommends universities near each student's home, so the South's students get
more of their own region than the North's lists would give them; the negative outcome is their
position ({_f(sn_or["needs"]["mean_diff"])}: the hubs, picked for everyone, lie in the North's regions).

**Families** (`family_summary`): the size m of each family, its unit, and the smallest p its test
can give against what Holm needs of the smallest p (alpha / m = 0.05 / m):

{_md(fam_tbl)}

Reading: every family can reach significance, even the {int(nat["family_size"])} nationality-vs-rest
tests (Holm needs {nat["holm_threshold"]:.1e}, Monte Carlo gives down to
{nat["p_min_attainable"]:.1e}), because each test has {int(nat["n_units"])} units (gender x class
x run) instead of the 9 strata of a pairwise nationality counterfactual, whose exact test cannot
go below 2/2^9 = 0.0039 against Holm's 0.05 / 2,340 = 2.1e-05 (§3).

**Behaviour vs needs** (`class_gap_decomposition`, Acc, low - high income; strata gender x
nationality, runs averaged; Holm within each component across class pairs and metrics):

{_md(dec_tbl)}

Reading: the Acc gap, low minus high income, is {_f(tot["mean_diff"])}, and the needs weighting
accounts for {_f(nee["mean_diff"])} of it; the behaviour part
({_f(beh["mean_diff"])} [{_f(beh["ci_low"])}, {_f(beh["ci_high"])}], {beh["marking"]}) is what a
class-blind model should show: it recommended the same universities whatever the class.

**Home bias** (`home_bias_change`, students from {HOME_NATIONALITY}, `base` -> `regional`):

{_md(home_tbl)}

Reading: the regional template moves {HOME_NATIONALITY}'s recommendations home, the own-region
share going from {h["own_region_base"]:.0%} to {h["own_region_regional"]:.0%} and the mean
distance changing by {h["mean_distance_km_change"]:+,.0f} km.
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
