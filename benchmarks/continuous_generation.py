"""Benchmark: continuous batching against static batches at real answer lengths (issue 24), built-in CPU model.

The built-in model (Qwen2.5-Coder-0.5B-Instruct, fp32 on the CPU) answers the demo grid's
profiles (3 genders x 2 classes x 2 nationalities) under the base, regional and academic
templates, at the study's decoding (temperature 0.75, top-p 0.95, at most 300 new tokens): every
answer ends where the model ends it. Measured in one run, each mode over the same prompts and
seeds, batch ``--batch``:

- ``plain``: ``model.generate(do_sample=True)`` in static batches, transformers' own sampler;
- ``static``: the project's client with static batches (``continuous_batching=False``: the
  seeded counter sampler in ``model.generate``);
- ``engine``: the project's client with its continuous-batching engine (``resources/llm/engine.py``).

Reported per mode: wall time, useful output tokens (the answers' tokens) per second, and the
static paths' **utilisation**: useful tokens over computed row-steps (each static batch computes
every row until its longest answer ends). Also: the distribution of answer lengths (this run's
answers, and, when ``--external`` is readable, the shared external set's answers tokenized with
the built-in model's tokenizer), written to ``benchmarks/answer_lengths.json`` for
``benchmarks/gpu_throughput.py``; and whether the engine's answers equal the static path's
(per-sample seeds). Targets: engine >= 1.5x static and >= 1.5x plain.

    .venv/bin/python benchmarks/continuous_generation.py [--batch 16] [--templates base,regional,academic] [--no-write]
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

from fairness_assets.core.generation.samples import sample_seed  # noqa: E402
from fairness_assets.core.reference import profiles, prompts  # noqa: E402
from resources.llm.base import SamplingParams  # noqa: E402
from resources.llm.resource import LLMResource  # noqa: E402
from resources.settings import TEMPLATES_DIR, shipped_design  # noqa: E402

EXTERNAL = ROOT.parent / "shared" / "data" / "external" / "biais_llm_rec_responses.jsonl"
LENGTHS_FILE = ROOT / "benchmarks" / "answer_lengths.json"
SECTION = "Continuous batching at real answer lengths (CPU, built-in model)"
BIN = 10


def percentiles(values: list[int]) -> dict:
    import numpy as np

    a = np.asarray(values)
    return {
        "n": int(a.size),
        "mean": float(a.mean()),
        "p10": float(np.percentile(a, 10)),
        "p50": float(np.percentile(a, 50)),
        "p90": float(np.percentile(a, 90)),
        "max": int(a.max()),
    }


def histogram(values: list[int], width: int = BIN) -> dict:
    counts = [0] * (max(values) // width + 1)
    for v in values:
        counts[v // width] += 1
    return {"bin_width": width, "counts": counts}


def cost_model(model, tok, prompt_ids: list[list[int]], batch: int, repeats: int = 4) -> dict:
    """Measured costs of this machine's forward passes (CPU seconds with one torch thread, else wall):
    a decode step at 1, batch/4, batch/2 and batch rows (context: a typical prompt + 50 tokens), and a
    prefill per prompt token. From them, what any scheduler of these answers must spend at least."""
    import torch

    clock = time.process_time if torch.get_num_threads() == 1 else time.perf_counter
    base = prompt_ids[0] + prompt_ids[0][:50]
    steps: dict[int, float] = {}
    with torch.inference_mode():
        for rows in sorted({1, max(1, batch // 4), max(1, batch // 2), batch}):
            out = model(input_ids=torch.tensor([base] * rows), use_cache=True, logits_to_keep=1)
            cache, last = out.past_key_values, out.logits[:, -1].argmax(-1, keepdim=True)
            t0 = clock()
            for _ in range(repeats):
                out = model(input_ids=last, past_key_values=cache, use_cache=True)
                cache = out.past_key_values
            steps[rows] = (clock() - t0) / repeats
        rows = max(1, batch // 4)
        t0 = clock()
        model(input_ids=torch.tensor([prompt_ids[0]] * rows), use_cache=True, logits_to_keep=1)
        per_token = (clock() - t0) / (rows * len(prompt_ids[0]))
    return {"decode_step_s": steps, "prefill_token_s": per_token}


def step_cost(costs: dict, rows: int) -> float:
    """A decode step's cost at ``rows`` rows, interpolated linearly between the measured row counts."""
    pts = sorted(costs["decode_step_s"].items())
    for (r0, c0), (r1, c1) in zip(pts, pts[1:], strict=False):
        if r0 <= rows <= r1:
            return c0 + (c1 - c0) * (rows - r0) / (r1 - r0)
    return pts[-1][1] * rows / pts[-1][0] if rows > pts[-1][0] else pts[0][1]


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--batch", type=int, default=16)
    ap.add_argument("--templates", default="base,regional,academic")
    ap.add_argument("--max-new-tokens", type=int, default=300)
    ap.add_argument("--external", default=str(EXTERNAL))
    ap.add_argument("--rounds", type=int, default=2, help="rounds of the three modes (alternating order)")
    ap.add_argument(
        "--threads",
        type=int,
        default=0,
        help="torch threads (0: torch's default); with 1, the "
        "process's CPU time is the work done, whatever else runs on the machine",
    )
    ap.add_argument("--no-write", action="store_true")
    args = ap.parse_args()
    demo = shipped_design("demo")
    grid = profiles.full_set(demo)
    names = [t.strip() for t in args.templates.split(",") if t.strip()]
    templates = prompts.load_templates(TEMPLATES_DIR, names)
    texts, seeds = [], []
    for name in names:
        table = prompts.render_prompts([templates[name]], grid)
        texts += table["prompt"].tolist()
        seeds += [sample_seed("qwen2.5-0.5b-demo", name, pid, 0) for pid in table["profile_id"]]
    params = SamplingParams(temperature=0.75, top_p=0.95, max_new_tokens=args.max_new_tokens)
    load = os.getloadavg()
    if args.threads:
        import torch

        torch.set_num_threads(args.threads)
    resource = LLMResource(device="cpu", batch_size=args.batch)
    engine = resource.client("qwen2.5-0.5b-demo")
    from resources.llm.transformers_backend import TransformersClient

    static = TransformersClient(
        engine.model, engine.tokenizer, name="static", batch_size=args.batch, continuous_batching=False
    )
    tok, model = engine.tokenizer, engine.model
    engine.generate_samples(texts[:2], seeds[:2], SamplingParams(max_new_tokens=4))  # warm-up
    eos = {tok.pad_token_id, tok.eos_token_id}

    def plain(chunk):
        import torch

        enc = tok([engine.render(t) for t in chunk], return_tensors="pt", padding=True, add_special_tokens=False)
        torch.manual_seed(0)
        with torch.inference_mode():
            out = model.generate(
                **enc,
                do_sample=True,
                temperature=0.75,
                top_p=0.95,
                top_k=None,
                max_new_tokens=args.max_new_tokens,
                pad_token_id=tok.pad_token_id,
            )
        new = out[:, enc["input_ids"].shape[1] :]
        useful = [int(sum(1 for t in row.tolist() if t not in eos)) for row in new]
        return useful, int(new.shape[0] * new.shape[1])

    r = {
        "prompts": len(texts),
        "batch": args.batch,
        "templates": names,
        "max_new_tokens": args.max_new_tokens,
        "load_average": load,
        "rounds": args.rounds,
    }

    def run_plain():
        useful, steps = 0, 0
        for start in range(0, len(texts), args.batch):
            u, s = plain(texts[start : start + args.batch])
            useful, steps = useful + sum(u), steps + s
        return useful, steps

    def run_static():
        out, steps = [], 0
        for start in range(0, len(texts), args.batch):
            chunk = static.generate_samples(
                texts[start : start + args.batch], seeds[start : start + args.batch], params
            )
            out += chunk
            # the batch ran until its longest answer (+ its EOS): that many steps for every row
            steps += len(chunk) * min(args.max_new_tokens, max(s.output_tokens for s in chunk) + 1)
        return out, steps

    # the modes interleaved: round k runs plain, static, engine (odd rounds in reverse), so that a noisy
    # neighbour on the shared cores weighs on every mode alike; times are summed over the rounds
    times = {"plain": 0.0, "static": 0.0, "engine": 0.0}
    cpu = dict(times)
    for k in range(args.rounds):
        for mode in ("plain", "static", "engine") if k % 2 == 0 else ("engine", "static", "plain"):
            t0, c0 = time.perf_counter(), time.process_time()
            if mode == "plain":
                plain_useful, plain_steps = run_plain()
            elif mode == "static":
                static_out, static_steps = run_static()
            else:
                engine_out = engine.generate_samples(texts, seeds, params)
            times[mode] += time.perf_counter() - t0
            cpu[mode] += time.process_time() - c0
            print(
                f"round {k + 1} {mode}: {time.perf_counter() - t0:.1f} s wall, {time.process_time() - c0:.1f} s CPU",
                flush=True,
            )
    prompt_ids = [tok(engine.render(t), add_special_tokens=False).input_ids for t in texts]
    costs = cost_model(model, tok, prompt_ids, args.batch)
    # what the static path must spend on these answers (every row of a batch decodes until its longest answer ends,
    # prompts padded to the batch's longest), and the least any scheduler must spend: every prompt token prefilled
    # once with no padding, every useful token decoded in a full batch
    static_pred = 0.0
    for start in range(0, len(texts), args.batch):
        chunk = static_out[start : start + args.batch]
        width = max(len(p) for p in prompt_ids[start : start + args.batch])
        static_pred += costs["prefill_token_s"] * width * len(chunk)
        static_pred += step_cost(costs, len(chunk)) * min(args.max_new_tokens, max(x.output_tokens for x in chunk) + 1)
    useful = sum(x.output_tokens for x in static_out)
    floor = costs["prefill_token_s"] * sum(map(len, prompt_ids)) + step_cost(costs, args.batch) * useful / args.batch
    r.update(
        cost_decode_step_s={str(k): v for k, v in costs["decode_step_s"].items()},
        cost_prefill_token_s=costs["prefill_token_s"],
        static_predicted_s=static_pred,
        floor_s=floor,
        bound_vs_static=static_pred / floor,
        floor_prefill_share=costs["prefill_token_s"] * sum(map(len, prompt_ids)) / floor,
    )
    for mode, t in times.items():
        r[f"{mode}_s"] = t / args.rounds
        r[f"{mode}_cpu_s"] = cpu[mode] / args.rounds
    r["threads"] = args.threads or None
    r["load_average_end"] = os.getloadavg()
    lengths = [s.output_tokens for s in engine_out]
    r.update(
        plain_tokens=plain_useful,
        static_tokens=sum(s.output_tokens for s in static_out),
        engine_tokens=sum(lengths),
        plain_utilisation=plain_useful / plain_steps,
        static_utilisation=sum(s.output_tokens for s in static_out) / static_steps,
    )
    for m in ("plain", "static", "engine"):
        r[f"{m}_tok_s"] = r[f"{m}_tokens"] / r[f"{m}_s"]
        r[f"{m}_tok_cpu_s"] = r[f"{m}_tokens"] / r[f"{m}_cpu_s"]
    # the ratios: per CPU-second with one torch thread (the work, whatever shares the machine), else per wall second
    unit = "tok_cpu_s" if args.threads == 1 else "tok_s"
    r["ratio_unit"] = unit
    r["engine_vs_static"] = r[f"engine_{unit}"] / r[f"static_{unit}"]
    r["engine_vs_plain"] = r[f"engine_{unit}"] / r[f"plain_{unit}"]
    r["same_text"] = sum(a.text == b.text for a, b in zip(engine_out, static_out, strict=False))
    r["lengths_builtin"] = percentiles(lengths)
    r["at_budget"] = sum(1 for x in lengths if x >= args.max_new_tokens)
    dist = {
        "builtin": {
            "source": f"the built-in model's answers to the demo grid under {', '.join(names)} "
            f"(temperature 0.75, top-p 0.95, at most {args.max_new_tokens} tokens; this benchmark)",
            **percentiles(lengths),
            "histogram": histogram(lengths),
        }
    }
    external = Path(args.external)
    if external.exists():
        answers = [
            json.loads(line)["response"] for line in external.read_text(encoding="utf-8").splitlines() if line.strip()
        ]
        ext = [len(tok(a, add_special_tokens=False).input_ids) for a in answers]
        r["lengths_external"] = percentiles(ext)
        dist["external"] = {
            "source": "the shared external set (13 open models, lists of 20 colleges; "
            "../shared/data/external), tokenized with the built-in model's tokenizer",
            **percentiles(ext),
            "histogram": histogram(ext),
        }
    print(json.dumps(r, indent=2))
    if not args.no_write:
        LENGTHS_FILE.write_text(
            json.dumps(
                {
                    "date": date.today().isoformat(),
                    "default": "builtin",
                    "histogram": dist["builtin"]["histogram"],
                    "sources": dist,
                },
                indent=1,
            )
            + "\n",
            encoding="utf-8",
        )
        write_doc(r)


def write_doc(r: dict) -> None:
    sys.path.insert(0, str(ROOT / "benchmarks"))
    from _doc import write_section

    b = r["lengths_builtin"]
    measured = r["static_cpu_s"] if r["ratio_unit"] == "tok_cpu_s" else r["static_s"]
    engine_measured = r["engine_cpu_s"] if r["ratio_unit"] == "tok_cpu_s" else r["engine_s"]
    lines = [
        f"`benchmarks/continuous_generation.py`, {date.today().isoformat()}, {platform.machine()}, {os.cpu_count()} "
        f"cores, torch CPU, fp32, load average {r['load_average'][0]:.2f} at the start. The built-in model "
        f"(Qwen2.5-Coder-0.5B-Instruct) answers the demo grid's {r['prompts']} prompts (12 profiles x "
        f"{', '.join(r['templates'])}) at the study's decoding (temperature 0.75, top-p 0.95, at most "
        f"{r['max_new_tokens']} new tokens), batch {r['batch']}; every answer ends where the model ends it. All three "
        + (
            "modes in one run, on the same prompts and seeds, one after the other."
            if r["rounds"] == 1
            else f"modes in one run, on the same prompts and seeds, interleaved over {r['rounds']} rounds (the order "
            "reversed every other round; times are the mean per round)."
        ),
        "",
        "| mode | wall time | CPU time | useful output tokens | useful tokens per wall s | per CPU s | "
        "useful / computed row-steps |",
        "| --- | --- | --- | --- | --- | --- | --- |",
        *[
            f"| {label} | {r[m + '_s']:.1f} s | {r[m + '_cpu_s']:.1f} s | {r[m + '_tokens']:,} | {r[m + '_tok_s']:.1f} "
            f"| {r[m + '_tok_cpu_s']:.1f} | {util} |"
            for m, label, util in (
                ("plain", "plain `model.generate` (its own sampler), static batches", f"{r['plain_utilisation']:.0%}"),
                (
                    "static",
                    "this project, static batches (`continuous_batching=False`)",
                    f"{r['static_utilisation']:.0%}",
                ),
                ("engine", "this project, continuous batching (the default)", "100% (a row leaves at its EOS)"),
            )
        ],
        "",
        (
            "Ratios per CPU second: one torch thread, so the process's CPU time is the work each mode did, whatever "
            "else ran on the shared machine (load average "
            f"{r['load_average'][0]:.1f} at the start, {r['load_average_end'][0]:.1f} at the end). "
            if r["ratio_unit"] == "tok_cpu_s"
            else "Ratios per wall second. "
        )
        + f"Continuous / static: **{r['engine_vs_static']:.2f}x**; continuous / plain `model.generate`: "
        f"**{r['engine_vs_plain']:.2f}x** (targets >= 1.5x each: "
        f"{'met' if min(r['engine_vs_static'], r['engine_vs_plain']) >= 1.5 else 'missed'}). "
        f"{r['same_text']} of {r['prompts']} answers are identical between the continuous and the static path "
        "(per-sample seeds; a near-tied token can differ where padding changes a floating-point sum).",
        "",
        "What bounds the gain here, measured on this machine in the same run ("
        + ("CPU seconds, one torch thread" if r["ratio_unit"] == "tok_cpu_s" else "wall seconds")
        + "): a decode "
        "step costs "
        + ", ".join(f"{float(v):.3f} s at {k} row{'s' if k != '1' else ''}" for k, v in r["cost_decode_step_s"].items())
        + f", and a prefill {r['cost_prefill_token_s'] * 1000:.1f} ms per prompt token. A step's cost grows far "
        "more slowly than its rows (the weights are read once per step whatever the rows), so the rows a static "
        "batch leaves idle cost little, and its last, smaller batch is cheap per step. From these costs the "
        f"static path must spend {r['static_predicted_s']:.0f} s on these answers (measured: {measured:.0f} s), "
        f"and any scheduler at least {r['floor_s']:.0f} s: every prompt token prefilled once without padding "
        f"({r['floor_prefill_share']:.0%} of it) and every answer token decoded in a full batch of {r['batch']}. "
        f"Continuous batching at batch {r['batch']} can therefore be at most **{r['bound_vs_static']:.2f}x** the "
        "static path on this grid and this machine, whatever its scheduling; the 1.5x target is out of reach "
        f"here by this measurement. This engine spent {engine_measured:.0f} s, so the floor is "
        f"{r['floor_s'] / engine_measured:.0%} of it; the gap is the drain (once the queue is empty the last rows "
        "decode in an ever smaller batch) and the rows a refill waits for. The rest of the gain over plain "
        "`model.generate` is the sampler (transformers' top-p sorts the 151,936-token vocabulary for every row at "
        "every step). The gain grows with the spread of answer lengths and with the batch (a GPU at 256-512 rows, "
        "where a step costs nearly the same at any row count and a static batch runs until its longest answer).",
        "",
        f"Answer lengths of the built-in model here (tokens): mean {b['mean']:.0f}, p10 {b['p10']:.0f}, median "
        f"{b['p50']:.0f}, p90 {b['p90']:.0f}, max {b['max']}; {r['at_budget']} of {b['n']} reached the "
        f"{r['max_new_tokens']}-token budget.",
    ]
    if "lengths_external" in r:
        e = r["lengths_external"]
        lines.append(
            f"The shared external set's {e['n']:,} answers (13 open models, each a list of 20 colleges, so "
            f"longer than the study's three recommendations): mean {e['mean']:.0f}, median {e['p50']:.0f}, "
            f"p90 {e['p90']:.0f}, max {e['max']} tokens."
        )
    lines.append(
        "Both distributions are in `benchmarks/answer_lengths.json` (histograms of 10-token bins, no text), "
        "which `benchmarks/gpu_throughput.py` draws answer lengths from."
    )
    write_section(SECTION, "\n".join(lines))


if __name__ == "__main__":
    main()
