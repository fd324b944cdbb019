"""Where the shipped data lives (fixed by the repository layout) and where results go."""

from __future__ import annotations

from pathlib import Path

PROJECT_ROOT = Path(__file__).resolve().parents[2]
DATA_DIR = PROJECT_ROOT / "data"
TEMPLATES_DIR = DATA_DIR / "templates"
DESIGNS_DIR = DATA_DIR / "designs"
ALIASES_FILE = DATA_DIR / "aliases" / "countries.csv"
CAPITALS_FILE = DATA_DIR / "aliases" / "capital_coordinates.csv"
UNIVERSITY_ALIASES_FILE = DATA_DIR / "aliases" / "universities.csv"
DEMO_CORPUS = DATA_DIR / "demo" / "illustrative_rankings_demo.csv"
MODEL_REGISTRY = DATA_DIR / "models.yaml"
EXAMPLE_RESPONSES = DATA_DIR / "examples" / "demo_responses.jsonl"


def results_dir() -> Path:
    """Folder for the SQLite results database and reports ($FAIRNESS_HOME, else data/results),
    read from the environment each time it is called."""
    from .model import load_settings

    return Path(load_settings().home or (DATA_DIR / "results"))


def default_database_url() -> str:
    return f"sqlite:///{results_dir() / 'results.db'}"
