"""Words shared by the report's English findings: the attributes' names and aliases (the active design's,
:mod:`..axis_words`), the groups as the sentences name them (:func:`who`), the partition a sentence is about
(:func:`_under`), adjusted p-values and the name of the multiple-testing correction."""

from __future__ import annotations

from typing import Optional

import pandas as pd

from .. import axis_words
from .cells import _is_missing


def _partition_keys(df: pd.DataFrame, model: str, template: str) -> pd.DataFrame:
    out = df.copy()
    if "model" not in out.columns:
        out["model"] = model
    if "template" not in out.columns:
        out["template"] = template
    out["model"] = out["model"].fillna("").astype(str)
    out["template"] = out["template"].fillna("").astype(str)
    return out


def _under(model: str, template: str) -> str:
    if model and template:
        return f"Under model {model} ({template} template)"
    if model:
        return f"Under model {model}"
    return f"Under the {template} template" if template else "Overall"


def who(attr: str, value: str) -> str:
    """The students of one value of axis ``attr`` as the sentences name them (the active design's:
    :func:`axis_words.who`; the study's "low-income students", "female students", "students from Kenya")."""
    return axis_words.who(attr, value)


def _norm_attr(v) -> str:
    """The axis an attribute's spelling names (its name, label, word or an alias in the active design)."""
    return axis_words.canonical(v)


def _fmt_p(p) -> str:
    if _is_missing(p):
        return "p not given"
    p = float(p)
    return "adjusted p < 0.001" if p < 0.001 else f"adjusted p = {p:.3f}"


CORRECTION_NAMES = {
    "holm": "Holm",
    "bh": "Benjamini-Hochberg",
    "fdr_bh": "Benjamini-Hochberg",
    "bonferroni": "Bonferroni",
}


def _correction(stats: Optional[pd.DataFrame], default: str) -> str:
    if stats is not None:
        for c in ("correction", "adjustment", "p_adjust_method"):
            if c in stats.columns and stats[c].notna().any():
                name = str(stats[c].dropna().iloc[0])
                return CORRECTION_NAMES.get(name.strip().lower(), name)
    return CORRECTION_NAMES.get(default.strip().lower(), default)
