"""Corpus names are read as the export means them (METHOD.md §9): its escaping undone."""

from fairness_assets.core.reference import corpus


def test_escaped_quotes_and_unusual_spaces_are_undone(tmp_path):
    p = tmp_path / "qs.csv"
    p.write_text(
        "2024 RANK,Institution Name,Country\n"
        "1,Universit\u00e9 de l\\'Ouest,France\n"
        "2,Universit\u00e0\u00a0di Vesper ,Italy\n"
        "4,Plain University,Italy\n",
        encoding="utf-8",
    )
    raw, _ = corpus.read_qs_export(p)
    assert list(raw["Institution Name"]) == [
        "Universit\u00e9 de l'Ouest",
        "Universit\u00e0 di Vesper",
        "Plain University",
    ]


def test_clean_name_keeps_everything_else():
    assert corpus.clean_institution_name("A\\\\B") == "A\\B"  # an escaped backslash is one backslash
    assert corpus.clean_institution_name("Two\nlines") == "Two\nlines"
