"""Rules tagger vs LLM tagger on the same programs: writes the table of docs/parse_match.md.

    .venv/bin/python docs/build_tagger_comparison.py [--model qwen2.5-0.5b-demo] [--print]

The programs are every distinct program name of the demo responses
(data/examples/demo_responses.jsonl, as the parser reads them) plus a few harder names. Each is tagged by the rules
(``rules-1``) and by the few-shot LLM tagger with the given registered model (default the built-in
CPU model, greedy decoding, no overrides, no cache), and the table replaces the part of
docs/parse_match.md between the ``tagger-comparison`` markers (``--print``: printed instead).
Needs the llm extra; about 2.5 minutes on 2 CPU cores with the built-in model.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from fairness_assets.core.understanding import tags as T  # noqa: E402
from resources.llm.resource import LLMResource  # noqa: E402
from resources.tagger import DEFAULT_LLM_MODEL, SubjectTaggerResource  # noqa: E402

DOC = ROOT / "docs" / "parse_match.md"
START, END = "<!-- tagger-comparison:start -->", "<!-- tagger-comparison:end -->"
DEMO = ROOT / "data" / "examples" / "demo_responses.jsonl"
HARDER = [
    "MSc Data Science",
    "LLM in International Law",
    "MA Architecture",
    "MSc Food Technology",
    "Master in Business Analytics",
    "MSc Environmental Science",
    "Master of Education",
    "MSc Cognitive Neuroscience",
    "MSc Mechanical Design",
    "MA Film Studies",
]
SHORT = {T.ARTS: "Arts", T.ENG: "Eng", T.LIFE: "Life", T.NAT: "Nat", T.SOC: "Soc"}


def demo_programs() -> list[str]:
    """The program names the parser finds in the demo responses, in order of appearance."""
    import pandas as pd

    from fairness_assets.core.understanding.understand import parse_responses

    rows = [json.loads(line) for line in DEMO.read_text(encoding="utf-8").splitlines() if line.strip()]
    items = parse_responses(pd.Series([r["response"] for r in rows]))
    return list(dict.fromkeys(items["program_text"].dropna()))


def table(model: str) -> str:
    programs = demo_programs() + HARDER
    llm = LLMResource(device="cpu")
    tagger = SubjectTaggerResource(method="llm", llm_model=model, overrides_path="")
    started = time.perf_counter()
    with tagger.session(None, llm, log=lambda m: print(m, file=sys.stderr)) as tag_fn:
        out = tag_fn(programs)
    seconds = time.perf_counter() - started
    by_norm = {n: (t, s) for n, t, s in out.itertuples(index=False)}
    lines = [
        f"| program | normalised | rules (`{T.RULES_VERSION}`) | LLM (`"
        + tagger.tagger_name()
        + "`) | LLM source | same |",
        "| --- | --- | --- | --- | --- | --- |",
    ]
    seen, same, answered = set(), 0, 0
    for p in programs:
        norm = T.normalize_program(p)
        if norm in seen:
            continue
        seen.add(norm)
        rules = T.tag_rules(norm)
        tags, source = by_norm[norm]
        same += tags == rules
        answered += source == "llm"
        show = lambda t: " + ".join(SHORT[a] for a in t) or "—"  # noqa: E731
        lines.append(
            f"| {p} | {norm} | {show(rules)} | {show(tags)} | {source} | {'yes' if tags == rules else '**no**'} |"
        )
    lines += [
        "",
        f"{len(seen)} programs: the model named an area for {answered}; the two taggers agree on "
        f"{same}. Areas: Arts = {T.ARTS}, Eng = {T.ENG}, Life = {T.LIFE}, Nat = {T.NAT}, Soc = {T.SOC}. "
        f"Tagging took {seconds:.0f} s (model load included) on {_cpu()}.",
    ]
    return "\n".join(lines)


def _cpu() -> str:
    import os

    return f"{len(os.sched_getaffinity(0))} CPU core(s)"


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--model", default=DEFAULT_LLM_MODEL, help="registered model of the LLM tagger")
    ap.add_argument("--print", action="store_true", help="print the table instead of writing docs/parse_match.md")
    args = ap.parse_args(argv)
    text = table(args.model)
    if args.print:
        print(text)
        return 0
    doc = DOC.read_text(encoding="utf-8")
    if START not in doc or END not in doc:
        raise SystemExit(f"{DOC}: the markers {START} / {END} are missing")
    head, rest = doc.split(START, 1)
    _, tail = rest.split(END, 1)
    DOC.write_text(f"{head}{START}\n{text}\n{END}{tail}", encoding="utf-8")
    print(f"wrote the comparison table into {DOC}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
