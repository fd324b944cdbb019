"""The report as an index and one page per model (issue 36): the pages say what the one self-contained file
says, split (every table, figure and summary sentence on exactly one page, the summary whole on the index),
every link and image of every page resolves to a file of the report, no figure is embedded, and ``auto``
chooses one file up to the study's size. Synthetic study-grid partitions, scored by the real code."""

from __future__ import annotations

import os
import re
from pathlib import Path, PurePosixPath

import pytest

from fairness_assets.core.reporting import audit_report as AR
from fairness_assets.core.reporting import figures as F
from fairness_assets.core.reporting import report as R
from fairness_assets.defs.services import write_report
from tests.core.test_report_behaviour import study_partition

PNG = b"\x89PNG\r\n\x1a\n" + b"\x00" * 16
KW = dict(provenance={"code version": "test"}, quality=None)
ROOT = Path(__file__).resolve().parents[2]


def _figures(p) -> list[F.Figure]:
    return [
        F.Figure(name, f"{name} of {p.model}", "caption", PNG, p.model, p.template, None) for name in ("top", "map")
    ] + [F.Figure("empty", "not drawn", "caption", None, p.model, p.template, "no data")]


@pytest.fixture(scope="module")
def digests():
    parts = [study_partition(class_blind=False, model="steering/model"), study_partition(True, model="blind-model")]
    return [AR.digest(p, _figures(p)) for p in parts]


@pytest.fixture(scope="module")
def single(digests):
    return AR.build_report_files(digests, layout="single", **KW)


@pytest.fixture(scope="module")
def pages(digests):
    return AR.build_report_files(digests, layout="pages", **KW)


def _html_pages(files) -> dict[str, str]:
    return {p: t for p, t in files.files().items() if p.endswith(".html")}


def _h3(html: str) -> list[str]:
    return [R.html.unescape(t) for t in re.findall(r"<h3[^>]*>(.*?)</h3>", html)]


def test_auto_writes_one_file_up_to_the_study_size_and_pages_beyond(digests, single):
    assert AR.layout_for("auto", AR.SINGLE_FILE_MAX_PARTITIONS) == "single"
    assert AR.layout_for("auto", AR.SINGLE_FILE_MAX_PARTITIONS + 1) == "pages"
    assert AR.layout_for("pages", 1) == "pages" and AR.layout_for("single", 500) == "single"
    with pytest.raises(ValueError, match="'paged' is not one of auto, single, pages"):
        AR.layout_for("paged", 3)
    auto = AR.build_report_files(digests, **KW)
    assert auto.layout == "single" and not auto.pages
    html, md, figures = AR.build_report(digests, **KW)  # the one file is the report build_report renders
    assert (auto.html, auto.markdown) == (html, md) == (single.html, single.markdown)
    assert [f.slug for f in auto.figures] == [f.slug for f in figures]
    assert "data:image/png;base64," in single.html


def test_the_index_links_every_model_page_and_each_page_links_back(digests, pages):
    paths = AR.model_page_paths(["steering/model", "blind-model"])
    assert all(p.startswith("models/") and "/" not in p[len("models/") :] for p in paths.values())
    assert set(pages.pages) == {f"{p}{ext}" for p in paths.values() for ext in (".html", ".md")}
    for model, path in paths.items():
        assert f'href="{path}.html"' in pages.html and f"]({path}.md)" in pages.markdown
        page = pages.pages[f"{path}.html"]
        assert 'href="../report.html"' in page and "](../report.md)" in pages.pages[f"{path}.md"]
        assert f"<title>{R._esc('LLM university-recommendation fairness audit: ' + model)}</title>" in page
    assert "Scorecard" in pages.html and "Scorecard" not in pages.pages[f"{paths['blind-model']}.html"]


def test_every_link_and_image_of_every_page_is_a_file_of_the_report_and_nothing_is_embedded(pages):
    files = pages.files()
    for path, html in _html_pages(pages).items():
        assert "data:image" not in html, path
        for ref in re.findall(r'(?:href|src)="([^"#]+)"', html):
            target = PurePosixPath(path).parent / R.html.unescape(ref)
            resolved = PurePosixPath(*[p for p in target.parts if p != "."])
            parts: list[str] = []
            for part in resolved.parts:
                parts = parts[:-1] if part == ".." else [*parts, part]
            assert "/".join(parts) in files, f"{path} links {ref}, which is not a file of the report"
    images = [src for html in _html_pages(pages).values() for src in re.findall(r'<img[^>]*src="([^"]+)"', html)]
    assert images and all('loading="lazy"' in html for html in _html_pages(pages).values() if "<img" in html)
    for path, md in ((p, t) for p, t in pages.files().items() if p.endswith(".md")):
        for ref in re.findall(r"\]\(([^)#]+)\)", md):
            target = PurePosixPath(path).parent / ref
            parts = []
            for part in target.parts:
                parts = parts[:-1] if part == ".." else [*parts, part]
            assert "/".join(parts) in files, f"{path} links {ref}, which is not a file of the report"


def test_the_pages_say_what_the_one_file_says(single, pages):
    """Every table and figure of the one file is on exactly one page; the figures not drawn are listed
    with their reason; every summary sentence is on the index and on the page of its model."""
    shown = [t for html in _html_pages(pages).values() for t in _h3(html)]
    for title in _h3(single.html):
        if title in ("Figures", "Figures not drawn", "Notes"):
            continue
        assert shown.count(title) == 1, title
    single_figs = set(re.findall(r'<figure id="fig-([^"]+)"', single.html))
    page_figs = [s for html in _html_pages(pages).values() for s in re.findall(r'<figure id="fig-([^"]+)"', html)]
    assert single_figs and sorted(page_figs) == sorted(single_figs)
    assert {f.slug for f in pages.figures} == {f.slug for f in single.figures}
    assert sum(html.count("no data</li>") for html in _html_pages(pages).values()) == single.html.count("no data</li>")
    summary = single.markdown.split("## Summary", 1)[1].split("\n## ", 1)[0]
    index_summary = pages.markdown.split("## Summary", 1)[1].split("\n## ", 1)[0]
    assert summary == index_summary and summary.count("\n- ") >= 2
    for path, md in ((p, t) for p, t in pages.pages.items() if p.endswith(".md")):
        page_summary = md.split("## Summary", 1)[1].split("\n## ", 1)[0]
        assert all(line in summary for line in page_summary.splitlines() if line.startswith("- ")), path


def test_a_report_rewritten_in_place_keeps_only_its_own_pages(tmp_path, digests, pages, single):
    folder = write_report(tmp_path / "report-x", pages)
    written = {str(p.relative_to(folder)) for p in folder.rglob("*") if p.is_file()}
    assert written == set(pages.files())
    (folder / "models" / "stale.html").write_text("from an earlier audit", encoding="utf-8")
    write_report(folder, pages)
    assert not (folder / "models" / "stale.html").exists()
    write_report(folder, single)  # the same report as one file: the models' pages go
    assert not any((folder / "models").iterdir())
    assert (folder / "report.html").read_text(encoding="utf-8") == single.html


def test_the_opening_benchmark_opens_the_index_a_model_page_and_the_same_report_as_one_file(tmp_path, pages):
    """benchmarks/report_open.py on a report written as pages (in a subprocess: the script puts benchmarks/ on
    sys.path, whose statistics.py shadows the standard library's): three pages opened in headless Chromium, the
    one-file equivalent with every figure embedded, so larger than the index."""
    import subprocess
    import sys

    from tests.helpers.browser import CHROMEDRIVER, CHROMIUM

    missing = [p for p in (CHROMIUM, CHROMEDRIVER) if not Path(p).exists()]
    if missing:
        assert not os.environ.get("CI"), f"{missing} not installed; .ci/run installs chromium and chromium-driver"
        pytest.skip(f"{missing} not installed: apt-get install chromium chromium-driver (as .ci/run does)")
    folder = write_report(tmp_path / "12-partitions", pages)
    done = subprocess.run(
        [sys.executable, str(ROOT / "benchmarks" / "report_open.py"), str(folder), "--repeats", "1", "--no-write"],
        capture_output=True,
        text=True,
        timeout=300,
        cwd=ROOT,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    rows = re.findall(r"^\s*12 partitions, (.+?)\s+([\d.]+) MB\s+load\s+([\d.]+) s", done.stdout, flags=re.M)
    kinds = {k.strip(): float(mb) for k, mb, _ in rows}
    assert set(kinds) == {"index", "largest model page", "the same as one file"}, done.stdout
    assert kinds["the same as one file"] > kinds["index"]


def test_comparison_figures_drawn_in_workers_are_the_same():
    """The forest plot of each pair of models and the models side by side, drawn in two worker processes
    (core/reference/workers.py), are the figures drawn in this process, byte for byte."""
    import pandas as pd

    from fairness_assets.core.statistics import comparison as comparison_core
    from fairness_assets.core.statistics.inference import InferenceParams

    parts = [study_partition(False, model=m, seed=s) for m, s in (("model-a", 7), ("model-b", 8), ("model-c", 9))]
    responses = pd.concat([p.tables["drs_responses"] for p in parts], ignore_index=True)
    items = pd.concat([p.items for p in parts], ignore_index=True)[["response_id", "iso3"]]
    compared = comparison_core.tables_for(responses, items, inference=InferenceParams(n_boot=50, n_perm=50))
    wide = AR.AuditWideResults(comparison=compared)
    digests = [AR.digest(p, _figures(p)) for p in parts]
    drawn = {workers: AR.assemble_report(digests, audit_wide=wide, workers=workers).all_figures() for workers in (1, 2)}
    forests = [f for f in drawn[1] if f.name.startswith("comparison_")]
    assert len(forests) == 3  # every pair of the three models: the test can fail
    assert [(f.name, f.png) for f in drawn[2]] == [(f.name, f.png) for f in drawn[1]]


def test_models_compared_in_workers_are_the_same():
    """model_comparison's job (one template's models compared, core.statistics.comparison.tables_job) gives in a
    worker process the tables it gives here."""
    import pandas as pd

    from fairness_assets.core.reference import workers
    from fairness_assets.core.statistics import comparison as comparison_core
    from fairness_assets.core.statistics.inference import InferenceParams

    parts = [study_partition(False, model=m, seed=s) for m, s in (("model-a", 7), ("model-b", 8))]
    job = {
        "responses": pd.concat([p.tables["drs_responses"] for p in parts], ignore_index=True),
        "items": pd.concat([p.items for p in parts], ignore_index=True)[["response_id", "iso3"]],
        "inference": InferenceParams(n_boot=50, n_perm=50),
        "options": {"pairs": comparison_core.PairChoice()},
    }
    here = comparison_core.tables_job(job)
    there = workers.map_partitions(comparison_core.tables_job, [job, job], workers=2)
    assert len(here["differences"]) > 0
    for out in there:
        for name in ("differences", "leaderboard"):
            pd.testing.assert_frame_equal(out[name], here[name], obj=name)
