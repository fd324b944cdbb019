"""Thresholds of the parse-quality expectation suite."""

from __future__ import annotations

from typing import Optional

from dagster import ConfigurableResource
from pydantic import Field


class ParseQualityResource(ConfigurableResource):
    """Thresholds of the parse-quality expectation suite (expectations/suites/*.json).

    Unset values use the suite's defaults. Checks marked blocking in the suite stop the
    metric assets of a partition whose recommendations fail them.

    ``suite`` picks the suite a run checks with. The asset checks of ``recommendations`` (what
    the UI lists, the alerts and the report read) are declared when the code location loads, from
    expectations/suites/recommendations_quality.json, so a configured suite must produce exactly
    those checks with the same blocking flags; it may change their default thresholds,
    descriptions, expectations and columns. A suite that does not (a check missing, one more, a
    blocking flag changed) or that cannot be read fails ``recommendations`` before any work, with
    an error naming the suite, the checks expected and the checks found; no check result of it is
    recorded. To add or remove a check, change the default suite and reload the code location.
    """

    suite: str = Field(
        default="recommendations_quality",
        description="Suite name in expectations/suites (or a .json path). It must declare the checks "
        "recommendations declares (those of recommendations_quality.json), with the same blocking flags; its "
        "thresholds, descriptions and expectations may differ. Otherwise recommendations fails before any work, "
        "naming the suite, the checks expected and the checks found.",
    )
    min_parse_rate: Optional[float] = Field(default=None, description="Minimum share of parsed responses.")
    min_three_items_share: Optional[float] = Field(default=None, description="Minimum share with three items.")
    min_match_rate: Optional[float] = Field(default=None, description="Minimum share of items matched to the corpus.")
    min_country_resolved: Optional[float] = Field(default=None, description="Minimum share of items with a country.")
    max_group_gap: Optional[float] = Field(default=None, description="Maximum parse/match-rate gap between groups.")

    def thresholds(self, preset_quality: Optional[dict] = None) -> dict[str, Optional[float]]:
        """Thresholds in force: this resource's values, else the preset's, else the suite's defaults."""
        out = dict(preset_quality or {})
        for k in ("min_parse_rate", "min_three_items_share", "min_match_rate", "min_country_resolved", "max_group_gap"):
            if getattr(self, k) is not None:
                out[k] = getattr(self, k)
        return out
