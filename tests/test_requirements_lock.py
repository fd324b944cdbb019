"""requirements.lock (issue 25): every requirement of `.[dev,llm]` (pyproject.toml), and every
requirement of those, is pinned there with its sha256 hashes, at a version the requirement allows;
torch is the CPU build; the installed packages are the locked ones. A dependency added to
pyproject.toml without `bash .ci/lock` fails here, naming it."""

from __future__ import annotations

import re
import tomllib
from importlib import metadata
from pathlib import Path

import pytest
from packaging.markers import default_environment
from packaging.requirements import Requirement
from packaging.utils import canonicalize_name
from packaging.version import Version

ROOT = Path(__file__).resolve().parents[1]
LOCK = ROOT / "requirements.lock"
EXTRAS = ("dev", "llm")
_PIN = re.compile(r"^([A-Za-z0-9][A-Za-z0-9._-]*)==(\S+)")


def _lock() -> dict[str, tuple[str, list[str]]]:
    """{canonical name: (version, [sha256 hashes])} of requirements.lock."""
    pins: dict[str, tuple[str, list[str]]] = {}
    name = None
    for line in LOCK.read_text(encoding="utf-8").splitlines():
        m = _PIN.match(line)
        if m:
            name = canonicalize_name(m.group(1))
            assert name not in pins, f"requirements.lock pins {name} twice"
            pins[name] = (m.group(2), [])
        for digest in re.findall(r"--hash=sha256:([0-9a-f]{64})", line):
            assert name is not None, f"requirements.lock: a hash before any pin: {line!r}"
            pins[name][1].append(digest)
    return pins


def _project_requirements() -> list[Requirement]:
    project = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    reqs = [Requirement(r) for r in project["dependencies"]]
    for extra in EXTRAS:
        reqs += [Requirement(r) for r in project["optional-dependencies"][extra]]
    return reqs


def _applies(req: Requirement, extras: set[str]) -> bool:
    if req.marker is None:
        return True
    env = default_environment()
    return any(req.marker.evaluate({**env, "extra": e}) for e in (extras or {""}))


def test_every_pin_has_hashes_and_torch_is_the_cpu_build():
    pins = _lock()
    assert len(pins) > 100
    assert not [n for n, (_, hashes) in pins.items() if not hashes], "pins without a hash"
    version, hashes = pins["torch"]
    assert Version(version).local == "cpu" and Version(version).public == "2.13.0"
    assert not [n for n in pins if n.startswith("nvidia-") or n == "triton"], "a CUDA package in the lock"


def test_every_requirement_of_the_project_and_of_its_requirements_is_locked():
    """The closure of `.[dev,llm]` through the installed packages' metadata (markers evaluated
    here: CPython 3.11 on Linux, the lock's platform): each one pinned, at an allowed version."""
    pins = _lock()
    problems, seen = [], set()
    todo = [(r, "pyproject.toml") for r in _project_requirements()]
    while todo:
        req, source = todo.pop()
        if not _applies(req, set()):
            continue
        name = canonicalize_name(req.name)
        if name not in pins:
            problems.append(f"{req} (required by {source}) is not in requirements.lock: run `bash .ci/lock`")
            continue
        if not req.specifier.contains(Version(pins[name][0]), prereleases=True):
            problems.append(f"{req} (required by {source}): requirements.lock has {pins[name][0]}")
        key = (name, tuple(sorted(req.extras)))
        if key in seen:
            continue
        seen.add(key)
        try:
            requires = metadata.requires(req.name) or []
        except metadata.PackageNotFoundError:
            problems.append(f"{req.name} is not installed: install requirements.lock")
            continue
        for dep in map(Requirement, requires):
            if dep.marker is None or _applies(dep, set(req.extras)):
                todo.append((dep, f"{req.name}{'[' + ','.join(sorted(req.extras)) + ']' if req.extras else ''}"))
    assert not problems, "\n".join(problems)


def test_the_installed_packages_are_the_locked_ones():
    """What the tests run on (and the provenance records) is what the lock says."""
    pins = _lock()
    differ = []
    for name, (version, _) in sorted(pins.items()):
        try:
            installed = metadata.version(name)
        except metadata.PackageNotFoundError:
            differ.append(f"{name}: locked {version}, not installed")
            continue
        if Version(installed) != Version(version):
            differ.append(f"{name}: locked {version}, installed {installed}")
    if differ:
        pytest.fail("the environment is not requirements.lock (install it: README, 'Set up'):\n" + "\n".join(differ))
