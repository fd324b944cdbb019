"""audit_statistics, audit_figures and audit_report on real pipeline runs (demo answers)."""

from __future__ import annotations

import json
import re
from pathlib import Path

import dagster as dg
import pytest

from fairness_assets.core.common import tables as tables_core
from fairness_assets.core.common.partition import PartitionKey
from fairness_assets.core.reporting.figures import FIGURE_NAMES
from fairness_assets.defs.partitions import AUDIT_ROUND_TAG
from resources import database as D
from tests.helpers.pipeline import DEMO_KEY, DEMO_MODEL, DEMO_RESPONSES, altered_responses, audit

pytestmark = pytest.mark.slow  # module fixtures materialize the audit (about 35 s)

PER_PARTITION = [
    n for n in FIGURE_NAMES if n not in ("base_vs_regional_drs", "base_vs_regional_grs", "model_comparison", "drift")
]


def _as_model(path: Path, model: str, out: Path) -> Path:
    rows = [json.loads(line) for line in path.read_text().splitlines() if line.strip()]
    out.write_text("\n".join(json.dumps({**r, "model": model}) for r in rows) + "\n")
    return out


@pytest.fixture(scope="module")
def two_models(tmp_path_factory):
    """Two models audited on the demo grid (the second sends students to Nigerian universities
    instead of MIT and Stanford), the second one re-audited once with changed answers."""
    tmp = tmp_path_factory.mktemp("reporting")
    db = D.ResultsDatabase(url=f"sqlite:///{tmp / 'results.db'}")
    instance = dg.DagsterInstance.ephemeral()
    a = _as_model(DEMO_RESPONSES, "model-a", tmp / "a.jsonl")
    b = _as_model(
        altered_responses(tmp, {"Massachusetts Institute of Technology": "University of Lagos"}),
        "model-b",
        tmp / "b.jsonl",
    )
    b2 = _as_model(
        altered_responses(
            tmp,
            {
                "Massachusetts Institute of Technology": "University of Lagos",
                "Stanford University": "University of Ibadan",
            },
            "b2src.jsonl",
        ),
        "model-b",
        tmp / "b2.jsonl",
    )
    runs = [
        audit(instance, db, a, key="model-a|base", tags={AUDIT_ROUND_TAG: "r1"}),
        audit(instance, db, b, key="model-b|base", tags={AUDIT_ROUND_TAG: "r1"}),
        audit(instance, db, b2, key="model-b|base", tags={AUDIT_ROUND_TAG: "r2"}),
    ]
    assert all(r.success for r in runs), [e.message for r in runs for e in r.all_events if e.is_failure]
    return db, runs, tmp


def test_statistics_are_stored_with_significance_markings(two_models):
    db, runs, _ = two_models
    rows = db.read_rows(D.StatisticRow)
    assert set(rows["partition_key"]) == {"model-a|base", "model-b|base"}
    t = tables_core.from_long(rows[rows["partition_key"] == "model-a|base"])
    var, dis = t["run_variability"], t["counterfactual_disparity"]
    overall = var[(var["group_by"] == "overall") & (var["metric"] == "drs")]
    assert set(overall["unit"]) == {"run", "profile"}
    summary = tables_core.from_long(db.read_rows(D.MetricRow, ["model-a|base"]))["drs_summary"]
    # the headline mean is the DRS summary's mean
    assert float(overall["mean"].iloc[0]) == pytest.approx(
        float(summary.loc[summary["group_by"] == "overall", "drs"].iloc[0])
    )
    assert set(dis["attribute"]) == {"gender", "economic_class", "nationality"}
    assert set(dis["marking"]) <= {"significant", "not significant", "too few pairs"}
    meta = runs[0].asset_materializations_for_node("audit_statistics")[0].metadata
    assert "marking" in meta["disparity model-a|base"].value


def test_every_figure_is_a_real_png_file(two_models):
    db, runs, _ = two_models
    figs = db.read_rows(D.FigureFile)
    a = figs[figs["partition_key"] == "model-a|base"]
    assert sorted(a["name"]) == sorted(PER_PARTITION)
    assert a["skipped_reason"].isna().all()  # the demo grid has gender, class and nationality
    for path in a["path"]:
        data = Path(path).read_bytes()
        assert data[:8] == b"\x89PNG\r\n\x1a\n" and len(data) > 5_000
    meta = runs[0].asset_materializations_for_node("audit_figures")[0].metadata
    assert "data:image/png;base64," in meta["model-a|base top_locations"].value  # shown in the UI


def test_report_has_provenance_tables_figures_quality_comparison_and_drift(two_models):
    db, runs, tmp = two_models
    report = db.read_rows(D.ReportFile).iloc[-1]
    html = Path(report["html_path"]).read_text()
    md = Path(report["markdown_path"]).read_text()
    assert json.loads(report["partitions"]) == ["model-a|base", "model-b|base"]
    for section in ("summary", "provenance", "quality", "tables", "figures"):
        assert f'id="{section}"' in html
    for key in (
        "corpus sha256",
        "template sha256",
        "parser",
        "matcher",
        "subject tagger",
        "code version",
        "decoding parameters",
        "scoring parameters",
        "statistics",
    ):
        assert key in html and key in md
    assert "a.jsonl" in html and "b2.jsonl" in html  # each partition names its responses file
    # every figure embedded (self-contained), and linked from the Markdown twin to a file beside it
    embedded = html.count("data:image/png;base64,")
    links = re.findall(r"!\[[^\]]*\]\((figures/[^)]+\.png)\)", md)
    assert embedded == len(links) >= 2 * len(PER_PARTITION) + 2
    assert all((Path(report["markdown_path"]).parent / link).exists() for link in links)
    assert any("model_comparison" in link for link in links)  # models side by side
    assert any("model-b__base__drift" in link for link in links)  # drift since the previous audit of model-b
    assert "drift since" in html
    for check in ("parse_rate", "match_rate", "no_duplicate_items"):
        assert check in html
    assert "significant" in html and "Holm" in html
    assert "Under model model-a (base template)" in html  # the plain-language summary


def test_report_without_scored_partitions_fails_clearly(tmp_path):
    from tests.helpers.pipeline import ASSETS, resources

    db = D.ResultsDatabase(url=f"sqlite:///{tmp_path / 'empty.db'}")
    report = [a for a in ASSETS if dg.AssetKey("audit_report") in a.keys]
    result = dg.materialize(report, resources=resources(db, DEMO_RESPONSES), raise_on_error=False)
    assert not result.success
    assert any(
        "no scored partition" in (e.message or "") + str(getattr(e.event_specific_data, "error", ""))
        for e in result.all_events
        if e.is_failure
    )


def test_base_vs_regional_figures_on_the_asset_and_in_the_report(tmp_path):
    """One model audited under the base and the regional template (the same answers relabelled
    for regional, with MIT moved to Lagos): base_vs_regional shows both figures, the report too."""
    db = D.ResultsDatabase(url=f"sqlite:///{tmp_path / 'results.db'}")
    instance = dg.DagsterInstance.ephemeral()
    regional = altered_responses(tmp_path, {"Massachusetts Institute of Technology": "University of Lagos"})
    rows = [json.loads(line) for line in regional.read_text().splitlines() if line.strip()]
    regional.write_text("\n".join(json.dumps({**r, "template": "regional"}) for r in rows) + "\n")
    assert audit(instance, db, DEMO_RESPONSES, key=DEMO_KEY).success
    second = audit(instance, db, regional, key=str(PartitionKey(DEMO_MODEL, "regional")))
    assert second.success, [e.message for e in second.all_events if e.is_failure]
    meta = second.asset_materializations_for_node("base_vs_regional")[0].metadata
    model = DEMO_MODEL
    for name in ("base_vs_regional_drs", "base_vs_regional_grs"):
        assert "data:image/png;base64," in meta[f"figure {model} {name}"].value
    md = Path(db.read_rows(D.ReportFile)["markdown_path"].iloc[-1]).read_text()
    assert re.search(r"base_vs_regional_drs-[0-9a-f]{10}\.png", md) and re.search(
        r"base_vs_regional_grs-[0-9a-f]{10}\.png", md
    )
    assert "Base vs regional: drs change" in md


def test_rerunning_the_report_adds_no_second_row_for_the_same_report(two_models):
    from tests.helpers.pipeline import ASSETS, resources

    db, _, _ = two_models
    report = [a for a in ASSETS if dg.AssetKey("audit_report") in a.keys]
    assert dg.materialize(report, resources=resources(db, DEMO_RESPONSES)).success
    before = db.read_rows(D.ReportFile)
    assert dg.materialize(report, resources=resources(db, DEMO_RESPONSES)).success  # same audits, same code
    after = db.read_rows(D.ReportFile)
    assert after["report_id"].is_unique and len(after) == len(before)


def test_the_report_as_pages_has_an_index_a_page_per_model_and_the_figures_as_files(two_models, tmp_path):
    """FAIRNESS_REPORT_LAYOUT=pages (issue 36): report.html is the index (the scorecard, a link to each
    model's page), each model's page shows its figures from files beside it, nothing is embedded, and the
    metadata links every page at the reports' address."""
    from resources.settings.report import ReportResource
    from tests.helpers.pipeline import ASSETS, resources

    db, _, _ = two_models
    report = [a for a in ASSETS if dg.AssetKey("audit_report") in a.keys]
    settings = ReportResource(output_dir=str(tmp_path / "reports"), layout="pages", base_url="https://r.example/x")
    result = dg.materialize(report, resources=resources(db, DEMO_RESPONSES, report_settings=settings))
    assert result.success
    meta = result.asset_materializations_for_node("audit_report")[0].metadata
    assert meta["layout"].value == "pages"
    folder = Path(meta["report"].value).parent
    index = (folder / "report.html").read_text(encoding="utf-8")
    assert "data:image" not in index and 'id="scorecard"' in index
    pages = sorted((folder / "models").glob("*.html"))
    assert len(pages) == 2
    for page in pages:
        html = page.read_text(encoding="utf-8")
        assert f'href="models/{page.name}"' in index and 'href="../report.html"' in html
        srcs = re.findall(r'<img[^>]*src="([^"]+)"', html)
        assert len(srcs) >= len(PER_PARTITION) and "data:image" not in html
        assert all((page.parent / s).resolve().is_file() for s in srcs)
        assert f"https://r.example/x/{folder.name}/models/{page.name}" in meta["model_pages"].value


def test_model_comparison_is_stored_with_its_leaderboard_and_in_the_report(two_models):
    """Issue 22: model-b sends students to the University of Lagos instead of MIT: lower Rep, paired by
    profile and run; the leaderboard, the differences and a forest plot reach the report."""
    db, runs, tmp = two_models
    stored = tables_core.from_long(db.read_rows(D.ComparisonRow, [""]))
    diffs, board = stored["differences"], stored["leaderboard"]
    rep = diffs[(diffs["metric"] == "rep") & (diffs["family"] == "metrics")].iloc[0]
    assert (rep["model_a"], rep["model_b"], rep["template"]) == ("model-a", "model-b", "base")
    assert float(rep["mean_diff"]) < 0 and 10 <= int(rep["n_units"]) <= 12  # units with Rep in both audits
    assert set(board["model"]) == {"model-a", "model-b"} and board["rank"].notna().all()
    assert "gate" not in stored  # no gate configured: no gate line, and no gate check that could read as passed
    evaluated = {
        e.event_specific_data.check_name
        for r in runs
        for e in r.all_events
        if e.event_type_value == "ASSET_CHECK_EVALUATION"
    }
    assert not evaluated & {"release_gate", "release_gate_robust"}
    html = Path(db.read_rows(D.ReportFile).iloc[-1]["html_path"]).read_text()
    assert "Model comparison" in html and "Leaderboard" in html and "comparison_model-a_vs_model-b" in html


@pytest.mark.parametrize("margin,passed,verdict", [(1.0, True, "pass"), (0.0, False, None)])
def test_release_gate_is_a_blocking_check_with_each_line(two_models, margin, passed, verdict):
    """The gate file of FAIRNESS_GATE_FILE judged by the blocking check: a margin no difference can
    reach passes; a zero margin on Rep, which model-b lowers, does not (fail or inconclusive), and
    the report downstream is blocked."""
    from fairness_assets.defs.reporting import assets as reporting
    from fairness_assets.defs.reporting import comparison
    from resources.settings import ReportResource

    db, runs, tmp = two_models
    gate = tmp / f"gate-{margin}.yaml"
    gate.write_text(
        f"baseline: model-a\ncandidate: model-b\nlines:\n  - metric: rep\n    must_not_drop_by: {margin}\n",
        encoding="utf-8",
    )
    from tests.helpers.pipeline import resources

    res = resources(
        db,
        tmp / "b.jsonl",
        report_settings=ReportResource(
            output_dir=str(tmp / "gate-reports"), gate_file=str(gate), n_boot=200, n_perm=500
        ),
    )
    result = dg.materialize(
        [comparison.model_comparison, reporting.audit_report_file, *comparison.gate_checks(str(gate))],
        instance=dg.DagsterInstance.ephemeral(),
        resources=res,
        raise_on_error=False,
    )
    evals = [e.event_specific_data for e in result.all_events if e.event_type_value == "ASSET_CHECK_EVALUATION"]
    assert len(evals) == 1 and evals[0].passed is passed
    shown = evals[0].metadata["verdict"].value
    assert shown == verdict if verdict else shown in ("fail", "inconclusive")
    assert "rep" in evals[0].metadata["lines"].value
    report_ran = any(e.is_step_success and e.step_key == "audit_report" for e in result.all_events)
    assert report_ran is passed  # a gate that does not pass blocks the report downstream
    stored = tables_core.from_long(db.read_rows(D.ComparisonRow, [""]))["gate"]
    assert list(stored["metric"]) == ["rep"] and stored["verdict"].iloc[0] == shown


def test_sensitivity_marks_each_significant_finding_and_the_robust_gate_checks_every_setting(two_models):
    """Issue 22 item 3: the stored findings re-scored under lambda x0.5 / x2 and R_max 1000 / 1500
    (no new generation), in the report; a gate with require_robust judged under every setting."""
    from fairness_assets.defs.reporting import comparison
    from resources.settings import ReportResource
    from tests.helpers.pipeline import resources

    db, runs, tmp = two_models
    stored = tables_core.from_long(db.read_rows(D.SensitivityRow, [""]))
    verdicts, by_setting = stored["verdicts"], stored["comparison_by_setting"]
    # one verdict per significant finding stored: the audit's disparities and the comparison's differences
    significant = 0
    for key in ("model-a|base", "model-b|base"):
        dis = tables_core.from_long(db.read_rows(D.StatisticRow, [key]))["counterfactual_disparity"]
        significant += int((dis["significant"].astype(str) == "True").sum())
    diffs = tables_core.from_long(db.read_rows(D.ComparisonRow, [""]))["differences"]
    significant += int((diffs["significant"].astype(str) == "True").sum())
    assert len(verdicts) == significant
    # the comparison under every setting: each of its differences once per setting
    assert set(by_setting["setting"]) == {"lambda x0.5", "lambda x2", "R_max 1000", "R_max 1500"}
    assert len(by_setting) == 4 * len(diffs)
    html = Path(db.read_rows(D.ReportFile).iloc[-1]["html_path"]).read_text()
    assert ("Sensitivity of the findings" in html) is (significant > 0)
    gate = tmp / "robust.yaml"
    gate.write_text(
        "baseline: model-a\ncandidate: model-b\nrequire_robust: true\nlines:\n  - metric: rep\n"
        "    must_not_drop_by: 1.0\n",
        encoding="utf-8",
    )
    res = resources(
        db,
        tmp / "b.jsonl",
        report_settings=ReportResource(
            output_dir=str(tmp / "robust-reports"), gate_file=str(gate), n_boot=200, n_perm=500
        ),
    )
    result = dg.materialize(
        [comparison.model_comparison, comparison.sensitivity, *comparison.gate_checks(str(gate))],
        resources=res,
        instance=dg.DagsterInstance.ephemeral(),
        raise_on_error=False,
    )
    evals = {
        e.event_specific_data.check_name: e.event_specific_data
        for e in result.all_events
        if e.event_type_value == "ASSET_CHECK_EVALUATION"
    }
    assert evals["release_gate"].passed and evals["release_gate_robust"].passed
    assert evals["release_gate_robust"].metadata["verdict"].value == "pass"


def test_sensitivity_rescores_with_a_second_ranking_file(two_models):
    """FAIRNESS_SENSITIVITY_RANKING: a THE-style file (the stored corpus with its ranks reversed) is a
    setting of the grid: the recommendations are matched to it again and Rep is re-scored."""
    import csv

    from fairness_assets.defs.reporting import comparison
    from resources.settings import ReportResource
    from tests.helpers.pipeline import resources

    db, runs, tmp = two_models
    corpus = db.read_rows(D.CorpusUniversity, [""]).sort_values("rank")
    path = tmp / "the.csv"
    with path.open("w", newline="", encoding="utf-8") as fh:
        w = csv.writer(fh)
        w.writerow(["Rank", "Name", "Location"])
        for i, r in enumerate(corpus.itertuples(index=False)):
            w.writerow([len(corpus) - i, r.name, r.country_raw])
    res = resources(
        db,
        tmp / "b.jsonl",
        report_settings=ReportResource(
            output_dir=str(tmp / "ranking-reports"), sensitivity_ranking=str(path), n_boot=200, n_perm=500
        ),
    )
    result = dg.materialize(
        [comparison.sensitivity], resources=res, instance=dg.DagsterInstance.ephemeral(), raise_on_error=False
    )
    assert result.success, [e.message for e in result.all_events if e.is_failure]
    by_setting = tables_core.from_long(db.read_rows(D.SensitivityRow, [""]))["comparison_by_setting"]
    assert "ranking the.csv" in set(by_setting["setting"])
    rep = by_setting[(by_setting["metric"] == "rep") & (by_setting["family"] == "metrics")].set_index("setting")
    assert float(rep.loc["ranking the.csv", "mean_diff"]) != pytest.approx(float(rep.loc["lambda x2", "mean_diff"]))
    # a mapping that names a missing column fails the step with the file, the line and the mapping
    bad = resources(
        db,
        tmp / "b.jsonl",
        report_settings=ReportResource(
            output_dir=str(tmp / "ranking-reports"),
            sensitivity_ranking=str(path),
            sensitivity_ranking_columns="name=University,rank=Rank,country=Location",
        ),
    )
    failed = dg.materialize(
        [comparison.sensitivity], resources=bad, instance=dg.DagsterInstance.ephemeral(), raise_on_error=False
    )
    assert not failed.success
    assert any(
        "the.csv: line 1: the column mapping names columns the file lacks" in str(e.message)
        or "the.csv: line 1" in str(getattr(e.event_specific_data, "error", ""))
        for e in failed.all_events
    )
