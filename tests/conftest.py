"""Shared fixtures: the real QS export from ../shared, temporary results folders, PostgreSQL."""

from __future__ import annotations

import os
import uuid
from pathlib import Path

import pytest

from fairness_assets.local import OFFLINE_INSTANCE_YAML
from tests.helpers import source

# every ast.parse of the worker (pytest's assertion rewriting included) retries CPython 3.11's spurious
# "AST constructor recursion depth mismatch" (tests/helpers/source.py); any other error is raised at once
source.install()

ROOT = Path(__file__).resolve().parents[1]
QS_EXPORT = Path(
    os.environ.get("FAIRNESS_TEST_QS_EXPORT", ROOT.parent / "shared" / "data" / "qs_world_university_rankings_2024.csv")
)
POSTGRES_ADMIN_URL = os.environ.get("FAIRNESS_TEST_POSTGRES_URL", "postgresql://postgres@127.0.0.1:5432/postgres")

os.environ.setdefault("GX_ANALYTICS_ENABLED", "false")
os.environ.setdefault("DAGSTER_DISABLE_TELEMETRY", "1")
# the figures of several partitions drawn in the step's own process: the two test workers keep both cores busy,
# so a pool of drawing processes only adds their start (tests/core/test_figures.py tests the pool itself)
os.environ.setdefault("FAIRNESS_FIGURE_WORKERS", "1")


def threads_per_worker() -> int:
    """The cores of this machine shared among the session's pytest-xdist workers (at least one each)."""
    cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1
    return max(1, cores // int(os.environ.get("PYTEST_XDIST_WORKER_COUNT", "1")))


# In an xdist worker, torch (and OpenBLAS, which falls back to it) gets the worker's share of the cores, in this
# process and every process it starts (the CLI, `transformers serve`, the UI's runs). Without it each of the three
# workers ran the built-in model on both cores; OpenMP threads spin while they wait, and on a 2-core machine the
# three tests that generate with it took 235 s together instead of 120 s (the demo job 224 s, 56 s alone).
# A value the caller set is kept.
if "PYTEST_XDIST_WORKER_COUNT" in os.environ:
    os.environ.setdefault("OMP_NUM_THREADS", str(threads_per_worker()))


@pytest.fixture(autouse=True)
def _the_study_design_active():
    """Each test starts with the study's axes active (core/reference/axes.py): a design a previous test
    made active (a code location loaded with the demo design, a resolved audit grid) does not leak."""
    from fairness_assets.core.reference import axes

    axes.reset()
    yield
    axes.reset()


@pytest.fixture(scope="session")
def qs_export() -> Path:
    if not QS_EXPORT.exists():
        pytest.skip(
            f"the QS 2024 export is not at {QS_EXPORT} (it is never committed); "
            "set FAIRNESS_TEST_QS_EXPORT to a copy to run this test"
        )
    return QS_EXPORT


@pytest.fixture(scope="session")
def worked_example_scored(tmp_path_factory):
    """(export folder, tables) of the worked example (data/examples/worked_example_responses.csv, the demo
    corpus) scored by `score_responses` at its defaults, once per session (tests/helpers/scored.py): for the tests
    that only read what it exports. A test that writes must copy the folder first."""
    from fairness_assets.local import score_responses
    from resources.settings import DATA_DIR, DEMO_CORPUS
    from tests.helpers.scored import scored_once

    def score(out):
        example = DATA_DIR / "examples" / "worked_example_responses.csv"
        return score_responses(str(example), str(DEMO_CORPUS), str(out), log=lambda *_: None)

    return scored_once(tmp_path_factory.getbasetemp(), "worked-example", score)


@pytest.fixture
def results_home(tmp_path, monkeypatch) -> Path:
    """A private FAIRNESS_HOME (SQLite results DB) and DAGSTER_HOME for one test."""
    home = tmp_path / "fairness_home"
    monkeypatch.setenv("FAIRNESS_HOME", str(home))
    dagster_home = tmp_path / "dagster_home"
    dagster_home.mkdir()
    (dagster_home / "dagster.yaml").write_text(OFFLINE_INSTANCE_YAML)
    monkeypatch.setenv("DAGSTER_HOME", str(dagster_home))
    for var in ("FAIRNESS_DATABASE_URL", "FAIRNESS_QS_CORPUS", "FAIRNESS_DESIGN"):
        monkeypatch.delenv(var, raising=False)
    return home


@pytest.fixture
def postgres_databases(request):
    """A factory of fresh databases on the real PostgreSQL server, all dropped afterwards. Only for
    tests marked ``postgres`` (so that ``-m "not postgres"`` deselects every test that needs the
    server): an unmarked test that asks for it fails, naming the marker."""
    if request.node.get_closest_marker("postgres") is None:
        pytest.fail(
            f"{request.node.nodeid} uses the PostgreSQL server but is not marked postgres: add "
            "@pytest.mark.postgres (or pytest.param(..., marks=pytest.mark.postgres) for one parameter)",
            pytrace=False,
        )
    sa = pytest.importorskip("sqlalchemy")
    from resources.database.connect import _with_driver

    admin = sa.create_engine(_with_driver(POSTGRES_ADMIN_URL), isolation_level="AUTOCOMMIT")
    names = []

    def create() -> str:
        name = f"fairness_test_{uuid.uuid4().hex[:10]}"
        try:
            with admin.connect() as conn:
                conn.execute(sa.text(f'CREATE DATABASE "{name}"'))
        except Exception as exc:  # noqa: BLE001
            if os.environ.get("CI"):
                raise RuntimeError(f"PostgreSQL at {POSTGRES_ADMIN_URL} is required in CI: {exc}") from exc
            pytest.skip(f"PostgreSQL at {POSTGRES_ADMIN_URL} is not reachable ({exc}); .ci/run starts it")
        names.append(name)
        return sa.engine.make_url(POSTGRES_ADMIN_URL).set(database=name).render_as_string(hide_password=False)

    yield create
    with admin.connect() as conn:
        for name in names:
            conn.execute(
                sa.text(
                    f"SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = '{name}' "
                    "AND pid <> pg_backend_pid()"
                )
            )
            conn.execute(sa.text(f'DROP DATABASE IF EXISTS "{name}"'))
    admin.dispose()


@pytest.fixture
def postgres_url(postgres_databases):
    """A fresh database on the real PostgreSQL server, dropped afterwards."""
    return postgres_databases()


def pytest_collection_modifyitems(config, items):
    """`slow` (deselect with `-m "not slow"` for the inner loop, README): every end-to-end test
    (subprocesses, servers, browsers, whole audits) and the tests marked one by one (several
    seconds each: a model, a server, a materialized audit)."""
    e2e = Path(__file__).resolve().parent / "e2e"
    for item in items:
        if e2e in Path(str(item.fspath)).resolve().parents:
            item.add_marker(pytest.mark.slow)
    # the longest files first (a stable sort: the order within a file and of the rest is kept): `-n 3 --dist
    # loadfile` hands out whole files in this order, so a long file no longer starts last while the other
    # worker has nothing left to do (the suite's last minutes were one worker alone)
    rank = {(ROOT / name).resolve(): i for i, name in enumerate(LONGEST_FILES)}
    items.sort(key=lambda item: rank.get(Path(str(item.fspath)).resolve(), len(rank)))


ROOT = Path(__file__).resolve().parents[1]
# the files whose tests took longest together, longest first, with their seconds (the sum of their tests' durations in
# one worker of a `-n 3 --dist loadfile` run on a quiet 2-core machine, 2026-12-05; the files under 15 s follow in
# collection order). Only the order matters; refresh it from `--durations=0` or a junit file when it drifts.
LONGEST_FILES = (
    "tests/e2e/test_new_user_journey.py",  # 273 s
    "tests/resources/test_generation_engine.py",  # 221 s
    "tests/defs/test_alert_sensors.py",  # 215 s
    "tests/e2e/test_score_cli.py",  # 180 s
    "tests/e2e/test_cli_demo.py",  # 161 s
    "tests/resources/test_continuous_engine.py",  # 158 s
    "tests/defs/test_llm_tagger_pipeline.py",  # 149 s
    "tests/test_benchmark_scripts.py",  # 139 s
    "tests/resources/test_result_queries.py",  # 121 s
    "tests/e2e/test_ui_browser.py",  # 119 s
    "tests/core/test_figures.py",  # 113 s
    "tests/defs/test_operations.py",  # 111 s
    "tests/defs/test_reporting.py",  # 99 s
    "tests/e2e/test_languages_score.py",  # 90 s
    "tests/e2e/test_lost_lease_export.py",  # 88 s
    "tests/defs/test_quality_recorded.py",  # 78 s
    "tests/e2e/test_gate_cli.py",  # 72 s
    "tests/e2e/test_score_partial.py",  # 68 s
    "tests/e2e/test_report_link_browser.py",  # 68 s
    "tests/e2e/test_concurrent_score.py",  # 61 s
    "tests/e2e/test_docs.py",  # 58 s
    "tests/e2e/test_names_score.py",  # 52 s
    "tests/resources/test_concurrent_writes.py",  # 51 s
    "tests/e2e/test_custom_design.py",  # 50 s
    "tests/defs/test_statistics_behaviour.py",  # 50 s
    "tests/e2e/test_score_graph.py",  # 45 s
    "tests/e2e/test_export_per_partition.py",  # 44 s
    "tests/e2e/test_postgres_deployment.py",  # 41 s
    "tests/e2e/test_ui_signals.py",  # 41 s
    "tests/resources/test_secrets.py",  # 41 s
    "tests/e2e/test_cli_failures.py",  # 40 s
    "tests/e2e/test_ui_design_launch.py",  # 37 s
    "tests/e2e/test_cli_errors.py",  # 36 s
    "tests/e2e/test_webserver.py",  # 35 s
    "tests/e2e/test_celery_executor.py",  # 34 s
    "tests/resources/test_design_attributes.py",  # 34 s
    "tests/defs/test_invalid_partitions.py",  # 32 s
    "tests/defs/test_drift_components.py",  # 31 s
    "tests/e2e/test_score_templates_dir.py",  # 30 s
    "tests/defs/test_report_scorecard.py",  # 29 s
    "tests/defs/test_base_vs_regional_components.py",  # 28 s
    "tests/defs/test_partition_isolation.py",  # 28 s
    "tests/core/test_report_behaviour.py",  # 27 s
    "tests/e2e/test_score_threads.py",  # 27 s
    "tests/resources/test_database.py",  # 26 s
    "tests/core/test_report.py",  # 26 s
    "tests/resources/test_tagger.py",  # 26 s
    "tests/resources/test_openai_streaming.py",  # 24 s
    "tests/resources/test_database_text.py",  # 24 s
    "tests/core/test_responses_streaming.py",  # 22 s
    "tests/resources/test_migrations.py",  # 21 s
    "tests/defs/test_reference_assets.py",  # 20 s
    "tests/resources/test_endpoint_broken_answers.py",  # 17 s
    "tests/resources/test_partition_lease.py",  # 17 s
    "tests/test_report_server.py",  # 16 s
    "tests/core/test_report_pages.py",  # 16 s
)


def pytest_configure(config):
    """`--dist loadfile` hands out whole files; by default pytest-xdist re-sorts them by their number of tests
    (`--loadscope-reorder`), which put the longest files, one or two tests each (the new user's journey, the demo
    job), last, each alone on a worker at the end of the run. The order of :data:`LONGEST_FILES` is kept instead.
    The option exists where pytest-xdist is installed (the dev extra); without it nothing is distributed."""
    if hasattr(config.option, "loadscopereorder"):
        config.option.loadscopereorder = False
