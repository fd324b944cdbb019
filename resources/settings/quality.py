"""Thresholds of the parse-quality expectation suite."""

from __future__ import annotations

from typing import Optional

from dagster import ConfigurableResource
from pydantic import Field


class ParseQualityResource(ConfigurableResource):
    """Thresholds of the parse-quality expectation suite (expectations/suites/*.json).

    Unset values use the suite's defaults. Checks marked blocking in the suite stop the
    metric assets of a partition whose recommendations fail them.
    """

    suite: str = Field(default="recommendations_quality", description="Suite name in expectations/suites.")
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
