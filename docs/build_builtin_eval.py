"""Collects real answers of the built-in CPU model for the built-in evaluation set.

    .venv/bin/python docs/build_builtin_eval.py [OUT_DIR] [--model qwen2.5-0.5b-demo] [--run 0]

Renders the `regional` and `academic` templates (data/templates) for the fixed list of
profiles below (gender x economic class x nationality, Global South nationalities first), and
samples one answer per prompt through the project's own generation path: the registered model
from ``LLMResource().client(model)``, the template's decoding defaults from
``GenerationSourceResource().sampling()`` (temperature 0.75, top-p 0.95, 300 new tokens, as the
study), and the per-sample seed of ``core.generation.samples.sample_seed(model, template, profile, run)``,
so a rerun on the same library versions gives the same answers. Writes
``OUT_DIR/builtin_eval_raw.jsonl`` (default OUT_DIR: /tmp), one line per answer: model,
template, profile fields, prompt, seed, response, tokens.

The answers were then labelled by hand into tests/fixtures/eval_builtin.jsonl (the labels are
not derived from the parser or matcher; docs/parse_match.md).
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from fairness_assets.core.generation import samples as generation  # noqa: E402
from fairness_assets.core.reference import axes, prompts  # noqa: E402
from fairness_assets.core.reference import profiles as prof  # noqa: E402
from resources.llm.resource import LLMResource  # noqa: E402
from resources.settings import TEMPLATES_DIR  # noqa: E402
from resources.settings.generation import GenerationSourceResource  # noqa: E402

MODEL = "qwen2.5-0.5b-demo"
TEMPLATES = ("regional", "academic")
# (gender, economic class, nationality): each profile under both templates
PROFILES = [
    ("male", "low", "Nigeria"),
    ("female", "middle", "India"),
    ("transgender", "low", "Kenya"),
    ("female", "high", "Brazil"),
    ("male", "middle", "Indonesia"),
    ("female", "low", "Tonga"),
    ("transgender", "middle", "Bolivia"),
    ("male", "high", "Egypt"),
    ("female", "low", "Ghana"),
    ("male", "low", "Peru"),
    ("female", "middle", "Vietnam"),
    ("male", "high", "United States"),
    ("female", "low", "United Kingdom"),
    ("transgender", "high", "Germany"),
    ("male", "middle", "China"),
]


def plan(model: str, run: int) -> list[dict]:
    temps = prompts.load_templates(TEMPLATES_DIR, list(TEMPLATES))
    rows = []
    for template in TEMPLATES:
        t = temps[template]
        for gender, cls, nationality in PROFILES:
            values = {"gender": gender, "economic_class": cls, "nationality": nationality}
            pid = prof.profile_id("full", values)
            rows.append(
                {
                    "model": model,
                    "template": template,
                    "template_hash": t.sha256,
                    "profile_id": pid,
                    "gender": gender,
                    "economic_class": cls,
                    "nationality": nationality,
                    "run": run,
                    "seed": generation.sample_seed(model, template, pid, run),
                    "prompt": t.render({axes.axis(a).word: axes.axis(a).words_of(v) for a, v in values.items()}),
                }
            )
    return rows


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("out_dir", nargs="?", default="/tmp", help="folder for builtin_eval_raw.jsonl (default /tmp)")
    ap.add_argument("--model", default=MODEL, help="registered model (data/models.yaml)")
    ap.add_argument("--run", type=int, default=0, help="run index of the seeds")
    ap.add_argument("--batch-size", type=int, default=8, help="prompts per batch (2 CPU cores: 8)")
    args = ap.parse_args()
    rows = plan(args.model, args.run)
    params = GenerationSourceResource().sampling()
    llm = LLMResource(device="cpu", batch_size=args.batch_size)
    print(f"{args.model}: {llm.check(args.model)}; {len(rows)} prompts; decoding {params.as_dict()}", flush=True)
    client = llm.client(args.model, log=lambda m: print(m, flush=True))
    out = Path(args.out_dir) / "builtin_eval_raw.jsonl"
    out.parent.mkdir(parents=True, exist_ok=True)
    t0, done = time.perf_counter(), 0
    with open(out, "w", encoding="utf-8") as fh:
        for finished in client.stream_samples([r["prompt"] for r in rows], [r["seed"] for r in rows], params):
            for i, sample in finished:
                rec = dict(
                    rows[i],
                    backend=client.backend,
                    model_revision=client.model_revision,
                    decoding=params.as_dict(),
                    response=sample.text,
                    prompt_tokens=sample.prompt_tokens,
                    output_tokens=sample.output_tokens,
                )
                fh.write(json.dumps(rec, ensure_ascii=False) + "\n")
            fh.flush()
            done += len(finished)
            print(f"{done}/{len(rows)} answers, {time.perf_counter() - t0:.0f} s", flush=True)
    print(f"wrote {out}")


if __name__ == "__main__":
    main()
