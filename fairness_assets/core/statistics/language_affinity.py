"""Language-country affinity (METHOD.md §11; issue 35): does the prompt's language move the recommendations
toward the countries where it is spoken? ("7 Points to Tsinghua", Liu et al., Findings of ACL 2025.)

For each language L of the design's language axis other than the reference (English), the countries where L
is spoken are CLDR's (babel's territory languages): L is official or de facto official there, or spoken by at
least ``min_population`` percent of the population (:func:`language_countries`). A response's share is the
share of its recommendations located (with a country) in those countries. The same student (every other axis
and the run the same) is asked in English and in L: the paired difference share(asked in L) - share(asked in
English), both counted against L's countries, is what the language did to the lists. It is behaviour only: the
language moves no student's position (an axis of kind ``none``), so there is no needs part. Each language's
mean difference has its percentile bootstrap interval and its sign-flip p (core.statistics.stats.paired_test,
the students as units), and the languages of one model and template form one Holm family."""

from __future__ import annotations

from functools import lru_cache
from typing import Mapping, Optional, Sequence

import numpy as np
import pandas as pd

from ..reference import geo
from .inference import DEFAULT_INFERENCE, InferenceParams
from .stats import INFERENCE_COLUMNS, adjust_pvalues, inference_fields, paired_test

WIDELY_SPOKEN = 50.0  # percent of a country's population that speaks a language, for it to count there
OFFICIAL = ("official", "de_facto_official")

AFFINITY_COLUMNS = [
    "language",
    "reference",
    "n_countries",
    "countries",
    "n_pairs",
    "n_pairs_excluded",
    "share_reference",
    "share_language",
    "mean_diff",
    *INFERENCE_COLUMNS,  # with the family's correction, family_size, p_adjusted, alpha, significant
    "component",
]
_FAMILY = ("correction", "family_size", "p_adjusted", "alpha", "significant", "component")  # set over the table


# the columns a reader is shown (the asset's page, the report's table): the comparison, the shares, the test
SHOWN = (
    "model",
    "reference_template",
    "template",
    "language",
    "n_countries",
    "n_pairs",
    "n_pairs_excluded",
    "share_reference",
    "share_language",
    "mean_diff",
    "ci_low",
    "ci_high",
    "p_value",
    "p_adjusted",
    "family_size",
    "significant",
)


class AffinityError(ValueError):
    """A language the CLDR data does not know, or responses the analysis cannot pair; names the value."""


@lru_cache(maxsize=64)
def language_countries(language: str, min_population: float = WIDELY_SPOKEN) -> tuple[str, ...]:
    """ISO3 of the countries where ``language`` (a BCP 47 code: ``fr``, ``zh``, ``zh_Hant``, ``pt-BR``; the
    script or region is ignored) is official or de facto official, or spoken by at least ``min_population``
    percent of the population, in CLDR's territory data (babel). Sorted; AffinityError for a language CLDR
    lists in no country."""
    from babel.core import get_global

    base = str(language).replace("-", "_").split("_")[0].lower()
    codes = geo.iso2_to_iso3()
    out = set()
    for territory, spoken in get_global("territory_languages").items():
        for code, info in spoken.items():
            if code.split("_")[0].lower() != base:
                continue
            if info.get("official_status") in OFFICIAL or float(info.get("population_percent") or 0) >= min_population:
                if territory.upper() in codes:
                    out.add(codes[territory.upper()])
                break
    if not out:
        raise AffinityError(f"language {language!r}: CLDR lists no country where it is spoken (use a BCP 47 code)")
    return tuple(sorted(out))


def response_shares(items: pd.DataFrame, countries: Sequence[str]) -> pd.Series:
    """Per response (``response_id``): the share of its located recommendations (``iso3`` not missing) in
    ``countries``; NaN for a response with no located recommendation."""
    located = items[items["iso3"].notna()]
    hit = located["iso3"].isin(set(countries)).astype(float)
    return hit.groupby(located["response_id"]).mean()


def language_affinity(
    items: pd.DataFrame,
    responses: pd.DataFrame,
    *,
    language_axis: str,
    unit_keys: Sequence[str],
    reference: str = "en",
    countries: Optional[Mapping[str, Sequence[str]]] = None,
    inference: InferenceParams = DEFAULT_INFERENCE,
) -> pd.DataFrame:
    """One row per language of ``responses[language_axis]`` other than ``reference``: the paired difference of
    the share of recommendations in the language's countries, asked in the language minus asked in
    ``reference``, over the students asked both ways (the same ``unit_keys``: the other axes and the run).

    ``items``: the scored recommendations (``response_id``, ``iso3``; missing iso3: unlocated, left out of the
    share). ``responses``: one row per response (``response_id``, ``language_axis``, ``unit_keys``).
    ``countries``: ``{language: ISO3 codes}`` instead of CLDR's (:func:`language_countries`). A student asked in
    only one of the two, or whose answer in either has no located recommendation, is counted in
    ``n_pairs_excluded``, never dropped silently. Columns: :data:`AFFINITY_COLUMNS`; the Holm (or BH, as
    ``inference.correction``) family is the languages of the table."""
    need = {"response_id", language_axis, *unit_keys}
    missing = sorted(need - set(responses.columns))
    if missing:
        raise AffinityError(
            f"responses lack column(s) {missing} (language axis {language_axis!r}, units {list(unit_keys)})"
        )
    if not {"response_id", "iso3"} <= set(items.columns):
        raise AffinityError(f"items need response_id and iso3, got {sorted(items.columns)}")
    resp = responses[["response_id", language_axis, *unit_keys]].astype({language_axis: str})
    duplicated = resp.duplicated([language_axis, *unit_keys])
    if duplicated.any():
        row = resp[duplicated].iloc[0]
        raise AffinityError(
            f"two responses of one student in one language ({language_axis}={row[language_axis]!r}, "
            f"{', '.join(f'{k}={row[k]!r}' for k in unit_keys)}): include the run in unit_keys"
        )
    languages = [v for v in pd.unique(resp[language_axis]) if v != reference]
    if reference not in set(resp[language_axis]):
        raise AffinityError(f"no response asked in the reference language {reference!r} (axis {language_axis!r})")
    rows = []
    for language in languages:
        where = tuple(countries[language]) if countries is not None else language_countries(language)
        shares = response_shares(items, where)
        scored = resp.assign(_s=resp["response_id"].map(shares))
        own = scored[scored[language_axis] == language]
        ref = scored[scored[language_axis] == reference]
        pairs = own.merge(ref, on=list(unit_keys), how="outer", suffixes=("_l", "_r"))
        d = (pairs["_s_l"] - pairs["_s_r"]).to_numpy(dtype=float)
        usable = ~np.isnan(d)
        res = paired_test(d[usable][:, None], inference=inference, key=("language_affinity", language, reference))
        one = {k: (v[0] if isinstance(v, np.ndarray) else v) for k, v in res.items()}
        rows.append(
            {
                "language": language,
                "reference": reference,
                "n_countries": len(where),
                "countries": " ".join(where),
                "n_pairs": int(usable.sum()),
                "n_pairs_excluded": int((~usable).sum()),
                "share_reference": float(np.nanmean(pairs.loc[usable, "_s_r"])) if usable.any() else np.nan,
                "share_language": float(np.nanmean(pairs.loc[usable, "_s_l"])) if usable.any() else np.nan,
                "mean_diff": float(one["mean"]),
                **inference_fields(one, inference=inference),
            }
        )
    out = pd.DataFrame(
        rows,
        columns=[c for c in AFFINITY_COLUMNS if c not in _FAMILY],
    )
    tested = out["p_value"].notna().to_numpy()
    adjusted = np.full(len(out), np.nan)
    if tested.any():
        adjusted[tested] = adjust_pvalues(out.loc[tested, "p_value"].to_numpy(dtype=float), inference.correction)
    out = out.assign(
        correction=inference.correction,
        family_size=int(tested.sum()),
        p_adjusted=adjusted,
        alpha=inference.alpha,
        significant=np.where(tested, adjusted <= inference.alpha, False),
        component="behaviour",  # the language moves no student's position (METHOD.md §11): no needs part
    )
    return out[AFFINITY_COLUMNS]


def comparison_affinity(
    items: pd.DataFrame,
    responses: pd.DataFrame,
    *,
    languages: Mapping[str, str],
    comparisons: Sequence[tuple[str, str]],
    model: str,
    inference: InferenceParams = DEFAULT_INFERENCE,
) -> pd.DataFrame:
    """The affinity of one model over a design's template comparisons across languages: for each reference
    template (the first of a pair) whose comparisons name templates of other languages (``languages``:
    {template: BCP 47 code}), :func:`language_affinity` of those templates against it, the students paired by
    ``profile_id`` and ``run``; one Holm family per reference template. ``items`` and ``responses`` hold the rows
    of every template named (a ``template`` column; responses: ``response_id``, ``profile_id``, ``run``).
    Columns ``model``, ``template``, ``reference_template`` first, then :data:`AFFINITY_COLUMNS`; empty where no
    comparison crosses languages."""
    crossing: dict[str, list[str]] = {}
    for base, other in comparisons:
        if languages.get(base) and languages.get(other) and languages[base] != languages[other]:
            crossing.setdefault(base, []).append(other)
    frames = []
    for base, others in crossing.items():
        wanted = [base, *others]
        seen = [languages[t] for t in others]
        if len(set(seen)) != len(seen):
            raise AffinityError(
                f"{model}: the templates compared with {base!r} ask two of them in one language ({seen}): "
                "compare each language with the reference once"
            )
        resp = responses[responses["template"].isin(wanted)].assign(_language=lambda d: d["template"].map(languages))
        out = language_affinity(
            items[items["template"].isin(wanted)],
            resp,
            language_axis="_language",
            unit_keys=["profile_id", "run"],
            reference=languages[base],
            inference=inference,
        )
        template_of = {languages[t]: t for t in others}
        frames.append(out.assign(model=model, template=out["language"].map(template_of), reference_template=base))
    columns = ["model", "template", "reference_template", *AFFINITY_COLUMNS]
    if not frames:
        return pd.DataFrame(columns=columns)
    return pd.concat(frames, ignore_index=True)[columns]
