"""The plain-language summary of the largest disparities: the largest gaps between groups
(:func:`largest_gaps`), each with its counterfactual test (:func:`_stats_clause`), the tables the summary reads
(:class:`DisparityTables`) and :func:`disparity_summary`, the summary's sentences, largest first."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable, Optional, Sequence

import numpy as np
import pandas as pd

from ...common import metric_catalogue as catalogue
from ...reference import axes
from .behaviour import outcome_split_sentence
from .cells import _is_missing, truthy
from .wording import _correction, _fmt_p, _norm_attr, _partition_keys, _under, who

METRIC_NAMES = catalogue.prose_names()  # the metrics as the report's prose names them


def largest_gaps(
    drs_summary: pd.DataFrame, metrics: Sequence[str] = ("drs",), *, model: str = "", template: str = ""
) -> pd.DataFrame:
    """Per (model, template, attribute, metric): the groups with the lowest and the highest mean
    and the gap between them, largest gap first. ``drs_summary`` as :func:`metrics.drs_summary`
    (``group_by, group, responses, drs, acc, rep, acad`` [+ ``model``, ``template``])."""
    cols = [
        "model",
        "template",
        "attribute",
        "metric",
        "low_group",
        "low_value",
        "low_n",
        "high_group",
        "high_value",
        "high_n",
        "gap",
    ]
    if drs_summary is None or drs_summary.empty:
        return pd.DataFrame(columns=cols)
    df = _partition_keys(drs_summary, model, template)
    df = df[df["group_by"] != "overall"]
    frames = []
    for metric in metrics:
        if metric not in df.columns:
            continue
        d = df.assign(value=pd.to_numeric(df[metric], errors="coerce"), group=df["group"].astype(str)).dropna(
            subset=["value"]
        )
        if d.empty:
            continue
        keys = ["model", "template", "group_by"]
        d = d.sort_values(keys + ["value", "group"], kind="stable")
        size = d.groupby(keys)["value"].transform("size")
        d = d[size >= 2]
        if d.empty:
            continue
        n_col = "responses" if "responses" in d.columns else None
        lo = d.groupby(keys, sort=True).head(1).set_index(keys)
        hi = d.groupby(keys, sort=True).tail(1).set_index(keys)
        t = (
            pd.DataFrame(
                {
                    "low_group": lo["group"],
                    "low_value": lo["value"],
                    "low_n": lo[n_col] if n_col else np.nan,
                    "high_group": hi["group"].reindex(lo.index),
                    "high_value": hi["value"].reindex(lo.index),
                    "high_n": (hi[n_col] if n_col else pd.Series(np.nan, index=hi.index)).reindex(lo.index),
                }
            )
            .reset_index()
            .rename(columns={"group_by": "attribute"})
        )
        t["metric"] = metric
        t["gap"] = t["high_value"] - t["low_value"]
        frames.append(t)
    if not frames:
        return pd.DataFrame(columns=cols)
    out = pd.concat(frames, ignore_index=True)[cols]
    return out.sort_values(
        ["gap", "model", "template", "attribute", "metric"], ascending=[False, True, True, True, True], kind="stable"
    ).reset_index(drop=True)


def _which_figure(row, flip: bool, gap: float, attr: str) -> str:
    """When the raw gap of group means and the counterfactual paired difference disagree (in sign,
    or by more than half the gap), which one is the finding and why the other differs."""
    if _is_missing(row.get("mean_diff")):
        return ""
    d = -float(row["mean_diff"]) if flip else float(row["mean_diff"])  # low minus high, like the gap
    raw = -gap
    if np.sign(d) == np.sign(raw) and abs(d - raw) <= 0.5 * abs(raw):
        return ""
    what = axes.words().get(attr, attr)
    return (
        f". The paired difference ({d:+.3f}) is the finding: it compares the same student profiles with only "
        f"the {what} changed. The group means ({raw:+.3f}) differ from it because they average every response "
        f"of each group, including profiles whose counterpart has no scored answer and a different mix of the "
        f"other attributes"
    )


def _stats_clause(row: pd.Series, flip: bool, correction: str, ci_level: float, n_what: str = "pairs") -> str:
    """The test of one stats row; ``mean_diff`` and the CI are of value_b - value_a, negated
    when ``flip`` (to read value_a - value_b)."""
    if not _is_missing(row.get("level")):
        ci_level = float(row["level"])
    d = float(row["mean_diff"]) if not _is_missing(row.get("mean_diff")) else np.nan
    lo, hi = row.get("ci_low"), row.get("ci_high")
    lo = float(lo) if not _is_missing(lo) else np.nan
    hi = float(hi) if not _is_missing(hi) else np.nan
    if flip:
        d, lo, hi = -d, -hi, -lo
    p = row.get("p_adjusted") if not _is_missing(row.get("p_adjusted")) else row.get("p_value")
    sig = truthy(row.get("significant"))
    parts = []
    if np.isfinite(d):
        parts.append(f"paired difference {d:+.3f}")
    if np.isfinite(lo) and np.isfinite(hi):
        parts.append(f"{ci_level:.0%} CI [{lo:+.3f}, {hi:+.3f}]")
    if not _is_missing(row.get("n_pairs")):
        n = int(float(row["n_pairs"]))
        parts.append(f"{n} {n_what if n != 1 else n_what.rstrip('s')}")
    if _is_missing(p):
        parts.append(
            str(row.get("marking"))
            if not _is_missing(row.get("marking")) and str(row.get("marking"))
            else "no test (too few pairs)"
        )
        return "; ".join(parts)
    parts.append(_fmt_p(p))
    if sig is True:
        parts.append(f"significant after {correction} correction")
    elif sig is False:
        parts.append(f"not significant after {correction} correction")
    return "; ".join(parts)


@dataclass(frozen=True)
class DisparityTables:
    """The tables :func:`disparity_summary` reads, of one partition or of several (then with
    ``model``/``template`` columns). Only ``drs_summary`` is required; a table left out (None)
    or empty adds no sentence. Frozen; the fields are frames, so compare field by field, not
    with ``==``."""

    drs_summary: pd.DataFrame
    """The group means (:func:`metrics.drs_summary`: ``group_by, group, responses, drs, acc, rep,
    acad`` [+ ``model``, ``template``]): per partition and attribute, the gap between the best-
    and the worst-served group of each metric summarised."""
    stats: Optional[pd.DataFrame] = None
    """The counterfactual tests (:func:`stats.counterfactual_disparity`: ``model, template,
    attribute, value_a, value_b, metric, n_pairs, mean_diff, ci_low, ci_high, p_value,
    p_adjusted, significant, marking`` [+ ``level``, ``correction``]; ``mean_diff`` and the
    interval are of value_b minus value_a): each gap's test, and the largest significant
    differences not already described."""
    grs: Optional[pd.DataFrame] = None
    """The GRS per country (:func:`metrics.grs_by_country`): per partition, how many corpus
    countries were never recommended (GRS 0) and how concentrated the matched recommendations
    are. Read only with ``grs`` and ``country`` columns."""
    concentration: Optional[pd.DataFrame] = None
    """The concentration table: per partition, the US+UK share (and the corpus countries'
    coverage). Read only with a ``us_uk_share`` column."""
    decomposition: Optional[pd.DataFrame] = None
    """The behaviour / needs split (:func:`decompose.behaviour_needs`, issue 20): when given, each
    gap and test sentence is labelled as an outcome and followed by how much of it is behaviour
    and how much is position (:func:`outcome_split_sentence`); None: the sentences as before."""


def disparity_summary(
    tables: DisparityTables,
    *,
    model: str = "",
    template: str = "",
    metrics: Sequence[str] = ("drs",),
    correction: str = "Holm",
    ci_level: float = 0.95,
    max_test_sentences: int = 5,
) -> list[str]:
    """Plain-language sentences about the largest disparities, largest first, from ``tables``
    (:class:`DisparityTables`).

    - From ``tables.drs_summary`` (optionally with ``model``/``template`` columns; without them,
      the partition is ``model``/``template``): per partition and attribute, the gap between the
      best- and the worst-served group for each metric in ``metrics``. Where ``tables.stats`` has
      the counterfactual test of that pair (same model, template, attribute, metric, the two
      values in either order), its paired difference, CI, adjusted p-value and significance are
      added, oriented like the sentence.
    - From ``tables.stats``: the ``max_test_sentences`` largest significant differences not
      already described, the lower-scoring group named first.
    - From ``tables.grs`` per partition: how many corpus countries were never recommended (GRS 0),
      naming those with the most ranked universities, and how concentrated the matched
      recommendations are; from ``tables.concentration``: the US+UK share.

    ``correction`` names the multiple-testing correction (a ``correction`` column of
    ``tables.stats`` wins; "holm" and "bh" are written out); the CI level is ``ci_level`` unless
    ``tables.stats`` has a ``level`` column.

    ``tables.decomposition``: when given, each gap and test sentence is labelled as an outcome and
    followed by its behaviour / needs split (:func:`outcome_split_sentence`); none given, the
    sentences are as before."""
    drs_summary, stats, grs = tables.drs_summary, tables.stats, tables.grs
    concentration, decomposition = tables.concentration, tables.decomposition

    def split(s: str, m: str, t: str, attr: str, metric: str, low: str, high: str) -> str:
        if decomposition is None:
            return s
        extra = outcome_split_sentence(
            decomposition, model=m, template=t, attribute=attr, metric=metric, low=low, high=high, correction=correction
        )
        return "Outcome: " + s + (" " + extra if extra else "")

    correction = _correction(stats, correction)
    st = _prepared_stats(stats, model, template)
    used: set = set()

    gaps = largest_gaps(drs_summary, metrics, model=model, template=template)
    sentences = _gap_sentences(gaps, st, used, split, correction=correction, ci_level=ci_level)
    if st is not None:
        sentences += _test_sentences(st, used, split, correction=correction, ci_level=ci_level, most=max_test_sentences)

    sentences.sort(key=lambda t: -t[0] if np.isfinite(t[0]) else 0.0)
    out = [s for _, s in sentences]

    if grs is not None and not grs.empty and {"grs", "country"} <= set(grs.columns):
        out += _grs_sentences(grs, model, template)
    if concentration is not None and not concentration.empty and "us_uk_share" in concentration.columns:
        out += _concentration_sentences(concentration, model, template)
    return out


def _prepared_stats(stats: Optional[pd.DataFrame], model: str, template: str) -> Optional[pd.DataFrame]:
    """The counterfactual tests with their partition keys and the normalised columns the sentences match on
    (None when there are none)."""
    st = None
    if stats is not None and not stats.empty and {"attribute", "value_a", "value_b", "metric"} <= set(stats.columns):
        st = _partition_keys(stats, model, template)
        st = st.assign(
            _attr=st["attribute"].map(_norm_attr),
            _metric=st["metric"].astype(str).str.lower(),
            _a=st["value_a"].astype(str),
            _b=st["value_b"].astype(str),
        )
    return st


def _gap_sentences(
    gaps: pd.DataFrame,
    st: Optional[pd.DataFrame],
    used: set,
    split: Callable[..., str],
    *,
    correction: str,
    ci_level: float,
) -> list[tuple[float, str]]:
    """(gap, sentence) of each largest gap, with the counterfactual test of its pair where ``st`` has one (its
    index is added to ``used``)."""
    sentences: list[tuple[float, str]] = []
    for r in gaps.itertuples(index=False):
        attr = str(r.attribute)
        name = METRIC_NAMES.get(r.metric, r.metric)
        s = (
            f"{_under(r.model, r.template)}, {name} for {who(attr, r.low_group)} was {r.gap:.3f} lower than for "
            f"{who(attr, r.high_group)} ({r.low_value:.3f} vs {r.high_value:.3f}"
            + (f"; {int(r.low_n)} and {int(r.high_n)} responses" if not _is_missing(r.low_n) else "")
            + ")"
        )
        if st is not None:
            sel = st[
                (st["model"] == r.model)
                & (st["template"] == r.template)
                & (st["_attr"] == _norm_attr(attr))
                & (st["_metric"] == str(r.metric).lower())
                & (
                    ((st["_a"] == r.low_group) & (st["_b"] == r.high_group))
                    | ((st["_a"] == r.high_group) & (st["_b"] == r.low_group))
                )
            ]
            if len(sel):
                row = sel.iloc[0]
                used.add(sel.index[0])
                flip = row["_b"] != r.low_group
                s += f"; counterfactual test, {r.low_group} minus {r.high_group}: " + _stats_clause(
                    row, flip=flip, correction=correction, ci_level=ci_level
                )
                s += _which_figure(row, flip, float(r.gap), attr)
            else:
                s += "; no counterfactual test of this pair was given"
        sentences.append((float(r.gap), split(s + ".", r.model, r.template, attr, r.metric, r.low_group, r.high_group)))
    return sentences


def _test_sentences(
    st: pd.DataFrame,
    used: set,
    split: Callable[..., str],
    *,
    correction: str,
    ci_level: float,
    most: int,
) -> list[tuple[float, str]]:
    """(|difference|, sentence) of the ``most`` largest significant tests not in ``used``, the lower-scoring
    group named first."""
    sentences: list[tuple[float, str]] = []
    rest = st[~st.index.isin(used)]
    rest = rest[rest["significant"].map(truthy) == True] if "significant" in rest.columns else rest.iloc[0:0]  # noqa: E712
    if len(rest):
        rest = rest.assign(_abs=pd.to_numeric(rest["mean_diff"], errors="coerce").abs())
        rest = rest.sort_values(
            ["_abs", "model", "template", "_attr", "_metric", "_a", "_b"],
            ascending=[False, True, True, True, True, True, True],
            kind="stable",
        )
        for _, row in rest.head(most).iterrows():
            d = float(row["mean_diff"])  # value_b - value_a
            low, high = (row["_a"], row["_b"]) if d >= 0 else (row["_b"], row["_a"])
            name = METRIC_NAMES.get(row["_metric"], row["metric"])
            attr = row["_attr"]
            s = (
                f"{_under(row['model'], row['template'])}, {name} for {who(attr, low)} was "
                f"{abs(d):.3f} lower than for otherwise identical {who(attr, high)} "
                f"(counterfactual test, {low} minus {high}: "
                + _stats_clause(row, flip=row["_b"] != low, correction=correction, ci_level=ci_level)
                + ")."
            )
            sentences.append((abs(d), split(s, row["model"], row["template"], attr, row["_metric"], low, high)))
    return sentences


def _grs_sentences(grs: pd.DataFrame, model: str, template: str) -> list[str]:
    """Per partition: how many corpus countries were never recommended, and how concentrated the matched
    recommendations are."""
    out: list[str] = []
    g = _partition_keys(grs, model, template)
    for (m, t), part in g.groupby(["model", "template"], sort=True):
        total = len(part)
        nrec = part["n_recommendations"] if "n_recommendations" in part.columns else (part["grs"] > 0).astype(int)
        zero = part[pd.to_numeric(part["grs"], errors="coerce").fillna(0) <= 0]
        s = f"{_under(m, t)}, {len(zero)} of {total} corpus countries were never recommended (GRS 0)"
        if len(zero) and "total_unis" in zero.columns:
            big = zero.sort_values(["total_unis", "country"], ascending=[False, True], kind="stable").head(3)
            s += ", among them " + ", ".join(
                f"{c} ({int(n)} ranked universit{'y' if int(n) == 1 else 'ies'})"
                for c, n in zip(big["country"], big["total_unis"], strict=False)
            )
        n_all = float(pd.to_numeric(nrec, errors="coerce").sum())
        if n_all > 0 and "n_recommendations" in part.columns:
            top = (
                part.assign(_n=pd.to_numeric(nrec, errors="coerce"))
                .sort_values(["_n", "country"], ascending=[False, True], kind="stable")
                .head(5)
            )
            top = top[top["_n"] > 0]
            s += (
                f"; the {len(top)} most recommended countries ({', '.join(map(str, top['country']))}) took "
                f"{top['_n'].sum() / n_all:.0%} of the recommendations matched to the corpus"
            )
        out.append(s + ".")
    return out


def _concentration_sentences(concentration: pd.DataFrame, model: str, template: str) -> list[str]:
    """Per partition: the share of the recommendations located in the US or the UK, and the corpus countries'
    coverage."""
    out: list[str] = []
    c = _partition_keys(concentration, model, template)
    for r in c.itertuples(index=False):
        share = r.us_uk_share
        if _is_missing(share):
            continue
        s = f"{_under(r.model, r.template)}, {float(share):.0%} of the recommendations were located in the US or the UK"
        cov = getattr(r, "country_coverage", None)
        if not _is_missing(cov):
            s += f", and {float(cov):.0%} of the corpus's countries appeared at all"
        out.append(s + ".")
    return out
