"""What a ``score``'s runs left in the results database, read back after them: the partitions an asset
failed or blocked in a run, the partitions the score still holds as its own (and why the others are
not its own), the rows each asset stored, and the cross-partition rows another run replaced meanwhile."""

from __future__ import annotations

from typing import Callable, Mapping

from resources.secrets import redact

from ..core.common import result_tables
from ..core.common.text import trim
from .boxes import _all_keys
from .failures import MESSAGE_CHARS, StepFailure


def _partition_failures(database_url: str, run_id: str) -> list[tuple[str, str, str, str]]:
    """(partition, asset, status, reason) of each partition an asset of run ``run_id`` failed or
    blocked (``partition_outcome``, defs/isolation.py): the first such asset per partition, the
    assets that then skipped it left out. Empty when the database cannot be read (the run's own
    step failures say why)."""
    # lazy: the results database (see the package docstring)
    from resources import database as D

    database = D.ResultsDatabase(url=database_url)
    try:
        outcomes = database.run_outcomes(run_id)
    except Exception:  # noqa: BLE001 - an unusable database fails the run's steps, which are reported
        return []
    finally:
        database.dispose()
    out, seen = [], set()
    for r in outcomes.itertuples(index=False):
        if r.status != "skipped" and r.partition_key not in seen:
            seen.add(r.partition_key)
            out.append((r.partition_key, r.asset, r.status, redact(trim(r.reason, MESSAGE_CHARS, one_line=True))))
    return out


def _own_partitions(database_url: str, pairs: set, ours: set, audit_id: str) -> tuple[dict[str, str], dict[str, str]]:
    """``(owned, not_scored)``: the partitions of the file whose rows this score stored and still holds
    (``{key: audit id}``; a partition a step failed for keeps what its finished steps stored, listed
    under Failed), and why each other partition is not its own: another run holds its lease now (it was
    taken over while this score was paused or stopped past the lease TTL), or no answer of this audit
    is stored for it (replaced by another run's, or never stored: a step failed first)."""
    # lazy: the results database (see the package docstring)
    from resources import database as D
    from resources.partition_lease import holders

    database = D.ResultsDatabase(url=database_url)
    try:
        keys = _all_keys(pairs)
        held = holders(database.engine(), keys)
        owned, not_scored = {}, {}
        for key in keys:
            holder = held.get(key)
            if holder is not None and holder not in ours:
                not_scored[key] = (
                    f"not scored by this run: taken over by run {holder} (this score paused or stopped past the lease "
                    "TTL, FAIRNESS_PARTITION_LEASE_TTL_S); none of that run's rows are exported or reported as this "
                    "score's"
                )
            elif audit_id in database.existing_values(D.Generation, "audit_id", [key]):
                owned[key] = audit_id
            else:
                not_scored[key] = f"not scored: no answer of this score's audit ({audit_id}) is stored (see Failed)"
    finally:
        database.dispose()
    return owned, not_scored


def _stored_counts(result) -> dict[str, int]:
    """Rows each asset of a run stored (its materializations' ``dagster/row_count``)."""
    out = {}
    for event in result.get_asset_materialization_events():
        rows = getattr(event.materialization.metadata.get("dagster/row_count"), "value", None)
        if rows is not None:
            out[event.asset_key.to_user_string()] = int(rows)
    return out


def _replaced_meanwhile(
    database_url: str, owned: Mapping[str, str], stored: Mapping[str, int], log: Callable[[str], None]
) -> list[StepFailure]:
    """A failure per cross-partition asset whose rows, stored by this score's run under its scope, are no
    longer there after the export (another run replaced the shared table meanwhile): its file then holds
    none of this score's rows, and never the other run's (the export reads this score's scope only)."""
    # lazy: the results database (see the package docstring)
    from resources import database as D

    database = D.ResultsDatabase.scoped_to(database_url, dict(owned))
    found = []
    try:
        for asset in result_tables.CROSS_PARTITION_ASSETS:
            if stored.get(asset, 0) and database.read_rows(D.TABLES[asset], [""]).empty:
                found.append(
                    StepFailure(
                        "every partition",
                        (asset,),
                        f"{asset}: the rows this score stored were replaced by another run before they were exported; "
                        "its files hold none of this score's rows (and none of the other run's)",
                    )
                )
                log(f"failed: {found[-1].line()}")
    finally:
        database.dispose()
    return found
