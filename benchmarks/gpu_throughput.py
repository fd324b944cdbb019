r"""Benchmark: generation throughput of the Llama-3.1-8B architecture on one GPU.

Needs only torch and transformers (the GPU machine has nothing else of the project's) and
imports the project's sampler, ``resources/llm/sampling.py``, which imports torch alone.
Weights cannot be downloaded on the device machine and throughput does not depend on their
values, so the model is built from the Llama-3.1-8B configuration with random bf16 weights.
Each prompt is ``--prompt-len`` random tokens, sampled ``--n`` times (the study's 10 runs);
every sequence generates ``--new-tokens`` tokens (``min_new_tokens``), so static batches carry
no padding waste here (real answers end at different lengths: see docs/generation.md).

For each batch size (sequences in flight) it measures, in one run on the same model:

- ``plain``: ``model.generate(do_sample=True, temperature, top_p)``, transformers' own sampler
  (a full-vocabulary sort per row per step for top-p);
- ``counter``: ``model.generate`` with the project's batch-independent sampler
  (``CounterSampler``: per-row counter-based noise, exact top-p by rejection, no host round-trip);
- ``counter_static_cache``: the same with ``cache_implementation="static"``;
- ``continuous``: transformers' continuous batching (``generate_batch``, paged attention), with
  its own sampler;
- at **real answer lengths** (issue 24): every sample's length is drawn from the distribution of
  real answers (``--lengths``, default ``benchmarks/answer_lengths.json``: the shared external set
  of 13 open models and the built-in model's demo answers) and the answer ends there (an EOS forced
  at the drawn length: random weights never choose when to stop). ``engine``: the project's
  continuous-batching engine (``resources/llm/engine.py``) over ``--queue`` x the batch samples:
  finished rows leave, waiting prompts are prefilled in. ``counter_real``: static batches of the same
  samples (``model.generate`` with the project's sampler, each batch computed until its longest
  answer ends). Useful tokens/s counts the answers' own tokens only;

and, for the sampler alone on logits of this model's shape: the project's sampler, transformers'
top-p warper + multinomial, and the previous per-row loop (``.cpu()``, a CPU generator per row),
each as a share of a decode step. It projects the time of one model's study grid (360 profiles x
3 templates x 10 runs + 46 reduced-context profiles x 10 runs = 11,260 samples, ``--new-tokens``
each) and of the three-model grid. Results are written after every measurement, so a run cut
short still returns what it measured.

    python benchmarks/gpu_throughput.py                  # on a GPU machine; writes $OUT/gpu_throughput.json
    python benchmarks/gpu_throughput.py --tiny --device cpu --out /tmp/r.json   # CPU-sized variant (tests)

Targets (issue 12): >= 10,000 output tokens/s on one H200, study grid (three models) <= 30 min,
sampling <= 5% of a decode step at batch 256. Issue 24: at real lengths the engine keeps >= 90% of
the fixed-length throughput at the same batch and >= 12,000 useful tokens/s on one H200; the
projection of the study grid is made from the real-length figure.

The one prepared command for a lent H200 (about 8 minutes; writes $OUT/gpu_throughput.json):

    python benchmarks/gpu_throughput.py \
        --variants counter:256/512,greedy:256/512,engine:256/512,counter_real:256/512 --budget-s 480
"""

from __future__ import annotations

import argparse
import json
import math
import os
import platform
import sys
import time
from datetime import date
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
# benchmarks/statistics.py would shadow the standard library's statistics (torch imports it)
sys.path[:] = [p for p in sys.path if Path(p or ".").resolve() != ROOT / "benchmarks"]
sys.path.insert(0, str(ROOT))
STUDY_SAMPLES_PER_MODEL = (360 * 3 + 46) * 10  # 11,260 generations
LENGTHS_FILE = ROOT / "benchmarks" / "answer_lengths.json"
from benchmarks.lengths import draw_lengths, load_lengths  # noqa: E402  (standard library only)


def llama_config(tiny: bool):
    from transformers import LlamaConfig

    if tiny:
        return LlamaConfig(
            vocab_size=512,
            hidden_size=64,
            intermediate_size=128,
            num_hidden_layers=2,
            num_attention_heads=4,
            num_key_value_heads=2,
            max_position_embeddings=1024,
            bos_token_id=1,
            eos_token_id=2,
            pad_token_id=0,
        )
    # meta-llama/Llama-3.1-8B-Instruct
    return LlamaConfig(
        vocab_size=128256,
        hidden_size=4096,
        intermediate_size=14336,
        num_hidden_layers=32,
        num_attention_heads=32,
        num_key_value_heads=8,
        max_position_embeddings=131072,
        rope_theta=500000.0,
        rms_norm_eps=1e-5,
        rope_scaling={
            "factor": 8.0,
            "low_freq_factor": 1.0,
            "high_freq_factor": 4.0,
            "original_max_position_embeddings": 8192,
            "rope_type": "llama3",
        },
        bos_token_id=128000,
        eos_token_id=128009,
        pad_token_id=128004,
    )


def build(config, device: str, dtype):
    import torch
    from transformers import LlamaForCausalLM

    torch.manual_seed(0)
    config._attn_implementation = "sdpa"
    previous = torch.get_default_dtype()
    torch.set_default_dtype(dtype)
    try:
        with torch.device(device):
            model = LlamaForCausalLM(config)
    finally:
        torch.set_default_dtype(previous)
    return model.eval()


def _sync(device: str) -> None:
    import torch

    if device.startswith("cuda"):
        torch.cuda.synchronize()


def _inputs(model, batch: int, n: int, prompt_len: int, device: str):
    """``ceil(batch / n)`` random prompts, each repeated ``n`` times, cut to ``batch`` rows."""
    import torch

    g = torch.Generator().manual_seed(batch)
    prompts = torch.randint(10, model.config.vocab_size - 10, (math.ceil(batch / n), prompt_len), generator=g)
    ids = prompts.repeat_interleave(n, dim=0)[:batch].to(device)
    return ids, torch.ones_like(ids)


def generate_run(
    model,
    variant: str,
    batch: int,
    n: int,
    prompt_len: int,
    new_tokens: int,
    device: str,
    temperature: float = 0.75,
    top_p: float = 0.95,
    lengths: list[int] | None = None,
    queue: int = 4,
) -> dict:
    import torch
    from transformers import GenerationConfig, LogitsProcessorList

    from resources.llm.sampling import CounterSampler

    ids, mask = _inputs(model, batch, n, prompt_len, device)
    pad = model.config.pad_token_id
    seeds = torch.arange(batch, dtype=torch.int64) * 7919 + 1
    if variant in ("engine", "counter_real"):
        return real_length_run(
            model, variant, batch, n, prompt_len, new_tokens, device, temperature, top_p, lengths=lengths, queue=queue
        )
    if variant == "continuous":
        cfg = GenerationConfig(
            max_new_tokens=new_tokens,
            min_new_tokens=new_tokens,
            do_sample=True,
            temperature=temperature,
            top_p=top_p,
            eos_token_id=model.config.eos_token_id,
            pad_token_id=pad,
        )
        _sync(device)
        t0 = time.perf_counter()
        # not under inference_mode: the manager's worker thread updates its own static tensors in place
        outputs = model.generate_batch(ids.tolist(), generation_config=cfg, progress_bar=False)
        _sync(device)
        dt = time.perf_counter() - t0
        tokens = sum(len(o.generated_tokens) for o in outputs.values())
        return {
            "variant": variant,
            "sequences": batch,
            "seconds": dt,
            "output_tokens": int(tokens),
            "tokens_per_s": tokens / dt,
            "step_ms": 1000 * dt / new_tokens,
        }
    kwargs = dict(
        input_ids=ids, attention_mask=mask, max_new_tokens=new_tokens, min_new_tokens=new_tokens, pad_token_id=pad
    )
    if variant == "plain":
        kwargs.update(do_sample=True, temperature=temperature, top_p=top_p)
    elif variant == "greedy":  # no sampling at all: the decode step without a sampler, for the sampler's share
        kwargs.update(do_sample=False, temperature=None, top_p=None, top_k=None)
    else:
        kwargs.update(
            do_sample=False,
            temperature=None,
            top_p=None,
            top_k=None,
            logits_processor=LogitsProcessorList(
                [CounterSampler(seeds, temperature, top_p, ids.shape[1], device=device)]
            ),
        )
        if variant == "counter_static_cache":
            kwargs.update(cache_implementation="static", disable_compile=True)
    _sync(device)
    t0 = time.perf_counter()
    with torch.inference_mode():
        out = model.generate(**kwargs)
    _sync(device)
    dt = time.perf_counter() - t0
    tokens = (out.shape[1] - ids.shape[1]) * out.shape[0]
    return {
        "variant": variant,
        "sequences": int(out.shape[0]),
        "seconds": dt,
        "output_tokens": int(tokens),
        "tokens_per_s": tokens / dt,
        "step_ms": 1000 * dt / new_tokens,
    }


def real_length_run(
    model,
    variant: str,
    batch: int,
    n: int,
    prompt_len: int,
    new_tokens: int,
    device: str,
    temperature: float,
    top_p: float,
    lengths: list[int] | None,
    queue: int,
) -> dict:
    """``queue`` x ``batch`` samples whose answers end at lengths drawn from ``lengths`` (capped at
    ``new_tokens``): the continuous engine over all of them (``engine``), or static batches of
    ``batch`` (``counter_real``: each batch runs until its longest answer, the others' rows padding)."""
    import torch
    from transformers import LogitsProcessorList

    from resources.llm.engine import ContinuousEngine
    from resources.llm.sampling import CounterSampler

    total = batch * queue
    budgets = draw_lengths(lengths or [new_tokens], total, new_tokens, seed=batch)
    ids, _ = _inputs(model, total, n, prompt_len, device)
    seeds = [i * 7919 + 1 for i in range(total)]
    useful = sum(budgets)
    _sync(device)
    t0 = time.perf_counter()
    if variant == "engine":
        engine = ContinuousEngine(model, pad_token_id=model.config.pad_token_id, eos_token_ids=set(), batch_size=batch)
        produced = sum(
            len(f.tokens)
            for f in engine.run(ids.tolist(), seeds, max_new_tokens=budgets, temperature=temperature, top_p=top_p)
        )
        steps, row_steps = engine.stats.decode_steps, engine.stats.row_steps + engine.stats.prefill_rows
    else:
        produced, steps, row_steps = 0, 0, 0
        for start in range(0, total, batch):
            chunk = slice(start, start + batch)
            longest = max(budgets[chunk])
            sampler = CounterSampler(seeds[chunk], temperature, top_p, prompt_len, device=device)
            with torch.inference_mode():
                out = model.generate(
                    input_ids=ids[chunk],
                    attention_mask=torch.ones_like(ids[chunk]),
                    max_new_tokens=longest,
                    min_new_tokens=longest,
                    do_sample=False,
                    temperature=None,
                    top_p=None,
                    top_k=None,
                    pad_token_id=model.config.pad_token_id,
                    logits_processor=LogitsProcessorList([sampler]),
                )
            produced += sum(budgets[chunk])  # each answer ends at its length: the rest of its row is padding
            steps += longest
            row_steps += (out.shape[1] - prompt_len) * out.shape[0]
    _sync(device)
    dt = time.perf_counter() - t0
    return {
        "variant": variant,
        "sequences": batch,
        "samples": total,
        "seconds": dt,
        "output_tokens": int(produced),
        "useful_tokens": int(useful),
        "tokens_per_s": useful / dt,
        "row_steps": int(row_steps),
        "utilisation": useful / row_steps if row_steps else 0.0,
        "mean_length": useful / total,
        "step_ms": 1000 * dt / max(1, steps),
    }


def _time(fn, device: str, repeats: int) -> float:
    fn()
    _sync(device)
    t0 = time.perf_counter()
    for _ in range(repeats):
        fn()
    _sync(device)
    return (time.perf_counter() - t0) / repeats


def sampler_run(
    model, batch: int, device: str, temperature: float = 0.75, top_p: float = 0.95, with_loop: bool = False
) -> dict:
    """Milliseconds per step of each sampler on ``[batch, vocab]`` logits: the random model's own
    (nearly flat: the nucleus spans most of the vocabulary, the hardest case for top-p) and a
    peaked Zipf-shaped set, like a trained model's."""
    import torch
    from transformers import TemperatureLogitsWarper, TopPLogitsWarper

    from resources.llm.sampling import rounds_for, sample_top_p

    vocab = model.config.vocab_size
    ids = torch.randint(10, vocab - 10, (batch, 4), device=device)
    with torch.inference_mode():
        flat = model(input_ids=ids).logits[:, -1, :]
    ranks = torch.arange(1, vocab + 1, device=device, dtype=torch.float32)
    zipf = (-1.1 * torch.log(ranks)).repeat(batch, 1)
    perm = torch.argsort(torch.rand(batch, vocab, device=device), dim=-1)
    peaked = zipf.gather(1, perm).to(flat.dtype)
    seeds = torch.arange(batch, device=device, dtype=torch.int64)
    temp, topp = TemperatureLogitsWarper(temperature), TopPLogitsWarper(top_p)
    repeats = 5 if device.startswith("cuda") else 2
    out = {"batch": batch, "rounds": rounds_for(top_p)}
    for name, logits in (("flat", flat), ("peaked", peaked)):

        def counter(logits=logits):
            return sample_top_p(logits, seeds, 3, temperature, top_p, early_exit=False)

        def plain(logits=logits):
            s = topp(None, temp(None, logits.float()))
            return torch.multinomial(torch.softmax(s, dim=-1), 1)

        with torch.inference_mode():
            out[f"counter_ms_{name}"] = 1000 * _time(counter, device, repeats)
            out[f"plain_ms_{name}"] = 1000 * _time(plain, device, repeats)
            if with_loop:
                out[f"loop_ms_{name}"] = 1000 * _time(
                    lambda logits=logits: _old_loop(logits, temperature, top_p), device, 1
                )
    return out


def _old_loop(scores, temperature: float, top_p: float, shortlist: int = 256):
    """The sampler this project used before: a CPU generator and a multinomial per row per step."""
    import torch

    gens = [torch.Generator().manual_seed(i) for i in range(scores.shape[0])]
    probs = torch.softmax(scores.float() / temperature, dim=-1)
    vals, idx = torch.topk(probs, min(shortlist, probs.shape[-1]), dim=-1)
    vals, idx = vals.cpu(), idx.cpu()
    choice = torch.empty((scores.shape[0], 1), dtype=torch.long)
    for i in range(scores.shape[0]):
        v, ix = vals[i], idx[i]
        if float(v.sum()) < top_p:
            v, ix = torch.sort(probs[i].cpu(), descending=True)
        keep = (torch.cumsum(v, 0) - v) <= top_p
        choice[i] = ix[torch.multinomial(v * keep, 1, generator=gens[i])]
    return choice


def summarise(args, device_name: str, torch_version: str, build_s: float, runs: list, samplers: list) -> dict:
    ok = [r for r in runs if "tokens_per_s" in r]
    best_by = {}
    for r in ok:
        if r["tokens_per_s"] > best_by.get(r["variant"], {}).get("tokens_per_s", 0):
            best_by[r["variant"]] = r
    project = [r for r in ok if r["variant"] not in ("plain", "greedy", "engine", "counter_real")]  # fixed length
    best = max(project, key=lambda r: r["tokens_per_s"]) if project else None
    summary = {
        "date": date.today().isoformat(),
        "device": device_name,
        "architecture": "tiny Llama" if args.tiny else "Llama-3.1-8B (random weights, bf16, SDPA)",
        "torch": torch_version,
        "transformers": __import__("transformers").__version__,
        "model_build_s": build_s,
        "prompt_len": args.prompt_len,
        "new_tokens": args.new_tokens,
        "n": args.n,
        "runs": runs,
        "samplers": samplers,
        "best_by_variant": {
            k: {"sequences": v["sequences"], "tokens_per_s": v["tokens_per_s"]} for k, v in best_by.items()
        },
        "study_generations_per_model": STUDY_SAMPLES_PER_MODEL,
    }
    if best:
        study_tokens = STUDY_SAMPLES_PER_MODEL * args.new_tokens
        summary.update(
            best_variant=best["variant"],
            best_sequences=best["sequences"],
            best_tokens_per_s=best["tokens_per_s"],
            projected_study_minutes_per_model=study_tokens / best["tokens_per_s"] / 60,
            projected_three_model_minutes=3 * study_tokens / best["tokens_per_s"] / 60,
        )
    # issue 24: real answer lengths against the fixed-length figure at the same batch
    fixed = {r["sequences"]: r["tokens_per_s"] for r in ok if r["variant"] == "counter"}
    real = [r for r in ok if r["variant"] in ("engine", "counter_real")]
    summary["real_lengths"] = [
        {
            "variant": r["variant"],
            "batch": r["sequences"],
            "useful_tokens_per_s": r["tokens_per_s"],
            "utilisation": r["utilisation"],
            "mean_length": r["mean_length"],
            "share_of_fixed_length": r["tokens_per_s"] / fixed[r["sequences"]] if r["sequences"] in fixed else None,
        }
        for r in real
    ]
    engines = [r for r in real if r["variant"] == "engine"]
    if engines:
        e = max(engines, key=lambda r: r["tokens_per_s"])
        mean = e["mean_length"]
        summary.update(
            real_best_sequences=e["sequences"],
            real_best_tokens_per_s=e["tokens_per_s"],
            real_mean_length=mean,
            projected_study_minutes_per_model_real=STUDY_SAMPLES_PER_MODEL * mean / e["tokens_per_s"] / 60,
            projected_three_model_minutes_real=3 * STUDY_SAMPLES_PER_MODEL * mean / e["tokens_per_s"] / 60,
        )
    # the sampler's share of a decode step, at the batch closest to 256
    steps = {r["sequences"]: r["step_ms"] for r in ok if r["variant"] == "counter"}
    shares = []
    for s in samplers:
        if s["batch"] in steps:
            shares.append(
                {
                    "batch": s["batch"],
                    "decode_step_ms": steps[s["batch"]],
                    **{k.replace("_ms_", "_share_"): v / steps[s["batch"]] for k, v in s.items() if "_ms_" in k},
                }
            )
    summary["sampler_share_of_step"] = shares
    # in situ: a counter-sampled decode step minus a greedy one (same batch, same generate loop)
    greedy = {r["sequences"]: r["step_ms"] for r in ok if r["variant"] == "greedy"}
    summary["sampler_share_in_situ"] = [
        {
            "batch": b,
            "counter_step_ms": steps[b],
            "greedy_step_ms": greedy[b],
            "share": max(0.0, steps[b] - greedy[b]) / steps[b],
        }
        for b in sorted(steps)
        if b in greedy
    ]
    return summary


def main() -> None:
    import torch

    ap = argparse.ArgumentParser()
    ap.add_argument("--tiny", action="store_true", help="a tiny Llama (CPU-sized variant for tests)")
    ap.add_argument("--device", default="cuda" if torch.cuda.is_available() else "cpu")
    ap.add_argument("--prompt-len", type=int, default=200)
    ap.add_argument("--new-tokens", type=int, default=300)
    ap.add_argument("--n", type=int, default=10, help="samples per prompt (the study's runs)")
    ap.add_argument("--batches", default="64,128,256,512,768,1024", help="sequences per batch, comma-separated")
    ap.add_argument(
        "--variants",
        default="counter:all,greedy:64/128/256/512,plain:256/512,continuous:256/512",
        help="variant[:batch/batch...] (all: every --batches), comma-separated",
    )
    ap.add_argument("--sampler-batches", default="64,256,512")
    ap.add_argument("--lengths", default=str(LENGTHS_FILE), help="answer lengths file for engine / counter_real")
    ap.add_argument("--lengths-source", default="", help="a source of that file (builtin, external); default: its own")
    ap.add_argument("--queue", type=int, default=4, help="engine / counter_real: samples = queue x batch")
    ap.add_argument("--budget-s", type=float, default=400.0, help="skip what would start after this many seconds")
    ap.add_argument("--out", default=os.environ.get("OUT", ".") + "/gpu_throughput.json")
    args = ap.parse_args()
    dtype = torch.bfloat16 if args.device.startswith("cuda") else torch.float32
    device_name = (
        torch.cuda.get_device_name(0)
        if args.device.startswith("cuda")
        else (platform.processor() or platform.machine())
    )
    start = time.perf_counter()
    model = build(llama_config(args.tiny), args.device, dtype)
    build_s = time.perf_counter() - start
    generate_run(model, "counter", 2, 1, args.prompt_len, 4, args.device)  # warm-up
    generate_run(model, "plain", 2, 1, args.prompt_len, 4, args.device)
    batches = [int(x) for x in args.batches.split(",")]
    lengths = (
        load_lengths(args.lengths, args.lengths_source)
        if any(v in args.variants for v in ("engine", "counter_real"))
        else None
    )
    plan = []
    for item in (v.strip() for v in args.variants.split(",") if v.strip()):
        name, _, which = item.partition(":")
        chosen = batches if which in ("", "all") else [b for b in batches if str(b) in which.split("/")]
        plan.extend((name, b) for b in chosen)
    runs: list[dict] = []
    samplers: list[dict] = []
    out = Path(args.out)
    out.parent.mkdir(parents=True, exist_ok=True)

    def save() -> dict:
        summary = summarise(args, device_name, torch.__version__, build_s, runs, samplers)
        out.write_text(json.dumps(summary, indent=2))
        return summary

    sampler_batches = [int(x) for x in args.sampler_batches.split(",")]
    for b in sampler_batches:
        try:
            s = sampler_run(model, b, args.device, with_loop=(b == sampler_batches[0]))
        except Exception as exc:  # noqa: BLE001 - record and go on
            s = {"batch": b, "error": f"{type(exc).__name__}: {str(exc)[:300]}"}
        samplers.append(s)
        print(json.dumps(s), flush=True)
        save()
    for v, b in plan:
        if time.perf_counter() - start > args.budget_s:
            runs.append({"variant": v, "sequences": b, "error": "skipped: time budget spent"})
            continue
        try:
            r = generate_run(
                model, v, b, args.n, args.prompt_len, args.new_tokens, args.device, lengths=lengths, queue=args.queue
            )
        except Exception as exc:  # noqa: BLE001 - out of memory, or continuous batching unsupported here
            r = {"variant": v, "sequences": b, "error": f"{type(exc).__name__}: {str(exc)[:300]}"}
            if args.device.startswith("cuda"):
                torch.cuda.empty_cache()
        if r.get("output_tokens") == 0:
            r = {"variant": v, "sequences": b, "error": "no tokens generated (every request failed)"}
        runs.append(r)
        print(json.dumps(r), flush=True)
        save()
    summary = save()
    print(json.dumps({k: v for k, v in summary.items() if k not in ("runs", "samplers")}, indent=2))


if __name__ == "__main__":
    sys.exit(main())
