"""Provenance records: what produced a set of rows (the code version, the versions of the libraries
that decide the numbers, the inputs' hashes and the configuration), each identified by the hash of
its content."""

from __future__ import annotations

import json
from functools import lru_cache
from typing import Any

from .schema import Provenance


def code_version() -> str:
    """Package version, plus the git commit when running from a checkout."""
    from importlib import metadata
    from pathlib import Path

    try:
        version = metadata.version("fairness-audit")
    except metadata.PackageNotFoundError:
        version = "0+unknown"
    head = Path(__file__).resolve().parents[2] / ".git" / "HEAD"  # the checkout holding resources/database/
    try:
        ref = head.read_text().strip()
        if ref.startswith("ref: "):
            ref_file = head.parent / ref[5:]
            ref = ref_file.read_text().strip() if ref_file.exists() else ""
        if ref:
            version += f"+g{ref[:10]}"
    except OSError:
        pass
    return version


# The libraries whose versions decide the numbers an audit reports: the tables (pandas, numpy), the
# resampling's BLAS limit (threadpoolctl), matching (rapidfuzz), the parse-quality checks (Great
# Expectations), countries, capitals and distances (country_converter, countryinfo, geopy), generation
# (torch, transformers, gguf: the built-in model's weights), the orchestration and the storage (dagster,
# sqlalchemy). scipy is left out: nothing but a benchmark imports it.
NUMERIC_LIBRARIES = (
    "numpy",
    "pandas",
    "threadpoolctl",
    "rapidfuzz",
    "great_expectations",
    "country_converter",
    "countryinfo",
    "geopy",
    "torch",
    "transformers",
    "gguf",
    "dagster",
    "sqlalchemy",
)
NOT_INSTALLED = "not installed"


def library_versions() -> dict[str, str]:
    """``{library: installed version}`` of :data:`NUMERIC_LIBRARIES` and the Python version
    (``"not installed"`` for an optional one that is absent, e.g. torch without the ``llm``
    extra): recorded in every provenance record and in the report's provenance table."""
    return dict(_library_versions())


@lru_cache(maxsize=1)
def _library_versions() -> tuple[tuple[str, str], ...]:
    import platform
    from importlib import metadata

    versions = [("python", platform.python_version())]
    for name in NUMERIC_LIBRARIES:
        try:
            versions.append((name, metadata.version(name)))
        except metadata.PackageNotFoundError:
            versions.append((name, NOT_INSTALLED))
    return tuple(versions)


def make_provenance(asset: str, **fields: Any) -> Provenance:
    """A provenance record whose id is the hash of its content (same inputs -> same id): the code
    version and the library versions (:func:`library_versions`) are part of it."""
    from ..settings import stable_hash

    fields.setdefault("code_version", code_version())
    fields.setdefault("library_versions", library_versions())
    for key in ("template_hashes", "config_json", "library_versions"):
        if key in fields and not isinstance(fields[key], (str, type(None))):
            fields[key] = json.dumps(fields[key], sort_keys=True)
    pid = stable_hash({"asset": asset, **fields})
    return Provenance(provenance_id=pid, asset=asset, **fields)
