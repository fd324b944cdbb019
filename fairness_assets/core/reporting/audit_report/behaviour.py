"""The report's section "Behaviour and needs of the counterfactual contrasts" (issue 20): each partition's behaviour
/ needs table (significant behaviour parts first) and its envy table."""

from __future__ import annotations

from typing import Any, Optional, Sequence

import pandas as pd

from ...common import result_tables as rt
from ...reference import axes
from .. import axis_words
from .. import report as rep
from .partition import PartitionDigest, PartitionResult

BEHAVIOUR_TITLE = "Behaviour and needs of the counterfactual contrasts"
BEHAVIOUR_COLUMNS = (
    "attribute",
    "value_a",
    "value_b",
    "metric",
    "component",
    "n_pairs",
    "mean_diff",
    "share_of_total",
    "behaviour_a_students",
    "behaviour_b_students",
    "ci_low",
    "ci_high",
    "p_value",
    "p_adjusted",
    "family_size",
    "significant",
    "marking",
)
ENVY_SHOWN = (
    "attribute",
    "group",
    "other_group",
    "metric",
    "n_students",
    "envy_share",
    "tie_share",
    "ci_low",
    "ci_high",
)
_COMPONENT_ORDER = {"behaviour": 0, "total": 1, "needs": 2}


def behaviour_tables(p: PartitionResult) -> dict[str, pd.DataFrame]:
    """The behaviour / needs table (significant behaviour parts first, then significant outcomes,
    then the rest by size; each pair's three components together) and the envy table (largest
    envy first) of one partition; none when its statistics have no decomposition."""
    out: dict[str, pd.DataFrame] = {}
    where = f"{p.model} / {p.template}"
    bn = p.statistics.get("behaviour_needs")
    if bn is not None and len(bn):
        sig = bn["significant"].map(rep.truthy).eq(True)
        pair = ["attribute", "value_a", "value_b", "metric"]
        key = bn.assign(
            _beh=sig & (bn["component"] == "behaviour"),
            _sig=sig,
            _abs=pd.to_numeric(bn["mean_diff"], errors="coerce").abs().where(bn["component"] == "total"),
        )
        g = key.groupby(pair, sort=False)
        rank = pd.DataFrame(
            {
                "_b": ~g["_beh"].transform("any"),
                "_s": ~g["_sig"].transform("any"),
                "_a": -g["_abs"].transform("max").fillna(-1),
                "_c": bn["component"].map(_COMPONENT_ORDER).fillna(9),
            }
        )
        order = pd.concat([bn[pair], rank], axis=1).sort_values(["_b", "_s", "_a"] + pair + ["_c"], kind="stable").index
        shown = bn.loc[order].reset_index(drop=True)
        corr = (
            str(bn["correction"].dropna().iloc[0]) if "correction" in bn and bn["correction"].notna().any() else "holm"
        )
        out[f"{where}: {rt.title('audit_statistics', 'behaviour_needs', correction=corr)}"] = shown[
            [c for c in BEHAVIOUR_COLUMNS if c in shown.columns]
        ]
    ev = p.statistics.get("envy")
    if ev is not None and len(ev):
        ev = (
            ev.assign(_e=-pd.to_numeric(ev["envy_share"], errors="coerce").fillna(0))
            .sort_values(["_e", "attribute", "metric"], kind="stable")
            .drop(columns="_e")
        )
        out[f"{where}: {rt.title('audit_statistics', 'envy')}"] = ev[[c for c in ENVY_SHOWN if c in ev.columns]]
    return out


def behaviour_section(parts: Sequence[Any]) -> Optional[rep.ReportSection]:
    """The report's section "Behaviour and needs of the counterfactual contrasts" (issue 20);
    None when no partition has the decomposition (the report is then as before)."""
    tables: dict[str, pd.DataFrame] = {}
    for p in parts:
        tables.update(p.behaviour_tables if isinstance(p, PartitionDigest) else behaviour_tables(p))
    if not tables:
        return None
    return rep.ReportSection("behaviour", BEHAVIOUR_TITLE, intro=[behaviour_intro()], tables=tables)


def behaviour_intro() -> str:
    """The section's introduction, naming the active design's axes (core/reference/axes.py): the study's
    "two values of gender, income or nationality", its position ("home country, capital distances and
    income weighting") and its ``none`` axes, whose needs part is 0 by construction ("every gender pair")."""
    inputs = axis_words.position_inputs()
    free = [axis_words.word(a) for a in axes.names(position="none")]
    if not inputs:
        zero = ", and for every pair (no axis of this design moves the student's position),"
    elif free:
        zero = f", and for every {axis_words.join(free, 'or')} pair,"
    else:
        zero = ","
    values_of = axis_words.join((axis_words.word(a) for a in axes.names()), "or")
    scored_for = f" (each side's {axis_words.join(inputs)})" if inputs else ""
    return (
        f"Every counterfactual pair (two values of {values_of}, all else equal) is split in two. Behaviour: "
        f"the lists the two groups received, both scored for the same student{scored_for}, averaged over both "
        "sides: what the model did differently. Needs (position): the rest of the outcome gap, the same lists "
        f"scored for {axis_words.position_of('each student')}. For Rep, Acad and the US+UK share{zero} the "
        "needs part is 0 by construction and is not tested. Each component has a percentile bootstrap interval "
        "over strata and a paired sign-flip test, adjusted within each attribute x component family. Envy: the "
        "share of a group's students whose own lists score lower, for them, than the lists of the other "
        "group's otherwise identical profile in the same run (a model that ignores the profile gives each "
        "group about the same envy)."
    )
