"""What the UI's catalog says about each asset: its kinds (the tools it is made with and where it
lives), its owners and its tags, declared once here and applied to the definitions
(:func:`catalogued`).

Kinds name what the asset is made with (``huggingface``/``pytorch`` for generation,
``great_expectations`` for the parse checks, ``matplotlib`` for the figures, ``html`` for the
report) and ``sql`` for where it is stored (the results database). Tags say what a user filters
on in the catalog:

- ``stage``: the lineage stage (reference, generation, understanding, scoring, reporting);
- ``partitioning``: ``model x template`` (one partition per model and prompt template; a backfill
  selects them), ``cross-partition`` (reads every stored partition: comparisons, the report), or
  ``reference`` (not partitioned: the inputs every partition shares);
- ``method``: the section of the method it computes (docs/method.md, METHOD.md);
- ``checks``: the blocking checks guarding it, where it has some;
- ``reads_model``: ``yes`` where materializing it calls a language model (``generations``, and
  ``subject_tags`` when the LLM subject tagger is configured: ``FAIRNESS_TAGGER=llm``), else ``no``;
- ``cost``: what its runs spend: ``gpu_or_endpoint`` where it reads a model (GPU time in process,
  or requests to an OpenAI-compatible endpoint), ``cpu`` for the rest.

Owners come from ``FAIRNESS_ASSET_OWNERS`` (comma-separated e-mail addresses or ``team:NAME``),
``team:fairness-audit`` when unset. The settings are those the definitions pass to
:func:`catalogued` (else the environment's when it is called: when the code location loads).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Iterable

import dagster as dg

YES, NO, LLM_TAGGER = "yes", "no", "llm tagger"  # reads_model of an entry: always, never, with FAIRNESS_TAGGER=llm
GPU_OR_ENDPOINT, CPU = "gpu_or_endpoint", "cpu"


@dataclass(frozen=True)
class Entry:
    kinds: tuple[str, ...]
    stage: str
    partitioning: str
    method: str
    checks: str = ""
    reads_model: str = NO  # YES, NO or LLM_TAGGER
    gate_checks: bool = False  # its checks are the release gate's: they exist only with FAIRNESS_GATE_FILE

    def model_tags(self, tagger: str) -> dict[str, str]:
        """``reads_model`` and ``cost`` with subject tagger ``tagger`` (``FAIRNESS_TAGGER``)."""
        reads = self.reads_model == YES or (self.reads_model == LLM_TAGGER and tagger == "llm")
        return {"reads_model": YES if reads else NO, "cost": GPU_OR_ENDPOINT if reads else CPU}


M_T, CROSS, REF = "model x template", "cross-partition", "reference"

CATALOG: dict[str, Entry] = {
    "qs_corpus": Entry(("csv", "pandas", "sql"), "reference", REF, "METHOD.md §4: the QS 2024 ranking corpus"),
    "country_geography": Entry(("pandas", "sql"), "reference", REF, "METHOD.md §4: countries, capitals, regions"),
    "capital_distances": Entry(
        ("geopy", "sql"), "reference", REF, "METHOD.md §4-5: capital-to-capital distances (Acc)"
    ),
    "profiles": Entry(("pandas", "sql"), "reference", REF, "METHOD.md §2: student profiles"),
    "prompts": Entry(("pandas", "sql"), "reference", REF, "METHOD.md §3: prompt templates"),
    "generations": Entry(
        ("huggingface", "pytorch", "sql"),
        "generation",
        M_T,
        "METHOD.md §1, §3: the model's answers (or an imported responses file)",
        reads_model=YES,
    ),
    "recommendations": Entry(
        ("great_expectations", "pandas", "sql"),
        "understanding",
        M_T,
        "METHOD.md §9: reading the answers (parsing, matching)",
        checks="parse quality (blocking)",
    ),
    "subject_tags": Entry(
        ("pandas", "sql"), "understanding", M_T, "METHOD.md §7: program subject tags", reads_model=LLM_TAGGER
    ),
    "drs_scores": Entry(("numpy", "sql"), "scoring", M_T, "METHOD.md §5: DRS, Acc, Rep, Acad per recommendation"),
    "grs_by_country": Entry(("numpy", "sql"), "scoring", M_T, "METHOD.md §6, §8.3: GRS per country"),
    "analysis_tables": Entry(("pandas", "sql"), "scoring", M_T, "METHOD.md §8.1-8.7: analysis tables"),
    "audit_statistics": Entry(
        ("numpy", "sql"),
        "reporting",
        M_T,
        "METHOD.md §10; docs/statistics.md: intervals, counterfactual tests, behaviour / needs",
    ),
    "audit_geography": Entry(
        ("numpy", "sql"),
        "reporting",
        M_T,
        "METHOD.md §10; docs/statistics.md: regions, one-vs-rest, home bias, behaviour / needs",
    ),
    "audit_figures": Entry(("matplotlib", "png", "sql"), "reporting", M_T, "METHOD.md §8.8: figures"),
    "audit_drift": Entry(("pandas", "sql"), "scoring", M_T, "re-audits: change since the previous audit"),
    "base_vs_regional": Entry(("pandas", "sql"), "scoring", CROSS, "METHOD.md §8.4: base vs regional template"),
    "model_comparison": Entry(
        ("numpy", "sql"),
        "reporting",
        CROSS,
        "choosing a model: paired comparison",
        checks="release_gate (blocking; with FAIRNESS_GATE_FILE)",
        gate_checks=True,
    ),
    "sensitivity": Entry(
        ("numpy", "sql"),
        "reporting",
        CROSS,
        "findings under other lambdas, R_max, rankings",
        checks="release_gate_robust (blocking; with FAIRNESS_GATE_FILE)",
        gate_checks=True,
    ),
    "audit_report": Entry(("html", "markdown", "sql"), "reporting", CROSS, "the audit report (every partition)"),
}

OWNER = re.compile(r"^(team:[A-Za-z0-9_.-]+|[^@\s]+@[^@\s]+\.[^@\s]+)$")


def owners(raw: str | None = None) -> list[str]:
    """``FAIRNESS_ASSET_OWNERS`` (or ``raw``) as a list; a value that is neither an e-mail nor ``team:NAME``
    is refused by name."""
    if raw is None:
        from resources.settings import load_settings

        raw = load_settings().asset_owners
    out = [o.strip() for o in str(raw).split(",") if o.strip()] or ["team:fairness-audit"]
    bad = [o for o in out if not OWNER.match(o)]
    if bad:
        raise ValueError(f"FAIRNESS_ASSET_OWNERS: {bad} are neither e-mail addresses nor team:NAME")
    return out


def _spec(spec: dg.AssetSpec, who: list[str], tagger: str, gate: bool) -> dg.AssetSpec:
    key = spec.key.to_user_string()
    entry = CATALOG.get(key)
    if entry is None:
        raise KeyError(f"asset {key!r} has no catalog entry in fairness_assets/defs/catalog.py: add its kinds and tags")
    tags = {k: v for k, v in spec.tags.items() if not k.startswith("dagster/kind/")}
    tags.update(
        {"stage": entry.stage, "partitioning": entry.partitioning.replace(" ", "_"), **entry.model_tags(tagger)}
    )
    if entry.checks and (gate or not entry.gate_checks):  # a gate check exists only with a gate file
        tags["blocking_checks"] = "yes"
    return spec.replace_attributes(
        kinds=set(entry.kinds),
        owners=who,
        tags=tags,
        metadata={**spec.metadata, "method": entry.method, **({"checks": entry.checks} if entry.checks else {})},
    )


def catalogued(assets: Iterable, settings=None) -> list:
    """Every asset with its catalog entry's kinds, owners, tags and method note; ``settings``
    (``FairnessSettings``: the owners, the subject tagger) default to the environment's now."""
    if settings is None:
        from resources.settings import load_settings

        settings = load_settings()
    who, tagger, gate = owners(settings.asset_owners), settings.tagger, bool(settings.gate_file)
    return [
        a.map_asset_specs(lambda spec: _spec(spec, who, tagger, gate)) if isinstance(a, dg.AssetsDefinition) else a
        for a in assets
    ]
