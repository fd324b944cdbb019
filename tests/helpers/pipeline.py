"""Run the whole audit lineage in process on a responses file (no model), for tests."""

from __future__ import annotations

import json
from pathlib import Path

import dagster as dg

from fairness_assets.defs.generation import assets as gen
from fairness_assets.defs.partitions import MODEL_PARTITIONS
from fairness_assets.defs.reference import assets as ref
from fairness_assets.defs.reporting import assets as reporting
from fairness_assets.defs.reporting import comparison
from fairness_assets.defs.scoring import assets as sco
from fairness_assets.defs.scoring import drift
from fairness_assets.defs.understanding import assets as und
from resources import database as D
from resources.alerts import AlertResource
from resources.llm.resource import LLMResource
from resources.settings import (AuditGridResource, GenerationSourceResource, ParseQualityResource,
                                ReferenceDataResource, ReportResource, ScoringResource)
from resources.tagger import SubjectTaggerResource

ROOT = Path(__file__).resolve().parents[2]
DEMO_RESPONSES = ROOT / "data" / "examples" / "demo_responses.jsonl"
DEMO_MODEL = "qwen2.5-0.5b-demo"
DEMO_KEY = f"{DEMO_MODEL}|base"

ASSETS = dg.load_assets_from_modules([ref, gen, und, sco, drift, reporting, comparison])


def resources(database: D.ResultsDatabase, responses, **overrides) -> dict:
    out = {
        "database": database, "results_io": D.SQLResultsIOManager(database=database),
        "reference": ReferenceDataResource(), "audit_grid": AuditGridResource(),
        "generation_source": GenerationSourceResource(responses_path=str(responses)),
        "subject_tagger": SubjectTaggerResource(), "parse_quality": ParseQualityResource(),
        "scoring": ScoringResource(), "llm": LLMResource(), "alerts": AlertResource(),
        "report_settings": ReportResource(output_dir=str(Path(database.resolved_url().split("///")[-1]).parent
                                                         / "reports") if database.resolved_url().startswith("sqlite")
                                          else ""),
    }
    out.update(overrides)
    return out


def audit(instance, database, responses, key=DEMO_KEY, tags=None, **overrides):
    """Materialize every asset of partition ``key`` (``base_vs_regional`` included)."""
    instance.add_dynamic_partitions(MODEL_PARTITIONS.name, [key.split("|")[0]])
    return dg.materialize(ASSETS, instance=instance, partition_key=key, raise_on_error=False, tags=tags or {},
                          resources=resources(database, responses, **overrides))


def altered_responses(tmp_path, replace: dict[str, str], name="altered.jsonl") -> Path:
    """The demo responses file with some text replaced in every answer (a 'changed model')."""
    rows = [json.loads(line) for line in DEMO_RESPONSES.read_text().splitlines() if line.strip()]
    for row in rows:
        for old, new in replace.items():
            row["response"] = row["response"].replace(old, new)
    path = Path(tmp_path) / name
    path.write_text("\n".join(json.dumps(r) for r in rows) + "\n")
    return path
