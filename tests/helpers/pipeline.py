"""Run the whole audit lineage in process on a responses file (no model), for tests: the assets of
the code location as it loads (``fairness_assets.definitions``: every module under defs/, none
listed here), with resources of the test's own (its results database, responses file and reports
folder)."""

from __future__ import annotations

import json
from pathlib import Path

import dagster as dg

from fairness_assets.core.common.partition import PartitionKey
from fairness_assets.definitions import RESOURCE_CLASSES, defs
from fairness_assets.defs.partitions import MODEL_PARTITIONS
from resources import database as D
from resources.settings import GenerationSourceResource, ReportResource

ROOT = Path(__file__).resolve().parents[2]
DEMO_RESPONSES = ROOT / "data" / "examples" / "demo_responses.jsonl"
DEMO_MODEL = "qwen2.5-0.5b-demo"
DEMO_KEY = str(PartitionKey(DEMO_MODEL, "base"))

ASSETS = list(defs().assets)  # every asset of the code location, catalogued as the UI shows it


def resources(database: D.ResultsDatabase, responses, **overrides) -> dict:
    """Every resource of the code location (defs/resources.py) at its defaults, except: the results
    database ``database`` (and its IO manager), the responses file ``responses``, and the reports
    folder (beside a SQLite database; for PostgreSQL the default); ``overrides`` replace any."""
    out = {key: cls() for key, cls in RESOURCE_CLASSES.items() if key != "database"}
    url = database.resolved_url()
    out.update(
        {
            "database": database,
            "results_io": D.SQLResultsIOManager(database=database),
            "generation_source": GenerationSourceResource(responses_path=str(responses)),
            "report_settings": ReportResource(
                output_dir=str(Path(url.split("///")[-1]).parent / "reports") if url.startswith("sqlite") else ""
            ),
        }
    )
    out.update(overrides)
    return out


def audit(instance, database, responses, key=DEMO_KEY, tags=None, **overrides):
    """Materialize every asset of partition ``key`` (``base_vs_regional`` included)."""
    instance.add_dynamic_partitions(MODEL_PARTITIONS.name, [PartitionKey.parse(key).model])
    return dg.materialize(
        ASSETS,
        instance=instance,
        partition_key=key,
        raise_on_error=False,
        tags=tags or {},
        resources=resources(database, responses, **overrides),
    )


def altered_responses(tmp_path, replace: dict[str, str], name="altered.jsonl") -> Path:
    """The demo responses file with some text replaced in every answer (a 'changed model')."""
    rows = [json.loads(line) for line in DEMO_RESPONSES.read_text().splitlines() if line.strip()]
    for row in rows:
        for old, new in replace.items():
            row["response"] = row["response"].replace(old, new)
    path = Path(tmp_path) / name
    path.write_text("\n".join(json.dumps(r) for r in rows) + "\n")
    return path
