"""The audit partitions: model (dynamic: add models without code) x template (the template files of the
configured folder, ``FAIRNESS_TEMPLATES_DIR``, and the templates of the configured design,
``FAIRNESS_DESIGN``; read when the code location loads: a template added there is a partition once the
code location is reloaded). A run whose design (the launch config's) has a template that is not a
partition is refused, naming the setting that makes it one.

A model partition can be added in the UI under any name, including one Dagster cannot address
(with ``|``, the multi-partition key separator) or one no source knows. :func:`invalid_models`
says which of the registered model partitions cannot be audited and why; the re-audit schedule
skips them and the ``invalid_partition_alert`` sensor alerts on them, with :func:`delete_hint`
(how to delete one: in the UI, or with a Python one-liner).

No one has to add a model by hand: :func:`plan_model_sync` says which models of the source the
audit uses (the registry, or the responses file when FAIRNESS_RESPONSES is set) are not partitions
yet; the ``model_partitions_sync`` sensor adds them every SYNC_INTERVAL_S seconds and
:func:`prepare_model_partitions` before ``fairness-audit ui`` starts. Nothing is ever deleted:
partitions neither source has are reported with :func:`delete_hint`'s instructions.
"""

from __future__ import annotations

import shlex
import threading
import unicodedata
from dataclasses import dataclass
from pathlib import Path
from typing import Iterable, Optional

import dagster as dg

from fairness_assets.core.common.partition import SEPARATOR
from fairness_assets.core.reference.prompts import TemplateError, load_templates
from resources.settings import ConfigError, design_of, load_settings


def template_names() -> list[str]:
    """The templates of the configured folder (``FAIRNESS_TEMPLATES_DIR``, default data/templates) and of the
    configured design (``FAIRNESS_DESIGN``), read when the code location loads; a folder without templates
    or a design that cannot be read raises ConfigError naming it."""
    settings = load_settings()
    folder = settings.templates_dir
    try:
        names = set(load_templates(folder))
    except (OSError, TemplateError) as exc:
        raise ConfigError(f"FAIRNESS_TEMPLATES_DIR={folder!r}: the prompt templates cannot be read: {exc}") from None
    if not names:
        raise ConfigError(f"FAIRNESS_TEMPLATES_DIR={folder!r}: no template (*.yaml) in the folder")
    try:
        names |= set(design_of(settings.design, folder).template_names())
    except ConfigError as exc:
        raise ConfigError(f"FAIRNESS_DESIGN={settings.design!r}: {exc}") from None
    return sorted(names)


def templates_not_partitions(templates) -> list[str]:
    """The templates of a run's design that are not template partitions of this code location."""
    keys = set(TEMPLATE_PARTITIONS.get_partition_keys())
    return [t for t in templates if t not in keys]


def not_partitions_message(design: str, missing: list[str]) -> str:
    return (
        f"design {design!r} has template(s) {missing} that are not template partitions of this code location "
        f"(its partitions are the templates of FAIRNESS_TEMPLATES_DIR and of FAIRNESS_DESIGN): set "
        f"FAIRNESS_DESIGN={design} and reload the code location (or run `fairness-audit ... --design {design}`)"
    )


MODEL_PARTITIONS = dg.DynamicPartitionsDefinition(name="models")
TEMPLATE_PARTITIONS = dg.StaticPartitionsDefinition(template_names())
AUDIT_PARTITIONS = dg.MultiPartitionsDefinition({"model": MODEL_PARTITIONS, "template": TEMPLATE_PARTITIONS})
# a backfill launches one run per partition (issue 32.5): Dagster then records each partition's
# materialization, failure and check results as its own, so the UI's partition states are true.
# That is Dagster's behaviour for an asset without a backfill policy: each run is tagged with its
# partition key (dagster/partition). BackfillPolicy.multi_run(1) would launch one run per partition
# too, but tagged as a range of one partition, and Dagster 1.13 records a check's evaluation in such
# a run without its partition. The runs queue under the instance's run limit and the generations step
# under its "gpu" pool (local.OFFLINE_INSTANCE_YAML, deploy/dagster.yaml); the weights load once per
# partition's run (docs/architecture.md, "One run per partition"). The assets still go through
# context.partition_keys: `fairness-audit score` runs boxes of partitions in one run on an ephemeral instance.
PER_PARTITION = None


# how to delete a model partition in the UI (Dagster 1.13: the asset page's Materialize button has a
# drop-down, shown for assets partitioned by a dynamic dimension, with "Delete partitions")
UI_DELETE = (
    "in the UI, open the asset generations (Catalog), click ▾ next to Materialize… (top right) and choose "
    "Delete partitions; in the dialog (Delete models partitions) tick the model and click Delete 1 partition"
)


def remove_command(name: str) -> str:
    """The shell command that deletes model partition ``name`` (run it with the instance's DAGSTER_HOME)."""
    code = f"import dagster as dg; dg.DagsterInstance.get().delete_dynamic_partition('models', {name!r})"
    # double quotes as documented, unless the name holds a character the shell would expand there
    quoted = f'"{code}"' if not any(c in code for c in '"$`\\!') else shlex.quote(code)
    return f".venv/bin/python -c {quoted}"


def delete_hint(name: str) -> str:
    """Both ways to delete model partition ``name``."""
    return f"{UI_DELETE}; or run `{remove_command(name)}` with the same DAGSTER_HOME (docs/operations.md)"


REMOVE_HINT = "remove a wrong model from the 'models' partitions: " + delete_hint("NAME")


def unusable_models(pairs, known: set[str], where: str) -> str | None:
    """One message naming every model of the run that cannot be audited, and what to do; None if all are fine.

    ``known``: the models the run's source has (the registry when generating, the responses file's
    models when importing); ``where`` names that source in the message.
    """
    models = sorted({m for m, _ in pairs})
    piped = [m for m in models if "|" in m]
    unknown = [m for m in models if m not in known and m not in piped]
    if not piped and not unknown:
        return None
    parts = []
    if piped:
        parts.append(
            f"model partition name(s) {piped} contain '|', which separates model and template in partition keys"
        )
    if unknown:
        parts.append(
            f"model(s) {unknown} are not in {where} (it has: {sorted(known)[:20]}{' ...' if len(known) > 20 else ''})"
        )
    return "; ".join(parts) + f". Add the model to {where}, or {REMOVE_HINT}."


@dataclass(frozen=True)
class KnownModels:
    """The models a partition may name: the configured responses file's when one is set (FAIRNESS_RESPONSES),
    else the model registry's."""

    registry: frozenset
    registry_path: str
    responses: Optional[frozenset] = None  # None: no responses file is configured (FAIRNESS_RESPONSES)
    responses_path: str = ""

    def knows(self, model: str) -> bool:
        """As the generations asset sees it: with a responses file configured it imports from the file
        only (a registered model missing from the file would fail there); else it generates with the
        registry's models."""
        if self.responses is not None:
            return model in self.responses
        return model in self.registry

    def missing(self, model: str) -> str:
        """Why ``model`` is not known, naming the source the generations asset uses."""
        if self.responses is None:
            return (
                f"the model is not in the model registry {self.registry_path} (and no responses file is "
                "configured: FAIRNESS_RESPONSES)"
            )
        also = (
            " (it is in the model registry, but with a responses file configured the audit imports answers "
            "from the file only)"
            if model in self.registry
            else ""
        )
        return f"the model is not in the responses file {self.responses_path} (FAIRNESS_RESPONSES){also}"


_RESPONSE_MODELS: dict = {}  # (path, mtime_ns, size) -> the models named in the file, or its read error
_RESPONSE_MODELS_LOCK = threading.Lock()


def responses_file_model_names(path) -> frozenset:
    """Every model name of the usable rows of responses file ``path`` (as the generations asset reads
    it), also names no partition can hold (with ``|``); read a chunk at a time (the file's rows are
    never held) and cached while the file is unchanged, a read error too (sensors tick often). An
    unreadable file raises ResponsesFileError naming it."""
    from fairness_assets.core.generation.responses import ResponsesFileError, response_models

    path = Path(path)
    try:
        stat = path.stat()
    except OSError as exc:
        raise ResponsesFileError(f"{path}: responses file not found (FAIRNESS_RESPONSES): {exc.strerror}") from None
    key = (str(path.resolve()), stat.st_mtime_ns, stat.st_size)
    with _RESPONSE_MODELS_LOCK:
        if key not in _RESPONSE_MODELS:
            try:
                found = frozenset(response_models(path))
            except ResponsesFileError as exc:
                found = exc
            _RESPONSE_MODELS.clear()
            _RESPONSE_MODELS[key] = found
        found = _RESPONSE_MODELS[key]
    if isinstance(found, Exception):
        raise ResponsesFileError(str(found))
    return found


def responses_file_models(path) -> frozenset:
    """The models of the usable rows of responses file ``path`` that can be partitions (names
    without ``|``), cached while the file is unchanged. An unreadable file raises ResponsesFileError
    naming it."""
    return frozenset(m for m in responses_file_model_names(path) if SEPARATOR not in m)


def known_models(audit_grid, generation_source) -> KnownModels:
    """What the configured sources know (the ``audit_grid`` and ``generation_source`` resources): the
    registry raises ConfigError and the responses file ResponsesFileError when they cannot be read."""
    registry = frozenset(audit_grid.model_registry())
    path = generation_source.resolved_path()
    return KnownModels(
        registry,
        str(audit_grid.model_registry_path),
        responses_file_models(path) if path is not None else None,
        str(path or ""),
    )


def invalid_models(models: Iterable[str], known: KnownModels) -> dict[str, str]:
    """{model partition: why it cannot be audited} for every partition name that contains ``|`` (no
    Dagster partition key can hold it) or that neither the registry nor the responses file has."""
    problems = {}
    for model in sorted(set(models)):
        if SEPARATOR in model:
            problems[model] = (
                f"the name contains {SEPARATOR!r}, which separates model and template in partition "
                f"keys: Dagster cannot address its partitions ('{model}{SEPARATOR}base' reads as "
                f"{len(model.split(SEPARATOR)) + 1} parts)"
            )
        elif not known.knows(model):
            problems[model] = known.missing(model)
    return problems


# ---------------------------------------------------------------------------------------------
# the models of the sources as partitions, without clicks (the model_partitions_sync sensor, and
# `fairness-audit ui` / `demo` before they start)

SYNC_SENSOR = "model_partitions_sync"
SYNC_INTERVAL_S = 30
# `fairness-audit ui` reads a responses file before the UI starts only up to this size (about 7 s
# here, 27 MB/s); a larger one is left to the sensor's first tick, so that the UI starts at once
UI_START_FILE_BYTES = 200 * 1024 * 1024


def partition_name_problem(name: str) -> str | None:
    """Why ``name`` cannot be a model partition; None when it can."""
    if not name.strip():
        return "the name is empty"
    if SEPARATOR in name:
        return (
            f"the name contains {SEPARATOR!r}, which separates model and template in partition keys (Dagster "
            f"could not address its partitions)"
        )
    refused = dagster_refuses(name)
    if refused:
        # Dagster refuses '...' (it marks a range of partitions) and control characters
        bad = (["..."] if "..." in name else []) + sorted({c for c in name if unicodedata.category(c) == "Cc"})
        if not bad:
            return f"Dagster does not allow the name as a partition key ({refused})"
        return (
            f"the name contains {', '.join(map(repr, bad))}, which Dagster does not allow in partition keys "
            "('...' marks a range of partitions, the others are control characters)"
        )
    return None


def dagster_refuses(name: str) -> str | None:
    """Dagster's reason for refusing ``name`` as a partition key (its own check, through a public
    definition); None when it accepts it."""
    try:
        dg.StaticPartitionsDefinition([name])
    except dg.DagsterInvalidDefinitionError as exc:
        return str(exc)
    return None


@dataclass(frozen=True)
class ModelSources:
    """The model names of the registry and of the configured responses file, as read now.

    ``registry`` / ``responses`` is None when that source could not be read (``errors`` says why,
    naming the file) or, for ``responses``, when no file is configured (``responses_path`` empty)
    or it was left unread (``deferred`` says why)."""

    registry: Optional[frozenset]
    registry_path: str
    responses: Optional[frozenset] = None
    responses_path: str = ""
    errors: tuple = ()
    deferred: str = ""

    def source(self) -> str:
        """The source the audit takes its models from, in words."""
        if self.responses_path:
            return f"the responses file {self.responses_path} (FAIRNESS_RESPONSES)"
        return f"the model registry {self.registry_path}"

    def audited(self) -> frozenset:
        """The models of the source the audit uses (partitions.KnownModels): the responses file's when
        one is configured, else the registry's; empty when that source could not be read."""
        found = self.responses if self.responses_path else self.registry
        return found if found is not None else frozenset()

    def known(self) -> Optional[frozenset]:
        """Every name either source has; None when a source could not be read (then no partition can
        be said to have left both)."""
        if self.registry is None or (self.responses_path and self.responses is None):
            return None
        return self.registry | (self.responses or frozenset())


def read_model_sources(audit_grid, generation_source, max_file_bytes: Optional[int] = None) -> ModelSources:
    """The registry's and the responses file's model names (``audit_grid``, ``generation_source``
    resources). Never raises: a source that cannot be read is an error naming the file. With
    ``max_file_bytes``, a larger responses file is not read (``deferred``)."""
    errors = []
    registry_path = str(audit_grid.model_registry_path)
    try:
        registry = frozenset(audit_grid.model_registry())
    except Exception as exc:  # noqa: BLE001 - reported, naming the file: ConfigError, or whatever reading raised
        registry = None
        text = str(exc) or type(exc).__name__
        errors.append(text if registry_path in text else f"model registry {registry_path} cannot be read: {text}")
    path = generation_source.resolved_path()
    responses, deferred = None, ""
    if path is not None:
        size = path.stat().st_size if max_file_bytes is not None and path.is_file() else 0
        if max_file_bytes is not None and size > max_file_bytes:
            deferred = (
                f"the responses file {path} is {size / 2**20:.0f} MiB (over {max_file_bytes / 2**20:.0f} "
                f"MiB): its models are added by the {SYNC_SENSOR} sensor's first tick"
            )
        else:
            try:
                responses = responses_file_model_names(path)
            except Exception as exc:  # noqa: BLE001 - reported, naming the file (ResponsesFileError names it)
                text = f"{type(exc).__name__}: {exc}" if not isinstance(exc, ValueError) else str(exc)
                errors.append(
                    text if str(path) in text else f"responses file {path} (FAIRNESS_RESPONSES) cannot be read: {text}"
                )
    return ModelSources(registry, registry_path, responses, str(path or ""), tuple(errors), deferred)


@dataclass(frozen=True)
class ModelSync:
    """What syncing the 'models' partitions with the sources does: ``add`` the audited source's
    models that are not partitions yet; ``unusable``: names of a source no partition can hold
    ({name: why}; reported, not added); ``vanished``: partitions neither source has (reported, never
    deleted); ``idle``: partitions of registered models the audit does not use now (a responses file
    is configured and lacks them)."""

    sources: ModelSources
    partitions: tuple
    add: tuple
    unusable: dict
    vanished: tuple
    idle: tuple

    def message(self) -> str:
        """One paragraph: what was added, what is reported and how to delete a vanished partition."""
        src, name = self.sources.source(), MODEL_PARTITIONS.name
        parts = []
        if self.add:
            parts.append(
                f"added {len(self.add)} model(s) of {src} to the '{name}' partitions: " + ", ".join(map(repr, self.add))
            )
        elif self.sources.audited() - set(self.unusable):
            parts.append(
                f"every model of {src} is a '{name}' partition ({len(self.sources.audited() - set(self.unusable))})"
            )
        elif not self.sources.errors and not self.sources.deferred:
            parts.append(f"{src} names no model")
        if self.unusable:
            parts.append(
                "not added (no partition can hold the name; rename it in its source): "
                + "; ".join(f"{m!r}: {why}" for m, why in self.unusable.items())
            )
        if self.vanished:
            which = (
                "neither the model registry nor the responses file has"
                if self.sources.responses_path
                else "the model registry does not have"
            )
            parts.append(
                f"{len(self.vanished)} partition(s) that {which}, kept (never deleted here): "
                + ", ".join(map(repr, self.vanished))
                + f". To delete one: {UI_DELETE}; or run "
                + " / ".join(f"`{remove_command(m)}`" for m in self.vanished)
                + " with the same DAGSTER_HOME"
            )
        if self.idle:
            parts.append(
                f"{len(self.idle)} partition(s) of registered models that {src} lacks (kept; runs of them "
                f"fail while the file is configured): " + ", ".join(map(repr, self.idle))
            )
        if self.sources.deferred:
            parts.append(self.sources.deferred)
        for error in self.sources.errors:
            parts.append(f"not read: {error}")
        if self.sources.known() is None and self.partitions:
            parts.append("partitions that left both sources are not looked for until every source can be read")
        return "; ".join(parts) + "."


def plan_model_sync(partitions: Iterable[str], sources: ModelSources) -> ModelSync:
    """What the 'models' partitions need, given the partitions there are and the sources as read."""
    present = sorted(set(partitions))
    have = set(present)
    unusable = {m: why for m in sorted(sources.audited()) if (why := partition_name_problem(m))}
    add = tuple(m for m in sorted(sources.audited()) if m not in have and m not in unusable)
    known = sources.known()
    vanished = tuple(m for m in present if known is not None and m not in known)
    idle = tuple(
        m
        for m in present
        if sources.responses_path
        and sources.responses is not None
        and sources.registry is not None
        and m in sources.registry
        and m not in sources.responses
    )
    return ModelSync(sources, tuple(present), add, unusable, vanished, idle)


def add_model_partitions(instance, audit_grid, generation_source, max_file_bytes: Optional[int] = None) -> ModelSync:
    """Add the audited source's models that are not partitions yet to ``instance`` at once (what the
    sensor requests on its tick); returns what was done and what is reported."""
    plan = plan_model_sync(
        instance.get_dynamic_partitions(MODEL_PARTITIONS.name),
        read_model_sources(audit_grid, generation_source, max_file_bytes),
    )
    if plan.add:
        instance.add_dynamic_partitions(MODEL_PARTITIONS.name, list(plan.add))
    return plan


def prepare_model_partitions() -> str:
    """For ``fairness-audit ui`` (and ``demo``) before they start, with DAGSTER_HOME set: the models
    of the registry (or of FAIRNESS_RESPONSES, when it is set and at most UI_START_FILE_BYTES) added
    to the instance's 'models' partitions, so that the UI's first page already lists them. Returns
    the line to print; never raises (a failure is the line: the sensor then adds them on its tick)."""
    try:
        from resources.settings import AuditGridResource, GenerationSourceResource, load_settings

        settings = load_settings()
        grid = AuditGridResource(model_registry_path=settings.model_registry)
        source = GenerationSourceResource(responses_path=settings.responses)
        with dg.DagsterInstance.get() as instance:
            plan = add_model_partitions(instance, grid, source, max_file_bytes=UI_START_FILE_BYTES)
        return plan.message()
    except Exception as exc:  # noqa: BLE001 - the UI starts anyway; the sensor adds the models on its tick
        return (
            f"the models were not added before the UI starts ({type(exc).__name__}: {exc}); the {SYNC_SENSOR} "
            "sensor adds them on its first tick"
        )


# Run tag that makes a run a new audit round (set by the re-audit schedule): the generations
# asset appends it to the audit id, so a re-audit samples again instead of resuming the last one.
AUDIT_ROUND_TAG = "fairness/audit_round"


def audit_round(context) -> str:
    """The audit round of this run ('' for an ordinary run)."""
    return str(context.run.tags.get(AUDIT_ROUND_TAG, "") or "").strip()
