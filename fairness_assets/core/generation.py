"""Identity and reproducibility of samples (METHOD.md §1).

Every sample has a deterministic seed derived from (model, template, profile, run), so a
rerun reproduces it on the same hardware and library versions, and a stable response id.
"""

from __future__ import annotations

import hashlib

import numpy as np
import pandas as pd


def sample_seed(model: str, template: str, profile_id: str, run: int) -> int:
    """A 31-bit seed from the sample's identity (stable across processes and machines)."""
    digest = hashlib.sha256(f"{model}\x1f{template}\x1f{profile_id}\x1f{int(run)}".encode()).digest()
    return int.from_bytes(digest[:4], "big") & 0x7FFFFFFF


def response_id(model: str, template: str, profile_id: str, run: int) -> str:
    return f"{model}|{template}|{profile_id}|{int(run)}"


def partition_key(model: str, template: str) -> str:
    """Dagster multi-partition key: dimensions ordered by name (model, template)."""
    return f"{model}|{template}"


def sample_ids(frame: pd.DataFrame) -> pd.DataFrame:
    """Add ``response_id``, ``seed`` and ``partition_key`` to a frame of samples."""
    out = frame.copy()
    cols = zip(out["model"], out["template"], out["profile_id"], out["run"])
    ids, seeds = [], []
    for m, t, p, r in cols:
        ids.append(response_id(m, t, p, r))
        seeds.append(sample_seed(m, t, p, r))
    out["response_id"] = ids
    out["seed"] = np.asarray(seeds, dtype=np.int64)
    out["partition_key"] = out["model"].astype(str) + "|" + out["template"].astype(str)
    return out
