"""Run the generations asset with a tiny model (used in-process and as a subprocess to crash)."""

from __future__ import annotations

import sys
from pathlib import Path

import dagster as dg
import yaml

from fairness_assets.defs.generation import assets as gen
from fairness_assets.defs.partitions import MODEL_PARTITIONS
from fairness_assets.defs.reference import assets as ref
from resources import database as D
from resources.llm.resource import LLMResource
from resources.settings import AuditGridResource, GenerationSourceResource, ReferenceDataResource


def write_registry(folder: Path, model_dir: Path, extra: dict | None = None) -> Path:
    reg = {"models": {"tiny": {"source": str(model_dir), "backend": "transformers"}, **(extra or {})}}
    path = folder / "models.yaml"
    path.write_text(yaml.safe_dump(reg))
    return path


def materialize(
    db_url: str, registry: Path, runs: int = 3, batch: int = 2, max_new_tokens: int = 8, model: str = "tiny"
):
    instance = dg.DagsterInstance.ephemeral()
    instance.add_dynamic_partitions(MODEL_PARTITIONS.name, [model])
    database = D.ResultsDatabase(url=db_url)
    return dg.materialize(
        [ref.profiles, ref.prompts, gen.generations],
        instance=instance,
        partition_key=f"{model}|base",
        raise_on_error=False,
        resources={
            "database": database,
            "results_io": D.SQLResultsIOManager(database=database),
            "reference": ReferenceDataResource(),
            "audit_grid": AuditGridResource(
                design="demo", models=[model], runs=runs, model_registry_path=str(registry)
            ),
            "generation_source": GenerationSourceResource(max_new_tokens=max_new_tokens),
            "llm": LLMResource(registry_path=str(registry), device="cpu", batch_size=batch),
        },
    )


if __name__ == "__main__":
    url, registry, runs = sys.argv[1], Path(sys.argv[2]), int(sys.argv[3])
    result = materialize(url, registry, runs=runs, batch=1, max_new_tokens=48)
    sys.exit(0 if result.success else 1)
