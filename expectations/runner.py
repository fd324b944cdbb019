"""Runs an expectation suite (a JSON file in expectations/suites) with Great Expectations 1.x.

The suite is data: each check names the frame it reads (responses / items / gaps), a GX
expectation class, a column and the threshold it compares against. GX runs in an ephemeral
context (no project folder, no analytics). ``dagster-ge`` supports only GX < 1.0, so the
Dagster asset checks call this runner directly.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Mapping, Optional

import pandas as pd

SUITES_DIR = Path(__file__).resolve().parent / "suites"


@dataclass(frozen=True)
class CheckOutcome:
    name: str
    success: bool
    observed: Optional[float]
    threshold: Optional[float]
    blocking: bool
    description: str
    details: dict


def suite_path(name_or_path: str | Path) -> Path:
    """The file of suite ``name_or_path``: a name (no suffix) is a file of expectations/suites."""
    p = Path(name_or_path)
    return SUITES_DIR / f"{name_or_path}.json" if not p.suffix else p


def load_suite(name_or_path: str | Path) -> dict:
    p = suite_path(name_or_path)
    if not p.exists():
        raise FileNotFoundError(f"expectation suite {p} not found")
    suite = json.loads(p.read_text(encoding="utf-8"))
    for i, c in enumerate(suite.get("checks", [])):
        for key in ("name", "frame", "expectation", "column"):
            if key not in c:
                raise ValueError(f"{p}: check #{i + 1} lacks {key!r}")
    return suite


def _context():
    os.environ.setdefault("GX_ANALYTICS_ENABLED", "false")
    import great_expectations as gx

    ctx = gx.get_context(mode="ephemeral")
    try:  # no progress bars in logs
        ctx.variables.progress_bars = {"globally": False, "metric_calculations": False}
    except Exception:  # noqa: BLE001
        pass
    return gx, ctx


def run_suite(suite: dict, frames: Mapping[str, pd.DataFrame], thresholds: Mapping[str, float]) -> list[CheckOutcome]:
    """Validate ``frames`` against ``suite``; thresholds override the suite's defaults."""
    gx, ctx = _context()
    limits = {**suite.get("defaults", {}), **{k: v for k, v in thresholds.items() if v is not None}}
    outcomes = []
    source = ctx.data_sources.add_pandas(f"{suite['name']}_source")
    by_frame: dict[str, list[dict]] = {}
    for check in suite["checks"]:
        by_frame.setdefault(check["frame"], []).append(check)
    for frame_name, checks in by_frame.items():
        df = frames[frame_name]
        asset = source.add_dataframe_asset(frame_name)
        batch_def = asset.add_batch_definition_whole_dataframe(f"{frame_name}_all")
        for check in checks:
            threshold = limits.get(check["threshold"]) if check.get("threshold") else None
            if df.empty:
                # nothing to measure: an empty frame fails a minimum, passes a maximum / uniqueness
                ok = check.get("bound") != "min_value"
                outcomes.append(
                    CheckOutcome(
                        check["name"],
                        ok,
                        None,
                        threshold,
                        bool(check.get("blocking")),
                        check.get("description", ""),
                        {"note": "no rows to validate"},
                    )
                )
                continue
            kwargs = {"column": check["column"]}
            if threshold is not None:
                kwargs[check.get("bound", "min_value")] = float(threshold)
            expectation = getattr(gx.expectations, check["expectation"])(**kwargs)
            result = batch_def.get_batch(batch_parameters={"dataframe": df}).validate(expectation)
            res = result.result or {}
            observed = res.get("observed_value")
            if observed is None and "unexpected_percent" in res:
                observed = float(res["unexpected_percent"] or 0.0) / 100.0
            if check["expectation"] == "ExpectColumnValuesToBeBetween" and check.get("bound") == "max_value":
                observed = float(df[check["column"]].max())
            outcomes.append(
                CheckOutcome(
                    check["name"],
                    bool(result.success),
                    None if observed is None else float(observed),
                    threshold,
                    bool(check.get("blocking")),
                    check.get("description", ""),
                    {
                        k: v
                        for k, v in res.items()
                        if k in ("element_count", "unexpected_count", "unexpected_percent", "partial_unexpected_list")
                    },
                )
            )
    return outcomes
