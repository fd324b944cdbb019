"""audit_drift with the behaviour / needs split (issue 20, item 5), on the demo answers through the
whole lineage: each audit archives its group contrasts per component from its own statistics and
geography; a previous audit archived before the split reads "no previous record"; a changed model's
contrasts drift, and the page says which behaviour parts are significant."""

from __future__ import annotations

import dagster as dg
import pytest

from fairness_assets.core.scoring import drift as drift_core
from fairness_assets.defs.partitions import AUDIT_ROUND_TAG
from resources import database as D
from tests.helpers.pipeline import DEMO_KEY, DEMO_RESPONSES, altered_responses, audit

pytestmark = pytest.mark.slow


def test_drift_archives_and_compares_the_contrasts_per_component(tmp_path):
    db = D.ResultsDatabase(url=f"sqlite:///{tmp_path / 'results.db'}")
    instance = dg.DagsterInstance.ephemeral()
    first = audit(instance, db, DEMO_RESPONSES, tags={AUDIT_ROUND_TAG: "r1"})
    assert first.success, [e.message for e in first.all_events if e.is_failure]
    history = db.audit_history(DEMO_KEY)
    contrasts = history[drift_core.is_contrast(history)]
    assert set(contrasts["scope"]) >= {"contrast_total", "contrast_behaviour"}
    assert {"gender", "economic_class"} & set(contrasts["group_by"])
    # pairs are archived only for attributes with few values (the demo's few nationalities included)
    pairs = contrasts[contrasts["group_by"].isin(["gender", "economic_class", "nationality"])]
    values = (
        pairs["group"]
        .str.split(" vs ")
        .explode()
        .groupby(pairs["group_by"].reindex(pairs["group"].str.split(" vs ").explode().index))
        .nunique()
    )
    assert (values <= drift_core.MAX_PAIR_VALUES).all()
    # the first audit's record as it was archived before the split: no contrast rows
    old = history[~drift_core.is_contrast(history)]
    db.archive_audit(
        DEMO_KEY,
        str(old["audit_id"].iloc[0]),
        old[drift_core.HEADLINE_COLUMNS],
        audit_base=str(old["audit_base"].iloc[0]),
    )

    same = audit(instance, db, DEMO_RESPONSES, tags={AUDIT_ROUND_TAG: "r2"})
    assert same.success
    drift = db.read_rows(D.DriftRow)
    c = drift[drift_core.is_contrast(drift)]
    assert len(c) and set(c["status"]) == {drift_core.NO_PREVIOUS_RECORD}
    assert set(drift.loc[~drift_core.is_contrast(drift), "status"]) <= {"unchanged", "undefined"}

    # the "model" now sends everyone to Nigerian universities instead of MIT and Stanford
    changed = altered_responses(
        tmp_path,
        {"Massachusetts Institute of Technology": "University of Lagos", "Stanford University": "University of Ibadan"},
    )
    third = audit(instance, db, changed, tags={AUDIT_ROUND_TAG: "r3"})
    assert third.success
    drift = db.read_rows(D.DriftRow)
    c = drift[drift_core.is_contrast(drift)]
    assert len(c) and drift_core.NO_PREVIOUS_RECORD not in set(c["status"])
    assert (c["status"] == "changed").any()
    # the components of each contrast still add up in both audits
    for col in ("previous", "current"):
        wide = (
            c[~c["metric"].str.endswith(drift_core.SIGNIFICANT)]
            .pivot_table(index=["group_by", "group", "metric"], columns="scope", values=col, aggfunc="first")
            .dropna()
        )
        assert len(wide)
        assert ((wide["contrast_behaviour"] + wide["contrast_needs"] - wide["contrast_total"]).abs() < 1e-9).all()
    shown = third.asset_materializations_for_node("audit_drift")[0].metadata[f"drift {DEMO_KEY}"].value
    significant = drift_core.component_drift(c)
    if len(significant):
        assert "Behaviour part (what the model did) of every contrast significant in either audit" in shown
    else:
        assert "No contrast's behaviour part or outcome is significant in either audit" in shown
