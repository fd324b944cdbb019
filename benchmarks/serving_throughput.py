"""Benchmark: the generations asset against a serving engine, as a fraction of the engine's capacity.

A loopback serving-engine simulator (benchmarks/serving_simulator.py: a real HTTP server speaking
the OpenAI chat-completions API, an aggregate budget of ``--capacity`` output tokens/s shared by
the requests in flight, at most ``--per-request`` tokens/s per request, a prefill delay, answers
of 120-300 tokens) serves the study grid's request mix for one model, measured in one run:

- ``previous``: the engine as it was before (the asset handed the client 16 prompts at a time
  and waited for the slowest; the client sent them from a pool of 8 threads with urllib), on
  ``--previous-requests`` requests of the same mix;
- ``asset``: the ``generations`` asset at default settings (the OpenAI backend's ``AsyncOpenAI``
  streaming, 256 requests in flight, commits as answers arrive) materializing one partition of
  the study grid (360 profiles x 10 runs = 3,600 samples) into a SQLite results database.

Reported: achieved output tokens/s (the simulator's count over the span from the first request
to the last answer) as a fraction of its capacity, and the ratio of the two, plus the asset's
wall time. Target (issue 12): asset >= 90% of capacity on 2 cores and >= 10x the previous engine.

    .venv/bin/python benchmarks/serving_throughput.py [--capacity 12000] [--per-request 80] [--no-write]
    .venv/bin/python benchmarks/serving_throughput.py --small --no-write     # the tests' size
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import sys
import tempfile
import time
import urllib.request
from concurrent.futures import ThreadPoolExecutor
from datetime import date
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path[:] = [p for p in sys.path if Path(p or ".").resolve() != ROOT / "benchmarks"]  # statistics.py shadows stdlib
sys.path.insert(0, str(ROOT))
sys.path.insert(1, str(ROOT / "benchmarks"))

from serving_simulator import ServingSimulator, SimulatorProcess  # noqa: E402

MODEL = "sim-model"


def previous_engine(
    url: str, prompts: list[str], seeds: list[int], max_tokens: int, step: int = 16, threads: int = 8
) -> None:
    """The generation loop before this change: steps of 16 prompts, each sent from 8 threads, the
    next step only after the slowest answer of this one (urllib, one request per sample)."""

    def one(prompt_seed):
        prompt, seed = prompt_seed
        body = json.dumps(
            {
                "model": MODEL,
                "messages": [{"role": "user", "content": prompt}],
                "max_tokens": max_tokens,
                "temperature": 0.75,
                "top_p": 0.95,
                "n": 1,
                "seed": int(seed),
            }
        ).encode()
        req = urllib.request.Request(url + "/chat/completions", data=body, headers={"content-type": "application/json"})
        with urllib.request.urlopen(req, timeout=300) as resp:
            return json.loads(resp.read())

    for start in range(0, len(prompts), step):
        with ThreadPoolExecutor(max_workers=threads) as pool:
            list(pool.map(one, zip(prompts[start : start + step], seeds[start : start + step], strict=False)))


def steady_share(sim, capacity: float, stats) -> float | None:
    """The share of capacity decoded while the asset still had requests to send; None where every
    request was in flight at once (then nothing was left to send after the first burst)."""
    return sim.steady_tps() / capacity if stats.requests > stats.peak_in_flight else None


def share(value: float | None) -> str:
    return "n/a (every request in flight at once)" if value is None else f"{value:.1%}"


def asset_run(url: str, tmp: Path, runs: int, log, max_concurrency: int | None = None) -> dict:
    """Materialize ``generations`` for ``sim-model|base`` of the study grid against the simulator
    (``max_concurrency``: requests in flight; None: the resource's default)."""
    import dagster as dg
    import yaml

    from fairness_assets.defs.generation import assets as gen
    from fairness_assets.defs.partitions import MODEL_PARTITIONS
    from fairness_assets.defs.reference import assets as ref
    from resources import database as D
    from resources.llm.resource import LLMResource
    from resources.settings import AuditGridResource, GenerationSourceResource, ReferenceDataResource

    registry = tmp / "models.yaml"
    registry.write_text(yaml.safe_dump({"models": {MODEL: {"source": MODEL, "backend": "openai", "base_url": url}}}))
    database = D.ResultsDatabase(url=f"sqlite:///{tmp / 'results.db'}")
    instance = dg.DagsterInstance.ephemeral()
    instance.add_dynamic_partitions(MODEL_PARTITIONS.name, [MODEL])
    t0 = time.perf_counter()
    result = dg.materialize(
        [ref.profiles, ref.prompts, gen.generations],
        instance=instance,
        partition_key=f"{MODEL}|base",
        resources={
            "database": database,
            "results_io": D.SQLResultsIOManager(database=database),
            "reference": ReferenceDataResource(),
            "audit_grid": AuditGridResource(
                design="study", models=[MODEL], runs=runs, model_registry_path=str(registry)
            ),
            "generation_source": GenerationSourceResource(),
            "llm": (
                LLMResource(registry_path=str(registry))
                if max_concurrency is None  # default settings
                else LLMResource(registry_path=str(registry), max_concurrency=max_concurrency)
            ),
        },
    )
    wall = time.perf_counter() - t0
    assert result.success
    rows = database.count(D.Generation)
    cost = database.read_rows(D.GenerationCost).iloc[-1]
    database.dispose()
    return {"wall_s": wall, "rows": rows, "cost_kind": cost["compute_kind"], "request_s": float(cost["compute_s"])}


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--capacity", type=float, default=12_000.0, help="simulator output tokens/s in all")
    ap.add_argument("--per-request", type=float, default=80.0, help="simulator tokens/s per request at most")
    ap.add_argument("--runs", type=int, default=10, help="runs per profile (study: 10 -> 3,600 samples)")
    ap.add_argument("--previous-requests", type=int, default=96)
    ap.add_argument("--small", action="store_true", help="the tests' size: 20x faster simulator, 1 run")
    ap.add_argument(
        "--lengths",
        default="",
        help="answer lengths file (benchmarks/answer_lengths.json): the "
        "simulator's answers take these lengths; default: 120-300 tokens",
    )
    ap.add_argument(
        "--max-concurrency",
        default="",
        help="comma-separated requests-in-flight settings to measure besides the default, e.g. 512",
    )
    ap.add_argument(
        "--in-process-simulator",
        action="store_true",
        help="run the simulator in a thread of this process (default: a child process, as a real "
        "engine is another process; in a thread it shares the client's interpreter lock)",
    )
    ap.add_argument("--no-write", action="store_true")
    args = ap.parse_args()
    extra = [int(x) for x in args.max_concurrency.split(",") if x.strip()]
    lengths = ()
    if args.lengths:
        from benchmarks.lengths import load_lengths

        lengths = tuple(min(300, x) for x in load_lengths(args.lengths))
    if args.small:
        args.capacity, args.per_request, args.runs, args.previous_requests = 240_000.0, 1_600.0, 1, 48
    r = {
        "capacity_tps": args.capacity,
        "per_request_tps": args.per_request,
        "runs": args.runs,
        "lengths": (
            f"drawn from {args.lengths} (mean {sum(lengths) / len(lengths):.0f} tokens)"
            if lengths
            else "120-300 tokens"
        ),
    }
    r["simulator"] = "a thread of the client's process" if args.in_process_simulator else "a child process"
    simulator = ServingSimulator if args.in_process_simulator else SimulatorProcess
    with (
        simulator(
            capacity_tps=args.capacity, per_request_tps=args.per_request, models=(MODEL,), lengths=lengths
        ) as sim,
        tempfile.TemporaryDirectory() as tmp,
    ):
        prompts = [f"prompt {i}" for i in range(args.previous_requests)]
        seeds = list(range(1_000_000, 1_000_000 + args.previous_requests))
        previous_engine(sim.url, prompts, seeds, 300)
        r["previous_tps"] = sim.achieved_tps()
        r["previous_requests"] = sim.stats.requests
        sim.reset_stats()
        out = asset_run(sim.url, Path(tmp), args.runs, print)
        r["asset_tps"] = sim.achieved_tps()
        r["asset_steady_fraction"] = steady_share(sim, args.capacity, sim.stats)
        r["asset_requests"] = sim.stats.requests
        r["asset_rows"] = out["rows"]
        r["asset_wall_s"] = out["wall_s"]
        r["asset_cost_kind"], r["asset_request_s"] = out["cost_kind"], out["request_s"]
        stats = sim.stats
        r["asset_generation_s"] = stats.last_answer_at - stats.first_request_at
        r["asset_peak_in_flight"] = stats.peak_in_flight
        r["settings"] = []
        for n in extra:  # the same partition in a fresh database, this many requests in flight
            sim.reset_stats()
            with tempfile.TemporaryDirectory() as tmp2:
                o = asset_run(sim.url, Path(tmp2), args.runs, print, max_concurrency=n)
            stats = sim.stats
            r["settings"].append(
                {
                    "max_concurrency": n,
                    "tps": sim.achieved_tps(),
                    "fraction": sim.achieved_tps() / args.capacity,
                    "steady": steady_share(sim, args.capacity, stats),
                    "rows": o["rows"],
                    "wall_s": o["wall_s"],
                    "peak_in_flight": stats.peak_in_flight,
                }
            )
    from resources.llm.resource import LLMResource

    r["default_concurrency"] = LLMResource().max_concurrency
    r["previous_fraction"] = r["previous_tps"] / args.capacity
    r["asset_fraction"] = r["asset_tps"] / args.capacity
    r["ratio"] = r["asset_tps"] / r["previous_tps"]
    print(json.dumps(r, indent=2))
    if not args.no_write:
        write_doc(r)


def write_doc(r: dict) -> None:
    from _doc import write_section

    write_section(
        "Serving engine (OpenAI-compatible endpoint)",
        (
            f"`benchmarks/serving_throughput.py`, {date.today().isoformat()}, {platform.machine()}, {os.cpu_count()} "
            f"cores, Python {platform.python_version()}. A loopback serving-engine simulator "
            f"(`benchmarks/serving_simulator.py`: {r['capacity_tps']:,.0f} output tokens/s shared by the requests in "
            f"flight, at most {r['per_request_tps']:.0f} tokens/s per request, 50 ms prefill, answer lengths "
            f"{r['lengths']}) serving the study grid's request mix for one model, the simulator in {r['simulator']}; "
            "both engines in one run.\n\n"
            "| engine | requests | achieved tokens/s | share of capacity, first request to last answer | "
            "while requests were left to send |\n| --- | --- | --- | --- | --- |\n"
            f"| previous (16 prompts per step, 8 threads, urllib) | {r['previous_requests']:,} | "
            f"{r['previous_tps']:,.0f} | {r['previous_fraction']:.1%} | |\n"
            f"| the `generations` asset at default settings (AsyncOpenAI, {r['default_concurrency']} in flight, "
            "commits as answers arrive) | "
            f"{r['asset_requests']:,} | {r['asset_tps']:,.0f} | **{r['asset_fraction']:.1%}** | "
            f"{share(r['asset_steady_fraction'])} |\n"
            + "".join(
                f"| the same, `FAIRNESS_LLM_MAX_CONCURRENCY={s['max_concurrency']}` ({s['peak_in_flight']} in flight "
                f"at most) | {s['rows']:,} | {s['tps']:,.0f} | **{s['fraction']:.1%}** | {share(s['steady'])} |\n"
                for s in r.get("settings", [])
            )
            + "\n"
            f"Asset / previous: **{r['ratio']:.1f}x** (target >= 10x); share of capacity at the defaults: targets >= "
            "90% (issue 12) and >= 96% kept busy (issue 24). The asset "
            f"materialized {r['asset_rows']:,} generations (study grid, base template, {r['runs']} runs) in "
            f"{r['asset_wall_s']:.1f} s wall time, {r['asset_generation_s']:.1f} s of them between the first request "
            f"and the last answer; at most {r['asset_peak_in_flight']} requests were in flight at once.\n"
            + (
                "\nEach further setting materialized the same partition into a fresh database against the same "
                "simulator in the same run. The first share counts from the first request to the last answer, so it "
                "includes the drain at the end: once the last request is sent, fewer requests are left than the engine "
                "can serve, and each decodes at its per-request ceiling. The second counts the tokens decoded while "
                "the asset still had requests to send: what the client keeps busy.\n"
                if r.get("settings")
                else ""
            )
        ),
    )


if __name__ == "__main__":
    main()
