"""The ``generations`` asset stages a responses file once (issue 19, item 5: no run holds the
whole file): the first run converts it into one Parquet folder per model x template under
FAIRNESS_STAGING_DIR, and a later run of another partition reads only its own partition from
there, without reading the file again."""

from __future__ import annotations

import json

import dagster as dg
import pandas as pd
import pytest

from fairness_assets.core.generation import responses as responses_core
from fairness_assets.defs.generation import assets as gen
from fairness_assets.defs.partitions import MODEL_PARTITIONS
from fairness_assets.defs.reference import assets as ref
from resources import database as D
from resources.llm.resource import LLMResource
from resources.settings import DATA_DIR, DEMO_CORPUS, AuditGridResource, GenerationSourceResource, ReferenceDataResource

EXAMPLE = DATA_DIR / "examples" / "worked_example_responses.csv"


def test_staging_folder_follows_the_setting(tmp_path, monkeypatch):
    monkeypatch.setenv("FAIRNESS_HOME", str(tmp_path / "home"))
    source = GenerationSourceResource(responses_path=str(EXAMPLE))
    assert source.staging_folder().parent == tmp_path / "home" / "staged-responses"
    source = GenerationSourceResource(responses_path=str(EXAMPLE), staging_dir=str(tmp_path / "s"))
    assert source.staging_folder().parent == tmp_path / "s" / "staged-responses"
    assert GenerationSourceResource(responses_path="").staging_folder() is None


@pytest.mark.slow
def test_a_second_partition_is_read_from_the_staged_file(tmp_path, monkeypatch):
    rows = pd.read_csv(EXAMPLE)
    path = tmp_path / "responses.csv"
    rows.to_csv(path, index=False)
    database = D.ResultsDatabase(url=f"sqlite:///{tmp_path / 'r.db'}")
    source = GenerationSourceResource(responses_path=str(path), staging_dir=str(tmp_path / "staging"))
    resources = {
        "database": database,
        "results_io": D.SQLResultsIOManager(database=database),
        "reference": ReferenceDataResource(corpus_path=str(DEMO_CORPUS)),
        "audit_grid": AuditGridResource(),
        "generation_source": source,
        "llm": LLMResource(),
    }
    instance = dg.DagsterInstance.ephemeral()
    instance.add_dynamic_partitions(MODEL_PARTITIONS.name, ["example-model"])
    upstream = [ref.profiles, ref.prompts]
    assert dg.materialize(
        [*upstream, gen.generations], instance=instance, resources=resources, partition_key="example-model|base"
    ).success
    folder = source.staging_folder()
    assert (folder / "manifest.json").exists()
    staged_pairs = {tuple(p[:2]) for p in json.loads((folder / "manifest.json").read_text())["partitions"]}
    assert staged_pairs == set(zip(rows["model"], rows["template"], strict=False))

    def no_second_read(*args, **kwargs):
        raise AssertionError("the responses file was read again instead of the staged partition")

    monkeypatch.setattr(responses_core.staging, "_read_all", no_second_read)
    monkeypatch.setattr(responses_core.importing, "_read_all", no_second_read)
    result = dg.materialize(
        [*upstream, gen.generations],
        instance=instance,
        resources=resources,
        partition_key="example-model|regional",
        selection=[gen.generations],
    )
    assert result.success
    stored = database.read_rows(D.Generation, ["example-model|regional"])
    assert len(stored) == int((rows["template"] == "regional").sum())
    # a changed file is staged again (its size and hash differ), not served from the old folder
    monkeypatch.undo()
    rows[rows["template"] != "academic"].to_csv(path, index=False)
    assert dg.materialize(
        [*upstream, gen.generations],
        instance=instance,
        resources=resources,
        partition_key="example-model|base",
        selection=[gen.generations],
    ).success
    staged_pairs = {tuple(p[:2]) for p in json.loads((folder / "manifest.json").read_text())["partitions"]}
    assert ("example-model", "academic") not in staged_pairs
