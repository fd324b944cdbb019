"""Statistics and report settings (docs/statistics.md)."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Literal
from urllib.parse import quote

from dagster import ConfigurableResource
from pydantic import Field

from .base import ConfigError
from .model import check_base_url, default_of
from .paths import results_dir

LOCAL_HOST = "127.0.0.1"  # where `fairness-audit ui` serves the reports folder


class ReportResource(ConfigurableResource):
    """Statistics and report settings (docs/statistics.md); recorded in every report."""

    n_boot: int = Field(default=2000, description="Bootstrap resamples for every interval.")
    n_perm: int = Field(default=10_000, description="Sign-flip permutations (exact enumeration when fewer suffice).")
    seed: int = Field(default=0, description="Seed of every resampling (results are reproducible).")
    level: float = Field(default=0.95, description="Confidence level of the intervals.")
    correction: Literal["holm", "bh"] = Field(default="holm", description="Multiple-comparison correction: holm or bh.")
    alpha: float = Field(default=0.05, description="Significance level after correction.")
    output_dir: str = Field(
        default=default_of("reports_dir"),
        description="Folder for reports and figures (default: <results>/reports; FAIRNESS_REPORTS_DIR).",
    )
    gate_file: str = Field(
        default="",
        description="Release-gate file (YAML; FAIRNESS_GATE_FILE): checked by the blocking asset checks "
        "release_gate of model_comparison and release_gate_robust of sensitivity, made only when it is set; "
        "empty: no gate, no gate check.",
    )
    sensitivity_lambdas: str = Field(
        default="",
        description="Your own lambda triple for the sensitivity grid "
        "(high,middle,low per km; FAIRNESS_SENSITIVITY_LAMBDAS); empty: none.",
    )
    sensitivity_ranking: str = Field(
        default="",
        description="A second ranking file (THE or ARWU export, CSV) for "
        "the sensitivity grid (FAIRNESS_SENSITIVITY_RANKING); empty: none.",
    )
    sensitivity_ranking_columns: str = Field(
        default="name=Name,rank=Rank,country=Location",
        description="Its column mapping (FAIRNESS_SENSITIVITY_RANKING_COLUMNS).",
    )
    # no ge/le here: a variable set is passed as an EnvVar, checked by the settings model (1-65535)
    port: int = Field(
        default=default_of("report_port"),
        description="Local port of the report server of "
        "`fairness-audit ui` (FAIRNESS_REPORT_PORT): the links in the metadata point there.",
    )
    base_url: str = Field(
        default=default_of("report_base_url"),
        description="Where a deployment publishes the "
        "reports folder (FAIRNESS_REPORT_BASE_URL); empty: the local report server.",
    )
    # a str here: a variable set is passed as an EnvVar, checked by the settings model (auto | all | reference)
    comparison_pairs: str = Field(
        default=default_of("comparison_pairs"),
        description="Which pairs of models model_comparison and sensitivity compare (FAIRNESS_COMPARISON_PAIRS): "
        "auto (every pair up to 8 models on a template, the reference beyond), all, or reference.",
    )
    comparison_reference: str = Field(
        default=default_of("comparison_reference"),
        description="The reference model of the comparisons (FAIRNESS_COMPARISON_REFERENCE); empty: the design's "
        "first model with the template scored, else the first in name order.",
    )
    # a str here: a variable set is passed as an EnvVar, checked by the settings model (auto | single | pages)
    layout: str = Field(
        default=default_of("report_layout"),
        description="How the report is written (FAIRNESS_REPORT_LAYOUT): single (one self-contained file), pages "
        "(an index and one page per model, the figures as files), or auto (one file up to 18 partitions).",
    )
    # no ge here: a variable set is passed as an EnvVar, checked by the settings model (>= 0)
    figure_workers: int = Field(
        default=default_of("figure_workers"),
        description="Processes working on several partitions at once: their figures, statistics, sensitivity "
        "and report digests (FAIRNESS_FIGURE_WORKERS; 0: one per CPU core, at most 8; 1: in the step's own process).",
    )

    def folder(self) -> Path:
        return Path(self.output_dir) if self.output_dir else results_dir() / "reports"

    def base(self) -> str:
        """The URL the reports folder is published at: ``base_url``, else the local report server."""
        try:
            base = check_base_url(self.base_url)
        except ValueError as exc:
            raise ConfigError(f"FAIRNESS_REPORT_BASE_URL: {exc}") from None
        return base or f"http://{LOCAL_HOST}:{self.port}"

    def url_of(self, path) -> str:
        """The URL of ``path``, a file under the reports folder (:meth:`folder`): the base URL and the
        path relative to the folder, each part percent-encoded."""
        root, target = self.folder().resolve(), Path(path).resolve()
        if target != root and root not in target.parents:
            raise ValueError(f"{path} is not under the reports folder {root}: it has no URL")
        return "/".join([self.base(), *(quote(part) for part in target.relative_to(root).parts)])

    def drawing_processes(self) -> int:
        return self.figure_workers or max(1, min(8, os.cpu_count() or 1))

    def as_dict(self) -> dict:
        return {
            "n_boot": self.n_boot,
            "n_perm": self.n_perm,
            "seed": self.seed,
            "level": self.level,
            "correction": self.correction,
            "alpha": self.alpha,
        }
