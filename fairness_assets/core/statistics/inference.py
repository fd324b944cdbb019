"""The inference settings every test and interval of the audit shares (:class:`InferenceParams`): how many
bootstrap resamples and sign-flip permutations, the confidence level, the seed, the multiple-comparison
correction and the significance level, in one frozen value that the statistics functions take as
``inference=`` (docs/statistics.md). The defaults are those of the ``report_settings`` resource
(``resources.settings.ReportResource``); ``defs.services.inference_of`` builds one from it.

Pure: the standard library only."""

from __future__ import annotations

import numbers
from dataclasses import dataclass
from typing import Literal, get_args

Correction = Literal["holm", "bh"]
CORRECTIONS: tuple[str, ...] = get_args(Correction)  # ("holm", "bh")


def _count(name: str, value) -> None:
    """A positive int (numpy's ints too), not a bool."""
    if isinstance(value, bool) or not isinstance(value, numbers.Integral):
        raise ValueError(f"{name} must be an integer >= 1, got {value!r}")
    if value < 1:
        raise ValueError(f"{name} must be >= 1, got {value}")


def _level(value) -> None:
    """A real number strictly between 0 and 1, not a bool."""
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        raise ValueError(f"level must be a number in (0, 1), got {value!r}")
    if not 0 < value < 1:
        raise ValueError(f"level must be in (0, 1), got {value}")


@dataclass(frozen=True)
class InferenceParams:
    """How every interval and test of the statistics is computed. Validated on construction: a bad
    value raises ``ValueError`` naming the field and the value (checked in the order level, n_boot,
    correction, n_perm, seed, alpha: the order the statistics functions checked them in)."""

    n_perm: int = 10_000
    """Sign vectors of every sign-flip permutation test: all 2^n of them (exact) when 2^n <= n_perm for n
    units, else n_perm random ones (Monte Carlo, smallest p 1 / (n_perm + 1)). The tables record the number
    actually used per test in their ``n_perm`` column and the smallest attainable p in ``p_min_attainable``
    (counterfactual_disparity, behaviour_needs, geo_contrasts, class_gap_interactions,
    class_gap_decomposition)."""
    n_boot: int = 2000
    """Bootstrap resamples of every percentile interval; recorded in the ``n_boot`` column of every table
    with an interval (run_variability, counterfactual_disparity, behaviour_needs, envy, region_metrics and
    the geographic tests)."""
    level: float = 0.95
    """Confidence level of every interval (the (1 - level) / 2 and 1 - (1 - level) / 2 quantiles of the
    bootstrap distribution); recorded in the ``level`` column of the tables with an interval."""
    seed: int = 0
    """Seed of every random draw (each cell's generator is seeded from it and the cell's key, so results
    are reproducible and do not depend on the other cells). No table has a column for it: the settings
    stored with each asset (``config_json``, ``params_hash``) record it."""
    correction: Correction = "holm"
    """Multiple-comparison correction within each family of tests: ``holm`` (family-wise error rate) or
    ``bh`` (Benjamini-Hochberg, false discovery rate); recorded in the ``correction`` column of every
    table of tests and of the model comparison's differences."""
    alpha: float = 0.05
    """Significance level the adjusted p-values are compared with (``significant``: p_adjusted <= alpha);
    recorded in the ``alpha`` column of the tables of tests (the model comparison's differences record only
    ``significant``)."""

    def __post_init__(self) -> None:
        _level(self.level)
        _count("n_boot", self.n_boot)
        if self.correction not in CORRECTIONS:
            raise ValueError(f"correction must be one of {CORRECTIONS}, got {self.correction!r}")
        _count("n_perm", self.n_perm)
        if isinstance(self.seed, bool) or not isinstance(self.seed, numbers.Integral) or self.seed < 0:
            raise ValueError(f"seed must be a non-negative integer, got {self.seed!r}")
        if isinstance(self.alpha, bool) or not isinstance(self.alpha, numbers.Real):
            raise ValueError(f"alpha must be a number in (0, 1), got {self.alpha!r}")
        if not 0 < self.alpha < 1:
            raise ValueError(f"alpha must lie in (0, 1), got {self.alpha}")


DEFAULT_INFERENCE = InferenceParams()
