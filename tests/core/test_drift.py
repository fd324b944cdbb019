"""core.scoring.drift: headline metrics of an audit, the change between two audits, comparability."""

import numpy as np
import pandas as pd

from fairness_assets.core.scoring import drift


def _tables(drs=0.5, share=0.6):
    summary = pd.DataFrame(
        {
            "group_by": ["overall", "gender", "gender"],
            "group": ["all", "female", "male"],
            "responses": [4, 2, 2],
            "drs": [drs, drs - 0.1, drs + 0.1],
            "acc": [0.4, 0.3, 0.5],
            "rep": [0.6, 0.6, 0.6],
            "acad": [np.nan] * 3,
        }
    )
    conc = pd.DataFrame([{"us_uk_share": share, "country_coverage": 0.25, "countries_recommended": 3}])
    return {"drs_summary": summary, "concentration": conc}


def _grs(usa=0.9, nga_recs=0):
    return pd.DataFrame(
        {
            "iso3": ["USA", "NGA"],
            "grs": [usa, 0.0],
            "repr": [1.0, 0.0],
            "rep_covg": [0.8, np.nan],
            "n_recommendations": [10, nga_recs],
        }
    )


def test_headline_metrics_flatten_groups_overall_and_countries():
    h = drift.headline_metrics(_tables(), _grs())
    assert list(h.columns) == drift.HEADLINE_COLUMNS
    assert set(h["scope"]) == {"group", "overall", "country"}
    female = h[(h["group"] == "female") & (h["metric"] == "drs")]["value"].iloc[0]
    assert female == 0.4
    assert h[(h["group"] == "USA") & (h["metric"] == "grs")]["value"].iloc[0] == 0.9


def test_compare_gives_change_percent_and_status():
    before = drift.headline_metrics(_tables(drs=0.5, share=0.6), _grs(usa=0.9))
    after = drift.headline_metrics(_tables(drs=0.4, share=0.6), _grs(usa=0.9, nga_recs=5))
    d = drift.compare(before, after).set_index(["scope", "group", "metric"])
    row = d.loc[("group", "all", "drs")]
    assert np.isclose(row["change"], -0.1) and np.isclose(row["pct_change"], -20.0) and row["status"] == "changed"
    assert d.loc[("overall", "all", "us_uk_share"), "status"] == "unchanged"
    assert d.loc[("country", "NGA", "n_recommendations"), "status"] == "changed"
    assert np.isnan(d.loc[("country", "NGA", "n_recommendations"), "pct_change"])  # from 0: no percentage
    assert d.loc[("country", "NGA", "rep_covg"), "status"] == "undefined"
    assert d.loc[("group", "all", "acad"), "status"] == "undefined"
    only_before = drift.compare(before, after[after["group"] != "male"])
    assert (only_before.loc[only_before["group"] == "male", "status"] == "gone").all()


def test_audit_base_decides_comparability():
    assert drift.audit_base("demo-1a2b3c-20261130T0600", "20261130T0600") == "demo-1a2b3c"
    assert drift.audit_base("demo-1a2b3c", "") == "demo-1a2b3c"
    assert drift.audit_base("import-abcdef123456-r2", "r2") == "import"
    assert drift.audit_base("import-abcdef123456", "") == "import"
    assert drift.audit_base("study-ffff-r1", "r2") == "study-ffff-r1"  # another round's suffix is not stripped
