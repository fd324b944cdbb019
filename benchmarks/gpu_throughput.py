"""Benchmark: generation throughput of the Llama-3.1-8B architecture on one GPU.

Weights cannot be downloaded on the device machine and throughput does not depend on their
values, so the model is built from the Llama-3.1-8B configuration with random weights in
bf16. Each prompt is ~200 random tokens, sampled n = 10 times (the study's 10 runs), 300 new
tokens each (``min_new_tokens`` keeps every sample at full length). The script tries growing
batch sizes (prompts x n sequences per batch) until memory runs out, reports output tokens/s
for each, and projects the time of one model's full study grid (360 profiles x 3 templates x
10 runs + 46 reduced-context profiles x 10 runs, 300 tokens each).

    python benchmarks/gpu_throughput.py                  # on a GPU machine; writes a JSON result
    python benchmarks/gpu_throughput.py --tiny --device cpu --out /tmp/r.json   # CPU-sized variant (tests)

Target (issue): >= 10,000 output tokens/s on one H200 (a three-model audit in under 30 min).
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
STUDY_SAMPLES_PER_MODEL = (360 * 3 + 46) * 10  # 11,260 generations


def llama_config(tiny: bool):
    from transformers import LlamaConfig

    if tiny:
        return LlamaConfig(vocab_size=512, hidden_size=64, intermediate_size=128, num_hidden_layers=2,
                           num_attention_heads=4, num_key_value_heads=2, max_position_embeddings=1024)
    # meta-llama/Llama-3.1-8B-Instruct
    return LlamaConfig(vocab_size=128256, hidden_size=4096, intermediate_size=14336, num_hidden_layers=32,
                       num_attention_heads=32, num_key_value_heads=8, max_position_embeddings=131072,
                       rope_theta=500000.0, rms_norm_eps=1e-5,
                       rope_scaling={"factor": 8.0, "low_freq_factor": 1.0, "high_freq_factor": 4.0,
                                     "original_max_position_embeddings": 8192, "rope_type": "llama3"},
                       bos_token_id=128000, eos_token_id=128009)


def build(config, device: str, dtype):
    import torch
    from transformers import LlamaForCausalLM

    torch.manual_seed(0)
    previous = torch.get_default_dtype()
    torch.set_default_dtype(dtype)
    try:
        with torch.device(device):
            model = LlamaForCausalLM(config)
    finally:
        torch.set_default_dtype(previous)
    return model.eval()


def run_batch(model, prompts: int, n: int, prompt_len: int, new_tokens: int, device: str) -> dict:
    import torch

    vocab = model.config.vocab_size
    ids = torch.randint(10, vocab - 10, (prompts, prompt_len), device=device)
    mask = torch.ones_like(ids)
    if device.startswith("cuda"):
        torch.cuda.synchronize()
    t0 = time.perf_counter()
    with torch.inference_mode():
        out = model.generate(input_ids=ids, attention_mask=mask, do_sample=True, temperature=0.75, top_p=0.95,
                             num_return_sequences=n, max_new_tokens=new_tokens, min_new_tokens=new_tokens,
                             pad_token_id=0)
    if device.startswith("cuda"):
        torch.cuda.synchronize()
    dt = time.perf_counter() - t0
    tokens = (out.shape[1] - prompt_len) * out.shape[0]
    return {"prompts": prompts, "sequences": out.shape[0], "seconds": dt, "output_tokens": int(tokens),
            "tokens_per_s": tokens / dt}


def main() -> None:
    import torch

    ap = argparse.ArgumentParser()
    ap.add_argument("--tiny", action="store_true", help="a tiny Llama (CPU-sized variant for tests)")
    ap.add_argument("--device", default="cuda" if torch.cuda.is_available() else "cpu")
    ap.add_argument("--prompt-len", type=int, default=200)
    ap.add_argument("--new-tokens", type=int, default=300)
    ap.add_argument("--n", type=int, default=10, help="samples per prompt (the study's runs)")
    ap.add_argument("--prompts", default="4,16,32,64,96", help="prompts per batch to try, comma-separated")
    ap.add_argument("--out", default=os.environ.get("OUT", ".") + "/gpu_throughput.json")
    args = ap.parse_args()
    dtype = torch.bfloat16 if args.device.startswith("cuda") else torch.float32
    t0 = time.perf_counter()
    model = build(llama_config(args.tiny), args.device, dtype)
    build_s = time.perf_counter() - t0
    run_batch(model, 1, min(args.n, 2), args.prompt_len, 8, args.device)  # warm-up
    results = []
    for p in [int(x) for x in args.prompts.split(",")]:
        try:
            r = run_batch(model, p, args.n, args.prompt_len, args.new_tokens, args.device)
        except torch.cuda.OutOfMemoryError:
            results.append({"prompts": p, "error": "out of memory"})
            torch.cuda.empty_cache()
            break
        results.append(r)
        print(json.dumps(r), flush=True)
    best = max((r for r in results if "tokens_per_s" in r), key=lambda r: r["tokens_per_s"])
    study_tokens = STUDY_SAMPLES_PER_MODEL * args.new_tokens
    summary = {
        "date": date.today().isoformat(), "device": torch.cuda.get_device_name(0) if args.device.startswith("cuda") else platform.processor() or platform.machine(),
        "architecture": "tiny Llama" if args.tiny else "Llama-3.1-8B (random weights, bf16)",
        "torch": torch.__version__, "model_build_s": build_s, "prompt_len": args.prompt_len,
        "new_tokens": args.new_tokens, "n": args.n, "runs": results, "best_tokens_per_s": best["tokens_per_s"],
        "study_generations_per_model": STUDY_SAMPLES_PER_MODEL,
        "projected_study_minutes_per_model": study_tokens / best["tokens_per_s"] / 60,
        "projected_three_model_minutes": 3 * study_tokens / best["tokens_per_s"] / 60,
    }
    Path(args.out).parent.mkdir(parents=True, exist_ok=True)
    Path(args.out).write_text(json.dumps(summary, indent=2))
    print(json.dumps({k: v for k, v in summary.items() if k != "runs"}, indent=2))


if __name__ == "__main__":
    sys.exit(main())
