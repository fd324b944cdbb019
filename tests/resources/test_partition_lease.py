"""One writer per partition (resources/partition_lease.py): a second run of a partition that a
live run holds fails before reading or writing; stale leases (finished run, dead process, no
renewal within the TTL) are taken over. The end-to-end test starts two runs of one partition at
once, each importing its own responses file, and checks what each one scored."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from datetime import datetime, timedelta, timezone
from pathlib import Path

import pytest
import sqlalchemy as sa

from resources.partition_lease import PartitionBusyError, PartitionLease, claim

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture
def engine(tmp_path):
    return sa.create_engine(f"sqlite:///{tmp_path / 'lease.db'}")


def _held_by_another_live_process(engine):
    with engine.begin() as conn:  # as if run-a ran in the parent process (alive, not this one)
        conn.execute(PartitionLease.__table__.update().values(pid=os.getppid()))


def test_a_live_holder_blocks_a_second_run(engine):
    claim(engine, ["m|base", "m|regional"], "run-a")
    _held_by_another_live_process(engine)
    with pytest.raises(PartitionBusyError, match=r"partition m\|base is being written by run run-a"):
        claim(engine, ["m|base"], "run-b")
    claim(engine, ["m|base", "m|regional"], "run-a")  # the holder renews freely
    claim(engine, ["other|base"], "run-b")  # other partitions are free


def test_finished_run_dead_process_and_expired_lease_are_taken_over(engine):
    claim(engine, ["m|base"], "run-a")
    claim(engine, ["m|base"], "run-b", run_is_active=lambda rid: False if rid == "run-a" else None)  # a finished
    table = PartitionLease.__table__
    dead = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True, text=True)
    with engine.begin() as conn:
        conn.execute(table.update().values(pid=int(dead.stdout)))  # run-b's process is gone
    claim(engine, ["m|base"], "run-c")
    _held_by_another_live_process(engine)
    with engine.begin() as conn:  # run-c: alive, but not renewed for an hour
        conn.execute(table.update().values(renewed_at=datetime.now(timezone.utc) - timedelta(hours=1)))
    with pytest.raises(PartitionBusyError):
        claim(engine, ["m|base"], "run-d", ttl_s=7200)
    claim(engine, ["m|base"], "run-d", ttl_s=600)
    with engine.connect() as conn:
        assert conn.execute(sa.select(table.c.run_id)).scalar_one() == "run-d"


def test_a_known_running_holder_blocks_even_an_old_lease(engine):
    claim(engine, ["m|base"], "run-a")
    _held_by_another_live_process(engine)
    with engine.begin() as conn:
        conn.execute(PartitionLease.__table__.update().values(renewed_at=datetime(2020, 1, 1, tzinfo=timezone.utc)))
    with pytest.raises(PartitionBusyError, match="running in this Dagster instance"):
        claim(engine, ["m|base"], "run-b", run_is_active=lambda rid: True, ttl_s=1)


RUNNER = (
    r"""
import json, sys
import dagster as dg
from resources import database as D
from tests.helpers.pipeline import ASSETS, DEMO_KEY, DEMO_MODEL, resources
from fairness_assets.defs.partitions import MODEL_PARTITIONS
url, responses = sys.argv[1], sys.argv[2]
instance = dg.DagsterInstance.ephemeral()
instance.add_dynamic_partitions(MODEL_PARTITIONS.name, [DEMO_MODEL])
db = D.ResultsDatabase(url=url)
result = dg.materialize(ASSETS, selection=["qs_corpus", "country_geography", "capital_distances","""
    r""" "profiles", "prompts", "generations", "recommendations"], instance=instance, partition_key=DEMO_KEY,
                        raise_on_error=False, resources=resources(db, responses))
out = {"success": result.success, "errors": []}
if result.success:
    recs = result.output_for_node("recommendations")
    out["universities"] = sorted(set(recs["university_text"].dropna()))
else:
    for ev in result.all_events:
        if ev.is_step_failure:
            err = ev.step_failure_data.error
            while err.cause is not None:
                err = err.cause
            out["errors"].append(err.message)
print("RESULT " + json.dumps(out))
"""
)


def _start(url, responses, env):
    return subprocess.Popen(
        [sys.executable, "-c", RUNNER, url, str(responses)],
        cwd=ROOT,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


@pytest.mark.slow
def test_two_runs_of_one_partition_at_once_each_score_their_own_file(tmp_path, results_home):
    from tests.helpers.pipeline import DEMO_RESPONSES, altered_responses

    file_a = DEMO_RESPONSES
    file_b = altered_responses(tmp_path, {"University": "Universitas"}, name="b.jsonl")
    url = f"sqlite:///{tmp_path / 'shared.db'}"
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    procs = [_start(url, file_a, env), _start(url, file_b, env)]
    outs = []
    for p in procs:
        stdout, stderr = p.communicate(timeout=600)
        line = next((ln for ln in stdout.splitlines() if ln.startswith("RESULT ")), None)
        assert line, stderr[-3000:]
        outs.append(json.loads(line[len("RESULT ") :]))
    a, b = outs
    assert a["success"] or b["success"], (a, b)
    for out, own, other in ((a, "University", "Universitas"), (b, "Universitas", "University ")):
        if out["success"]:  # a run that succeeded scored its own answers only
            names = " ".join(out["universities"])
            assert own in names and other not in names, out["universities"][:10]
        else:  # a run that was refused says which run holds the partition
            assert any("is being written by run" in e for e in out["errors"]), out["errors"]


def test_in_process_runs_one_after_the_other_and_side_by_side(engine):
    import threading

    claim(engine, ["m|base"], "run-a")
    claim(engine, ["m|base"], "run-b")  # the same thread: run-a is over (one run at a time per thread)
    errors = []

    def other_thread():
        try:
            claim(engine, ["m|base"], "run-c")
        except PartitionBusyError as exc:
            errors.append(exc)

    holder = threading.Event()
    release = threading.Event()

    def hold():
        claim(engine, ["m|other"], "run-d")
        holder.set()
        release.wait(30)

    t = threading.Thread(target=hold)
    t.start()
    holder.wait(30)
    with pytest.raises(PartitionBusyError):  # run-d's thread is alive: a run side by side in this process
        claim(engine, ["m|other"], "run-e")
    release.set()
    t.join()
    claim(engine, ["m|other"], "run-e")  # its thread ended
    t2 = threading.Thread(target=other_thread)
    t2.start()
    t2.join()
    assert len(errors) == 1  # run-b's thread (this one) is alive while another thread claims


@pytest.mark.postgres
def test_the_lease_works_on_postgresql(postgres_url):
    """Thread identifiers exceed PostgreSQL's INTEGER: the column is a BIGINT."""
    engine = sa.create_engine(postgres_url.replace("postgresql://", "postgresql+psycopg2://", 1))
    claim(engine, ["m|base"], "run-a")
    _held_by_another_live_process(engine)
    with pytest.raises(PartitionBusyError):
        claim(engine, ["m|base"], "run-b")
    engine.dispose()
