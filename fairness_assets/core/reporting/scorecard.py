"""The scorecard: the audit's headline numbers at a glance (issue 23.3). Pure: pandas only.

At the top of the report (HTML and Markdown), in ``summary.md`` of ``fairness-audit score`` and in
the metadata of ``audit_report``, from the same inputs by the same code:

- one row per model x template (:func:`partition_row`, computed from the partition's full tables):
  mean DRS with its 95% bootstrap interval (the run-variability interval the statistics already
  hold: over runs, or over profiles where the partition has one run), mean Acad where the template
  states an interest, GRS coverage (countries with GRS > 0 of the corpus countries), the US+UK
  share of the located recommendations, the parse rate (answers parsed, ``ok`` or ``partial``: the
  ``parse_rate`` check) and the match rate (items matched to a corpus university: the
  ``match_rate`` check); with a model comparison, the model's DRS rank on its template;
- the strongest significant behaviour findings (:func:`behaviour_findings`): the behaviour rows of
  the counterfactual pairs (``behaviour_needs``) and of the one-vs-rest geographic contrasts
  (``geo_contrasts``) that are significant after correction, largest |estimate| first, each with
  its interval and adjusted p; "no significant behaviour finding" when there is none;
- the comparison of the models of each template and the release gate's verdict, where they exist.

Every cell is text: a number rounded for reading, or why it is empty ("not defined: the template
states no subject interest", "not compared: ..."); never ``nan``.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any, Mapping, Optional

import pandas as pd

from ..common import metric_catalogue as catalogue
from ..reference import axes
from . import axis_words
from . import report as rep

TITLE = "Scorecard"
N_FINDINGS = 3
PARSED = ("ok", "partial")  # the parse_rate check's "parsed" (core.understanding.quality.response_frame)
ROW_COLUMNS = (
    "model",
    "template",
    "drs",
    "drs_ci_low",
    "drs_ci_high",
    "drs_unit",
    "drs_n_units",
    "drs_note",
    "acad",
    "acad_ci_low",
    "acad_ci_high",
    "acad_unit",
    "acad_n_units",
    "grs_positive",
    "corpus_countries",
    "us_uk_share",
    "located",
    "answers",
    "parsed",
    "items",
    "matched",
)
FINDING_COLUMNS = (
    "model",
    "template",
    "source",
    "attribute",
    "lower",
    "higher",
    "metric",
    "estimate",
    "ci_low",
    "ci_high",
    "p_adjusted",
    "family_size",
    "correction",
)
METRIC_NAMES = {**catalogue.labels("decompose"), **catalogue.labels("geography")}  # the findings' metrics
UNIT_WORDS = {"run": "runs", "profile": "profiles"}
NOT_COMPARED = "not compared: the only model audited on this template"


# ----------------------------------------------------------------------------- numbers
def _num(v: Any) -> float:
    try:
        f = float(v)
    except (TypeError, ValueError):
        return float("nan")
    return f if math.isfinite(f) else float("nan")


def _finite(*values: Any) -> bool:
    return all(math.isfinite(_num(v)) for v in values)


def _text(v: Any) -> str:
    """A text cell ("" where it is missing)."""
    return "" if v is None or (isinstance(v, float) and math.isnan(v)) or v is pd.NA else str(v)


def _int(v: Any) -> int:
    """A count (0 where it is missing)."""
    f = _num(v)
    return int(f) if math.isfinite(f) else 0


def _interval(var: Optional[pd.DataFrame], metric: str) -> dict:
    """The overall mean of ``metric`` and its interval from ``stats.run_variability``: over runs,
    else over profiles (one run: no run interval), else the mean alone with the reason."""
    out = {"mean": float("nan"), "ci_low": float("nan"), "ci_high": float("nan"), "unit": "", "n_units": 0, "note": ""}
    if var is None or not len(var) or not {"group_by", "metric", "unit", "mean"} <= set(var.columns):
        return out
    rows = var[(var["group_by"] == "overall") & (var["metric"] == metric)]
    if not len(rows):
        return out
    notes = []
    for unit in ("run", "profile"):
        r = rows[rows["unit"] == unit]
        if not len(r):
            continue
        r = r.iloc[0]
        if not math.isfinite(out["mean"]):
            out["mean"] = _num(r["mean"])
        if _finite(r.get("ci_low"), r.get("ci_high")):
            out.update(
                mean=_num(r["mean"]),
                ci_low=_num(r["ci_low"]),
                ci_high=_num(r["ci_high"]),
                unit=unit,
                n_units=int(_num(r.get("n_units")) if _finite(r.get("n_units")) else 0),
            )
            return out
        note = r.get("note")
        if isinstance(note, str) and note.strip():
            notes.append(note.strip())
    out["note"] = "; ".join(dict.fromkeys(notes)) or "no interval"
    return out


def partition_row(
    model: str,
    template: str,
    tables: Mapping[str, pd.DataFrame],
    statistics: Optional[Mapping[str, pd.DataFrame]] = None,
    grs: Optional[pd.DataFrame] = None,
) -> pd.DataFrame:
    """The scorecard's numbers of one model x template (one row, :data:`ROW_COLUMNS`), from its full
    tables: ``tables`` (``drs_responses``, ``drs_summary``, ``concentration``: the analysis tables),
    ``statistics`` (``run_variability``) and ``grs`` (``grs_by_country``, one row per corpus country)."""
    statistics = statistics or {}
    var = statistics.get("run_variability")
    drs, acad = _interval(var, "drs"), _interval(var, "acad")
    summary = tables.get("drs_summary")
    if not math.isfinite(drs["mean"]) and summary is not None and len(summary) and "drs" in summary:
        overall = summary[summary["group_by"] == "overall"] if "group_by" in summary else summary
        if len(overall):
            drs.update(mean=_num(overall["drs"].iloc[0]), note="no run-to-run statistics stored")
            if "acad" in overall:
                acad.update(mean=_num(overall["acad"].iloc[0]), note="no run-to-run statistics stored")
    responses = tables.get("drs_responses")
    answers = parsed = items = matched = 0
    if responses is not None and len(responses):
        answers = int(responses["response_id"].nunique()) if "response_id" in responses else len(responses)
        first = responses.drop_duplicates("response_id") if "response_id" in responses else responses
        parsed = int(first["parse_status"].astype(str).isin(PARSED).sum()) if "parse_status" in first else 0
        items = int(pd.to_numeric(first.get("n_items"), errors="coerce").fillna(0).sum()) if "n_items" in first else 0
        matched = (
            int(pd.to_numeric(first.get("n_matched"), errors="coerce").fillna(0).sum()) if "n_matched" in first else 0
        )
    conc = tables.get("concentration")
    share = (
        _num(conc["us_uk_share"].iloc[0]) if conc is not None and len(conc) and "us_uk_share" in conc else float("nan")
    )
    located = (
        int(_num(conc["recommendations_with_country"].iloc[0]))
        if conc is not None
        and len(conc)
        and "recommendations_with_country" in conc
        and _finite(conc["recommendations_with_country"].iloc[0])
        else 0
    )
    positive = countries = 0
    if grs is not None and len(grs) and "grs" in grs:
        positive = int((pd.to_numeric(grs["grs"], errors="coerce").fillna(0) > 0).sum())
        countries = int(grs["iso3"].nunique()) if "iso3" in grs else len(grs)
    row = {
        "model": str(model),
        "template": str(template),
        "drs": drs["mean"],
        "drs_ci_low": drs["ci_low"],
        "drs_ci_high": drs["ci_high"],
        "drs_unit": drs["unit"],
        "drs_n_units": drs["n_units"],
        "drs_note": drs["note"],
        "acad": acad["mean"],
        "acad_ci_low": acad["ci_low"],
        "acad_ci_high": acad["ci_high"],
        "acad_unit": acad["unit"],
        "acad_n_units": acad["n_units"],
        "grs_positive": positive,
        "corpus_countries": countries,
        "us_uk_share": share,
        "located": located,
        "answers": answers,
        "parsed": parsed,
        "items": items,
        "matched": matched,
    }
    return pd.DataFrame([row], columns=list(ROW_COLUMNS))


# ----------------------------------------------------------------------------- behaviour findings
def _significant(df: pd.DataFrame) -> pd.Series:
    return df["significant"].map(rep.truthy).eq(True) if "significant" in df else pd.Series(False, index=df.index)


def _oriented(d: float, lo: float, hi: float, first_is_lower: bool) -> tuple[float, float, float]:
    """(estimate, ci_low, ci_high) of lower minus higher, from a difference ``d`` of second minus first."""
    return (-d, -hi, -lo) if first_is_lower else (d, lo, hi)


def _who(attribute: str, value: str) -> str:
    if value == "rest":
        return "the other students"
    if attribute in axes.names(exclude=("home",)):  # the lambda and none axes (the study's class and gender)
        return rep.who(attribute, value)
    if attribute == "south_vs_north" or value in ("Global South", "Global North"):
        return f"students from the {value}"
    return f"students from {value}"


def _geo_attribute(analysis: str) -> str:
    """The attribute a geographic contrast's analysis varies, in words: the region, North / South, or the
    active design's home axis (``<home>_vs_rest``: the study's nationality)."""
    home = axes.home()
    names = {
        "south_vs_north": "region (Global South / North)",
        "region_vs_rest": "region",
        **({f"{home}_vs_rest": axis_words.word(home)} if home else {}),
    }
    return names.get(analysis, analysis)


def behaviour_findings(
    behaviour_needs: Optional[pd.DataFrame] = None,
    geo_contrasts: Optional[pd.DataFrame] = None,
    *,
    model: str = "",
    template: str = "",
    n: int = N_FINDINGS,
) -> pd.DataFrame:
    """The ``n`` strongest significant behaviour findings (:data:`FINDING_COLUMNS`), largest |estimate|
    first: behaviour rows (``component == "behaviour"``) with a test, significant after the
    correction, of the counterfactual pairs (``decompose.behaviour_needs``: ``mean_diff`` = value_b's
    lists minus value_a's, scored for the same students) and of the one-vs-rest geographic contrasts
    (``geostats.geo_contrasts``: ``mean_diff`` = the group's lists minus the rest's, scored for the
    group's students). Each is oriented lower minus higher: ``lower`` names the group whose lists score
    lower, ``estimate`` <= 0 and its interval follow. ``model`` / ``template`` fill frames without
    those columns. Applied to each partition and then to the union, it gives the union's top ``n``."""
    rows: list[dict] = []
    for source, df in (("counterfactual pair", behaviour_needs), ("geographic contrast", geo_contrasts)):
        if df is None or not len(df) or "component" not in df or "mean_diff" not in df:
            continue
        sel = df[(df["component"].astype(str) == "behaviour") & _significant(df)]
        if "p_value" in sel:
            sel = sel[pd.to_numeric(sel["p_value"], errors="coerce").notna()]
        for r in sel.to_dict("records"):
            d, lo, hi = _num(r.get("mean_diff")), _num(r.get("ci_low")), _num(r.get("ci_high"))
            if not math.isfinite(d):
                continue
            if source == "counterfactual pair":
                attr, first, second = str(r.get("attribute")), str(r.get("value_a")), str(r.get("value_b"))
                # d = second - first: the first is lower when d >= 0
                lower, higher = (first, second) if d >= 0 else (second, first)
                est, lo, hi = _oriented(d, lo, hi, first_is_lower=d >= 0)
                attribute = axis_words.word(attr)  # the active design's word (core/reference/axes.py)
                lower_who, higher_who = _who(attr, lower), f"otherwise identical {_who(attr, higher)}"
            else:
                analysis, value, ref = str(r.get("analysis")), str(r.get("value")), str(r.get("reference"))
                # d = value - reference: the value is lower when d < 0
                lower, higher = (ref, value) if d >= 0 else (value, ref)
                est, lo, hi = _oriented(d, lo, hi, first_is_lower=d >= 0)  # the reference is the first
                attribute = _geo_attribute(analysis)
                lower_who, higher_who = _who(analysis, lower), _who(analysis, higher)
            rows.append(
                {
                    "model": str(r.get("model") or model),
                    "template": str(r.get("template") or template),
                    "source": source,
                    "attribute": attribute,
                    "lower": lower_who,
                    "higher": higher_who,
                    "metric": str(r.get("metric")),
                    "estimate": est,
                    "ci_low": lo,
                    "ci_high": hi,
                    "p_adjusted": _num(r.get("p_adjusted")),
                    "family_size": _num(r.get("family_size")),
                    "correction": str(r.get("correction") or "holm"),
                }
            )
    return top_findings(pd.DataFrame(rows, columns=list(FINDING_COLUMNS)), n)


def top_findings(findings: pd.DataFrame, n: int = N_FINDINGS) -> pd.DataFrame:
    """The ``n`` largest |estimate| of ``findings`` (ties in a fixed order)."""
    if findings is None or not len(findings):
        return pd.DataFrame(columns=list(FINDING_COLUMNS))
    f = findings.assign(_abs=pd.to_numeric(findings["estimate"], errors="coerce").abs())
    f = f.sort_values(
        ["_abs", "model", "template", "source", "attribute", "metric", "lower", "higher"],
        ascending=[False, True, True, True, True, True, True, True],
        kind="stable",
    )
    return f.drop(columns="_abs").head(n).reset_index(drop=True)


# ----------------------------------------------------------------------------- the scorecard
@dataclass(frozen=True)
class Scorecard:
    """``table``: one row per model x template, every cell text (the scorecard itself);
    ``findings``: the strongest behaviour findings as text (empty: none, ``notes`` says so);
    ``verdicts``: the comparison of each template's models and the release gate (empty when there is
    neither); ``rows`` / ``finding_rows``: the numbers behind them."""

    table: pd.DataFrame
    findings: pd.DataFrame
    verdicts: pd.DataFrame
    notes: list[str] = field(default_factory=list)
    rows: pd.DataFrame = field(default_factory=pd.DataFrame)
    finding_rows: pd.DataFrame = field(default_factory=pd.DataFrame)


def _f3(v: float) -> str:
    return f"{v:.3f}"


def _signed(v: float) -> str:
    return f"{v:+.3f}"


def _pct(v: float) -> str:
    return f"{v:.1%}"


def _p(p: float, correction: str) -> str:
    name = rep.CORRECTION_NAMES.get(str(correction).strip().lower(), str(correction))
    if not math.isfinite(p):
        return f"{name}-adjusted p not given"
    return f"{name}-adjusted p < 0.001" if p < 0.001 else f"{name}-adjusted p = {p:.3f}"


def _mean_cell(mean: float, lo: float, hi: float, unit: str, n_units: int, note: str, missing: str) -> str:
    if not math.isfinite(mean):
        return missing
    if _finite(lo, hi):
        return f"{_f3(mean)} [{_f3(lo)}, {_f3(hi)}] over {n_units} {UNIT_WORDS.get(unit, unit + 's')}"
    return f"{_f3(mean)} (no interval: {note or 'too few runs and profiles'})"


def _rate(k: int, n: int, what: str) -> str:
    return f"{_pct(k / n)} ({k} of {n} {what})" if n else f"no {what}"


def _ranks(leaderboard: Optional[pd.DataFrame]) -> dict[tuple[str, str], str]:
    """(model, template) -> its DRS rank cell, from the comparison's leaderboard."""
    if leaderboard is None or not len(leaderboard) or "metric" not in leaderboard:
        return {}
    board = leaderboard[leaderboard["metric"].astype(str) == "drs"]
    out = {}
    for template, g in board.groupby("template", sort=False):
        for r in g.to_dict("records"):
            rank = _text(r.get("rank")).strip() or "not ranked"
            tied = _text(r.get("tied_with")).strip()
            out[(str(r["model"]), str(template))] = f"DRS rank {rank} of {len(g)}" + (
                f" (tied with {tied})" if tied else ""
            )
    return out


def _comparison_lines(differences: Optional[pd.DataFrame]) -> list[dict]:
    """One line per template and pair of models: B - A in DRS with its interval and significance,
    and how many of the pair's paired differences are significant."""
    if differences is None or not len(differences) or not {"template", "model_a", "model_b"} <= set(differences):
        return []
    d = differences.assign(_sig=_significant(differences))
    out = []
    for (template, a, b), g in d.groupby(["template", "model_a", "model_b"], sort=True):
        gap = g["gap"].fillna("").astype(str) if "gap" in g else pd.Series("", index=g.index)
        drs = g[(g["metric"].astype(str) == "drs") & (gap == "")]
        if len(drs):
            r = drs.iloc[0]
            est = _num(r["mean_diff"])
            text = (
                f"DRS {_signed(est)}"
                + (
                    f" [{_signed(_num(r['ci_low']))}, {_signed(_num(r['ci_high']))}]"
                    if _finite(r.get("ci_low"), r.get("ci_high"))
                    else ""
                )
                + f", {'significant' if r['_sig'] else 'not significant'} "
                f"({_p(_num(r.get('p_adjusted')), r.get('correction') or 'holm')})"
            )
        else:
            text = "no DRS difference computed"
        text += f"; {int(g['_sig'].sum())} of {len(g)} paired differences significant"
        out.append({"template": str(template), "what": f"model comparison: {b} - {a}", "verdict": text})
    return out


def _gate_lines(gate: Optional[pd.DataFrame]) -> list[dict]:
    """The release gate: its overall verdict (the worst line), then each line."""
    if gate is None or not len(gate) or "verdict" not in gate:
        return []
    verdicts = gate["verdict"].astype(str)
    worst = "fail" if (verdicts == "fail").any() else "inconclusive" if (verdicts == "inconclusive").any() else "pass"
    counts = ", ".join(
        f"{int((verdicts == v).sum())} {v}" for v in ("pass", "fail", "inconclusive") if (verdicts == v).any()
    )
    templates = ", ".join(sorted(set(gate["template"].astype(str)))) if "template" in gate else ""
    out = [
        {
            "template": templates,
            "what": "release gate",
            "verdict": f"{worst.upper()} ({counts} of {len(gate)} line{'s' if len(gate) != 1 else ''})",
        }
    ]
    for r in gate.to_dict("records"):
        gap = _text(r.get("gap"))
        what = f"{gap} gap in {r.get('metric')}" if gap else METRIC_NAMES.get(str(r.get("metric")), r.get("metric"))
        margin = _num(r.get("margin"))
        line = int(_num(r.get("line"))) if _finite(r.get("line")) else ""
        reason = _text(r.get("reason"))
        out.append(
            {
                "template": str(r.get("template", "")),
                "what": f"gate line {line}: {what} {str(r.get('rule', '')).replace('_', ' ')}"
                + (f" {margin:g}" if math.isfinite(margin) else ""),
                "verdict": f"{r.get('verdict')}" + (f": {reason}" if reason else ""),
            }
        )
    return out


def build(
    rows: pd.DataFrame,
    findings: Optional[pd.DataFrame] = None,
    comparison: Optional[Mapping[str, pd.DataFrame]] = None,
    n: int = N_FINDINGS,
) -> Scorecard:
    """The scorecard from the partitions' rows (:func:`partition_row`, concatenated), their behaviour
    findings (:func:`behaviour_findings`, concatenated: the ``n`` strongest are kept) and the model
    comparison's tables (``differences``, ``leaderboard``, ``gate``: the ``model_comparison`` asset;
    None or empty: no comparison)."""
    rows = (
        (rows if rows is not None else pd.DataFrame(columns=list(ROW_COLUMNS)))
        .sort_values(["model", "template"], kind="stable")
        .reset_index(drop=True)
    )
    comparison = comparison or {}
    differences, board, gate = (comparison.get(k) for k in ("differences", "leaderboard", "gate"))
    compared = differences is not None and len(differences) > 0
    ranks = _ranks(board) if compared else {}
    table = []
    for r in rows.to_dict("records"):
        cell = {
            "model": r["model"],
            "template": r["template"],
            "mean DRS [95% interval]": _mean_cell(
                _num(r["drs"]),
                _num(r["drs_ci_low"]),
                _num(r["drs_ci_high"]),
                _text(r["drs_unit"]),
                _int(r["drs_n_units"]),
                _text(r["drs_note"]),
                "no scored answer",
            ),
            "mean Acad [95% interval]": _mean_cell(
                _num(r["acad"]),
                _num(r["acad_ci_low"]),
                _num(r["acad_ci_high"]),
                _text(r["acad_unit"]),
                _int(r["acad_n_units"]),
                "",
                "not defined: the template states no subject interest",
            ),
            "GRS coverage": (
                f"{_int(r['grs_positive'])} of {_int(r['corpus_countries'])} corpus countries"
                if _int(r["corpus_countries"])
                else "no GRS stored"
            ),
            "US+UK share": (
                f"{_pct(_num(r['us_uk_share']))} of {_int(r['located'])} located recommendations"
                if _finite(r["us_uk_share"])
                else "no recommendation located in a country"
            ),
            "parse rate": _rate(_int(r["parsed"]), _int(r["answers"]), "answers"),
            "match rate": _rate(_int(r["matched"]), _int(r["items"]), "items"),
        }
        if compared:
            cell["compared (DRS rank)"] = ranks.get((str(r["model"]), str(r["template"])), NOT_COMPARED)
        table.append(cell)
    columns = [
        "model",
        "template",
        "mean DRS [95% interval]",
        "mean Acad [95% interval]",
        "GRS coverage",
        "US+UK share",
        "parse rate",
        "match rate",
    ] + (["compared (DRS rank)"] if compared else [])
    top = top_findings(findings if findings is not None else pd.DataFrame(columns=list(FINDING_COLUMNS)), n)
    shown = pd.DataFrame(
        [
            {
                "model": f["model"],
                "template": f["template"],
                "behaviour finding": f"lists given to {f['lower']} vs {f['higher']} ({f['attribute']}, {f['source']})",
                "metric": METRIC_NAMES.get(f["metric"], f["metric"]),
                "lower - higher [95% interval]": f"{_signed(f['estimate'])}"
                + (
                    f" [{_signed(f['ci_low'])}, {_signed(f['ci_high'])}]"
                    if _finite(f["ci_low"], f["ci_high"])
                    else " [no interval]"
                ),
                "adjusted p": _p(_num(f["p_adjusted"]), f["correction"])
                + (f" ({int(f['family_size'])} tests in the family)" if _finite(f["family_size"]) else ""),
            }
            for f in top.to_dict("records")
        ],
        columns=["model", "template", "behaviour finding", "metric", "lower - higher [95% interval]", "adjusted p"],
    )
    notes = []
    if not len(top):
        notes.append(
            "No significant behaviour finding: no behaviour part (the lists given to two groups of "
            "students, scored for the same students) of any counterfactual pair or geographic contrast is "
            "significant after correction."
        )
    lines = _comparison_lines(differences) + _gate_lines(gate)
    if not lines:
        notes.append(
            "Models not compared: no template has two audited models, and no release gate is configured "
            "(FAIRNESS_GATE_FILE)."
        )
    elif not _gate_lines(gate):
        notes.append("No release gate is configured (FAIRNESS_GATE_FILE): the comparison is shown without a verdict.")
    verdicts = pd.DataFrame(lines, columns=["template", "what", "verdict"])
    return Scorecard(
        table=pd.DataFrame(table, columns=columns),
        findings=shown,
        verdicts=verdicts,
        notes=notes,
        rows=rows,
        finding_rows=top,
    )


INTRO = (
    "The audit's headline numbers per model and template (95% bootstrap intervals over runs, or over profiles "
    "where a partition has one run; GRS coverage: the corpus countries with a GRS above 0; parse and match rates "
    "as the parse-quality checks count them), its strongest behaviour findings, and the model comparison and "
    "release gate where they exist."
)


def section(card: Scorecard) -> rep.ReportSection:
    """The scorecard as the report's first section."""
    tables = {"Per model and template": card.table}
    if len(card.findings):
        tables[f"The {len(card.findings)} strongest behaviour finding{'s' if len(card.findings) != 1 else ''}"] = (
            card.findings
        )
    if len(card.verdicts):
        tables["Model comparison and release gate"] = card.verdicts
    return rep.ReportSection("scorecard", TITLE, intro=[INTRO], tables=tables, notes=list(card.notes))


def markdown(card: Scorecard) -> str:
    """The scorecard in Markdown (``## Scorecard`` and its tables), as the report shows it."""
    return "\n".join(rep.section_markdown(section(card), rep.MAX_ROWS, "figures")).strip() + "\n"
