"""The 'template' partitions are the templates of the configured folder (FAIRNESS_TEMPLATES_DIR), read
when the code location loads, and the resources read the same folder."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
TEMPLATES = ROOT / "data" / "templates"

LOAD = r"""
import json
import dagster as dg
from fairness_assets.definitions import defs
from fairness_assets.defs.partitions import AUDIT_PARTITIONS
loaded = defs()
generations = loaded.resolve_asset_graph().get(dg.AssetKey("generations")).partitions_def
dims = {d.name: d.partitions_def for d in generations.partitions_defs}
print(json.dumps({"asset": list(dims["template"].get_partition_keys()),
                  "audit": list(AUDIT_PARTITIONS.get_partitions_def_for_dimension("template").get_partition_keys()),
                  "resource": loaded.resources["reference"].templates_dir}))
"""


def load(folder=None) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if not k.startswith("FAIRNESS_")}
    if folder is not None:
        env["FAIRNESS_TEMPLATES_DIR"] = str(folder)
    return subprocess.run([sys.executable, "-c", LOAD], cwd=ROOT, env=env, capture_output=True, text=True, timeout=240)


def test_template_partitions_follow_the_configured_folder(tmp_path):
    folder = tmp_path / "templates"
    folder.mkdir()
    shutil.copy(TEMPLATES / "format_instruction.txt", folder)
    shutil.copy(TEMPLATES / "base.yaml", folder)
    text = (TEMPLATES / "base.yaml").read_text(encoding="utf-8").replace("name: base", "name: base_v2")
    (folder / "base_v2.yaml").write_text(text, encoding="utf-8")
    proc = load(folder)
    assert proc.returncode == 0, proc.stderr[-3000:]
    found = json.loads(proc.stdout.strip().splitlines()[-1])
    assert found["asset"] == found["audit"] == ["base", "base_v2"]
    assert found["resource"] == str(folder)  # the prompts asset reads the folder the partitions come from

    default = json.loads(load().stdout.strip().splitlines()[-1])
    assert default["asset"] == sorted(p.stem for p in TEMPLATES.glob("*.yaml")) and "base_v2" not in default["asset"]


def test_a_folder_without_templates_fails_the_load_naming_the_variable(tmp_path):
    empty = tmp_path / "none"
    empty.mkdir()
    (empty / "format_instruction.txt").write_text("Answer in JSON.")
    proc = load(empty)
    assert proc.returncode != 0
    assert f"FAIRNESS_TEMPLATES_DIR={str(empty)!r}: no template (*.yaml) in the folder" in proc.stderr
    proc = load(tmp_path / "missing")
    assert proc.returncode != 0
    assert f"FAIRNESS_TEMPLATES_DIR={str(tmp_path / 'missing')!r}: the prompt templates cannot be read" in proc.stderr
