"""The catalogue of result tables (core/common/result_tables.py): each table declared once, and the
export, the assets and the report reading it."""

import pytest

from fairness_assets.core.common import result_tables as rt


def test_each_table_is_declared_once_with_its_own_file():
    keys = [(t.asset, t.name) for t in rt.TABLES]
    files = [t.file for t in rt.TABLES]
    assert len(set(keys)) == len(keys) and len(set(files)) == len(files)
    with pytest.raises(ValueError, match="audit_statistics.envy .*declared twice"):
        rt._check((*rt.TABLES, rt.ResultTable("envy", "audit_statistics", "again")))
    # every cross-partition table comes after every per-partition one (the export's order)
    cross = [t.asset in rt.CROSS_PARTITION_ASSETS for t in rt.TABLES]
    assert cross == sorted(cross)


def test_lookups_fill_titles_and_name_what_exists():
    assert (
        rt.title("audit_statistics", "counterfactual_disparity", correction="holm")
        == "counterfactual disparity (paired; holm correction)"
    )
    assert rt.title("analysis_tables", "drs_summary") == "DRS, Acc, Rep, Acad overall and by group"
    assert rt.table("audit_geography", "home_bias").file == "geography_home_bias"
    assert rt.packed("analysis_tables") == () and "envy" in rt.packed("audit_statistics")
    with pytest.raises(KeyError, match="asset 'audit_statistics' stores no table 'gini' .*run_variability"):
        rt.table("audit_statistics", "gini")
    with pytest.raises(KeyError, match="no result table is stored by asset 'prompts'"):
        rt.names("prompts")


def test_the_export_and_the_assets_read_the_catalogue():
    from fairness_assets import export
    from fairness_assets.defs.reporting import geography
    from fairness_assets.defs.scoring import assets as scoring

    assert export.EXPORTED == [t.file for t in rt.TABLES if t.asset not in rt.CROSS_PARTITION_ASSETS]
    assert export.COMPARISON == [t.file for t in rt.TABLES if t.asset in rt.CROSS_PARTITION_ASSETS]
    assert export.SCORECARD_COMPARISON == {
        "differences": "model_comparison_differences",
        "leaderboard": "model_comparison_leaderboard",
        "gate": "model_comparison_gate",
    }
    assert scoring.ANALYSIS == rt.names("analysis_tables")
    assert list(geography.STORED) == rt.names("audit_geography")


def test_the_report_titles_come_from_the_catalogue():
    import pandas as pd

    from fairness_assets.core.reporting import audit_report

    part = audit_report.PartitionResult(
        "m",
        "base",
        items=pd.DataFrame(),
        grs=pd.DataFrame({"country": ["Kenya"], "n_recommendations": [2], "grs": [0.5]}),
        tables={
            "drs_summary": pd.DataFrame({"group_by": ["overall"], "drs": [0.4]}),
            "concentration": pd.DataFrame({"us_uk_share": [0.5], "country_coverage": [0.1]}),
        },
        statistics={
            "counterfactual_disparity": pd.DataFrame(
                {
                    "attribute": ["gender"],
                    "value_a": ["female"],
                    "value_b": ["male"],
                    "metric": ["drs"],
                    "n_pairs": [4],
                    "mean_diff": [0.1],
                    "ci_low": [0.0],
                    "ci_high": [0.2],
                    "p_value": [0.5],
                    "p_adjusted": [0.5],
                    "significant": [False],
                    "correction": ["holm"],
                    "marking": ["not significant"],
                }
            )
        },
    )
    titles = list(audit_report.partition_tables(part))
    assert titles == [
        f"m / base: {rt.title('analysis_tables', 'drs_summary')}",
        f"m / base: {rt.title('analysis_tables', 'concentration')}",
        f"m / base: {rt.title('audit_statistics', 'counterfactual_disparity', correction='holm')}",
        f"m / base: {rt.title('grs_by_country', 'grs_by_country')}",
    ]
    bvr = audit_report.headline_tables([part], {"drs_change": pd.DataFrame({"model": ["m"], "drs": [1.0]})})
    assert list(bvr) == ["Base vs regional: drs change (%)"]
