"""Figures (METHOD.md §8.8) drawn from real tables: the parse-evaluation answers of
tests/fixtures/eval_responses.jsonl, scored end to end against the QS export by `score_responses`."""

from __future__ import annotations

import io
import json
import os
import re
from pathlib import Path

import matplotlib.image as mpimg
import numpy as np
import pandas as pd
import pytest

from fairness_assets.core.reporting import figures as F

pytestmark = pytest.mark.slow  # the module fixture scores a file through the asset graph (about 30 s)

FIXTURE = Path(__file__).resolve().parents[1] / "fixtures" / "eval_responses.jsonl"
PNG_MAGIC = b"\x89PNG\r\n\x1a\n"
GENDERS = ["male", "female", "transgender"]
CLASSES = ["high", "middle", "low"]
NATIONALITIES = ["Nigeria", "India", "China", "United States", "Brazil", "Germany", "Kenya", "Tonga", "Mexico", "Fiji"]
PARTITION_NAMES = {
    f"top_{k}{s}" for k in ("locations", "universities", "programs") for s in ("", "_by_class", "_by_gender")
} | {"recommended_locations", "nationality_heatmap", "world_map"}

_SCORED: dict = {}


def responses_file(path: Path) -> Path:
    """Real model answers (the parse-evaluation set) given synthetic profiles: model m1 under the
    base, regional and gender_only templates, model m2 under base (another profile order)."""
    answers = [
        json.loads(line)["response"] for line in FIXTURE.read_text(encoding="utf-8").splitlines() if line.strip()
    ]
    rows = []
    for i, text in enumerate(answers):
        prof = dict(
            gender=GENDERS[i % 3],
            economic_class=CLASSES[(i // 3) % 3],
            nationality=NATIONALITIES[i % len(NATIONALITIES)],
        )
        rows.append(dict(model="m1", template="base", run=i, response=text, **prof))
        if i % 3:
            rows.append(dict(model="m1", template="regional", run=i, response=answers[(i + 7) % len(answers)], **prof))
        if i < 40:
            rows.append(dict(model="m1", template="gender_only", run=i, gender=GENDERS[i % 3], response=text))
        rows.append(dict(model="m2", template="base", run=i, response=answers[(i * 5) % len(answers)], **prof))
    path.write_text("\n".join(json.dumps(r) for r in rows) + "\n", encoding="utf-8")
    return path


def scored_tables(tmp_dir: Path, qs_export: Path) -> dict[str, pd.DataFrame]:
    """The CLI's tables (all partitions, with model/template columns); computed once per test session and
    shared by the xdist workers (tests/core/test_report.py reads the same tables): the first worker to ask
    scores the file into the session's temporary folder under a lock, the others read what it exported."""
    if "tables" not in _SCORED:
        from filelock import FileLock

        from fairness_assets.export import ExportedTables
        from fairness_assets.local import score_responses

        # a worker's temp folder is SESSION/popen-gwN/NAME: the session's folder is shared by its workers only
        shared = tmp_dir.parents[1] if os.environ.get("PYTEST_XDIST_WORKER") else tmp_dir
        names = shared / "eval-scored" / "tables.json"
        with FileLock(str(shared / "eval-scored.lock")):
            if names.exists():
                _SCORED["tables"] = ExportedTables(names.parent / "out", json.loads(names.read_text()))
            else:
                names.parent.mkdir(parents=True, exist_ok=True)
                src = responses_file(names.parent / "responses.jsonl")
                tables = score_responses(str(src), str(qs_export), str(names.parent / "out"), log=lambda *_: None)
                names.write_text(json.dumps(list(tables)))
                _SCORED["tables"] = tables
    return _SCORED["tables"]


def assert_valid_png(png: bytes) -> np.ndarray:
    assert isinstance(png, bytes) and png[:8] == PNG_MAGIC
    assert len(png) > 5_000
    img = mpimg.imread(io.BytesIO(png), format="png")
    assert img.ndim == 3 and img.shape[0] > 150 and img.shape[1] > 300
    assert float(img[..., :3].std()) > 0.01  # not a uniform image
    return img


@pytest.fixture(scope="module")
def tables(tmp_path_factory, qs_export):
    return scored_tables(tmp_path_factory.mktemp("figures-data"), qs_export)


@pytest.fixture(scope="module")
def base_figures(tables):
    return F.all_partition_figures(tables, model="m1", template="base")


def test_scored_fixture_is_realistic(tables):
    items = tables["drs_items"]
    assert {("m1", "base"), ("m1", "regional"), ("m1", "gender_only"), ("m2", "base")} <= set(
        zip(items["model"], items["template"], strict=False)
    )
    base = items[(items["model"] == "m1") & (items["template"] == "base")]
    assert base["matched_name"].notna().sum() > 100 and base["iso3"].nunique() > 20


def test_every_partition_figure_is_a_valid_png(base_figures):
    assert {f.name for f in base_figures} == PARTITION_NAMES
    for fig in base_figures:
        assert not fig.skipped, (fig.name, fig.skipped_reason)
        assert fig.model == "m1" and fig.template == "base"
        assert "m1" in fig.title and "base" in fig.title
        assert fig.caption and fig.slug.startswith(f"m1__base__{fig.name}-")
        assert_valid_png(fig.png)
    locations = next(f for f in base_figures if f.name == "recommended_locations")
    assert "map" in locations.caption and "corpus" in locations.caption
    world = next(f for f in base_figures if f.name == "world_map")
    assert "Triangles: the 10 countries of the students' nationalities" in world.caption  # NATIONALITIES
    assert "Natural Earth" in world.caption and "corpus countries were recommended" in world.caption


def test_faceted_figures_are_wider_than_overall(base_figures):
    shapes = {f.name: assert_valid_png(f.png).shape for f in base_figures}
    assert shapes["top_universities_by_class"][1] > 1.5 * shapes["top_universities"][1]


def test_same_input_gives_same_bytes(tables, base_figures):
    part = F.partition_tables(tables, "m1", "base")
    items = part["drs_items"]
    before = {f.name: f.png for f in base_figures}
    assert F.recommended_locations(items, part["grs_by_country"]).png == before["recommended_locations"]
    assert F.nationality_heatmap(items).png == before["nationality_heatmap"]
    shuffled = items.sample(frac=1.0, random_state=7)  # row order does not matter
    a = F.top_figure(items, "universities", "gender")
    b = F.top_figure(shuffled, "universities", "gender")
    assert a.png == b.png == before["top_universities_by_gender"]


def test_top_counts_match_value_counts(tables):
    items = F.partition_tables(tables, "m1", "base")["drs_items"]
    top = F.top_counts(items, "locations", n=20)
    expected = items["country"].value_counts()
    assert len(top) == 20 and top["count"].iloc[0] == expected.iloc[0] and top["label"].iloc[0] == expected.index[0]
    assert top["share"].iloc[0] == pytest.approx(expected.iloc[0] / expected.sum())
    by = F.top_counts(items, "programs", "economic_class", n=5)
    assert set(by["economic_class"]) == {"high", "middle", "low"}
    assert by.groupby("economic_class").size().max() <= 5
    unis = F.top_counts(items, "universities", n=10_000)
    assert unis["count"].sum() == items["university_text"].notna().sum()  # unmatched kept, marked
    assert not unis["label"].str.endswith("(not in corpus)").all()


def test_reduced_context_figures_are_skipped_with_a_reason(tables):
    figs = {f.name: f for f in F.all_partition_figures(tables, model="m1", template="gender_only")}
    assert set(figs) == PARTITION_NAMES
    for name in ("top_locations_by_class", "top_universities_by_class", "top_programs_by_class"):
        assert figs[name].skipped and figs[name].png is None
        assert "economic class" in figs[name].skipped_reason
    assert figs["nationality_heatmap"].skipped and "nationality" in figs["nationality_heatmap"].skipped_reason
    for name in ("top_locations", "top_universities_by_gender", "top_programs", "recommended_locations", "world_map"):
        assert_valid_png(figs[name].png)
    assert "state no nationality" in figs["world_map"].caption


def test_empty_inputs_are_skipped_never_blank(tables):
    items = F.partition_tables(tables, "m1", "base")["drs_items"]
    empty = items.iloc[0:0]
    for fig in (
        F.top_figure(empty, "locations"),
        F.recommended_locations(empty),
        F.nationality_heatmap(empty),
        F.world_map(empty, F.partition_tables(tables, "m1", "base")["grs_by_country"]),
        F.model_comparison(pd.DataFrame(columns=["model", "metric", "value"])),
        F.drift(pd.DataFrame(columns=["group", "metric", "previous", "current"])),
        *F.base_vs_regional_figures(pd.DataFrame(), pd.DataFrame(), "m1"),
    ):
        assert fig.png is None and fig.skipped and fig.skipped_reason
        assert fig.caption.startswith("Not drawn")
    no_program = items.assign(program_norm=None)
    fig = F.top_figure(no_program, "programs")
    assert fig.skipped and "program" in fig.skipped_reason


def test_several_partitions_need_a_choice(tables):
    with pytest.raises(ValueError, match="model"):
        F.all_partition_figures(tables)


def test_base_vs_regional_figures(tables):
    figs = F.base_vs_regional_figures(
        tables["base_vs_regional_drs_change"], tables["base_vs_regional_grs_change"], model="m1"
    )
    assert [f.name for f in figs] == ["base_vs_regional_drs", "base_vs_regional_grs"]
    for f in figs:
        assert "m1" in f.title
        assert_valid_png(f.png)


def _bootstrap_ci(values: np.ndarray, reps: int = 400, seed: int = 0) -> tuple[float, float]:
    rng = np.random.default_rng(seed)
    idx = rng.integers(0, len(values), size=(reps, len(values)))
    means = values[idx].mean(axis=1)
    return float(np.quantile(means, 0.025)), float(np.quantile(means, 0.975))


def test_model_comparison_from_real_tables(tables):
    resp = tables["drs_responses"]
    resp = resp[(resp["template"] == "base") & resp["drs"].notna()]
    conc = tables["concentration"]
    rows = []
    for model, part in resp.groupby("model"):
        lo, hi = _bootstrap_ci(part["drs"].to_numpy())
        rows.append(dict(model=model, metric="mean DRS", value=part["drs"].mean(), ci_low=lo, ci_high=hi))
        share = conc[(conc["model"] == model) & (conc["template"] == "base")]["us_uk_share"].iloc[0]
        rows.append(dict(model=model, metric="US+UK share", value=share))
    fig = F.model_comparison(pd.DataFrame(rows), template="base")
    assert fig.name == "model_comparison" and "base" in fig.title and "confidence interval" in fig.caption
    assert_valid_png(fig.png)
    assert F.model_comparison(pd.DataFrame(rows), template="base").png == fig.png
    by_template = pd.DataFrame(rows).assign(template="base")
    by_template = pd.concat([by_template, by_template.assign(template="regional", value=by_template["value"] * 0.9)])
    assert_valid_png(F.model_comparison(by_template).png)


def test_drift_between_two_runs(tables):
    s = tables["drs_summary"]
    prev = s[(s["model"] == "m1") & (s["template"] == "base")]
    cur = s[(s["model"] == "m2") & (s["template"] == "base")]
    long = lambda d: d.melt(id_vars=["group_by", "group"], value_vars=["drs", "acc", "rep"], var_name="metric")  # noqa: E731
    t = long(prev).merge(long(cur), on=["group_by", "group", "metric"], suffixes=("_p", "_c"))
    t = t.rename(columns={"value_p": "previous", "value_c": "current"}).assign(model="m1")
    t["change"] = t["current"] - t["previous"]
    fig = F.drift(t, previous_label="run 1", current_label="run 2")
    assert fig.name == "drift" and "m1" in fig.title and "run 1" in fig.title
    assert_valid_png(fig.png)
    grs_prev = tables["grs_by_country"].query("model == 'm1' and template == 'base'")
    grs_cur = tables["grs_by_country"].query("model == 'm2' and template == 'base'")
    g = grs_prev[["country", "grs"]].merge(grs_cur[["country", "grs"]], on="country", suffixes=("_p", "_c"))
    g = g.rename(columns={"grs_p": "previous", "grs_c": "current"}).assign(metric="grs")
    fig = F.drift(g, model="m1", max_rows=15)
    assert_valid_png(fig.png) is not None and "15 largest" in fig.caption


def test_long_and_hostile_names_are_cut(tables):
    assert F.shorten("x" * 100, 20) == "x" * 19 + "\u2026" and len(F.shorten("x" * 100, 20)) == 20
    assert F.shorten("  short   name ") == "short name"
    items = F.partition_tables(tables, "m1", "base")["drs_items"].copy()
    items.loc[items.index[:5], "matched_name"] = "University of " + "Very " * 40 + "Long Names <script>"
    fig = F.top_figure(items, "universities")
    assert_valid_png(fig.png)


def test_slug_is_file_name_safe():
    f = F.Figure("top_locations", "t", "c", b"", model="org/model:v1 <x>", template="base")
    assert re.fullmatch(r"org-model-v1-x__base__top_locations-[0-9a-f]{10}", f.slug)
    assert set(F.FIGURE_NAMES) >= PARTITION_NAMES | {
        "base_vs_regional_drs",
        "base_vs_regional_grs",
        "model_comparison",
        "drift",
    }


def test_file_names_are_unique_per_exact_model_and_template():
    """Names that differ only in characters the file-safe form drops get different files."""
    names = ["llama 3", "llama-3", "llama/3", "Llama-3", "llama_3"]
    slugs = {F.Figure("top_locations", "t", "c", b"x", model=m, template="base").slug for m in names}
    assert len(slugs) == len(names)
    assert len({s.lower() for s in slugs}) == len(names)  # case-insensitive file systems too
    one = F.Figure("top_locations", "t", "c", b"x", model="llama 3", template="base")
    assert one.slug == F.Figure("top_locations", "t", "c", None, model="llama 3", template="base").slug  # stable
    assert F.Figure("top_locations", "t", "c", b"x", model="llama 3", template="regional").slug != one.slug


@pytest.mark.slow
def test_partitions_drawn_in_worker_processes_give_the_same_bytes(tables):
    """The asset draws several partitions in spawned worker processes: same figures, same order,
    byte for byte, as drawn in the calling process."""
    jobs = [(tables, "m1", "base"), (tables, "m2", "base")]
    serial = F.many_partition_figures(jobs, workers=1)
    parallel = F.many_partition_figures(jobs, workers=2)
    assert [[f.name for f in figs] for figs in parallel] == [[f.name for f in figs] for figs in serial]
    assert [[f.png for f in figs] for figs in parallel] == [[f.png for f in figs] for figs in serial]
    assert {f.model for f in serial[1]} == {"m2"}


@pytest.mark.parametrize("nationalities", [1, 2, 12])
def test_the_heatmaps_colour_bar_label_is_not_cut_off(monkeypatch, nationalities):
    """Issue 23.6: with a few nationalities the heatmap was shorter than its colour bar's label."""
    from fairness_assets.core.reporting import figures as F

    measured = []
    real = F._png

    def png(fig):  # the label's extent against the figure's, measured before the figure is saved and cleared
        renderer = fig.canvas.get_renderer()
        labels = [ax.yaxis.label for ax in fig.axes if ax.yaxis.label.get_text() == F.HEATMAP_BAR_LABEL]
        measured.append((labels[0].get_window_extent(renderer) if labels else None, fig.bbox))
        return real(fig)

    monkeypatch.setattr(F.heatmap, "_png", png)  # nationality_heatmap calls the _png of figures.heatmap
    nats = [f"Country{i}" for i in range(nationalities)]
    items = pd.DataFrame(
        {
            "nationality": [n for n in nats for _ in range(3)],
            "country": ["Kenya", "France", "Japan"] * nationalities,
            "iso3": ["KEN", "FRA", "JPN"] * nationalities,
            "university_id": ["u1", "u2", "u3"] * nationalities,
        }
    )
    fig = F.nationality_heatmap(items, model="m", template="base")
    assert not fig.skipped and measured
    extent, box = measured[-1]
    assert extent is not None, "the colour bar has its label"
    assert extent.y0 >= box.y0 - 1 and extent.y1 <= box.y1 + 1, (extent, box)
