"""Every parameter of DRS and GRS but the reputation scale (ReferenceDataResource holds R_min
and R_max: the corpus's ``rep`` and the items' Rep use the same scale)."""

from __future__ import annotations

from dagster import ConfigurableResource
from pydantic import Field

from fairness_assets.core.reference import axes
from fairness_assets.core.reference.corpus import RepParams
from fairness_assets.core.scoring.metrics import ScoringParams

from .model import default_of

_CORE = ScoringParams.__dataclass_fields__  # the method's defaults are the core's (one definition)


class ScoringResource(ConfigurableResource):
    """Every parameter of DRS and GRS (METHOD.md §5–6) except R_min/R_max; recorded with each result."""

    lambda_high: float = Field(
        default=default_of("lambda_high"),
        description="Acc decay per km of the lambda axis's value `high` (FAIRNESS_LAMBDA_HIGH).",
    )
    lambda_middle: float = Field(
        default=default_of("lambda_middle"),
        description="Acc decay per km of the lambda axis's value `middle` (FAIRNESS_LAMBDA_MIDDLE).",
    )
    lambda_low: float = Field(
        default=default_of("lambda_low"),
        description="Acc decay per km of the lambda axis's value `low` (FAIRNESS_LAMBDA_LOW).",
    )
    w_acc: float = Field(default=_CORE["w_acc"].default, description="DRS weight of Acc.")
    w_rep: float = Field(default=_CORE["w_rep"].default, description="DRS weight of Rep.")
    w_acad: float = Field(default=_CORE["w_acad"].default, description="DRS weight of Acad.")
    epsilon: float = Field(
        default=_CORE["epsilon"].default, description="Scaled_Repr = min(1, Repr / (Avail + epsilon))."
    )
    band_rule: str = Field(
        default=_CORE["band_rule"].default, description="Numeric rank of a band: lower, mid or upper."
    )
    us_uk: list[str] = Field(default=list(_CORE["us_uk"].default), description="ISO3 codes of the concentration share.")
    top_k: int = Field(
        default=_CORE["top_k"].default, description="Rows per attribute value in the reduced-context tables."
    )

    def lambdas(self) -> dict[str, float]:
        """Acc's decay per value of the design's lambda axis, in its order: the design's lambdas, each
        overridden by the setting of its name (FAIRNESS_LAMBDA_HIGH / _MIDDLE / _LOW) where that setting was
        changed from its default; empty for a design without a lambda axis."""
        settings = {"high": self.lambda_high, "middle": self.lambda_middle, "low": self.lambda_low}
        out = {}
        lam = axes.current().by_position("lambda")
        for value, of_design in lam.lambdas if lam else ():
            explicit = value in settings and settings[value] != default_of(f"lambda_{value}")
            out[value] = settings[value] if explicit else of_design
        return out

    def params(self, student_interest: dict, rep: RepParams | None = None) -> ScoringParams:
        """The scoring parameters; ``rep`` is the reputation scale of the reference data
        (``ReferenceDataResource.rep_params()``; omitted: the default scale)."""
        rep = rep if rep is not None else RepParams(default_of("rep_r_min"), default_of("rep_r_max"))
        return ScoringParams(
            lambdas=self.lambdas(),
            r_min=rep.r_min,
            r_max=rep.r_max,
            w_acc=self.w_acc,
            w_rep=self.w_rep,
            w_acad=self.w_acad,
            epsilon=self.epsilon,
            band_rule=self.band_rule,
            student_interest=student_interest,
            us_uk=tuple(self.us_uk),
            top_k=self.top_k,
        )
