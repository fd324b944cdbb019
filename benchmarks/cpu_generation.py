"""Benchmark: built-in CPU model, aggregate output tokens/s batched vs one prompt at a time.

Both measured in one run on the same prompts (the study's base template for 16 demo
profiles), the same seeds and the same number of new tokens. Target (issue): batched >= 2x.

    .venv/bin/python benchmarks/cpu_generation.py [--prompts 16] [--new-tokens 64] [--batch 16]
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

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))

from _doc import write_section  # noqa: E402
from fairness_assets.core import profiles, prompts  # noqa: E402
from resources.llm.base import SamplingParams  # noqa: E402
from resources.llm.resource import LLMResource  # noqa: E402
from resources.settings import TEMPLATES_DIR, load_preset  # noqa: E402


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--prompts", type=int, default=16)
    ap.add_argument("--new-tokens", type=int, default=64)
    ap.add_argument("--batch", type=int, default=16)
    ap.add_argument("--no-write", action="store_true")
    args = ap.parse_args()
    study = load_preset("study")
    grid = profiles.full_profiles(profiles.Grid(study["genders"], study["economic_classes"], study["nationalities"]))
    base = prompts.load_templates(TEMPLATES_DIR, ["base"])["base"]
    texts = [base.render(g, c, n) for g, c, n in grid[["gender", "economic_class", "nationality"]].head(args.prompts).itertuples(index=False)]
    seeds = list(range(len(texts)))
    params = SamplingParams(temperature=0.75, top_p=0.95, max_new_tokens=args.new_tokens)
    client = LLMResource(device="cpu", batch_size=args.batch).client("qwen2.5-0.5b-demo")
    client.generate_samples(texts[:2], seeds[:2], SamplingParams(max_new_tokens=4))  # warm-up

    client.batch_size = args.batch
    t0 = time.perf_counter()
    batched = client.generate_samples(texts, seeds, params)
    t1 = time.perf_counter()
    client.batch_size = 1
    single = client.generate_samples(texts, seeds, params)
    t2 = time.perf_counter()
    tb, ts = sum(s.output_tokens for s in batched), sum(s.output_tokens for s in single)
    same = sum(a.text == b.text for a, b in zip(batched, single))
    r = {"prompts": len(texts), "new_tokens": args.new_tokens, "batch": args.batch,
         "batched_s": t1 - t0, "batched_tokens": tb, "batched_tok_s": tb / (t1 - t0),
         "single_s": t2 - t1, "single_tokens": ts, "single_tok_s": ts / (t2 - t1),
         "same_text": same}
    r["ratio"] = r["batched_tok_s"] / r["single_tok_s"]
    print(json.dumps(r, indent=2))
    if not args.no_write:
        write_doc(r)


def write_doc(r: dict) -> None:
    write_section("CPU generation, built-in model", (
        f"`benchmarks/cpu_generation.py`, {date.today().isoformat()}, {platform.machine()}, {os.cpu_count()} cores, "
        f"torch CPU, fp32. Qwen2.5-Coder-0.5B-Instruct (the built-in model), {r['prompts']} prompts of the base "
        f"template, up to {r['new_tokens']} new tokens, temperature 0.75, top-p 0.95, per-sample seeds; both modes in "
        "one run.\n\n"
        "| mode | time | output tokens | tokens/s |\n| --- | --- | --- | --- |\n"
        f"| batched ({r['batch']} prompts per batch) | {r['batched_s']:.1f} s | {r['batched_tokens']} | {r['batched_tok_s']:.1f} |\n"
        f"| one prompt at a time | {r['single_s']:.1f} s | {r['single_tokens']} | {r['single_tok_s']:.1f} |\n\n"
        f"Batched / single: **{r['ratio']:.1f}x** (target >= 2x). {r['same_text']} of {r['prompts']} answers are "
        "identical in both modes (per-sample seeds; padding in a batch can change the floating-point sums and so a "
        "near-tied token).\n"
    ))


if __name__ == "__main__":
    main()
