"""Where generations come from (a responses file or the models) and how they are decoded."""

from __future__ import annotations

from pathlib import Path
from typing import Optional

from dagster import ConfigurableResource
from pydantic import Field

from .model import default_of


class GenerationSourceResource(ConfigurableResource):
    """Where generations come from, and how they are decoded.

    ``responses_path`` set: a bring-your-own responses file (CSV / JSONL / Parquet, see
    docs/responses_format.md) is imported, one partition per (model, template) found in it.
    Empty (default): the generation engine samples every (profile, run) of the audit grid
    with the partition's model through the LLM resource (METHOD.md §1 decoding).
    """

    responses_path: str = Field(
        default=default_of("responses"),
        description="Responses file to import; empty: generate with the engine (FAIRNESS_RESPONSES).",
    )
    temperature: float = Field(default=0.75, description="Sampling temperature.")
    top_p: float = Field(default=0.95, description="Nucleus sampling mass.")
    max_new_tokens: int = Field(default=300, description="Tokens generated per answer at most.")
    commit_every: int = Field(default=0, description="Finished samples that trigger a commit (also every 2 s); 0: 64.")

    staging_dir: str = Field(
        default=default_of("staging_dir"),
        description="Folder whose `staged-responses` "
        "subfolder holds responses files staged by partition (FAIRNESS_STAGING_DIR); empty: "
        "$FAIRNESS_HOME.",
    )

    def resolved_path(self) -> Optional[Path]:
        return Path(self.responses_path) if self.responses_path else None

    def staging_folder(self) -> Optional[Path]:
        """The folder the responses file is staged in (core.generation.responses.stage_responses): one per
        file under ``staging_dir``; None without a responses file."""
        from fairness_assets.core.generation.responses import staging_folder

        from .paths import results_dir

        path = self.resolved_path()
        if path is None:
            return None
        return staging_folder(Path(self.staging_dir) if self.staging_dir else results_dir(), path)

    def sampling(self):
        from resources.llm.base import SamplingParams

        return SamplingParams(
            temperature=self.temperature,
            top_p=self.top_p,
            max_new_tokens=self.max_new_tokens,
            do_sample=self.temperature > 0,
        )
