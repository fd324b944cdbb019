"""Services the stages share: what more than one stage (or the command line) needs from the
core and the resources, written once. Assets call these; nothing here is an asset.

- the country resolver and the university index of the configured reference data;
- the parse-quality suite the checks run (the configured one, refused when its checks are not
  the declared ones), its outcomes per partition, the recorded evaluations of the checks per
  partition (what the report shows) and these as a table;
- the scoring parameters and the distance matrix a partition is scored with;
- the inference settings (resamples, permutations, level, seed, correction, alpha) every
  statistics asset computes with, from the report settings;
- where a report is written, and the provenance that names the code and settings behind it.
"""

from __future__ import annotations

import os
from contextlib import contextmanager
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Any, Mapping, Optional, Sequence

import pandas as pd

from expectations.runner import load_suite, run_suite, suite_path
from fairness_assets.core.common.partition import by_partition
from fairness_assets.core.reference import axes, geo
from fairness_assets.core.reference import prompts as prompts_core
from fairness_assets.core.scoring import metrics
from fairness_assets.core.statistics.inference import InferenceParams
from fairness_assets.core.understanding import match as match_core
from fairness_assets.core.understanding import quality
from fairness_assets.core.understanding.match import MATCHER_VERSION
from fairness_assets.core.understanding.parse import PARSER_VERSION
from resources.database import code_version, library_versions
from resources.settings import ParseQualityResource, ReferenceDataResource, ReportResource, ScoringResource


@lru_cache(maxsize=8)
def _resolver(aliases_path: str) -> geo.CountryResolver:
    return geo.CountryResolver(geo.load_aliases(aliases_path))


def resolver_for(reference: ReferenceDataResource) -> geo.CountryResolver:
    return _resolver(reference.country_aliases_path)


@lru_cache(maxsize=4)
def _index(corpus_key: str, aliases_path: str, corpus: tuple) -> match_core.UniversityIndex:
    frame = pd.DataFrame(list(corpus), columns=["university_id", "name", "iso3"])
    return match_core.UniversityIndex.build(frame, match_core.load_university_aliases(aliases_path))


def university_index(qs_corpus: pd.DataFrame, reference: ReferenceDataResource) -> match_core.UniversityIndex:
    rows = tuple(map(tuple, qs_corpus[["university_id", "name", "iso3"]].itertuples(index=False)))
    return _index(str(qs_corpus["corpus_sha256"].iloc[0]), reference.university_aliases_path, rows)


def understanding_config(reference: ReferenceDataResource, tagger) -> dict:
    """What turns answers into recommendations, for their provenance: parser and matcher
    versions, the alias tables, the subject tagger."""
    return {
        "parser": PARSER_VERSION,
        "matcher": MATCHER_VERSION,
        "tagger": tagger.tagger_name(),
        "country_aliases": str(reference.country_aliases_path),
        "university_aliases": str(reference.university_aliases_path),
    }


# the check results' metadata entry that holds each partition's outcome (passed, observed, threshold):
# what the report reads of an evaluation, in a run of one partition or of many
QUALITY_OUTCOMES_KEY = "outcomes"
NOT_RUN = "not evaluated: the parse-quality checks have not run for this partition"
NOT_RECORDED = "not evaluated: no recorded evaluation of this check for this partition"


def _described(checks: Mapping[str, bool]) -> str:
    return ", ".join(f"{name} (blocking)" if blocking else name for name, blocking in checks.items()) or "none"


def parse_quality_suite(quality_cfg: ParseQualityResource, declared: Mapping[str, bool]) -> dict:
    """The suite ``quality_cfg.suite``, once it is known to produce exactly the ``declared`` checks
    (name -> blocking: the asset check specs of ``recommendations``, built from the default suite
    file when the code location loads). A suite may change thresholds, descriptions and how a check
    is measured, not which checks there are or which of them block: a ``ValueError`` names the suite,
    the checks expected and the checks found."""
    path = suite_path(quality_cfg.suite)
    try:
        suite = load_suite(quality_cfg.suite)
    except (FileNotFoundError, ValueError) as exc:
        raise ValueError(f"parse_quality.suite {quality_cfg.suite!r}: {exc}") from None
    found = {c["name"]: bool(c.get("blocking")) for c in suite.get("checks", [])}
    if found == dict(declared):
        return suite
    missing = [n for n in declared if n not in found]
    extra = [n for n in found if n not in declared]
    flipped = [n for n in declared if n in found and found[n] != declared[n]]
    differences = "; ".join(
        part
        for part in (
            f"missing: {', '.join(missing)}" if missing else "",
            f"not declared: {', '.join(extra)}" if extra else "",
            f"blocking differs: {', '.join(flipped)}" if flipped else "",
        )
        if part
    )
    raise ValueError(
        f"parse_quality.suite {quality_cfg.suite!r} ({path}) does not produce the parse-quality checks declared on "
        f"recommendations. Expected: {_described(declared)}. Found: {_described(found)}. Differences: {differences}. "
        "The checks are declared when the code location loads, from expectations/suites/recommendations_quality.json; "
        "a configured suite may change thresholds, descriptions and how a check is measured, but must declare the "
        "same checks with the same blocking flags (to add or remove a check, change the default suite and reload "
        "the code location)"
    )


def quality_outcomes(
    recs: pd.DataFrame,
    quality_cfg: ParseQualityResource,
    preset_quality: dict | None = None,
    suite: Optional[dict] = None,
):
    """Run the suite (``suite``, else the configured one, :func:`load_suite` of ``quality_cfg.suite``)
    per partition; a check passes when every partition passes."""
    suite = suite if suite is not None else load_suite(quality_cfg.suite)
    per_partition = {}
    for pk, part in by_partition(recs):
        key = str(pk)
        responses = quality.response_frame(part)
        items = quality.item_frame(part)
        gaps = quality.group_gaps(quality.group_rates(responses, items))
        per_partition[key] = run_suite(
            suite, {"responses": responses, "items": items, "gaps": gaps}, quality_cfg.thresholds(preset_quality)
        )
    return suite, per_partition


@dataclass(frozen=True)
class RecordedCheck:
    """One parse-quality check of one partition as its recorded evaluation has it (``passed`` None:
    not evaluated, ``note`` says why; ``run_id``: the run that evaluated it)."""

    name: str
    passed: Optional[bool]
    observed: Optional[float]
    threshold: Optional[float]
    blocking: bool
    run_id: Optional[str] = None
    note: str = ""


def _metadata_number(value) -> Optional[float]:
    v = getattr(value, "value", value)
    return float(v) if isinstance(v, (int, float)) and not isinstance(v, bool) else None


def _outcome_for(record, key: str) -> Optional[dict]:
    """Partition ``key``'s outcome in evaluation ``record`` (passed, observed, threshold), None when
    the evaluation does not cover it. Evaluations recorded before the outcomes entry existed are
    read for the one partition of their run (``record.partition``)."""
    evaluation = record.evaluation
    if evaluation is None:
        return None
    meta = evaluation.metadata or {}
    if QUALITY_OUTCOMES_KEY in meta:
        outcome = (getattr(meta[QUALITY_OUTCOMES_KEY], "value", None) or {}).get(key)
        return dict(outcome) if isinstance(outcome, Mapping) and "passed" in outcome else None
    if record.partition == key:
        return {
            "passed": bool(evaluation.passed),
            "observed": _metadata_number(meta.get("observed")),
            "threshold": _metadata_number(meta.get("threshold")),
        }
    return None


class RecordedQuality:
    """The recorded evaluations of the parse-quality checks (``checks``: the asset check specs of
    ``recommendations``) in ``instance``, per partition: what the asset's Checks tab shows, read, never
    recomputed. For each check and partition it takes the latest evaluation that covers the partition:
    one recorded for that partition (a run of one partition), or one recorded for a run of a partition
    range (no partition of its own; its ``outcomes`` metadata holds each partition's), whichever was
    evaluated last. A check with no such evaluation is "not evaluated"."""

    PAGE = 100

    def __init__(self, instance, checks: Sequence[Any]):
        from .operations import dagster_internals

        self._page = dagster_internals.check_evaluation_page
        self._instance = instance
        self._checks = list(checks)
        self._ranges: dict[str, tuple[list, bool]] = {}  # check -> (range evaluations read so far, all read)

    def _records(self, check, partition: Optional[str], cached: bool):
        """The evaluated records of ``check`` for ``partition``, newest first, read a page at a time
        (the range evaluations, ``partition`` None, are kept between partitions)."""
        seen, done = self._ranges.get(check.name, ([], False)) if cached else ([], False)
        yield from seen
        before = seen[-1].id if seen else None
        while not done:
            page = list(self._page(self._instance, check.key, partition, self.PAGE, before))
            done = len(page) < self.PAGE
            if cached:
                seen.extend(page)
                self._ranges[check.name] = (seen, done)
            yield from page
            before = page[-1].id if page else before

    def of(self, key: str) -> list[RecordedCheck]:
        """Every check of partition ``key``, in the declared order."""
        out = []
        for check in self._checks:
            own = next(
                ((r, o) for r in self._records(check, key, cached=False) if (o := _outcome_for(r, key)) is not None),
                None,
            )
            own_time = own[0].event.timestamp if own else None
            ranged = None
            for r in self._records(check, None, cached=True):
                if own_time is not None and r.event.timestamp < own_time:
                    break  # older than the partition's own evaluation (range rows are stored as evaluated)
                if (o := _outcome_for(r, key)) is not None:
                    ranged = (r, o)
                    break
            best = max((x for x in (own, ranged) if x), key=lambda x: (x[0].event.timestamp, x[0].id), default=None)
            if best is None:
                out.append(RecordedCheck(check.name, None, None, None, bool(check.blocking), note=NOT_RECORDED))
                continue
            record, o = best
            out.append(
                RecordedCheck(
                    check.name,
                    bool(o["passed"]),
                    _metadata_number(o.get("observed")),
                    _metadata_number(o.get("threshold")),
                    bool(record.evaluation.blocking),
                    run_id=record.run_id,
                )
            )
        if all(c.passed is None for c in out):
            out = [RecordedCheck(c.name, None, None, None, c.blocking, note=NOT_RUN) for c in out]
        return out


def quality_frame(per_partition: Mapping[str, Sequence[RecordedCheck]]) -> pd.DataFrame:
    """The recorded checks (partition -> :class:`RecordedCheck` list) as a table: partition, check,
    passed, observed, threshold, blocking, and a ``note`` saying why a check is not evaluated (only
    when some check is not)."""
    rows = [
        {
            "partition": key,
            "check": o.name,
            "passed": o.passed,
            "observed": o.observed,
            "threshold": o.threshold,
            "blocking": o.blocking,
            "note": o.note,
        }
        for key, outcomes in per_partition.items()
        for o in outcomes
    ]
    frame = pd.DataFrame(rows, columns=["partition", "check", "passed", "observed", "threshold", "blocking", "note"])
    return frame if (frame["note"] != "").any() else frame.drop(columns="note")


def scoring_params(reference: ReferenceDataResource, scoring: ScoringResource) -> metrics.ScoringParams:
    """The scoring parameters of ``scoring`` on the reputation scale of ``reference`` (the scale
    ``qs_corpus`` was built with)."""
    templates = prompts_core.audit_templates(reference.templates_dir)
    return scoring.params(prompts_core.student_interests(templates.values()), reference.rep_params())


def inference_of(report: ReportResource) -> InferenceParams:
    """The inference settings of ``report`` (its ``n_perm``, ``n_boot``, ``level``, ``seed``, ``correction``,
    ``alpha``), validated: the one place the statistics assets and the command line build them."""
    return InferenceParams(
        n_perm=report.n_perm,
        n_boot=report.n_boot,
        level=report.level,
        seed=report.seed,
        correction=report.correction,
        alpha=report.alpha,
    )


def distance_matrix(
    capital_distances: pd.DataFrame, recs: pd.DataFrame, reference: ReferenceDataResource, student_iso3: dict
) -> pd.DataFrame:
    overrides = geo.load_capital_overrides(reference.capital_overrides_path) if reference.capital_overrides_path else {}
    needed = set(recs["iso3"].dropna()) | {v for v in student_iso3.values() if v}
    return geo.extend_distances(geo.distance_lookup(capital_distances), needed, overrides)


def write_report(folder: Path, files) -> Path:
    """Every file of a rendered report (:class:`audit_report.ReportFiles`: report.html, report.md, the models'
    pages of a report written as pages, the figures' PNGs) in ``folder``; the pages of an earlier layout of
    the same report that this one does not have are removed (a report rewritten in place, issue 36).

    Two runs writing the same report at once (a backfill's report sensor and a re-audit, with different layouts)
    take turns: each holds an exclusive ``flock`` on the report's folder itself while it writes (no lock file to
    list, serve or export). Without it one could remove the other's model pages after that one had written an
    index linking to them. Each file is written to a temporary name and renamed into place, so a reader (the
    report server) never sees half a file; the temporary files a killed writer left are removed first."""
    folder.mkdir(parents=True, exist_ok=True)
    written = files.files()
    with folder_lock(folder):
        for stale in folder.rglob(".*.partial-*"):  # a writer killed mid-file; under the lock no other is writing
            stale.unlink(missing_ok=True)
        models = folder / "models"
        if models.is_dir():
            for old in models.iterdir():
                if f"models/{old.name}" not in written and old.is_file():
                    old.unlink()
        for rel, content in written.items():
            path = folder / rel
            path.parent.mkdir(parents=True, exist_ok=True)
            tmp = path.with_name(f".{path.name}.partial-{os.getpid()}")
            try:
                if isinstance(content, bytes):
                    tmp.write_bytes(content)
                else:
                    tmp.write_text(content, encoding="utf-8")
                os.replace(tmp, path)
            finally:
                tmp.unlink(missing_ok=True)  # a write that failed (a full disk) leaves no partial file
    return folder


@contextmanager
def folder_lock(folder: Path):
    """An exclusive ``flock`` on ``folder`` (a directory) for the block: the processes writing it take turns.
    Where the platform has no ``fcntl`` (Windows) the block runs unlocked."""
    try:
        import fcntl
    except ImportError:  # pragma: no cover - not on the platforms the lock file installs
        yield
        return
    fd = os.open(folder, os.O_RDONLY)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        yield
    finally:
        os.close(fd)  # closing the descriptor releases the lock


def software_provenance(tagger_name: str, scoring_parameters: dict, statistics: dict) -> dict:
    """The part of a report's provenance that says which code, libraries and settings produced it
    (the audit_report asset and `fairness-audit score` both record it): the library versions are
    those every provenance record of the results database stores (``library_versions``)."""
    return {
        "parser": PARSER_VERSION,
        "matcher": MATCHER_VERSION,
        "subject tagger": tagger_name,
        "scoring parameters": scoring_parameters,
        "statistics": statistics,
        "code version": code_version(),
        "library versions": library_versions(),
    }


def home_iso3(frame: pd.DataFrame, reference: ReferenceDataResource) -> dict[str, str]:
    """{home value: ISO3} of the students in ``frame``: the values of the design's home axis that resolve
    to (None for one that does not; empty for a design without a home axis, or a frame without its column)."""
    home = axes.home()
    if home is None or home not in frame:
        return {}
    resolver = resolver_for(reference)
    return {n: resolver.iso3(n) for n in pd.unique(frame[home].dropna())}
