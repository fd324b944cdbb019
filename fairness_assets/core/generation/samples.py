"""Identity and reproducibility of samples (METHOD.md §1).

Every sample has a deterministic seed derived from (model, template, profile, run), so a
rerun reproduces it on the same hardware and library versions, and a stable response id.
"""

from __future__ import annotations

import hashlib

import numpy as np
import pandas as pd

from ..common.partition import PartitionKey, key_column
from ..reference import axes


def sample_seed(model: str, template: str, profile_id: str, run: int) -> int:
    """A 31-bit seed from the sample's identity (stable across processes and machines)."""
    digest = hashlib.sha256(f"{model}\x1f{template}\x1f{profile_id}\x1f{int(run)}".encode()).digest()
    return int.from_bytes(digest[:4], "big") & 0x7FFFFFFF


def response_id(model: str, template: str, profile_id: str, run: int) -> str:
    return f"{model}|{template}|{profile_id}|{int(run)}"


def partition_key(model: str, template: str) -> str:
    """Dagster multi-partition key: dimensions ordered by name (model, template)."""
    return str(PartitionKey(model, template).check())


def sample_ids(frame: pd.DataFrame) -> pd.DataFrame:
    """Add ``response_id``, ``seed`` and ``partition_key`` to a frame of samples."""
    out = frame.copy()
    cols = zip(out["model"], out["template"], out["profile_id"], out["run"], strict=False)
    ids, seeds = [], []
    for m, t, p, r in cols:
        ids.append(response_id(m, t, p, r))
        seeds.append(sample_seed(m, t, p, r))
    out["response_id"] = ids
    out["seed"] = np.asarray(seeds, dtype=np.int64)
    out["partition_key"] = key_column(out["model"], out["template"])
    return out


def plan_samples(prompts: pd.DataFrame, profiles: pd.DataFrame, model: str, template: str, runs: int) -> pd.DataFrame:
    """Every (profile, run) sample of one model x template: prompt, profile fields, id, seed.

    ``prompts``: the prompts table (template, profile_id, prompt, template_hash);
    ``profiles``: the profiles table (profile_id and one column per axis of the active catalogue).
    """
    if runs < 1:
        raise ValueError(f"runs must be at least 1, got {runs}")
    p = prompts[prompts["template"] == template][["template", "template_hash", "profile_id", "prompt"]]
    p = p.merge(profiles[["profile_id", *axes.names()]], on="profile_id", how="left")
    plan = p.loc[p.index.repeat(runs)].reset_index(drop=True)
    plan["run"] = np.tile(np.arange(runs, dtype=np.int64), len(p))
    plan["model"] = model
    return sample_ids(plan)


def progress_line(done: int, total: int, tokens: int, elapsed_s: float) -> str:
    """ "done/total, tokens/s, ETA" for long generation runs."""
    rate = tokens / elapsed_s if elapsed_s > 0 else 0.0
    per_sample = elapsed_s / done if done else 0.0
    eta = per_sample * (total - done)
    return (
        f"{done}/{total} samples ({done / total:.0%}), {rate:.1f} output tokens/s, "
        f"ETA {int(eta // 60)} min {int(eta % 60)} s"
    )
