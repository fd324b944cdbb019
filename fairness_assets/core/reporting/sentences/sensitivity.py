"""The sensitivity of the findings in words (core.statistics.sensitivity): how many significant findings hold in every
setting of the grid, and each fragile one with the setting that breaks it."""

from __future__ import annotations

import pandas as pd


def summary_sentences(verdicts: pd.DataFrame, max_lines: int = 8) -> list[str]:
    """How many significant findings hold in every setting, and each fragile one."""
    if verdicts is None or not len(verdicts):
        return []
    robust = verdicts["robust"].map(lambda v: str(v) == "True" or v is True)
    out = [
        f"Sensitivity: {int(robust.sum())} of {len(verdicts)} significant finding(s) hold in every setting "
        f"of the grid (lambda x0.5 / x2 / given, R_max 1000 / 1500, a second ranking when given)."
    ]
    for r in verdicts[~robust].head(max_lines).itertuples(index=False):
        where = r.settings_flipping or r.settings_losing
        out.append(
            f"Fragile ({r.source}, {r.template}): {r.finding} {r.verdict} under {where} "
            f"({r.estimate:+.3f} as audited; {r.worst_estimate:+.3f}, adjusted p {r.worst_p_adjusted:.3f} "
            f"under {r.worst_setting})."
        )
    return out
