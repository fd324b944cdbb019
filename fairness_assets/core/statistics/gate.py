"""A release gate (issue 22 item 2): is a candidate model at least as fair as the baseline?

A gate file (YAML) names the baseline and the candidate and lists lines, each a metric (or a group
gap of a metric) with a direction and a non-inferiority margin::

    baseline: llama-3.1-8b-instruct
    candidate: llama-3.2-8b-instruct
    templates: [base, regional]     # optional: default every template both models were audited on
    lines:
      - metric: drs                 # DRS behaviour (both lists scored for the same student)
        must_not_drop_by: 0.01
      - metric: rep
        gap: "economic_class: low - high"
        must_not_widen_by: 0.02
      - metric: us_uk_share
        must_not_rise_by: 0.05

Each line is judged on the paired comparison of the two models (:mod:`core.statistics.comparison`: the
difference candidate - baseline with its 95% percentile bootstrap interval over the profiles (each
the mean of its paired differences over the runs; runs for coverage, strata x runs for gaps); each
end of it is a one-sided 97.5% bound):

- ``must_not_drop_by m`` (higher is better): **pass** when the lower bound is above -m, **fail**
  when the upper bound is below -m, **inconclusive** otherwise;
- ``must_not_rise_by m`` (lower is better): pass when the upper bound is below m, fail when the lower
  bound is above m;
- ``must_not_widen_by m`` (a gap): the change of the gap measured in the direction of the baseline's
  gap (of the candidate's when the baseline shows none), so that positive means wider; pass when
  its upper bound is below m, fail when its lower bound is above m.

``require_robust: true`` judges every line again under each setting of the sensitivity grid
(:mod:`core.statistics.sensitivity`: lambda x0.5 / x2 / given, R_max 1000 / 1500): a line keeps its worst
verdict (:func:`evaluate_robust`).

The gate fails when a line fails, is inconclusive when no line fails and one is inconclusive, and
passes when every line passes. An inconclusive line names the number of units that would decide
it at the same estimate and spread (the interval shrinks as 1/sqrt(n)).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from pathlib import Path
from typing import Optional, Sequence

import numpy as np
import pandas as pd
import yaml

from ..common import metric_catalogue as catalogue
from ..common.text import compose_yaml
from .comparison import METRICS, gaps

RATE_METRICS = catalogue.names("gate")
RULES = ("must_not_drop_by", "must_not_rise_by", "must_not_widen_by")
TOP_KEYS = {"baseline", "candidate", "templates", "lines", "require_robust"}
LINE_KEYS = {"metric", "gap", *RULES}
VERDICT_COLUMNS = (
    "line",
    "template",
    "metric",
    "gap",
    "rule",
    "margin",
    "estimate",
    "ci_low",
    "ci_high",
    "threshold",
    "n_units",
    "verdict",
    "n_units_to_decide",
    "reason",
)


class GateError(ValueError):
    """A gate file that cannot be used; the message names the file and the line."""


@dataclass(frozen=True)
class GateLine:
    metric: str
    rule: str
    margin: float
    gap: str = ""
    line: int = 0

    def label(self) -> str:
        what = f"the {self.gap} gap in {self.metric}" if self.gap else self.metric
        return f"{what} {self.rule.replace('_', ' ')} {self.margin:g}"


@dataclass(frozen=True)
class Gate:
    baseline: str
    candidate: str
    lines: tuple
    templates: tuple = ()
    path: str = ""
    require_robust: bool = False
    source: dict = field(default_factory=dict, compare=False)


def _fail(path, node, msg: str):
    line = f"line {node.start_mark.line + 1}" if node is not None else "line 1"
    raise GateError(f"{path}: {line}: {msg}")


def _mapping(node) -> dict:
    return {k.value: (k, v) for k, v in node.value} if isinstance(node, yaml.MappingNode) else {}


def _compose(path: Path):
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as exc:
        raise GateError(f"{path}: cannot read the gate file ({exc.strerror or exc})") from exc
    try:
        root = compose_yaml(text)
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        raise GateError(
            f"{path}: line {mark.line + 1 if mark else 1}: not valid YAML ({getattr(exc, 'problem', exc)})"
        ) from exc
    if not isinstance(root, yaml.MappingNode):
        _fail(path, root, "the gate file must be a mapping with baseline, candidate and lines")
    return root


def _model_names(path: Path, root, top: dict) -> dict[str, str]:
    names = {}
    for key in ("baseline", "candidate"):
        if key not in top:
            _fail(path, root, f"missing {key!r}: the model name as audited")
        v = top[key][1]
        if not isinstance(v, yaml.ScalarNode) or not str(v.value).strip():
            _fail(path, v, f"{key} must be a model name")
        names[key] = str(v.value).strip()
    if names["baseline"] == names["candidate"]:
        _fail(path, top["candidate"][1], "the candidate is the baseline: name two different models")
    return names


def _templates(path: Path, top: dict) -> tuple:
    if "templates" not in top:
        return ()
    tnode = top["templates"][1]
    if isinstance(tnode, yaml.ScalarNode):
        return (str(tnode.value),)
    if isinstance(tnode, yaml.SequenceNode) and all(isinstance(t, yaml.ScalarNode) for t in tnode.value):
        return tuple(str(t.value) for t in tnode.value)
    _fail(path, tnode, "templates must be a template name or a list of them")


def _margin(path: Path, rule: str, mnode) -> float:
    try:
        margin = float(mnode.value)
    except (TypeError, ValueError):
        _fail(path, mnode, f"{rule} must be a number, got {mnode.value!r}")
    if not math.isfinite(margin) or margin < 0:
        _fail(path, mnode, f"{rule} must be a number >= 0, got {mnode.value!r}")
    return margin


def _line(path: Path, item) -> GateLine:
    fields = _mapping(item)
    if not fields:
        _fail(path, item, "each line must be a mapping (metric, a rule and its margin)")
    for key, (knode, _) in fields.items():
        if key not in LINE_KEYS:
            _fail(path, knode, f"unknown key {key!r} in a line (allowed: {', '.join(sorted(LINE_KEYS))})")
    if "metric" not in fields:
        _fail(path, item, "a line needs a metric")
    metric = str(fields["metric"][1].value).strip().lower()
    known = (*METRICS, *RATE_METRICS)
    if metric not in known:
        _fail(path, fields["metric"][1], f"unknown metric {metric!r} (known: {', '.join(known)})")
    rules = [r for r in RULES if r in fields]
    if len(rules) != 1:
        _fail(path, item, f"a line needs exactly one of {', '.join(RULES)}")
    rule = rules[0]
    margin = _margin(path, rule, fields[rule][1])
    gap = str(fields["gap"][1].value).strip() if "gap" in fields else ""
    if rule == "must_not_widen_by" and not gap:
        _fail(path, item, f'must_not_widen_by needs a gap, e.g. gap: "{_gap_example()}"')
    if gap and rule != "must_not_widen_by":
        _fail(path, fields["gap"][0], "a gap line takes must_not_widen_by")
    if gap and metric not in METRICS:
        _fail(path, fields["metric"][1], f"gaps are measured on {', '.join(METRICS)}, not {metric}")
    return GateLine(metric, rule, margin, gap, item.start_mark.line + 1)


def _gap_example() -> str:
    """A gap of the active design as a gate line writes it (the study's ``economic_class: low - high``):
    the first of the comparison's gaps (:func:`comparison.gaps`)."""
    found = gaps()
    if not found:
        return "<attribute>: <value> - <reference value>"
    attr, value, reference = found[0]
    return f"{attr}: {value} - {reference}"


def _require_robust(path: Path, top: dict) -> bool:
    if "require_robust" not in top:
        return False
    rnode = top["require_robust"][1]
    value = str(getattr(rnode, "value", "")).strip().lower()
    if value not in ("true", "false", "yes", "no"):
        _fail(path, rnode, f"require_robust must be true or false, got {getattr(rnode, 'value', rnode)!r}")
    return value in ("true", "yes")


def load_gate(path: str | Path) -> Gate:
    """Read and validate a gate file; every error names the file and the line."""
    path = Path(path)
    root = _compose(path)
    top = _mapping(root)
    for key, (knode, _) in top.items():
        if key not in TOP_KEYS:
            _fail(path, knode, f"unknown key {key!r} (allowed: {', '.join(sorted(TOP_KEYS))})")
    names = _model_names(path, root, top)
    templates = _templates(path, top)
    if "lines" not in top:
        _fail(path, root, "missing 'lines': the metrics and gaps the candidate must not make worse")
    lnode = top["lines"][1]
    if not isinstance(lnode, yaml.SequenceNode) or not lnode.value:
        _fail(path, lnode, "lines must be a non-empty list")
    lines = tuple(_line(path, item) for item in lnode.value)
    robust = _require_robust(path, top)
    return Gate(names["baseline"], names["candidate"], lines, templates, str(path), robust)


def _oriented(differences: pd.DataFrame, gate: Gate) -> pd.DataFrame:
    """The comparison rows of the gate's two models, as candidate - baseline."""
    pair = sorted([gate.baseline, gate.candidate])
    rows = differences[(differences["model_a"] == pair[0]) & (differences["model_b"] == pair[1])].copy()
    if gate.candidate == pair[0]:  # the stored difference is baseline - candidate: flip it
        rows["mean_diff"] = -rows["mean_diff"]
        rows["ci_low"], rows["ci_high"] = -rows["ci_high"], -rows["ci_low"]
        rows["mean_a"], rows["mean_b"] = rows["mean_b"], rows["mean_a"]
    return rows.rename(columns={"mean_a": "mean_baseline", "mean_b": "mean_candidate"})


def evaluate(gate: Gate, differences: pd.DataFrame) -> tuple[str, pd.DataFrame]:
    """``(verdict, lines)``: the gate's verdict (``pass`` / ``fail`` / ``inconclusive``) and one row
    per line and template (:data:`VERDICT_COLUMNS`). A template or line with no comparison of the
    two models is inconclusive, with the reason."""
    rows = _oriented(differences, gate) if len(differences) else pd.DataFrame()
    audited = sorted(set(rows["template"])) if len(rows) else []
    templates = list(gate.templates) or audited
    out = []
    for t in templates:
        for ln in gate.lines:
            base = {
                "line": ln.line,
                "template": t,
                "metric": ln.metric,
                "gap": ln.gap,
                "rule": ln.rule,
                "margin": ln.margin,
            }
            sel = (
                rows[(rows["template"] == t) & (rows["metric"] == ln.metric) & (rows["gap"] == ln.gap)]
                if len(rows)
                else rows
            )
            if ln.gap:
                sel = sel[sel["family"] == "gaps"] if len(sel) else sel
            else:
                sel = sel[sel["family"] != "gaps"] if len(sel) else sel
            if not len(sel):
                why = (
                    f"{gate.baseline} and {gate.candidate} were not both audited on template {t!r}"
                    if t not in audited
                    else f"no comparison of {ln.metric}"
                    + (f" for the gap {ln.gap!r}" if ln.gap else "")
                    + f" on template {t!r}"
                )
                out.append(
                    {
                        **base,
                        "estimate": np.nan,
                        "ci_low": np.nan,
                        "ci_high": np.nan,
                        "threshold": np.nan,
                        "n_units": 0,
                        "verdict": "inconclusive",
                        "n_units_to_decide": None,
                        "reason": why,
                    }
                )
                continue
            out.append({**base, **_judge(ln, sel.iloc[0])})
    table = pd.DataFrame(out, columns=list(VERDICT_COLUMNS))
    if not len(table):
        return "inconclusive", table
    verdicts = set(table["verdict"])
    verdict = "fail" if "fail" in verdicts else "inconclusive" if "inconclusive" in verdicts else "pass"
    return verdict, table


def evaluate_robust(gate: Gate, differences: pd.DataFrame, by_setting: pd.DataFrame) -> tuple[str, pd.DataFrame]:
    """The gate judged as audited and under every setting of the sensitivity grid
    (``by_setting``: the comparison's differences with a ``setting`` column, core.statistics.sensitivity): each
    line's verdict is its worst (fail over inconclusive over pass), with the setting that gave it.
    Without any setting the lines are inconclusive: robustness was required and not measured."""
    verdict, table = evaluate(gate, differences)
    table = table.assign(setting="as audited")
    settings = sorted(set(by_setting["setting"])) if by_setting is not None and len(by_setting) else []
    if not settings:
        table["verdict"] = table["verdict"].where(table["verdict"] == "fail", "inconclusive")
        table["reason"] = table["reason"] + "; robustness required, but no sensitivity re-scoring is stored"
        return verdict_of(table), table
    rank = {"pass": 0, "inconclusive": 1, "fail": 2}
    rows = table.to_dict("records")
    for name in settings:
        _, t = evaluate(gate, by_setting[by_setting["setting"] == name])
        for i, r in enumerate(t.to_dict("records")):
            if rank[r["verdict"]] > rank[rows[i]["verdict"]]:
                rows[i] = {**r, "setting": name, "reason": f"under {name}: {r['reason']}"}
    worst = pd.DataFrame(rows, columns=list(table.columns))
    return verdict_of(worst), worst


def _judge(ln: GateLine, r: pd.Series) -> dict:
    est, lo, hi, n = float(r["mean_diff"]), float(r["ci_low"]), float(r["ci_high"]), int(r["n_units"])
    if ln.rule == "must_not_drop_by":
        threshold = -ln.margin
        ok, bad = lo > threshold, hi < threshold
        bound = lo
    elif ln.rule == "must_not_rise_by":
        threshold = ln.margin
        ok, bad = hi < threshold, lo > threshold
        bound = hi
    else:  # widening, in the direction of the baseline's gap
        ref = float(r["mean_baseline"]) if abs(float(r["mean_baseline"])) > 1e-12 else float(r["mean_candidate"])
        sign = -1.0 if ref < 0 else 1.0
        est, lo, hi = sign * est, *sorted((sign * lo, sign * hi))
        threshold = ln.margin
        ok, bad = hi < threshold, lo > threshold
        bound = hi
    if not all(map(math.isfinite, (est, lo, hi))):
        return {
            "estimate": est,
            "ci_low": lo,
            "ci_high": hi,
            "threshold": threshold,
            "n_units": n,
            "verdict": "inconclusive",
            "n_units_to_decide": None,
            "reason": "no interval (too few units in both audits)",
        }
    verdict = "pass" if ok else "fail" if bad else "inconclusive"
    need = None
    if verdict == "inconclusive":
        half, dist = (hi - lo) / 2.0, abs(est - threshold)
        need = int(math.ceil(n * (half / dist) ** 2)) if dist > 0 else None
    reason = {
        "pass": f"the bound {bound:+.4f} clears the margin ({threshold:+.4f})",
        "fail": f"the whole interval [{lo:+.4f}, {hi:+.4f}] lies beyond the margin ({threshold:+.4f})",
        "inconclusive": f"the interval [{lo:+.4f}, {hi:+.4f}] holds the margin ({threshold:+.4f})"
        + (
            f": about {need:,} units (profiles; runs or strata x runs for coverage and gaps) "
            "would decide it at this estimate and spread"
            if need
            else ": the estimate sits on the margin, more data cannot decide it"
        ),
    }[verdict]
    return {
        "estimate": est,
        "ci_low": lo,
        "ci_high": hi,
        "threshold": threshold,
        "n_units": n,
        "verdict": verdict,
        "n_units_to_decide": need,
        "reason": reason,
    }


def summary_markdown(gate: Gate, verdict: str, table: pd.DataFrame, notes: Sequence[str] = ()) -> str:
    """The gate's verdict for CI logs: one headline, then each line."""
    head = {"pass": "PASS", "fail": "FAIL", "inconclusive": "INCONCLUSIVE"}[verdict]
    out = [
        f"# Release gate: {head}",
        "",
        f"Candidate `{gate.candidate}` against baseline `{gate.baseline}` ({gate.path or 'gate file'}).",
        "",
    ]
    out += [f"- {n}" for n in notes]
    if notes:
        out.append("")
    out += [
        "| line | template | what | estimate (candidate - baseline) | 95% interval | margin | verdict | why |",
        "| ---: | --- | --- | ---: | --- | ---: | --- | --- |",
    ]
    for r in table.itertuples(index=False):
        what = f"{r.gap} gap in {r.metric}" if r.gap else r.metric
        est = "—" if pd.isna(r.estimate) else f"{r.estimate:+.4f}"
        ci = "—" if pd.isna(r.ci_low) else f"[{r.ci_low:+.4f}, {r.ci_high:+.4f}]"
        out.append(
            f"| {r.line} | {r.template} | {what} ({r.rule.replace('_', ' ')}) | {est} | {ci} | "
            f"{r.margin:g} | **{r.verdict}** | {r.reason} |"
        )
    return "\n".join(out) + "\n"


def verdict_of(table: Optional[pd.DataFrame]) -> str:
    if table is None or not len(table):
        return "inconclusive"
    v = set(table["verdict"])
    return "fail" if "fail" in v else "inconclusive" if "inconclusive" in v else "pass"
