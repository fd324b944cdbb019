"""Language-country affinity end to end (issue 35 items 2 and 6): answers of the shipped ``languages`` design
scored by ``fairness-audit score --design languages``. A synthetic model answers French prompts with universities
of French-speaking countries and Spanish prompts as English ones: the exported
``base_vs_regional_language_affinity.csv`` finds French with a positive, significant difference and Spanish with
none; every base-vs-language comparison is stored with its templates."""

from __future__ import annotations

import itertools
import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from fairness_assets.core.reference import corpus, geo
from fairness_assets.core.statistics.language_affinity import language_countries
from resources.settings import ALIASES_FILE

from .test_custom_design import _clean_env

pytestmark = pytest.mark.slow

ROOT = Path(__file__).resolve().parents[2]
MODEL = "polyglot-advisor"
RUNS = 2
GENDERS = ("male", "female")
CLASSES = ("high", "low")
NATIONALITIES = ("Nigeria", "India", "Brazil", "Germany", "Japan", "Mexico")
TEMPLATES = {"base": "en", "base_fr": "fr", "base_es": "es"}


def synth_responses(qs_export: Path, seed: int = 35) -> pd.DataFrame:
    """One JSON answer per (template, profile, run), three universities of the QS corpus each: drawn from the
    whole corpus, except that asked in French two of the three come from French-speaking countries."""
    resolver = geo.CountryResolver(geo.load_aliases(ALIASES_FILE))
    unis, _, _ = corpus.load_corpus(str(qs_export), resolver.resolve)
    french = unis[unis["iso3"].isin(language_countries("fr"))].reset_index(drop=True)
    rng = np.random.default_rng(seed)
    rows = []
    for template, run, nationality, gender, income in itertools.product(
        TEMPLATES, range(RUNS), NATIONALITIES, GENDERS, CLASSES
    ):
        if template == "base_fr":
            picks = pd.concat(
                [french.iloc[rng.choice(len(french), 2, replace=False)], unis.iloc[rng.choice(len(unis), 1)]]
            )
        else:
            picks = unis.iloc[rng.choice(len(unis), 3, replace=False)]
        answer = [
            {"university": u, "program": "MSc Economics", "country": c}
            for u, c in zip(picks["name"], picks["country_raw"], strict=True)
        ]
        rows.append(
            {
                "model": MODEL,
                "template": template,
                "run": run,
                "gender": gender,
                "economic_class": income,
                "nationality": nationality,
                "response": json.dumps(answer, ensure_ascii=False),
            }
        )
    return pd.DataFrame(rows)


def test_score_with_the_languages_design_finds_the_french_affinity(tmp_path, qs_export):
    responses = tmp_path / "responses.csv"
    synth_responses(qs_export).to_csv(responses, index=False)
    out = tmp_path / "out"
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "fairness_assets.cli",
            "score",
            "--design",
            "languages",
            "--responses",
            str(responses),
            "--corpus",
            str(qs_export),
            "--out",
            str(out),
        ],
        cwd=ROOT,
        env=_clean_env(tmp_path),
        capture_output=True,
        text=True,
        timeout=900,
    )
    assert done.returncode == 0, done.stderr[-4000:]
    assert pd.read_csv(out / "rejects.csv").empty
    affinity = pd.read_csv(out / "base_vs_regional_language_affinity.csv").set_index("language")
    assert set(affinity.index) == {"fr", "es"}
    n = len(NATIONALITIES) * len(GENDERS) * len(CLASSES) * RUNS
    fr, es = affinity.loc["fr"], affinity.loc["es"]
    assert fr["template"] == "base_fr" and fr["reference_template"] == "base" and fr["n_pairs"] == n
    assert fr["mean_diff"] > 0.3 and fr["ci_low"] > 0 and str(fr["significant"]) == "True"
    assert str(es["significant"]) == "False" and es["ci_low"] < 0 < es["ci_high"]
    assert set(affinity["family_size"]) == {2} and set(affinity["component"]) == {"behaviour"}
    # each language compared with English in the change tables, named by its templates
    change = pd.read_csv(out / "base_vs_regional_drs_change.csv")
    assert set(zip(change["base_template"], change["other_template"], strict=True)) == {
        ("base", "base_fr"),
        ("base", "base_es"),
    }


def test_design_show_names_each_templates_language_and_the_comparisons(tmp_path):
    done = subprocess.run(
        [sys.executable, "-m", "fairness_assets.cli", "design", "show", "languages"],
        cwd=ROOT,
        env=_clean_env(tmp_path),
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    assert "| base | en | full | no | 360 |" in done.stdout and "| base_zh | zh | full | no | 360 |" in done.stdout
    assert "Compared: base vs base_named; base_fr vs base_fr_named; base vs base_fr; base vs base_es;" in done.stdout
    assert "## Size: 11,076 prompts a model x 10 runs x 3 model(s) = 332,280 samples" in done.stdout
