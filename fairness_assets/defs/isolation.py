"""One bad partition never sinks the others of its run.

A run of the UI, a backfill or the re-audit schedule holds one partition (the assets have no
backfill policy: defs/partitions.PER_PARTITION), and there a partition that cannot be produced fails
its step, so Dagster shows that partition failed. A run of ``fairness-audit score`` holds a box of
partitions (model weights load once for the box), so one step handles several. Dagster 1.13 cannot
mark one partition of such a step as failed (dagster-io/dagster#17836): an exception fails the step,
and with it every partition. So each partitioned asset goes through its partitions under a
:class:`PartitionGuard`:

- a partition whose work raises is recorded as ``failed`` with its reason (the ``partition_outcome``
  table) and logged as an error; the other partitions go on;
- a partition that failed, or was blocked by a parse-quality check, in an upstream asset of the same
  run is ``skipped`` by every downstream asset, naming the asset and the reason (a sibling's failure,
  say the figures', does not touch the statistics);
- the results IO manager does not store a partition that the asset it stores failed or skipped in
  the run: its earlier rows, if any, are kept (resources/database.SQLResultsIOManager);
- the asset's metadata lists them (``failed_partitions``), and the step fails only when no partition
  of the run could be produced;
- Dagster still records a materialization for every partition of such a step, so the event of each
  partition left out says so on the partition's own page: ``partition_outcome`` (``failed`` /
  ``skipped`` / ``blocked``, not stored, and the reason) and ``dagster/row_count`` 0.

A lost lease (another run took the partition over) is never isolated: it stops the run.
"""

from __future__ import annotations

import contextlib
from typing import Iterator

import dagster as dg
import pandas as pd

from fairness_assets.core.common.partition import PartitionKey, by_partition
from resources.database import ResultsDatabase
from resources.partition_lease import PartitionBusyError

from .metadata import table_md

FAILED, SKIPPED, BLOCKED = "failed", "skipped", "blocked"


class PartitionGuard:
    """The partitions of one asset's step: which to work on, which failed, and why."""

    def __init__(self, context, database: ResultsDatabase, asset: str):
        self.context, self.database, self.asset = context, database, asset
        self.run_id = context.run.run_id
        self.keys = [str(k) for k in context.partition_keys]
        # the assets this step stores (a multi-asset stores several) and the assets upstream of them:
        # only an upstream failure makes this step skip a partition, never a sibling's
        selected = sorted(context.selected_asset_keys, key=lambda k: k.to_user_string())
        self.assets = [k.to_user_string() for k in selected] or [asset]
        graph = context.job_def.asset_layer.asset_graph
        upstream_assets = {a.to_user_string() for k in selected for a in graph.get_ancestor_asset_keys(k)}
        earlier = database.run_outcomes(self.run_id)
        self.upstream = {
            r.partition_key: f"{r.asset} {r.status}: {r.reason}"
            for r in earlier.itertuples()
            if r.partition_key in self.keys and r.asset in upstream_assets
        }
        self.outcomes: dict[str, tuple[str, str]] = {}
        for key, why in self.upstream.items():
            self._note(key, SKIPPED, f"upstream {why}")
        self.pairs: list[PartitionKey] = []  # the run's usable (model, template) partitions, in order
        for raw, key in zip(context.partition_keys, self.keys, strict=False):
            try:
                pk = PartitionKey.parse(raw)
            except ValueError as exc:  # a model name holding '|' (the UI accepts one)
                from .partitions import REMOVE_HINT

                self.fail(key, f"{exc}; {REMOVE_HINT}")
                continue
            if self.usable(key):
                self.pairs.append(pk)

    # -- which partitions to work on -------------------------------------------------------------
    def usable(self, key) -> bool:
        return str(key) not in self.outcomes

    def partitions(
        self, frame: pd.DataFrame, column: str = "partition_key"
    ) -> Iterator[tuple[PartitionKey, pd.DataFrame]]:
        """The rows of each partition of ``frame`` that is still usable in this run."""
        for pk, part in by_partition(frame, column):
            if self.usable(pk):
                yield pk, part

    def usable_rows(self, frame: pd.DataFrame, column: str = "partition_key") -> pd.DataFrame:
        """``frame`` without the rows of partitions failed, skipped or blocked in this run."""
        if frame is None or frame.empty or not self.outcomes or column not in frame:
            return frame
        return frame[~frame[column].astype(str).isin(self.outcomes)]

    # -- recording what went wrong ------------------------------------------------------------------
    def _note(self, key, status: str, reason: str) -> None:
        key = str(key)
        if key in self.outcomes:
            return
        self.outcomes[key] = (status, reason)
        log = self.context.log.warning if status == SKIPPED else self.context.log.error
        log(f"{self.asset} [{key}] {status}: {reason}")

    def fail(self, key, reason: str) -> None:
        self._note(key, FAILED, reason)

    def skip(self, key, reason: str) -> None:
        self._note(key, SKIPPED, reason)

    def block(self, key, reason: str) -> None:
        self._note(key, BLOCKED, reason)

    @contextlib.contextmanager
    def attempt(self, key) -> Iterator[None]:
        """Run the block for partition ``key``; an exception fails that partition alone."""
        try:
            yield
        except PartitionBusyError:
            raise  # a lost or busy lease concerns the whole run
        except Exception as exc:  # noqa: BLE001 - recorded with its reason, the other partitions go on
            message = exc.description if isinstance(exc, dg.Failure) and exc.description else str(exc)
            self.fail(key, f"{type(exc).__name__}: {message}".strip())

    def record(self) -> None:
        """Store the outcomes noted so far, for each asset of the step (again: what is stored already is kept)."""
        for name in self.assets:
            self.database.record_outcomes(self.run_id, name, self.outcomes)

    # -- the end of the step ---------------------------------------------------------------------------
    def finish(self) -> dict:
        """Record the outcomes; fail the step when no partition of the run could be produced;
        return the metadata entries that list the partitions left out."""
        self.record()
        if not self.outcomes:
            return {"failed_partitions": "none"}
        table = pd.DataFrame(
            [(k, s, r) for k, (s, r) in self.outcomes.items()], columns=["partition", "status", "reason"]
        )
        if all(k in self.outcomes for k in self.keys):
            raise dg.Failure(
                f"{self.asset}: no partition of the run could be produced: "
                + "; ".join(f"{k} {s}: {r}" for k, (s, r) in self.outcomes.items())
            )
        self.context.log.error(
            f"{self.asset}: {len(self.outcomes)} of {len(self.keys)} partition(s) of the run not "
            f"produced ({', '.join(self.outcomes)}); the others are stored"
        )
        self._mark_left_out()
        return {"failed_partitions": table_md(table)}

    def _mark_left_out(self) -> None:
        """The materialization event Dagster records for each partition left out names what happened to it
        (partition-scoped metadata overrides the step's own: its row count is the whole run's)."""
        raw_keys = dict(zip(self.keys, self.context.partition_keys, strict=False))
        for key, (status, reason) in self.outcomes.items():
            if key not in raw_keys:
                continue
            for name in self.assets:
                self.context.add_asset_metadata(
                    {"partition_outcome": f"{status}, not stored in this run: {reason}", "dagster/row_count": 0},
                    asset_key=name,
                    partition_key=raw_keys[key],
                )
