"""The audit partitions: model (dynamic: add models without code) x template (the template files)."""

import warnings

import dagster as dg

from fairness_assets.core.prompts import load_templates
from resources.settings import TEMPLATES_DIR

MODEL_PARTITIONS = dg.DynamicPartitionsDefinition(name="models")
TEMPLATE_PARTITIONS = dg.StaticPartitionsDefinition(sorted(load_templates(TEMPLATES_DIR)))
AUDIT_PARTITIONS = dg.MultiPartitionsDefinition({"model": MODEL_PARTITIONS, "template": TEMPLATE_PARTITIONS})
# a backfill of many partitions runs as one run (model weights load once); assets read context.partition_keys
SINGLE_RUN = dg.BackfillPolicy.single_run()
# backfill_policy is marked beta in Dagster 1.13; the warning repeats for every asset using it
warnings.filterwarnings("ignore", message=r".*backfill_policy.*", category=dg.BetaWarning)


def model_template_pairs(context) -> list[tuple[str, str]]:
    """(model, template) of every partition the run materializes."""
    pairs = []
    for key in context.partition_keys:
        dims = key.keys_by_dimension if isinstance(key, dg.MultiPartitionKey) else dict(
            zip(("model", "template"), str(key).split("|"))
        )
        pairs.append((dims["model"], dims["template"]))
    return pairs

# Run tag that makes a run a new audit round (set by the re-audit schedule): the generations
# asset appends it to the audit id, so a re-audit samples again instead of resuming the last one.
AUDIT_ROUND_TAG = "fairness/audit_round"


def audit_round(context) -> str:
    """The audit round of this run ('' for an ordinary run)."""
    return str(context.run.tags.get(AUDIT_ROUND_TAG, "") or "").strip()
