"""The generation engine's loop: a client's samples streamed into storage in bounded batches.

:class:`GenerationRunner` asks a client (:class:`resources.llm.base.LLMClient`) for the samples of
a plan through its ``stream_samples`` (many requests in flight for serving engines, whole batches
in process) and hands what has finished to a ``commit`` callback:

- a client that hands back whole batches (``streams_requests`` false: static in-process batches)
  is committed batch by batch, as each batch finishes;
- one that streams samples one by one (an endpoint, the continuous in-process engine) is committed
  once ``commit_every`` samples (default 64) are waiting or ``commit_interval_s`` (2 s) have passed
  since the last commit;
- after every commit the ``renew`` callback runs (the asset renews its partition leases there);
- a progress line (``<prefix>: <label>: done/total samples, tokens/s, ETA``) goes to ``log`` at
  most every ``log_interval_s`` (5 s) and when the last sample is committed;
- samples that finished before a failure are committed before the failure propagates (a rerun
  generates only the rest), and a stream that ends short raises :class:`IncompleteGenerationError`
  ("returned N of M samples"): never a silently short partition.

A crash loses at most the samples not yet committed; nothing is committed twice. No Dagster, no
database: the callbacks are the caller's (tested with a fake client and a list as the database).
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Callable, Optional, Sequence

from fairness_assets.core.generation.samples import progress_line

from .base import LLMClient, Sample, SamplingParams, compute_kind

Finished = list[tuple[int, Sample]]  # (index into the plan, sample), as ``stream_samples`` yields them


class IncompleteGenerationError(RuntimeError):
    """The client's stream ended before every sample of the plan came back; the samples that did
    are committed. The message names the label, the backend and how many are missing."""

    def __init__(self, label: str, backend: str, done: int, total: int):
        self.label, self.backend, self.done, self.total = label, backend, done, total
        super().__init__(
            f"partition {label}: the {backend} backend returned {done} of {total} samples "
            f"({total - done} missing); the {done} are stored, launch the run again for the rest"
        )


@dataclass(frozen=True)
class GenerationStats:
    """What one :meth:`GenerationRunner.run` generated and what it cost."""

    samples: int
    prompt_tokens: int
    output_tokens: int
    request_s: float  # the sum of the samples' latencies (an endpoint's request-seconds)
    wall_s: float
    compute_kind: str  # "gpu", "cpu" or "endpoint" (resources.llm.base.compute_kind)
    devices: int

    @property
    def compute_s(self) -> float:
        """GPU-seconds in process (wall time x devices), request-seconds for an endpoint."""
        return round(self.request_s if self.compute_kind == "endpoint" else self.wall_s * max(self.devices, 1), 3)

    @property
    def output_tokens_per_s(self) -> float:
        return round(self.output_tokens / self.wall_s, 2) if self.wall_s > 0 else 0.0


def _nothing(*_args) -> None:
    return None


class GenerationRunner:
    """Streams the samples of a plan from ``client`` into ``commit`` (see the module docstring).

    ``commit(finished)`` stores a list of ``(index, Sample)`` (indexes into the prompts given to
    :meth:`run`) in one transaction and raises if it cannot (the run stops there); ``renew()`` runs
    after each commit; ``log(line)`` receives the progress lines; ``label`` names the plan in them
    and in :class:`IncompleteGenerationError` (the partition key)."""

    def __init__(
        self,
        client: LLMClient,
        commit: Callable[[Finished], None],
        *,
        label: str,
        renew: Callable[[], None] = _nothing,
        log: Callable[[str], None] = _nothing,
        commit_every: Optional[int] = None,
        commit_interval_s: float = 2.0,
        log_interval_s: float = 5.0,
        progress_prefix: str = "generations progress",
        clock: Callable[[], float] = time.perf_counter,
    ):
        if commit_every is not None and commit_every < 0:
            raise ValueError(f"commit_every must be 0 (the default, 64) or more, got {commit_every}")
        self.client, self.commit, self.renew, self.log, self.label = client, commit, renew, log, label
        self.commit_every = commit_every or 64
        self.commit_interval_s, self.log_interval_s = commit_interval_s, log_interval_s
        self.progress_prefix, self.clock = progress_prefix, clock

    def run(
        self, prompts: Sequence, seeds: Sequence[int], params: SamplingParams, labels: Optional[Sequence[str]] = None
    ) -> GenerationStats:
        """Generate one sample per prompt (``seeds``: one per prompt; ``labels``: one per prompt, naming
        a sample in the backend's errors), committing as they finish. Raises
        :class:`IncompleteGenerationError` when fewer samples than prompts came back (those that did
        are committed), and whatever the client or ``commit`` raise (after committing what finished)."""
        if len(seeds) != len(prompts) or (labels is not None and len(labels) != len(prompts)):
            raise ValueError(
                f"{self.label}: {len(prompts)} prompts but {len(seeds)} seeds"
                + (f" and {len(labels)} labels" if labels is not None else "")
            )
        total = len(prompts)
        whole_batches = not getattr(self.client, "streams_requests", False)
        t0 = last_commit = last_log = self.clock()
        done = tokens = prompt_tokens = 0
        request_s = 0.0
        pending: Finished = []

        def flush() -> None:
            nonlocal done, tokens, prompt_tokens, request_s, last_commit
            batch = list(pending)
            self.commit(batch)  # a crash loses at most the samples not yet here
            pending.clear()  # committed: never handed to commit again, even if renewing fails
            done += len(batch)
            tokens += sum(s.output_tokens or 0 for _, s in batch)
            prompt_tokens += sum(s.prompt_tokens or 0 for _, s in batch)
            request_s += sum(s.latency_s or 0.0 for _, s in batch)
            last_commit = self.clock()
            self.renew()

        try:
            for finished in self.client.stream_samples(
                list(prompts), [int(s) for s in seeds], params, labels=list(labels) if labels is not None else None
            ):
                pending.extend(finished)
                now = self.clock()
                if whole_batches or len(pending) >= self.commit_every or now - last_commit > self.commit_interval_s:
                    flush()
                    if now - last_log > self.log_interval_s or done == total:
                        self.log(
                            f"{self.progress_prefix}: {self.label}: "  # the console shows it in place
                            + progress_line(done, total, tokens, now - t0)
                        )
                        last_log = now
        finally:  # samples that finished before a failure are kept: a rerun generates only the rest
            if pending:
                flush()
        if done != total:
            raise IncompleteGenerationError(self.label, self.client.backend, done, total)
        wall = self.clock() - t0
        self.log(f"{self.label}: " + progress_line(done, total, tokens, wall))
        kind, devices = compute_kind(self.client)
        return GenerationStats(
            samples=done,
            prompt_tokens=prompt_tokens,
            output_tokens=tokens,
            request_s=request_s,
            wall_s=wall,
            compute_kind=kind,
            devices=devices,
        )
