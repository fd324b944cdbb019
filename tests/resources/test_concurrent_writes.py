"""Shared tables under concurrency (issue 19.1) and leases that cannot be silently regained
(issue 19.2), on the real PostgreSQL server with real processes, and on SQLite.

- Several processes replacing the same reference table at once leave exactly one copy of it
  (a transaction-scoped lock per table; before, each inserted a full copy on PostgreSQL).
- Several processes recording the same provenance at once: stored once, no duplicate-key error.
- A run that finds a shared table already holding the same rows does not rewrite it.
- The migration removes the duplicates an earlier release left, logs it, and adds the unique keys.
- A run that lost its lease to another run fails at its next read or write, naming that run, even
  when that run has finished since.
"""

from __future__ import annotations

import json
import logging
import os
import signal
import subprocess
import sys
import time
from datetime import datetime, timedelta, timezone
from pathlib import Path

import pandas as pd
import pytest
import sqlalchemy as sa

from resources import database as D
from resources import migrations as M
from resources.database.connect import _with_driver
from resources.partition_lease import LeaseLostError, PartitionLease, PartitionLeaseGrant, claim

ROOT = Path(__file__).resolve().parents[2]


def _distances(n_countries: int = 60, km_offset: float = 0.0) -> pd.DataFrame:
    codes = [f"C{i:02d}" for i in range(n_countries)]
    rows = [(a, b, float(i * n_countries + j) + km_offset) for i, a in enumerate(codes) for j, b in enumerate(codes)]
    frame = pd.DataFrame(rows, columns=["from_iso3", "to_iso3", "km"])
    frame["corpus_sha256"] = "c" * 64
    frame["provenance_id"] = "p" * 64
    return frame


HAMMER = r"""
import sys, time
import pandas as pd
sys.path.insert(0, sys.argv[4])
from resources import database as D
from tests.resources.test_concurrent_writes import _distances
url, rounds, start_at = sys.argv[1], int(sys.argv[2]), float(sys.argv[3])
db = D.ResultsDatabase(url=url)
db.engine()
frames = [_distances(km_offset=k) for k in (0.0, 0.5)]  # two contents: every write really rewrites
prov = D.make_provenance("capital_distances", corpus_sha256="c" * 64, config_json={"race": True})
while time.time() < start_at:
    time.sleep(0.005)
for i in range(rounds):
    db.record_provenance(prov)
    db.replace_rows(D.CapitalDistance, frames[i % 2])
print("DONE", flush=True)
"""


def _hammer(url: str, processes: int = 4, rounds: int = 8) -> None:
    start_at = time.time() + 4.0  # every process imported and connected before the first write
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    procs = [
        subprocess.Popen(
            [sys.executable, "-c", HAMMER, url, str(rounds), str(start_at), str(ROOT)],
            cwd=ROOT,
            env=env,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for _ in range(processes)
    ]
    for p in procs:
        out, err = p.communicate(timeout=300)
        assert p.returncode == 0 and "DONE" in out, err[-3000:]


@pytest.mark.postgres
@pytest.mark.slow
def test_concurrent_replacements_of_a_reference_table_leave_one_copy_on_postgresql(postgres_url):
    D.ResultsDatabase(url=postgres_url).engine().dispose()  # the schema, made once before the race
    _hammer(postgres_url)
    db = D.ResultsDatabase(url=postgres_url)
    try:
        stored = db.read_rows(D.CapitalDistance)
        assert len(stored) == 3600, f"{len(stored)} rows: concurrent writers left more than one copy"
        assert not stored.duplicated(["from_iso3", "to_iso3"]).any()
        assert db.count(D.Provenance) == 1
    finally:
        db.dispose()


@pytest.mark.slow
def test_concurrent_replacements_of_a_reference_table_leave_one_copy_on_sqlite(tmp_path):
    url = f"sqlite:///{tmp_path / 'race.db'}"
    D.ResultsDatabase(url=url).engine().dispose()
    _hammer(url, processes=2, rounds=3)
    db = D.ResultsDatabase(url=url)
    assert len(db.read_rows(D.CapitalDistance)) == 3600
    db.dispose()


@pytest.fixture(params=["sqlite", pytest.param("postgresql", marks=pytest.mark.postgres)])
def url(request, tmp_path):
    if request.param == "sqlite":
        return f"sqlite:///{tmp_path / 'r.db'}"
    return request.getfixturevalue("postgres_url")


def test_a_shared_table_already_holding_the_rows_is_not_rewritten(url, caplog):
    db = D.ResultsDatabase(url=url)
    try:
        frame = _distances(10)
        assert db.replace_rows(D.CapitalDistance, frame) == 100
        ids = set(db.read_rows(D.CapitalDistance)["id"])
        notes = []
        assert db.replace_rows(D.CapitalDistance, frame, log_fn=notes.append) == 100
        assert set(db.read_rows(D.CapitalDistance)["id"]) == ids  # the same rows, not rewritten
        assert notes and "not rewritten" in notes[0]
        changed = frame.assign(km=frame["km"] + 1.0)
        db.replace_rows(D.CapitalDistance, changed)
        stored = db.read_rows(D.CapitalDistance)
        assert len(stored) == 100
        assert stored["km"].sum() == pytest.approx(changed["km"].sum())
        with db.engine().begin() as conn:  # rows removed behind its back: the hash alone is not trusted
            conn.execute(D.CapitalDistance.__table__.delete().where(D.CapitalDistance.__table__.c.from_iso3 == "C00"))
        db.replace_rows(D.CapitalDistance, changed)
        assert len(db.read_rows(D.CapitalDistance)) == 100
    finally:
        db.dispose()


def test_provenance_recorded_twice_is_stored_once(url):
    db = D.ResultsDatabase(url=url)
    try:
        prov = D.make_provenance("qs_corpus", corpus_sha256="a" * 64)
        db.record_provenance(prov)
        db.record_provenance(D.make_provenance("qs_corpus", corpus_sha256="a" * 64))
        assert db.count(D.Provenance) == 1
    finally:
        db.dispose()


def test_migration_removes_duplicates_left_by_an_earlier_release_and_logs_it(url, caplog):
    engine = sa.create_engine(_with_driver(url))
    M.upgrade(engine, "0004_geography")
    columns = (
        "partition_key",
        "provenance_id",
        "corpus_sha256",
        "iso3",
        "country",
        "capital",
        "lat",
        "lon",
        "in_corpus",
        "is_nationality",  # as 0004 named it (is_home since 0012)
        "n_universities",
        "avail",
    )
    country = sa.table("country", *[sa.column(c) for c in columns])
    row = dict(
        partition_key="",
        provenance_id="p",
        corpus_sha256="c",
        country="X",
        capital="Y",
        lat=1.0,
        lon=2.0,
        in_corpus=True,
        is_nationality=False,
        n_universities=1,
        avail=0.1,
    )
    with engine.begin() as conn:  # two full copies, as two concurrent runs left them
        conn.execute(country.insert(), [dict(row, iso3=iso) for iso in ("AAA", "BBB", "CCC")] * 2)
    with caplog.at_level(logging.WARNING, logger="resources.migrations"):
        M.upgrade(engine)
    with engine.connect() as conn:
        isos = [r[0] for r in conn.execute(sa.text("SELECT iso3 FROM country ORDER BY iso3"))]
        assert M.current(conn) == M.head()
        names = {i["name"] for i in sa.inspect(conn).get_indexes("country")}
    assert isos == ["AAA", "BBB", "CCC"]
    assert "uq_country_natural_key" in names
    assert any("removed 3 duplicate row(s) of country" in r.getMessage() for r in caplog.records)
    now = sa.table("country", *[sa.column("is_home" if c == "is_nationality" else c) for c in columns])
    with pytest.raises(sa.exc.IntegrityError), engine.begin() as conn:  # the key now holds
        conn.execute(
            now.insert(), [{("is_home" if k == "is_nationality" else k): v for k, v in row.items()} | {"iso3": "AAA"}]
        )
    engine.dispose()


# ------------------------------------------------------------------------------------------ leases
def _expire(engine, key: str) -> None:
    with engine.begin() as conn:
        conn.execute(
            PartitionLease.__table__.update()
            .where(PartitionLease.__table__.c.partition_key == key)
            .values(renewed_at=datetime.now(timezone.utc) - timedelta(hours=2), pid=os.getppid())
        )


def test_a_run_that_lost_its_lease_fails_naming_the_run_that_took_it(url):
    db = D.ResultsDatabase(url=url)
    engine = db.engine()
    try:
        claim(engine, ["m|base"], "run-a")  # run A holds the partition, then is paused past the TTL
        _expire(engine, "m|base")
        claim(engine, ["m|base"], "run-b", ttl_s=600)  # run B takes it over ...
        finished = {"run-b": False}  # ... and finishes
        with pytest.raises(LeaseLostError, match=r"run run-a lost its lease: run run-b took the partition over"):
            claim(engine, ["m|base"], "run-a", run_is_active=lambda rid: finished.get(rid))
        frame = pd.DataFrame(
            {
                "partition_key": ["m|base"],
                "provenance_id": ["p"],
                "program_norm": ["x"],
                "tags": ["[]"],
                "source": ["rules"],
                "n_items": [1],
            }
        )
        with pytest.raises(LeaseLostError, match="run-b"):  # its commit is refused too
            db.replace_rows(D.SubjectTag, frame, ["m|base"], run_id="run-a")
        with pytest.raises(LeaseLostError, match="run-b"):
            db.append_rows(D.SubjectTag, frame, run_id="run-a")
        assert db.count(D.SubjectTag) == 0
        db.replace_rows(D.SubjectTag, frame, ["m|base"], run_id="run-b")  # the holder writes
        assert db.count(D.SubjectTag) == 1
        claim(engine, ["m|base"], "run-c", run_is_active=lambda rid: False)  # a new run takes over from B
    finally:
        db.dispose()


def test_an_expired_lease_no_one_took_is_renewed_with_a_warning(url):
    db = D.ResultsDatabase(url=url)
    engine = db.engine()
    try:
        claim(engine, ["m|base"], "run-a")
        _expire(engine, "m|base")
        warnings: list[str] = []
        claim(engine, ["m|base"], "run-a", ttl_s=600, warn=warnings.append)
        assert warnings and "no other run took the partition over" in warnings[0]
        with engine.connect() as conn:
            grants = conn.execute(sa.select(PartitionLeaseGrant.__table__)).mappings().all()
            lease = conn.execute(sa.select(PartitionLease.__table__)).mappings().one()
        assert [g["run_id"] for g in grants] == ["run-a"] and lease["token"] == grants[0]["token"]
    finally:
        db.dispose()


PAUSED_RUN = r"""
import sys, time
from pathlib import Path
import pandas as pd
from resources import database as D
from resources.partition_lease import claim
url, key, go = sys.argv[1], sys.argv[2], Path(sys.argv[3])
db = D.ResultsDatabase(url=url)
claim(db.engine(), [key], "run-paused")
print("CLAIMED", flush=True)
while not go.exists():
    time.sleep(0.1)
try:
    claim(db.engine(), [key], "run-paused")  # the next step of the run, after the pause
    print("RESULT claimed again", flush=True)
except Exception as exc:
    print(f"RESULT {type(exc).__name__}: {exc}", flush=True)
"""

TAKEOVER = r"""
import json, sys
import dagster as dg
from resources import database as D
from tests.helpers.pipeline import ASSETS, DEMO_KEY, DEMO_MODEL, resources
from fairness_assets.defs.partitions import MODEL_PARTITIONS
url, responses = sys.argv[1], sys.argv[2]
instance = dg.DagsterInstance.ephemeral()
instance.add_dynamic_partitions(MODEL_PARTITIONS.name, [DEMO_MODEL])
db = D.ResultsDatabase(url=url)
result = dg.materialize(ASSETS, selection=["qs_corpus", "country_geography", "capital_distances", "profiles",
                        "prompts", "generations"], instance=instance, partition_key=DEMO_KEY,
                        raise_on_error=False, resources=resources(db, responses))
print("RESULT " + json.dumps({"success": result.success, "run_id": result.run_id}), flush=True)
"""


@pytest.mark.postgres
@pytest.mark.slow
def test_a_paused_run_resumed_after_another_took_its_partition_fails_on_postgresql(
    postgres_url, tmp_path, results_home
):
    """Real processes on the real server: run A is stopped (SIGSTOP) past the TTL, run B takes the
    partition over and finishes, A is resumed: A's next step fails naming B."""
    from tests.helpers.pipeline import DEMO_KEY, DEMO_RESPONSES

    env = {**os.environ, "PYTHONPATH": str(ROOT), "FAIRNESS_PARTITION_LEASE_TTL_S": "2"}
    go = tmp_path / "go"
    a = subprocess.Popen(
        [sys.executable, "-c", PAUSED_RUN, postgres_url, DEMO_KEY, str(go)],
        cwd=ROOT,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        assert a.stdout.readline().strip() == "CLAIMED", a.stderr.read()[-3000:]
        os.kill(a.pid, signal.SIGSTOP)
        time.sleep(3)  # past the 2 s TTL
        b = subprocess.run(
            [sys.executable, "-c", TAKEOVER, postgres_url, str(DEMO_RESPONSES)],
            cwd=ROOT,
            env=env,
            capture_output=True,
            text=True,
            timeout=600,
        )
        line = next((ln for ln in b.stdout.splitlines() if ln.startswith("RESULT ")), None)
        assert line, b.stderr[-3000:]
        result_b = json.loads(line[len("RESULT ") :])
        assert result_b["success"], b.stderr[-3000:]
        os.kill(a.pid, signal.SIGCONT)
        go.touch()
        out, err = a.communicate(timeout=120)
    finally:
        if a.poll() is None:
            os.kill(a.pid, signal.SIGCONT)
            a.kill()
    assert (
        f"RESULT LeaseLostError: partition {DEMO_KEY}: run run-paused lost its lease: run {result_b['run_id']}" in out
    ), (out, err[-2000:])


def test_a_long_step_keeps_its_lease_alive_until_its_run_finishes(tmp_path):
    """Between a step's reads and writes its leases are renewed in the background (a third of the
    TTL), so a run of another instance cannot take a partition over from a step that is still
    working; the renewals stop when the run has finished."""
    from resources.partition_lease import keep_alive

    engine = sa.create_engine(f"sqlite:///{tmp_path / 'lease.db'}")
    claim(engine, ["m|base"], "run-long")
    _expire(engine, "m|base")
    done = {"finished": False}
    keep_alive(engine, ["m|base"], "run-long", finished=lambda: done["finished"], ttl_s=0.9)
    time.sleep(1.2)
    with pytest.raises(Exception, match="is being written by run run-long"):  # renewed: not taken over
        claim(engine, ["m|base"], "run-other", ttl_s=0.9)
    done["finished"] = True
    time.sleep(1.0)
    with engine.connect() as conn:
        renewed = conn.execute(sa.select(PartitionLease.__table__.c.renewed_at)).scalar_one()
    time.sleep(1.0)
    with engine.connect() as conn:  # no renewal once the run has finished
        assert conn.execute(sa.select(PartitionLease.__table__.c.renewed_at)).scalar_one() == renewed
    claim(engine, ["m|base"], "run-other", ttl_s=0.9)  # expired now: taken over
