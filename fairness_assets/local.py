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
"""

from __future__ import annotations

import datetime as _dt
import logging
import os
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Callable, Mapping, Optional, Sequence

import pandas as pd

from fairness_assets.core.common.text import trim, user_exception
from resources.settings import PROJECT_ROOT


class UsageError(ValueError):
    """A command line the CLI cannot run (unknown job, unusable --out); printed as one line."""


class RunFailed(RuntimeError):
    """A run of the asset graph failed; the message names the failing steps and their causes."""


@dataclass(frozen=True)
class StepFailure:
    """What failed in a ``score``: which partitions (``what``), which steps, and the one-line cause."""

    what: str  # "partition m|base", "reference data (every partition)", "every partition"
    steps: tuple[str, ...]
    cause: str
    keys: tuple[str, ...] = ()  # the partitions it concerns; () for every partition (reference data, export)

    def line(self) -> str:
        steps = ", ".join(repr(s) for s in self.steps)
        return (
            f"{self.what}: step{'s' if len(self.steps) > 1 else ''} {steps} failed: {self.cause}"
            if self.steps
            else f"{self.what}: {self.cause}"
        )


class ScoreFailed(RunFailed):
    """``score`` wrote what it could and some of it failed: ``failures`` lists what, ``written``
    holds the tables exported all the same, ``log_path`` the full log with the stack traces."""

    def __init__(
        self,
        failures: Sequence[StepFailure],
        written: dict,
        log_path: Path,
        not_scored: Optional[Mapping[str, str]] = None,
    ):
        self.failures, self.written, self.log_path = list(failures), written, log_path
        self.not_scored = dict(not_scored or {})  # partition key -> why this score did not score it
        super().__init__(f"{len(self.failures)} failure(s): " + "; ".join(f.line() for f in self.failures))


# what a Dagster instance the project creates holds (dagster_home(), the tests' and benchmarks' homes):
# no telemetry (an offline tool) and no "Join the Dagster community" dialog (nux) over the first page
MESSAGE_CHARS = 600  # a failure's message on the command line and in summary.md is trimmed to this length

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
    from resources.secrets import quote_userinfo

    for name in ("FAIRNESS_DATABASE_URL", "DAGSTER_PG_URL"):
        if os.environ.get(name):
            os.environ[name] = quote_userinfo(os.environ[name])


def _error_text(error) -> str:
    """The message of a step's error on one line: the first cause below Dagster's own wrappers
    (the user code's exception), without the module path of its class, passwords masked."""
    import re

    from resources.secrets import redact

    chosen = user_exception(error)
    message = re.sub(r"^(?:[A-Za-z_][\w]*\.)+(?=[A-Za-z_]\w*: )", "", chosen.message.strip())
    return redact(trim(redact(message), MESSAGE_CHARS, one_line=True))  # one line (a driver's message may hold several)


def step_failures(result) -> list[tuple[tuple[str, ...], str]]:
    """(steps, one-line cause) per distinct failure of an in-process run ``result`` (its public
    ``all_events``), read from its step failures (the run's failure message, with no steps, when no
    step failed)."""
    by_message: dict[str, list[str]] = {}
    for event in result.all_events:
        if not event.is_step_failure:
            continue
        data = event.step_failure_data
        text = _error_text(data.error) if data is not None and data.error is not None else "(no error recorded)"
        by_message.setdefault(text, []).append(event.step_key or "?")
    out = [(tuple(dict.fromkeys(steps)), text) for text, steps in by_message.items()]
    if not out:
        for event in result.all_events:
            if event.is_run_failure:
                error = getattr(event.event_specific_data, "error", None)
                out.append(
                    (
                        (),
                        _error_text(error) if error is not None else trim(event.message or "run failed", MESSAGE_CHARS),
                    )
                )
    return out


def failure_causes(result) -> list[str]:
    """One line per distinct failure of an in-process run ``result``, from its step failures (the
    run's failure message when no step failed)."""
    lines = []
    for steps, text in step_failures(result):
        if steps:
            names = ", ".join(repr(s) for s in steps)
            lines.append(f"cause: step{'s' if len(steps) > 1 else ''} {names} failed: {text}")
        else:
            lines.append(f"cause: {text}")
    return lines


# ------------------------------------------------------------------------------------ run log
class _ConsoleHandler(logging.Handler):
    """One line per event on stderr: the step, the event and its message; a failure's error as
    its one-line cause (the first line of a multi-line message, '…' marking the rest).
    ``verbose``: the whole message, stack traces included, as Dagster prints it."""

    def __init__(self, verbose: bool):
        super().__init__()
        self.verbose = verbose

    def emit(self, record: logging.LogRecord) -> None:
        from resources.secrets import redact

        try:
            when = _dt.datetime.fromtimestamp(record.created).strftime("%H:%M:%S")
            if self.verbose:
                text = record.getMessage()
            else:
                text = _one_line(record)
            print(f"{when} {record.levelname:<7} {redact(text)}", file=sys.stderr, flush=True)
        except Exception:  # noqa: BLE001 - a log line never fails a run
            self.handleError(record)


def _one_line(record: logging.LogRecord) -> str:
    """``step - EVENT - message`` on one line, with a failure's one-line cause."""
    meta = getattr(record, "dagster_meta", None) or {}
    event = meta.get("dagster_event")
    message = str(meta.get("orig_message", record.getMessage()))
    first, _, rest = message.strip().partition("\n")
    parts = [meta.get("step_key") or meta.get("job_name") or ""]
    if event is not None:
        parts.append(event.event_type.name)  # the name Dagster prints (RUN_START, not its stored PIPELINE_START)
    line = " - ".join(p for p in parts if p)
    line = f"{line} - {first}" if line else first
    if rest.strip():
        line += " …"
    error = getattr(event.event_specific_data, "error", None) if event is not None else None
    if error is not None:
        line += f" cause: {_error_text(error)}"
    return line


class _FileHandler(logging.Handler):
    """Every record in full (a failure's error with its stack traces and causes) appended to
    ``path``, passwords masked; the file is opened per record, so no run leaves it open."""

    def __init__(self, path: Path):
        super().__init__(level=logging.DEBUG)
        self.path = path

    def emit(self, record: logging.LogRecord) -> None:
        from resources.secrets import redact

        try:
            when = _dt.datetime.fromtimestamp(record.created).isoformat(sep=" ", timespec="milliseconds")
            with open(self.path, "a", encoding="utf-8") as f:
                f.write(f"{when} - {record.levelname} - {redact(record.getMessage())}\n")
        except Exception:  # noqa: BLE001
            self.handleError(record)


class RunLog:
    """The loggers of a command's runs: the console gets one compact line per asset step
    (:class:`fairness_assets.console.CompactConsole`; ``verbose``: every event in full at DEBUG and up),
    the file at ``path`` every event in full at DEBUG and up."""

    def __init__(self, path: Path, verbose: bool = False, level: str = "INFO"):
        self.path, self.verbose, self.level = Path(path), verbose, level
        self.path.parent.mkdir(parents=True, exist_ok=True)

    def note(self, text: str) -> None:
        """A line of the command's own in the file (which run starts, what it covers)."""
        from resources.secrets import redact

        with open(self.path, "a", encoding="utf-8") as f:
            f.write(f"{_dt.datetime.now().isoformat(sep=' ', timespec='milliseconds')} - NOTE - {redact(text)}\n")

    def logger_defs(self) -> dict:
        import dagster as dg

        verbose, path = self.verbose, self.path

        @dg.logger(
            config_schema={"log_level": dg.Field(str, is_required=False, default_value="INFO")},
            description="One compact line per asset step on the console (verbose: every event in full), "
            "every event in full in the command's log file.",
        )
        def fairness_console(init_context) -> logging.Logger:
            from resources.secrets import redact

            from .console import CompactConsole

            logger = logging.Logger("fairness-audit", level=logging.DEBUG)
            if verbose:  # Dagster's full event stream, DEBUG events and stack traces included
                console = _ConsoleHandler(True)
                console.setLevel(logging.DEBUG)
            else:
                console = CompactConsole(redact=redact, error_text=_error_text)
            logger.addHandler(console)
            logger.addHandler(_FileHandler(path))
            return logger

        return {"console": fairness_console}

    def run_config(self) -> dict:
        return {"loggers": {"console": {"config": {"log_level": self.level}}}}


def run_job(job_name: str, verbose: bool = False) -> int:
    """Run a job of the code location on the persistent instance, one run per partition of the
    configured grid; prints each asset's row count, each check and where the results are. The
    runs log one line per event (a failed step as its cause); every event in full, stack traces
    included, goes to ``$DAGSTER_HOME/logs/<job>-<time>.log`` (``verbose``: printed too)."""
    home = dagster_home()
    from dagster import DagsterInstance

    from resources.settings import AuditGridResource, load_settings

    from .core.common.partition import PartitionKey
    from .definitions import load_definitions
    from .defs.operations.jobs import JOB_PRESETS
    from .defs.partitions import MODEL_PARTITIONS

    settings = load_settings()  # read once: the definitions and the grid below are built from it
    defs = load_definitions(settings)
    instance = DagsterInstance.get()
    known = sorted(j.name for j in defs.resolve_all_job_defs() if not j.name.startswith("__"))
    if job_name not in known:
        raise UsageError(f"unknown job {job_name!r}; jobs of the code location: {', '.join(known)}")
    stamp = _dt.datetime.now().strftime("%Y%m%d-%H%M%S-%f")
    run_log = RunLog(home / "logs" / f"{job_name}-{stamp}.log", verbose=verbose)  # a known job's name
    job = defs.resolve_job_def(job_name).with_logger_defs(run_log.logger_defs())
    partition_keys: list = [None]
    if job.partitions_def is not None:
        # the grid the job runs, from the settings the definitions were built with (their EnvVars
        # cannot be read outside a run)
        cfg = AuditGridResource(
            preset=JOB_PRESETS.get(job_name) or settings.preset, model_registry_path=settings.model_registry
        ).resolve()
        instance.add_dynamic_partitions(MODEL_PARTITIONS.name, list(cfg.models))
        partition_keys = [str(PartitionKey(m, t)) for m in cfg.models for t in cfg.templates]
    print(f"[fairness-audit] log of the runs, stack traces included: {run_log.path}", flush=True)
    failed = 0
    for key in partition_keys:
        where = f" for partition {key}" if key else ""
        print(f"[fairness-audit] running job {job_name!r}{where} (Dagster instance: {home})", flush=True)
        run_log.note(f"running job {job_name!r}{where}")
        result = job.execute_in_process(
            instance=instance, raise_on_error=False, partition_key=key, run_config=run_log.run_config()
        )
        print("", flush=True)
        if not result.success:
            print(
                f"[fairness-audit] stack traces: {run_log.path}" + ("" if verbose else " (--verbose prints them)"),
                file=sys.stderr,
            )
            print(f"[fairness-audit] job {job_name!r}{where} failed (run id {result.run_id})", file=sys.stderr)
            for line in failure_causes(result):  # last: the cause, not only "step X failed"
                print(f"[fairness-audit] {line}", file=sys.stderr)
            failed += 1
            continue
        print(f"[fairness-audit] job {job_name!r}{where} succeeded (run id {result.run_id})")
        for event in result.get_asset_materialization_events():
            rows = getattr(event.materialization.metadata.get("dagster/row_count"), "value", None)
            counted = f"{rows} row(s)" if rows is not None else "materialized (not a table of rows)"
            print(f"  {event.asset_key.to_user_string():<24} {counted}")
        for check in result.get_asset_check_evaluations():
            status = "pass" if check.passed else f"FAIL ({check.severity.value})"
            observed = getattr(check.metadata.get("observed"), "value", None)
            verdict = getattr(check.metadata.get("verdict"), "value", None)
            said = f"observed {observed}" if observed is not None else f"verdict {verdict}" if verdict else ""
            print(f"  check {check.check_name:<22} {status:<14} {said}".rstrip())
        for event in result.get_asset_materialization_events():
            if event.asset_key.to_user_string() == "audit_report":
                meta = event.materialization.metadata
                report = getattr(meta.get("report"), "value", None)
                print(
                    f"[fairness-audit] audit report: {report} (and report.md beside it); "
                    f"{getattr(meta.get('significant_findings'), 'value', 0)} significant finding(s)"
                )
    if failed:
        return 1
    from resources.database import redact
    from resources.settings import default_database_url, results_dir

    # database.url is an EnvVar (not readable outside a run) when FAIRNESS_DATABASE_URL is set
    print(
        "[fairness-audit] results database: "
        f"{redact(os.environ.get('FAIRNESS_DATABASE_URL') or default_database_url())}"
    )
    print(f"[fairness-audit] results folder:   {results_dir()}")
    print(
        "[fairness-audit] browse the run and the assets with: .venv/bin/fairness-audit ui  (then http://127.0.0.1:3000)"
    )
    return 0


# ------------------------------------------------------------------------------------ score
def output_folder(out: str) -> Path:
    """``--out`` as a folder that can be written, made if missing; UsageError naming the path otherwise."""
    path = Path(out).expanduser()
    if path.exists() and not path.is_dir():
        raise UsageError(f"--out {path} is an existing file, not a folder; give a folder (it is created if missing)")
    try:
        path.mkdir(parents=True, exist_ok=True)
        with tempfile.NamedTemporaryFile(dir=path, prefix=".write-test-"):
            pass
    except OSError as exc:
        raise UsageError(f"--out {path} cannot be written: {exc.strerror or exc}") from None
    return path


def score_settings(
    responses: str,
    corpus_path: str,
    database_url: str,
    workdir: Path,
    staging_dir: str,
    tagger: str = "rules",
    max_items: Optional[int] = None,
):
    """The settings of one ``score``: the environment's (``FAIRNESS_*``), with the command's files,
    tagger, k and its own database, reports folder, home and staging folder in their place. Built
    once and passed on (never written to ``os.environ``): two ``score`` calls in one process, in two
    threads, each run with their own. A bad value raises ``ConfigError`` naming it."""
    from resources.settings import load_settings

    return load_settings(
        responses=responses,
        qs_corpus=corpus_path,
        tagger=tagger,
        database_url=database_url,
        reports_dir=str(workdir / "reports"),
        home=str(workdir / "home"),
        staging_dir=staging_dir,
        **({"max_items": int(max_items)} if max_items is not None else {}),
    )


def resources_from(settings) -> dict:
    """Every resource of the code location configured with the values of ``settings`` themselves
    (``build_resources(settings, env_vars=False)``: no ``EnvVar``, so a run reads nothing from the
    environment), and the ``results_io`` IO manager on its database."""
    from .definitions import build_resources

    return build_resources(settings, env_vars=False)


def partition_boxes(pairs: set[tuple[str, str]], models: list[str], templates: list[str]) -> list[tuple]:
    """The (model, template) ``pairs`` as few rectangles of the partition grid as a simple rule
    gives: a run over a range of this two-dimensional partition set covers the box model range x
    template range, so a box must hold only pairs that exist. Each box is
    ``(first model, last model, first template, last template)`` in the grid's order."""
    runs_by_model: dict[str, list[tuple[str, str]]] = {}
    for m in models:
        mine = [t for t in templates if (m, t) in pairs]
        spans, start, prev = [], None, None
        for t in mine:
            i = templates.index(t)
            if start is None:
                start = prev = i
            elif i == prev + 1:
                prev = i
            else:
                spans.append((templates[start], templates[prev]))
                start = prev = i
        if start is not None:
            spans.append((templates[start], templates[prev]))
        runs_by_model[m] = spans
    boxes: list[tuple] = []
    open_boxes: dict[tuple[str, str], int] = {}  # template span -> index of the box the previous model extends
    for m in models:
        spans = runs_by_model[m]
        extended = {}
        for span in spans:
            i = open_boxes.get(span)
            if i is not None and boxes[i][1] == models[models.index(m) - 1]:
                boxes[i] = (boxes[i][0], m, *span)
                extended[span] = i
            else:
                boxes.append((m, m, *span))
                extended[span] = len(boxes) - 1
        open_boxes = extended
    return boxes


# partitions materialized in one run by `score`: what a run holds in memory is bounded by this, not
# by the number of partitions in the file (issue 19.5: ~0.2 GB per study-size partition)
PARTITIONS_PER_RUN = 6


def bounded_boxes(
    boxes: list[tuple], models: list[str], templates: list[str], most: int = PARTITIONS_PER_RUN
) -> list[tuple]:
    """``boxes`` (as :func:`partition_boxes` gives them) cut so that none holds more than ``most``
    partitions: a box's template span is cut into runs of at most ``most`` templates, then its model
    span into runs of as many models as fit."""
    if most < 1:
        raise ValueError(f"partitions per run must be at least 1, got {most}")
    out: list[tuple] = []
    for m0, m1, t0, t1 in boxes:
        ms = models[models.index(m0) : models.index(m1) + 1]
        ts = templates[templates.index(t0) : templates.index(t1) + 1]
        step_t = min(len(ts), most)
        step_m = max(1, most // step_t)
        for i in range(0, len(ms), step_m):
            for j in range(0, len(ts), step_t):
                mm, tt = ms[i : i + step_m], ts[j : j + step_t]
                out.append((mm[0], mm[-1], tt[0], tt[-1]))
    return out


def score_responses(
    responses: str,
    corpus_path: str,
    out: str,
    tagger: str = "rules",
    rank_column: str = "2024 RANK",
    database_url: str = "",
    max_items: Optional[int] = None,
    log: Callable[[str], None] = print,
    verbose: bool = False,
    require_models: Sequence[str] = (),
) -> Mapping[str, pd.DataFrame]:
    """``fairness-audit score``: materialize the audit's assets for a responses file (answers as
    written, or already split into items) in process and export the tables, the statistics and
    the report to ``out``. Returns the exported tables by name (:class:`export.ExportedTables`:
    each read from its CSV in ``out`` when first asked for).

    A failure does not stop the rest: a partition that an asset fails is left out by the later
    assets of its run while the other partitions go on (defs/isolation.py), a failed run does not
    stop the next box of partitions, the cross-partition assets run on what was scored, every
    stored table is exported, and summary.md lists what failed; then :class:`ScoreFailed` names
    each failure (partition, step, cause). The runs log one line per event; ``out/score.log``
    holds every event in full, stack traces included (``verbose``: printed too).

    Its settings (:func:`score_settings`: the environment's, the arguments in their place) reach its
    resources as values (:func:`resources_from`); nothing is written to ``os.environ``, so calls in
    several threads of one process each run with their own files and database.

    What is exported and reported is this score's own: the partitions its runs scored to the end,
    with the rows of its audit (the file's), read through a scoped view of the database
    (``ResultsDatabase.scope``). A partition another run took over meanwhile (this run paused past the
    lease TTL, the other run scoring the same partition) is listed as not scored, naming that run, and
    none of its rows are exported, summarised or reported as this score's.

    ``require_models``: models the file must hold (``gate``: the baseline and the candidate), checked
    once the file is read, before anything is scored (:class:`UsageError` naming the file's models)."""
    import dagster as dg

    from resources import database as D
    from resources.secrets import quote_userinfo
    from resources.settings import ReferenceDataResource, load_settings

    from . import export
    from .core.common.partition import PartitionKey
    from .core.generation import responses as responses_core
    from .core.reference import corpus as corpus_core
    from .core.reference import geo
    from .core.reference import prompts as prompts_core

    outdir = output_folder(out)  # before any work
    responses, corpus_path = str(Path(responses).expanduser()), str(Path(corpus_path).expanduser())
    # the reference files the runs read (the templates of FAIRNESS_TEMPLATES_DIR, the alias files), with this corpus
    reference_config = load_settings(qs_corpus=corpus_path).resource_config("reference", env_vars=False)
    reference = ReferenceDataResource(**{**reference_config, "rank_column": rank_column})
    # the inputs are read once here so that a bad file is named in one line before any run starts
    corpus_core.read_qs_export(corpus_path, rank_column)
    resolver = geo.CountryResolver(geo.load_aliases(reference.country_aliases_path))
    templates = prompts_core.load_templates(reference.templates_dir)
    staging = tempfile.TemporaryDirectory(prefix="fairness-score-staged-")
    # the file is read once, a chunk at a time, and staged by partition; the runs' generations step
    # reads only its partitions from there (memory: a chunk and a box of partitions, not the file)
    staged = responses_core.stage_responses(
        responses, templates, resolver.iso3, responses_core.staging_folder(staging.name, responses)
    )
    imported = staged.summary()
    imported.rejects.to_csv(outdir / "rejects.csv", index=False)
    log(
        f"responses: {imported.rows_read} row(s) read, {imported.rows_rejected} not usable (see rejects.csv), "
        f"{staged.n_generations} response(s) to score" + (" (already split into items)" if imported.split_items else "")
    )
    pairs = staged.pairs
    if not pairs:
        raise UsageError(
            f"{responses}: no usable response to score ({imported.rows_rejected} row(s) not usable: "
            f"see {outdir / 'rejects.csv'})"
        )
    absent = [m for m in require_models if m not in {m for m, _ in pairs}]
    if absent:
        raise UsageError(
            f"{responses}: no usable answer of model(s) {', '.join(map(repr, absent))}, which the gate compares "
            f"(the file's models with usable answers: {', '.join(sorted({m for m, _ in pairs}))}); nothing was scored"
        )
    audit_id = responses_core.import_audit_id(staged.sha256)  # the audit of this file's answers
    models, template_order = sorted({m for m, _ in pairs}), sorted(templates)
    run_log = RunLog(outdir / "score.log", verbose=verbose)
    run_log.path.write_text("", encoding="utf-8")  # this score's log only
    log(f"log of the runs, stack traces included: {run_log.path}")
    failures: list[StepFailure] = []
    with staging, tempfile.TemporaryDirectory(prefix="fairness-score-") as tmp:
        # userinfo percent-encoded: a password holding '@' reaches the driver whole
        database_url = quote_userinfo(database_url) or f"sqlite:///{Path(tmp) / 'results.db'}"
        # this score's settings, passed to its resources (the environment is read, never changed)
        settings = score_settings(responses, corpus_path, database_url, Path(tmp), staging.name, tagger, max_items)
        from .definitions import load_definitions
        from .defs.operations.jobs import CROSS_PARTITION
        from .defs.partitions import MODEL_PARTITIONS
        from .defs.understanding.assets import QUALITY_CHECKS_TAG

        resources = resources_from(settings)
        loaded = load_definitions(settings)
        assets = list(loaded.assets)  # catalogued with this score's settings (its tagger)
        checks = list(loaded.asset_checks or [])  # the release gate's, when FAIRNESS_GATE_FILE is set
        if rank_column != resources["reference"].rank_column:
            resources["reference"] = resources["reference"].model_copy(update={"rank_column": rank_column})
        instance = dg.DagsterInstance.ephemeral()
        instance.add_dynamic_partitions(MODEL_PARTITIONS.name, models)
        reference_group = dg.AssetSelection.groups("reference")
        per_partition = dg.AssetSelection.all() - reference_group - CROSS_PARTITION
        tags = {QUALITY_CHECKS_TAG: "warn"}

        our_runs: set[str] = set()  # every run of this score

        def run(selection, what: str, resources=resources, **kwargs):
            run_log.note(f"run: {what}")
            result = _materialize(dg, [*assets, *checks], instance, resources, selection, run_log, **kwargs)
            our_runs.add(result.run_id)
            return result

        def failed(result, what: str, keys: tuple[str, ...] = ()) -> None:
            """The failures of a run: each partition that an asset failed (or blocked) in it, from
            the run's partition outcomes (the run goes on without it), then each failed step that
            those do not explain (the run's own failure)."""
            found: list[StepFailure] = []
            explained: set[str] = set()
            for key, asset, status, reason in _partition_failures(database_url, result.run_id):
                explained.add(asset)
                found.append(
                    StepFailure(
                        f"partition {key}", (asset,), reason if status == "failed" else f"{status}: {reason}", (key,)
                    )
                )
            if not result.success:
                for steps, cause in step_failures(result):
                    if not (steps and set(steps) <= explained):
                        found.append(StepFailure(what, steps, cause, keys))
            for failure in found:
                log(f"failed: {failure.line()}")
            failures.extend(found)

        owned: dict[str, str] = {}  # partition key -> audit id: what this score exports and reports as its own
        not_scored: dict[str, str] = {}  # partition key -> why this score did not score it
        stored_cross: dict[str, int] = {}  # rows each cross-partition asset stored under this score's scope
        log("reference data (corpus, countries, distances, profiles, prompts)")
        result = run(reference_group, "reference data", tags=tags)
        failed(result, "reference data (every partition)")
        if result.success:
            boxes = bounded_boxes(partition_boxes(pairs, models, template_order), models, template_order)
            for i, (m0, m1, t0, t1) in enumerate(boxes):
                box = f"partitions {m0}..{m1} x {t0}..{t1}"
                in_box = _box_keys(pairs, models, template_order, (m0, m1, t0, t1))
                log(f"scoring {box} ({i + 1}/{len(boxes)})")
                result = run(
                    per_partition,
                    box,
                    tags={
                        **tags,
                        "dagster/asset_partition_range_start": str(PartitionKey(m0, t0)),
                        "dagster/asset_partition_range_end": str(PartitionKey(m1, t1)),
                    },
                )
                failed(result, box, in_box)  # and on with the next box
            owned, not_scored = _own_partitions(database_url, pairs, our_runs, audit_id)
            for key, reason in not_scored.items():
                if not any(key in f.keys for f in failures):
                    failures.append(StepFailure(f"partition {key}", (), reason, (key,)))
                    log(f"failed: {failures[-1].line()}")
            log("base vs regional and the report, over what was scored")
            # the cross-partition assets see this score's partitions and audit only (a shared database may hold
            # other runs' partitions, or rows of a run that took one of this score's partitions over)
            scoped = D.ResultsDatabase.scoped_to(database_url, owned)
            cross = run(
                CROSS_PARTITION,
                "base vs regional and the report",
                resources={**resources, "database": scoped, "results_io": D.SQLResultsIOManager(database=scoped)},
            )
            failed(cross, "every partition")
            stored_cross = _stored_counts(cross)
        try:
            written = export.export_results(database_url, outdir, log=log, scope=owned)
            failures.extend(_replaced_meanwhile(database_url, owned, stored_cross, log))
        except Exception as exc:  # noqa: BLE001 - the failures are reported below, with this one
            from resources.secrets import redact

            failures.append(StepFailure("export", (), redact(trim(f"{type(exc).__name__}: {exc}", MESSAGE_CHARS))))
            run_log.note(f"export failed: {type(exc).__name__}: {exc}")
            written = {}
    notes = export.notes_table(imported.notes, written.get("answers_left_out", pd.DataFrame()))
    notes.to_csv(outdir / "notes.csv", index=False)
    summary = export.summary_markdown(
        written,
        imported.rows_read,
        imported.rows_rejected,
        corpus_path,
        responses,
        failures=[f.line() for f in failures],
        not_scored=not_scored,
    )
    (outdir / "summary.md").write_text(summary, encoding="utf-8")
    log(summary)
    log(f"tables written to {outdir}")
    tables = export.ExportedTables(
        outdir, [n for n in [*export.EXPORTED, *export.COMPARISON] if (outdir / f"{n}.csv").exists()]
    )
    if failures:
        raise ScoreFailed(failures, tables, run_log.path, not_scored)
    return tables


def _all_keys(pairs: set) -> list[str]:
    """Every partition key of the file's (model, template) ``pairs``, sorted."""
    from .core.common.partition import PartitionKey

    return sorted(str(PartitionKey(m, t)) for m, t in pairs)


def _box_keys(pairs: set, models: list[str], templates: list[str], box: tuple) -> tuple[str, ...]:
    """The partition keys of the file's ``pairs`` inside ``box`` (first model, last model, first
    template, last template), in the grid's order."""
    from .core.common.partition import PartitionKey

    m0, m1, t0, t1 = box
    ms = models[models.index(m0) : models.index(m1) + 1]
    ts = templates[templates.index(t0) : templates.index(t1) + 1]
    return tuple(str(PartitionKey(m, t)) for m in ms for t in ts if (m, t) in pairs)


def _own_partitions(database_url: str, pairs: set, ours: set, audit_id: str) -> tuple[dict[str, str], dict[str, str]]:
    """``(owned, not_scored)``: the partitions of the file whose rows this score stored and still holds
    (``{key: audit id}``; a partition a step failed for keeps what its finished steps stored, listed
    under Failed), and why each other partition is not its own: another run holds its lease now (it was
    taken over while this score was paused or stopped past the lease TTL), or no answer of this audit
    is stored for it (replaced by another run's, or never stored: a step failed first)."""
    from resources import database as D
    from resources.partition_lease import holders

    database = D.ResultsDatabase(url=database_url)
    try:
        keys = _all_keys(pairs)
        held = holders(database.engine(), keys)
        owned, not_scored = {}, {}
        for key in keys:
            holder = held.get(key)
            if holder is not None and holder not in ours:
                not_scored[key] = (
                    f"not scored by this run: taken over by run {holder} (this score paused or stopped past the lease "
                    "TTL, FAIRNESS_PARTITION_LEASE_TTL_S); none of that run's rows are exported or reported as this "
                    "score's"
                )
            elif audit_id in database.existing_values(D.Generation, "audit_id", [key]):
                owned[key] = audit_id
            else:
                not_scored[key] = f"not scored: no answer of this score's audit ({audit_id}) is stored (see Failed)"
    finally:
        database.dispose()
    return owned, not_scored


def _stored_counts(result) -> dict[str, int]:
    """Rows each asset of a run stored (its materializations' ``dagster/row_count``)."""
    out = {}
    for event in result.get_asset_materialization_events():
        rows = getattr(event.materialization.metadata.get("dagster/row_count"), "value", None)
        if rows is not None:
            out[event.asset_key.to_user_string()] = int(rows)
    return out


def _replaced_meanwhile(
    database_url: str, owned: Mapping[str, str], stored: Mapping[str, int], log: Callable[[str], None]
) -> list[StepFailure]:
    """A failure per cross-partition asset whose rows, stored by this score's run under its scope, are no
    longer there after the export (another run replaced the shared table meanwhile): its file then holds
    none of this score's rows, and never the other run's (the export reads this score's scope only)."""
    from resources import database as D

    from .core.common import result_tables

    database = D.ResultsDatabase.scoped_to(database_url, dict(owned))
    found = []
    try:
        for asset in result_tables.CROSS_PARTITION_ASSETS:
            if stored.get(asset, 0) and database.read_rows(D.TABLES[asset], [""]).empty:
                found.append(
                    StepFailure(
                        "every partition",
                        (asset,),
                        f"{asset}: the rows this score stored were replaced by another run before they were exported; "
                        "its files hold none of this score's rows (and none of the other run's)",
                    )
                )
                log(f"failed: {found[-1].line()}")
    finally:
        database.dispose()
    return found


GATE_EXIT_CODES = {"pass": 0, "fail": 1, "inconclusive": 2}  # `fairness-audit gate`; bad input is 2 too


def gate_audits(
    gate_path: str,
    out: str,
    responses: str = "",
    corpus_path: str = "",
    database_url: str = "",
    tagger: str = "rules",
    log: Callable[[str], None] = print,
    verbose: bool = False,
) -> str:
    """``fairness-audit gate``: the release gate of ``gate_path`` (core.statistics.gate) on a candidate and its
    baseline, and the verdict (``pass`` / ``fail`` / ``inconclusive``). With ``responses``, the file
    (both models' answers) is scored first, as ``score`` does, into ``out`` (and ``database_url``
    when given); without it, the audits already stored in ``database_url`` are compared. Writes
    ``out/gate.md`` (the verdict and every line, for CI logs) and ``out/gate.csv``. Both models must be
    in the file, which is checked before anything is scored. A partition of either model that failed
    to score or was taken over by another run, or a failure that concerns every partition, makes the
    gate inconclusive whatever its lines say (exit 2): its lines were not computed from this file's
    answers alone, or not from all of them."""
    from resources import database as D
    from resources.secrets import quote_userinfo
    from resources.settings import ReferenceDataResource, ReportResource, ScoringResource

    from .core.statistics import gate as gate_core
    from .core.statistics import sensitivity as sens
    from .defs.reporting.comparison import _typed, compare_stored, sensitivity_tables
    from .defs.services import scoring_params

    gate = gate_core.load_gate(gate_path)  # a bad gate file is named before any work
    outdir = output_folder(out)
    notes: list[str] = []
    undecided: list[str] = []  # failures that leave the gate undecided, whatever its lines say
    if responses:
        if not corpus_path:
            raise UsageError("gate --responses needs --corpus (the QS export the answers are matched to)")
        try:
            score_responses(
                responses,
                corpus_path,
                str(outdir),
                tagger=tagger,
                database_url=database_url,
                log=log,
                verbose=verbose,
                require_models=(gate.baseline, gate.candidate),
            )
        except ScoreFailed as exc:
            needed = _needed_failures(exc, (gate.baseline, gate.candidate))
            if needed:
                undecided = needed
            notes.append(
                f"{len(exc.failures)} scoring failure(s) (summary.md lists them)"
                + (
                    f"; {len(needed)} of them concern(s) the baseline's or the candidate's partitions or every "
                    "partition, so the gate is inconclusive whatever its lines say"
                    if needed
                    else "; none concerns the baseline's or the candidate's partitions"
                )
            )

        def exported(name: str) -> pd.DataFrame:
            path = outdir / f"{name}.csv"
            return _typed(pd.read_csv(path)) if path.exists() and path.stat().st_size else pd.DataFrame()

        diffs = exported("model_comparison_differences")
        by_setting = exported("sensitivity_comparison_by_setting")
    else:
        if not database_url:
            raise UsageError("gate needs --responses FILE (with --corpus) or --database URL holding both audits")
        database = D.ResultsDatabase(url=quote_userinfo(database_url))
        try:
            settings = ReportResource().as_dict()
            params = scoring_params(ReferenceDataResource(), ScoringResource())
            diffs = compare_stored(database, settings, log=log, params=params)["differences"]
            by_setting = pd.DataFrame()
            if gate.require_robust:  # the comparison re-scored under the sensitivity grid, from the stored items
                by_setting = _typed(
                    sensitivity_tables(database, params, settings, sens.settings_grid(), log=log)[
                        "comparison_by_setting"
                    ]
                )
        finally:
            database.dispose()
    audited = sorted(set(diffs["model_a"]) | set(diffs["model_b"])) if len(diffs) else []
    for model in (gate.baseline, gate.candidate):
        if model not in audited:
            notes.append(f"model {model!r} is not among the audited models compared ({', '.join(audited) or 'none'})")
    if gate.require_robust:
        verdict, table = gate_core.evaluate_robust(gate, diffs, by_setting)
    else:
        verdict, table = gate_core.evaluate(gate, diffs)
    if undecided or (notes and verdict == "pass"):
        verdict = "inconclusive"
    text = gate_core.summary_markdown(gate, verdict, table, notes)
    (outdir / "gate.md").write_text(text, encoding="utf-8")
    table.to_csv(outdir / "gate.csv", index=False)
    log(text)
    log(f"gate verdict: {verdict} (written to {outdir / 'gate.md'})")
    return verdict


def _needed_failures(failed: ScoreFailed, models: Sequence[str]) -> list[str]:
    """The failures of a ``score`` that a gate on ``models`` cannot look past: those of every partition
    (reference data, the cross-partition assets, the export) and those of a partition of one of the
    models, failed or taken over by another run."""
    from .core.common.partition import PartitionKey

    def of_models(keys) -> bool:
        return any(PartitionKey.parse(k).model in models for k in keys)

    lines = [f.line() for f in failed.failures if not f.keys or of_models(f.keys)]
    lines += [f"partition {k}: {why}" for k, why in failed.not_scored.items() if of_models([k])]
    return list(dict.fromkeys(lines))


def _partition_failures(database_url: str, run_id: str) -> list[tuple[str, str, str, str]]:
    """(partition, asset, status, reason) of each partition an asset of run ``run_id`` failed or
    blocked (``partition_outcome``, defs/isolation.py): the first such asset per partition, the
    assets that then skipped it left out. Empty when the database cannot be read (the run's own
    step failures say why)."""
    from resources import database as D
    from resources.secrets import redact

    database = D.ResultsDatabase(url=database_url)
    try:
        outcomes = database.run_outcomes(run_id)
    except Exception:  # noqa: BLE001 - an unusable database fails the run's steps, which are reported
        return []
    finally:
        database.dispose()
    out, seen = [], set()
    for r in outcomes.itertuples(index=False):
        if r.status != "skipped" and r.partition_key not in seen:
            seen.add(r.partition_key)
            out.append((r.partition_key, r.asset, r.status, redact(trim(r.reason, MESSAGE_CHARS, one_line=True))))
    return out


def _materialize(
    dg,
    assets,
    instance,
    resources,
    selection,
    run_log: RunLog,
    tags: Optional[dict] = None,
    partition_key: Optional[str] = None,
):
    """One in-process run of ``selection`` (as ``dagster.materialize``) with the command's loggers."""
    name = "fairness_score"  # the job of a `fairness-audit score` run (its own name, not a Dagster internal one)
    job_defs = dg.Definitions(
        jobs=[dg.define_asset_job(name=name, selection=selection)],
        assets=assets,
        resources=resources,
        loggers=run_log.logger_defs(),
    )
    return job_defs.resolve_job_def(name).execute_in_process(
        run_config=run_log.run_config(),
        instance=instance,
        partition_key=partition_key,
        raise_on_error=False,
        tags=tags or {},
    )


def start_ui(extra: list[str]) -> int:
    """Replace this process with ``dg dev -w workspace.yaml`` (Dagster's recommended way to start the UI:
    ``dagster dev`` warns that it is superseded), its signals reset first, with the reports folder served
    read-only beside it (:func:`start_report_server`).

    A process started in the background by a script inherits SIGINT as ignored, and Dagster maps
    SIGTERM to the SIGINT handler, so a plain ``dagster dev &`` ignores both SIGTERM and Ctrl-C (its
    code server and daemon too). Ignored signals survive ``exec`` and are inherited by children;
    restored defaults are what Dagster's own handlers then build on.
    """
    from resources.settings import ConfigError

    from ._signals import restore_inherited_signals

    restore_inherited_signals()
    home = dagster_home()  # the instance `fairness-audit demo` and `run` use: their runs show in the UI
    from .defs.partitions import prepare_model_partitions

    # the registered models (or those of FAIRNESS_RESPONSES) are partitions before the first page view;
    # the model_partitions_sync sensor keeps them in sync afterwards
    print(f"[fairness-audit] {prepare_model_partitions()}", flush=True)
    try:
        start_report_server(ui_port=_dagster_port(extra))
    except ConfigError as exc:
        print(f"fairness-audit ui: error: {exc}", file=sys.stderr)
        return 2
    print(f"[fairness-audit] Dagster UI on the instance {home}", flush=True)
    # `dg dev`, as Dagster now recommends (`dagster dev` prints a SupersessionWarning pointing to it); given the
    # workspace file, it starts the same webserver, daemon and code server on it
    dg_cli = Path(sys.executable).parent / "dg"
    command = [
        str(dg_cli) if dg_cli.exists() else "dg",
        "dev",
        "-w",
        str(PROJECT_ROOT / "workspace.yaml"),
        *extra,
    ]
    os.chdir(PROJECT_ROOT)
    os.execv(command[0], command) if os.path.isabs(command[0]) else os.execvp(command[0], command)
    return 0  # not reached


def _dagster_port(args: Sequence[str]) -> int:
    """The port ``dg dev`` is given in ``args`` (``-p N``, ``--port N``, ``--port=N``), else its default 3000."""
    for i, arg in enumerate(args):
        value = None
        if arg in ("-p", "--port") and i + 1 < len(args):
            value = args[i + 1]
        elif arg.startswith("--port="):
            value = arg.split("=", 1)[1]
        elif arg.startswith("-p") and arg[2:].isdigit():
            value = arg[2:]
        if value is not None and value.isdigit():
            return int(value)
    return 3000


def start_report_server(
    log: Callable[[str], None] = lambda line: print(line, flush=True), ui_port: Optional[int] = None
) -> Optional[int]:
    """Serve the reports folder read-only on ``127.0.0.1:FAIRNESS_REPORT_PORT`` in a child process
    (:mod:`fairness_assets.report_server`) that stops when this process (``dg dev`` after the
    ``exec``) is gone, on SIGTERM and on Ctrl-C. Returns its pid; None when none is started:
    ``FAIRNESS_REPORT_BASE_URL`` is set (the deployment publishes the folder) or the port is taken
    or cannot be bound (said, and the UI starts all the same). A bad setting, or a report port that
    is the UI's own (``ui_port``), raises ``ConfigError`` naming it."""
    import subprocess

    from resources.settings import ConfigError, ReportResource, load_settings

    from . import report_server

    settings = load_settings()
    report = ReportResource(
        output_dir=settings.reports_dir, port=settings.report_port, base_url=settings.report_base_url
    )
    if settings.report_base_url:
        log(
            f"[fairness-audit] report links point to {report.base()} (FAIRNESS_REPORT_BASE_URL): no report server "
            "started"
        )
        return None
    if ui_port == report.port:
        raise ConfigError(
            f"FAIRNESS_REPORT_PORT={report.port} is the port the Dagster UI is given too: set "
            "FAIRNESS_REPORT_PORT (the report server's port) or the UI's -p to another port"
        )
    folder = report.folder()
    try:
        sock = report_server.listen(report.port)
    except OSError as exc:
        log(
            f"[fairness-audit] the reports are not served: cannot listen on 127.0.0.1:{report.port} "
            f"({exc.strerror or exc}); set FAIRNESS_REPORT_PORT to a free port (the report links of the UI point "
            "to that port)"
        )
        return None
    with sock:
        server = subprocess.Popen(
            [
                sys.executable,
                "-m",
                "fairness_assets.report_server",
                "--folder",
                str(folder),
                "--fd",
                str(sock.fileno()),
                "--parent",
                str(os.getpid()),
            ],
            pass_fds=(sock.fileno(),),
            cwd=PROJECT_ROOT,
            stdin=subprocess.DEVNULL,
        )
    log(
        f"[fairness-audit] reports of {folder} served read-only at {report.base()}/ (FAIRNESS_REPORT_PORT; "
        f"report server pid {server.pid})"
    )
    return server.pid
