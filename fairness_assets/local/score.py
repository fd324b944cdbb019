"""``fairness-audit score``: the audit's assets materialized in this process for a responses file, on
an ephemeral Dagster instance and a throw-away SQLite results database (or the one named), the stored
tables, the statistics and the report exported to the output folder (:mod:`fairness_assets.export`).

:func:`score_responses` runs its steps in order: the inputs checked (``--out``, the corpus, the
templates), the file staged by partition, the reference data run, one run per box of partitions
(:mod:`.boxes`), the partitions the score still holds as its own (:mod:`.outcomes`), the
cross-partition assets over them, the export and the summary; each run's failures are collected on
the way (:class:`_ScoreRuns`) and raised at the end as :class:`ScoreFailed`.
"""

from __future__ import annotations

import os
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable, Mapping, Optional, Sequence

import dagster as dg
import pandas as pd

from resources.secrets import quote_userinfo, redact
from resources.settings import ReferenceDataResource, design_of, load_settings

from ..core.common.partition import PartitionKey
from ..core.common.text import trim
from ..core.reference import axes, geo
from ..core.reference import comparisons as comparisons_core
from ..core.reference import corpus as corpus_core
from ..core.reference import prompts as prompts_core
from .boxes import _box_keys, bounded_boxes, partition_boxes
from .failures import MESSAGE_CHARS, ScoreFailed, StepFailure, UsageError, step_failures
from .outcomes import _own_partitions, _partition_failures, _replaced_meanwhile, _stored_counts
from .runlog import RunLog


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
    design: str = "",
):
    """The settings of one ``score``: the environment's (``FAIRNESS_*``), with the command's files,
    tagger, k and its own database, reports folder, home and staging folder in their place. Built
    once and passed on (never written to ``os.environ``): two ``score`` calls in one process, in two
    threads, each run with their own. A bad value raises ``ConfigError`` naming it."""
    return load_settings(
        responses=responses,
        qs_corpus=corpus_path,
        tagger=tagger,
        database_url=database_url,
        reports_dir=str(workdir / "reports"),
        home=str(workdir / "home"),
        staging_dir=staging_dir,
        **({"max_items": int(max_items)} if max_items is not None else {}),
        **({"design": design} if design else {}),
    )


def resources_from(settings) -> dict:
    """Every resource of the code location configured with the values of ``settings`` themselves
    (``build_resources(settings, env_vars=False)``: no ``EnvVar``, so a run reads nothing from the
    environment), and the ``results_io`` IO manager on its database."""
    # lazy: the code location (see the package docstring)
    from ..definitions import build_resources

    return build_resources(settings, env_vars=False)


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
    design: str = "",
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
    # lazy: the responses reader, for `score` and `gate` alone (see the package docstring)
    from ..core.generation import responses as responses_core

    outdir = output_folder(out)  # before any work
    responses, corpus_path = str(Path(responses).expanduser()), str(Path(corpus_path).expanduser())
    # the design: --design, else FAIRNESS_DESIGN where set; else the study's (its axes take every value of a
    # study-shaped file; the demo design has fewer), with the template files of FAIRNESS_TEMPLATES_DIR
    design = design or os.environ.get("FAIRNESS_DESIGN", "")
    staging = tempfile.TemporaryDirectory(prefix="fairness-score-staged-")
    design, resolver, templates = _read_reference(corpus_path, rank_column, design, staging.name)
    staged, imported = _stage(responses, templates, resolver, staging.name, outdir, log)
    pairs = staged.pairs
    _check_pairs(responses, pairs, imported.rows_rejected, outdir, require_models)
    audit_id = responses_core.import_audit_id(staged.sha256)  # the audit of this file's answers
    # the boxes are ranges of the code location's template partitions, in their order (every design's)
    from ..defs.partitions import TEMPLATE_PARTITIONS

    models, template_order = sorted({m for m, _ in pairs}), list(TEMPLATE_PARTITIONS.get_partition_keys())
    run_log = RunLog(outdir / "score.log", verbose=verbose)
    run_log.path.write_text("", encoding="utf-8")  # this score's log only
    log(f"log of the runs, stack traces included: {run_log.path}")
    with staging, tempfile.TemporaryDirectory(prefix="fairness-score-") as tmp:
        # userinfo percent-encoded: a password holding '@' reaches the driver whole
        database_url = quote_userinfo(database_url) or f"sqlite:///{Path(tmp) / 'results.db'}"
        # this score's settings, passed to its resources (the environment is read, never changed)
        settings = score_settings(
            responses, corpus_path, database_url, Path(tmp), staging.name, tagger, max_items, design
        )
        runs = _ScoreRuns.on_ephemeral_instance(settings, database_url, rank_column, models, run_log, log)
        owned: dict[str, str] = {}  # partition key -> audit id: what this score exports and reports as its own
        not_scored: dict[str, str] = {}  # partition key -> why this score did not score it
        stored_cross: dict[str, int] = {}  # rows each cross-partition asset stored under this score's scope
        if _score_reference(runs):
            _score_boxes(runs, pairs, models, template_order)
            owned, not_scored = _own_partitions_or_failed(runs, pairs, audit_id)
            stored_cross = _score_cross_partition(runs, owned)
        written = _export(runs, outdir, owned, stored_cross)
    tables = _write_summary(outdir, imported, written, corpus_path, responses, runs.failures, not_scored, log)
    if runs.failures:
        raise ScoreFailed(runs.failures, tables, run_log.path, not_scored)
    return tables


def _read_reference(corpus_path: str, rank_column: str, design: str = "", staging_dir: str = ""):
    """``(design, resolver, templates)``: the design the runs read (``design``; the study's where none is
    given, :func:`_study_design`), the country resolver and the templates the file is staged with (the
    template files and the design's templates; the design's axes made active in this thread), the corpus
    read once so that a bad file is named in one line before any run starts."""
    # the reference files the runs read (the templates of FAIRNESS_TEMPLATES_DIR, the alias files), with this corpus
    reference_config = load_settings(qs_corpus=corpus_path).resource_config("reference", env_vars=False)
    reference = ReferenceDataResource(**{**reference_config, "rank_column": rank_column})
    # the inputs are read once here so that a bad file is named in one line before any run starts
    corpus_core.read_qs_export(corpus_path, rank_column)
    resolver = geo.CountryResolver(geo.load_aliases(reference.country_aliases_path))
    if not design:
        design = _study_design(reference.templates_dir, staging_dir)
    chosen = design_of(design, reference.templates_dir)
    from ..defs.partitions import not_partitions_message, templates_not_partitions

    missing = templates_not_partitions(chosen.template_names())
    if missing:
        raise UsageError(not_partitions_message(design, missing))
    axes.use_design(chosen)  # the responses file's axis columns are the design's
    templates = prompts_core.audit_templates(reference.templates_dir)  # the files that fit, and the design's
    return design, resolver, templates


def _study_design(templates_dir: str, staging_dir: str) -> str:
    """The design of a score given none: ``study``, whose templates are files of the configured folder
    (FAIRNESS_TEMPLATES_DIR). Where that folder lacks some of them (a user's own folder), the study's axes
    and grid with the folder's template files that fit them (its comparisons where both templates are
    there), written to ``staging_dir`` so that the runs read the same design."""
    from resources.settings import TEMPLATES_DIR, ConfigError

    try:
        design_of("study", templates_dir)
        return "study"
    except ConfigError:
        if not staging_dir:
            raise
    study = design_of("study", TEMPLATES_DIR)  # the axes the folder's files are checked against
    axes.use_design(study)
    present = list(prompts_core.load_templates(templates_dir))
    if not present:
        raise UsageError(f"{templates_dir}: no template file fits the study's axes (FAIRNESS_TEMPLATES_DIR)")
    path = Path(staging_dir) / "study.yaml"
    path.write_text(
        comparisons_core.restricted_text(Path(study.path).read_text(encoding="utf-8"), present), encoding="utf-8"
    )
    return str(path)


def _stage(responses: str, templates, resolver, staging_dir: str, outdir: Path, log: Callable[[str], None]):
    """``(staged, its import summary)``: the responses file staged by partition in ``staging_dir``, its
    unusable rows written to ``outdir/rejects.csv``, what was read said in one line."""
    # lazy: the responses reader, for `score` and `gate` alone (see the package docstring)
    from ..core.generation import responses as responses_core

    # the file is read once, a chunk at a time, and staged by partition; the runs' generations step
    # reads only its partitions from there (memory: a chunk and a box of partitions, not the file)
    staged = responses_core.stage_responses(
        responses, templates, resolver.iso3, responses_core.staging_folder(staging_dir, responses)
    )
    imported = staged.summary()
    imported.rejects.to_csv(outdir / "rejects.csv", index=False)
    log(
        f"responses: {imported.rows_read} row(s) read, {imported.rows_rejected} not usable (see rejects.csv), "
        f"{staged.n_generations} response(s) to score" + (" (already split into items)" if imported.split_items else "")
    )
    return staged, imported


def _check_pairs(responses: str, pairs: set, rows_rejected: int, outdir: Path, require_models: Sequence[str]) -> None:
    """UsageError when the file holds no usable response, or none of a model the command requires."""
    if not pairs:
        raise UsageError(
            f"{responses}: no usable response to score ({rows_rejected} row(s) not usable: "
            f"see {outdir / 'rejects.csv'})"
        )
    absent = [m for m in require_models if m not in {m for m, _ in pairs}]
    if absent:
        raise UsageError(
            f"{responses}: no usable answer of model(s) {', '.join(map(repr, absent))}, which the gate compares "
            f"(the file's models with usable answers: {', '.join(sorted({m for m, _ in pairs}))}); nothing was scored"
        )


@dataclass
class _ScoreRuns:
    """The in-process runs of one ``score`` on its ephemeral instance: the assets and checks they
    materialize, with which resources and selections, the id of every run, and the failures found so far."""

    assets_and_checks: list
    instance: dg.DagsterInstance
    resources: dict
    run_log: RunLog
    database_url: str
    log: Callable[[str], None]
    reference: dg.AssetSelection
    per_partition: dg.AssetSelection
    cross_partition: dg.AssetSelection
    tags: dict
    ours: set[str] = field(default_factory=set)  # every run of this score
    failures: list[StepFailure] = field(default_factory=list)

    @classmethod
    def on_ephemeral_instance(
        cls, settings, database_url: str, rank_column: str, models: list[str], run_log: RunLog, log
    ) -> _ScoreRuns:
        """The runs of ``settings``' code location on a fresh ephemeral instance holding ``models`` as partitions."""
        # lazy: the code location (see the package docstring)
        from ..definitions import load_definitions
        from ..defs.operations.jobs import CROSS_PARTITION
        from ..defs.partitions import MODEL_PARTITIONS
        from ..defs.understanding.assets import QUALITY_CHECKS_TAG

        resources = resources_from(settings)
        loaded = load_definitions(settings)
        assets = list(loaded.assets)  # catalogued with this score's settings (its tagger)
        checks = list(loaded.asset_checks or [])  # the release gate's, when FAIRNESS_GATE_FILE is set
        if rank_column != resources["reference"].rank_column:
            resources["reference"] = resources["reference"].model_copy(update={"rank_column": rank_column})
        instance = dg.DagsterInstance.ephemeral()
        instance.add_dynamic_partitions(MODEL_PARTITIONS.name, models)
        reference_group = dg.AssetSelection.groups("reference")
        return cls(
            assets_and_checks=[*assets, *checks],
            instance=instance,
            resources=resources,
            run_log=run_log,
            database_url=database_url,
            log=log,
            reference=reference_group,
            per_partition=dg.AssetSelection.all() - reference_group - CROSS_PARTITION,
            cross_partition=CROSS_PARTITION,
            tags={QUALITY_CHECKS_TAG: "warn"},
        )

    def run(self, selection, what: str, resources: Optional[dict] = None, **kwargs):
        """One run of ``selection`` (``what`` names it in the log), on this score's resources unless given."""
        self.run_log.note(f"run: {what}")
        resources = self.resources if resources is None else resources
        result = _materialize(self.assets_and_checks, self.instance, resources, selection, self.run_log, **kwargs)
        self.ours.add(result.run_id)
        return result

    def failed(self, result, what: str, keys: tuple[str, ...] = ()) -> None:
        """The failures of a run: each partition that an asset failed (or blocked) in it, from
        the run's partition outcomes (the run goes on without it), then each failed step that
        those do not explain (the run's own failure)."""
        found: list[StepFailure] = []
        explained: set[str] = set()
        for key, asset, status, reason in _partition_failures(self.database_url, result.run_id):
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
            self.log(f"failed: {failure.line()}")
        self.failures.extend(found)


def _score_reference(runs: _ScoreRuns) -> bool:
    """The run of the reference data; whether it succeeded (the partitions need it)."""
    runs.log("reference data (corpus, countries, distances, profiles, prompts)")
    result = runs.run(runs.reference, "reference data", tags=runs.tags)
    runs.failed(result, "reference data (every partition)")
    return result.success


def _score_boxes(runs: _ScoreRuns, pairs: set, models: list[str], template_order: list[str]) -> None:
    """One run per box of partitions (:func:`bounded_boxes`); a failed run does not stop the next box."""
    boxes = bounded_boxes(partition_boxes(pairs, models, template_order), models, template_order)
    for i, (m0, m1, t0, t1) in enumerate(boxes):
        box = f"partitions {m0}..{m1} x {t0}..{t1}"
        in_box = _box_keys(pairs, models, template_order, (m0, m1, t0, t1))
        runs.log(f"scoring {box} ({i + 1}/{len(boxes)})")
        result = runs.run(
            runs.per_partition,
            box,
            tags={
                **runs.tags,
                "dagster/asset_partition_range_start": str(PartitionKey(m0, t0)),
                "dagster/asset_partition_range_end": str(PartitionKey(m1, t1)),
            },
        )
        runs.failed(result, box, in_box)  # and on with the next box


def _own_partitions_or_failed(runs: _ScoreRuns, pairs: set, audit_id: str) -> tuple[dict[str, str], dict[str, str]]:
    """``(owned, not_scored)`` (:func:`_own_partitions`); a partition not scored that no failure names yet
    is a failure of its own."""
    owned, not_scored = _own_partitions(runs.database_url, pairs, runs.ours, audit_id)
    for key, reason in not_scored.items():
        if not any(key in f.keys for f in runs.failures):
            runs.failures.append(StepFailure(f"partition {key}", (), reason, (key,)))
            runs.log(f"failed: {runs.failures[-1].line()}")
    return owned, not_scored


def _score_cross_partition(runs: _ScoreRuns, owned: dict[str, str]) -> dict[str, int]:
    """The run of the cross-partition assets over what was scored; the rows each of them stored."""
    # lazy: the results database (see the package docstring)
    from resources import database as D

    runs.log("base vs regional and the report, over what was scored")
    # the cross-partition assets see this score's partitions and audit only (a shared database may hold
    # other runs' partitions, or rows of a run that took one of this score's partitions over)
    scoped = D.ResultsDatabase.scoped_to(runs.database_url, owned)
    cross = runs.run(
        runs.cross_partition,
        "base vs regional and the report",
        resources={**runs.resources, "database": scoped, "results_io": D.SQLResultsIOManager(database=scoped)},
    )
    runs.failed(cross, "every partition")
    return _stored_counts(cross)


def _export(runs: _ScoreRuns, outdir: Path, owned: dict[str, str], stored_cross: dict[str, int]) -> dict:
    """Every stored table of this score exported to ``outdir`` (``{name: frame}``); a failed export is a
    failure, with nothing written."""
    # lazy: the export reads the results database (see the package docstring)
    from .. import export

    try:
        written = export.export_results(runs.database_url, outdir, log=runs.log, scope=owned)
        runs.failures.extend(_replaced_meanwhile(runs.database_url, owned, stored_cross, runs.log))
    except Exception as exc:  # noqa: BLE001 - the failures are reported below, with this one
        runs.failures.append(StepFailure("export", (), redact(trim(f"{type(exc).__name__}: {exc}", MESSAGE_CHARS))))
        runs.run_log.note(f"export failed: {type(exc).__name__}: {exc}")
        written = {}
    return written


def _write_summary(
    outdir: Path,
    imported,
    written: dict,
    corpus_path: str,
    responses: str,
    failures: Sequence[StepFailure],
    not_scored: Mapping[str, str],
    log: Callable[[str], None],
):
    """``notes.csv`` and ``summary.md`` in ``outdir`` (the summary logged too); the exported tables by name."""
    # lazy: the export reads the results database (see the package docstring)
    from .. import export

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
    return export.ExportedTables(
        outdir, [n for n in [*export.EXPORTED, *export.COMPARISON] if (outdir / f"{n}.csv").exists()]
    )


def _materialize(
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
