"""The one configuration model: every ``FAIRNESS_*`` environment variable, typed, with its
default, its meaning, where it is used and when it is read.

docs/configuration.md is generated from this class (``python docs/build_configuration.py``);
a test fails when the committed page differs from what the class says.

When a variable is read (``read`` of each field, shown in the page):

- ``run``: ``build_resources()`` hands the resource a ``dagster.EnvVar`` when the variable is set
  where the code location loads,
  so Dagster reads the value when a run starts (and the UI shows the variable's name, never its
  value). Only strings and integers can be passed that way.
- ``load``: read when the code location loads (``build_resources()``, the executor, the schedule,
  the Kubernetes tags are part of the definitions); reload the code location after a change.
  Floats and booleans are read this way (Dagster has no float or boolean ``EnvVar``).
- ``use``: read by the module each time it needs the value.

Each method parameter has one definition: the defaults of R_min/R_max and of the lambdas are
the core's (``RepParams``, ``DEFAULT_LAMBDAS``), every resource field that a variable sets takes
its default from here, and ``build_resources()`` passes every value from here.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from functools import lru_cache
from typing import Any, Literal

from pydantic import Field, SecretStr, ValidationError, field_validator, model_validator
from pydantic_settings import BaseSettings, SettingsConfigDict

from fairness_assets.core.reference.corpus import RepParams
from fairness_assets.core.scoring.metrics import DEFAULT_LAMBDAS

from .base import ConfigError
from .paths import MODEL_REGISTRY, TEMPLATES_DIR

ENV_PREFIX = "FAIRNESS_"
RUN, LOAD, USE = "run", "load", "use"
READ_MEANING = {
    RUN: "at run time (an `EnvVar`: Dagster reads its value when a run starts; set it where the code location "
    "loads too, or the default is used)",
    LOAD: "when the code location loads (reload it after a change)",
    USE: "each time the module needs it",
}
GROUPS = {
    "storage": "Data and results",
    "grid": "Audit grid",
    "generation": "Generation and tagging",
    "scoring": "Scoring (METHOD.md §5-6)",
    "alerts": "Alerts",
    "operations": "Execution and schedule",
}
DEFAULT_CRON = "0 6 * * 1"
DEFAULT_BROKER = "pyamqp://guest@127.0.0.1//"
DEFAULT_REPORT_PORT = 3080  # not the Dagster UI's 3000, nor 3001 that docs use for a second UI


def setting(
    default: Any,
    description: str,
    *,
    group: str,
    read: str,
    used_by: str,
    targets: tuple[tuple[str, str], ...] = (),
    secret: bool = False,
    **constraints,
):
    """A field of the settings model with what the documentation needs: its group, when it is
    read, where it is used and which resource fields (``(resource key, field)``) it sets."""
    assert group in GROUPS and read in READ_MEANING
    assert not (secret and read != RUN), "a secret must reach its resource as an EnvVar"
    return Field(
        default,
        description=description,
        json_schema_extra={
            "group": group,
            "read": read,
            "used_by": used_by,
            "targets": [list(t) for t in targets],
            "secret": secret,
        },
        **constraints,
    )


class FairnessSettings(BaseSettings):
    """Every deployment setting of the audit; each field is read from ``FAIRNESS_<FIELD>``."""

    model_config = SettingsConfigDict(
        env_prefix=ENV_PREFIX, env_ignore_empty=True, extra="ignore", str_strip_whitespace=True, frozen=True
    )

    # ------------------------------------------------------------------ data and results
    home: str = setting(
        "",
        "Folder of the SQLite results database (`results.db`) and of the reports; empty: `data/results`.",
        group="storage",
        read=USE,
        used_by="`resources.settings.results_dir()`: the default database URL and report folder; the command line",
    )
    database_url: SecretStr = setting(
        SecretStr(""),
        "Results database URL (SQLAlchemy; PostgreSQL in production); empty: SQLite file "
        "`results.db` in `FAIRNESS_HOME`. May hold a password: never shown in the UI.",
        group="storage",
        read=RUN,
        secret=True,
        targets=(("database", "url"),),
        used_by="every asset (results tables, provenance); `resources/migrations`",
    )
    reports_dir: str = setting(
        "",
        "Folder for figures and reports; empty: `$FAIRNESS_HOME/reports`. A shared volume when steps run "
        "on several machines.",
        group="storage",
        read=RUN,
        targets=(("report_settings", "output_dir"),),
        used_by="assets `audit_report`, the figures",
    )
    report_port: int = setting(
        DEFAULT_REPORT_PORT,
        "Local port on which `fairness-audit ui` serves the reports folder, read-only, "
        "beside the Dagster UI (`http://127.0.0.1:<port>/<report id>/report.html`); the links in the metadata of "
        "`audit_report` and `audit_figures` point there unless `FAIRNESS_REPORT_BASE_URL` is set.",
        group="storage",
        read=RUN,
        targets=(("report_settings", "port"),),
        ge=1,
        le=65535,
        used_by="`fairness-audit ui` (the report server); assets `audit_report`, `audit_figures` (their links)",
    )
    figure_workers: int = setting(
        0,
        "Processes working on several partitions at once (drawing their figures, testing their statistics, "
        "comparing the models of each template, re-scoring them for the sensitivity, digesting them and drawing "
        "the comparisons for the report; started "
        "once a run's process, each job under the audit's design): 0, one per CPU core (at most 8); 1, in the "
        "step's own process, with no process to start (the faster choice where the cores are busy with other "
        "work, as in the test suite, which sets 1).",
        group="storage",
        read=RUN,
        targets=(("report_settings", "figure_workers"),),
        ge=0,
        used_by="assets `audit_figures`, `audit_statistics`, `model_comparison`, `sensitivity`, `audit_report`",
    )
    report_layout: Literal["auto", "single", "pages"] = setting(
        "auto",
        "How `audit_report` writes the report: `single`, one self-contained `report.html` (every figure embedded) "
        "and its Markdown twin; `pages`, an index `report.html` (the scorecard, the summary, the comparisons, a "
        "link to each model) and one page per model under `models/`, the figures as PNG files beside them; "
        "`auto`, one file up to 18 partitions and pages beyond (a single file of 162 partitions takes a browser "
        'many seconds to open: docs/benchmarks.md, "Opening the report").',
        group="storage",
        read=RUN,
        targets=(("report_settings", "layout"),),
        used_by="asset `audit_report`",
    )
    comparison_pairs: Literal["auto", "all", "reference"] = setting(
        "auto",
        "Which pairs of models `model_comparison` and `sensitivity` compare on a template: `all`, every pair "
        "(M(M-1)/2: the leaderboard's rank ranges rest on every pair); `reference`, each model with the "
        "reference model (M-1 pairs: the cost grows linearly with the models, and a rank range counts only the "
        "comparisons with the reference); `auto`, every pair up to 8 models on a template and the reference "
        'beyond (docs/statistics.md, "Comparing models").',
        group="scoring",
        read=RUN,
        targets=(("report_settings", "comparison_pairs"),),
        used_by="assets `model_comparison`, `sensitivity`",
    )
    comparison_reference: str = setting(
        "",
        "The reference model of `FAIRNESS_COMPARISON_PAIRS=reference` (and of `auto` beyond 8 models): a model of "
        "the registry; empty, the design's first model that has the template scored, else the first in name order.",
        group="scoring",
        read=RUN,
        targets=(("report_settings", "comparison_reference"),),
        used_by="assets `model_comparison`, `sensitivity`",
    )
    report_base_url: str = setting(
        "",
        "Where a deployment publishes the reports folder (object storage or a web server serving it as it "
        "is, e.g. `https://reports.example.org/fairness`): the links in the metadata become `<url>/<report "
        "id>/report.html` and `<url>/figures/<figure>.png`, and `fairness-audit ui` starts no report server. "
        "Empty: the local server of `FAIRNESS_REPORT_PORT`.",
        group="storage",
        read=RUN,
        targets=(("report_settings", "base_url"),),
        used_by="assets `audit_report`, `audit_figures` (their links); `fairness-audit ui`",
    )
    gate_file: str = setting(
        "",
        'A release-gate file (YAML, docs/operations.md "Release gate"): the baseline and candidate '
        "models and the metrics and gaps the candidate must not make worse; checked by the blocking "
        "asset checks `release_gate` of `model_comparison` and `release_gate_robust` of `sensitivity`, which "
        "exist only while a gate file is set (set or unset it, then reload the code location); empty: no gate "
        "and no gate check, so nothing reads as a passed gate.",
        group="storage",
        read=LOAD,
        targets=(("report_settings", "gate_file"),),
        used_by="asset checks `release_gate`, `release_gate_robust` (made when set), asset `model_comparison`, the "
        "report",
    )
    sensitivity_lambdas: str = setting(
        "",
        "A lambda triple of your own for the sensitivity grid, per km for the values of the design's lambda "
        "axis in its order (the study's three classes: `0.0002,0.001,0.002`), re-scored beside lambda x0.5, "
        "x2 and R_max 1000, 1500; empty: those four settings only.",
        group="scoring",
        read=RUN,
        targets=(("report_settings", "sensitivity_lambdas"),),
        used_by="asset `sensitivity`",
    )
    sensitivity_ranking: str = setting(
        "",
        "A second ranking file (CSV: a THE or ARWU export) for the sensitivity grid: the recommendations are "
        "matched to it again and re-scored with its ranks; empty: no second ranking. Its columns are read through "
        "`FAIRNESS_SENSITIVITY_RANKING_COLUMNS`.",
        group="scoring",
        read=RUN,
        targets=(("report_settings", "sensitivity_ranking"),),
        used_by="asset `sensitivity`",
    )
    sensitivity_ranking_columns: str = setting(
        "name=Name,rank=Rank,country=Location",
        "Column mapping of the second ranking file: "
        "`name=<column>,rank=<column>,country=<column>` (THE: `name=Name,rank=Rank,country=Location`; ARWU: "
        "`name=University,rank=World Rank,country=Country/Region`).",
        group="scoring",
        read=RUN,
        targets=(("report_settings", "sensitivity_ranking_columns"),),
        used_by="asset `sensitivity`",
    )
    qs_corpus: str = setting(
        "",
        "Path to your QS World University Rankings CSV export; empty: the illustrative demo corpus "
        "(`data/demo`, not the QS ranking).",
        group="storage",
        read=RUN,
        targets=(("reference", "corpus_path"),),
        used_by="asset `qs_corpus` (and through it every later table)",
    )
    responses: str = setting(
        "",
        "A bring-your-own responses file (CSV, JSONL or Parquet, docs/responses_format.md) imported instead "
        "of generating; empty: generate with the models.",
        group="storage",
        read=RUN,
        targets=(("generation_source", "responses_path"),),
        used_by="asset `generations`",
    )
    staging_dir: str = setting(
        "",
        "Folder where a responses file is converted once into Parquet files, one per model x template, so "
        "that each run reads only its own partitions (not the whole file); reused while the file is unchanged "
        "(same path, size, modification time and SHA-256), in its subfolder `staged-responses`. Empty: "
        "`FAIRNESS_HOME`. A shared volume when steps run on several machines.",
        group="storage",
        read=RUN,
        targets=(("generation_source", "staging_dir"),),
        used_by="asset `generations`; `fairness-audit score`",
    )

    # ------------------------------------------------------------------ audit grid
    design: str = setting(
        "demo",
        "The audit's design: a name in `data/designs` (`demo`, `study`, `beyond_study`, `advisor`) or the path "
        "of a design file of your own (docs/designs.md): its axes, templates, grid, runs and models.",
        group="grid",
        read=RUN,
        targets=(("audit_grid", "design"),),
        used_by="assets `country_geography`, `profiles`, `prompts`, `generations`, the understanding and report "
        "assets; job `demo_audit`; the `reaudit` schedule (`study_audit` always runs `study`); "
        "`fairness-audit design show`",
    )
    max_prompts: int = setting(
        100_000,
        "The largest grid a design may ask one model, in prompts (profiles x templates); a larger design is "
        "refused, with its size, before anything is generated.",
        group="grid",
        read=RUN,
        targets=(("audit_grid", "max_prompts"),),
        ge=1,
        used_by="assets `profiles`, `prompts`, `generations`; `fairness-audit design show`, `score`",
    )
    max_items: int = setting(
        3,
        "k of METHOD.md §9: the first k distinct items of an answer are scored (the study asks for three); the "
        "rest are counted per answer (`n_items_left_out`) and reported, never dropped silently.",
        group="grid",
        read=RUN,
        targets=(("audit_grid", "max_items"),),
        ge=1,
        used_by="asset `recommendations` (and so `fairness-audit score`); the report's provenance",
    )
    model_registry: str = setting(
        str(MODEL_REGISTRY),
        "Model registry YAML (docs/generation.md).",
        group="grid",
        read=RUN,
        targets=(("audit_grid", "model_registry_path"), ("llm", "registry_path")),
        used_by="asset `generations`, the LLM tagger; job `study_audit` passes it on in its run config",
    )
    templates_dir: str = setting(
        str(TEMPLATES_DIR),
        "Folder of the prompt templates (one YAML file per template, and "
        "`format_instruction.txt`). Its templates are the 'template' partitions, so it is read when the code "
        "location loads: the partitions and the assets read the same folder.",
        group="grid",
        read=LOAD,
        targets=(("reference", "templates_dir"), ("audit_grid", "templates_dir")),
        used_by="the 'template' partitions (`fairness_assets/defs/partitions.py`); assets `prompts`, `generations` "
        "(the templates of an imported responses file), `drs_scores`; `fairness-audit score`",
    )

    # ------------------------------------------------------------------ generation and tagging
    device: str = setting(
        "auto",
        "Where transformers models run: `auto` (CUDA when available), `cpu` or `cuda`.",
        group="generation",
        read=RUN,
        targets=(("llm", "device"),),
        used_by="asset `generations`, the LLM tagger",
    )
    llm_api_key: SecretStr = setting(
        SecretStr(""),
        "API key for OpenAI-compatible endpoints; never shown in the UI or in error messages.",
        group="generation",
        read=RUN,
        secret=True,
        targets=(("llm", "api_key"),),
        used_by="asset `generations` (backend `openai`)",
    )
    llm_max_concurrency: int = setting(
        384,
        "Requests in flight to an OpenAI-compatible endpoint (a serving engine needs hundreds; about 1.5x the "
        "engine's running sequences keeps its queue full; lower it for hosted APIs).",
        group="generation",
        read=RUN,
        targets=(("llm", "max_concurrency"),),
        ge=1,
        used_by="asset `generations` (backend `openai`)",
    )
    llm_requests_per_minute: int = setting(
        0,
        "Request-rate limit for hosted APIs, per minute; 0: none.",
        group="generation",
        read=RUN,
        targets=(("llm", "requests_per_minute"),),
        ge=0,
        used_by="asset `generations` (backend `openai`)",
    )
    llm_request_timeout_s: float = setting(
        300.0,
        "Seconds one attempt of a request to an OpenAI-compatible endpoint may take: to connect, and for each "
        "wait on the answer's bytes (for an answer that is not streamed, its whole generation); an attempt that "
        "takes longer fails and is retried (5 retries at most) as far as `FAIRNESS_LLM_REQUEST_BUDGET_S` allows.",
        group="generation",
        read=LOAD,
        targets=(("llm", "request_timeout_s"),),
        gt=0,
        allow_inf_nan=False,
        used_by="asset `generations` (backend `openai`) and its endpoint check (`GET /models`)",
    )
    llm_request_budget_s: float = setting(
        1800.0,
        "Seconds one request to an OpenAI-compatible endpoint may take in all, its retries and the waits between "
        "them included: a retry whose wait plus `FAIRNESS_LLM_REQUEST_TIMEOUT_S` would end past it is not "
        "started, and the request fails naming the sample, its attempts and the time spent (with the defaults, "
        "5 attempts that each run to the timeout fit, not 6). At least `FAIRNESS_LLM_REQUEST_TIMEOUT_S`.",
        group="generation",
        read=LOAD,
        targets=(("llm", "request_budget_s"),),
        gt=0,
        allow_inf_nan=False,
        used_by="asset `generations` (backend `openai`) and its endpoint check (`GET /models`)",
    )
    model_cache: str = setting(
        "",
        "Cache folder of the built-in CPU model assembled from its PyPI parts; empty: "
        "`~/.cache/fairness-audit/models`.",
        group="generation",
        read=USE,
        used_by="`resources/llm/builtin.py`",
    )
    tagger: str = setting(
        "rules",
        "Subject tagger of program names: `rules` (deterministic keywords) or `llm` (few-shot prompt).",
        group="generation",
        read=RUN,
        targets=(("subject_tagger", "method"),),
        used_by="asset `subject_tags`",
    )

    # ------------------------------------------------------------------ scoring
    rep_r_min: float = setting(
        RepParams.r_min,
        "R_min of the global reputation scale: Rep = (R_max - R) / (R_max - R_min).",
        group="scoring",
        read=LOAD,
        targets=(("reference", "rep_r_min"),),
        used_by="assets `qs_corpus` (column `rep`) and `drs_scores` (Rep, DRS), hence `analysis_tables` and the "
        "report; not `grs_by_country` (GRS uses the within-country rank scale)",
    )
    rep_r_max: float = setting(
        RepParams.r_max,
        "R_max of the global reputation scale: ranks beyond it get Rep 0.",
        group="scoring",
        read=LOAD,
        targets=(("reference", "rep_r_max"),),
        used_by="assets `qs_corpus` (column `rep`) and `drs_scores` (Rep, DRS), hence `analysis_tables` and the "
        "report; not `grs_by_country` (GRS uses the within-country rank scale)",
    )
    lambda_high: float = setting(
        DEFAULT_LAMBDAS["high"],
        "Acc decay per km of the value `high` of the design's lambda axis (Acc = exp(-lambda d)); left at its "
        "default, the design's lambda of `high` applies.",
        group="scoring",
        read=LOAD,
        targets=(("scoring", "lambda_high"),),
        ge=0,
        used_by="asset `drs_scores` (Acc, DRS) and the tables built on it",
    )
    lambda_middle: float = setting(
        DEFAULT_LAMBDAS["middle"],
        "Acc decay per km of the value `middle` of the design's lambda axis; left at its default, the "
        "design's lambda applies.",
        group="scoring",
        read=LOAD,
        targets=(("scoring", "lambda_middle"),),
        ge=0,
        used_by="asset `drs_scores` (Acc, DRS) and the tables built on it",
    )
    lambda_low: float = setting(
        DEFAULT_LAMBDAS["low"],
        "Acc decay per km of the value `low` of the design's lambda axis; left at its default, the "
        "design's lambda applies.",
        group="scoring",
        read=LOAD,
        targets=(("scoring", "lambda_low"),),
        ge=0,
        used_by="asset `drs_scores` (Acc, DRS) and the tables built on it",
    )

    # ------------------------------------------------------------------ alerts
    alert_channels: str = setting(
        "log",
        "Alert channels, comma-separated: `log`, `webhook`, `email`.",
        group="alerts",
        read=RUN,
        targets=(("alerts", "channels"),),
        used_by="the alert sensors (`resources/alerts.py`)",
    )
    alert_webhook_url: SecretStr = setting(
        SecretStr(""),
        "URL the `webhook` channel POSTs each alert to (often holds a token: never shown).",
        group="alerts",
        read=RUN,
        secret=True,
        targets=(("alerts", "webhook_url"),),
        used_by="the alert sensors",
    )
    smtp_host: str = setting(
        "",
        "SMTP server of the `email` channel.",
        group="alerts",
        read=RUN,
        targets=(("alerts", "smtp_host"),),
        used_by="the alert sensors",
    )
    smtp_port: int = setting(
        25,
        "SMTP port.",
        group="alerts",
        read=RUN,
        targets=(("alerts", "smtp_port"),),
        ge=1,
        used_by="the alert sensors",
    )
    smtp_user: str = setting(
        "",
        "SMTP user (optional).",
        group="alerts",
        read=RUN,
        targets=(("alerts", "smtp_user"),),
        used_by="the alert sensors",
    )
    smtp_password: SecretStr = setting(
        SecretStr(""),
        "SMTP password (optional; never shown).",
        group="alerts",
        read=RUN,
        secret=True,
        targets=(("alerts", "smtp_password"),),
        used_by="the alert sensors",
    )
    smtp_starttls: bool = setting(
        False,
        "Use STARTTLS on the SMTP connection (`1`, `true`, `yes`, `on` / `0`, `false`, `no`, `off`).",
        group="alerts",
        read=LOAD,
        targets=(("alerts", "smtp_starttls"),),
        used_by="the alert sensors",
    )
    alert_email_from: str = setting(
        "fairness-audit@localhost",
        "Sender address of alert e-mails.",
        group="alerts",
        read=RUN,
        targets=(("alerts", "email_from"),),
        used_by="the alert sensors",
    )
    alert_email_to: str = setting(
        "",
        "Recipients of alert e-mails, comma-separated.",
        group="alerts",
        read=RUN,
        targets=(("alerts", "email_to"),),
        used_by="the alert sensors",
    )
    ui_url: str = setting(
        "http://127.0.0.1:3000",
        "Base URL of the Dagster UI the alerts link to (`<url>/runs/<run id>`).",
        group="alerts",
        read=RUN,
        targets=(("alerts", "ui_base_url"),),
        used_by="the alert sensors",
    )

    # ------------------------------------------------------------------ execution and schedule
    executor: Literal["in_process", "multiprocess", "celery", "k8s"] = setting(
        "in_process",
        "How a run executes its steps: `in_process`, `multiprocess`, `celery` (dagster-celery) "
        "or `k8s` (a Kubernetes Job per step, dagster-k8s).",
        group="operations",
        read=LOAD,
        used_by="`fairness_assets/defs/operations/executors.py` (the definitions' executor)",
    )
    celery_broker: str = setting(
        DEFAULT_BROKER,
        "Celery broker URL (`FAIRNESS_EXECUTOR=celery`); workers read it too.",
        group="operations",
        read=LOAD,
        used_by="`fairness_assets/defs/operations/executors.py`",
    )
    celery_backend: str = setting(
        "rpc://",
        "Celery result backend URL.",
        group="operations",
        read=LOAD,
        used_by="`fairness_assets/defs/operations/executors.py`",
    )
    generation_gpu: bool = setting(
        True,
        "Whether the generation step asks Kubernetes for one NVIDIA GPU; `0` when vLLM serves the models.",
        group="operations",
        read=LOAD,
        used_by="`fairness_assets/defs/operations/kubernetes.py` (op tags of `generations`)",
    )
    reaudit_cron: str = setting(
        DEFAULT_CRON,
        "Cron string of the re-audit schedule (default: Mondays 06:00).",
        group="operations",
        read=LOAD,
        used_by="`fairness_assets/defs/operations/schedules.py` (`reaudit_schedule`)",
    )
    asset_owners: str = setting(
        "team:fairness-audit",
        "Owners of every asset in the Dagster catalog: comma-separated e-mail addresses or `team:NAME`.",
        group="operations",
        read=LOAD,
        used_by="`fairness_assets/defs/catalog.py` (the catalog's owners of every asset)",
    )
    reaudit_timezone: str = setting(
        "UTC",
        "Time zone of the re-audit schedule.",
        group="operations",
        read=LOAD,
        used_by="`fairness_assets/defs/operations/schedules.py` (`reaudit_schedule`)",
    )
    partition_lease_ttl_s: float = setting(
        600.0,
        "Seconds after which the lease of a partition held by a run this instance does not know, and "
        "that was not renewed, is taken over.",
        group="operations",
        read=USE,
        gt=0,
        used_by="`resources/partition_lease.py`",
    )

    # ------------------------------------------------------------------ validation
    @field_validator("executor", mode="before")
    @classmethod
    def _lower(cls, value):
        return value.strip().lower() if isinstance(value, str) else value

    @field_validator("report_base_url")
    @classmethod
    def _base_url(cls, value: str) -> str:
        return check_base_url(value)

    @field_validator("reaudit_cron")
    @classmethod
    def _cron(cls, value: str) -> str:
        import dagster as dg

        try:  # Dagster has no public cron validator: a schedule definition accepts exactly what the schedule will
            dg.ScheduleDefinition(name="reaudit_cron_check", cron_schedule=value, job_name="reaudit")
        except dg.DagsterInvalidDefinitionError:
            raise ValueError(f"not a valid cron string (e.g. {DEFAULT_CRON!r}: Mondays 06:00)") from None
        return value

    @model_validator(mode="after")
    def _rep_scale(self):
        if not self.rep_r_max > self.rep_r_min:
            raise ValueError(
                f"FAIRNESS_REP_R_MAX ({self.rep_r_max}) must be greater than FAIRNESS_REP_R_MIN ({self.rep_r_min})"
            )
        return self

    @model_validator(mode="after")
    def _request_budget(self):
        if self.llm_request_budget_s < self.llm_request_timeout_s:
            raise ValueError(
                f"FAIRNESS_LLM_REQUEST_BUDGET_S ({self.llm_request_budget_s:g}) must be at least "
                f"FAIRNESS_LLM_REQUEST_TIMEOUT_S ({self.llm_request_timeout_s:g}): the budget of a request, its "
                "retries included, has to hold one attempt"
            )
        return self

    # ------------------------------------------------------------------ what the code location needs
    @classmethod
    def env_name(cls, field: str) -> str:
        return ENV_PREFIX + field.upper()

    def is_set(self, field: str) -> bool:
        """Whether the variable was set (non-empty) in the environment this model was read from."""
        return field in self.model_fields_set

    def value(self, field: str) -> Any:
        """The plain value (secrets unwrapped: only for code that must use them, never for display)."""
        value = getattr(self, field)
        return value.get_secret_value() if isinstance(value, SecretStr) else value

    def resource_value(self, field: str, env_vars: bool = True) -> Any:
        """What a resource field receives: an ``EnvVar`` for a variable read at run time that is set
        (Dagster reads it when a run starts), else the value of this model. ``env_vars=False``: the
        value of this model always (settings built in process, e.g. from a command line's arguments,
        that the environment does not hold)."""
        info = field_specs()[field]
        if env_vars and info.read == RUN and self.is_set(field):
            import dagster as dg

            return dg.EnvVar.int(self.env_name(field)) if info.type is int else dg.EnvVar(self.env_name(field))
        return self.value(field)

    def resource_config(self, resource_key: str, env_vars: bool = True) -> dict[str, Any]:
        """Keyword arguments of the resource ``resource_key`` that the variables set (``env_vars``:
        see :meth:`resource_value`)."""
        return {
            attr: self.resource_value(spec.name, env_vars)
            for spec in field_specs().values()
            for key, attr in spec.targets
            if key == resource_key
        }

    def run_config(self, resource_key: str) -> dict[str, Any]:
        """Run config of the resource ``resource_key`` for the variables that are set (``{"env": name}``
        for those read at run time): a job whose run config replaces a resource's values passes these on."""
        return {
            attr: {"env": spec.env} if spec.read == RUN else self.value(spec.name)
            for spec in field_specs().values()
            for key, attr in spec.targets
            if key == resource_key and self.is_set(spec.name)
        }


def check_base_url(value: str) -> str:
    """A report base URL as used (no trailing ``/``; empty stays empty), or ``ValueError`` saying
    what is wrong: it must be an ``http`` or ``https`` URL with a host, without query or fragment
    (the report's path is appended to it)."""
    from urllib.parse import urlsplit

    value = (value or "").strip()
    if not value:
        return ""
    parts = urlsplit(value)
    if parts.username is not None or parts.password is not None:
        # the links are shown in the UI's metadata to every reader: credentials there would leak
        raise ValueError(
            f"the URL of host {parts.hostname!r} holds a user name or password: the report links are "
            "shown in the UI, so publish the reports where they can be read without credentials in the URL"
        )
    if parts.scheme not in ("http", "https") or not parts.netloc:
        raise ValueError(f"{value!r} is not an http(s) URL with a host (e.g. https://reports.example.org/fairness)")
    if parts.query or parts.fragment:
        raise ValueError(f"{value!r} has a query or a fragment: the report's path is appended to it")
    return value.rstrip("/")


@dataclass(frozen=True)
class FieldSpec:
    """One variable, as the documentation and ``build_resources()`` see it."""

    name: str
    env: str
    type: Any
    default: Any
    description: str
    group: str
    read: str
    used_by: str
    targets: tuple[tuple[str, str], ...]
    secret: bool


@lru_cache(maxsize=1)
def field_specs() -> dict[str, FieldSpec]:
    out = {}
    for name, info in FairnessSettings.model_fields.items():
        extra = info.json_schema_extra or {}
        default = info.default.get_secret_value() if isinstance(info.default, SecretStr) else info.default
        out[name] = FieldSpec(
            name=name,
            env=FairnessSettings.env_name(name),
            type=str if info.annotation is SecretStr else info.annotation,
            default=default,
            description=info.description or "",
            group=extra["group"],
            read=extra["read"],
            used_by=extra["used_by"],
            targets=tuple(tuple(t) for t in extra["targets"]),
            secret=extra["secret"],
        )
    return out


def default_of(field: str) -> Any:
    """The default of a variable (for the resource fields it sets: one definition)."""
    return field_specs()[field].default


def load_settings(**values: Any) -> FairnessSettings:
    """The settings as the environment says now, with ``values`` (by field name, e.g.
    ``qs_corpus=...``: a command line's arguments) taking the place of the variables; the
    environment is only read, never changed. A bad value raises :class:`ConfigError` naming the
    variable and the value."""
    unknown = sorted(set(values) - set(FairnessSettings.model_fields))
    if unknown:
        raise ConfigError(
            f"unknown setting(s) {unknown}; the settings are the fields of FairnessSettings (docs/configuration.md)"
        )
    try:
        return FairnessSettings(**values)
    except ValidationError as exc:
        problems = []
        for err in exc.errors():
            loc = [str(p) for p in err.get("loc", ()) if p != "__root__"]
            if loc:
                name = FairnessSettings.env_name(loc[0])
                raw = values[loc[0]] if loc[0] in values else os.environ.get(name, err.get("input"))
                # a secret is never shown; any other value with its URL passwords masked (a URL setting may hold one)
                from resources.secrets import redact

                shown = (
                    "***"
                    if field_specs().get(loc[0]) and field_specs()[loc[0]].secret
                    else (redact(raw) if isinstance(raw, str) else raw)
                )
                problems.append(f"{name}={shown!r}: {redact(str(err['msg']))}")
            else:
                problems.append(err["msg"])
        raise ConfigError("invalid configuration: " + "; ".join(problems)) from None
