"""The asset decorators of the stages, their shared arguments written once.

- :data:`partitioned_asset`: an asset of one model x template partition per key
  (``AUDIT_PARTITIONS``), backfilled one run per partition (``PER_PARTITION``), stored by the
  ``results_io`` IO manager in its table of the results database (resources/database/); the
  asset goes through ``context.partition_keys``, as a run of a box of partitions
  (``fairness-audit score``) has several;
- :data:`partitioned_multi_asset`: the same for a multi-asset (its outs: :data:`stored_out`);
- :data:`stored_asset`: an unpartitioned asset stored by ``results_io`` (the reference data, and
  the cross-partition assets that read every stored partition themselves).

Kinds, owners and tags are not given here: the catalog (defs/catalog.py) declares them for every
asset and replaces what a decorator would say. Each call adds the asset's own arguments (group,
description, dependencies, checks, ...)::

    @partitioned_asset(group_name="scoring", description="...")
    def audit_drift(context, analysis_tables: pd.DataFrame) -> dg.Output[pd.DataFrame]: ...
"""

from __future__ import annotations

import functools

import dagster as dg

from .partitions import AUDIT_PARTITIONS, PER_PARTITION

RESULTS_IO = "results_io"  # the IO manager key of SQLResultsIOManager

stored_asset = functools.partial(dg.asset, io_manager_key=RESULTS_IO)
partitioned_asset = functools.partial(
    dg.asset, io_manager_key=RESULTS_IO, partitions_def=AUDIT_PARTITIONS, backfill_policy=PER_PARTITION
)
partitioned_multi_asset = functools.partial(
    dg.multi_asset, partitions_def=AUDIT_PARTITIONS, backfill_policy=PER_PARTITION
)
stored_out = functools.partial(dg.AssetOut, io_manager_key=RESULTS_IO)
