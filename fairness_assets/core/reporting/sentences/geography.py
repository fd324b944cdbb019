"""The geographic findings in plain language (core.statistics.geostats): significant behaviour
findings first, then the outcomes with their behaviour and needs parts, the class-gap decomposition,
the interactions and the change of home bias. Reads :func:`geostats.geo_statistics`'s tables; the
metric labels are ``geostats.METRIC_LABELS`` (the metric catalogue)."""

from __future__ import annotations

from typing import Mapping, Optional

import numpy as np
import pandas as pd

from ...reference import axes
from ...statistics.geostats import METRIC_LABELS
from .. import axis_words


def _fmt_p(p: float) -> str:
    return "<0.001" if p < 0.001 else f"{p:.3f}"


def _where(r) -> str:
    parts = [str(getattr(r, k)) for k in ("model", "template") if hasattr(r, k)]
    return (" / ".join(parts) + ": ") if parts else ""


def _analysis_order() -> dict[str, int]:
    """The geographic analyses in reading order: South vs North, regions, then each value of the active
    design's home axis (the study's ``nationality_vs_rest``)."""
    home = axes.home()
    return {"south_vs_north": 0, "region_vs_rest": 1, **({f"{home}_vs_rest": 2} if home else {})}


def _who(r) -> tuple[str, str]:
    if r.analysis == "south_vs_north":
        return "students from the Global South", "the Global North"
    return f"students from {r.value}", "the other students"


def _ci3(m: float, lo: float, hi: float) -> str:
    return f"{m:+.3f} [{lo:+.3f}, {hi:+.3f}]"


def _sorted_findings(t: pd.DataFrame) -> pd.DataFrame:
    t = t.assign(_o=t["analysis"].map(_analysis_order()).fillna(9), _a=t["mean_diff"].abs())
    return t.sort_values(["_o", "_a"], ascending=[True, False])


def summary_sentences(tables: Mapping[str, pd.DataFrame], max_findings: int = 10) -> list[str]:
    """Plain-language sentences for the report's summary, from :func:`geostats.geo_statistics`'s
    tables: first the significant *behaviour* findings (what the model recommended differently,
    to whom, on which metric, how much, with interval and adjusted p: the group's lists minus
    the rest's lists, both scored for the group's students), then the significant *outcome*
    contrasts (the total), each with how much of it is behaviour and how much the students'
    position (needs); then the class-gap decomposition (behaviour vs needs), the significant
    interactions (behaviour first), and the change of home bias from the base to the regional
    template. Family sizes are integers."""
    return (
        _contrast_sentences(tables.get("geo_contrasts"), max_findings)
        + _decomposition_sentences(tables.get("class_gap_decomposition"))
        + _interaction_sentences(tables.get("class_gap_interactions"), max_findings)
        + _home_bias_sentences(tables.get("home_bias_change"))
    )


def _contrast_sentences(c: Optional[pd.DataFrame], max_findings: int) -> list[str]:
    """The significant behaviour findings, then the significant outcomes with their parts (or that none is)."""
    out: list[str] = []
    if c is not None and len(c):
        if "component" not in c.columns:
            c = c.assign(component="total")
        comp = c["component"].astype(str)
        sig = c["significant"].astype(bool)
        beh = _sorted_findings(c[(comp == "behaviour") & sig])
        for r in beh.head(max_findings).itertuples(index=False):
            who, ref = _who(r)
            out.append(
                f"{_where(r)}behaviour: the model recommended to {who} universities with a "
                f"{'higher' if r.mean_diff > 0 else 'lower'} {METRIC_LABELS.get(r.metric, r.metric)} than "
                f"what it recommended to {ref}, both scored for {who}: {_ci3(r.mean_diff, r.ci_low, r.ci_high)} "
                f"(paired within {r.unit}, {r.correction}-adjusted p = {_fmt_p(r.p_adjusted)}, "
                f"{int(r.family_size)} tests in the family)."
            )
        parts = {
            (
                tuple(getattr(r, k) for k in ("model", "template") if hasattr(r, k)),
                r.analysis,
                r.value,
                r.metric,
                r.component,
            ): r
            for r in c[comp != "total"].itertuples(index=False)
        }
        tot = _sorted_findings(c[(comp == "total") & sig])
        for r in tot.head(max_findings).itertuples(index=False):
            who, ref = _who(r)
            k = (tuple(getattr(r, x) for x in ("model", "template") if hasattr(r, x)), r.analysis, r.value, r.metric)
            b, n = parts.get(k + ("behaviour",)), parts.get(k + ("needs",))
            text = (
                f"{_where(r)}outcome: {METRIC_LABELS.get(r.metric, r.metric)} is "
                f"{'higher' if r.mean_diff > 0 else 'lower'} for {who} than for {ref}: "
                f"{_ci3(r.mean_diff, r.ci_low, r.ci_high)} (paired within {r.unit}, {r.correction}-adjusted "
                f"p = {_fmt_p(r.p_adjusted)}, {int(r.family_size)} tests in the family)"
            )
            if b is not None and n is not None and np.isfinite(b.mean_diff):
                if bool(getattr(n, "by_construction", False)):
                    text += (
                        f"; all of it is behaviour ({METRIC_LABELS.get(r.metric, r.metric)} does not depend on "
                        f"the student: the position part is 0 by construction)"
                    )
                else:
                    text += (
                        f"; of which behaviour {_ci3(b.mean_diff, b.ci_low, b.ci_high)}"
                        f"{'' if b.significant else ' (not significant)'} and the students' position (needs) "
                        f"{_ci3(n.mean_diff, n.ci_low, n.ci_high)}"
                    )
            out.append(text + ".")
        if beh.empty and tot.empty:
            fams = c.groupby(["analysis", comp.rename("_c")])["family_size"].max()
            out.append(
                "No geographic contrast, behaviour or outcome, is significant after correction ("
                + ", ".join(
                    f"{a}{'' if k == 'total' else f' ({k})'}: {int(v)} tests"
                    for (a, k), v in fams.dropna().items()
                    if k != "needs"
                )
                + ")."
            )
    return out


def _decomposition_sentences(d: Optional[pd.DataFrame]) -> list[str]:
    """The gap of the active design's lambda axis (its last value minus its first: the study's low minus
    high income) of each metric, split into behaviour and needs; none without a lambda axis."""
    out: list[str] = []
    gap = axis_words.lambda_gap()
    if d is not None and len(d) and gap is not None:
        first, last = gap
        lam = axes.lambda_axis()
        what = axis_words.word(lam)
        d = d[(d["value_a"] == first) & (d["value_b"] == last)]
        kcols = [k for k in ("model", "template") if k in d.columns]
        sig_b = d[(d["component"] == "behaviour") & d["significant"].astype(bool)]
        adapted = (
            {
                (k if isinstance(k, tuple) else (k,)): sorted(g["metric"].unique())
                for k, g in sig_b.groupby(kcols, sort=True)
            }
            if kcols and len(sig_b)
            else ({(): sorted(sig_b["metric"].unique())} if len(sig_b) else {})
        )
        for key, g in d.groupby([k for k in ("model", "template", "metric") if k in d.columns], sort=True):
            g = g.set_index("component")
            if not {"total", "behaviour", "needs"} <= set(g.index):
                continue
            t, b, n = g.loc["total"], g.loc["behaviour"], g.loc["needs"]
            if not all(np.isfinite([t.mean_diff, t.ci_low, t.ci_high, b.mean_diff, b.ci_low, b.ci_high])):
                continue  # not estimable (too few paired strata): the decomposition table says so
            where = " / ".join(str(k) for k in key[:-1])
            label = METRIC_LABELS.get(key[-1], key[-1])
            head = (
                f"{where}: the {label} gap, {last} minus {first} {what}, is {t.mean_diff:+.3f} "
                f"[{t.ci_low:+.3f}, {t.ci_high:+.3f}]; "
            )
            if not b.significant and not (b.ci_low <= 0 <= b.ci_high):
                out.append(
                    head + f"the part due to what the model recommended is not significant after correction "
                    f"but its interval excludes 0 (behaviour part {b.mean_diff:+.3f} [{b.ci_low:+.3f}, "
                    f"{b.ci_high:+.3f}], adjusted p = {_fmt_p(b.p_adjusted)}; too few units to conclude); the "
                    f"needs weighting accounts for {n.mean_diff:+.3f} [{n.ci_low:+.3f}, {n.ci_high:+.3f}]."
                )
            elif not b.significant and adapted.get(key[:-1]):
                others = ", ".join(METRIC_LABELS.get(m, m) for m in adapted[key[:-1]])
                out.append(
                    head + f"the {label} of the recommendations did not differ by {what} (behaviour part "
                    f"{b.mean_diff:+.3f} [{b.ci_low:+.3f}, {b.ci_high:+.3f}], adjusted p = "
                    f"{_fmt_p(b.p_adjusted)}; the behaviour part of {others} does differ); the {label} gap "
                    f"is the needs weighting (needs part {n.mean_diff:+.3f} [{n.ci_low:+.3f}, "
                    f"{n.ci_high:+.3f}])."
                )
            elif not b.significant:
                out.append(
                    head + f"the model did not adapt its recommendations to the student's {what} (behaviour "
                    f"part {b.mean_diff:+.3f} [{b.ci_low:+.3f}, {b.ci_high:+.3f}], adjusted p = "
                    f"{_fmt_p(b.p_adjusted)}); the {label} gap comes from the same distant universities being "
                    f"less accessible to {axis_words.who(lam, last)} (needs part {n.mean_diff:+.3f} "
                    f"[{n.ci_low:+.3f}, {n.ci_high:+.3f}])."
                )
            else:
                out.append(
                    head + f"the model recommended different universities by {what} (behaviour part "
                    f"{b.mean_diff:+.3f} [{b.ci_low:+.3f}, {b.ci_high:+.3f}], adjusted p = "
                    f"{_fmt_p(b.p_adjusted)}); the metric's needs weighting adds {n.mean_diff:+.3f} "
                    f"[{n.ci_low:+.3f}, {n.ci_high:+.3f}]."
                )
    return out


def _interaction_sentences(i: Optional[pd.DataFrame], max_findings: int) -> list[str]:
    """The significant interactions of the lambda axis's gap (the study's class gap), behaviour first."""
    out: list[str] = []
    gap = axis_words.lambda_gap()
    if i is not None and len(i) and gap is not None:
        lam = axes.lambda_axis()
        name = axis_words.gap_name()  # the study's "class"
        both = axis_words.elided(axis_words.value_words(lam, gap[1]), axis_words.value_words(lam, gap[0]))
        if "component" not in i.columns:
            i = i.assign(component="total")
        sig = i[(i["kind"] == "interaction") & i["significant"].astype(bool) & (i["component"] != "needs")]
        sig = sig.assign(_o=(sig["component"] != "behaviour").astype(int)).sort_values("_o", kind="stable")
        for r in sig.head(max_findings).itertuples(index=False):
            other = "the rest" if r.value_b == "rest" else r.value_a
            who = r.value_a if r.value_b == "rest" else r.value_b
            label = METRIC_LABELS.get(r.metric, r.metric)
            if r.component == "behaviour":
                out.append(
                    f"{_where(r)}behaviour: how differently the model recommended to {both} "
                    f"students differs for {who} from {other}: the behaviour part of the {label} {name} gap "
                    f"({r.gap}, both {axis_words.plural(name)}' lists scored for the same student) differs by "
                    f"{_ci3(r.mean_diff, r.ci_low, r.ci_high)} (adjusted p = {_fmt_p(r.p_adjusted)}, "
                    f"{int(r.family_size)} tests in the family)."
                )
            else:
                out.append(
                    f"{_where(r)}outcome: the {label} {name} gap ({r.gap}) differs for {who} from {other} by "
                    f"{_ci3(r.mean_diff, r.ci_low, r.ci_high)} (adjusted p = {_fmt_p(r.p_adjusted)}, "
                    f"{int(r.family_size)} tests in the family)."
                )
    return out


def _home_bias_sentences(h: Optional[pd.DataFrame]) -> list[str]:
    """The change of the own-region share and distance from the base to the regional template, over the
    values of the active design's home axis (the study's nationalities)."""
    out: list[str] = []
    home = axes.home()
    if h is not None and len(h) and "own_region_change" in h:
        for model, g in h.groupby("model", sort=True):
            cols = [
                c
                for c in g.columns
                if c.startswith("own_region_") and c not in ("own_region_base", "own_region_change")
            ]
            if not cols or g["own_region_change"].isna().all():
                continue
            out.append(
                f"{model}: with the regional template the share of recommendations in the student's own region "
                f"goes from {g['own_region_base'].mean():.0%} to {g[cols[0]].mean():.0%} on average"
                + (
                    f" over {g[home].nunique()} {axis_words.plural(axis_words.label(home))}"
                    if home and home in g
                    else ""
                )
                + "; mean distance changes by "
                f"{g['mean_distance_km_change'].mean():+,.0f} km."
            )
    return out
