"""Jobs users run from the UI or the command line."""

from __future__ import annotations

import dagster as dg

# The main job: everything that exists, on the configured preset (demo by default), for one
# model x template partition.
demo_audit = dg.define_asset_job(
    name="demo_audit",
    selection=dg.AssetSelection.all(),
    description="Demo audit on the configured preset (demo by default): reference data now; "
    "generations, recommendations and metrics as those stages land.",
)

reference_data = dg.define_asset_job(
    name="reference_data",
    selection=dg.AssetSelection.groups("reference"),
    description="Rebuild the ranking corpus, countries, distances, profiles and prompts.",
)

JOBS = [demo_audit, reference_data]
