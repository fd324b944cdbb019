"""`fairness-audit score` runs the asset graph: the command line holds no pipeline of its own,
partitions are covered exactly, already-split items are a mode of the generations source."""

import ast
import json
from pathlib import Path

import pandas as pd
import pytest

from fairness_assets.core.generation import responses as R
from fairness_assets.local import bounded_boxes, partition_boxes
from tests.helpers.source import parse

ROOT = Path(__file__).resolve().parents[2]


def test_cli_imports_nothing_from_defs_and_holds_no_pipeline_logic():
    tree = parse((ROOT / "fairness_assets" / "cli.py").read_text())
    modules = [n.module or "" for n in ast.walk(tree) if isinstance(n, ast.ImportFrom)]
    modules += [a.name for n in ast.walk(tree) if isinstance(n, ast.Import) for a in n.names]
    assert not [m for m in modules if "defs" in m.split(".")], modules
    # no core function is called from the CLI but the error classes it prints
    core = [m for m in modules if m.startswith("core") or ".core" in m or m.startswith("fairness_assets.core")]
    assert all(m.endswith(("corpus", "geo", "responses", "gate", "prompts")) for m in core), core  # error classes
    names = {n.id for n in ast.walk(tree) if isinstance(n, ast.Name)} | {
        n.attr for n in ast.walk(tree) if isinstance(n, ast.Attribute)
    }
    assert not names & {
        "score_partition",
        "build_recommendations",
        "match_items",
        "base_vs_regional",
        "build_report",
        "parse_responses",
    }


GRID = ["academic", "base", "class_only", "gender_only", "nationality_only", "regional"]


@pytest.mark.parametrize(
    "pairs",
    [
        {("a", t) for t in GRID},
        {("a", "base"), ("a", "regional"), ("a", "gender_only"), ("b", "base")},
        {("a", "base"), ("b", "base"), ("c", "base"), ("c", "regional")},
        {("a", "academic"), ("c", "regional")},
    ],
)
def test_partition_boxes_cover_exactly_the_pairs(pairs):
    models = sorted({m for m, _ in pairs})
    boxes = partition_boxes(pairs, models, GRID)
    covered = []
    for m0, m1, t0, t1 in boxes:
        for m in models[models.index(m0) : models.index(m1) + 1]:
            for t in GRID[GRID.index(t0) : GRID.index(t1) + 1]:
                covered.append((m, t))
    assert sorted(covered) == sorted(pairs)  # every pair once, nothing that is not a pair
    if (
        len({frozenset(t for m, t in pairs if m == x) for x in models}) == 1
        and len(pairs) == len(models) * len({t for _, t in pairs})
        and len(pairs) == len(GRID) * len(models)
    ):
        assert len(boxes) == 1  # the full grid is one run


@pytest.mark.parametrize("most", [1, 2, 4, 6, 7])
def test_bounded_boxes_hold_at_most_so_many_partitions_and_cover_the_same_pairs(most):
    """score's runs hold a bounded number of partitions whatever the number of models (memory)."""
    models = [f"m{i:02d}" for i in range(19)]
    pairs = {(m, t) for m in models for t in GRID}
    boxes = bounded_boxes(partition_boxes(pairs, models, GRID), models, GRID, most=most)
    covered = []
    for m0, m1, t0, t1 in boxes:
        cell = [
            (m, t)
            for m in models[models.index(m0) : models.index(m1) + 1]
            for t in GRID[GRID.index(t0) : GRID.index(t1) + 1]
        ]
        assert 1 <= len(cell) <= most
        covered += cell
    assert sorted(covered) == sorted(pairs)
    assert len(boxes) <= -(-len(pairs) // most) * 2  # few runs: no box much smaller than it could be
    with pytest.raises(ValueError, match="at least 1"):
        bounded_boxes([("m00", "m00", "base", "base")], models, GRID, most=0)


def _items_frame():
    rows = []
    for run, items in enumerate(
        [
            [
                ("MIT", "MSc CS", "USA"),
                ("UCL", None, "UK"),
                ("ETH Zurich - Swiss Federal Institute of Technology", "MSc Physics", None),
                ("Kyoto University", "MBA", "Japan"),
            ],
            [(None, None, None)],
        ]
    ):
        for k, (u, p, c) in enumerate(items):
            rows.append(
                {
                    "source_row": 2 + len(rows),
                    "model": "m",
                    "template": "base",
                    "run": run,
                    "gender": "female",
                    "economic_class": "low",
                    "nationality": "Kenya",
                    "profile_set": "full",
                    "profile_id": "p1",
                    "text_note": None,
                    "university": u,
                    "program": p,
                    "country": c,
                    "item_index": 3 - k if run == 0 else 0,
                }
            )
    return pd.DataFrame(rows)


def test_items_are_stored_as_one_document_per_sample_and_read_back_in_item_order():
    items = _items_frame()
    samples = R.samples_from_items(items)
    assert len(samples) == 2 and set(samples["response_format"]) == {R.ITEMS_FORMAT}
    doc = json.loads(samples.loc[samples["run"] == 0, "response"].iloc[0])
    # item_index order (3 - k): the file's last item comes first
    assert [i["university"] for i in doc["items"]] == [
        "Kyoto University",
        "ETH Zurich - Swiss Federal Institute of Technology",
        "UCL",
        "MIT",
    ]
    gens = samples.assign(response_id=["r0", "r1"], partition_key="m|base")
    back = R.items_from_generations(gens)
    first = back[back["response_id"] == "r0"]
    assert list(first["item_index"]) == [0, 1, 2, 3] and first["university"].iloc[0] == "Kyoto University"
    assert first["program"].iloc[2] is None and (first["gender"] == "female").all()
    empty = back[back["response_id"] == "r1"]
    assert len(empty) == 1 and empty["university"].isna().all()


def test_a_response_marked_items_that_is_not_an_items_document_is_named():
    gens = pd.DataFrame([{"response_id": "r9", "response": "1. MIT", "response_format": "items"}])
    with pytest.raises(ValueError, match="generation r9: response_format is 'items'"):
        R.items_from_generations(gens)


def test_geography_tables_are_assets_exported_with_the_rest(worked_example_scored):
    """issue 15: audit_geography runs in the graph; its tables (per partition, model and template
    columns) come out of `score` beside the others, with real family sizes and tests."""
    out, written = worked_example_scored  # the example scored once this session (tests/conftest.py)
    contrasts = written["geography_geo_contrasts"]
    assert len(contrasts) and {"region_vs_rest", "nationality_vs_rest"} <= set(contrasts["analysis"])
    tested = contrasts[contrasts["p_adjusted"].notna()]  # a contrast without enough paired units has no test
    assert len(tested) and tested["p_adjusted"].between(0, 1).all() and (tested["family_size"] >= 1).all()
    assert (contrasts.loc[contrasts["p_adjusted"].isna(), "marking"] != "significant").all()
    assert set(contrasts["template"]) <= {"base", "regional", "academic", "nationality_only"}  # a nationality stated
    dec = written["geography_class_gap_decomposition"]
    assert {"total", "behaviour", "needs"} <= set(dec["component"])
    home = written["geography_home_bias"]
    assert home["own_country"].between(0, 1).all() and (out / "geography_families.csv").exists()
    report = (out / "report.md").read_text(encoding="utf-8")
    assert "## Geography: regions, home bias, behaviour vs needs" in report
    import re

    assert not re.search(r"\bnan\b", report, flags=re.IGNORECASE)  # nothing undefined printed as a number
