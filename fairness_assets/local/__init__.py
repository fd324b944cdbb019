"""Running the code location in this process, for the command line.

- :func:`run_job` runs a job of the code location by name (``fairness-audit demo`` / ``run``);
- :func:`score_responses` is ``fairness-audit score``: it materializes the same assets the UI does
  (reference data, generations imported from the responses file, recommendations, subject tags,
  scores, statistics, figures, drift, base vs regional, the report) on an ephemeral Dagster
  instance and a throw-away SQLite results database (or the one named), then exports the stored
  tables, the statistics and the report to the output folder (:mod:`fairness_assets.export`).

Each command's runs log through :class:`RunLog`: one line per event on the console (a failed step
as its one-line cause) and every event in full, stack traces included, in a log file whose path
is printed (``--verbose`` prints the traces too).

No lineage is written here: only which assets run, for which partitions, with which settings.

Modules, one per command and the pieces they share:

- :mod:`.failures`: the commands' errors and the one-line cause of a failed step;
- :mod:`.runlog`: the loggers of a command's runs (console and log file);
- :mod:`.instance`: the persistent Dagster instance (``dagster_home()``, its ``dagster.yaml``);
- :mod:`.jobs`: ``demo`` and ``run JOB``;
- :mod:`.score`: ``score`` (:func:`score_responses`), step by step;
- :mod:`.boxes`: the partitions of a ``score`` cut into runs;
- :mod:`.outcomes`: what a ``score``'s runs left in the results database;
- :mod:`.gate`: ``gate``;
- :mod:`.ui`: ``ui`` and the report server beside it.

Lazy imports: ``fairness_assets.cli`` imports this package at start, so every command (and
``fairness-audit --help``) pays for what these modules import at their top. Imported inside the
functions that use them instead: the code location (``fairness_assets.definitions``, ``defs/``) and the
results database (``resources.database``, ``resources.partition_lease``: SQLAlchemy and the models) and
the export, about a second each; importing the code location also reads the settings and lists the
templates folder (``defs/partitions.py``), which ``run`` and ``ui`` must do only after
:func:`dagster_home` has set the environment, and ``fairness_assets.definitions`` restores inherited
signal handlers on import (``_signals.py``); and what one command alone needs that costs a noticeable
part of the start (the responses reader and the statistics of ``score`` / ``gate``, the report server's
HTTP modules of ``ui``). Dagster itself is imported at the top: the settings (``resources.settings``,
which the command line needs to start) import it already.
"""

from __future__ import annotations

from .boxes import PARTITIONS_PER_RUN, bounded_boxes, partition_boxes
from .failures import MESSAGE_CHARS, RunFailed, ScoreFailed, StepFailure, UsageError, failure_causes, step_failures
from .gate import GATE_EXIT_CODES, gate_audits
from .instance import EARLIER_INSTANCE_YAMLS, OFFLINE_INSTANCE_YAML, dagster_home
from .jobs import run_job
from .runlog import RunLog
from .score import output_folder, resources_from, score_responses, score_settings
from .ui import start_report_server, start_ui

__all__ = [
    "EARLIER_INSTANCE_YAMLS",
    "GATE_EXIT_CODES",
    "MESSAGE_CHARS",
    "OFFLINE_INSTANCE_YAML",
    "PARTITIONS_PER_RUN",
    "RunFailed",
    "RunLog",
    "ScoreFailed",
    "StepFailure",
    "UsageError",
    "bounded_boxes",
    "dagster_home",
    "failure_causes",
    "gate_audits",
    "output_folder",
    "partition_boxes",
    "resources_from",
    "run_job",
    "score_responses",
    "score_settings",
    "start_report_server",
    "start_ui",
    "step_failures",
]
