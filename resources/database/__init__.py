"""The results database: sqlmodel tables, the engine resource and the asset IO manager.

SQLite file by default (``data/results/results.db`` or ``$FAIRNESS_HOME/results.db``),
PostgreSQL (or any SQLAlchemy URL) when ``FAIRNESS_DATABASE_URL`` is set. Assets return
pandas frames; :class:`SQLResultsIOManager` stores each asset in its table (replacing the
rows of the materialized partition, in one transaction) and loads it back for downstream
assets, so the database is the one place where results live.

- :mod:`.schema`: the SQLModel tables, the result-table groups and :data:`TABLES` (asset -> table);
- :mod:`.metadata`: what the UI shows of a stored asset (its table's name and columns);
- :mod:`.rows`: storable rows, the locked write transaction, content hashes, duplicate-free inserts;
- :mod:`.connect`: the driver of a URL, the redacted URL, the schema upgrade on first connect;
- :mod:`.provenance`: code and library versions, provenance records;
- :mod:`.store`: :class:`ResultsDatabase`, every read and write of the stored rows;
- :mod:`.io_manager`: :class:`SQLResultsIOManager`.
"""

from __future__ import annotations

from sqlmodel import SQLModel  # noqa: F401 - reachable as resources.database.SQLModel (benchmarks/report_memory.py)

from ..result_store import ResultGroup, StoredResultTable
from ..settings import results_dir
from .connect import redact
from .io_manager import SQLResultsIOManager
from .metadata import result_tables_of, table_metadata, table_schema
from .provenance import NOT_INSTALLED, NUMERIC_LIBRARIES, code_version, library_versions, make_provenance
from .rows import content_hash, write_transaction
from .schema import (
    RESULT_GROUPS,
    TABLES,
    AuditMetric,
    CapitalDistance,
    ComparisonRow,
    CorpusUniversity,
    Country,
    DriftRow,
    DRSItem,
    FigureFile,
    Generation,
    GenerationCost,
    GeographyRow,
    GRSCountry,
    MetricRow,
    PartitionOutcome,
    Profile,
    PromptRow,
    Provenance,
    Recommendation,
    ReportFile,
    SensitivityRow,
    StatisticRow,
    SubjectTag,
    SubjectTagCache,
    TableContent,
)
from .store import ResultsDatabase

__all__ = [
    "NOT_INSTALLED",
    "NUMERIC_LIBRARIES",
    "RESULT_GROUPS",
    "TABLES",
    "AuditMetric",
    "CapitalDistance",
    "ComparisonRow",
    "CorpusUniversity",
    "Country",
    "DRSItem",
    "DriftRow",
    "FigureFile",
    "GRSCountry",
    "Generation",
    "GenerationCost",
    "GeographyRow",
    "MetricRow",
    "PartitionOutcome",
    "Profile",
    "PromptRow",
    "Provenance",
    "Recommendation",
    "ReportFile",
    "ResultGroup",
    "ResultsDatabase",
    "SQLResultsIOManager",
    "SensitivityRow",
    "StatisticRow",
    "StoredResultTable",
    "SubjectTag",
    "SubjectTagCache",
    "TableContent",
    "code_version",
    "content_hash",
    "library_versions",
    "make_provenance",
    "redact",
    "result_tables_of",
    "results_dir",
    "table_metadata",
    "table_schema",
    "write_transaction",
]
