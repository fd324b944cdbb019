"""The audit partitions: model (dynamic: add models without code) x template (the template files).

A model partition can be added in the UI under any name, including one Dagster cannot address
(with ``|``, the multi-partition key separator) or one no source knows. :func:`invalid_models`
says which of the registered model partitions cannot be audited and why; the re-audit schedule
skips them and the ``invalid_partition_alert`` sensor alerts on them, with :func:`delete_hint`
(how to delete one: in the UI, or with a Python one-liner).
"""

from __future__ import annotations

import shlex
import threading
import warnings
from dataclasses import dataclass
from pathlib import Path
from typing import Iterable, Optional

import dagster as dg

from fairness_assets.core.partition import SEPARATOR, PartitionKey
from fairness_assets.core.prompts import load_templates
from resources.settings import TEMPLATES_DIR

MODEL_PARTITIONS = dg.DynamicPartitionsDefinition(name="models")
TEMPLATE_PARTITIONS = dg.StaticPartitionsDefinition(sorted(load_templates(TEMPLATES_DIR)))
AUDIT_PARTITIONS = dg.MultiPartitionsDefinition({"model": MODEL_PARTITIONS, "template": TEMPLATE_PARTITIONS})
# a backfill of many partitions runs as one run (model weights load once); assets read context.partition_keys
SINGLE_RUN = dg.BackfillPolicy.single_run()
# backfill_policy is marked beta in Dagster 1.13; the warning repeats for every asset using it
warnings.filterwarnings("ignore", message=r".*backfill_policy.*", category=dg.BetaWarning)


def model_template_pairs(context) -> list[PartitionKey]:
    """The partitions the run materializes (a PartitionKey unpacks as (model, template))."""
    return [PartitionKey.parse(key) for key in context.partition_keys]


# how to delete a model partition in the UI (Dagster 1.13: the asset page's Materialize button has a
# drop-down, shown for assets partitioned by a dynamic dimension, with "Delete partitions")
UI_DELETE = ("in the UI, open the asset generations (Catalog), click ▾ next to Materialize… (top right) and choose "
             "Delete partitions; in the dialog (Delete models partitions) tick the model and click Delete 1 partition")


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
        parts.append(f"model partition name(s) {piped} contain '|', which separates model and template in partition keys")
    if unknown:
        parts.append(f"model(s) {unknown} are not in {where} (it has: {sorted(known)[:20]}"
                     f"{' ...' if len(known) > 20 else ''})")
    return "; ".join(parts) + f". Add the model to {where}, or {REMOVE_HINT}."


@dataclass(frozen=True)
class KnownModels:
    """The models a partition may name: the configured responses file's when one is set (FAIRNESS_RESPONSES),
    else the model registry's."""

    registry: frozenset
    registry_path: str
    responses: Optional[frozenset] = None     # None: no responses file is configured (FAIRNESS_RESPONSES)
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
            return (f"the model is not in the model registry {self.registry_path} (and no responses file is "
                    "configured: FAIRNESS_RESPONSES)")
        also = " (it is in the model registry, but with a responses file configured the audit imports answers " \
               "from the file only)" if model in self.registry else ""
        return f"the model is not in the responses file {self.responses_path} (FAIRNESS_RESPONSES){also}"


_RESPONSE_MODELS: dict = {}   # (path, mtime_ns, size) -> models named in the file; sensors tick often
_RESPONSE_MODELS_LOCK = threading.Lock()


def responses_file_models(path) -> frozenset:
    """The models of the usable rows of responses file ``path`` (as the generations asset reads it),
    cached while the file is unchanged. An unreadable file raises ResponsesFileError naming it."""
    from fairness_assets.core.responses import ResponsesFileError, response_models

    path = Path(path)
    try:
        stat = path.stat()
    except OSError as exc:
        raise ResponsesFileError(f"{path}: responses file not found (FAIRNESS_RESPONSES): {exc.strerror}") from None
    key = (str(path.resolve()), stat.st_mtime_ns, stat.st_size)
    with _RESPONSE_MODELS_LOCK:
        if key not in _RESPONSE_MODELS:
            models = response_models(path)  # a chunk at a time: the file's rows are never held
            _RESPONSE_MODELS.clear()
            _RESPONSE_MODELS[key] = frozenset(m for m in models if SEPARATOR not in m)
        return _RESPONSE_MODELS[key]


def known_models(audit_grid, generation_source) -> KnownModels:
    """What the configured sources know (the ``audit_grid`` and ``generation_source`` resources): the
    registry raises ConfigError and the responses file ResponsesFileError when they cannot be read."""
    registry = frozenset(audit_grid.model_registry())
    path = generation_source.resolved_path()
    return KnownModels(registry, str(audit_grid.model_registry_path),
                       responses_file_models(path) if path is not None else None, str(path or ""))


def invalid_models(models: Iterable[str], known: KnownModels) -> dict[str, str]:
    """{model partition: why it cannot be audited} for every partition name that contains ``|`` (no
    Dagster partition key can hold it) or that neither the registry nor the responses file has."""
    problems = {}
    for model in sorted(set(models)):
        if SEPARATOR in model:
            problems[model] = (f"the name contains {SEPARATOR!r}, which separates model and template in partition "
                               f"keys: Dagster cannot address its partitions ('{model}{SEPARATOR}base' reads as "
                               f"{len(model.split(SEPARATOR)) + 1} parts)")
        elif not known.knows(model):
            problems[model] = known.missing(model)
    return problems


# Run tag that makes a run a new audit round (set by the re-audit schedule): the generations
# asset appends it to the audit id, so a re-audit samples again instead of resuming the last one.
AUDIT_ROUND_TAG = "fairness/audit_round"


def audit_round(context) -> str:
    """The audit round of this run ('' for an ordinary run)."""
    return str(context.run.tags.get(AUDIT_ROUND_TAG, "") or "").strip()
