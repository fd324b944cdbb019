"""The GPU throughput script runs (CPU-sized variant): no GPU is lent to every task, so CI runs
the same code path on a tiny Llama on the CPU and checks its report."""

import json
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


@pytest.mark.slow
def test_gpu_throughput_script_cpu_variant(tmp_path):
    pytest.importorskip("torch", reason="the llm extra (torch, transformers) is not installed")
    out = tmp_path / "r.json"
    proc = subprocess.run(
        [
            sys.executable,
            str(ROOT / "benchmarks" / "gpu_throughput.py"),
            "--tiny",
            "--device",
            "cpu",
            "--prompt-len",
            "20",
            "--new-tokens",
            "8",
            "--n",
            "3",
            "--batches",
            "3,6",
            "--sampler-batches",
            "3",
            "--variants",
            "counter:all,greedy:all,plain:6",
            "--out",
            str(out),
        ],
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert proc.returncode == 0, proc.stderr[-2000:]
    r = json.loads(out.read_text())
    assert [(x["variant"], x["sequences"]) for x in r["runs"]] == [
        ("counter", 3),
        ("counter", 6),
        ("greedy", 3),
        ("greedy", 6),
        ("plain", 6),
    ]
    assert all(x["output_tokens"] == x["sequences"] * 8 for x in r["runs"])  # min_new_tokens: full length
    assert r["best_variant"] == "counter" and r["study_generations_per_model"] == 11260  # projected from sampling runs
    assert r["projected_three_model_minutes"] == pytest.approx(3 * r["projected_study_minutes_per_model"])
    assert [s["batch"] for s in r["sampler_share_in_situ"]] == [3, 6]
    assert {"counter_ms_flat", "plain_ms_peaked", "loop_ms_flat"} <= set(r["samplers"][0])


def test_statistics_benchmark_small_variant():
    proc = subprocess.run(
        [
            sys.executable,
            str(ROOT / "benchmarks" / "statistics.py"),
            "--runs",
            "3",
            "--n-boot",
            "300",
            "--n-perm",
            "300",
            "--no-write",
        ],
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert "| the two intervals agree (to 0.01) | yes |" in proc.stdout
    assert "study grid: 360 profiles x 3 runs" in proc.stdout


@pytest.mark.slow
def test_pipeline_study_benchmark_small_variant(qs_export):
    proc = subprocess.run(
        [
            sys.executable,
            str(ROOT / "benchmarks" / "pipeline_study.py"),
            "--small",
            "--no-write",
            "--corpus",
            str(qs_export),
        ],
        capture_output=True,
        text=True,
        timeout=900,
        cwd=ROOT,
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    summary = json.loads(proc.stdout[proc.stdout.rindex('{\n  "runs"') :])
    assert summary["answers"] == 360 and 0 < summary["peak_rss_gb"] < 4
    assert '"recommendations":' in proc.stdout and '"audit_report":' in proc.stdout  # per-asset wall times


@pytest.mark.slow
def test_cpu_generation_benchmark_small_variant():
    pytest.importorskip("torch", reason="the llm extra (torch, transformers) is not installed")
    proc = subprocess.run(
        [
            sys.executable,
            str(ROOT / "benchmarks" / "cpu_generation.py"),
            "--prompts",
            "2",
            "--new-tokens",
            "4",
            "--batch",
            "2",
            "--no-write",
        ],
        capture_output=True,
        text=True,
        timeout=900,
        cwd=ROOT,
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    r = json.loads(proc.stdout[proc.stdout.index("{\n") :])
    for mode in ("plain_batched", "engine_batched", "plain_single", "engine_single"):
        assert r[f"{mode}_tokens"] == 2 * 4  # the same token budget in every mode
    assert r["ratio_batched"] > 0 and r["same_text"] <= 2


def test_choosing_cost_reports_what_the_new_steps_add(tmp_path):
    """benchmarks/choosing_cost.py reads two pipeline_study.py --save files and adds up the new steps."""
    before = {
        "answers": 33780,
        "databases": {"SQLite": {"wall_s": 150.0, "partitions": 18, "steps": {"audit_report": 10.0, "scores": 40.0}}},
    }
    after = {
        "answers": 33780,
        "databases": {
            "SQLite": {
                "wall_s": 170.0,
                "partitions": 18,
                "steps": {"audit_report": 12.0, "scores": 41.0, "model_comparison": 6.0, "sensitivity": 9.5},
            }
        },
    }
    for name, data in (("b.json", before), ("a.json", after)):
        (tmp_path / name).write_text(json.dumps(data))
    proc = subprocess.run(
        [
            sys.executable,
            str(ROOT / "benchmarks" / "choosing_cost.py"),
            "--before",
            str(tmp_path / "b.json"),
            "--after",
            str(tmp_path / "a.json"),
        ],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert "| difference (after - before) | +20.0 |" in proc.stdout
    assert "| **added by the new steps** (their sum and the report's change) | **17.5** |" in proc.stdout


@pytest.mark.slow
def test_gpu_throughput_script_at_real_lengths(tmp_path):
    """Issue 24: answer lengths drawn from a lengths file; the engine against static batches of the same samples."""
    pytest.importorskip("torch", reason="the llm extra (torch, transformers) is not installed")
    lengths = tmp_path / "lengths.json"
    lengths.write_text(
        json.dumps({"histogram": {"bin_width": 10, "counts": [0, 3, 1]}, "sources": {"other": {"lengths": [5, 7]}}})
    )
    out = tmp_path / "r.json"
    proc = subprocess.run(
        [
            sys.executable,
            str(ROOT / "benchmarks" / "gpu_throughput.py"),
            "--tiny",
            "--device",
            "cpu",
            "--prompt-len",
            "12",
            "--new-tokens",
            "30",
            "--n",
            "2",
            "--batches",
            "4",
            "--sampler-batches",
            "4",
            "--variants",
            "counter:4,engine:4,counter_real:4",
            "--lengths",
            str(lengths),
            "--queue",
            "3",
            "--out",
            str(out),
        ],
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert proc.returncode == 0, proc.stderr[-2000:]
    r = json.loads(out.read_text())
    runs = {x["variant"]: x for x in r["runs"]}
    engine, static = runs["engine"], runs["counter_real"]
    assert engine["samples"] == static["samples"] == 12
    assert engine["useful_tokens"] == static["useful_tokens"] == engine["output_tokens"]  # each ends at its length
    assert 15 <= engine["mean_length"] <= 25  # drawn at the bins' middles, 15 and 25
    assert engine["utilisation"] == pytest.approx(1.0) and static["utilisation"] < 1.0
    assert {x["variant"] for x in r["real_lengths"]} == {"engine", "counter_real"}
    assert r["projected_study_minutes_per_model_real"] == pytest.approx(
        11260 * r["real_mean_length"] / r["real_best_tokens_per_s"] / 60
    )


def test_continuous_generation_cost_model_on_a_tiny_model():
    """The cost model behind the CPU bound of docs/benchmarks.md: decode steps measured at 1, batch/4,
    batch/2 and batch rows, a prefill per token, and step costs interpolated between them."""
    torch = pytest.importorskip("torch", reason="the llm extra (torch, transformers) is not installed")
    import importlib.util

    from transformers import Qwen2Config, Qwen2ForCausalLM

    # loaded by path: benchmarks/ on sys.path would shadow the stdlib's statistics with benchmarks/statistics.py
    spec = importlib.util.spec_from_file_location(
        "continuous_generation", ROOT / "benchmarks" / "continuous_generation.py"
    )
    cg = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(cg)

    torch.manual_seed(0)
    config = Qwen2Config(
        vocab_size=64,
        hidden_size=32,
        intermediate_size=64,
        num_hidden_layers=2,
        num_attention_heads=4,
        num_key_value_heads=2,
        max_position_embeddings=128,
    )
    model = Qwen2ForCausalLM(config).eval()
    costs = cg.cost_model(model, None, [list(range(1, 21))], batch=8, repeats=2)
    assert sorted(costs["decode_step_s"]) == [1, 2, 4, 8]
    assert all(v > 0 for v in costs["decode_step_s"].values()) and costs["prefill_token_s"] > 0
    fixed = {"decode_step_s": {1: 1.0, 4: 2.0, 16: 5.0}, "prefill_token_s": 0.1}
    assert cg.step_cost(fixed, 1) == 1.0 and cg.step_cost(fixed, 16) == 5.0
    assert cg.step_cost(fixed, 10) == pytest.approx(2.0 + 3.0 * 6 / 12)  # linear between 4 and 16 rows
    assert cg.step_cost(fixed, 32) == pytest.approx(10.0)  # beyond the largest: in proportion to the rows


def test_pipeline_scale_fits_a_line_and_names_a_step_that_grows_faster_than_linearly():
    """benchmarks/pipeline_scale.py (issue 36 item 1): the slope per added partition through three sizes, its
    residual, and the growth ratio that names a step whose cost per partition grows; the synthetic models
    beyond the study's three are registry entries of their own. In a subprocess: the benchmarks folder on the
    path would shadow the standard library's statistics module for the rest of this worker's tests."""
    check = """
import pipeline_scale as ps
linear = ps.fit([18, 54, 162], [10 + 2 * x for x in (18, 54, 162)])
assert abs(linear["slope"] - 2) < 1e-9 and linear["residual"] < 1e-9 and abs(linear["growth_ratio"] - 1) < 1e-9
quadratic = ps.fit([18, 54, 162], [0.01 * x * x for x in (18, 54, 162)])
assert quadratic["growth_ratio"] > ps.SUPERLINEAR and quadratic["residual"] > 1
assert ps.models_for(3) == list(ps.STUDY_MODELS)
assert ps.models_for(5)[3:] == ["synthetic-model-01", "synthetic-model-02"]
print("ok")
"""
    done = subprocess.run(
        [sys.executable, "-c", check], cwd=ROOT / "benchmarks", capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 0 and done.stdout.strip() == "ok", done.stderr[-2000:]


def test_compare_results_finds_a_changed_result_and_ignores_what_names_the_run(tmp_path):
    """benchmarks/compare_results.py: two files that differ only in run ids, paths and timestamps are the
    same (exit 0); a changed result value is named with its table and column (exit 1)."""
    import sqlite3

    def make(path, value, run):
        with sqlite3.connect(path) as conn:
            conn.execute(
                "CREATE TABLE drs_summary (id INTEGER, provenance_id TEXT, created_at TEXT, drs REAL, grp TEXT)"
            )
            conn.executemany(
                "INSERT INTO drs_summary VALUES (?, ?, ?, ?, ?)",
                [(1, run, f"2026-12-0{run[-1]}", value, "all"), (2, run, "now", 0.25, "low")],
            )
            conn.execute("CREATE TABLE provenance (id TEXT)")
            conn.execute("INSERT INTO provenance VALUES (?)", (run,))

    make(tmp_path / "a.db", 0.5, "run1")
    make(tmp_path / "b.db", 0.5, "run2")
    make(tmp_path / "c.db", 0.75, "run3")
    script = [sys.executable, str(ROOT / "benchmarks" / "compare_results.py")]
    same = subprocess.run([*script, str(tmp_path / "a.db"), str(tmp_path / "b.db")], capture_output=True, text=True)
    assert same.returncode == 0, same.stdout + same.stderr
    assert "1 tables compared, 0 differ" in same.stdout
    changed = subprocess.run([*script, str(tmp_path / "a.db"), str(tmp_path / "c.db")], capture_output=True, text=True)
    assert changed.returncode == 1, changed.stdout + changed.stderr
    assert "drs_summary: 2 rows, columns differing: ['drs']" in changed.stdout
