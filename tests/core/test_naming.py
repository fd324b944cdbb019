"""File names from user-given names (issue 19, item 3): bounded, safe, readable, distinct."""

from __future__ import annotations

import re

import pytest

from fairness_assets.core.common.naming import HASH_CHARS, file_stem

ODD = [
    "llama 3",
    "llama-3",
    "Llama-3",
    "llama/3",
    "llama_3",
    "llama\\3",
    "org/model:v1 <x>",
    "a" * 300,
    "a" * 299 + "b",
    "模型",
    "模型2",
    "café",
    "cafe",
    "...",
    ".hidden",
    "CON",
    "con.x",
    "nul",
    "COM1",
    "x" * 80,
    "x" * 81,
    "trailing. ",
    "tab\tand\nnewline",
    "|pipe|",
    "",
    '?*"<>|',
]


@pytest.mark.parametrize("name", ODD)
def test_a_stem_is_bounded_and_safe_everywhere(name, tmp_path):
    stem = file_stem(name)
    assert 1 <= len(stem) <= 80 and stem.isascii()
    assert re.fullmatch(r"[A-Za-z0-9_][A-Za-z0-9._-]*-[0-9a-f]{%d}" % HASH_CHARS, stem), stem
    assert not re.match(r"(?i)(con|prn|aux|nul|com\d|lpt\d)(\.|$)", stem.split("-")[0])  # no Windows device name
    (tmp_path / f"{stem}.png").write_bytes(b"x")  # a real file of that name can be made
    assert file_stem(name) == stem  # deterministic


def test_distinct_names_give_distinct_stems_also_ignoring_case():
    stems = [file_stem(n) for n in ODD]
    assert len(set(stems)) == len(ODD)
    assert len({s.lower() for s in stems}) == len(ODD)


def test_the_readable_part_keeps_the_short_names_whole_beside_a_long_one():
    stem = file_stem("m" * 300, "nationality_only", "top_programs_by_gender")
    assert len(stem) == 80
    assert stem.startswith("m") and "__nationality_only__top_programs_by_gender-" in stem
    assert file_stem("org/Model 7B", "base") == f"org-Model-7B__base-{file_stem('org/Model 7B', 'base')[-HASH_CHARS:]}"


def test_empty_names_are_kept_in_the_hash_and_max_chars_is_checked():
    assert file_stem("m", "", "x") != file_stem("m", "x")
    assert len(file_stem("a" * 500, max_chars=30)) == 30
    with pytest.raises(ValueError, match="max_chars must be at least"):
        file_stem("m", max_chars=5)
    with pytest.raises(ValueError, match="at least one name"):
        file_stem()


def test_figure_files_of_a_300_character_model_fit_a_file_name(tmp_path):
    """audit_figures failed with 'File name too long' for such a model: its figure names are stems."""
    from fairness_assets.core.reporting import figures as F
    from fairness_assets.core.reporting.report import figure_path

    long_model = "org/" + "very-long-model-name-" * 14 + "v1"
    assert len(long_model) > 290
    slugs = set()
    for name in F.FIGURE_NAMES:
        fig = F.Figure(name, "t", "c", b"png", model=long_model, template="nationality_only")
        assert len(fig.slug) <= 80 and fig.slug.startswith("org-very-long") and name in fig.slug
        (tmp_path / f"{fig.slug}.png").write_bytes(fig.png)
        assert figure_path(fig) == f"figures/{fig.slug}.png"
        slugs.add(fig.slug)
    assert len(slugs) == len(F.FIGURE_NAMES)
    other = F.Figure("top_locations", "t", "c", b"png", model=long_model[:-1] + "2", template="nationality_only")
    assert other.slug not in slugs  # names that differ past the cut differ in the hash
    assert F.Figure("model_comparison", "t", "c", b"x").slug == "model_comparison"  # fixed names stay as they are
