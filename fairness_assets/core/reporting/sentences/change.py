"""Base vs regional in words (core.statistics.component_change), and every other template comparison of a design
(an operator system prompt or a conversation vs the bare question): per model, whether the other template moved
what the model did (the behaviour part), each moved part in a sentence with its metric's own words.

Reads the :func:`core.statistics.component_change.component_change` table; its labels and words are
``component_change.METRIC_LABELS`` and ``METRIC_WORDS`` (the metric catalogue)."""

from __future__ import annotations

import pandas as pd

from ...reference import axes
from ...statistics import component_change as cc
from .. import axis_words


def _who(r) -> tuple[str, str]:
    """(the group, the group it is compared with) of a contrast row, in words."""
    a, b, an = str(r["value_a"]), str(r["value_b"]), str(r["analysis"])
    if r["source"] == "geo_contrasts":
        other = (
            "the other students"
            if a == "rest"
            else f"students of the {a}"
            if an == "south_vs_north"
            else f"students from {a}"
        )
        if axes.home() and an == f"{axes.home()}_vs_rest":  # each home value vs the rest (the study's nationality)
            return f"students from {b}", other
        if an == "south_vs_north":
            return f"students of the {b}", other
        return f"students from {b}", other if a == "rest" else f"students from {a}"
    kind = axis_words.position(an)  # the active design's axis kind (core/reference/axes.py); None: not an axis
    if kind == "lambda":  # its values in their words (the study's low-income profiles)
        return f"{axis_words.value_words(an, b)} profiles", f"{axis_words.value_words(an, a)} profiles"
    if kind == "home":
        return f"profiles from {b}", f"profiles from {a}"
    if kind == "none":  # a value that names the group (the study's female profiles)
        return f"{b} profiles", f"{a} profiles"
    return f"{b} profiles", f"{a} profiles ({axis_words.word(an)})"


def _ci(lo, hi) -> str:
    if pd.isna(lo) or pd.isna(hi):
        return ""
    return f" [{float(lo):+.3f}, {float(hi):+.3f}]"


def _p(p) -> str:
    p = float(p)
    return "< 0.001" if p < 0.001 else f"{p:.3f}"


def describe(r, *, base: str = "base", other: str = "regional") -> str:
    """One row of :func:`core.statistics.component_change.component_change` in a sentence (what moved, for whom,
    by how much); ``base`` and ``other``: the two templates compared (the study's base and regional)."""
    label = cc.METRIC_LABELS.get(str(r["metric"]), str(r["metric"]))
    who, them = _who(r)
    comp = str(r["component"])
    part = {
        "behaviour": "behaviour part (what the model did)",
        "needs": "needs part (the students' position)",
        "total": "outcome gap",
    }.get(comp, comp)
    nums = (
        f"{label} {part}: {float(r['mean_base']):+.3f}{_ci(r['ci_low_base'], r['ci_high_base'])} in {base}, "
        f"{float(r['mean_regional']):+.3f}{_ci(r['ci_low_regional'], r['ci_high_regional'])} in {other} "
        f"(change {float(r['change']):+.3f}{_ci(r['ci_low_change'], r['ci_high_change'])}"
    )
    if pd.notna(r.get("p_change_adjusted")):
        nums += f", Welch test adjusted p {_p(r['p_change_adjusted'])}, {int(r['family_size'])} tests in the family)"
    else:
        nums += ")"
    more, fewer = cc.METRIC_WORDS.get(str(r["metric"]), (f"a higher {label}", f"a lower {label}"))
    if str(r["status"]) != "moved":
        return f"{who} vs {them}: the {part} did not move beyond chance: {nums}."
    words = more if float(r["change"]) > 0 else fewer
    if comp == "behaviour":
        what = (
            f"the {other} template made the model give {who} {words}, relative to what it gave {them} "
            f"(both scored for the same students), than the {base} template did"
        )
    elif comp == "needs":
        what = (
            f"under the {other} template the students' position gives {who} {words} relative to {them} "
            f"than under the {base} template, for the same lists"
        )
    else:
        what = f"under the {other} template {who} end up with {words} relative to {them} than under the {base} template"
    return f"{who} vs {them}: {what}. {nums}."


def summary_sentences(change: pd.DataFrame, max_per_model: int = 3) -> list[str]:
    """Per model and template comparison (``base_template`` / ``other_template``; base and regional where the
    table has no such columns): whether the other template moved what the model did (the behaviour part),
    with the largest moved behaviour parts in words; a model whose behaviour did not move is described as
    such, with what happened to the outcome."""
    out: list[str] = []
    if change is None or change.empty:
        return out
    for (base, other), part in cc.by_comparison(change):
        out += _pair_sentences(part, base, other, max_per_model)
    return out


def _pair_sentences(change: pd.DataFrame, base: str, other: str, max_per_model: int) -> list[str]:
    out: list[str] = []
    ch = change.assign(moved=cc.as_flags(change["moved"]))
    verdicts = cc.model_verdicts(ch)
    for v in verdicts.itertuples(index=False):
        g = ch[ch["model"] == v.model]
        if v.behaviour_tested == 0:
            out.append(
                f"{v.model}: {base} vs {other}: no behaviour part could be compared (the behaviour / needs "
                "split is missing in a template, or its contrasts have fewer than 2 units)."
            )
            continue
        if v.behaviour_moved:
            beh = g[(g["component"] == "behaviour") & g["moved"]]
            beh = beh.assign(_a=-pd.to_numeric(beh["change"], errors="coerce").abs()).sort_values("_a", kind="stable")
            head = (
                f"{v.model}: the {other} template moved what the model did: {v.behaviour_moved_n} of "
                f"{v.behaviour_tested} behaviour parts changed beyond chance (Welch test of {other} - {base}, Holm "
                "within each analysis)"
            )
            out.append(head + ".")
            out += [f"{v.model}: {describe(r, base=base, other=other)}" for _, r in beh.head(max_per_model).iterrows()]
            continue
        line = (
            f"{v.model}: the {other} template did not move what the model did: none of the "
            f"{v.behaviour_tested} behaviour parts tested changed beyond chance (Welch test of {other} - {base}, "
            "Holm within each analysis)"
        )
        if v.total_moved_n:
            line += (
                f"; {v.total_moved_n} outcome gap(s) did move with no detectable change in what the model gave "
                "each group: the change is in how the lists land for where the students stand (needs)"
            )
        else:
            line += "; nor did any outcome gap"
        out.append(line + ".")
    return out


def affinity_sentences(affinity: pd.DataFrame) -> list[str]:
    """Per model and language (core.statistics.language_affinity): whether asking in the language moved the
    recommendations toward the countries where it is spoken, with the shares, the interval and the adjusted p;
    the significant ones first."""
    if affinity is None or affinity.empty:
        return []
    out = []
    rows = affinity.assign(_s=~cc.as_flags(affinity["significant"])).sort_values(["_s", "model"], kind="stable")
    for _, r in rows.iterrows():
        lang, ref = str(r["language"]), str(r["reference"])
        shares = (
            f"{float(r['share_language']):.1%} of the located recommendations in the {int(r['n_countries'])} "
            f"countries where {lang!r} is spoken when asked in {lang!r} ({r['template']}), "
            f"{float(r['share_reference']):.1%} when the same {int(r['n_pairs'])} students asked in {ref!r} "
            f"({r['reference_template']}); difference {float(r['mean_diff']):+.3f}{_ci(r['ci_low'], r['ci_high'])}"
        )
        if pd.notna(r.get("p_adjusted")):
            shares += f", {r['correction']}-adjusted p {_p(r['p_adjusted'])}"
        if bool(cc.as_flags(pd.Series([r["significant"]])).iloc[0]):
            verdict = (
                "the language moved the lists toward the countries where it is spoken"
                if float(r["mean_diff"]) > 0
                else "the language moved the lists away from the countries where it is spoken"
            )
        else:
            verdict = "no language-country affinity beyond chance"
        out.append(f"{r['model']}: {verdict}: {shares} (behaviour: the same students, only the language changed).")
    return out


def signalled_sentences(signalled: pd.DataFrame) -> list[str]:
    """Per model and contrast of an axis a name signals (core.statistics.signalled): whether the model treated the
    students whose name signals a value differently from the students who state it; only the significant
    differences, then one line per comparison when none is."""
    if signalled is None or signalled.empty:
        return []
    out = []
    for (model, stated, named), part in signalled.groupby(
        ["model", "stated_template", "signalled_template"], sort=True
    ):
        hits = part[cc.as_flags(part["significant_difference"])]
        hits = hits.reindex(hits["difference"].abs().sort_values(ascending=False).index)  # the largest first
        for _, r in hits.iterrows():
            out.append(
                f"{model}: {r['metric']} gap of {r['axis']} {r['value']} signalled by a name ({named}) "
                f"{float(r['gap_signalled']):+.3f}, stated ({stated}) {float(r['gap_stated']):+.3f}: difference "
                f"{float(r['difference']):+.3f}{_ci(r['ci_low_difference'], r['ci_high_difference'])}, "
                f"{r['correction']}-adjusted p {_p(r['p_adjusted_difference'])} (behaviour: the same cells, only how "
                "the student said who they are changed)."
            )
        if hits.empty:
            out.append(
                f"{model}: no contrast differs between the stated attributes ({stated}) and the names that signal "
                f"them ({named}) beyond chance ({int(part['family_size'].max())} tests per quantity)."
            )
    return out
