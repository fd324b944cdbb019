"""The persistent Dagster instance of ``fairness-audit demo`` / ``run`` / ``ui``: where it is
(:func:`dagster_home`) and the ``dagster.yaml`` a fresh one gets (:data:`OFFLINE_INSTANCE_YAML`)."""

from __future__ import annotations

import os
from pathlib import Path

from resources.secrets import quote_userinfo
from resources.settings import PROJECT_ROOT

# what a Dagster instance the project creates holds (dagster_home(), the tests' and benchmarks' homes):
# no telemetry (an offline tool) and no "Join the Dagster community" dialog (nux) over the first page
OFFLINE_INSTANCE_YAML = (
    "telemetry:\n  enabled: false\nnux:\n  enabled: false\n"
    # a backfill is one run per partition (defs/partitions.PER_PARTITION): at most two in progress
    # (each holds the code location and, while it generates, a model), and one generations step at a
    # time (its "gpu" pool); raise them here on a larger machine (docs/operations.md, "Backfills")
    "concurrency:\n  runs:\n    max_concurrent_runs: 2\n  pools:\n    default_limit: 1\n"
)
# what fresh instances got before (dagster_home() brings such a file up to date; one edited by hand is kept)
EARLIER_INSTANCE_YAMLS = ("telemetry:\n  enabled: false\n", "telemetry:\n  enabled: false\nnux:\n  enabled: false\n")


def dagster_home() -> Path:
    """The persistent instance of ``fairness-audit demo``/``run``/``ui`` (DAGSTER_HOME, else data/dagster_home)."""
    home = Path(os.environ.get("DAGSTER_HOME") or (PROJECT_ROOT / "data" / "dagster_home"))
    home.mkdir(parents=True, exist_ok=True)
    os.environ["DAGSTER_HOME"] = str(home)
    _quote_database_urls()
    config = home / "dagster.yaml"
    # a fresh instance, as an offline tool should have it: no telemetry, no "Join the Dagster
    # community" dialog over the UI's first page, a run limit for backfills of one run per partition
    if not config.exists() or config.read_text() in EARLIER_INSTANCE_YAMLS:
        config.write_text(OFFLINE_INSTANCE_YAML)
    return home


def _quote_database_urls() -> None:
    """The database URLs of the environment with their userinfo percent-encoded
    (:func:`resources.secrets.quote_userinfo`): a password holding '@' then reaches the driver
    whole, and its tail is never taken for the host (nor printed as one)."""
    for name in ("FAIRNESS_DATABASE_URL", "DAGSTER_PG_URL"):
        if os.environ.get(name):
            os.environ[name] = quote_userinfo(os.environ[name])
