"""Where the ranking corpus and the reviewed reference files are, and the global reputation
scale the corpus is scored on."""

from __future__ import annotations

from pathlib import Path

from dagster import ConfigurableResource
from pydantic import Field

from fairness_assets.core.reference.corpus import RepParams

from .model import default_of
from .paths import ALIASES_FILE, CAPITALS_FILE, DEMO_CORPUS, UNIVERSITY_ALIASES_FILE


class ReferenceDataResource(ConfigurableResource):
    """Where the ranking corpus and the reviewed reference files are.

    ``corpus_path`` points at the user's own QS export; empty means the illustrative demo
    corpus shipped in data/demo (not the QS ranking). ``rep_r_min``/``rep_r_max`` are the one
    place of the reputation scale: ``qs_corpus`` and the scores both read them from here.
    """

    corpus_path: str = Field(
        default=default_of("qs_corpus"),
        description="Path to a QS World University Rankings CSV export (FAIRNESS_QS_CORPUS).",
    )
    rank_column: str = Field(default="2024 RANK", description="Rank column of the export.")
    templates_dir: str = Field(
        default=default_of("templates_dir"), description="Folder of prompt template files (FAIRNESS_TEMPLATES_DIR)."
    )
    country_aliases_path: str = Field(default=str(ALIASES_FILE), description="Reviewed country alias CSV.")
    university_aliases_path: str = Field(
        default=str(UNIVERSITY_ALIASES_FILE), description="Reviewed university alias CSV (alias,name,iso3)."
    )
    capital_overrides_path: str = Field(
        default=str(CAPITALS_FILE), description="Reviewed capital coordinates that win over countryinfo; empty: none."
    )
    rep_r_min: float = Field(
        default=default_of("rep_r_min"), description="R_min of the global reputation scale (FAIRNESS_REP_R_MIN)."
    )
    rep_r_max: float = Field(
        default=default_of("rep_r_max"),
        description="R_max of the global reputation scale; ranks beyond get Rep 0 (FAIRNESS_REP_R_MAX).",
    )

    def resolved_corpus_path(self) -> Path:
        return Path(self.corpus_path) if self.corpus_path else DEMO_CORPUS

    def is_demo_corpus(self) -> bool:
        return self.resolved_corpus_path().resolve() == DEMO_CORPUS.resolve()

    def rep_params(self) -> RepParams:
        """The reputation scale of the corpus column ``rep`` and of the items' Rep in DRS."""
        return RepParams(self.rep_r_min, self.rep_r_max)
