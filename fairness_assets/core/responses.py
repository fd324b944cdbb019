"""Bring-your-own generations: reading a responses file (CSV, JSONL or Parquet).

Columns (case-insensitive; documented in docs/responses_format.md):

- ``model``, ``template``, ``run``                            required
- ``gender``, ``economic_class``, ``nationality``              the profile: all three, or exactly
                                                               one for the reduced-context templates
- ``response``                                                 the model's full answer, or
- ``university``, ``program``, ``country`` (+ ``item_index``)  answers already split into items

A file that cannot be read, or lacks a required column, fails with a message naming the file
and the column. Rows that cannot be used (an unknown gender, a missing model, ...) are not
dropped silently: they are returned in a rejects table (file row, column, reason) and counted.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Callable, Mapping, Optional

import numpy as np
import pandas as pd

from .profiles import ECONOMIC_CLASSES, GENDERS, profile_id

if TYPE_CHECKING:
    from .prompts import PromptTemplate

REQUIRED = ("model", "template", "run")
PROFILE_COLS = ("gender", "economic_class", "nationality")
ITEM_COLS = ("university", "program", "country")
_ALIASES = {
    "class": "economic_class", "economic class": "economic_class", "income": "economic_class",
    "economicclass": "economic_class", "text": "response", "output": "response", "generation": "response",
    "answer": "response", "sample": "run", "run_id": "run", "seed_run": "run", "prompt_template": "template",
    "model_name": "model", "model_id": "model", "institution": "university", "programme": "program",
    "item": "item_index", "rank": "item_index",
}
_CLASS_VALUES = {
    "high": "high", "high-income": "high", "high income": "high", "rich": "high", "upper": "high",
    "middle": "middle", "moderate": "middle", "middle-income": "middle", "middle income": "middle",
    "low": "low", "low-income": "low", "low income": "low", "poor": "low",
}
_GENDER_VALUES = {g: g for g in GENDERS} | {"man": "male", "woman": "female", "non-binary": "transgender",
                                            "nonbinary": "transgender", "trans": "transgender"}


class ResponsesFileError(ValueError):
    """A responses file that cannot be used at all; names the file, row and column."""


@dataclass
class ResponsesReport:
    path: str
    rows_read: int
    rows_used: int
    rejects: pd.DataFrame = field(default_factory=lambda: pd.DataFrame(columns=["row", "column", "value", "reason"]))
    split_items: bool = False

    @property
    def rows_rejected(self) -> int:
        return int(self.rejects["row"].nunique()) if len(self.rejects) else 0


def _read(path: Path) -> tuple[pd.DataFrame, np.ndarray]:
    suffix = "".join(path.suffixes[-2:]).lower() if path.suffix.lower() == ".gz" else path.suffix.lower()
    try:
        if suffix in (".csv", ".csv.gz", ".tsv"):
            df = pd.read_csv(path, dtype=str, keep_default_na=False, sep="\t" if suffix == ".tsv" else ",",
                             encoding="utf-8-sig")
            rows = np.arange(2, len(df) + 2)  # line numbers, header is line 1
        elif suffix in (".jsonl", ".ndjson", ".jsonl.gz"):
            records, rows = [], []
            opener = __import__("gzip").open if suffix.endswith(".gz") else open
            with opener(path, "rt", encoding="utf-8") as fh:
                for lineno, line in enumerate(fh, start=1):
                    if not line.strip():
                        continue
                    try:
                        obj = json.loads(line)
                    except ValueError as exc:
                        raise ResponsesFileError(f"{path}: line {lineno}: not valid JSON ({exc})") from None
                    if not isinstance(obj, dict):
                        raise ResponsesFileError(f"{path}: line {lineno}: expected a JSON object per line")
                    records.append(obj)
                    rows.append(lineno)
            df = pd.DataFrame.from_records(records)
            rows = np.asarray(rows, dtype=np.int64)
        elif suffix in (".parquet", ".pq"):
            df = pd.read_parquet(path)
            rows = np.arange(1, len(df) + 1)  # 1-based row numbers
        else:
            raise ResponsesFileError(f"{path}: unknown file type {suffix!r}; use .csv, .jsonl or .parquet")
    except ResponsesFileError:
        raise
    except Exception as exc:  # noqa: BLE001 - any reader failure names the file
        raise ResponsesFileError(f"{path}: cannot be read as {suffix.lstrip('.')} ({type(exc).__name__}: {exc})") from None
    return df, rows


def read_responses(
    path: str | Path,
    resolve_nationality: Optional[Callable[[str], Optional[str]]] = None,
) -> tuple[pd.DataFrame, ResponsesReport]:
    """Read and validate a responses file.

    Returns one row per response (or per item when the file is already split) with the
    columns ``source_row``, ``model``, ``template``, ``run``, ``gender``, ``economic_class``,
    ``nationality``, ``profile_set``, ``profile_id`` and ``response`` (or ``university``,
    ``program``, ``country``, ``item_index``), plus the report of unusable rows.
    """
    path = Path(path)
    if not path.exists():
        raise ResponsesFileError(f"{path}: responses file not found")
    df, rows = _read(path)
    if df.empty:
        raise ResponsesFileError(f"{path}: the responses file has no rows")
    df.columns = [_ALIASES.get(str(c).strip().lower(), str(c).strip().lower()) for c in df.columns]
    missing = [c for c in REQUIRED if c not in df.columns]
    if missing:
        raise ResponsesFileError(
            f"{path}: missing column(s) {missing} (found {list(df.columns)}); see docs/responses_format.md"
        )
    split = "response" not in df.columns
    if split and "university" not in df.columns:
        raise ResponsesFileError(f"{path}: needs a 'response' column, or 'university' (+ 'program', 'country') columns")
    if not any(c in df.columns for c in PROFILE_COLS):
        raise ResponsesFileError(f"{path}: needs at least one of the profile columns {list(PROFILE_COLS)}")
    for c in PROFILE_COLS + (ITEM_COLS if split else ("response",)):
        if c not in df.columns:
            df[c] = None
    out = pd.DataFrame({"source_row": rows})
    rejects = []

    def text(col):
        s = df[col].astype("object")
        s = s.where(s.notna(), None)
        return s.map(lambda v: None if v is None or str(v).strip() == "" else str(v).strip())

    for c in ("model", "template"):
        out[c] = text(c).to_numpy()
        for r in out.loc[out[c].isna(), "source_row"]:
            rejects.append((r, c, None, f"empty {c}"))
    run_txt = text("run")
    run_num = pd.to_numeric(run_txt, errors="coerce")
    bad_run = run_num.isna() | (run_num < 0) | (run_num != np.floor(run_num.fillna(0)))
    for r, v in zip(out.loc[bad_run.to_numpy(), "source_row"], run_txt[bad_run]):
        rejects.append((r, "run", v, "run must be a whole number >= 0"))
    out["run"] = run_num.where(~bad_run).astype("Int64").to_numpy()

    g = text("gender").map(lambda v: None if v is None else _GENDER_VALUES.get(v.lower(), "\x00" + v))
    c = text("economic_class").map(lambda v: None if v is None else _CLASS_VALUES.get(v.lower(), "\x00" + v))
    n = text("nationality")
    for col, s, allowed in (("gender", g, GENDERS), ("economic_class", c, ECONOMIC_CLASSES)):
        bad = s.notna() & s.str.startswith("\x00")
        for r, v in zip(out.loc[bad.to_numpy(), "source_row"], s[bad]):
            rejects.append((r, col, v[1:], f"unknown {col} (use one of {list(allowed)})"))
    if resolve_nationality is not None:
        uniq = {v: resolve_nationality(v) for v in pd.unique(n.dropna())}
        bad = n.notna() & n.map(lambda v: v is not None and uniq.get(v) is None)
        for r, v in zip(out.loc[bad.to_numpy(), "source_row"], n[bad]):
            rejects.append((r, "nationality", v, "nationality is not a country that can be resolved"))
    out["gender"], out["economic_class"], out["nationality"] = g.to_numpy(), c.to_numpy(), n.to_numpy()
    present = out[list(PROFILE_COLS)].notna().sum(axis=1)
    pset = np.select(
        [present == 3, out["gender"].notna() & (present == 1), out["economic_class"].notna() & (present == 1),
         out["nationality"].notna() & (present == 1)],
        ["full", "gender_only", "class_only", "nationality_only"], default="",
    )
    for r in out.loc[pset == "", "source_row"]:
        rejects.append((r, "gender/economic_class/nationality", None,
                        "a profile needs all three attributes, or exactly one (reduced context)"))
    out["profile_set"] = pset
    out["profile_id"] = [
        profile_id(s, gg, cc, nn) if s else None
        for s, gg, cc, nn in zip(pset, out["gender"], out["economic_class"], out["nationality"])
    ]
    if split:
        for col in ITEM_COLS:
            out[col] = text(col).to_numpy()
        idx = pd.to_numeric(text("item_index"), errors="coerce") if "item_index" in df.columns else None
        out["item_index"] = idx.to_numpy() if idx is not None else np.nan
    else:
        resp = df["response"].astype("object")
        out["response"] = resp.where(resp.notna(), None).map(lambda v: None if v is None else str(v)).to_numpy()

    rej = pd.DataFrame(rejects, columns=["row", "column", "value", "reason"]).sort_values("row", kind="stable")
    bad_rows = set(rej["row"])
    used = out[~out["source_row"].isin(bad_rows)].reset_index(drop=True)
    if split:
        # items without an explicit position are numbered in file order per response
        key = ["model", "template", "profile_id", "run"]
        order = used.groupby(key, sort=False, dropna=False).cumcount()
        used["item_index"] = used["item_index"].fillna(order).astype(np.int64)
    report = ResponsesReport(str(path), rows_read=len(out), rows_used=len(used), rejects=rej, split_items=split)
    return used, report


def to_generations(
    responses: pd.DataFrame,
    templates: Mapping[str, "PromptTemplate"],
    source: str,
    source_sha256: str,
) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Imported responses -> generation rows (prompt re-rendered from the template files).

    Returns (generations, rejects): rows whose template is unknown, or whose template does
    not fit the profile, and repeated (model, template, profile, run) samples are rejected
    with a reason, never dropped silently.
    """
    from .generation import sample_ids

    rejects = []
    known = responses["template"].isin(list(templates))
    for r, t in zip(responses.loc[~known, "source_row"], responses.loc[~known, "template"]):
        rejects.append((r, "template", t, f"unknown template (known: {sorted(templates)})"))
    ok = responses[known].copy()
    fits = [templates[t].profile_set == s for t, s in zip(ok["template"], ok["profile_set"])]
    fits = np.asarray(fits, dtype=bool)
    for r, t, s in zip(ok.loc[~fits, "source_row"], ok.loc[~fits, "template"], ok.loc[~fits, "profile_set"]):
        rejects.append((r, "template", t, f"template {t!r} is for {templates[t].profile_set} profiles, row has a {s} profile"))
    ok = sample_ids(ok[fits])
    dup = ok.duplicated("response_id", keep="first")
    for r, rid in zip(ok.loc[dup, "source_row"], ok.loc[dup, "response_id"]):
        rejects.append((r, "model/template/profile/run", rid, "repeats an earlier row's sample"))
    ok = ok[~dup].reset_index(drop=True)
    ok["prompt"] = [templates[t].render(g, c, n) for t, g, c, n in
                    zip(ok["template"], ok["gender"], ok["economic_class"], ok["nationality"])]
    ok["template_hash"] = [templates[t].sha256 for t in ok["template"]]
    ok["audit_id"] = f"import-{source_sha256[:12]}"
    ok["model_source"] = source
    ok["model_revision"] = source_sha256
    ok["backend"] = "file"
    ok["decoding_json"] = "{}"
    cols = ["partition_key", "audit_id", "response_id", "model", "template", "template_hash", "profile_id", "gender",
            "economic_class", "nationality", "run", "seed", "prompt", "response", "model_source", "model_revision",
            "backend", "decoding_json"]
    ok["run"] = ok["run"].astype(np.int64)
    rej = pd.DataFrame(rejects, columns=["row", "column", "value", "reason"])
    return ok[cols], rej
