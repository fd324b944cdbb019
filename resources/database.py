"""The results database: sqlmodel tables, the engine resource and the asset IO manager.

SQLite file by default (``data/results/results.db`` or ``$FAIRNESS_HOME/results.db``),
PostgreSQL (or any SQLAlchemy URL) when ``FAIRNESS_DATABASE_URL`` is set. Assets return
pandas frames; :class:`SQLResultsIOManager` stores each asset in its table (replacing the
rows of the materialized partition, in one transaction) and loads it back for downstream
assets, so the database is the one place where results live.
"""

from __future__ import annotations

import contextlib
import json
import logging
import threading
from datetime import datetime, timezone
from functools import lru_cache
from typing import Any, Iterable, Optional, Sequence, Type

import numpy as np
import pandas as pd
import sqlalchemy as sa
from dagster import (
    ConfigurableIOManager,
    ConfigurableResource,
    InputContext,
    MetadataValue,
    OutputContext,
    TableColumn,
    TableColumnConstraints,
    TableConstraints,
    TableSchema,
)
from pydantic import Field as PydField
from pydantic import PrivateAttr
from sqlmodel import Field, SQLModel

from fairness_assets.core.generation.responses import storable_text

from . import result_store
from .result_store import ResultGroup, StoredResultTable
from .secrets import quote_userinfo
from .settings import default_database_url, results_dir

log = logging.getLogger(__name__)


def _now() -> datetime:
    return datetime.now(timezone.utc)


# ----------------------------------------------------------------------------- tables
class Provenance(SQLModel, table=True):
    """What produced a set of rows: corpus file hash, template hashes, config, code version."""

    __tablename__ = "provenance"
    provenance_id: str = Field(primary_key=True, max_length=64)
    asset: str = Field(index=True)
    corpus_sha256: Optional[str] = None
    template_hashes: Optional[str] = None  # JSON {template: sha256}
    config_hash: Optional[str] = None
    config_json: Optional[str] = None
    code_version: Optional[str] = None
    library_versions: Optional[str] = None  # JSON {library: version} of NUMERIC_LIBRARIES (migration 0009)
    created_at: datetime = Field(default_factory=_now)


class _Row(SQLModel):
    """Columns every stored result row has."""

    id: Optional[int] = Field(default=None, primary_key=True)
    partition_key: str = Field(default="", index=True)
    provenance_id: str = Field(index=True, max_length=64)


# The reference tables are shared by every run and replaced whole: each has a natural key, unique
# per partition_key (migration 0005, which also removed duplicates that concurrent writers without
# a lock had left).
def _natural_key(table: str, *columns: str) -> tuple:
    return (sa.Index(f"uq_{table}_natural_key", "partition_key", *columns, unique=True),)


class CorpusUniversity(_Row, table=True):
    __tablename__ = "corpus_university"
    __table_args__ = _natural_key("corpus_university", "university_id")
    corpus_sha256: str = Field(index=True, max_length=64)
    university_id: int = Field(index=True)
    name: str
    rank_raw: str
    rank: int
    country_raw: str
    country_code_raw: Optional[str] = None
    country: str = Field(index=True)
    iso3: str = Field(max_length=3)
    rep: float
    local_rank_min: int
    local_rank_max: int
    rep_local: float
    country_universities: int
    country_avail: float
    source_line: int


class Country(_Row, table=True):
    """Every country of the corpus or the grid: name, ISO code, capital, corpus counts."""

    __tablename__ = "country"
    __table_args__ = _natural_key("country", "iso3")
    corpus_sha256: str = Field(index=True, max_length=64)
    iso3: str = Field(index=True, max_length=3)
    country: str
    capital: str
    lat: float
    lon: float
    in_corpus: bool
    is_nationality: bool
    n_universities: int
    avail: float
    local_rank_min: Optional[int] = None
    local_rank_max: Optional[int] = None
    corpus_names: Optional[str] = None  # the spellings the corpus / grid used, "; "-joined


class CapitalDistance(_Row, table=True):
    __tablename__ = "capital_distance"
    __table_args__ = _natural_key("capital_distance", "from_iso3", "to_iso3")
    corpus_sha256: str = Field(index=True, max_length=64)
    from_iso3: str = Field(index=True, max_length=3)
    to_iso3: str = Field(max_length=3)
    km: float


class Profile(_Row, table=True):
    __tablename__ = "profile"
    __table_args__ = _natural_key("profile", "profile_id")
    config_hash: str = Field(index=True, max_length=64)
    profile_id: str = Field(index=True)
    profile_set: str
    gender: Optional[str] = None
    economic_class: Optional[str] = None
    nationality: Optional[str] = None
    nationality_iso3: Optional[str] = Field(default=None, max_length=3)
    # the student's region (data/regions/regions.csv, versioned; migration 0004)
    region: Optional[str] = None
    north_south: Optional[str] = None


class PromptRow(_Row, table=True):
    __tablename__ = "prompt"
    __table_args__ = _natural_key("prompt", "prompt_id")
    config_hash: str = Field(index=True, max_length=64)
    prompt_id: str = Field(index=True)
    template: str = Field(index=True)
    template_version: int
    template_hash: str = Field(max_length=64)
    profile_id: str
    prompt: str


class Generation(_Row, table=True):
    """One sampled answer: from the generation engine, or imported from a responses file."""

    __tablename__ = "generation"
    audit_id: str = Field(index=True)
    response_id: str = Field(index=True)
    model: str = Field(index=True)
    template: str = Field(index=True)
    template_hash: str = Field(max_length=64)
    profile_id: str = Field(index=True)
    gender: Optional[str] = None
    economic_class: Optional[str] = None
    nationality: Optional[str] = None
    run: int
    seed: int
    prompt: str
    response: Optional[str] = None
    model_source: str
    model_revision: Optional[str] = None
    backend: str
    decoding_json: str
    prompt_tokens: Optional[int] = None
    output_tokens: Optional[int] = None
    latency_s: Optional[float] = None
    # what was altered to store the row's text (NUL removed, unencodable characters replaced;
    # core.generation.responses.storable_text), e.g. "response: 1 NUL character removed"; None when nothing
    text_note: Optional[str] = None
    # "text": the answer as written (parsed); "items": imported already split, stored as a JSON
    # document of items (core.generation.responses.items_document) and not parsed. Migration 0002.
    response_format: str = Field(default="text", sa_column_kwargs={"server_default": "text"})


class GenerationCost(_Row, table=True):
    """What generating one partition cost in one run (a resumed audit adds a row per run).

    ``compute_kind``: ``gpu`` (in-process on CUDA: ``compute_s`` is GPU-seconds, wall time x GPUs),
    ``cpu`` (in-process: CPU wall seconds) or ``endpoint`` (an OpenAI-compatible server:
    ``compute_s`` is request-seconds, the sum of every request's latency).
    """

    __tablename__ = "generation_cost"
    audit_id: str = Field(index=True)
    run_id: str
    model: str
    template: str
    backend: str
    compute_kind: str
    samples: int
    prompt_tokens: int
    output_tokens: int
    wall_s: float
    compute_s: float
    output_tokens_per_s: float


class Recommendation(_Row, table=True):
    """One recommended item parsed from a response and matched to the corpus."""

    __tablename__ = "recommendation"
    audit_id: str = Field(index=True)
    response_id: str = Field(index=True)
    model: str = Field(index=True)
    template: str = Field(index=True)
    profile_id: str = Field(index=True)
    gender: Optional[str] = None
    economic_class: Optional[str] = None
    nationality: Optional[str] = None
    run: int
    item_index: int
    parse_status: str
    parse_method: str
    n_items_found: int = 0
    n_duplicates: int = 0
    # distinct items after the first k of the answer (METHOD.md §9): counted, not scored. Migration 0003.
    n_items_left_out: int = Field(default=0, sa_column_kwargs={"server_default": "0"})
    # the per-answer length limit (core.understanding.parse.MAX_ANSWER_CHARS): the answer's whole length in
    # characters (None for answers imported already split into items), and whether it was longer
    # than the limit, so that only its first characters were parsed. Migration 0006.
    answer_chars: Optional[int] = None
    answer_truncated: bool = Field(default=False, sa_column_kwargs={"server_default": sa.false()})
    university_text: Optional[str] = None
    program_text: Optional[str] = None
    country_text: Optional[str] = None
    stated_iso3: Optional[str] = Field(default=None, max_length=3)
    university_id: Optional[int] = None
    matched_name: Optional[str] = None
    match_score: Optional[float] = None
    match_method: Optional[str] = None
    # every match explains itself (issue 21; migration 0007): the rule family (exact, alias,
    # acronym, structure, completion, fuzzy), the runner-up of a completion or fuzzy match, and the
    # candidates of an item left ambiguous (corpus names joined by " | ")
    match_rule: Optional[str] = None
    match_runner_up: Optional[str] = None
    match_runner_up_score: Optional[float] = None
    match_candidates: Optional[str] = None
    country: Optional[str] = None
    iso3: Optional[str] = Field(default=None, max_length=3)
    country_conflict: Optional[bool] = None
    program_norm: Optional[str] = None
    tags: Optional[str] = None  # JSON list of QS areas


class SubjectTag(_Row, table=True):
    """Programs of one partition with their QS areas and where the tags came from."""

    __tablename__ = "subject_tag"
    program_norm: str = Field(index=True)
    tags: str  # JSON list
    source: str  # override / cache / the tagger's name
    n_items: int


class SubjectTagCache(SQLModel, table=True):
    """Tags by normalised program name and tagger, shared by every partition and run."""

    __tablename__ = "subject_tag_cache"
    program_norm: str = Field(primary_key=True)
    tagger: str = Field(primary_key=True)
    tags: str  # JSON list
    created_at: datetime = Field(default_factory=_now)


class DRSItem(_Row, table=True):
    """DRS components of one recommended item (METHOD.md §5)."""

    __tablename__ = "drs_item"
    audit_id: str = Field(index=True)
    response_id: str = Field(index=True)
    item_index: int
    model: str
    template: str
    profile_id: str
    gender: Optional[str] = None
    economic_class: Optional[str] = None
    nationality: Optional[str] = None
    run: int
    university_id: Optional[int] = None
    iso3: Optional[str] = Field(default=None, max_length=3)
    student_iso3: Optional[str] = Field(default=None, max_length=3)
    distance_km: Optional[float] = None
    lambda_per_km: Optional[float] = None
    rank: Optional[float] = None
    acc: Optional[float] = None
    rep: float
    acad: Optional[float] = None
    drs: Optional[float] = None
    drs_components: str
    params_hash: str = Field(max_length=64)


class GRSCountry(_Row, table=True):
    """GRS of one corpus country in one model x template partition (METHOD.md §6)."""

    __tablename__ = "grs_country"
    audit_id: str = Field(index=True)
    iso3: str = Field(max_length=3)
    country: str
    total_unis: int
    recs: int
    n_recommendations: int
    avail: float
    repr: float
    scaled_repr: float
    rep_covg: Optional[float] = None
    grs: float
    params_hash: str = Field(max_length=64)


# The tables of the analysis, the statistics, the geography and the cross-partition comparisons are typed
# SQL tables, one per catalogue entry (resources/result_store.py; migration 0010 moved the cells the earlier
# cell tables held into them). A group names the tables of some assets, read and written together; the
# names are those of the cell tables they replace.
MetricRow = ResultGroup("metric_row", ("analysis_tables", "base_vs_regional"))  # METHOD.md §8, base vs regional
StatisticRow = ResultGroup("statistic_row", ("audit_statistics",))  # variability, disparity, behaviour / needs
GeographyRow = ResultGroup("geography_row", ("audit_geography",))  # regions, contrasts, home bias, ...
ComparisonRow = ResultGroup("comparison_row", ("model_comparison",))  # differences, leaderboard, gate
SensitivityRow = ResultGroup("sensitivity_row", ("sensitivity",))  # verdicts, comparison by setting
RESULT_GROUPS = (MetricRow, StatisticRow, GeographyRow, ComparisonRow, SensitivityRow)


class FigureFile(_Row, table=True):
    """One figure of an audit: where its PNG is, or why it was not drawn."""

    __tablename__ = "audit_figure"
    audit_id: str = Field(index=True)
    model: str
    template: str
    name: str
    title: str
    caption: str
    path: Optional[str] = None
    skipped_reason: Optional[str] = None


class ReportFile(_Row, table=True):
    """One audit report: its HTML and Markdown files and what it covers."""

    __tablename__ = "audit_report"
    report_id: str = Field(index=True)
    partitions: str  # JSON list of model|template
    audit_ids: str  # JSON list
    html_path: str
    markdown_path: str
    figures: int
    significant_findings: int
    created_at: datetime = Field(default_factory=_now)


class AuditMetric(_Row, table=True):
    """Headline numbers of one audit run of a partition (core.scoring.drift.headline_metrics), kept for
    every audit so that a re-audit can be compared with the one before it."""

    __tablename__ = "audit_metric"
    audit_id: str = Field(index=True)
    audit_base: str = Field(default="", index=True)  # core.scoring.drift.audit_base: audits with the same base compare
    recorded_at: datetime = Field(default_factory=_now, index=True)
    scope: str
    group_by: str
    group: str
    metric: str
    value: Optional[float] = None


class DriftRow(_Row, table=True):
    """Change of one headline metric between two audit runs of a partition (core.scoring.drift.compare)."""

    __tablename__ = "audit_drift"
    audit_id: str = Field(index=True)
    previous_audit_id: Optional[str] = None
    scope: str
    group_by: str
    group: str
    metric: str
    previous: Optional[float] = None
    current: Optional[float] = None
    change: Optional[float] = None
    pct_change: Optional[float] = None
    status: str


class TableContent(SQLModel, table=True):
    """What a shared (unpartitioned) table holds now: the hash of the rows last written, so that a
    run finding the same content does not rewrite it (migration 0005)."""

    __tablename__ = "table_content"
    table_name: str = Field(primary_key=True)
    partition_key: str = Field(primary_key=True, default="")
    content_sha256: str = Field(max_length=64)
    rows: int
    written_at: datetime = Field(default_factory=_now)


class PartitionOutcome(SQLModel, table=True):
    """A partition of a run that an asset could not produce (``failed``), or left out because an
    upstream asset of the same run could not (``skipped``), or because a blocking parse-quality check
    failed for it (``blocked``); with the reason. The other partitions of the run go on
    (fairness_assets/defs/isolation.py; migration 0005)."""

    __tablename__ = "partition_outcome"
    run_id: str = Field(primary_key=True)
    partition_key: str = Field(primary_key=True)
    asset: str = Field(primary_key=True)
    status: str
    reason: str
    recorded_at: datetime = Field(default_factory=_now)


TABLES: dict[str, Type[SQLModel] | ResultGroup] = {
    "qs_corpus": CorpusUniversity,
    "country_geography": Country,
    "capital_distances": CapitalDistance,
    "profiles": Profile,
    "prompts": PromptRow,
    "generations": Generation,
    "recommendations": Recommendation,
    "subject_tags": SubjectTag,
    "drs_scores": DRSItem,
    "grs_by_country": GRSCountry,
    "analysis_tables": MetricRow,
    "base_vs_regional": MetricRow,
    "model_comparison": ComparisonRow,
    "sensitivity": SensitivityRow,
    "audit_drift": DriftRow,
    "audit_statistics": StatisticRow,
    "audit_geography": GeographyRow,
    "audit_figures": FigureFile,
    "audit_report": ReportFile,
}


def _column_type(column: sa.Column) -> str:
    kind_of = column.type.impl_instance if isinstance(column.type, sa.types.TypeDecorator) else column.type
    for kind, name in (
        (sa.Boolean, "bool"),
        (sa.Integer, "int"),
        (sa.Float, "float"),
        (sa.DateTime, "datetime"),
        (sa.String, "string"),
    ):
        if isinstance(kind_of, kind):
            return name
    return str(kind_of).lower()


@lru_cache(maxsize=None)
def table_schema(model: Type[SQLModel]) -> TableSchema:
    """The columns of ``model``'s SQL table as Dagster's ``TableSchema`` (name, type, nullable,
    unique, the description its field has), with its unique keys as table constraints."""
    table = model.__table__
    single_key = [c.name for c in table.primary_key.columns] if len(table.primary_key.columns) == 1 else []
    fields = getattr(model, "model_fields", {})
    columns = [
        TableColumn(
            c.name,
            _column_type(c),
            description=getattr(fields.get(c.name), "description", None),
            constraints=TableColumnConstraints(
                nullable=bool(c.nullable), unique=bool(c.unique) or c.name in single_key
            ),
        )
        for c in table.columns
    ]
    keys = [
        f"unique ({', '.join(c.name for c in index.columns)})"
        for index in sorted(table.indexes, key=lambda i: i.name)
        if index.unique
    ]
    if len(table.primary_key.columns) > 1:
        keys.insert(0, f"primary key ({', '.join(c.name for c in table.primary_key.columns)})")
    return TableSchema(columns=columns, constraints=TableConstraints(other=keys))


def table_metadata(asset: str) -> dict[str, Any]:
    """What the UI shows of where ``asset`` is stored: its SQL table's name and columns
    (``dagster/table_name``, ``dagster/column_schema``) and, for a table of cells
    (core/common/tables.py), the result tables it holds with their titles (core/common/result_tables.py)."""
    from fairness_assets.core.common import result_tables

    if asset not in TABLES:
        raise KeyError(f"no results table registered for asset {asset!r}")
    model = TABLES[asset]
    if not isinstance(model, ResultGroup):
        return {"dagster/table_name": model.__tablename__, "dagster/column_schema": table_schema(model)}
    held = result_tables.of_asset(asset)
    return {
        "stored_tables": MetadataValue.md(
            "\n".join(
                f"- SQL table `{t.sql_name}` (exported as `{t.file}.csv`): "
                f"{t.title.replace('{', '<').replace('}', '>')}; columns "
                + ", ".join(f"{c} {kind}" for c, kind in t.columns)
                for t in held
            )
            or "none"
        )
    }


# ----------------------------------------------------------------------------- engine resource
def _records(df: pd.DataFrame, columns: Sequence[str], table: str = "") -> list[dict[str, Any]]:
    """Rows of ``df`` as plain dicts ready to insert, on every database alike: numpy scalars
    become Python scalars (psycopg2 does not adapt numpy types) and every text value is made
    storable (:func:`storable_text`: NUL removed, as PostgreSQL rejects it; lone surrogates,
    which no driver can encode, replaced by U+FFFD), so one odd answer never fails a whole write,
    and SQLite and PostgreSQL store the same text. Altered values are counted in a warning."""
    sub = df[list(columns)]
    obj = sub.astype(object).where(sub.notna(), None)
    recs = obj.to_dict("records")
    altered: dict[str, int] = {}
    for r in recs:
        for k, v in r.items():
            if isinstance(v, np.generic):
                v = r[k] = v.item()
            if isinstance(v, str) and ("\x00" in v or not v.isascii()):  # fast path: plain ASCII text
                text, note = storable_text(v)
                if note:
                    r[k] = text
                    altered[k] = altered.get(k, 0) + 1
    if altered:
        log.warning(
            "%s: text made storable (NUL characters removed, unencodable characters replaced) in %s",
            table or "results",
            ", ".join(f"{n} value(s) of {k}" for k, n in sorted(altered.items())),
        )
    return recs


def _keys(values: Iterable[Any]) -> list[Any]:
    """Key values for a query, made storable as :func:`_records` stores them (so that a key
    written with a NUL removed is found again, and PostgreSQL never receives a NUL)."""
    return [storable_text(v)[0] if isinstance(v, str) else v for v in values]


def _lock_id(*parts: str) -> int:
    """A signed 64-bit PostgreSQL advisory-lock key for ``parts`` (stable across processes)."""
    import hashlib

    digest = hashlib.sha256("\x00".join(parts).encode("utf-8", "surrogatepass")).digest()
    return int.from_bytes(digest[:8], "big", signed=True)


@contextlib.contextmanager
def write_transaction(engine: sa.Engine, table: str, partition_keys: Iterable[str] = ("",)):
    """A transaction that writes ``table``'s rows of ``partition_keys`` alone: on PostgreSQL it
    first takes a transaction-scoped advisory lock per (table, partition) (in key order, so two
    writers never deadlock), on SQLite the database's write lock (``BEGIN IMMEDIATE``). A second
    writer of the same rows waits for the first to commit, then sees its rows: a delete followed by
    an insert can never leave two copies. Commits on success, rolls back on any error."""
    with engine.connect() as conn:
        if conn.dialect.name == "sqlite":
            conn.exec_driver_sql("BEGIN IMMEDIATE")
        elif conn.dialect.name == "postgresql":
            for key in sorted(set(partition_keys)):
                conn.execute(sa.text("SELECT pg_advisory_xact_lock(:k)"), {"k": _lock_id(table, key)})
        try:
            yield conn
        except BaseException:
            conn.rollback()
            raise
        conn.commit()


def content_hash(frame: pd.DataFrame, columns: Sequence[str]) -> str:
    """sha256 of the rows of ``frame`` over ``columns`` (order of rows and columns included)."""
    import hashlib

    h = hashlib.sha256("\x1f".join(columns).encode())
    if len(frame):
        sub = frame[list(columns)]
        h.update(
            pd.util.hash_pandas_object(sub.astype(object).where(sub.notna(), None), index=False).to_numpy().tobytes()
        )
    h.update(str(len(frame)).encode())
    return h.hexdigest()


def _insert_ignoring_duplicates(conn: sa.Connection, table: sa.Table, rows: list[dict]) -> None:
    """Insert ``rows``, leaving out any whose primary key is already there (another run stored the
    same record meanwhile): ``ON CONFLICT DO NOTHING`` on PostgreSQL and SQLite."""
    if not rows:
        return
    if conn.dialect.name == "postgresql":
        from sqlalchemy.dialects.postgresql import insert
    elif conn.dialect.name == "sqlite":
        from sqlalchemy.dialects.sqlite import insert
    else:  # pragma: no cover - other databases: one row at a time, a duplicate skipped
        for row in rows:
            try:
                with conn.begin_nested():
                    conn.execute(table.insert(), [row])
            except sa.exc.IntegrityError:
                pass
        return
    conn.execute(insert(table).on_conflict_do_nothing(), rows)


class ResultsDatabase(ConfigurableResource):
    """SQL database for results (sqlmodel). Empty ``url`` means the default SQLite file.

    ``scope`` (a JSON object ``{partition key: audit id}``; empty: everything stored) is the view of
    a run that must see only its own rows (``fairness-audit score`` on a shared database, whose other
    runs may hold other partitions, or may have taken one of its partitions over): every read of a
    partitioned table returns only the rows of those partitions with that audit id; a partition
    outside the scope, or its rows of another audit, are never read. The cross-partition tables of a
    scoped run are stored under the scope's own audit id (:meth:`cross_partition_audit_id`) and read
    back by it, so another run's comparison is never read as this run's."""

    url: str = PydField(default="", description="SQLAlchemy URL; empty: SQLite file in the results folder.")
    echo: bool = False
    scope: str = PydField(
        default="",
        description="JSON {partition key: audit id}: read only these partitions' rows of these audits "
        "(fairness-audit score's view of a shared database); empty: every stored row.",
    )
    _engine: Any = PrivateAttr(default=None)

    @classmethod
    def scoped_to(cls, url: str, owned: dict[str, str]) -> "ResultsDatabase":
        """The database at ``url`` seen through the scope ``owned`` (``{partition key: audit id}``)."""
        return cls(url=url, scope=json.dumps(dict(sorted(owned.items()))))

    def scope_map(self) -> dict[str, str]:
        """The scope as ``{partition key: audit id}`` (empty: not scoped)."""
        return json.loads(self.scope) if self.scope else {}

    def scope_id(self) -> str:
        """The audit id of a scoped run's cross-partition rows ("" when not scoped)."""
        if not self.scope:
            return ""
        from .settings import stable_hash

        return f"scope-{stable_hash(self.scope_map())[:12]}"

    def cross_partition_audit_id(self, default: str) -> str:
        """The audit id a cross-partition asset stores its rows under: ``default`` ("comparison",
        "sensitivity"), or the scope's id in a scoped run."""
        return self.scope_id() or default

    def _in_scope(self, table: sa.Table):
        """The WHERE clause of the scope for ``table`` (None: not scoped, or a table without partitions)."""
        owned = self.scope_map()
        if not self.scope or "partition_key" not in table.c:
            return None
        if "audit_id" not in table.c:
            return table.c.partition_key.in_(_keys([*owned, ""]))
        by_audit: dict[str, list[str]] = {}
        for key, audit in owned.items():
            by_audit.setdefault(audit, []).append(key)
        return sa.or_(
            *[
                sa.and_(table.c.audit_id == _keys([a])[0], table.c.partition_key.in_(_keys(ks)))
                for a, ks in sorted(by_audit.items())
            ],
            sa.and_(table.c.partition_key == "", table.c.audit_id.in_([self.scope_id()])),
        )

    def _scoped(self, table: sa.Table, query):
        clause = self._in_scope(table)
        return query if clause is None else query.where(clause)

    def resolved_url(self) -> str:
        return self.url or default_database_url()

    def engine(self) -> sa.Engine:
        if self._engine is None:
            url = self.resolved_url()
            if url.startswith("sqlite:///") and not url.startswith("sqlite:///:memory:"):
                from pathlib import Path

                Path(url[len("sqlite:///") :]).parent.mkdir(parents=True, exist_ok=True)
            # SQLite: wait for a concurrent writer (parallel steps) instead of failing "database is locked"
            connect_args = {"timeout": 60} if url.startswith("sqlite") else {}
            try:
                # a password holding '@', ':' or '/' is percent-encoded, so the driver reaches the host meant
                engine = sa.create_engine(
                    _with_driver(quote_userinfo(url)), echo=self.echo, future=True, connect_args=connect_args
                )
                _create_tables(engine)
            except Exception as exc:  # noqa: BLE001 - name the database in any failure
                raise ConnectionError(
                    f"results database {redact(url)} is not usable: {type(exc).__name__}: {redact(str(exc))}"
                ) from None  # the cause may quote the raw URL
            self._engine = engine
        return self._engine

    def describe(self) -> str:
        return redact(self.resolved_url())

    # -- writing and reading frames ------------------------------------------------------
    def record_provenance(self, prov: Provenance) -> None:
        """Store ``prov`` once: its id is the hash of its content, so a record that another run
        stored meanwhile is the same record and is left as it is (never a duplicate-key error)."""
        with self.engine().begin() as conn:
            _insert_ignoring_duplicates(
                conn,
                Provenance.__table__,
                [dict(zip(prov.model_dump(), _keys(prov.model_dump().values()), strict=False))],
            )

    def stamp(self, frame: pd.DataFrame, asset: str, **fields: Any) -> pd.DataFrame:
        """Record the provenance of ``asset`` (see :func:`make_provenance`) and add its id, and
        the corpus / config hash columns given, to every row of ``frame``."""
        prov = make_provenance(asset, **fields)
        self.record_provenance(prov)
        out = frame.copy()
        for col in ("corpus_sha256", "config_hash"):
            if fields.get(col) is not None:
                out[col] = fields[col]
        out["provenance_id"] = prov.provenance_id
        return out

    def replace_rows(
        self,
        model: Type[SQLModel],
        df: pd.DataFrame,
        partition_keys: Iterable[str] = ("",),
        run_id: Optional[str] = None,
        log_fn=None,
    ) -> int:
        """Replace the rows of ``partition_keys`` in ``model``'s table with ``df``, in one transaction
        that holds the write lock of those rows (:func:`write_transaction`): concurrent writers of the
        same rows take turns, each replacing the other's rows, never adding a second copy.

        ``run_id``: the run writing partitioned rows; the write commits only if that run still
        holds the partitions' leases (resources/partition_lease.verify). The shared tables
        (partition ``""``) are not rewritten when they already hold exactly these rows (same content
        hash, ``table_content``). A :class:`ResultGroup` (the analysis, statistics, geography and
        comparison tables) is written through :meth:`replace_result_tables` with ``asset``."""
        if isinstance(model, ResultGroup):
            raise TypeError(f"{model.name}: result tables are written with replace_result_tables(asset, ...)")
        table = model.__table__
        partition_keys = list(partition_keys)
        cols = [c.name for c in table.columns if c.name not in ("id",)]
        frame = df.copy()
        if "partition_key" not in frame:
            keys = list(partition_keys)
            if len(keys) != 1:
                raise ValueError(f"{table.name}: a multi-partition frame needs a partition_key column")
            frame["partition_key"] = keys[0]
        if "provenance_id" not in frame:
            frame["provenance_id"] = ""
        missing = [
            c for c in cols if c not in frame.columns and not table.c[c].nullable and table.c[c].server_default is None
        ]
        if missing:
            raise ValueError(f"{table.name}: frame lacks required column(s) {missing}")
        cols = [c for c in cols if c in frame.columns]
        shared = partition_keys == [""]
        digest = content_hash(frame, cols) if shared else None
        records = _records(frame, cols, table.name)
        contents = TableContent.__table__
        with write_transaction(self.engine(), table.name, _keys(partition_keys)) as conn:
            if run_id is not None and not shared:
                from .partition_lease import verify

                verify(conn, partition_keys, run_id)
            if shared:
                stored = conn.execute(
                    sa.select(contents.c.content_sha256, contents.c.rows).where(
                        contents.c.table_name == table.name, contents.c.partition_key == ""
                    )
                ).first()
                if stored is not None and stored[0] == digest and stored[1] == len(records):
                    present = conn.execute(
                        sa.select(sa.func.count()).select_from(table).where(table.c.partition_key == "")
                    ).scalar_one()
                    if present == len(records):
                        (log_fn or log.info)(
                            f"{table.name}: already holds these {len(records)} row(s) "
                            f"(content {digest[:12]}): not rewritten"
                        )
                        return len(records)
            conn.execute(table.delete().where(table.c.partition_key.in_(_keys(partition_keys))))
            for start in range(0, len(records), 20_000):
                conn.execute(table.insert(), records[start : start + 20_000])
            if shared:
                conn.execute(
                    contents.delete().where(contents.c.table_name == table.name, contents.c.partition_key == "")
                )
                conn.execute(
                    contents.insert().values(
                        table_name=table.name,
                        partition_key="",
                        content_sha256=digest,
                        rows=len(records),
                        written_at=_now(),
                    )
                )
        return len(records)

    def replace_result_tables(
        self,
        asset: str,
        long: pd.DataFrame,
        partition_keys: Iterable[str] = ("",),
        run_id: Optional[str] = None,
        log_fn=None,
    ) -> int:
        """Replace ``asset``'s result tables of ``partition_keys`` with those of ``long`` (core.common.tables
        long form with partition_key / audit_id / provenance_id / params_hash), in one transaction holding
        the write lock of those partitions, the leases verified for ``run_id`` (as :meth:`replace_rows`).
        The cross-partition tables (partition ``""``) are not rewritten when they hold these rows already.
        Returns the number of table rows stored."""
        keys = list(partition_keys)
        frame = long if "partition_key" in long or len(keys) != 1 else long.assign(partition_key=keys[0])
        if "partition_key" not in frame:
            raise ValueError(f"{asset}: a multi-partition frame needs a partition_key column")
        frame = frame[frame["partition_key"].isin(keys)] if len(frame) else frame
        shared = keys == [""]
        digest = content_hash(frame, [c for c in frame.columns if c != "id"]) if shared else None
        contents = TableContent.__table__
        name = f"result:{asset}"
        with write_transaction(self.engine(), name, _keys(keys)) as conn:
            if run_id is not None and not shared:
                from .partition_lease import verify

                verify(conn, keys, run_id)
            if shared:
                stored = conn.execute(
                    sa.select(contents.c.content_sha256).where(
                        contents.c.table_name == name, contents.c.partition_key == ""
                    )
                ).first()
                if stored is not None and stored[0] == digest:
                    (log_fn or log.info)(f"{asset}: already holds these tables (content {digest[:12]}): not rewritten")
                    return int(
                        conn.execute(
                            sa.select(sa.func.coalesce(sa.func.sum(StoredResultTable.__table__.c.rows), 0)).where(
                                StoredResultTable.__table__.c.asset == asset,
                                StoredResultTable.__table__.c.partition_key == "",
                            )
                        ).scalar_one()
                    )
            text = frame.copy()
            for col in ("partition_key", "audit_id", "provenance_id", "params_hash"):
                if col in text:
                    text[col] = [storable_text(v)[0] if isinstance(v, str) else v for v in text[col]]
            n = result_store.write(conn, asset, text, _keys(keys))
            if shared:
                conn.execute(contents.delete().where(contents.c.table_name == name, contents.c.partition_key == ""))
                conn.execute(
                    contents.insert().values(
                        table_name=name, partition_key="", content_sha256=digest, rows=n, written_at=_now()
                    )
                )
        return n

    def read_tables(
        self, group: ResultGroup, partition_keys: Optional[Iterable[str]] = None
    ) -> dict[tuple[str, str], dict[str, pd.DataFrame]]:
        """``{(partition key, audit id): {table: frame}}``: ``group``'s result tables as stored, typed
        (resources/result_store.py), in the scope of this view."""
        keys = None if partition_keys is None else _keys(partition_keys)
        with self.engine().connect() as conn:
            return result_store.read_tables(conn, group, keys, self._in_scope(StoredResultTable.__table__))

    def partition_tables(self, group: ResultGroup, key: str) -> dict[str, pd.DataFrame]:
        """One partition's result tables of ``group`` (``{table: frame}``; empty when none is stored),
        read from their typed tables, as ``core.common.tables.from_long(read_rows(group, [key]))`` would give
        them, without the long form in between."""
        found = self.read_tables(group, [key])
        return next(iter(found.values())) if found else {}

    def read_rows(self, model: Type[SQLModel], partition_keys: Optional[Iterable[str]] = None) -> pd.DataFrame:
        """The rows of ``model``'s table (of ``partition_keys``; all when None), in the scope of this view.
        A :class:`ResultGroup` is read from its typed tables and given back in core.common.tables long form,
        one block per partition with its partition_key, audit_id, provenance_id and params_hash."""
        if isinstance(model, ResultGroup):
            keys = None if partition_keys is None else _keys(partition_keys)
            with self.engine().connect() as conn:
                return result_store.read_long(conn, model, keys, self._in_scope(StoredResultTable.__table__))
        table = model.__table__
        q = self._scoped(table, sa.select(table))
        if partition_keys is not None:
            q = q.where(table.c.partition_key.in_(_keys(partition_keys)))
        with self.engine().connect() as conn:
            df = pd.read_sql(q.order_by(*table.primary_key.columns), conn)
        return df

    def distinct(self, model: Type[SQLModel], columns: Sequence[str]) -> pd.DataFrame:
        """The distinct combinations of ``columns`` in ``model``'s table (e.g. for provenance); for a
        :class:`ResultGroup`, of its stored tables' partition_key / audit_id / provenance_id / params_hash."""
        if isinstance(model, ResultGroup):
            registry = StoredResultTable.__table__
            q = self._scoped(
                registry,
                sa.select(*[registry.c[c] for c in columns]).where(registry.c.asset.in_(model.assets)).distinct(),
            )
            with self.engine().connect() as conn:
                return pd.read_sql(q, conn)
        table = model.__table__
        q = self._scoped(table, sa.select(*[table.c[c] for c in columns]).distinct())
        with self.engine().connect() as conn:
            return pd.read_sql(q, conn)

    def append_rows(self, model: Type[SQLModel], df: pd.DataFrame, run_id: Optional[str] = None) -> int:
        """Insert rows (no replacement) in one transaction: a crash loses at most this call.
        ``run_id``: commit only if that run still holds the leases of the rows' partitions
        (resources/partition_lease.verify)."""
        table = model.__table__
        cols = [c.name for c in table.columns if c.name != "id" and c.name in df.columns]
        records = _records(df, cols, table.name)
        if records:
            with self.engine().begin() as conn:
                if run_id is not None and "partition_key" in df:
                    from .partition_lease import verify

                    verify(conn, [str(k) for k in df["partition_key"].unique()], run_id)
                conn.execute(table.insert(), records)
        return len(records)

    def existing_values(self, model: Type[SQLModel], column: str, partition_keys: Iterable[str], **equal) -> set:
        """Distinct values of ``column`` among the rows of ``partition_keys`` (and ``equal`` filters)."""
        table = model.__table__
        q = self._scoped(
            table, sa.select(table.c[column]).where(table.c.partition_key.in_(_keys(partition_keys))).distinct()
        )
        for k, v in equal.items():
            q = q.where(table.c[k] == _keys([v])[0])
        with self.engine().connect() as conn:
            return {r[0] for r in conn.execute(q)}

    def archive_audit(
        self, partition_key: str, audit_id: str, headline: pd.DataFrame, provenance_id: str = "", audit_base: str = ""
    ) -> int:
        """Keep ``headline`` (core.scoring.drift.headline_metrics) as the record of audit ``audit_id`` of
        ``partition_key``; rerunning the same audit replaces its record, other audits stay."""
        table = AuditMetric.__table__
        frame = headline.assign(
            partition_key=partition_key,
            audit_id=audit_id,
            provenance_id=provenance_id,
            recorded_at=_now(),
            audit_base=audit_base or audit_id,
        )
        records = _records(
            frame,
            [
                "partition_key",
                "audit_id",
                "audit_base",
                "provenance_id",
                "recorded_at",
                "scope",
                "group_by",
                "group",
                "metric",
                "value",
            ],
            table.name,
        )
        partition_key, audit_id = _keys([partition_key, audit_id])
        with self.engine().begin() as conn:
            conn.execute(table.delete().where(table.c.partition_key == partition_key, table.c.audit_id == audit_id))
            if records:
                conn.execute(table.insert(), records)
        return len(records)

    def audit_history(self, partition_key: str) -> pd.DataFrame:
        """Every archived audit of ``partition_key``: its headline rows with ``recorded_at``."""
        table = AuditMetric.__table__
        q = (
            sa.select(table)
            .where(table.c.partition_key == _keys([partition_key])[0])
            .order_by(table.c.recorded_at, table.c.id)
        )
        with self.engine().connect() as conn:
            return pd.read_sql(q, conn)

    def read_tag_cache(self, tagger: str, programs: Iterable[str]) -> dict[str, tuple[str, ...]]:
        """Cached tags of ``tagger`` for the given normalised program names."""
        table = SubjectTagCache.__table__
        names = list(dict.fromkeys(_keys(p for p in programs if p)))
        out: dict[str, tuple[str, ...]] = {}
        with self.engine().connect() as conn:
            for start in range(0, len(names), 5000):
                chunk = names[start : start + 5000]
                q = sa.select(table.c.program_norm, table.c.tags).where(
                    (table.c.tagger == tagger) & table.c.program_norm.in_(chunk)
                )
                out.update({p: tuple(json.loads(t)) for p, t in conn.execute(q)})
        return out

    def write_tag_cache(self, tagger: str, tags: dict[str, tuple[str, ...]]) -> int:
        """Add cache entries (existing ones for the same program and tagger are kept)."""
        if not tags:
            return 0
        table = SubjectTagCache.__table__
        stored = {k: t for k, t in zip(_keys(tags), tags.values(), strict=False)}  # keys as the database stores them
        existing = self.read_tag_cache(tagger, stored.keys())
        new = [
            {"program_norm": p, "tagger": tagger, "tags": json.dumps(list(t)), "created_at": _now()}
            for p, t in stored.items()
            if p not in existing
        ]
        if new:
            with self.engine().begin() as conn:  # another run may cache the same program meanwhile: kept once
                for start in range(0, len(new), 5000):
                    _insert_ignoring_duplicates(conn, table, new[start : start + 5000])
        return len(new)

    def record_outcomes(self, run_id: str, asset: str, outcomes: dict[str, tuple[str, str]]) -> None:
        """Record ``{partition key: (status, reason)}`` of ``asset`` in run ``run_id`` (PartitionOutcome)."""
        rows = [
            {
                "run_id": run_id,
                "partition_key": k,
                "asset": asset,
                "status": status,
                "reason": reason[:4000],
                "recorded_at": _now(),
            }
            for k, (status, reason) in outcomes.items()
        ]
        rows = [dict(zip(r, _keys(r.values()), strict=False)) for r in rows]
        if rows:
            with self.engine().begin() as conn:
                _insert_ignoring_duplicates(conn, PartitionOutcome.__table__, rows)

    def run_outcomes(self, run_id: str) -> pd.DataFrame:
        """The partitions of run ``run_id`` that an asset failed, skipped or blocked, in order."""
        table = PartitionOutcome.__table__
        q = sa.select(table).where(table.c.run_id == run_id).order_by(table.c.recorded_at, table.c.partition_key)
        with self.engine().connect() as conn:
            return pd.read_sql(q, conn)

    def count(self, model: Type[SQLModel]) -> int:
        table = model.__table__
        with self.engine().connect() as conn:
            return int(conn.execute(sa.select(sa.func.count()).select_from(table)).scalar_one())

    def dispose(self) -> None:
        if self._engine is not None:
            self._engine.dispose()
            self._engine = None


# Alembic's migration context (``alembic.context``, ``alembic.op``) is one per process: threads of one
# process (two `score` calls of a library user) opening databases at once upgrade them in turn
_MIGRATION_LOCK = threading.Lock()


def _create_tables(engine: sa.Engine) -> None:
    """Bring the database to the newest schema revision (Alembic, resources/migrations): a fresh
    database is created, one made by an earlier release is upgraded with its rows kept; parallel
    steps opening it at once are serialised by a lock (docs/architecture.md, "Schema migrations"),
    threads of one process by :data:`_MIGRATION_LOCK`."""
    from .migrations import upgrade

    with _MIGRATION_LOCK:
        upgrade(engine)


def _with_driver(url: str) -> str:
    """``postgresql://`` means psycopg2 here (SQLAlchemy 2.1 would pick psycopg 3, not installed)."""
    for prefix in ("postgresql://", "postgres://"):
        if url.startswith(prefix):
            return "postgresql+psycopg2://" + url[len(prefix) :]
    return url


def redact(url: str) -> str:
    """A URL (or a text holding URLs) with its password hidden, for logs and the UI; parseable or
    not, never the raw string (resources.secrets.redact)."""
    from .secrets import redact as _redact

    return _redact(url)


# ----------------------------------------------------------------------------- IO manager
class SQLResultsIOManager(ConfigurableIOManager):
    """Stores asset frames in their sqlmodel table and loads them back.

    A frame carries its ``provenance_id`` column (see :meth:`ResultsDatabase.record_provenance`);
    the id links each row to what produced it.
    """

    database: ResultsDatabase

    def _model(self, asset_name: str) -> Type[SQLModel]:
        if asset_name not in TABLES:
            raise KeyError(f"no results table registered for asset {asset_name!r}")
        return TABLES[asset_name]

    @staticmethod
    def _partitions(context) -> list[str]:
        if context.has_asset_partitions:
            return list(context.asset_partition_keys)
        return [""]

    def _claim(self, context, keys: list[str]) -> None:
        """One writer per partition: fail if another live run holds one of ``keys`` (resources/partition_lease.py)."""
        if keys == [""]:
            return
        from .partition_lease import claim, keep_alive, run_finished_from, run_status_from

        step = context.step_context
        claim(self.database.engine(), keys, step.run_id, run_status_from(step.instance), warn=context.log.warning)
        keep_alive(self.database.engine(), keys, step.run_id, run_finished_from(step.instance, step.run_id))

    def handle_output(self, context: OutputContext, obj: pd.DataFrame) -> None:
        if obj is None:
            return
        keys = self._partitions(context)
        self._claim(context, keys)
        name = context.asset_key.path[-1]
        context.add_output_metadata(table_metadata(name))  # the UI shows the stored table and its columns
        if keys != [
            ""
        ]:  # a partition this asset could not produce in the run keeps its earlier rows (defs/isolation.py)
            outcomes = self.database.run_outcomes(context.step_context.run_id)
            lost = set(outcomes.loc[outcomes["asset"] == context.asset_key.to_user_string(), "partition_key"])
            if lost & set(keys):
                keys = [k for k in keys if k not in lost]
                if "partition_key" in obj:
                    obj = obj[obj["partition_key"].isin(keys)]
                context.log.warning(
                    f"{name}: not stored for partition(s) {sorted(lost)} "
                    "(failed or skipped in this run; their earlier rows, if any, are kept)"
                )
                if not keys:
                    return
        model = self._model(name)
        run_id = context.step_context.run_id if keys != [""] else None
        if isinstance(model, ResultGroup):  # its tables, each in its typed SQL table (resources/result_store.py)
            n = self.database.replace_result_tables(name, obj, keys, run_id=run_id, log_fn=context.log.info)
            where = f"{len(result_tables_of(name))} typed result tables"
        else:
            n = self.database.replace_rows(model, obj, keys, run_id=run_id, log_fn=context.log.info)
            where = model.__tablename__
        context.log.info(f"stored {n} row(s) of {name} in table {where} at {self.database.describe()}")

    def load_input(self, context: InputContext) -> pd.DataFrame:
        name = context.upstream_output.asset_key.path[-1] if context.upstream_output else context.asset_key.path[-1]
        model = self._model(name)
        keys = self._partitions(context)
        self._claim(context, keys)
        if isinstance(model, ResultGroup):  # only this asset's tables, in long form
            df = self.database.read_rows(ResultGroup(model.name, (name,)), keys)
        else:
            df = self.database.read_rows(model, keys)
        drop = [c for c in ["id"] + (["partition_key"] if keys == [""] else []) if c in df]
        return df.drop(columns=drop)


def result_tables_of(asset: str) -> tuple:
    """The catalogue's tables of ``asset`` (core/common/result_tables.py)."""
    from fairness_assets.core.common import result_tables

    return result_tables.of_asset(asset)


__all__ = [
    "TABLES",
    "ResultsDatabase",
    "SQLResultsIOManager",
    "Provenance",
    "results_dir",
]


def code_version() -> str:
    """Package version, plus the git commit when running from a checkout."""
    from importlib import metadata
    from pathlib import Path

    try:
        version = metadata.version("fairness-audit")
    except metadata.PackageNotFoundError:
        version = "0+unknown"
    head = Path(__file__).resolve().parents[1] / ".git" / "HEAD"
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
    from .settings import stable_hash

    fields.setdefault("code_version", code_version())
    fields.setdefault("library_versions", library_versions())
    for key in ("template_hashes", "config_json", "library_versions"):
        if key in fields and not isinstance(fields[key], (str, type(None))):
            fields[key] = json.dumps(fields[key], sort_keys=True)
    pid = stable_hash({"asset": asset, **fields})
    return Provenance(provenance_id=pid, asset=asset, **fields)
