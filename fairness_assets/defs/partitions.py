"""The audit partitions: model (dynamic: add models without code) x template (the template files)."""

import warnings

import dagster as dg

from fairness_assets.core.partition import PartitionKey
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

REMOVE_HINT = ("remove a wrong model from the 'models' partitions with "
               "`.venv/bin/python -c \"import dagster as dg; dg.DagsterInstance.get().delete_dynamic_partition('models', 'NAME')\"` "
               "(docs/operations.md)")


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


# Run tag that makes a run a new audit round (set by the re-audit schedule): the generations
# asset appends it to the audit id, so a re-audit samples again instead of resuming the last one.
AUDIT_ROUND_TAG = "fairness/audit_round"


def audit_round(context) -> str:
    """The audit round of this run ('' for an ordinary run)."""
    return str(context.run.tags.get(AUDIT_ROUND_TAG, "") or "").strip()
