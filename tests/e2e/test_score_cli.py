"""`fairness-audit score`: the bring-your-own path, and identical tables to the Dagster assets."""

import json
import os
import subprocess
import sys
from pathlib import Path

import dagster as dg
import numpy as np
import pandas as pd

from fairness_assets.core.common import tables as tables_core
from fairness_assets.defs.generation import assets as gen
from fairness_assets.defs.partitions import MODEL_PARTITIONS
from fairness_assets.defs.reference import assets as ref
from fairness_assets.defs.scoring import assets as sco
from fairness_assets.defs.understanding import assets as und
from fairness_assets.local import score_responses
from resources import database as D
from resources.llm.resource import LLMResource
from resources.settings import (
    DATA_DIR,
    DEMO_CORPUS,
    AuditGridResource,
    GenerationSourceResource,
    ParseQualityResource,
    ReferenceDataResource,
    ReportResource,
    ScoringResource,
)
from resources.tagger import SubjectTaggerResource

ROOT = Path(__file__).resolve().parents[2]
EXAMPLE = DATA_DIR / "examples" / "worked_example_responses.csv"


def _norm(df: pd.DataFrame) -> pd.DataFrame:
    out = df.reset_index(drop=True).copy()
    for c in out.columns:
        num = pd.to_numeric(out[c], errors="coerce")
        if num.notna().sum() == out[c].notna().sum() and out[c].notna().any():
            out[c] = num.astype(float)
        else:
            out[c] = out[c].astype(object).where(out[c].notna(), None).map(lambda v: None if v is None else str(v))
    return out


def test_cli_and_assets_give_identical_tables(tmp_path, worked_example_scored):
    out, _ = worked_example_scored  # the example scored by `score_responses` once this session (tests/conftest.py)
    # the files a user gets (written a partition at a time and joined)
    cli = {f.stem: pd.read_csv(f) for f in out.glob("*.csv")}
    instance = dg.DagsterInstance.ephemeral()
    instance.add_dynamic_partitions(MODEL_PARTITIONS.name, ["example-model"])
    database = D.ResultsDatabase(url=f"sqlite:///{tmp_path / 'r.db'}")
    resources = {
        "database": database,
        "results_io": D.SQLResultsIOManager(database=database),
        "reference": ReferenceDataResource(corpus_path=str(DEMO_CORPUS)),
        "audit_grid": AuditGridResource(),
        "generation_source": GenerationSourceResource(responses_path=str(EXAMPLE)),
        "subject_tagger": SubjectTaggerResource(),
        "parse_quality": ParseQualityResource(min_parse_rate=0.5, max_group_gap=1),
        "scoring": ScoringResource(),
        "llm": LLMResource(),
        "report_settings": ReportResource(),
    }
    assets = [
        ref.qs_corpus,
        ref.country_geography,
        ref.capital_distances,
        ref.profiles,
        ref.prompts,
        gen.generations,
        und.recommendations,
        sco.scores,
        sco.base_vs_regional,
    ]
    for template in ("base", "regional", "academic", "gender_only"):
        result = dg.materialize(
            assets[:-1], instance=instance, partition_key=f"example-model|{template}", resources=resources
        )
        assert result.success
    assert dg.materialize(
        [sco.base_vs_regional], instance=instance, resources=resources, selection=[sco.base_vs_regional]
    ).success
    for template in ("base", "regional", "academic", "gender_only"):
        key = f"example-model|{template}"
        stored = tables_core.from_long(database.read_rows(D.MetricRow, [key]))
        for name in sco.ANALYSIS:
            mine = cli[name][cli[name]["template"] == template]
            extra = [c for c in ("model", "template") if c not in stored[name].columns]
            mine = mine.drop(columns=extra)[list(stored[name].columns)]
            pd.testing.assert_frame_equal(
                _norm(stored[name]), _norm(mine), check_exact=False, rtol=1e-9, obj=f"{name} of {key}"
            )
        grs = database.read_rows(D.GRSCountry, [key])
        mine = cli["grs_by_country"][cli["grs_by_country"]["template"] == template]
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
        pd.testing.assert_frame_equal(_norm(grs[cols]), _norm(mine[cols]), check_exact=False, rtol=1e-9)
        items = database.read_rows(D.DRSItem, [key]).sort_values(["response_id", "item_index"])
        mine = cli["drs_items"][cli["drs_items"]["template"] == template].sort_values(["response_id", "item_index"])
        cols = [
            "response_id",
            "item_index",
            "university_id",
            "iso3",
            "distance_km",
            "acc",
            "rep",
            "acad",
            "drs",
            "drs_components",
        ]
        pd.testing.assert_frame_equal(_norm(items[cols]), _norm(mine[cols]), check_exact=False, rtol=1e-9)
    comparison = tables_core.from_long(database.read_rows(D.MetricRow, [""]))
    pd.testing.assert_frame_equal(
        _norm(comparison["drs_change"]), _norm(cli["base_vs_regional_drs_change"]), check_exact=False, rtol=1e-9
    )


def test_cli_command_writes_every_table(tmp_path):
    out = subprocess.run(
        [
            sys.executable,
            "-m",
            "fairness_assets.cli",
            "score",
            "--responses",
            str(EXAMPLE),
            "--corpus",
            str(DEMO_CORPUS),
            "--out",
            str(tmp_path / "o"),
        ],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=300,
        env={**os.environ},
    )
    assert out.returncode == 0, out.stderr[-2000:]
    files = {p.name for p in (tmp_path / "o").iterdir()}
    assert {
        "drs_items.csv",
        "drs_responses.csv",
        "grs_by_country.csv",
        "drs_summary.csv",
        "academic_alignment.csv",
        "volume_diversity.csv",
        "concentration.csv",
        "reduced_context_top.csv",
        "base_vs_regional_drs_change.csv",
        "base_vs_regional_grs_change.csv",
        "rejects.csv",
        "params.json",
        "summary.md",
        "recommendations.csv",
    } <= files
    summary = (tmp_path / "o" / "summary.md").read_text()
    assert "| example-model | academic | 8 | 24 |" in summary
    acad = pd.read_csv(tmp_path / "o" / "academic_alignment.csv")
    assert set(acad["template"]) == {"academic"}  # only the template stating an interest
    top = pd.read_csv(tmp_path / "o" / "reduced_context_top.csv")
    assert {"gender_only", "class_only", "nationality_only"} <= set(top["template"])


def test_cli_reports_unusable_rows_and_fails_on_malformed_files(tmp_path):
    bad_rows = tmp_path / "r.csv"
    df = pd.read_csv(EXAMPLE).head(4)
    df.loc[1, "gender"] = "robot"
    df.to_csv(bad_rows, index=False)
    out = subprocess.run(
        [
            sys.executable,
            "-m",
            "fairness_assets.cli",
            "score",
            "--responses",
            str(bad_rows),
            "--corpus",
            str(DEMO_CORPUS),
            "--out",
            str(tmp_path / "o"),
        ],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=300,
        env={**os.environ},
    )
    assert out.returncode == 0 and "4 row(s) read, 1 not usable" in out.stdout
    rejects = pd.read_csv(tmp_path / "o" / "rejects.csv")
    assert list(rejects["row"]) == [3] and rejects["column"].iloc[0] == "gender"
    missing = tmp_path / "m.csv"
    df.drop(columns=["run"]).to_csv(missing, index=False)
    out = subprocess.run(
        [
            sys.executable,
            "-m",
            "fairness_assets.cli",
            "score",
            "--responses",
            str(missing),
            "--corpus",
            str(DEMO_CORPUS),
            "--out",
            str(tmp_path / "o2"),
        ],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=300,
        env={**os.environ},
    )
    assert out.returncode == 2 and "m.csv: missing column(s) ['run']" in out.stderr


def test_cli_scores_already_split_items(tmp_path):
    rows = []
    for k, (u, p, c) in enumerate(
        [
            ("MIT", "MSc CS", "USA"),
            ("University of Lagos", "MBA", "Nigeria"),
            ("UCL", "MSc Public Health", "UK"),
            ("Harvard University", "MPH", "USA"),
        ]
    ):
        rows.append(
            {
                "model": "m",
                "template": "base",
                "gender": "female",
                "economic_class": "low",
                "nationality": "Nigeria",
                "run": 0,
                "university": u,
                "program": p,
                "country": c,
                "item_index": k,
            }
        )
    p = tmp_path / "items.jsonl"
    p.write_text("\n".join(json.dumps(r) for r in rows))
    out = score_responses(str(p), str(DEMO_CORPUS), str(tmp_path / "o"), log=lambda *_: None)
    recs = out["recommendations"]
    assert len(recs) == 3 and set(recs["parse_status"]) == {"ok"} and set(recs["n_items_found"]) == {4}
    assert recs["university_id"].notna().all()
    assert np.isfinite(out["drs_responses"]["drs"]).all()
    assert set(recs["n_items_left_out"]) == {1}  # counted, never dropped silently (METHOD.md §9)


def test_twenty_items_per_answer_keep_the_first_k_and_say_how_many_were_left_out(tmp_path):
    """METHOD.md §9: the first k items of an answer are scored (k = 3 by default, --max-items),
    the rest counted per answer and reported in the summary and notes.csv."""
    corpus = pd.read_csv(DEMO_CORPUS, encoding="utf-8-sig")
    names = list(dict.fromkeys(corpus["Institution Name"].iloc[1:].astype(str)))[:20]  # row 0: the export's 2nd header
    assert len(names) == 20
    rows = [
        {
            "model": "m",
            "template": "base",
            "gender": g,
            "economic_class": "low",
            "nationality": "Kenya",
            "run": 0,
            "university": n,
            "program": "MSc Computer Science",
            "country": None,
            "item_index": k,
        }
        for g in ("female", "male")
        for k, n in enumerate(names)
    ]
    p = tmp_path / "twenty.jsonl"
    p.write_text("\n".join(json.dumps(r) for r in rows))
    for k in (3, 5):
        out_dir = tmp_path / f"o{k}"
        out = score_responses(str(p), str(DEMO_CORPUS), str(out_dir), log=lambda *_: None, max_items=k)
        recs = out["recommendations"]
        assert len(recs) == 2 * k and set(recs["item_index"]) == set(range(k))
        assert set(recs["n_items_found"]) == {20} and set(recs["n_items_left_out"]) == {20 - k}
        assert list(recs.sort_values(["response_id", "item_index"])["university_text"][:k]) == names[:k]
        summary = (out_dir / "summary.md").read_text()
        assert (
            f"2 answer(s) name more items than are scored: the first {k} distinct items of each are scored, "
            f"{2 * (20 - k)} item(s) left out" in summary
        )
        notes = pd.read_csv(out_dir / "notes.csv")
        left = notes[notes["kind"] == "items left out"]
        assert len(left) == 2 and left["detail"].str.contains(f"{20 - k} left out").all()


def test_all_refusals_still_give_a_report_that_says_why_nothing_is_drawn(tmp_path):
    """No recommendation at all: the tables, the summary (n/a, not nan) and the report are
    written, and each figure is listed as skipped with its reason rather than left out."""
    rows = [
        json.loads(line)
        for line in (DATA_DIR / "examples" / "demo_responses.jsonl").read_text().splitlines()
        if line.strip()
    ]
    path = tmp_path / "refusals.jsonl"
    path.write_text("\n".join(json.dumps({**r, "response": "I'm sorry, I can't help with that."}) for r in rows))
    out = tmp_path / "out"
    written = score_responses(str(path), str(DEMO_CORPUS), str(out), log=lambda msg: None)
    summary = (out / "summary.md").read_text()
    assert "| n/a | n/a |" in summary and "nan" not in summary
    html = (out / "report.html").read_text()
    assert "data:image/png" not in html
    assert "Figures not drawn" in html and "top_locations" in html  # listed with the reason, not left out
    assert len(written["counterfactual_disparity"]) == 0 or set(written["counterfactual_disparity"]["marking"]) <= {
        "too few pairs",
        "not significant",
    }
