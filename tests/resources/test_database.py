"""The results database on SQLite and on the real PostgreSQL server."""

import pandas as pd
import pytest

from resources import database as D
from resources.settings import AuditGridResource, ConfigError, load_model_registry


@pytest.fixture(params=["sqlite", pytest.param("postgres", marks=pytest.mark.postgres)])
def db(request, tmp_path):
    if request.param == "sqlite":
        url = f"sqlite:///{tmp_path / 'r.db'}"
    else:
        url = request.getfixturevalue("postgres_url")
    database = D.ResultsDatabase(url=url)
    yield database
    database.dispose()


def _profiles(n, tag):
    return pd.DataFrame(
        {
            "profile_id": [f"{tag}{i}" for i in range(n)],
            "profile_set": "full",
            "gender": ["male"] * n,
            "economic_class": [None] * n,
            "nationality": ["India"] * n,
            "home_iso3": ["IND"] * n,
            "config_hash": "abc",
        }
    )


def test_roundtrip_replace_and_partitions(db):
    prov = D.make_provenance("profiles", config_hash="abc", config_json={"preset": "demo"})
    db.record_provenance(prov)
    db.record_provenance(prov)  # idempotent
    df = _profiles(3, "a")
    df["provenance_id"] = prov.provenance_id
    assert db.replace_rows(D.Profile, df, ["p1"]) == 3
    db.replace_rows(D.Profile, _profiles(2, "b"), ["p2"])
    db.replace_rows(D.Profile, _profiles(1, "c"), ["p1"])  # replaces p1 only
    back = db.read_rows(D.Profile)
    assert sorted(back["profile_id"]) == ["b0", "b1", "c0"]
    p2 = db.read_rows(D.Profile, ["p2"])
    assert list(p2["profile_id"]) == ["b0", "b1"] and p2["economic_class"].isna().all()
    assert db.count(D.Provenance) == 1


def test_missing_required_column_is_named(db):
    with pytest.raises(ValueError, match=r"profile: frame lacks required column\(s\) \['config_hash'\]"):
        db.replace_rows(D.Profile, _profiles(1, "x").drop(columns=["config_hash"]))


def test_unreachable_database_names_it():
    bad = D.ResultsDatabase(url="postgresql://nobody:secret@127.0.0.1:1/none")
    with pytest.raises(ConnectionError, match=r"results database postgresql://nobody:\*\*\*@127.0.0.1:1/none"):
        bad.engine()


def test_default_url_is_sqlite_in_fairness_home(results_home):
    db = D.ResultsDatabase()
    assert db.resolved_url() == f"sqlite:///{results_home / 'results.db'}"
    db.engine()
    assert (results_home / "results.db").exists()


def test_designs_and_registry():
    demo = AuditGridResource(design="demo").resolve()
    study = AuditGridResource(design="study").resolve()
    assert study.runs == 10 and len(study.values_of("nationality")) == 40 and len(study.templates) == 6
    assert demo.runs == 1 and demo.templates == ("base",) and demo.design.size()["prompts_per_model"] <= 20
    assert demo.config_hash != study.config_hash
    over = AuditGridResource(design="demo", runs=3, values={"nationality": ["Kenya"]}).resolve()
    assert over.runs == 3 and over.values_of("nationality") == ("Kenya",)
    reg = load_model_registry()
    assert {"llama-3.1-8b-instruct", "gemma-7b-it", "mistral-7b-instruct-v0.3", "qwen2.5-0.5b-demo"} <= set(reg)
    assert reg["gemma-7b-it"].system_role is False
    with pytest.raises(ConfigError, match="unknown design 'huge'"):
        AuditGridResource(design="huge").resolve()
    with pytest.raises(ConfigError, match="not in the registry"):
        AuditGridResource(design="demo", models=["gpt-99"]).resolve()
    with pytest.raises(ConfigError, match="runs must be at least 1"):
        AuditGridResource(design="demo", runs=0).resolve()
    with pytest.raises(ConfigError, match="has no value"):
        AuditGridResource(design="demo", values={"gender": ["robot"]}).resolve()


@pytest.mark.slow
@pytest.mark.postgres
def test_parallel_first_use_creates_tables_once(tmp_path, postgres_url):
    """Parallel steps (multiprocess executor) open a fresh results database at the same time."""
    import multiprocessing as mp

    for url in (f"sqlite:///{tmp_path / 'p.db'}", postgres_url):
        ctx = mp.get_context("spawn")
        pool = ctx.Pool(4)
        try:  # close and join: terminate() (what `with Pool` does) cannot stop a worker that ignores SIGTERM
            results = pool.map(_open_and_write, [(url, i) for i in range(8)])
        finally:
            pool.close()
            pool.join()
        assert all(r == "ok" for r in results), results
        db = D.ResultsDatabase(url=url)
        assert db.count(D.Profile) == 8
        db.dispose()


def _open_and_write(args):
    url, i = args
    try:
        db = D.ResultsDatabase(url=url)
        db.replace_rows(D.Profile, _profiles(1, f"w{i}"), [f"p{i}"])
        db.dispose()
        return "ok"
    except Exception as exc:  # noqa: BLE001
        return repr(exc)
