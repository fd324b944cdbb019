"""The report from the UI and its scorecard on a real pipeline (issue 23, items 1 and 3): two models
audited on the demo answers with a release gate and a deployment's base URL. The scorecard's
numbers are checked against the stored tables read here directly (recommendations, items, GRS,
corpus, statistics, geography, comparison), the metadata of audit_report and audit_figures against
the files they link to, and summary.md's scorecard against the report's."""

from __future__ import annotations

import json
import re
from pathlib import Path

import dagster as dg
import pandas as pd
import pytest

from fairness_assets.core.common import tables as tables_core
from fairness_assets.core.common.partition import PartitionKey
from resources import database as D
from resources.settings import ReportResource
from tests.helpers import pipeline as P

pytestmark = pytest.mark.slow  # the module fixture materializes two audits (about a minute)

BASE_URL = "https://reports.example.org/fairness"


def _as_model(path: Path, model: str, out: Path) -> Path:
    rows = [json.loads(line) for line in path.read_text().splitlines() if line.strip()]
    out.write_text("\n".join(json.dumps({**r, "model": model}) for r in rows) + "\n")
    return out


@pytest.fixture(scope="module")
def audited(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("scorecard")
    db = D.ResultsDatabase(url=f"sqlite:///{tmp / 'results.db'}")
    gate = tmp / "gate.yaml"
    gate.write_text(
        "baseline: model-a\ncandidate: model-b\nlines:\n  - metric: drs\n    must_not_drop_by: 1.0\n", encoding="utf-8"
    )
    settings = ReportResource(output_dir=str(tmp / "reports"), base_url=BASE_URL + "/", gate_file=str(gate))
    instance = dg.DagsterInstance.ephemeral()
    instance.add_dynamic_partitions("models", ["model-a", "model-b"])
    a = _as_model(P.DEMO_RESPONSES, "model-a", tmp / "a.jsonl")
    b = _as_model(
        P.altered_responses(tmp, {"Massachusetts Institute of Technology": "University of Lagos"}),
        "model-b",
        tmp / "b.jsonl",
    )
    assets = P.ASSETS
    # the gate only once both models are audited (with model-a alone it is inconclusive and blocks the run)
    first = ReportResource(output_dir=str(tmp / "reports"), base_url=BASE_URL + "/")
    runs = [
        dg.materialize(
            assets,
            instance=instance,
            partition_key=str(PartitionKey(m, "base")),
            raise_on_error=False,
            resources=P.resources(db, path, report_settings=s),
        )
        for m, path, s in (("model-a", a, first), ("model-b", b, settings))
    ]
    assert all(r.success for r in runs), [e.message for r in runs for e in r.all_events if e.is_failure]
    report = db.read_rows(D.ReportFile).sort_values("created_at").iloc[-1]
    return db, runs, tmp, settings, report


def _section(markdown: str, title: str) -> str:
    lines = markdown.splitlines()
    start = next(i for i, ln in enumerate(lines) if ln.startswith("## ") and title in ln)
    end = next((i for i in range(start + 1, len(lines)) if lines[i].startswith("## ")), len(lines))
    return "\n".join(lines[start:end]).strip()


def _scorecard_rows(markdown: str) -> dict[tuple[str, str], dict[str, str]]:
    """The scorecard's table of the report's Markdown, by (model, template)."""
    sec = _section(markdown, "Scorecard")
    table = sec.split("### Per model and template", 1)[1].strip().split("\n\n", 1)[0].splitlines()
    unescape = lambda c: re.sub(r"\\(.)", r"\1", c.strip())  # noqa: E731
    header = [unescape(c) for c in table[0].strip("|").split(" | ")]
    out = {}
    for line in table[2:]:
        cells = dict(zip(header, (unescape(c) for c in line.strip("|").split(" | ")), strict=False))
        out[(cells["model"], cells["template"])] = cells
    return out


def test_the_scorecard_figures_match_the_stored_tables(audited):
    db, _, _, _, report = audited
    md = Path(report["markdown_path"]).read_text()
    rows = _scorecard_rows(md)
    assert set(rows) == {("model-a", "base"), ("model-b", "base")}
    corpus_countries = db.read_rows(D.CorpusUniversity, [""])["iso3"].nunique()
    board = tables_core.from_long(db.read_rows(D.ComparisonRow, [""]))["leaderboard"]
    for (model, template), cells in rows.items():
        key = str(PartitionKey(model, template))
        recs = db.read_rows(D.Recommendation, [key])
        answers = recs.drop_duplicates("response_id")
        parsed = int(answers["parse_status"].isin(["ok", "partial"]).sum())
        assert cells["parse rate"] == f"{parsed / len(answers):.1%} ({parsed} of {len(answers)} answers)"
        items = recs[recs["university_text"].notna()]
        matched = int(items["university_id"].notna().sum())
        assert cells["match rate"] == f"{matched / len(items):.1%} ({matched} of {len(items)} items)"
        scored = db.read_rows(D.DRSItem, [key])
        located = scored[scored["iso3"].notna()]
        share = float(located["iso3"].isin(["USA", "GBR"]).mean())
        assert cells["US+UK share"] == f"{share:.1%} of {len(located)} located recommendations"
        grs = db.read_rows(D.GRSCountry, [key])
        assert cells["GRS coverage"] == f"{int((grs['grs'] > 0).sum())} of {corpus_countries} corpus countries"
        responses = tables_core.from_long(db.read_rows(D.MetricRow, [key]))["drs_responses"]
        var = tables_core.from_long(db.read_rows(D.StatisticRow, [key]))["run_variability"]
        # the demo has one run: the interval is the one over profiles
        over = var[(var["group_by"] == "overall") & (var["metric"] == "drs") & (var["unit"] == "profile")].iloc[0]
        mean = float(responses["drs"].mean())  # over the scored answers
        assert cells["mean DRS [95% interval]"] == (
            f"{mean:.3f} [{over['ci_low']:.3f}, {over['ci_high']:.3f}] over {int(over['n_units'])} profiles"
        )
        assert cells["mean Acad [95% interval]"] == "not defined: the template states no subject interest"
        rank = board[(board["model"] == model) & (board["template"] == template) & (board["metric"] == "drs")].iloc[0]
        assert cells["compared (DRS rank)"].startswith(f"DRS rank {rank['rank']} of 2")


def test_the_strongest_behaviour_findings_are_those_of_the_stored_statistics(audited):
    db, _, _, _, report = audited
    sec = _section(Path(report["markdown_path"]).read_text(), "Scorecard")
    significant = []
    for key in ("model-a|base", "model-b|base"):
        bn = tables_core.from_long(db.read_rows(D.StatisticRow, [key]))["behaviour_needs"]
        geo = tables_core.from_long(db.read_rows(D.GeographyRow, [key])).get("geo_contrasts", pd.DataFrame())
        for df in (bn, geo):
            if len(df):
                sel = df[(df["component"] == "behaviour") & (df["significant"].astype(str) == "True")]
                significant += [abs(float(v)) for v in sel["mean_diff"]]
    top = sorted(significant, reverse=True)[:3]
    if not top:
        assert "No significant behaviour finding" in sec and not re.search(r"### The \d+ strongest", sec)
    else:
        shown = [abs(float(v)) for v in re.findall(r"\| ([-+]\d\.\d{3}) \\\[", sec)]
        assert shown == [round(v, 3) for v in top]


def test_the_gate_and_the_comparison_reach_the_scorecard(audited):
    db, _, _, _, report = audited
    sec = _section(Path(report["markdown_path"]).read_text(), "Scorecard")
    gate = tables_core.from_long(db.read_rows(D.ComparisonRow, [""]))["gate"]
    assert list(gate["verdict"]) == ["pass"]
    assert "| base | release gate | PASS (1 pass of 1 line) |" in sec
    assert "gate line 4: DRS must not drop by 1" in sec
    assert "model comparison: model-b - model-a" in sec
    assert not re.search(r"\bnan\b", sec, re.I)


def test_audit_report_metadata_links_the_report_and_shows_the_scorecard(audited):
    db, runs, _, _, report = audited
    meta = runs[-1].asset_materializations_for_node("audit_report")[-1].metadata
    assert isinstance(meta["report_url"], dg.UrlMetadataValue)
    assert meta["report_url"].url == f"{BASE_URL}/{report['report_id']}/report.html"  # the base URL, not a path
    assert meta["markdown_url"].url == f"{BASE_URL}/{report['report_id']}/report.md"
    assert meta["report"].value == report["html_path"] and meta["markdown"].value == report["markdown_path"]
    md = Path(report["markdown_path"]).read_text()
    assert meta["scorecard"].value == _section(md, "Scorecard")
    assert meta["summary"].value == _section(md, "Summary")
    html = Path(report["html_path"]).read_text()
    assert html.index('id="scorecard"') < html.index('id="summary"')


def test_audit_figures_metadata_links_each_figure_and_shows_the_map(audited):
    db, runs, tmp, settings, _ = audited
    meta = runs[-1].asset_materializations_for_node("audit_figures")[-1].metadata
    figures = db.read_rows(D.FigureFile, ["model-b|base"])
    text = meta["model-b|base figures"].value
    drawn = figures[figures["path"].notna()]
    folder = (tmp / "reports").resolve()
    for r in drawn.itertuples(index=False):
        rel = Path(r.path).resolve().relative_to(folder).as_posix()
        assert f"]({BASE_URL}/{rel})" in text and Path(r.path).is_file(), r.name
    names = set(drawn["name"])
    map_name = next(n for n in ("world_map", "recommended_locations") if n in names)
    map_path = drawn[drawn["name"] == map_name]["path"].iloc[0]
    image = re.search(r"!\[[^\]]+\]\(([^)]+)\)", text)
    assert image and image.group(1) == settings.url_of(map_path)
    assert meta["folder_url"].url == f"{BASE_URL}/figures/"


def test_summary_md_has_the_reports_scorecard(audited, tmp_path):
    from fairness_assets import export

    db, _, _, _, report = audited
    written = export.export_results(db.resolved_url(), tmp_path, log=lambda *_: None)
    summary = export.summary_markdown(written, 24, 0, "corpus.csv", "responses.jsonl")
    card = _section(Path(report["markdown_path"]).read_text(), "Scorecard")
    assert card in summary
    assert summary.index("## Scorecard") < summary.index("## Partitions")
