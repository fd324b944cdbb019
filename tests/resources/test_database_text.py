"""Text the results database cannot store as is (issue 11, item 4): a NUL character (PostgreSQL
rejects it) or a lone surrogate (no driver encodes it) in one value. Every write path stores it
the same way on SQLite and on the real PostgreSQL server, and an import from a responses file
keeps every row, flags the altered one and leaves the others intact."""

import json

import dagster as dg
import pandas as pd
import pytest
import sqlalchemy as sa

from fairness_assets.defs.generation import assets as gen
from fairness_assets.defs.partitions import MODEL_PARTITIONS
from fairness_assets.defs.reference import assets as ref
from resources import database as D
from resources.llm.resource import LLMResource
from resources.settings import AuditGridResource, GenerationSourceResource, ReferenceDataResource

NUL = "Top pick: MIT\x00 in the USA"
SURROGATE = "Top pick: ETH \ud800Zurich"


@pytest.fixture(params=["sqlite", pytest.param("postgres", marks=pytest.mark.postgres)])
def url(request, tmp_path):
    if request.param == "sqlite":
        return f"sqlite:///{tmp_path / 'r.db'}"
    return request.getfixturevalue("postgres_url")


@pytest.fixture
def db(url):
    database = D.ResultsDatabase(url=url)
    yield database
    database.dispose()


def _generations(texts, key="m|base"):
    n = len(texts)
    return pd.DataFrame(
        {
            "partition_key": key,
            "audit_id": "a1",
            "response_id": [f"r{i}" for i in range(n)],
            "model": "m",
            "template": "base",
            "template_hash": "h",
            "profile_id": [f"p{i}" for i in range(n)],
            "run": 0,
            "seed": list(range(n)),
            "prompt": "Where should I study?",
            "response": texts,
            "model_source": "file",
            "backend": "file",
            "decoding_json": "{}",
            "provenance_id": "",
        }
    )


def test_replace_rows_stores_nul_and_surrogates_alike(db):
    texts = ["plain answer", NUL, SURROGATE, "caf\u00e9 \U0001f393 ok"]
    assert db.replace_rows(D.Generation, _generations(texts), ["m|base"]) == 4
    stored = db.read_rows(D.Generation, ["m|base"]).set_index("response_id")["response"]
    assert list(stored) == [
        "plain answer",
        "Top pick: MIT in the USA",
        "Top pick: ETH \ufffdZurich",
        "caf\u00e9 \U0001f393 ok",
    ]


def test_append_rows_stores_nul_and_surrogates_alike(db):
    assert db.append_rows(D.Generation, _generations([NUL, "fine", SURROGATE])) == 3
    stored = db.read_rows(D.Generation)
    assert list(stored["response"]) == ["Top pick: MIT in the USA", "fine", "Top pick: ETH \ufffdZurich"]


def test_every_text_column_and_key_is_made_storable(db):
    frame = _generations(["x", "y"], key="m\x00|base").assign(model="m\x00", prompt="p\ud800")
    db.replace_rows(D.Generation, frame, ["m\x00|base"])
    db.replace_rows(D.Generation, frame, ["m\x00|base"])  # the delete finds the stored key: no duplicates
    stored = db.read_rows(D.Generation, ["m\x00|base"])
    assert len(stored) == 2 and set(stored["partition_key"]) == {"m|base"} and set(stored["model"]) == {"m"}
    assert set(stored["prompt"]) == {"p\ufffd"}
    assert db.existing_values(D.Generation, "response_id", ["m\x00|base"], audit_id="a1") == {"r0", "r1"}
    assert db.write_tag_cache("rules", {"art\x00 history": ("Arts",)}) == 1
    assert db.read_tag_cache("rules", ["art\x00 history"]) == {"art history": ("Arts",)}
    assert db.write_tag_cache("rules", {"art\x00 history": ("Arts",)}) == 0


def test_database_of_an_earlier_version_gets_the_new_nullable_column(url):
    db = D.ResultsDatabase(url=url)
    db.replace_rows(D.Generation, _generations(["old row"]), ["m|base"])
    engine = db.engine()
    with engine.begin() as conn:  # the generation table as an earlier version created it
        conn.execute(sa.text("ALTER TABLE generation DROP COLUMN text_note"))
        conn.execute(sa.text("DROP TABLE results_alembic_version"))  # an earlier release kept no version
    db.dispose()
    db = D.ResultsDatabase(url=url)
    stored = db.read_rows(D.Generation, ["m|base"])
    assert list(stored["response"]) == ["old row"] and stored["text_note"].isna().all()
    db.append_rows(D.Generation, _generations(["new row"], key="m|regional").assign(text_note="response: note"))
    assert list(db.read_rows(D.Generation, ["m|regional"])["text_note"]) == ["response: note"]
    db.dispose()


# -- the generations asset imports a responses file with a NUL in one answer --------------------
GOOD = json.dumps([{"university": "MIT", "program": "MSc Computer Science", "country": "USA"}])


def _responses_file(tmp_path, kind):
    rows = []
    for _i, (gender, cls) in enumerate([(g, c) for g in ("male", "female", "transgender") for c in ("high", "low")]):
        rows.append(
            {
                "model": "m1",
                "template": "base",
                "gender": gender,
                "economic_class": cls,
                "nationality": "Nigeria",
                "run": 0,
                "response": GOOD,
            }
        )
    rows[2]["response"] = GOOD[:20] + "\x00" + GOOD[20:]
    rows[4]["response"] = "I suggest \ud800 ETH Zurich"
    p = tmp_path / f"responses.{kind}"
    if kind == "jsonl":
        p.write_text("\n".join(json.dumps(r) for r in rows) + "\n")
    else:
        del rows[4]  # a CSV file is UTF-8: it cannot carry a lone surrogate
        p.write_bytes(pd.DataFrame(rows).to_csv(index=False).encode("utf-8"))
    return p, rows


@pytest.mark.parametrize("kind", ["jsonl", "csv"])
def test_import_with_a_nul_keeps_every_row_and_flags_the_altered_one(tmp_path, url, kind):
    path, rows = _responses_file(tmp_path, kind)
    instance = dg.DagsterInstance.ephemeral()
    instance.add_dynamic_partitions(MODEL_PARTITIONS.name, ["m1"])
    database = D.ResultsDatabase(url=url)
    result = dg.materialize(
        [ref.profiles, ref.prompts, gen.generations],
        instance=instance,
        partition_key="m1|base",
        raise_on_error=False,
        resources={
            "database": database,
            "results_io": D.SQLResultsIOManager(database=database),
            "reference": ReferenceDataResource(),
            "audit_grid": AuditGridResource(),
            "generation_source": GenerationSourceResource(responses_path=str(path)),
            "llm": LLMResource(),
        },
    )
    assert result.success
    stored = database.read_rows(D.Generation, ["m1|base"]).set_index("profile_id").sort_index()
    assert len(stored) == len(rows)  # every row imported
    nul_row = stored.loc["full:female:high:nigeria"]
    assert nul_row["response"] == GOOD and nul_row["text_note"] == "response: 1 NUL character removed"
    if kind == "jsonl":
        sur_row = stored.loc["full:transgender:high:nigeria"]
        assert sur_row["response"] == "I suggest \ufffd ETH Zurich"
        assert "unencodable" in sur_row["text_note"] and sur_row["text_note"].startswith("response: ")
    flagged = {"full:female:high:nigeria", "full:transgender:high:nigeria"}
    others = stored[~stored.index.isin(flagged)]
    assert len(others) == 4 and (others["response"] == GOOD).all() and others["text_note"].isna().all()
    mats = [e for e in result.get_asset_materialization_events() if e.asset_key.to_user_string() == "generations"]
    assert mats and mats[0].materialization.metadata["rows_rejected"].value == 0
    meta = mats[0].materialization.metadata
    assert meta["rows_text_altered"].value == (2 if kind == "jsonl" else 1)  # shown on the asset's page
    assert "NUL character removed" in meta["text_notes"].value
    database.dispose()
