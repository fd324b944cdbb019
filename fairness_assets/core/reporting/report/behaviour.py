"""The behaviour and needs of the counterfactual contrasts in words (issue 20): the summary's lead
(:func:`behaviour_findings`), the families that cannot reach significance, and how much of one outcome gap is
behaviour and how much is position (:func:`outcome_split_sentence`)."""

from __future__ import annotations

from typing import Optional

import numpy as np
import pandas as pd

from ...common import metric_catalogue as catalogue
from ...reference import axes
from .. import axis_words
from .cells import _is_missing, truthy
from .wording import _correction, _fmt_p, _norm_attr, _partition_keys, _under, who

_METRIC_SHORT = catalogue.labels("decompose")  # the short names of the contrasts' metrics


def _num(v) -> float:
    return float(v) if not _is_missing(v) else float("nan")


def _ci(lo, hi, flip: bool = False) -> str:
    lo, hi = _num(lo), _num(hi)
    if flip:
        lo, hi = -hi, -lo
    return f"[{lo:+.3f}, {hi:+.3f}]" if np.isfinite(lo) and np.isfinite(hi) else "[no interval]"


def _attr_word(attr: str) -> str:
    """An attribute's word in the sentences (the active design's; core/reference/axes.py)."""
    return axis_words.word(attr)


def _who_pays() -> str:
    """The students a model that ignores who asks leaves worse off: those far from the recommended
    universities (a home axis) or whose distance weighting is stronger (a lambda axis)."""
    home, lam = axes.home(), axes.lambda_axis()
    parts = (["students far from the recommended universities"] if home else []) + (
        [f"{'' if home else 'students '}whose {axis_words.word(lam)} weights distance more"] if lam else []
    )
    return ", or ".join(parts) if parts else "students in a weaker position"


def _tests(n) -> str:
    n = 0 if _is_missing(n) else int(float(n))
    return f"{n} test{'s' if n != 1 else ''}"


def _prepared_decomposition(decomposition: Optional[pd.DataFrame], model: str, template: str) -> Optional[pd.DataFrame]:
    if (
        decomposition is None
        or decomposition.empty
        or not {"attribute", "value_a", "value_b", "metric", "component"} <= set(decomposition.columns)
    ):
        return None
    d = _partition_keys(decomposition, model, template)
    return d.assign(
        _attr=d["attribute"].map(_norm_attr),
        _metric=d["metric"].astype(str).str.lower(),
        _a=d["value_a"].astype(str),
        _b=d["value_b"].astype(str),
        _sig=d["significant"].map(truthy).eq(True) if "significant" in d.columns else False,
        _byc=d["by_construction"].map(truthy).eq(True) if "by_construction" in d.columns else False,
    )


def behaviour_findings(
    decomposition: Optional[pd.DataFrame],
    *,
    model: str = "",
    template: str = "",
    correction: str = "Holm",
    max_findings: int = 5,
) -> list[str]:
    """The summary's lead (issue 20): per model x template, the significant behaviour parts of
    the counterfactual pairs (``decompose.behaviour_needs``: the lists two groups received,
    scored for the same student), largest first: what the model did differently, to whom, on
    which metric, how much, with the interval and the adjusted p. Then, per attribute with a
    behaviour finding, the metrics whose behaviour part did not change significantly. A
    partition without any significant behaviour part is described as a model that gave the same
    lists whoever asked; where outcome gaps exist, that students far from the recommended
    universities (or with a stronger distance weighting) pay for it. The attributes are named by the
    active design's words (core/reference/axes.py)."""
    d = _prepared_decomposition(decomposition, model, template)
    if d is None:
        return []
    correction = _correction(d, correction)
    out: list[str] = []
    for (m, t), part in d.groupby(["model", "template"], sort=True):
        under = _under(m, t)
        beh = part[part["component"].astype(str) == "behaviour"]
        tested = beh[pd.to_numeric(beh["p_value"], errors="coerce").notna()] if "p_value" in beh else beh.iloc[0:0]
        notes = _unattainable(tested, under)  # after the partition's findings
        sig = tested[tested["_sig"]]
        if len(sig):
            sig = sig.assign(_abs=pd.to_numeric(sig["mean_diff"], errors="coerce").abs()).sort_values(
                ["_abs", "_attr", "_metric", "_a", "_b"], ascending=[False, True, True, True, True], kind="stable"
            )
            for _, r in sig.head(max_findings).iterrows():
                dv = _num(r["mean_diff"])  # b's lists minus a's lists, scored for the same student
                low, high = (r["_a"], r["_b"]) if dv >= 0 else (r["_b"], r["_a"])
                flip = r["_b"] != low
                name = _METRIC_SHORT.get(r["_metric"], r["metric"])
                fam = _tests(r.get("family_size"))
                out.append(
                    f"{under}, the model recommended different universities to {who(r['_attr'], low)} than to "
                    f"otherwise identical {who(r['_attr'], high)}: scored for the same student, the lists given to "
                    f"{who(r['_attr'], low)} score {abs(dv):.3f} lower on {name} (behaviour, {low} minus {high}: "
                    f"{-dv if flip else dv:+.3f} {_ci(r.get('ci_low'), r.get('ci_high'), flip)}; "
                    f"{correction}-{_fmt_p(r.get('p_adjusted'))}, {fam} in the family)."
                )
            if len(sig) > max_findings:
                out.append(
                    f"{under}, {len(sig) - max_findings} further behaviour part(s) are significant (table "
                    '"Behaviour and needs of the counterfactual contrasts").'
                )
            for attr, g in tested.groupby("_attr", sort=True):
                found = set(g.loc[g["_sig"], "_metric"])
                if not found:
                    continue
                same = [x for x in dict.fromkeys(g["_metric"]) if x not in found]
                if same:
                    out.append(
                        f"{under}, by {_attr_word(attr)} the lists differed in "
                        f"{', '.join(_METRIC_SHORT.get(x, x) for x in sorted(found))} but not in "
                        f"{', '.join(_METRIC_SHORT.get(x, x) for x in same)} (behaviour parts not "
                        "significant after correction)."
                    )
            out += notes
            continue
        if tested.empty:
            continue
        fams = tested.groupby("_attr")["family_size"].max() if "family_size" in tested else pd.Series(dtype=float)
        metrics_tested = ", ".join(_METRIC_SHORT.get(x, x) for x in dict.fromkeys(tested["_metric"]))
        attrs = ", ".join(f"{_attr_word(a)}: {_tests(n)}" for a, n in fams.items())
        tot = part[(part["component"].astype(str) == "total") & part["_sig"]]
        needs = part[(part["component"].astype(str) == "needs") & part["_sig"]]
        s = (
            f"{under}, as far as this audit can tell, the model gave the same lists whoever asked: no behaviour "
            f"part of any counterfactual pair (the lists, scored for the same student) is significant after "
            f"{correction} correction ({metrics_tested}; {attrs})"
        )
        if len(tot):
            s += (
                f"; yet {len(tot)} outcome gap(s) are significant: {_who_pays()} pay for the same lists"
                + (f" (needs part significant in {len(needs)} pair(s) x metric(s))" if len(needs) else "")
                + ". This is a finding: the model did not adapt its recommendations to who the student is"
            )
        else:
            s += ", and no outcome gap between otherwise identical students is significant"
        out.append(s + ".")
        out += notes
    return out


def _unattainable(tested: pd.DataFrame, under: str) -> list[str]:
    """A sentence naming the behaviour families whose smallest attainable p is above alpha /
    family size (too few strata for so many tests): no result there can be significant."""
    if tested.empty or not {"p_min_attainable", "family_size"} <= set(tested.columns):
        return []
    alpha = (
        float(pd.to_numeric(tested["alpha"], errors="coerce").dropna().iloc[0])
        if "alpha" in tested and tested["alpha"].notna().any()
        else 0.05
    )
    out = []
    for attr, g in tested.groupby("_attr", sort=True):
        size = pd.to_numeric(g["family_size"], errors="coerce").max()
        p_min = pd.to_numeric(g["p_min_attainable"], errors="coerce").min()
        if np.isfinite(size) and np.isfinite(p_min) and size > 0 and p_min > alpha / size:
            out.append(
                f"{under}, the behaviour parts by {_attr_word(attr)} cannot reach significance: "
                f"with {_tests(size)} in the family the smallest attainable p ({p_min:.4f}) is above alpha / "
                f"size ({alpha / size:.2g}); read their intervals, not their tests."
            )
    return out


def outcome_split_sentence(
    decomposition: Optional[pd.DataFrame],
    *,
    model: str,
    template: str,
    attribute: str,
    metric: str,
    low: str,
    high: str,
    correction: str = "Holm",
) -> Optional[str]:
    """One sentence: how much of the outcome gap ``low`` minus ``high`` (one attribute and
    metric of one model x template) is behaviour (the lists) and how much is position (needs).
    None when the decomposition has no such pair."""
    d = _prepared_decomposition(decomposition, model, template)
    if d is None:
        return None
    sel = d[
        (d["model"] == model)
        & (d["template"] == template)
        & (d["_attr"] == _norm_attr(attribute))
        & (d["_metric"] == str(metric).lower())
        & (((d["_a"] == str(low)) & (d["_b"] == str(high))) | ((d["_a"] == str(high)) & (d["_b"] == str(low))))
    ]
    comp = {str(c): r for c, r in zip(sel["component"], sel.to_dict("records"), strict=False)}
    if not {"behaviour", "needs"} <= set(comp):
        return None
    correction = _correction(d, correction)
    b, n = comp["behaviour"], comp["needs"]
    flip = str(b["_b"]) != str(low)
    sign = -1.0 if flip else 1.0
    name = _METRIC_SHORT.get(str(metric).lower(), metric)
    bsig = "significant" if b["_sig"] else "not significant"
    beh = (
        f"behaviour (the lists themselves, scored for the same student) {sign * _num(b['mean_diff']):+.3f} "
        f"{_ci(b.get('ci_low'), b.get('ci_high'), flip)} ({correction}-{_fmt_p(b.get('p_adjusted'))}, {bsig}, "
        f"{_tests(b.get('family_size'))} in the family)"
    )
    attr = _norm_attr(attribute)
    if n["_byc"]:
        why = (  # a `none` axis (the study's gender) moves nothing of where the student stands (METHOD.md §10-11)
            f"{_attr_word(attr)} does not move the student's position"
            if axis_words.position(attr) == "none"
            else f"{name} does not depend on the student"
        )
        return f"Of this gap, all is {beh}; position (needs) is 0 by construction: {why}."
    return (
        f"Of this gap, {beh}; position (needs: the same universities scored for {axis_words.position_of()}) "
        f"{sign * _num(n['mean_diff']):+.3f} {_ci(n.get('ci_low'), n.get('ci_high'), flip)}."
    )
