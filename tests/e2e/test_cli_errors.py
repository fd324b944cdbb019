"""What the command line says to bad inputs (issue 11, low items): one clear line naming the
problem and exit code 2 for a bad input or configuration, never a traceback; a failed run ends
with the failing step's error message; '|' in model names escaped in summary.md."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pandas as pd
import pytest

from fairness_assets.local import OFFLINE_INSTANCE_YAML
from resources.settings import DATA_DIR, DEMO_CORPUS, ConfigError, load_model_registry

ROOT = Path(__file__).resolve().parents[2]
EXAMPLE = DATA_DIR / "examples" / "worked_example_responses.csv"


def _cli(*args, env: dict | None = None, home: Path | None = None):
    full = {
        k: v
        for k, v in os.environ.items()
        if k
        not in (
            "FAIRNESS_DATABASE_URL",
            "FAIRNESS_RESPONSES",
            "FAIRNESS_DESIGN",
            "FAIRNESS_QS_CORPUS",
            "FAIRNESS_MODEL_REGISTRY",
        )
    }
    if home is not None:
        (home / "dagster_home").mkdir(parents=True, exist_ok=True)
        (home / "dagster_home" / "dagster.yaml").write_text(OFFLINE_INSTANCE_YAML)
        full.update(DAGSTER_HOME=str(home / "dagster_home"), FAIRNESS_HOME=str(home / "fairness_home"))
    full.update(env or {})
    return subprocess.run(
        [sys.executable, "-m", "fairness_assets.cli", *args],
        cwd=ROOT,
        env=full,
        capture_output=True,
        text=True,
        timeout=600,
    )


def _one_clear_line(out, *needles):
    assert out.returncode == 2, out.stdout[-2000:] + out.stderr[-2000:]
    assert "Traceback" not in out.stderr + out.stdout
    lines = out.stderr.strip().splitlines()
    assert len(lines) == 1, out.stderr
    for needle in needles:
        assert needle in lines[0], lines[0]
    return lines[0]


# ----------------------------------------------------------------------------- score --out
def _score(out: str):
    return _cli("score", "--responses", str(EXAMPLE), "--corpus", str(DEMO_CORPUS), "--out", out)


def test_score_out_pointing_at_an_existing_file(tmp_path):
    target = tmp_path / "results.csv"
    target.write_text("keep me\n")
    line = _one_clear_line(_score(str(target)), "fairness-audit score: error:", str(target), "is an existing file")
    assert "not a folder" in line
    assert target.read_text() == "keep me\n"  # untouched


def test_score_out_that_cannot_be_created(tmp_path):
    parent = tmp_path / "a-file"
    parent.write_text("")
    _one_clear_line(
        _score(str(parent / "out")),
        "fairness-audit score: error:",
        str(parent / "out"),
        "cannot be written",
        "Not a directory",
    )


@pytest.mark.skipif(hasattr(os, "geteuid") and os.geteuid() == 0, reason="root writes into read-only folders")
def test_score_out_in_a_read_only_folder(tmp_path):
    ro = tmp_path / "ro"
    ro.mkdir()
    ro.chmod(0o500)
    try:
        _one_clear_line(_score(str(ro / "out")), str(ro / "out"), "cannot be written", "Permission denied")
        _one_clear_line(_score(str(ro)), str(ro), "cannot be written", "Permission denied")
    finally:
        ro.chmod(0o700)


# ----------------------------------------------------------------------------- registry errors
BROKEN = "models:\n  tiny:\n    source: org/tiny\n   backend: [openai\n"


def test_a_registry_that_does_not_parse_names_file_and_line(tmp_path):
    path = tmp_path / "models.yaml"
    path.write_text(BROKEN)
    with pytest.raises(ConfigError, match=rf"model registry {path}, line 4, column 4: not valid YAML"):
        load_model_registry(path)
    tab = tmp_path / "tab.yaml"
    tab.write_text("models:\n\ttiny: {source: x}\n")
    with pytest.raises(ConfigError, match=rf"{tab}, line 2, column 1: not valid YAML .*'\\t'"):
        load_model_registry(tab)
    listing = tmp_path / "list.yaml"
    listing.write_text("- a\n- b\n")
    with pytest.raises(ConfigError, match="expected a non-empty 'models:' mapping"):
        load_model_registry(listing)


@pytest.mark.parametrize("command", [["demo"], ["run", "demo_audit"]])
def test_the_cli_prints_a_broken_registry_as_one_line(tmp_path, command):
    path = tmp_path / "models.yaml"
    path.write_text(BROKEN)
    out = _cli(*command, env={"FAIRNESS_MODEL_REGISTRY": str(path)}, home=tmp_path)
    _one_clear_line(out, f"fairness-audit {command[0]}: error: model registry {path}, line 4, column 4: not valid YAML")


def test_the_cli_prints_a_registry_config_error_as_one_line(tmp_path):
    path = tmp_path / "models.yaml"
    path.write_text("models:\n  qwen2.5-0.5b-demo: {backend: transformers}\n")
    out = _cli("demo", env={"FAIRNESS_MODEL_REGISTRY": str(path)}, home=tmp_path)
    _one_clear_line(out, "fairness-audit demo: error:", str(path), "'qwen2.5-0.5b-demo' needs at least a 'source'")


def test_an_unknown_job_is_one_line(tmp_path):
    _one_clear_line(_cli("run", "no_such_job", home=tmp_path), "unknown job 'no_such_job'", "demo_audit")


# ----------------------------------------------------------------------------- a failed run ends with its cause
def test_a_failed_run_ends_with_the_failing_steps_error(tmp_path):
    corpus = tmp_path / "corpus.csv"
    corpus.write_text("a,b\n1,2\n")
    out = _cli("run", "reference_data", env={"FAIRNESS_QS_CORPUS": str(corpus)}, home=tmp_path)
    assert out.returncode == 1, out.stdout[-2000:] + out.stderr[-2000:]
    last = out.stderr.strip().splitlines()[-1]
    # the cause (the asset's own exception, module path dropped), not "Execution of step ... failed"
    assert last.startswith("[fairness-audit] cause: step 'qs_corpus' failed: CorpusError: "), last
    assert str(corpus) in last and len(last) < 800
    assert "failed (run id" in out.stderr.strip().splitlines()[-2]


# ----------------------------------------------------------------------------- '|' in model names
def test_summary_escapes_pipes_in_template_and_model_names():
    from fairness_assets.export import summary_markdown

    def tables(model, template):
        key = {"model": model, "template": template}
        return {
            "volume_diversity": pd.DataFrame(
                [{**key, "responses": 3, "recommendations": 9, "matched_recommendations": 8}]
            ),
            "concentration": pd.DataFrame([{**key, "us_uk_share": 0.5, "country_coverage": 0.25}]),
            "drs_mean": pd.DataFrame([{**key, "drs": 0.6}]),
            "grs_positive": pd.DataFrame([{**key, "countries": 1}]),
        }

    a, b = tables("llama|3", "base"), tables("plain", "re|gional")
    text = summary_markdown({k: pd.concat([a[k], b[k]], ignore_index=True) for k in a}, 6, 0, "c.csv", "r.csv")
    rows = [ln for ln in text.splitlines() if ln.startswith("| llama") or ln.startswith("| plain")]
    assert rows[0].startswith(r"| llama\|3 | base | 3 | 9 | 8 | 0.6000 |")
    assert rows[1].startswith(r"| plain | re\|gional | 3 |")
    header = [ln for ln in text.splitlines() if ln.startswith("| model")][0]
    for row in rows:  # as many columns as the header: no name splits a cell
        assert row.replace("\\|", "").count("|") == header.count("|")


def test_score_rejects_model_names_with_a_pipe_naming_the_reason(tmp_path):
    """'|' separates model and template in partition keys: such rows are rejected with that
    reason (rejects.csv), and a file with nothing else to score fails naming the file."""
    rows = pd.read_csv(EXAMPLE)
    rows["model"] = rows["model"].str.replace("example-model", "example|model")
    responses = tmp_path / "pipes.csv"
    rows.to_csv(responses, index=False)
    out = _cli("score", "--responses", str(responses), "--corpus", str(DEMO_CORPUS), "--out", str(tmp_path / "o"))
    assert out.returncode == 2, out.stdout[-2000:] + out.stderr[-2000:]
    assert "no usable response to score" in out.stderr and str(responses) in out.stderr
    rejects = pd.read_csv(tmp_path / "o" / "rejects.csv")
    assert len(rejects) == len(rows) and set(rejects["column"]) == {"model"}
    assert rejects["reason"].str.contains("'|' separates model and template").all()
