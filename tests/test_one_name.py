"""One name (issue 25): the distribution, the console script, the code location (workspace.yaml,
pyproject.toml's [tool.dagster] and [tool.dg.project], the Helm user deployment) and the README's
title are all `fairness-audit`; the Python package stays `fairness_assets`. No tracked file keeps
the names the project had before."""

from __future__ import annotations

import re
import shutil
import subprocess
import tomllib
from importlib import metadata
from pathlib import Path

import pytest
import yaml

ROOT = Path(__file__).resolve().parents[1]
NAME = "fairness-audit"
# the distribution's and the code location's names before issue 25 (any separator, any case)
OLD_NAMES = re.compile(rb"llm[-_ ]advisor[-_ ]fairness", re.IGNORECASE)


def _pyproject() -> dict:
    return tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))


def test_distribution_and_console_script():
    project = _pyproject()["project"]
    assert project["name"] == NAME
    assert project["scripts"] == {NAME: "fairness_assets.cli:main"}


def test_installed_distribution_has_the_name():
    """The editable install matches pyproject.toml (`pip install --no-deps -e .` after a rename)."""
    dist = metadata.distribution(NAME)
    scripts = {e.name: e.value for e in dist.entry_points if e.group == "console_scripts"}
    assert scripts == {NAME: "fairness_assets.cli:main"}
    # database.code_version reads the version under this name (else "0+unknown")
    from resources.database import code_version

    assert code_version().split("+")[0] == dist.version


def test_code_location_name_agrees():
    pyproject = _pyproject()
    assert pyproject["tool"]["dagster"]["code_location_name"] == NAME
    assert pyproject["tool"]["dg"]["project"]["code_location_name"] == NAME
    workspace = yaml.safe_load((ROOT / "workspace.yaml").read_text(encoding="utf-8"))
    targets = [next(iter(entry.values())) for entry in workspace["load_from"]]
    assert [t["location_name"] for t in targets] == [NAME]
    assert [t["module_name"] for t in targets] == [pyproject["tool"]["dagster"]["module_name"]]
    # the official Helm chart names the code location after the user deployment
    values = yaml.safe_load((ROOT / "deploy" / "k8s" / "values.yaml").read_text(encoding="utf-8"))
    assert [d["name"] for d in values["dagster-user-deployments"]["deployments"]] == [NAME]


def test_readme_title():
    first = (ROOT / "README.md").read_text(encoding="utf-8").splitlines()[0]
    assert first == f"# {NAME}"


def _tracked_files() -> list[Path]:
    git = shutil.which("git")
    if git is None or not (ROOT / ".git").exists():
        pytest.skip("not a git checkout: no tracked files to read")
    out = subprocess.run([git, "ls-files", "-z"], cwd=ROOT, capture_output=True, check=True).stdout
    return [ROOT / p for p in out.decode().split("\0") if p]


def test_no_tracked_file_keeps_an_old_name():
    this = Path(__file__).resolve()
    files = [p for p in _tracked_files() if p.resolve() != this and p.is_file()]
    assert len(files) > 100  # the checkout's files, not an empty listing
    found = []
    for path in files:
        for number, line in enumerate(path.read_bytes().splitlines(), start=1):
            if OLD_NAMES.search(line):
                found.append(f"{path.relative_to(ROOT)}:{number}: {line.decode(errors='replace').strip()[:100]}")
    assert not found, "old project names left (use fairness-audit):\n" + "\n".join(found)


def test_old_name_pattern_matches_the_old_names():
    """The pattern above finds both spellings the project used (guards the scan against a typo)."""
    for old in (
        b"# via llm-advisor-fairness (pyproject.toml)",
        b"location_name: llm_advisor_fairness",
        b"# LLM Advisor Fairness",
    ):
        assert OLD_NAMES.search(old)
    assert not OLD_NAMES.search(NAME.encode())
