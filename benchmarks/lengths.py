"""Answer-length distributions for the generation benchmarks (standard library only: the GPU
benchmark imports it on a machine with nothing of the project's but torch and transformers).

``benchmarks/answer_lengths.json`` (written by ``benchmarks/continuous_generation.py``) holds
histograms of real answer lengths in tokens, no text.
"""

from __future__ import annotations

import json
import random
from pathlib import Path


def load_lengths(path, source: str = "") -> list[int]:
    """The answer lengths (tokens) of a lengths file: ``{"lengths": [...]}``, or histograms
    (``{"bin_width": w, "counts": [...]}``: bin k holds lengths k*w .. k*w+w-1, drawn at its middle),
    the file's own or that of ``sources[source]`` (``benchmarks/answer_lengths.json``: builtin, external)."""
    data = json.loads(Path(path).read_text(encoding="utf-8"))
    if source:
        if source not in data.get("sources", {}):
            raise ValueError(f"{path}: no lengths source {source!r} (it has: {sorted(data.get('sources', {}))})")
        data = data["sources"][source]
    if "lengths" in data:
        return [int(x) for x in data["lengths"] if int(x) > 0]
    hist = data["histogram"]
    w = int(hist["bin_width"])
    return [max(1, k * w + w // 2) for k, c in enumerate(hist["counts"]) for _ in range(int(c))]


def draw_lengths(lengths: list[int], n: int, cap: int, seed: int = 0) -> list[int]:
    """``n`` lengths drawn with replacement from ``lengths``, each at most ``cap`` (the token budget)."""
    rng = random.Random(seed)
    return [min(cap, rng.choice(lengths)) for _ in range(n)]
