"""Benchmark: what the model comparison and the sensitivity grid add to the study-size pipeline
(issue 22 item 4: at most 60 s on 2 cores for 3 models x 6 templates, all comparisons and the grid).

Both figures come from ``benchmarks/pipeline_study.py --save FILE`` (the whole pipeline after
generation through Dagster, 33,780 answers, 18 partitions): one run of the code before the
comparison existed (a ``git archive`` of that commit, ``--save before.json``) and one of this
checkout (``--save after.json``), one after the other on the same machine. Reported: the run's
wall time of each, their difference, and the steps of the new assets in the second run
(``model_comparison``: every pair of the three models on each of the six templates;
``sensitivity``: every significant finding re-scored under 4 settings).

    .venv/bin/python benchmarks/choosing_cost.py --before before.json --after after.json [--write]
"""

from __future__ import annotations

import argparse
import json
import os
import platform
from datetime import date
from pathlib import Path

SECTION = "Choosing a model at study size"
NEW_STEPS = ("model_comparison", "sensitivity")
TARGET_S = 60.0


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--before", required=True)
    ap.add_argument("--after", required=True)
    ap.add_argument("--write", action="store_true")
    a = ap.parse_args()
    before, after = (json.loads(Path(p).read_text(encoding="utf-8")) for p in (a.before, a.after))
    b, c = before["databases"]["SQLite"], after["databases"]["SQLite"]
    new = {k: v for k, v in c["steps"].items() if k in NEW_STEPS}
    report_b, report_c = b["steps"].get("audit_report", 0.0), c["steps"].get("audit_report", 0.0)
    lines = [
        f"`benchmarks/choosing_cost.py`, {date.today().isoformat()}, {platform.machine()}, {os.cpu_count()} cores, "
        f"Python {platform.python_version()}: two runs of `benchmarks/pipeline_study.py` (SQLite, {c['partitions']} "
        f"partitions, {after.get('answers', 0):,} answers: 3 models x 6 templates of the study grid), the code "
        "before the comparison and this checkout, one after the other on the same machine (shared: the "
        "difference of the two whole runs carries that noise; the new steps are timed inside one run).",
        "",
        "| figure | seconds |",
        "| --- | --- |",
        f"| whole pipeline, before | {b['wall_s']:.1f} |",
        f"| whole pipeline, after | {c['wall_s']:.1f} |",
        f"| difference (after - before) | {c['wall_s'] - b['wall_s']:+.1f} |",
    ]
    lines += [f"| step `{k}` (after) | {v:.1f} |" for k, v in sorted(new.items())]
    lines += [
        f"| step `audit_report`, before / after (the comparison and sensitivity sections) | "
        f"{report_b:.1f} / {report_c:.1f} |",
        f"| **added by the new steps** (their sum and the report's change) | "
        f"**{sum(new.values()) + report_c - report_b:.1f}** |",
    ]
    added = sum(new.values()) + report_c - report_b
    verdict = "met" if added <= TARGET_S else "missed"
    text = (
        "\n".join(lines) + f"\n\n**Target (issue 22.4): at most {TARGET_S:.0f} s added: {verdict}, "
        f"{added:.1f} s added**.\n"
    )
    print(text)
    if a.write:
        import sys

        sys.path.insert(0, str(Path(__file__).resolve().parent))
        from _doc import write_section

        write_section(SECTION, text)


if __name__ == "__main__":
    main()
