"""The export and the report read the results database one partition at a time (issue 19, item 5:
memory bounded whatever the number of partitions). A scored database of three partitions is
exported and reported with ``read_rows`` watched: no read of a per-partition table asks for more
than one partition, and the files are the same tables as read all at once."""

from __future__ import annotations

import dagster as dg
import pandas as pd
import pytest

from fairness_assets import cli, export
from fairness_assets.defs.reporting import assets as reporting
from resources import database as D
from resources.settings import DATA_DIR, DEMO_CORPUS

EXAMPLE = DATA_DIR / "examples" / "worked_example_responses.csv"
PER_PARTITION = (D.Recommendation, D.DRSItem, D.GRSCountry, D.MetricRow, D.StatisticRow, D.GeographyRow, D.DriftRow)


@pytest.fixture(scope="module")
def scored(tmp_path_factory) -> str:
    """A results database holding three scored partitions (two models x base, one x regional)."""
    tmp = tmp_path_factory.mktemp("scored")
    rows = pd.read_csv(EXAMPLE)
    base, regional = rows[rows["template"] == "base"], rows[rows["template"] == "regional"]
    path = tmp / "responses.csv"
    pd.concat(
        [base.assign(model="model-a"), regional.assign(model="model-a"), base.assign(model="model-b")],
        ignore_index=True,
    ).to_csv(path, index=False)
    url = f"sqlite:///{tmp / 'results.db'}"
    code = cli.main(
        [
            "score",
            "--responses",
            str(path),
            "--corpus",
            str(DEMO_CORPUS),
            "--out",
            str(tmp / "first"),
            "--database",
            url,
        ]
    )
    assert code == 0
    return url


@pytest.fixture
def reads(monkeypatch):
    """Every read of a per-partition table (read_rows, and read_tables for the typed result tables):
    (table, keys or None for all)."""
    seen: list[tuple[str, object]] = []

    def watch(method: str):
        original = getattr(D.ResultsDatabase, method)

        def watched(self, model, partition_keys=None, **kw):  # read_tables's names= (one table)
            if model in PER_PARTITION or any(
                isinstance(model, D.ResultGroup) and set(model.assets) <= set(g.assets)
                for g in PER_PARTITION
                if isinstance(g, D.ResultGroup)
            ):
                name = getattr(model, "__tablename__", None) or model.name
                seen.append((name, None if partition_keys is None else list(partition_keys)))
            return original(self, model, partition_keys, **kw)

        monkeypatch.setattr(D.ResultsDatabase, method, watched)

    watch("read_rows")
    watch("read_tables")
    return seen


def _too_wide(seen) -> list:
    """Reads of every partition (no keys) or of more than one partition key at once ("" is the
    cross-partition key of base vs regional, a table of its own size)."""
    return [(t, k) for t, k in seen if k is None or len([x for x in k if x]) > 1]


def _sorted(df: pd.DataFrame) -> pd.DataFrame:
    df = df.astype(str).replace({"nan": "", "None": ""})
    return df.sort_values(list(df.columns)).reset_index(drop=True)


def test_export_reads_and_writes_one_partition_at_a_time(scored, reads, tmp_path):
    digest = export.export_results(scored, tmp_path, log=lambda *_: None)
    assert reads and not _too_wide(reads), _too_wide(reads)
    assert {tuple(k) for _, k in reads if k} >= {("model-a|base",), ("model-a|regional",), ("model-b|base",)}
    reads.clear()
    database = D.ResultsDatabase(url=scored)
    try:
        whole = export.read_results(database)
    finally:
        database.dispose()
    for name, df in whole.items():
        written = pd.read_csv(tmp_path / f"{name}.csv", dtype=str, keep_default_na=False)
        assert list(written.columns) == list(df.columns), name
        assert len(written) == len(df), name
        pd.testing.assert_frame_equal(
            _sorted(written), _sorted(df.astype(object).where(df.notna(), "")), check_dtype=False, obj=name
        )
    # every partition is in the files, and the digest the summary is written from covers them all
    assert set(pd.read_csv(tmp_path / "drs_responses.csv")["model"]) == {"model-a", "model-b"}
    assert sorted(zip(digest["drs_mean"]["model"], digest["drs_mean"]["template"], strict=False)) == [
        ("model-a", "base"),
        ("model-a", "regional"),
        ("model-b", "base"),
    ]


def test_joining_partitions_with_different_columns_keeps_every_column(tmp_path):
    table = export._CsvTable(tmp_path / "t.csv", tmp_path, ["model", "template"])
    table.add(pd.DataFrame({"model": ["a"], "template": ["base"], "x": [1]}))
    table.add(pd.DataFrame({"model": ["b"], "template": ["base"], "y": ["q"], "x": [2]}))
    assert table.close() == 2
    out = pd.read_csv(tmp_path / "t.csv", keep_default_na=False)
    assert list(out.columns) == ["model", "template", "x", "y"]
    assert out.to_dict("records") == [
        {"model": "a", "template": "base", "x": 1, "y": ""},
        {"model": "b", "template": "base", "x": 2, "y": "q"},
    ]
    empty = export._CsvTable(tmp_path / "e.csv", tmp_path, ["model", "template"])
    assert empty.close() == 0 and (tmp_path / "e.csv").read_text().strip() == "model,template"


def test_report_reads_one_partition_at_a_time(scored, reads):
    database = D.ResultsDatabase(url=scored)
    try:
        figures = reporting._stored_figures(database)
        stored = reporting._stored_partitions(database, dg.DagsterInstance.ephemeral(), None)
        parts, quality = stored.parts, stored.quality
    finally:
        database.dispose()
    assert sorted(p.key for p in parts) == ["model-a|base", "model-a|regional", "model-b|base"]
    assert sorted(quality) == ["model-a|base", "model-a|regional", "model-b|base"]
    assert sorted(stored.matches) == sorted(quality)  # the non-exact matches to audit, per partition
    assert reads and not _too_wide(reads), _too_wide(reads)
    # each partition is digested as it is read: what the report shows, no item rows, no full statistics
    assert all(set(p.part.items.columns) <= {"partition_key", "audit_id"} for p in parts)
    assert all(set(p.part.statistics) <= {"run_variability"} for p in parts)
    assert all(len(t) <= 200 for p in parts for t in [*p.tables.values(), *p.behaviour_tables.values()])
    # the figures come from their files, one partition at a time
    assert figures and all({f.name for f in figures[p.key]} <= {f.name for f in p.figures} for p in parts)


def test_report_digests_the_same_in_worker_processes(scored):
    """The partitions digested in two worker processes (core/reference/workers.py) are what this process
    digests: the same sentences, shown rows (with their row counts), figures and scorecard inputs."""
    database = D.ResultsDatabase(url=scored)
    try:
        here = reporting._stored_partitions(database, None, None, workers=1)
        there = reporting._stored_partitions(database, None, None, workers=2)
    finally:
        database.dispose()
    assert [p.key for p in there.parts] == [p.key for p in here.parts] and len(here.parts) == 3
    for a, b in zip(here.parts, there.parts, strict=True):
        assert (a.behaviour_lines, a.outcome_lines, a.significant, a.audit_ids) == (
            b.behaviour_lines,
            b.outcome_lines,
            b.significant,
            b.audit_ids,
        )
        assert [(f.name, f.png) for f in a.figures] == [(f.name, f.png) for f in b.figures]
        for name in ("tables", "behaviour_tables"):
            ta, tb = getattr(a, name), getattr(b, name)
            assert sorted(ta) == sorted(tb), name
            for k in ta:
                pd.testing.assert_frame_equal(ta[k], tb[k], obj=f"{a.key} {k}")
                assert ta[k].attrs == tb[k].attrs, k
        pd.testing.assert_frame_equal(a.scorecard_row, b.scorecard_row)
        pd.testing.assert_frame_equal(a.scorecard_findings, b.scorecard_findings)
    assert here.matches.keys() == there.matches.keys()
    geo = [[(f.name, f.png) for f in s.geo_figures or []] for s in (here, there)]
    assert geo[0] == geo[1]
