"""Parse + match accuracy on the hand-written evaluation sets and on the external real answers;
writes docs/parse_match.md's tables.

    .venv/bin/python benchmarks/eval_parse_match.py [--corpus QS.csv] [--external DIR] [--no-write]

The external answers (../shared/data/external: 5,720 items written by 13 open models, hand
labelled) are scored when the folder is present; precision and recall as defined in
:func:`benchmarks/evaluation.py <evaluation.score_external>`.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from datetime import date
from pathlib import Path

import pandas as pd

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from benchmarks import evaluation  # noqa: E402
from fairness_assets.core.reference import corpus, geo  # noqa: E402
from fairness_assets.core.understanding import match  # noqa: E402
from fairness_assets.core.understanding import understand as understanding  # noqa: E402
from resources.settings import ALIASES_FILE, UNIVERSITY_ALIASES_FILE  # noqa: E402

SETS = {
    "eval_responses.jsonl": "tuning set",
    "eval_holdout.jsonl": "held-out set",
    "eval_builtin.jsonl": "built-in model set",
}
MARK = "<!-- accuracy table: benchmarks/eval_parse_match.py -->"
EXT_MARK = "<!-- external table: benchmarks/eval_parse_match.py -->"
SHARED = ROOT.parent / "shared" / "data"


def own_sets(resolver, idx) -> str:
    rows, by_format = [], []
    for name, label in SETS.items():
        records = [
            json.loads(x)
            for x in (ROOT / "tests" / "fixtures" / name).read_text(encoding="utf-8").splitlines()
            if x.strip()
        ]
        texts = pd.Series({r["id"]: r["response"] for r in records})
        items = understanding.match_items(
            understanding.parse_responses(texts, understanding.is_country_fn(resolver)), resolver, idx
        )
        sc, st = evaluation.score_items(records, items), evaluation.score_statuses(records, items)
        rows.append(
            (
                label,
                len(records),
                len(sc),
                sc["parsed_ok"].mean(),
                sc["match_ok"].mean(),
                sc["correct"].mean(),
                st["correct"].mean(),
            )
        )
        g = sc.groupby("format")["correct"].agg(["size", "mean"]).reset_index()
        g.insert(0, "set", label)
        by_format.append(g)
    table = pd.DataFrame(
        rows, columns=["set", "responses", "expected items", "parsed", "matched", "parsed+matched", "status"]
    )
    fmt = pd.concat(by_format).rename(columns={"size": "items", "mean": "parsed+matched"})
    return (
        f"{MARK}\n\nMeasured {date.today().isoformat()} on the 2024 QS export.\n\n"
        + table.to_markdown(index=False, floatfmt=".1%")
        + "\n\nBy answer format:\n\n"
        + fmt.to_markdown(index=False, floatfmt=".1%")
        + "\n"
    )


def external(folder: Path, resolver, idx, unis) -> tuple[str, dict, pd.DataFrame]:
    labels = evaluation.load_external_labels(folder)
    t0 = time.perf_counter()
    recs = evaluation.match_external(folder, resolver, idx)
    seconds = time.perf_counter() - t0
    summary, scored = evaluation.score_external(recs, labels, unis["name"])
    summary["seconds"] = seconds
    summary["wrong_per_2000"] = 2000 * summary["wrong"] / summary["matched"] if summary["matched"] else float("nan")
    s = summary
    text = (
        f"{EXT_MARK}\n\nMeasured {date.today().isoformat()} on the 2024 QS export, matcher `{match.MATCHER_VERSION}`: "
        f"{s['items']:,} items (all 20 positions, one sample each), matched through the path of "
        "`fairness-audit score` on already-split items.\n\n"
        "| figure | value |\n| --- | ---: |\n"
        f"| items matched | {s['matched']:,} |\n"
        f"| wrong matches | {s['wrong']} |\n"
        f"| **precision** (correct / matched) | **{s['precision']:.2%}** |\n"
        f"| wrong matches per 2,000 matched (target ≤ 1) | {s['wrong_per_2000']:.2f} |\n"
        f"| items with a QS 2024 entry | {s['with_qs_entry']:,} |\n"
        f"| missed | {s['missed']} |\n"
        f"| **recall** (correct / items with a QS entry; target ≥ 99.5%) | **{s['recall']:.2%}** |\n"
        f"| historical names (matched / all) | {s['historical_matched']} / {s['historical']} |\n"
        f"| recall, historical names included | {s['recall_with_historical']:.2%} |\n"
        f"| questionable (left out of both) | {s['questionable']} |\n"
        f"| unlabelled texts | {s['unlabelled']} |\n"
    )
    if "match_rule" in recs:  # how the matches explain themselves (issue 21.3)
        rules = recs.loc[recs["university_text"].notna(), "match_rule"].fillna("(unmatched)")
        methods = recs.loc[recs["university_text"].notna(), "match_method"].fillna("none")
        counts = pd.DataFrame({"rule": rules, "method": methods}).value_counts().rename("items").reset_index()
        counts = counts.sort_values(["rule", "items"], ascending=[True, False])
        text += "\nItems per rule family (`match_rule`) and method:\n\n" + counts.to_markdown(index=False) + "\n"
    return text, summary, scored


def _replace(content: str, mark: str, text: str) -> str:
    if mark not in content:
        return content.rstrip("\n") + "\n\n" + text
    start = content.index(mark)
    end = content.find("\n## ", start)
    nxt = content.find("\n<!-- ", start + len(mark))
    if nxt >= 0 and (end < 0 or nxt < end):
        end = nxt
    return content[:start] + text + (content[end:] if end >= 0 else "")


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--corpus", default=str(SHARED / "qs_world_university_rankings_2024.csv"))
    ap.add_argument("--external", default=str(SHARED / "external"))
    ap.add_argument("--no-write", action="store_true", help="print only; leave docs/parse_match.md alone")
    ap.add_argument("--show-errors", action="store_true", help="list the wrong and missed external items")
    args = ap.parse_args()
    resolver = geo.CountryResolver(geo.load_aliases(ALIASES_FILE))
    unis, _, _ = corpus.load_corpus(args.corpus, resolver.resolve)
    idx = match.UniversityIndex.build(unis, match.load_university_aliases(UNIVERSITY_ALIASES_FILE))
    text = own_sets(resolver, idx)
    print(text)
    ext_text = None
    if Path(args.external, evaluation.EXTERNAL_ITEMS).exists():
        ext_text, summary, scored = external(Path(args.external), resolver, idx, unis)
        print(ext_text)
        print(json.dumps(summary, indent=1))
        if args.show_errors:
            bad = scored[
                (scored["kind"] != "questionable")
                & (scored["matched"] & ~scored["correct"] | (scored["kind"] == "target") & ~scored["correct"])
            ]
            print(bad.value_counts(["university_text", "kind", "expected", "matched_name"], dropna=False).to_string())
    else:
        print(f"external answers not found in {args.external}: skipped")
    if args.no_write:
        return
    doc = ROOT / "docs" / "parse_match.md"
    content = _replace(doc.read_text(encoding="utf-8"), MARK, text)
    if ext_text:
        content = _replace(content, EXT_MARK, ext_text)
    doc.write_text(content, encoding="utf-8")


if __name__ == "__main__":
    main()
