"""core/common/text.py: accent folding, trimming and the user's exception, written once (issue 33.4) and
used by geo, parse, match, profiles and tags (folding), the console, the command line and the
alerts (trimming, the user's exception)."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Optional

from fairness_assets.core.common import text

ROOT = Path(__file__).resolve().parents[2]


def test_accents_fold_the_same_everywhere():
    from fairness_assets.core.reference import geo, profiles
    from fairness_assets.core.understanding import match, parse, tags

    assert text.strip_accents("Côte d'Ivoire, São Paulo, Zürich") == "Cote d'Ivoire, Sao Paulo, Zurich"
    assert text.fold_accents("ÉCOLE Polytechnique Fédérale") == "ecole polytechnique federale"
    assert geo.fold("Côte d'Ivoire & U.K.") == "cote divoire and uk"
    assert parse._fold("  Éa ") == "ea"
    assert match.normalize_name("Universität Straße") == "universitat strasse"
    assert profiles.slug("São Paulo") == "sao-paulo"
    assert tags._fold("Ingeniería") == "ingenieria"


def test_folding_and_the_wrapper_walk_are_written_only_in_text_py():
    found = []
    for folder in ("fairness_assets", "resources"):
        for path in sorted((ROOT / folder).rglob("*.py")):
            if path == ROOT / "fairness_assets" / "core" / "common" / "text.py":
                continue
            source = path.read_text(encoding="utf-8")
            for needle in ("unicodedata.combining", 'startswith("Dagster")'):
                if needle in source:
                    found.append(f"{path.relative_to(ROOT)}: {needle}")
    assert not found, found


def test_trim_cuts_at_the_limit_with_an_ellipsis():
    assert text.trim("  short  ", 10) == "short"
    assert text.trim("a" * 20, 10) == "a" * 9 + "\u2026" and len(text.trim("a" * 20, 10)) == 10
    assert text.trim("two\n  lines   here", 40, one_line=True) == "two lines here"
    assert text.trim("word " * 10, 12) == "word word w\u2026"
    assert text.trim("abc", 0) == "\u2026"


@dataclass
class Err:
    cls_name: str
    message: str = ""
    cause: Optional["Err"] = None


def test_the_users_exception_is_the_first_below_the_framework_wrappers():
    user = Err("ValueError", "bad value", Err("KeyError", "k"))
    assert (
        text.user_exception(Err("DagsterExecutionStepExecutionError", "", Err("DagsterUserCodeError", "", user)))
        is user
    )
    assert text.user_exception(user) is user
    last = Err("DagsterInvariantViolationError", "only wrappers")
    assert text.user_exception(Err("DagsterRunFailure", "", last)) is last
    assert text.user_exception(None) is None
