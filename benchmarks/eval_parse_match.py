"""Parse + match accuracy on the hand-written evaluation sets; writes docs/parse_match.md's table.

    .venv/bin/python benchmarks/eval_parse_match.py [--corpus QS.csv]
"""

from __future__ import annotations

import argparse
import json
import sys
from datetime import date
from pathlib import Path

import pandas as pd

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from fairness_assets.core import corpus, evaluation, geo, match, understanding  # noqa: E402
from resources.settings import ALIASES_FILE, UNIVERSITY_ALIASES_FILE  # noqa: E402

SETS = {"eval_responses.jsonl": "tuning set", "eval_holdout.jsonl": "held-out set"}
MARK = "<!-- accuracy table: benchmarks/eval_parse_match.py -->"


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--corpus", default=str(ROOT.parent / "shared" / "data" / "qs_world_university_rankings_2024.csv"))
    args = ap.parse_args()
    resolver = geo.CountryResolver(geo.load_aliases(ALIASES_FILE))
    unis, _, _ = corpus.load_corpus(args.corpus, resolver.resolve)
    idx = match.UniversityIndex.build(unis, match.load_university_aliases(UNIVERSITY_ALIASES_FILE))
    rows, by_format = [], []
    for name, label in SETS.items():
        records = [json.loads(x) for x in (ROOT / "tests" / "fixtures" / name).read_text(encoding="utf-8").splitlines() if x.strip()]
        texts = pd.Series({r["id"]: r["response"] for r in records})
        items = understanding.match_items(understanding.parse_responses(texts, understanding.is_country_fn(resolver)), resolver, idx)
        sc, st = evaluation.score_items(records, items), evaluation.score_statuses(records, items)
        rows.append((label, len(records), len(sc), sc["parsed_ok"].mean(), sc["match_ok"].mean(), sc["correct"].mean(), st["correct"].mean()))
        g = sc.groupby("format")["correct"].agg(["size", "mean"]).reset_index()
        g.insert(0, "set", label)
        by_format.append(g)
    table = pd.DataFrame(rows, columns=["set", "responses", "expected items", "parsed", "matched", "parsed+matched", "status"])
    fmt = pd.concat(by_format).rename(columns={"size": "items", "mean": "parsed+matched"})
    text = (f"{MARK}\n\nMeasured {date.today().isoformat()} on the 2024 QS export.\n\n"
            + table.to_markdown(index=False, floatfmt=".1%") + "\n\nBy answer format:\n\n"
            + fmt.to_markdown(index=False, floatfmt=".1%") + "\n")
    print(text)
    doc = ROOT / "docs" / "parse_match.md"
    content = doc.read_text(encoding="utf-8")
    start = content.index(MARK)
    end = content.find("\n## ", start)
    doc.write_text(content[:start] + text + (content[end:] if end >= 0 else ""), encoding="utf-8")


if __name__ == "__main__":
    main()
