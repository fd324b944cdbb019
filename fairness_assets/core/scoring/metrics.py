"""The study's scores, vectorised: DRS (METHOD.md §5), GRS (§6) and the analysis tables (§8).

Every function takes plain frames and a :class:`ScoringParams` and returns frames; no
per-row Python loops over recommendations. The parameters are recorded with every result
(``ScoringParams.as_json``).

Inputs
------
``recs``       one row per recommended item (the ``recommendations`` table): ``response_id``,
               ``item_index``, ``model``, ``template``, ``profile_id``, one column per axis of
               the active design (core/reference/axes.py; the study's ``gender``,
               ``economic_class``, ``nationality``), ``run``, ``university_text``,
               ``university_id`` (nullable), ``iso3`` (the item's country), ``program_norm``,
               ``tags`` (JSON list), ``parse_status``. Rows without ``university_text`` are
               responses without items; they count as responses, never as recommendations.
``corpus``     the corpus (``qs_corpus``): ``university_id``, ``name``, ``rank_raw``, ``rank``,
               ``iso3``, ``country``.
``distances``  square km matrix of capital distances (index and columns ISO3).
"""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass, field
from typing import Literal, Mapping, Optional, get_args

import numpy as np
import pandas as pd

from ..reference import axes
from ..reference.corpus import RepParams, avail, global_rep, local_rep, parse_ranks

BandRule = Literal["lower", "mid", "upper"]
BAND_RULES: tuple[str, ...] = get_args(BandRule)  # ("lower", "mid", "upper")


def default_lambdas() -> dict[str, float]:
    """{value: Acc decay per km} of the active design's ``lambda`` axis, in its order (the study's
    high 0.0001, middle 0.0005, low 0.001); empty for a design without a lambda axis (Acc is then
    missing: no distance decay is declared)."""
    lam = axes.lambda_axis()
    return dict(axes.axis(lam).lambdas) if lam else {}


def __getattr__(name: str):
    # DEFAULT_LAMBDAS, read at access time: the active design's (callers outside core read it)
    if name == "DEFAULT_LAMBDAS":
        return default_lambdas()
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


@dataclass(frozen=True)
class ScoringParams:
    """Every parameter of the scores; recorded with each result."""

    lambdas: Mapping[str, float] = field(default_factory=default_lambdas)  # per km, by lambda-axis value
    r_min: float = RepParams.r_min  # the scale's defaults are RepParams's (one definition)
    r_max: float = RepParams.r_max
    w_acc: float = 1 / 3
    w_rep: float = 1 / 3
    w_acad: float = 1 / 3
    epsilon: float = 1e-6  # Scaled_Repr = min(1, Repr / (Avail + epsilon))
    band_rule: BandRule = "lower"  # numeric rank of a band "601-650": lower bound, midpoint or upper bound
    student_interest: Mapping[str, tuple[str, ...]] = field(default_factory=dict)  # template -> T_s
    us_uk: tuple[str, ...] = ("USA", "GBR")
    top_k: int = 10

    def __post_init__(self) -> None:
        total = self.w_acc + self.w_rep + self.w_acad
        if min(self.w_acc, self.w_rep, self.w_acad) < 0 or abs(total - 1.0) > 1e-9:
            raise ValueError(f"DRS weights must be >= 0 and sum to 1, got {self.w_acc}, {self.w_rep}, {self.w_acad}")
        if self.band_rule not in BAND_RULES:
            raise ValueError(f"band_rule must be one of {BAND_RULES}, got {self.band_rule!r}")
        bad = {k: v for k, v in self.lambdas.items() if not (v >= 0)}
        if bad:
            raise ValueError(f"lambdas must be >= 0 per km, got {bad}")
        RepParams(self.r_min, self.r_max)  # validates R_min < R_max
        if self.epsilon < 0 or self.top_k < 1:
            raise ValueError("epsilon must be >= 0 and top_k >= 1")

    def as_dict(self) -> dict:
        d = asdict(self)
        d["lambdas"] = dict(self.lambdas)
        d["student_interest"] = {k: list(v) for k, v in self.student_interest.items()}
        d["us_uk"] = list(self.us_uk)
        return d

    def as_json(self) -> str:
        return json.dumps(self.as_dict(), sort_keys=True)


# ----------------------------------------------------------------------------- components
def accessibility(distance_km: np.ndarray, lam: np.ndarray) -> np.ndarray:
    """Acc = exp(-lambda * d); NaN where the distance or lambda is unknown."""
    return np.exp(-np.asarray(lam, dtype=float) * np.asarray(distance_km, dtype=float))


def band_ranks(rank_raw: pd.Series, rule: BandRule = "lower") -> pd.Series:
    """Numeric rank under a band rule: "601-650" -> 601 (lower), 625.5 (mid), 650 (upper).

    Plain and tied ranks are themselves; an open band ("1401+") is its lower bound under every rule.
    """
    lo = parse_ranks(rank_raw).astype(float)
    if rule == "lower":
        return lo
    hi = pd.to_numeric(rank_raw.astype("string").str.extract(r"[-\u2010-\u2015]\s*(\d+)\s*$")[0], errors="coerce")
    hi = hi.where(hi.notna(), lo)
    return (lo + hi) / 2 if rule == "mid" else hi


def jaccard(student: frozenset, program: frozenset) -> float:
    union = student | program
    return len(student & program) / len(union) if union else np.nan


def _tags_set(tags_json) -> Optional[frozenset]:
    if tags_json is None or (isinstance(tags_json, float) and np.isnan(tags_json)):
        return None
    if isinstance(tags_json, (list, tuple, frozenset, set)):
        return frozenset(tags_json)
    try:
        return frozenset(json.loads(tags_json))
    except (TypeError, ValueError):
        return None


def weighted_mean(components: list[np.ndarray], weights: list[float]) -> tuple[np.ndarray, np.ndarray]:
    """Weighted mean over available components (weights renormalised); and the weight used."""
    vals = np.vstack(components)
    w = np.asarray(weights, dtype=float)[:, None] * np.ones_like(vals)
    avail = ~np.isnan(vals)
    wsum = (w * avail).sum(axis=0)
    num = np.where(avail, vals * w, 0.0).sum(axis=0)
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(wsum > 0, num / np.where(wsum > 0, wsum, 1.0), np.nan), wsum


# ----------------------------------------------------------------------------- DRS (§5)
def drs_items(
    recs: pd.DataFrame,
    corpus: pd.DataFrame,
    distances: pd.DataFrame,
    student_iso3: Mapping[str, str],
    params: ScoringParams,
) -> pd.DataFrame:
    """Per recommended item: distance, lambda, Acc, Rep, Acad, DRS and which components it used.

    - Acc is missing when the item has no country, or the profile has no value of the design's
      home axis or of its lambda axis (reduced-context profiles; a design without such an axis):
      d or lambda is undefined there.
    - Rep is 0 for an unmatched item or a university ranked beyond R_max (METHOD.md §5).
    - Acad is defined only for templates with a student interest, and missing where the
      program is missing or untagged.
    - DRS is the weighted mean of the available components, weights renormalised.
    """
    items = recs[recs["university_text"].notna()].copy()
    n = len(items)
    # Rep: join the corpus rank under the band rule
    ranks = band_ranks(corpus["rank_raw"], params.band_rule)
    rank_of = pd.Series(ranks.to_numpy(), index=corpus["university_id"].to_numpy())
    uid = pd.to_numeric(items["university_id"], errors="coerce")
    rank = uid.map(rank_of).to_numpy(dtype=float)
    items["rank"] = rank
    items["rep"] = global_rep(rank, RepParams(params.r_min, params.r_max))  # NaN rank -> 0
    # Acc: student capital -> item country capital
    s_iso = _axis_column(items, axes.home()).map(lambda v: student_iso3.get(v) if isinstance(v, str) else None)
    items["student_iso3"] = s_iso.to_numpy()
    lam = _axis_column(items, axes.lambda_axis()).map(lambda c: params.lambdas.get(c) if isinstance(c, str) else None)
    items["lambda_per_km"] = pd.to_numeric(lam, errors="coerce").to_numpy()
    pos = {c: i for i, c in enumerate(distances.index)}
    mat = distances.reindex(index=distances.index, columns=distances.index).to_numpy(dtype=float)
    si = s_iso.map(pos).to_numpy(dtype=float)
    ui = items["iso3"].map(pos).to_numpy(dtype=float)
    ok = ~np.isnan(si) & ~np.isnan(ui)
    dist = np.full(n, np.nan)
    dist[ok] = mat[si[ok].astype(int), ui[ok].astype(int)]
    missing_pairs = (items["iso3"].notna() & s_iso.notna()).to_numpy() & ~ok
    if missing_pairs.any():
        pairs = sorted(set(zip(s_iso[missing_pairs], items["iso3"][missing_pairs], strict=False)))
        raise ValueError(f"capital distance unknown for {pairs[:5]}: extend the distance table to these countries")
    items["distance_km"] = dist
    items["acc"] = accessibility(dist, items["lambda_per_km"].to_numpy())
    # Acad: Jaccard of the template's student interest and the program's tags
    acad = np.full(n, np.nan)
    for template, interest in params.student_interest.items():
        if not interest:
            continue
        sel = (items["template"] == template).to_numpy()
        if not sel.any():
            continue
        t_s = frozenset(interest)
        uniq = pd.unique(items.loc[sel, "tags"].astype(object))
        score = {}
        for t in uniq:
            tags = _tags_set(t)
            score[t] = jaccard(t_s, tags) if tags else np.nan  # untagged or no program: missing
        acad[sel] = items.loc[sel, "tags"].astype(object).map(score).to_numpy(dtype=float)
    items["acad"] = acad
    drs, wsum = weighted_mean(
        [items["acc"].to_numpy(), items["rep"].to_numpy(), acad], [params.w_acc, params.w_rep, params.w_acad]
    )
    items["drs"] = drs
    items["drs_components"] = np.select(
        [~np.isnan(items["acc"]) & ~np.isnan(acad), ~np.isnan(items["acc"]), ~np.isnan(acad)],
        ["acc+rep+acad", "acc+rep", "rep+acad"],
        default="rep",
    )
    return items


def _axis_column(frame: pd.DataFrame, name: Optional[str]) -> pd.Series:
    """The column of axis ``name`` (the design's home or lambda axis); all missing where the design
    has no such axis."""
    if name is None:
        return pd.Series(None, index=frame.index, dtype=object)
    if name not in frame.columns:
        raise ValueError(f"the recommendations lack the column {name!r} (an axis of the active design)")
    return frame[name]


def drs_responses(items: pd.DataFrame, recs: pd.DataFrame) -> pd.DataFrame:
    """Per response: the mean of its items' Acc, Rep, Acad and DRS; responses without items kept
    with ``n_items`` 0 and missing scores."""
    keys = ["response_id", "model", "template", "profile_id", *axes.names(), "run"]
    base = recs.drop_duplicates("response_id")[keys + ["parse_status"]]
    agg = (
        items.assign(_matched=pd.notna(items["university_id"]).astype(np.int64))
        .groupby("response_id")
        .agg(
            n_items=("drs", "size"),
            acc=("acc", "mean"),
            rep=("rep", "mean"),
            acad=("acad", "mean"),
            drs=("drs", "mean"),
            n_matched=("_matched", "sum"),
        )
    )
    out = base.merge(agg, left_on="response_id", right_index=True, how="left")
    out["n_items"] = out["n_items"].fillna(0).astype(np.int64)
    out["n_matched"] = out["n_matched"].fillna(0).astype(np.int64)
    return out.reset_index(drop=True)


# ----------------------------------------------------------------------------- GRS (§6)
def grs_by_country(items: pd.DataFrame, corpus: pd.DataFrame, params: ScoringParams) -> pd.DataFrame:
    """GRS per corpus country for one partition (all profiles and runs of the items given).

    A recommendation belongs to the country of the corpus university it matched; unmatched
    items count in no country. A country never recommended has Repr 0, Rep_covg undefined
    (NaN) and GRS 0.
    """
    ranks = band_ranks(corpus["rank_raw"], params.band_rule).to_numpy(dtype=float)
    c = pd.DataFrame(
        {
            "university_id": corpus["university_id"].to_numpy(),
            "iso3": corpus["iso3"].to_numpy(),
            "country": corpus["country"].to_numpy(),
            "rank": ranks,
        }
    )
    grp = c.groupby("iso3")["rank"]
    c["rep_local"] = local_rep(ranks, grp.transform("min").to_numpy(), grp.transform("max").to_numpy())
    total_global = len(c)
    countries = c.groupby(["iso3", "country"], as_index=False).agg(total_unis=("university_id", "size"))
    matched = items[pd.notna(items["university_id"])]
    counts = pd.to_numeric(matched["university_id"]).astype(np.int64).value_counts()
    c["count"] = c["university_id"].map(counts).fillna(0).astype(np.int64)
    rec = c[c["count"] > 0].assign(weighted=lambda d: d["count"] * d["rep_local"])
    per = rec.groupby("iso3").agg(
        recs=("university_id", "size"),
        n_recommendations=("count", "sum"),
        rep_covg_num=("weighted", "sum"),
    )
    out = countries.merge(per, left_on="iso3", right_index=True, how="left")
    out["recs"] = out["recs"].fillna(0).astype(np.int64)
    out["n_recommendations"] = out["n_recommendations"].fillna(0).astype(np.int64)
    out["avail"] = avail(out["total_unis"], total_global)
    out["repr"] = np.minimum(1.0, out["recs"] / out["total_unis"])
    out["scaled_repr"] = np.minimum(1.0, out["repr"] / (out["avail"] + params.epsilon))
    with np.errstate(invalid="ignore", divide="ignore"):
        out["rep_covg"] = np.where(
            out["n_recommendations"] > 0,
            out["rep_covg_num"] / out["n_recommendations"].where(out["n_recommendations"] > 0, 1),
            np.nan,
        )
    out["grs"] = np.where(out["n_recommendations"] > 0, np.sqrt(out["scaled_repr"] * out["rep_covg"].fillna(0.0)), 0.0)
    cols = [
        "iso3",
        "country",
        "total_unis",
        "recs",
        "n_recommendations",
        "avail",
        "repr",
        "scaled_repr",
        "rep_covg",
        "grs",
    ]
    return (
        out[cols]
        .sort_values(["grs", "n_recommendations", "country"], ascending=[False, False, True])
        .reset_index(drop=True)
    )


# ----------------------------------------------------------------------------- analysis tables (§8)
def breakdown_axes() -> tuple[str, ...]:
    """The breakdowns of §8.1-8.2: every axis of the active design but the home one, in its order
    (the study's gender and class)."""
    return axes.names(exclude=("home",))


def drs_summary(responses: pd.DataFrame) -> pd.DataFrame:
    """§8.1 DRS, Acc, Rep, Acad overall and by each of :func:`breakdown_axes` (the study's gender and
    class; means over responses with items)."""
    scored = responses[responses["n_items"] > 0]
    frames = []
    for by in (None, *breakdown_axes()):
        if by is None:
            g = scored.assign(_all="all").groupby("_all")
        else:
            if scored[by].isna().all():
                continue
            g = scored.groupby(by)
        t = g.agg(
            responses=("response_id", "size"),
            drs=("drs", "mean"),
            acc=("acc", "mean"),
            rep=("rep", "mean"),
            acad=("acad", "mean"),
        ).reset_index()
        t.insert(0, "group_by", by or "overall")
        t = t.rename(columns={t.columns[1]: "group"})
        frames.append(t)
    if not frames:
        return pd.DataFrame(columns=["group_by", "group", "responses", "drs", "acc", "rep", "acad"])
    return pd.concat(frames, ignore_index=True)


def academic_alignment(items: pd.DataFrame) -> pd.DataFrame:
    """§8.2 mean Acad by each of :func:`breakdown_axes` (the study's gender and class), over items where
    Acad is defined."""
    defined = items[items["acad"].notna()]
    frames = []
    for by in breakdown_axes():
        if defined.empty or defined[by].isna().all():
            continue
        t = defined.groupby(by).agg(items=("acad", "size"), acad=("acad", "mean")).reset_index()
        t.insert(0, "group_by", by)
        frames.append(t.rename(columns={by: "group"}))
    if not frames:
        return pd.DataFrame(columns=["group_by", "group", "items", "acad"])
    return pd.concat(frames, ignore_index=True)


def volume_diversity(recs: pd.DataFrame, items: pd.DataFrame) -> pd.DataFrame:
    """§8.5 responses, items, unique universities / programs / countries."""
    matched = items[pd.notna(items["university_id"])]
    row = {
        "responses": int(recs["response_id"].nunique()),
        "responses_with_items": int(items["response_id"].nunique()),
        "recommendations": len(items),
        "matched_recommendations": len(matched),
        "unique_universities": int(matched["university_id"].nunique()),
        "unique_university_texts_unmatched": int(
            items.loc[pd.isna(items["university_id"]), "university_text"].str.casefold().nunique()
        ),
        "unique_programs": int(items["program_norm"].dropna().nunique()),
        "unique_countries": int(items["iso3"].dropna().nunique()),
    }
    return pd.DataFrame([row])


def concentration(items: pd.DataFrame, corpus: pd.DataFrame, params: ScoringParams) -> pd.DataFrame:
    """§8.7 share of recommendations located in the US and the UK; share of the corpus's
    countries that appear at all."""
    located = items[items["iso3"].notna()]
    corpus_countries = set(corpus["iso3"])
    seen = set(located["iso3"]) & corpus_countries
    share = float(located["iso3"].isin(params.us_uk).mean()) if len(located) else np.nan
    return pd.DataFrame(
        [
            {
                "recommendations_with_country": len(located),
                "us_uk_share": share,
                "us_uk_countries": "+".join(params.us_uk),
                "countries_recommended": len(set(located["iso3"])),
                "corpus_countries": len(corpus_countries),
                "country_coverage": len(seen) / len(corpus_countries) if corpus_countries else np.nan,
            }
        ]
    )


def reduced_context_top(items: pd.DataFrame, params: ScoringParams) -> pd.DataFrame:
    """§8.6 for each attribute value of a reduced-context template: the top-k countries,
    universities and programs with their counts and shares."""
    frames = []
    for attr in axes.names():
        mask = items[attr].notna().to_numpy()
        if not mask.any():
            continue
        for what, col in (("country", "country"), ("university", "matched_name"), ("program", "program_norm")):
            data = items.loc[mask, [attr, col]].dropna()
            if data.empty:
                continue
            counts = data.groupby([attr, col], sort=True).size().rename("count").reset_index()
            counts["share"] = counts["count"] / counts.groupby(attr)["count"].transform("sum")
            # within each value: by count, ties in name order (the groupby already sorted names)
            counts = counts.sort_values([attr, "count"], ascending=[True, False], kind="stable")
            counts["rank"] = counts.groupby(attr).cumcount() + 1
            top = counts[counts["rank"] <= params.top_k]
            frames.append(
                pd.DataFrame(
                    {
                        "attribute": attr,
                        "value": top[attr].to_numpy(),
                        "what": what,
                        "rank": top["rank"].to_numpy(),
                        "item": top[col].to_numpy(),
                        "count": top["count"].to_numpy(),
                        "share": top["share"].to_numpy(),
                    }
                )
            )
    if not frames:
        return pd.DataFrame(columns=["attribute", "value", "what", "rank", "item", "count", "share"])
    return pd.concat(frames, ignore_index=True)


def relative_change(base: pd.DataFrame, other: pd.DataFrame, keys: list[str], metrics: list[str]) -> pd.DataFrame:
    """§8.4 change from ``base`` to ``other`` per key, in percent of the base value
    (NaN where the base is 0 or missing)."""
    m = base[keys + metrics].merge(other[keys + metrics], on=keys, how="outer", suffixes=("_base", "_other"))
    for metric in metrics:
        b, o = m[f"{metric}_base"], m[f"{metric}_other"]
        with np.errstate(invalid="ignore", divide="ignore"):
            m[f"{metric}_change_pct"] = np.where(b.abs() > 0, (o - b) / b.abs() * 100.0, np.nan)
    return m


def score_partition(
    recs: pd.DataFrame,
    corpus: pd.DataFrame,
    distances: pd.DataFrame,
    student_iso3: Mapping[str, str],
    params: ScoringParams,
) -> dict[str, pd.DataFrame]:
    """All per-partition tables of one model x template: the same for the assets and the CLI."""
    items = drs_items(recs, corpus, distances, student_iso3, params)
    responses = drs_responses(items, recs)
    return {
        "drs_items": items,
        "drs_responses": responses,
        "grs_by_country": grs_by_country(items, corpus, params),
        "drs_summary": drs_summary(responses),
        "academic_alignment": academic_alignment(items),
        "volume_diversity": volume_diversity(recs, items),
        "concentration": concentration(items, corpus, params),
        "reduced_context_top": reduced_context_top(items, params),
    }


def base_vs_regional(
    summary_base: pd.DataFrame, summary_regional: pd.DataFrame, grs_base: pd.DataFrame, grs_regional: pd.DataFrame
) -> dict[str, pd.DataFrame]:
    """§8.4 for one model: change in DRS/Acc/Rep (overall and by group) and in GRS per country."""
    drs = relative_change(summary_base, summary_regional, ["group_by", "group"], ["drs", "acc", "rep"])
    grs = relative_change(grs_base, grs_regional, ["iso3", "country"], ["grs", "repr", "rep_covg"])
    rename = lambda df: df.rename(columns=lambda c: c.replace("_other", "_regional"))  # noqa: E731
    grs = rename(grs).sort_values(["grs_regional", "grs_base"], ascending=False, na_position="last")
    return {"drs_change": rename(drs), "grs_change": grs.reset_index(drop=True)}


def rescore_with_lambda(items: pd.DataFrame, lambda_per_km, params: ScoringParams) -> pd.DataFrame:
    """Acc and DRS of ``drs_items`` rows re-scored with another lambda (a scalar or one per
    row), every other component as scored: the same formulas as :func:`drs_items`
    (:func:`accessibility`, the renormalised weighted mean). Columns ``acc``, ``drs``, on the
    items' index. Used by the behaviour-vs-needs decomposition of class gaps (core.statistics.geostats)."""
    lam = np.broadcast_to(np.asarray(lambda_per_km, dtype=float), (len(items),))
    acc = accessibility(items["distance_km"].to_numpy(dtype=float), lam)
    acad = items["acad"].to_numpy(dtype=float) if "acad" in items.columns else np.full(len(items), np.nan)
    drs, _ = weighted_mean([acc, items["rep"].to_numpy(dtype=float), acad], [params.w_acc, params.w_rep, params.w_acad])
    return pd.DataFrame({"acc": acc, "drs": drs}, index=items.index)
