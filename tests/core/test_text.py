"""core/common/text.py: accent folding, trimming and the user's exception, written once (issue 33.4) and
used by geo, parse, match, profiles and tags (folding), the console, the command line and the
alerts (trimming, the user's exception)."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Optional

import pytest

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


def test_load_yaml_reads_every_shipped_yaml_as_safe_load_does_and_refuses_what_it_refuses():
    import yaml

    from fairness_assets.core.common.text import SAFE_LOADER, compose_yaml, load_yaml

    assert SAFE_LOADER is yaml.CSafeLoader  # the locked PyYAML wheel carries libyaml: the fast path is the one used
    files = sorted(
        p for top in ("data", "deploy", "docs", "expectations", "tests") for p in (ROOT / top).rglob("*.y*ml")
    )
    assert len(files) >= 13, files  # the designs, the model registry, the templates, deploy's and the tests' files
    for path in files:
        text = path.read_text(encoding="utf-8")
        if len(list(yaml.safe_load_all(text))) != 1:
            continue  # a stream of manifests (deploy/); the product reads one document a file
        assert load_yaml(text) == yaml.safe_load(text), path
        assert _lines(compose_yaml(text)) == _lines(yaml.compose(text)), path
    for bad in (
        "a: 1\nb: [1, 2\nc: 3\n",
        "runs: : 1\n",
        "a:\n\t- 1\n",
        "a: &x 1\nb: *y\n",
        'a: "x\\q"\n',
        "- a\nb: 1\n",
    ):  # refused with the Python loader's error: its words (libyaml's differ) and its marks
        with pytest.raises(yaml.YAMLError) as expected:
            yaml.safe_load(bad)
        for read in (load_yaml, compose_yaml):
            with pytest.raises(yaml.YAMLError) as caught:
                read(bad)
            assert str(caught.value) == str(expected.value), bad
    with pytest.raises(yaml.constructor.ConstructorError):  # a Python tag is refused, as by safe_load
        load_yaml("x: !!python/object/apply:os.system ['true']")


def _lines(node) -> list:
    """Every node's kind, value and start line, depth first: what the design's error messages read."""
    out = [(type(node).__name__, node.start_mark.line)]
    if isinstance(node.value, list):
        for item in node.value:
            for part in item if isinstance(item, tuple) else (item,):
                out += _lines(part)
    else:
        out.append(node.value)
    return out
