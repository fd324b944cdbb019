"""Benchmark: 100,000 recommended items parsed, matched and tagged (deterministic tagger).

Synthetic but realistic responses: universities drawn from the QS export with a skew toward
the top (as models recommend), written the ways models write them (full name, name without
"The", acronym alias, lower case, a typo), in the formats models answer in (JSON, fenced
JSON, numbered list, markdown table, prose), with realistic program names and stated
countries (sometimes wrong). Target (issue): under 60 s on the 2-core machine.

    .venv/bin/python benchmarks/parse_match_tag.py [--items 100000] [--corpus QS.csv]

Writes its figures to docs/benchmarks.md (section "Parse, match, tag").
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import sys
import time
from datetime import date
from pathlib import Path

import numpy as np
import pandas as pd

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))

from _doc import write_section  # noqa: E402

from fairness_assets.core.reference import corpus, geo  # noqa: E402
from fairness_assets.core.understanding import match  # noqa: E402
from fairness_assets.core.understanding import understand as understanding  # noqa: E402
from resources.settings import ALIASES_FILE, UNIVERSITY_ALIASES_FILE  # noqa: E402
from resources.tagger import SubjectTaggerResource  # noqa: E402

DEFAULT_CORPUS = ROOT.parent / "shared" / "data" / "qs_world_university_rankings_2024.csv"
PROGRAMS = [
    "Computer Science",
    "Data Science",
    "Public Health",
    "Business Administration",
    "Economics",
    "Electrical Engineering",
    "Mechanical Engineering",
    "Civil Engineering",
    "Artificial Intelligence",
    "International Relations",
    "Finance",
    "Biotechnology",
    "Physics",
    "Mathematics",
    "History",
    "Environmental Science",
    "Law",
    "Education",
    "Architecture",
    "Psychology",
    "Chemistry",
    "Development Studies",
    "Nursing",
    "Marketing",
    "Robotics",
    "Materials Science",
    "Philosophy",
]
DEGREES = ["MSc in {}", "Master of Science in {}", "MA in {}", "Master's in {}", "M.Sc. {}", "MEng {}", "{}"]


def synth_responses(n_responses: int, unis: pd.DataFrame, seed: int = 7) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    ranks = unis["rank"].to_numpy(dtype=float)
    p = 1.0 / np.sqrt(ranks)
    p /= p.sum()
    names, countries = unis["name"].to_numpy(), unis["country_raw"].to_numpy()
    picks = rng.choice(len(unis), size=(n_responses, 3), p=p)
    progs = rng.integers(0, len(PROGRAMS), size=(n_responses, 3))
    degs = rng.integers(0, len(DEGREES), size=(n_responses, 3))
    style = rng.integers(0, 5, size=(n_responses, 3))
    fmt = rng.choice(5, size=n_responses, p=[0.45, 0.2, 0.2, 0.1, 0.05])
    wrong = rng.random((n_responses, 3)) < 0.05
    texts = []
    for r in range(n_responses):
        items = []
        for k in range(3):
            n = names[picks[r, k]]
            s = style[r, k]
            if s == 1:
                n = n.replace("The ", "")
            elif s == 2:
                n = n.split(" (")[0]
            elif s == 3:
                n = n.lower()
            elif s == 4 and len(n) > 12:
                j = 6 + int(rng.integers(0, len(n) - 7))  # one swapped pair of letters
                n = n[:j] + n[j + 1] + n[j] + n[j + 2 :]
            c = countries[picks[(r + 1) % n_responses, k]] if wrong[r, k] else countries[picks[r, k]]
            items.append((n, DEGREES[degs[r, k]].format(PROGRAMS[progs[r, k]]), c))
        f = fmt[r]
        if f == 0:
            t = json.dumps([{"university": u, "program": pr, "country": c} for u, pr, c in items], indent=2)
        elif f == 1:
            t = (
                "Here are my suggestions:\n```json\n"
                + json.dumps([{"university": u, "program": pr, "country": c} for u, pr, c in items])
                + "\n```\nGood luck!"
            )
        elif f == 2:
            t = "\n".join(f"{i + 1}. **{u}** – {pr} ({c})" for i, (u, pr, c) in enumerate(items))
        elif f == 3:
            t = "| University | Program | Country |\n|---|---|---|\n" + "\n".join(
                f"| {u} | {pr} | {c} |" for u, pr, c in items
            )
        else:
            t = " ".join(f"Consider {u} in {c}, which offers a {pr}." for u, pr, c in items)
        texts.append(t)
    return pd.DataFrame({"response_id": [f"r{i}" for i in range(n_responses)], "response": texts})


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--items", type=int, default=100_000)
    ap.add_argument("--corpus", default=str(DEFAULT_CORPUS))
    ap.add_argument("--no-write", action="store_true")
    args = ap.parse_args()
    resolver = geo.CountryResolver(geo.load_aliases(ALIASES_FILE))
    unis, _, _ = corpus.load_corpus(args.corpus, resolver.resolve)
    n_resp = -(-args.items // 3)
    gens = synth_responses(n_resp, unis)
    for col, val in (
        ("partition_key", "bench|base"),
        ("audit_id", "bench"),
        ("model", "bench"),
        ("template", "base"),
        ("profile_id", "p"),
        ("gender", "female"),
        ("economic_class", "low"),
        ("nationality", "Nigeria"),
        ("run", 0),
    ):
        gens[col] = val
    tagger = SubjectTaggerResource()

    t0 = time.perf_counter()
    index = match.UniversityIndex.build(unis, match.load_university_aliases(UNIVERSITY_ALIASES_FILE))
    t1 = time.perf_counter()
    recs = understanding.build_recommendations(gens, resolver, index, tag_fn=lambda p: tagger.tag(p))
    t2 = time.perf_counter()
    items = recs[recs["university_text"].notna()]
    # matcher: one rapidfuzz cdist over all distinct names vs one extract per name, same run
    pairs = items[["university_text", "stated_iso3"]].drop_duplicates()
    texts, isos = list(pairs["university_text"]), [None if pd.isna(c) else c for c in pairs["stated_iso3"]]
    t3 = time.perf_counter()
    batched = match._match_many(texts, isos, index, match.MatchParams())
    t4 = time.perf_counter()
    single = [match.match_one(t, c, index) for t, c in zip(texts, isos, strict=False)]
    t5 = time.perf_counter()
    assert [m.index for m in batched] == [m.index for m in single], "batched and per-name matching disagree"
    result = {
        "items": int(len(items)),
        "items_written": int(3 * n_resp),
        "responses": int(n_resp),
        "index_s": t1 - t0,
        "pipeline_s": t2 - t1,
        "total_s": t2 - t0,
        "items_per_s": len(items) / (t2 - t0),
        "match_rate": float(items["university_id"].notna().mean()),
        "parse_ok": float((recs.drop_duplicates("response_id")["parse_status"] == "ok").mean()),
        "distinct_names": len(texts),
        "match_batched_s": t4 - t3,
        "match_single_s": t5 - t4,
    }
    print(json.dumps(result, indent=2))
    if not args.no_write:
        write_doc(result)


def write_doc(r: dict) -> None:
    write_section(
        "Parse, match, tag",
        (
            f"`benchmarks/parse_match_tag.py`, {date.today().isoformat()}, "
            f"{platform.processor() or platform.machine()}, {os.cpu_count()} cores, Python "
            f"{platform.python_version()}.\n\n"
            f"{r['items_written']:,} recommended items written into {r['responses']:,} synthetic responses (QS 2024 "
            "names skewed to the top, five answer formats, names without 'The' or acronym, lower case, a swapped "
            "letter, 5% wrong countries, some universities twice in a response), parsed, matched and tagged with the "
            f"rules tagger; {r['items']:,} distinct items recovered.\n\n"
            "| figure | value |\n| --- | --- |\n"
            f"| build the matcher index | {r['index_s']:.2f} s |\n"
            f"| parse + match + tag | {r['pipeline_s']:.2f} s |\n"
            f"| total | **{r['total_s']:.2f} s** (target < 60 s) |\n"
            f"| items per second | {r['items_per_s']:,.0f} |\n"
            f"| responses parsed with three items | {r['parse_ok']:.1%} |\n"
            f"| items matched to the corpus | {r['match_rate']:.1%} |\n\n"
            f"Matching the {r['distinct_names']:,} distinct (name, stated country) pairs, measured in the same run: "
            f"batched (one rapidfuzz `cdist` over all names needing fuzzy matching) {r['match_batched_s']:.2f} s vs "
            f"one `extract` per name {r['match_single_s']:.2f} s: "
            f"**{r['match_single_s'] / r['match_batched_s']:.1f}x**; both give the same matches (asserted).\n"
        ),
    )


if __name__ == "__main__":
    main()
