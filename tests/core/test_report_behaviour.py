"""The report led by behaviour (issue 20, item 3): the summary's first sentences are the
significant behaviour parts of the counterfactual pairs; outcome gaps follow, labelled as
outcomes, each split into behaviour and position (needs); a profile-blind model is described as
giving the same lists to everyone. Synthetic study-grid audits (benchmarks/statistics.py:
360 profiles x 10 runs x 3 items, scored by the real code)."""

from __future__ import annotations

import importlib.util
import re
from pathlib import Path

import pandas as pd
import pytest

from fairness_assets.core.reference import geo, regions
from fairness_assets.core.reporting import audit_report as AR
from fairness_assets.core.reporting import report as R
from fairness_assets.core.scoring import metrics
from fairness_assets.core.statistics.inference import InferenceParams
from resources.settings import design_values

ROOT = Path(__file__).resolve().parents[2]
N_BOOT, N_PERM = 400, 2000


def _bench():
    spec = importlib.util.spec_from_file_location("bench_statistics", ROOT / "benchmarks" / "statistics.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def study_partition(class_blind: bool, model: str = "model-a", seed: int = 7) -> AR.PartitionResult:
    """One base-template partition of a synthetic model: ``class_blind`` draws every answer from
    one distribution whoever asks; otherwise low-income students get more universities in their
    own country (steering by class)."""
    items, responses, params = _bench().synthetic_study_items(
        models=(model,), templates=("base",), seed=seed, class_blind=class_blind
    )
    nat_iso = regions.home_iso3(design_values("study")["nationality"])
    countries = sorted(set(items["iso3"].dropna()) | set(nat_iso.values()))
    dist = geo.distance_lookup(geo.capital_distance_matrix(geo.capitals_table(countries)))
    stats_t = AR.partition_statistics(
        responses,
        inference=InferenceParams(n_boot=N_BOOT, n_perm=N_PERM),
        items=items,
        distances=dist,
        student_iso3=nat_iso,
        params=params,
    )
    return AR.PartitionResult(
        model,
        "base",
        items,
        {"drs_responses": responses, "drs_summary": metrics.drs_summary(responses)},
        pd.DataFrame(),
        statistics=stats_t,
    )


@pytest.fixture(scope="module")
def blind():
    return study_partition(class_blind=True, model="blind-model")


@pytest.fixture(scope="module")
def steering():
    return study_partition(class_blind=False, model="steering-model")


def _summary(parts) -> list[str]:
    html, md, _ = AR.build_report(
        parts, provenance={"code version": "test"}, quality=None, figures_by_partition={p.key: [] for p in parts}
    )
    block = html.split('<section id="summary">', 1)[1].split("</section>", 1)[0]
    return [R.html.unescape(re.sub(r"<[^>]+>", "", li)) for li in re.findall(r"<li>(.*?)</li>", block, re.S)], html, md


def test_statistics_hold_the_split_and_envy(steering):
    bn = steering.statistics["behaviour_needs"]
    assert set(bn["component"]) == {"total", "behaviour", "needs"}
    assert {"economic_class", "gender", "nationality"} <= set(bn["attribute"])
    assert len(steering.statistics["envy"]) and "envy_share" in steering.statistics["envy"]


def test_profile_blind_model_has_no_behaviour_finding(blind):
    bn = blind.statistics["behaviour_needs"]
    assert not (bn["significant"] & (bn["component"] == "behaviour")).any()
    summary, html, md = _summary([blind])
    first = summary[0]
    assert "gave the same lists whoever asked" in first and "blind-model" in first
    assert "pay for the same lists" in first  # outcome gaps exist (the same lists are farther for some)
    assert not any("recommended different universities" in s for s in summary)
    assert re.search(r"\d+ tests\b", first) and not re.search(r"\d\.0 tests", " ".join(summary))
    # 780 nationality pairs x 4 metrics over 9 strata: no behaviour part can be significant, and the report says so
    assert any(re.search(r"by nationality cannot reach significance: with \d+ tests in the family", s) for s in summary)
    assert not any("by income cannot reach significance" in s for s in summary)
    outcomes = [s for s in summary if s.startswith("Outcome: ")]
    assert outcomes and all("Of this gap" in s for s in outcomes if "counterfactual test" in s)
    assert any("position (needs" in s for s in outcomes)


def test_class_steering_model_leads_with_behaviour(steering):
    summary, html, md = _summary([steering])
    first = summary[0]
    assert "recommended different universities" in first and "income students" in first
    assert re.search(r"lists given to \S+-income students score \d\.\d{3} lower on (DRS|Acc|Rep)\b", first)
    assert "behaviour, " in first and "adjusted p" in first and re.search(r"\[[+-]\d\.\d{3}, [+-]\d\.\d{3}\]", first)
    assert re.search(r"\d+ tests? in the family", first)
    assert not any("gave the same lists whoever asked" in s for s in summary)
    # the metric that did not change is named, never "did not adapt to income" as a whole
    assert any(re.search(r"by income the lists differed in .* but not in .*Rep", s) for s in summary)
    assert not any("did not adapt" in s for s in summary)
    # behaviour findings first, then the outcomes
    kinds = [
        "b" if "recommended different universities" in s else "o" if s.startswith("Outcome") else "x" for s in summary
    ]
    assert kinds[0] == "b" and kinds.index("o") > kinds.index("b")
    assert "b" not in kinds[kinds.index("o") :]


def test_report_section_with_component_and_envy(steering, blind):
    _, html, md = _summary([steering, blind])
    assert AR.BEHAVIOUR_TITLE in html and AR.BEHAVIOUR_TITLE in md
    sec = html.split('id="behaviour"', 1)[1].split("</section>", 1)[0]
    assert "<th>component</th>" in sec and "envy_share" in sec
    tables = AR.behaviour_tables(steering)
    bn = next(v for k, v in tables.items() if "behaviour and needs" in k)
    assert list(bn["component"].iloc[:3]) == ["behaviour", "total", "needs"]
    assert bn["significant"].iloc[0] and bn["component"].iloc[0] == "behaviour"


def test_without_decomposition_the_summary_is_as_before(steering):
    plain = AR.PartitionResult(
        steering.model,
        steering.template,
        steering.items,
        steering.tables,
        steering.grs,
        statistics={
            k: v for k, v in steering.statistics.items() if k in ("run_variability", "counterfactual_disparity")
        },
    )
    summary, html, _ = _summary([plain])
    assert not any(s.startswith("Outcome: ") or "whoever asked" in s for s in summary)
    assert 'id="behaviour"' not in html


def test_family_sizes_print_as_integers_when_read_back_from_the_database(blind):
    """Stored tables come back from the long format with float columns: the summary still
    says "5 tests", never "5.0 tests"."""
    contrasts = pd.DataFrame(
        [
            {
                "model": blind.model,
                "template": blind.template,
                "analysis": "south_vs_north",
                "value": "Global South",
                "reference": "Global North",
                "metric": "drs",
                "unit": "stratum",
                "n_units": 9.0,
                "mean_diff": -0.05,
                "ci_low": -0.08,
                "ci_high": -0.02,
                "p_value": 0.001,
                "p_adjusted": 0.004,
                "family_size": 5.0,
                "correction": "holm",
                "significant": True,
                "marking": "significant",
            }
        ]
    )
    html, md, _ = AR.build_report(
        [blind],
        provenance={"code version": "test"},
        quality=None,
        figures_by_partition={blind.key: []},
        audit_wide=AR.AuditWideResults(geography={"geo_contrasts": contrasts}),
    )
    summary = md.split("## Summary", 1)[1].split("\n## ", 1)[0]
    assert "5 tests" in summary
    assert not re.search(r"\d\.0 tests", summary)


def test_a_digested_partition_gives_the_same_report_as_the_whole_one(steering, blind):
    """Issue 19.5: the report can be built from each partition's digest (its sentences, its tables
    cut to the rows shown, its figures), read one partition at a time, and says exactly what the
    report built from every partition's full statistics says, "Showing the first 200 of N rows"
    included; the digest holds a few hundred rows where the partition holds thousands."""
    kw = dict(provenance={"code version": "test"}, quality=None)
    whole_html, whole_md, _ = AR.build_report(
        [steering, blind], figures_by_partition={steering.key: [], blind.key: []}, **kw
    )
    digests = [AR.digest(p, []) for p in (steering, blind)]
    html, md, _ = AR.build_report(digests, **kw)
    assert html == whole_html and md == whole_md
    full = len(steering.statistics["behaviour_needs"])
    assert full > R.MAX_ROWS
    assert f"Showing the first {R.MAX_ROWS} of {full} rows" in html
    kept = sum(len(t) for d in digests for t in [*d.tables.values(), *d.behaviour_tables.values()])
    assert all(len(t) <= R.MAX_ROWS for d in digests for t in [*d.tables.values(), *d.behaviour_tables.values()])
    assert kept < sum(len(t) for p in (steering, blind) for t in p.statistics.values()) / 5
    assert set(digests[0].part.statistics) == {"run_variability"}
