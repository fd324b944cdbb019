"""Services the stages share: what more than one stage (or the command line) needs from the
core and the resources, written once. Assets call these; nothing here is an asset.

- the country resolver and the university index of the configured reference data;
- the parse-quality suite's outcomes per partition and as a table;
- the scoring parameters and the distance matrix a partition is scored with;
- where a report is written, and the provenance that names the code and settings behind it.
"""

from __future__ import annotations

from functools import lru_cache
from pathlib import Path

import pandas as pd

from expectations.runner import load_suite, run_suite
from fairness_assets.core import geo, metrics, quality
from fairness_assets.core import match as match_core
from fairness_assets.core import prompts as prompts_core
from fairness_assets.core import report as report_core
from fairness_assets.core.match import MATCHER_VERSION
from fairness_assets.core.partition import by_partition
from fairness_assets.core.parse import PARSER_VERSION
from resources.database import code_version, library_versions
from resources.settings import ParseQualityResource, ReferenceDataResource, ScoringResource


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
    return {"parser": PARSER_VERSION, "matcher": MATCHER_VERSION, "tagger": tagger.tagger_name(),
            "country_aliases": str(reference.country_aliases_path),
            "university_aliases": str(reference.university_aliases_path)}


def quality_outcomes(recs: pd.DataFrame, quality_cfg: ParseQualityResource, preset_quality: dict | None = None):
    """Run the suite per partition; a check passes when every partition passes."""
    suite = load_suite(quality_cfg.suite)
    per_partition = {}
    for pk, part in by_partition(recs):
        key = str(pk)
        responses = quality.response_frame(part)
        items = quality.item_frame(part)
        gaps = quality.group_gaps(quality.group_rates(responses, items))
        per_partition[key] = run_suite(suite, {"responses": responses, "items": items, "gaps": gaps},
                                       quality_cfg.thresholds(preset_quality))
    return suite, per_partition


def quality_frame(per_partition) -> pd.DataFrame:
    """The suite's outcomes as a table: partition, check, passed, observed, threshold, blocking."""
    return pd.DataFrame([{"partition": key, "check": o.name, "passed": o.success, "observed": o.observed,
                          "threshold": o.threshold, "blocking": o.blocking}
                         for key, outcomes in per_partition.items() for o in outcomes])


def scoring_params(reference: ReferenceDataResource, scoring: ScoringResource) -> metrics.ScoringParams:
    """The scoring parameters of ``scoring`` on the reputation scale of ``reference`` (the scale
    ``qs_corpus`` was built with)."""
    templates = prompts_core.load_templates(reference.templates_dir)
    return scoring.params(prompts_core.student_interests(templates.values()), reference.rep_params())


def distance_matrix(capital_distances: pd.DataFrame, recs: pd.DataFrame, reference: ReferenceDataResource,
                    student_iso3: dict) -> pd.DataFrame:
    overrides = geo.load_capital_overrides(reference.capital_overrides_path) if reference.capital_overrides_path else {}
    needed = set(recs["iso3"].dropna()) | {v for v in student_iso3.values() if v}
    return geo.extend_distances(geo.distance_lookup(capital_distances), needed, overrides)


def write_report(folder: Path, html: str, markdown: str, figures) -> Path:
    """report.html, report.md and the figures the Markdown links to, in ``folder``."""
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "report.html").write_text(html, encoding="utf-8")
    (folder / "report.md").write_text(markdown, encoding="utf-8")
    for rel, png in report_core.figure_files(figures).items():
        (folder / rel).parent.mkdir(parents=True, exist_ok=True)
        (folder / rel).write_bytes(png)
    return folder


def software_provenance(tagger_name: str, scoring_parameters: dict, statistics: dict) -> dict:
    """The part of a report's provenance that says which code, libraries and settings produced it
    (the audit_report asset and `fairness-audit score` both record it): the library versions are
    those every provenance record of the results database stores (``library_versions``)."""
    return {"parser": PARSER_VERSION, "matcher": MATCHER_VERSION, "subject tagger": tagger_name,
            "scoring parameters": scoring_parameters, "statistics": statistics, "code version": code_version(),
            "library versions": library_versions()}
