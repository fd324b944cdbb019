"""The versions of the libraries that decide an audit's numbers (issue 25): every provenance record
stores them (so every stored row, through its provenance_id), the report's provenance table shows
them, and they are the installed ones (importlib.metadata)."""

import html
import json
import platform
from importlib import metadata

import dagster as dg
import pandas as pd
import pytest

from fairness_assets.core.reporting import report as report_core
from fairness_assets.defs.reference import assets as ref
from fairness_assets.defs.services import software_provenance
from resources import database as D
from resources.database import provenance
from resources.settings import AuditGridResource, ReferenceDataResource

# what the issue names, each an installed distribution of `.[dev,llm]` (scipy: not used by the product)
REQUIRED = ("pandas", "numpy", "rapidfuzz", "great_expectations", "torch", "transformers", "dagster", "sqlalchemy")


def _installed() -> dict[str, str]:
    return {"python": platform.python_version(), **{n: metadata.version(n) for n in D.NUMERIC_LIBRARIES}}


def test_the_versions_are_the_installed_ones():
    assert set(REQUIRED) <= set(D.NUMERIC_LIBRARIES)
    versions = D.library_versions()
    assert versions == _installed()
    assert versions["torch"] == metadata.version("torch") and versions["pandas"] == metadata.version("pandas")
    versions["numpy"] = "changed"  # a copy: the next caller still gets the installed versions
    assert D.library_versions()["numpy"] == metadata.version("numpy")


def test_an_absent_library_is_said_to_be_not_installed(monkeypatch):
    monkeypatch.setattr(provenance, "NUMERIC_LIBRARIES", D.NUMERIC_LIBRARIES + ("no-such-library-installed",))
    provenance._library_versions.cache_clear()
    try:
        versions = D.library_versions()
        assert versions["no-such-library-installed"] == D.NOT_INSTALLED
        assert versions["numpy"] == metadata.version("numpy")
    finally:
        provenance._library_versions.cache_clear()


def test_every_provenance_record_stores_them_and_its_id_depends_on_them(tmp_path):
    prov = D.make_provenance("scores", config_json={"lambda": 0.5})
    assert json.loads(prov.library_versions) == _installed()
    other = D.make_provenance(
        "scores", config_json={"lambda": 0.5}, library_versions={**_installed(), "numpy": "0.0.1"}
    )
    assert other.provenance_id != prov.provenance_id  # other libraries, another record

    database = D.ResultsDatabase(url=f"sqlite:///{tmp_path / 'r.db'}")
    try:
        stamped = database.stamp(pd.DataFrame({"x": [1, 2]}), "some_asset", config_json={"k": 1})
        stored = database.read_rows(D.Provenance).set_index("provenance_id")
        row = stored.loc[stamped["provenance_id"].iloc[0]]
        assert row["asset"] == "some_asset" and json.loads(row["library_versions"]) == _installed()
    finally:
        database.dispose()


def test_the_reference_assets_rows_point_to_records_with_the_versions(tmp_path):
    database = D.ResultsDatabase(url=f"sqlite:///{tmp_path / 'r.db'}")
    try:
        result = dg.materialize(
            [ref.qs_corpus, ref.country_geography, ref.capital_distances, ref.profiles, ref.prompts],
            resources={
                "database": database,
                "results_io": D.SQLResultsIOManager(database=database),
                "reference": ReferenceDataResource(),
                "audit_grid": AuditGridResource(design="demo"),
            },
        )
        assert result.success
        records = database.read_rows(D.Provenance).set_index("provenance_id")
        assert len(records) and all(json.loads(v) == _installed() for v in records["library_versions"])
        for model in (D.CorpusUniversity, D.Country, D.CapitalDistance):
            ids = set(database.read_rows(model)["provenance_id"])
            assert ids and ids <= set(records.index), model.__tablename__
    finally:
        database.dispose()


def test_the_reports_provenance_table_shows_them():
    prov = software_provenance("rules", {"lambda": 0.5}, {"n_boot": 2000})
    assert prov["library versions"] == _installed()
    page, markdown = report_core.render_report(provenance=prov)
    line = next(ln for ln in markdown.splitlines() if ln.startswith("| library versions"))
    assert json.loads(line.split("|")[2].strip().replace("\\_", "_")) == _installed()  # Markdown escapes _
    assert json.dumps(_installed(), sort_keys=True) in html.unescape(page)


@pytest.mark.parametrize("name", REQUIRED)
def test_each_named_library_is_recorded(name):
    assert D.library_versions()[name] == metadata.version(name)
