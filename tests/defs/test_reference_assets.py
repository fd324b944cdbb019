"""The code location loads, and the reference assets materialize into SQLite and PostgreSQL."""

import os
import subprocess
import sys
from pathlib import Path

import dagster as dg
import pytest

from fairness_assets.defs.reference import assets as ref
from resources import database as D
from resources.settings import AuditGridResource, ReferenceDataResource
from tests.helpers.pipeline import ASSETS

ROOT = Path(__file__).resolve().parents[2]


@pytest.mark.slow
def test_definitions_validate_cli(results_home):
    out = subprocess.run(
        [sys.executable, "-m", "dagster", "definitions", "validate", "-w", str(ROOT / "workspace.yaml")],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=300,
        env={**os.environ},
    )
    assert out.returncode == 0, out.stdout + out.stderr
    assert "Validation successful for code location fairness-audit" in out.stdout + out.stderr


def test_definitions_object_has_the_assets_and_job(results_home):
    from fairness_assets.definitions import defs

    loaded = defs()
    keys = {k.to_user_string() for k in loaded.resolve_asset_graph().get_all_asset_keys()}
    assert {"qs_corpus", "country_geography", "capital_distances", "profiles", "prompts"} <= keys
    assert loaded.resolve_job_def("demo_audit") is not None


def _materialize(url, corpus_path="", design="demo"):
    database = D.ResultsDatabase(url=url)
    result = dg.materialize(
        [a for a in ASSETS if set(a.group_names_by_key.values()) == {"reference"}],  # the code location's group
        resources={
            "database": database,
            "results_io": D.SQLResultsIOManager(database=database),
            "reference": ReferenceDataResource(corpus_path=str(corpus_path)),
            "audit_grid": AuditGridResource(design=design),
        },
    )
    assert result.success
    meta = {
        e.asset_key.to_user_string(): {k: getattr(v, "value", v) for k, v in e.materialization.metadata.items()}
        for e in result.get_asset_materialization_events()
    }
    return database, meta


def test_qs_export_reports_1497_universities_in_104_countries(qs_export, tmp_path):
    database, meta = _materialize(f"sqlite:///{tmp_path / 'r.db'}", qs_export, design="study")
    assert meta["qs_corpus"]["universities"] == 1497 and meta["qs_corpus"]["countries"] == 104
    assert meta["qs_corpus"]["illustrative_demo_corpus"] is False
    assert meta["profiles"]["full_profiles"] == 360 and meta["profiles"]["reduced_context_profiles"] == 46
    assert meta["prompts"]["dagster/row_count"] == 3 * 360 + 46
    geo_rows = database.read_rows(D.Country)
    # 104 corpus countries plus the nationalities without a corpus university (Algeria, Jamaica, Fiji, PNG, Tonga)
    assert set(geo_rows.loc[~geo_rows["in_corpus"], "iso3"]) == {"DZA", "JAM", "FJI", "PNG", "TON"}
    assert len(geo_rows) == 109 and geo_rows[["lat", "lon"]].notna().all().all()
    assert database.count(D.CapitalDistance) == 109 * 109
    unis = database.read_rows(D.CorpusUniversity)
    assert len(unis) == 1497 and unis["provenance_id"].str.len().gt(0).all()
    prov = database.read_rows(D.Provenance).set_index("asset")
    assert prov.loc["qs_corpus", "corpus_sha256"] == unis["corpus_sha256"].iloc[0]
    prompts = database.read_rows(D.PromptRow)
    assert prompts["template_hash"].nunique() == 6


@pytest.mark.postgres
def test_demo_materializes_on_postgres(postgres_url):
    database, meta = _materialize(postgres_url)
    assert meta["qs_corpus"]["illustrative_demo_corpus"] is True
    assert database.count(D.CorpusUniversity) == meta["qs_corpus"]["universities"]
    assert database.count(D.PromptRow) == meta["prompts"]["dagster/row_count"] > 0
    # rematerializing replaces rows instead of duplicating them
    _materialize(postgres_url)
    assert database.count(D.CorpusUniversity) == meta["qs_corpus"]["universities"]
    database.dispose()


def test_malformed_corpus_fails_the_asset_with_a_named_error(tmp_path):
    bad = tmp_path / "bad.csv"
    bad.write_text("2024 RANK,Institution Name,Country\n1,MIT,United States\nsoon,Oxford,United Kingdom\n")
    database = D.ResultsDatabase(url=f"sqlite:///{tmp_path / 'r.db'}")
    with pytest.raises(Exception, match=r"bad\.csv: line 3, column '2024 RANK': unparseable rank 'soon'"):
        dg.materialize(
            [ref.qs_corpus],
            resources={
                "database": database,
                "results_io": D.SQLResultsIOManager(database=database),
                "reference": ReferenceDataResource(corpus_path=str(bad)),
            },
        )


@pytest.mark.postgres
@pytest.mark.parametrize("backend", ["sqlite", "postgres"])
def test_a_design_with_names_stores_the_named_profiles_with_their_names(backend, tmp_path, request, monkeypatch):
    """languages_demo (issue 35 item 5): the profiles asset stores each named profile with the name it is called
    by (profile.student_name), and the prompts asset asks the named template with that name and nothing it
    signals. The template partitions are fixed when the code location loads (FAIRNESS_DESIGN); this process
    loaded the default's, so the check that the design's templates are partitions is lifted here (the CLI and
    the UI load the code location with the design: tests/e2e/test_names_score.py)."""
    monkeypatch.setattr(ref, "templates_not_partitions", lambda templates: [])
    url = f"sqlite:///{tmp_path / 'r.db'}" if backend == "sqlite" else request.getfixturevalue("postgres_url")
    database, meta = _materialize(url, design="languages_demo")
    profiles = database.read_rows(D.Profile)
    named = profiles[profiles["profile_set"] == "named"]
    assert len(named) == 8 and named["student_name"].notna().all() and named["student_name"].is_unique
    assert profiles.loc[profiles["profile_set"] == "full", "student_name"].isna().all()
    prompts = database.read_rows(D.PromptRow).merge(named[["profile_id", "student_name"]], on="profile_id")
    assert set(prompts["template"]) == {"base_named", "base_fr_named"} and len(prompts) == 16
    for _, r in prompts.iterrows():
        assert r["student_name"] in r["prompt"] and "Nigeria" not in r["prompt"] and "France" not in r["prompt"]
    assert meta["prompts"]["dagster/row_count"] == 32
    # the profiles' page says how many names each signalled cell has (Nigeria and France: faker covers both)
    assert "| Nigeria " in meta["profiles"]["names"] and "names_per_profile" in meta["profiles"]["names"]
    database.dispose()
