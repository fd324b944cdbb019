"""A partition left out of a multi-partition run says so on its own page (issue 23.7).

Dagster records a materialization event for every partition of a single-run backfill's step, so
the UI's Partitions tab lists a template missing from the responses file as materialized. The
event of each partition the PartitionGuard left out carries ``partition_outcome`` (its status and
reason, the missing template named) and a row count of 0; the partitions produced keep the step's
own metadata.
"""

from __future__ import annotations

import dagster as dg

from fairness_assets.core.common.partition import PartitionKey
from fairness_assets.defs.partitions import MODEL_PARTITIONS
from resources import database as D
from tests.helpers.pipeline import ASSETS, DEMO_MODEL, DEMO_RESPONSES, resources

SELECTION = [
    "qs_corpus",
    "country_geography",
    "capital_distances",
    "profiles",
    "prompts",
    "generations",
    "recommendations",
]


def _events(result, asset: str) -> dict[str, dict]:
    """partition key -> the metadata values of ``asset``'s materialization event for it."""
    return {
        str(e.materialization.partition): {k: getattr(v, "value", v) for k, v in e.materialization.metadata.items()}
        for e in result.get_asset_materialization_events()
        if e.asset_key.to_user_string() == asset
    }


def test_each_left_out_partition_names_its_outcome_on_its_own_event(tmp_path):
    instance = dg.DagsterInstance.ephemeral()
    instance.add_dynamic_partitions(MODEL_PARTITIONS.name, [DEMO_MODEL])
    db = D.ResultsDatabase(url=f"sqlite:///{tmp_path / 'r.db'}")
    # template 'All' of the demo model: the file holds only 'base'
    result = dg.materialize(
        ASSETS,
        selection=SELECTION,
        instance=instance,
        raise_on_error=False,
        tags={
            "dagster/asset_partition_range_start": str(PartitionKey(DEMO_MODEL, "academic")),
            "dagster/asset_partition_range_end": str(PartitionKey(DEMO_MODEL, "regional")),
        },
        resources=resources(db, DEMO_RESPONSES),
    )
    assert result.success, [e.message for e in result.all_events if e.is_step_failure]
    generations, recommendations = _events(result, "generations"), _events(result, "recommendations")
    templates = sorted(PartitionKey.parse(k).template for k in generations)
    assert len(templates) == 6 and "base" in templates  # an event for every partition of the step
    base = f"{DEMO_MODEL}|base"
    stored = len(db.read_rows(D.Generation, [base]))
    assert stored > 0
    assert "partition_outcome" not in generations[base] and generations[base]["dagster/row_count"] == stored
    assert "partition_outcome" not in recommendations[base]
    for template in (t for t in templates if t != "base"):
        key = f"{DEMO_MODEL}|{template}"
        outcome = generations[key]["partition_outcome"]
        assert outcome.startswith("failed, not stored in this run: the responses file "), outcome
        assert f"with template '{template}'" in outcome and "template(s) ['base']" in outcome, outcome
        assert generations[key]["dagster/row_count"] == 0
        downstream = recommendations[key]["partition_outcome"]
        assert downstream.startswith("skipped, not stored in this run: upstream generations failed: "), downstream
        assert f"with template '{template}'" in downstream
        assert recommendations[key]["dagster/row_count"] == 0
        assert db.read_rows(D.Generation, [key]).empty
