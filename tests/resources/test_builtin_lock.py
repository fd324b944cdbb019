"""The built-in model is assembled and converted by one process at a time (resources/llm/builtin.py).

Real processes on a real cache folder: the test holds the lock as a converting process would, and a second
process asks for the checkpoint. Nothing here converts the model: the cache is laid out as a finished assembly
(the GGUF and its marker), and the "other process" finishes the conversion by writing the checkpoint's marker.
"""

from __future__ import annotations

import os
import queue
import subprocess
import sys
import threading
import time
from pathlib import Path

from filelock import FileLock

ROOT = Path(__file__).resolve().parents[2]
NAME = "lock-probe-model"
SHA = "ab" * 32
GGUF = "probe.gguf"
ASK = (
    "from resources.llm.builtin import builtin_checkpoint\n"
    f"path = builtin_checkpoint({NAME!r}, [], {SHA!r}, {GGUF!r}, log=lambda m: print('LOG', m, flush=True))\n"
    "print('PATH', path, flush=True)\n"
)


def _cache(tmp_path: Path) -> Path:
    folder = tmp_path / "cache" / NAME
    folder.mkdir(parents=True)
    (folder / GGUF).write_bytes(b"assembled")
    (folder / f"{GGUF}.sha256").write_text(SHA)
    return folder


def _finish_conversion(folder: Path) -> None:
    (folder / "hf").mkdir()
    (folder / "hf" / "converted_from.sha256").write_text(SHA)


def _ask(tmp_path: Path) -> tuple[subprocess.Popen, queue.Queue, threading.Thread]:
    env = {**os.environ, "FAIRNESS_MODEL_CACHE": str(tmp_path / "cache")}
    proc = subprocess.Popen(
        [sys.executable, "-c", ASK], cwd=ROOT, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True
    )
    lines: queue.Queue = queue.Queue()
    reader = threading.Thread(target=lambda: [lines.put(line.rstrip()) for line in proc.stdout], daemon=True)
    reader.start()
    return proc, lines, reader


def _rest(proc: subprocess.Popen, lines: queue.Queue, reader: threading.Thread) -> list[str]:
    """Every line not read yet, once the process has ended."""
    assert proc.wait(timeout=60) == 0
    reader.join(timeout=10)
    out = []
    while not lines.empty():
        out.append(lines.get())
    return out


def _next_line(lines: queue.Queue, timeout: float = 60) -> str:
    return lines.get(timeout=timeout)


def test_a_second_process_waits_for_the_one_preparing_and_then_uses_its_checkpoint(tmp_path):
    folder = _cache(tmp_path)
    with FileLock(str(folder / ".prepare.lock")):  # another process is converting
        proc, lines, reader = _ask(tmp_path)
        try:
            first = _next_line(lines)
            assert first.startswith("LOG waiting for another process preparing lock-probe-model"), first
            time.sleep(1.0)
            assert proc.poll() is None, "the second process went on while the lock was held"
            (folder / "hf.partial-999999").mkdir()  # what a killed conversion left behind
            (folder / f"{GGUF}.partial-999999").write_bytes(b"half")
            _finish_conversion(folder)
        except BaseException:
            proc.kill()
            raise
    rest = _rest(proc, lines, reader)
    assert rest[-1] == f"PATH {folder / 'hf'}", rest  # it found the checkpoint ready: nothing assembled or converted
    assert sorted(rest[:-1]) == sorted(
        f"LOG removing {folder / p}, left by a preparation that did not finish"
        for p in ("hf.partial-999999", f"{GGUF}.partial-999999")
    ), rest
    assert not list(folder.glob("*.partial-*"))


def test_a_ready_checkpoint_is_returned_without_waiting_for_the_lock(tmp_path):
    folder = _cache(tmp_path)
    _finish_conversion(folder)
    with FileLock(str(folder / ".prepare.lock")):
        proc, lines, reader = _ask(tmp_path)
        try:
            rest = _rest(proc, lines, reader)  # while the lock is still held
        finally:
            proc.kill()
    assert rest == [f"PATH {folder / 'hf'}"], rest
