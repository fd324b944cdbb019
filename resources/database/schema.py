"""The results database's tables: one SQLModel table per stored asset, the provenance records, the
shared-table content hashes, the partition outcomes, and the groups of typed result tables
(resources/result_store.py); :data:`TABLES` maps each asset to where it is stored.

Every table registers itself in ``SQLModel.metadata`` on import, which the schema migrations
(resources/migrations) compare with the database.
"""

from __future__ import annotations

from datetime import datetime, timezone
from typing import Optional, Type

import sqlalchemy as sa
from sqlmodel import Field, SQLModel

from ..result_store import ResultGroup

# the students' axes of the design, packed (resources/database/attributes.py; issue 34)
ATTRIBUTES_DOC = (
    "JSON {axis: value or null}: the student's value of each axis of the design, in the design's order "
    "(read back as one column per axis)"
)


def _now() -> datetime:
    return datetime.now(timezone.utc)


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
    is_home: bool
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
    attributes: Optional[str] = Field(default=None, description=ATTRIBUTES_DOC)  # migration 0012
    home_iso3: Optional[str] = Field(default=None, max_length=3)
    # the student's region (data/regions/regions.csv, versioned; migration 0004)
    region: Optional[str] = None
    north_south: Optional[str] = None
    # the name a named profile is called by (core/reference/names.py; migration 0014)
    student_name: Optional[str] = None


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
    attributes: Optional[str] = Field(default=None, description=ATTRIBUTES_DOC)  # migration 0012
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
    attributes: Optional[str] = Field(default=None, description=ATTRIBUTES_DOC)  # migration 0012
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
    attributes: Optional[str] = Field(default=None, description=ATTRIBUTES_DOC)  # migration 0012
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
