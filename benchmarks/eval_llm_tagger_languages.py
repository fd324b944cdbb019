"""The LLM tagger on program names in seven languages: per-language agreement with the hand labels, beside the
rules tagger's; writes the table of docs/parse_match.md between the ``llm-tagger-languages`` markers.

    .venv/bin/python benchmarks/eval_llm_tagger_languages.py [--model qwen2.5-0.5b-demo] [--print]

The programs are the ``program`` items of the independent labelled set
(tests/data/multilingual/labelled_items.csv: fr, es, pt, de, ar, hi, zh). Each is tagged by the few-shot LLM
tagger with the given registered model (default the built-in CPU model: greedy decoding, no overrides, no cache)
and by the rules tagger. Agreement is the set test's (tests/core/test_match_multilingual_set.py): the tagger's
areas are not empty and all of them are expected. A name the model answers with no area falls back to the rules
(the tagger's own fallback), and the table says how many did. Needs the llm extra; a few minutes on 2 CPU cores
with the built-in model.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

import pandas as pd  # noqa: E402

from fairness_assets.core.understanding import tags as T  # noqa: E402

DOC = ROOT / "docs" / "parse_match.md"
SET = ROOT / "tests" / "data" / "multilingual" / "labelled_items.csv"
START, END = "<!-- llm-tagger-languages:start -->", "<!-- llm-tagger-languages:end -->"


def agreement(found, expected) -> bool:
    return bool(found) and set(found) <= set(expected)


def table(model: str) -> str:
    from resources.llm.resource import LLMResource
    from resources.tagger import SubjectTaggerResource

    labelled = pd.read_csv(SET, keep_default_na=False)
    programs = labelled[labelled["kind"] == "program"].reset_index(drop=True)
    tagger = SubjectTaggerResource(method="llm", llm_model=model, overrides_path="")
    started = time.perf_counter()
    with tagger.session(None, LLMResource(device="cpu"), log=lambda m: print(m, file=sys.stderr)) as tag_fn:
        out = tag_fn(list(programs["text"]))
    seconds = time.perf_counter() - started
    by_norm = {n: (t, s) for n, t, s in out.itertuples(index=False)}
    rows = []
    for r in programs.itertuples(index=False):
        tags, source = by_norm[T.normalize_program(r.text)]
        expected = r.expected.split(";")
        rows.append(
            {
                "language": r.language,
                "llm": agreement(tags, expected) and source == "llm",
                "answered": source == "llm",
                "with_fallback": agreement(tags, expected),
                "rules": agreement(T.tag_rules(r.text), expected),
            }
        )
    per = pd.DataFrame(rows).groupby("language", sort=False)
    lines = [
        f"| language | programs | LLM answered | LLM agrees (its own answers) | LLM with its rules fallback | "
        f"rules (`{T.RULES_VERSION}`) |",
        "| --- | ---: | ---: | ---: | ---: | ---: |",
    ]
    for lang, g in per:
        lines.append(
            f"| {lang} | {len(g)} | {g['answered'].mean():.1%} | {g['llm'].mean():.1%} | "
            f"{g['with_fallback'].mean():.1%} | {g['rules'].mean():.1%} |"
        )
    every = pd.DataFrame(rows)
    lines += [
        "",
        f"LLM tagger `{tagger.tagger_name()}` on the {len(every)} program names of the labelled set: it answered "
        f"{every['answered'].mean():.1%} of them with an area, and {every['llm'].mean():.1%} of all agree with the "
        f"labels by its own answer ({every['with_fallback'].mean():.1%} with the rules fallback); tagging took "
        f"{seconds:.0f} s, model load included.",
    ]
    return "\n".join(lines)


def main(argv=None) -> int:
    from resources.tagger import DEFAULT_LLM_MODEL

    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--model", default=DEFAULT_LLM_MODEL, help="registered model of the LLM tagger")
    ap.add_argument("--print", action="store_true", help="print the table instead of writing docs/parse_match.md")
    args = ap.parse_args(argv)
    text = table(args.model)
    if args.print:
        print(text)
        return 0
    sys.path.insert(0, str(ROOT / "docs"))
    from _generated import replace  # the docs' one writer of a generated section

    replace(DOC, START, END, f"{START}\n{text}\n{END}")
    print(f"wrote the table into {DOC}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
