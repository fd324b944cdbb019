"""The release gate (issue 22 item 2): gate files validated with errors that name the line, and
verdicts on synthetic models with known differences (tests/core/test_comparison.py's models)."""

from __future__ import annotations

import pandas as pd
import pytest

from fairness_assets.core.statistics import comparison as C
from fairness_assets.core.statistics import gate as G
from fairness_assets.core.statistics.inference import InferenceParams
from tests.core.test_comparison import N_BOOT, N_PERM, model


def _diffs(*frames) -> pd.DataFrame:
    return C.compare_models(
        pd.concat(frames, ignore_index=True), inference=InferenceParams(n_boot=N_BOOT, n_perm=N_PERM)
    )


def _gate(tmp_path, text: str) -> G.Gate:
    path = tmp_path / "gate.yaml"
    path.write_text(text, encoding="utf-8")
    return G.load_gate(path)


GATE = """baseline: model-a
candidate: model-b
lines:
  - metric: drs
    must_not_drop_by: {drop}
  - metric: drs
    gap: "economic_class: low - high"
    must_not_widen_by: 0.02
"""


@pytest.fixture(scope="module")
def worse():
    return _diffs(model("model-a", 1), model("model-b", 2, drs_shift=-0.05))


@pytest.fixture(scope="module")
def same():
    a = model("model-a", 1)
    return _diffs(a, a.assign(model="model-b", response_id=a["response_id"].str.replace("model-a", "model-b")))


def test_a_clearly_worse_candidate_fails(tmp_path, worse):
    verdict, table = G.evaluate(_gate(tmp_path, GATE.format(drop=0.01)), worse)
    assert verdict == "fail"
    drs = table[(table["metric"] == "drs") & (table["gap"] == "")].iloc[0]
    assert drs["verdict"] == "fail" and drs["ci_high"] < -0.01 and abs(drs["estimate"] + 0.05) < 0.01


def test_an_identical_candidate_passes_and_never_fails(tmp_path, same):
    verdict, table = G.evaluate(_gate(tmp_path, GATE.format(drop=0.01)), same)
    assert verdict == "pass" and set(table["verdict"]) == {"pass"}
    # a zero margin cannot be cleared by an identical model: inconclusive, never fail
    verdict0, table0 = G.evaluate(_gate(tmp_path, GATE.format(drop=0.0)), same)
    assert verdict0 == "inconclusive" and "fail" not in set(table0["verdict"])


def test_the_candidate_can_be_the_first_model_by_name(tmp_path, worse):
    """The comparison stores model-b - model-a; a gate with model-b as baseline flips it."""
    flipped = GATE.format(drop=0.01).replace(
        "baseline: model-a\ncandidate: model-b", "baseline: model-b\ncandidate: model-a"
    )
    verdict, table = G.evaluate(_gate(tmp_path, flipped), worse)
    drs = table[(table["metric"] == "drs") & (table["gap"] == "")].iloc[0]
    assert drs["verdict"] == "pass" and drs["estimate"] > 0.03


def test_a_widened_class_gap_fails_its_line_and_a_narrowed_one_passes(tmp_path):
    wider = _diffs(model("model-a", 1), model("model-b", 2, class_gap=0.08))
    verdict, table = G.evaluate(_gate(tmp_path, GATE.format(drop=0.05)), wider)
    gap = table[table["gap"] != ""].iloc[0]
    assert gap["verdict"] == "fail" and gap["estimate"] > 0.05
    narrower = _diffs(model("model-a", 1, class_gap=0.08), model("model-b", 2))
    _, table2 = G.evaluate(_gate(tmp_path, GATE.format(drop=0.05)), narrower)
    assert table2[table2["gap"] != ""].iloc[0]["verdict"] == "pass"


def test_an_undecided_line_names_the_units_that_would_decide_it(tmp_path):
    close = _diffs(model("model-a", 1), model("model-b", 2, drs_shift=-0.01))
    verdict, table = G.evaluate(_gate(tmp_path, GATE.format(drop=0.01)), close)
    drs = table[(table["metric"] == "drs") & (table["gap"] == "")].iloc[0]
    assert drs["verdict"] == "inconclusive" and verdict != "pass"
    assert drs["n_units_to_decide"] is None or drs["n_units_to_decide"] > drs["n_units"]


def test_a_template_the_models_were_not_both_audited_on_is_inconclusive_with_the_reason(tmp_path, worse):
    g = _gate(tmp_path, GATE.format(drop=0.01).replace("lines:", "templates: [regional]\nlines:"))
    verdict, table = G.evaluate(g, worse)
    assert verdict == "inconclusive" and "not both audited on template 'regional'" in table["reason"].iloc[0]


@pytest.mark.parametrize(
    "text,line,msg",
    [
        ("baseline: a\ncandidate: b\nlines:\n  - metric: drs\n    must_not_drop_by: -1\n", 5, "must be a number >= 0"),
        (
            "baseline: a\ncandidate: b\nlines:\n  - metric: drss\n    must_not_drop_by: 0.1\n",
            4,
            "unknown metric 'drss'",
        ),
        ("baseline: a\ncandidate: b\nlines:\n  - metric: drs\n", 4, "exactly one of"),
        ("baseline: a\ncandidate: b\nlines:\n  - metric: drs\n    must_not_widen_by: 0.1\n", 4, "needs a gap"),
        (
            "baseline: a\ncandidate: b\nlines:\n  - metric: drs\n    must_not_drop_by: 0.1\n    colour: red\n",
            6,
            "unknown key 'colour'",
        ),
        (
            "baseline: a\ncandidate: a\nlines:\n  - metric: drs\n    must_not_drop_by: 0.1\n",
            2,
            "the candidate is the baseline",
        ),
        ("baseline: a\nlines:\n  - metric: drs\n    must_not_drop_by: 0.1\n", 1, "missing 'candidate'"),
        ("baseline: a\ncandidate: b\nlines: []\n", 3, "non-empty list"),
        ("baseline: a\ncandidate: b\nlines:\n  - metric: drs\n    must_not_drop_by: lots\n", 5, "must be a number"),
        ("baseline: a\ncandidate: b: c\n", 2, "not valid YAML"),
    ],
)
def test_a_bad_gate_file_names_its_line(tmp_path, text, line, msg):
    with pytest.raises(G.GateError, match=rf"gate.yaml: line {line}: .*{msg}"):
        _gate(tmp_path, text)


def test_a_missing_gate_file_is_named(tmp_path):
    with pytest.raises(G.GateError, match="nothing.yaml: cannot read"):
        G.load_gate(tmp_path / "nothing.yaml")


def test_the_summary_gives_the_verdict_and_every_line(tmp_path, worse):
    g = _gate(tmp_path, GATE.format(drop=0.01))
    verdict, table = G.evaluate(g, worse)
    md = G.summary_markdown(g, verdict, table)
    assert md.startswith("# Release gate: FAIL") and md.count("\n| ") >= 3 and "model-b" in md


def test_require_robust_keeps_each_lines_worst_verdict_over_the_settings(tmp_path, same):
    g = _gate(tmp_path, GATE.format(drop=0.01).replace("lines:", "require_robust: true\nlines:"))
    assert g.require_robust
    worse_setting = same.assign(
        mean_diff=same["mean_diff"] - 0.2, ci_low=same["ci_low"] - 0.2, ci_high=same["ci_high"] - 0.2
    )
    by_setting = pd.concat([same.assign(setting="lambda x0.5"), worse_setting.assign(setting="lambda x2")])
    verdict, table = G.evaluate_robust(g, same, by_setting)
    drs = table[(table["metric"] == "drs") & (table["gap"] == "")].iloc[0]
    assert verdict == "fail" and drs["setting"] == "lambda x2" and drs["reason"].startswith("under lambda x2")
    assert G.evaluate_robust(g, same, same.assign(setting="lambda x0.5"))[0] == "pass"
    # robustness required but not measured: never a pass
    assert G.evaluate_robust(g, same, pd.DataFrame())[0] == "inconclusive"
    with pytest.raises(G.GateError, match="line 3: require_robust must be true or false"):
        _gate(
            tmp_path,
            "baseline: a\ncandidate: b\nrequire_robust: maybe\nlines:\n  - metric: drs\n    must_not_drop_by: 0.1\n",
        )
