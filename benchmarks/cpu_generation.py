"""Benchmark: built-in CPU model, this project's generation against plain ``model.generate``.

Measured in one run on the same model, prompts (the study's base template for 16 demo
profiles), batch and token budget (``min_new_tokens`` = ``max_new_tokens``, so every row
generates the same number of tokens in every mode), temperature 0.75, top-p 0.95:

- ``plain``: ``model.generate(do_sample=True, temperature, top_p)`` (transformers' own sampler:
  a full-vocabulary sort per row per step; not reproducible per sample);
- ``engine``: the project's client (``TransformersClient.generate_samples``: the counter-based,
  batch-independent sampler of ``resources/llm/sampling.py``);

each batched (``--batch`` prompts per batch) and one prompt at a time. Targets (issue 12):
engine / plain >= 2x batched and >= 1.2x one at a time; batched engine answers identical to the
one-at-a-time ones where padding does not change a near-tied token.

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

from fairness_assets.core.reference import profiles, prompts  # noqa: E402
from resources.llm.base import SamplingParams  # noqa: E402
from resources.llm.resource import LLMResource  # noqa: E402
from resources.settings import shipped_design  # noqa: E402


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--prompts", type=int, default=16)
    ap.add_argument("--new-tokens", type=int, default=64)
    ap.add_argument("--batch", type=int, default=16)
    ap.add_argument("--no-write", action="store_true")
    args = ap.parse_args()
    study = shipped_design("study")
    grid = profiles.full_set(study)
    texts = prompts.render_prompts([study.template("base")], grid.head(args.prompts))["prompt"].tolist()
    seeds = list(range(len(texts)))
    params = SamplingParams(temperature=0.75, top_p=0.95, max_new_tokens=args.new_tokens)
    # static batches: this benchmark compares samplers at a fixed length (benchmarks/continuous_generation.py
    # measures continuous batching at real lengths)
    client = LLMResource(device="cpu", batch_size=args.batch, continuous_batching=False).client("qwen2.5-0.5b-demo")
    client.generate_samples(texts[:2], seeds[:2], SamplingParams(max_new_tokens=4))  # warm-up

    def plain(texts_subset):
        import torch

        tok, model = client.tokenizer, client.model
        enc = tok([client.render(t) for t in texts_subset], return_tensors="pt", padding=True, add_special_tokens=False)
        torch.manual_seed(0)
        with torch.inference_mode():
            out = model.generate(
                **enc,
                do_sample=True,
                temperature=0.75,
                top_p=0.95,
                top_k=None,
                max_new_tokens=args.new_tokens,
                min_new_tokens=args.new_tokens,
                pad_token_id=tok.pad_token_id,
            )
        return int((out.shape[1] - enc["input_ids"].shape[1]) * out.shape[0])

    def engine(texts_subset, seeds_subset):
        return client.generate_samples(texts_subset, seeds_subset, params)

    params = SamplingParams(temperature=0.75, top_p=0.95, max_new_tokens=args.new_tokens)
    client.model.generation_config.min_new_tokens = args.new_tokens  # same token budget in every mode
    r = {"prompts": len(texts), "new_tokens": args.new_tokens, "batch": args.batch}
    # interleaved, so that a noisy neighbour slows both modes alike
    timings = {"plain_batched": 0.0, "engine_batched": 0.0, "plain_single": 0.0, "engine_single": 0.0}
    tokens = dict.fromkeys(timings, 0)
    batched, single = [], []
    client.batch_size = args.batch
    for start in range(0, len(texts), args.batch):
        chunk, chunk_seeds = texts[start : start + args.batch], seeds[start : start + args.batch]
        t0 = time.perf_counter()
        tokens["plain_batched"] += plain(chunk)
        t1 = time.perf_counter()
        out = engine(chunk, chunk_seeds)
        t2 = time.perf_counter()
        batched.extend(out)
        tokens["engine_batched"] += sum(s.output_tokens for s in out)
        timings["plain_batched"] += t1 - t0
        timings["engine_batched"] += t2 - t1
    client.batch_size = 1
    for text, seed in zip(texts, seeds, strict=False):
        t0 = time.perf_counter()
        tokens["plain_single"] += plain([text])
        t1 = time.perf_counter()
        out = engine([text], [seed])
        t2 = time.perf_counter()
        single.extend(out)
        tokens["engine_single"] += sum(s.output_tokens for s in out)
        timings["plain_single"] += t1 - t0
        timings["engine_single"] += t2 - t1
    for k in timings:
        r[f"{k}_s"] = timings[k]
        r[f"{k}_tokens"] = tokens[k]
        r[f"{k}_tok_s"] = tokens[k] / timings[k]
    r["ratio_batched"] = r["engine_batched_tok_s"] / r["plain_batched_tok_s"]
    r["ratio_single"] = r["engine_single_tok_s"] / r["plain_single_tok_s"]
    r["engine_batched_vs_single"] = r["engine_batched_tok_s"] / r["engine_single_tok_s"]
    r["same_text"] = sum(a.text == b.text for a, b in zip(batched, single, strict=False))
    print(json.dumps(r, indent=2))
    if not args.no_write:
        write_doc(r)


def write_doc(r: dict) -> None:
    rows = "".join(
        f"| {label} | {r[k + '_s']:.1f} s | {r[k + '_tokens']} | {r[k + '_tok_s']:.1f} |\n"
        for k, label in (
            ("plain_batched", f"plain `model.generate`, batch {r['batch']}"),
            ("engine_batched", f"this engine, batch {r['batch']}"),
            ("plain_single", "plain `model.generate`, one prompt at a time"),
            ("engine_single", "this engine, one prompt at a time"),
        )
    )
    write_section(
        "CPU generation, built-in model",
        (
            f"`benchmarks/cpu_generation.py`, {date.today().isoformat()}, {platform.machine()}, {os.cpu_count()} "
            f"cores, torch CPU, fp32. Qwen2.5-Coder-0.5B-Instruct (the built-in model), {r['prompts']} prompts of the "
            f"base template, exactly {r['new_tokens']} new tokens per answer in every mode, temperature 0.75, top-p "
            "0.95; all four modes in one run, interleaved batch by batch.\n\n"
            "| mode | time | output tokens | tokens/s |\n| --- | --- | --- | --- |\n" + rows + "\n"
            f"This engine / plain `model.generate`: **{r['ratio_batched']:.2f}x** batched (target >= 2x), "
            f"**{r['ratio_single']:.2f}x** one at a time (target >= 1.2x). The engine batched / one at a time: "
            f"{r['engine_batched_vs_single']:.1f}x. {r['same_text']} of {r['prompts']} answers are identical batched "
            "and one at a time (per-sample seeds; padding in a batch can change floating-point sums and so a near-tied "
            "token).\n"
        ),
    )


if __name__ == "__main__":
    main()
