"""One bad partition never sinks the others of a single-run backfill (issue 19.3).

A run over several partitions (a range, as the UI's "Materialize all..., template All" and
`fairness-audit score` launch) handles them in one step per asset. A partition that cannot be
produced is recorded as failed with its reason and the others are stored; a failed blocking
parse-quality check blocks only its own partition's downstream assets.
"""

from __future__ import annotations

import json

import dagster as dg

from fairness_assets.core.common.partition import PartitionKey
from fairness_assets.defs.partitions import MODEL_PARTITIONS
from resources import database as D
from tests.helpers.pipeline import ASSETS, DEMO_MODEL, DEMO_RESPONSES, resources

RANGE_START, RANGE_END = "dagster/asset_partition_range_start", "dagster/asset_partition_range_end"
UPTO_SCORES = [
    "qs_corpus",
    "country_geography",
    "capital_distances",
    "profiles",
    "prompts",
    "generations",
    "recommendations",
    "subject_tags",
    "drs_scores",
    "grs_by_country",
    "analysis_tables",
    "audit_statistics",
]


def _run_range(tmp_path, models, first, last, responses, tags=None):
    instance = dg.DagsterInstance.ephemeral()
    instance.add_dynamic_partitions(MODEL_PARTITIONS.name, models)
    db = D.ResultsDatabase(url=f"sqlite:///{tmp_path / 'r.db'}")
    result = dg.materialize(
        ASSETS,
        selection=UPTO_SCORES,
        instance=instance,
        raise_on_error=False,
        tags={RANGE_START: str(first), RANGE_END: str(last), **(tags or {})},
        resources=resources(db, responses),
    )
    return result, db


def _metadata(result, asset: str) -> dict:
    events = [e for e in result.get_asset_materialization_events() if e.asset_key.to_user_string() == asset]
    assert events, f"{asset} was not materialized"
    return {k: getattr(v, "value", v) for k, v in events[-1].materialization.metadata.items()}


def test_a_template_missing_from_the_responses_file_fails_alone(tmp_path):
    """The README's 'template All' with a file holding only the base template: base is audited,
    every other template is reported failed naming the templates the file has."""
    result, db = _run_range(
        tmp_path,
        [DEMO_MODEL],
        PartitionKey(DEMO_MODEL, "academic"),
        PartitionKey(DEMO_MODEL, "regional"),
        DEMO_RESPONSES,
    )
    assert result.success, [e.message for e in result.all_events if e.is_step_failure]
    stored = db.read_rows(D.DRSItem)
    assert set(stored["partition_key"]) == {f"{DEMO_MODEL}|base"}
    assert set(db.read_rows(D.StatisticRow)["partition_key"]) == {f"{DEMO_MODEL}|base"}
    failed = _metadata(result, "generations")["failed_partitions"]
    assert "with template 'regional'" in failed and "template(s) ['base']" in failed
    outcomes = db.run_outcomes(result.run_id)
    regional = outcomes[outcomes["partition_key"] == f"{DEMO_MODEL}|regional"]
    assert dict(zip(regional["asset"], regional["status"], strict=False))["generations"] == "failed"
    assert dict(zip(regional["asset"], regional["status"], strict=False))["drs_scores"] == "skipped"
    assert "upstream generations failed" in "".join(regional.loc[regional["asset"] == "drs_scores", "reason"])


def _two_models(tmp_path):
    """The demo answers as model 'good', and unreadable answers as model 'garbled'."""
    rows = [json.loads(line) for line in DEMO_RESPONSES.read_text().splitlines() if line.strip()]
    out = []
    for row in rows:
        out.append({**row, "model": "good"})
        out.append({**row, "model": "garbled", "response": "zzz qqq " * 5})
    path = tmp_path / "two.jsonl"
    path.write_text("\n".join(json.dumps(r) for r in out) + "\n")
    return path


def test_a_failed_blocking_check_blocks_only_its_own_partition(tmp_path):
    result, db = _run_range(
        tmp_path,
        ["garbled", "good"],
        PartitionKey("garbled", "base"),
        PartitionKey("good", "base"),
        _two_models(tmp_path),
    )
    assert result.success, [e.message for e in result.all_events if e.is_step_failure]
    parse_rate = next(c for c in result.get_asset_check_evaluations() if c.check_name == "parse_rate")
    assert not parse_rate.passed
    assert parse_rate.severity == dg.AssetCheckSeverity.WARN  # the run goes on for the partitions that passed
    assert parse_rate.metadata["blocked_partitions"].value == "garbled|base"
    assert set(db.read_rows(D.Recommendation)["partition_key"]) == {"garbled|base", "good|base"}
    assert set(db.read_rows(D.DRSItem)["partition_key"]) == {"good|base"}  # garbled blocked downstream
    outcomes = db.run_outcomes(result.run_id)
    blocked = outcomes[(outcomes["partition_key"] == "garbled|base") & (outcomes["asset"] == "recommendations")]
    assert blocked["status"].tolist() == ["blocked"] and "parse_rate" in blocked["reason"].iloc[0]


def test_a_single_partition_run_keeps_dagsters_own_blocking(tmp_path):
    """A run of one partition: the failed blocking check is an ERROR that Dagster enforces, and its
    evaluation is recorded for that partition (a partitioned asset check)."""
    instance = dg.DagsterInstance.ephemeral()
    instance.add_dynamic_partitions(MODEL_PARTITIONS.name, ["garbled"])
    db = D.ResultsDatabase(url=f"sqlite:///{tmp_path / 'r.db'}")
    result = dg.materialize(
        ASSETS,
        selection=UPTO_SCORES,
        instance=instance,
        raise_on_error=False,
        partition_key=dg.MultiPartitionKey({"model": "garbled", "template": "base"}),
        resources=resources(db, _two_models(tmp_path)),
    )
    parse_rate = next(c for c in result.get_asset_check_evaluations() if c.check_name == "parse_rate")
    assert not parse_rate.passed and parse_rate.severity == dg.AssetCheckSeverity.ERROR
    assert parse_rate.partition == "garbled|base"
    assert db.count(D.DRSItem) == 0


def test_an_exception_in_one_partition_leaves_the_others(tmp_path, monkeypatch):
    """Any error while scoring one partition (here: a scoring function that raises for one model)
    fails that partition alone, with the error as its reason."""
    from fairness_assets.core.scoring import metrics

    real = metrics.score_partition

    def flaky(recs, *args, **kwargs):
        if (recs["model"] == "garbled").any():
            raise ValueError("cannot score this partition")
        return real(recs, *args, **kwargs)

    monkeypatch.setattr(metrics, "score_partition", flaky)
    rows = [json.loads(line) for line in DEMO_RESPONSES.read_text().splitlines() if line.strip()]
    path = tmp_path / "both.jsonl"
    path.write_text("\n".join(json.dumps({**r, "model": m}) for r in rows for m in ("garbled", "good")) + "\n")
    result, db = _run_range(
        tmp_path, ["garbled", "good"], PartitionKey("garbled", "base"), PartitionKey("good", "base"), path
    )
    assert result.success
    assert set(db.read_rows(D.DRSItem)["partition_key"]) == {"good|base"}
    assert set(db.read_rows(D.StatisticRow)["partition_key"]) == {"good|base"}
    failed = _metadata(result, "drs_scores")["failed_partitions"]
    assert "garbled" in failed and "ValueError: cannot score this partition" in failed
    outcomes = db.run_outcomes(result.run_id)
    assert set(outcomes.loc[outcomes["asset"] == "audit_statistics", "status"]) == {"skipped"}


def test_a_run_where_every_partition_fails_fails_naming_each(tmp_path):
    result, _ = _run_range(
        tmp_path,
        [DEMO_MODEL],
        PartitionKey(DEMO_MODEL, "academic"),
        PartitionKey(DEMO_MODEL, "academic"),
        DEMO_RESPONSES,
    )
    assert not result.success
    messages = " ".join(e.message or "" for e in result.all_events if e.is_step_failure)
    errors = [e.step_failure_data.error for e in result.all_events if e.is_step_failure]
    text = " ".join(str(err.message) + str(err.cause.message if err.cause else "") for err in errors)
    assert "no partition of the run could be produced" in text + messages
    assert f"{DEMO_MODEL}|academic" in text


def test_a_sibling_failure_does_not_touch_the_other_assets_of_the_partition(tmp_path, monkeypatch):
    """The figures of one partition fail: its statistics (not downstream of the figures) are
    stored all the same, and the other partition's figures too."""
    from fairness_assets.core.reporting import figures as fig_core

    real = fig_core.many_partition_figures

    def flaky(jobs, workers):
        if any(model == "garbled" for _, model, _ in jobs):
            raise RuntimeError("cannot draw")
        return real(jobs, workers)

    monkeypatch.setattr(fig_core, "many_partition_figures", flaky)
    rows = [json.loads(line) for line in DEMO_RESPONSES.read_text().splitlines() if line.strip()]
    path = tmp_path / "both.jsonl"
    path.write_text("\n".join(json.dumps({**r, "model": m}) for r in rows for m in ("garbled", "good")) + "\n")
    instance = dg.DagsterInstance.ephemeral()
    instance.add_dynamic_partitions(MODEL_PARTITIONS.name, ["garbled", "good"])
    db = D.ResultsDatabase(url=f"sqlite:///{tmp_path / 'r.db'}")
    result = dg.materialize(
        ASSETS,
        selection=UPTO_SCORES + ["audit_figures"],
        instance=instance,
        raise_on_error=False,
        tags={RANGE_START: "garbled|base", RANGE_END: "good|base"},
        resources=resources(db, path),
    )
    assert result.success
    assert set(db.read_rows(D.FigureFile)["partition_key"]) == {"good|base"}
    assert set(db.read_rows(D.StatisticRow)["partition_key"]) == {"garbled|base", "good|base"}
    assert "RuntimeError: cannot draw" in _metadata(result, "audit_figures")["failed_partitions"]
