import numpy as np
import pandas as pd
import pytest

from fairness_assets.core.reference import corpus
from fairness_assets.core.reference.geo import CountryResolver, load_aliases
from resources.settings import ALIASES_FILE, DEMO_CORPUS

HEADER = "2024 RANK,2023 RANK,Institution Name,Country Code,Country\n"
SHORT = "rank display,rank display2,institution,location code,location\n"


@pytest.fixture(scope="module")
def resolve():
    r = CountryResolver(load_aliases(ALIASES_FILE))
    return lambda s: r.resolve(s, strict=True)


def write(tmp_path, body, name="qs.csv", encoding="utf-8-sig", header=HEADER + SHORT):
    p = tmp_path / name
    p.write_bytes((header + body).encode(encoding))
    return p


@pytest.mark.parametrize(
    "raw,expected",
    [
        ("1", 1),
        ("17", 17),
        ("=17", 17),
        (" =17 ", 17),
        ("= 17", 17),
        ("601-650", 601),
        ("601 - 650", 601),
        ("601\u2013650", 601),
        ("1201-1400", 1201),
        ("1401+", 1401),
        ("1401 +", 1401),
    ],
)
def test_every_rank_form(raw, expected):
    assert corpus.parse_rank(raw) == expected
    assert corpus.parse_ranks(pd.Series([raw])).iloc[0] == expected


@pytest.mark.parametrize("raw", ["", "abc", "650-601", "17=", "-", "+", "=", "1.5", "n/a", None])
def test_not_a_rank(raw):
    assert corpus.parse_rank(raw) is None
    assert pd.isna(corpus.parse_ranks(pd.Series([raw], dtype=object)).iloc[0])


def test_global_rep_scale_and_cut():
    r = corpus.global_rep(np.array([1, 600.5, 1200, 1201, 1401, np.nan]))
    np.testing.assert_allclose(r, [1.0, 0.5, 0.0, 0.0, 0.0, 0.0])
    r2 = corpus.global_rep(np.array([10.0]), corpus.RepParams(r_min=10, r_max=20))
    assert r2[0] == 1.0
    with pytest.raises(ValueError):
        corpus.RepParams(r_min=5, r_max=5)


def test_local_rep_single_and_shared_rank_is_one():
    out = corpus.local_rep(np.array([5, 10, 1401, 1401]), np.array([5, 5, 1401, 1401]), np.array([10, 10, 1401, 1401]))
    np.testing.assert_allclose(out, [1.0, 0.0, 1.0, 1.0])


def test_real_qs_export(qs_export, resolve):
    raw, report = corpus.read_qs_export(qs_export)
    unis, countries = corpus.build_corpus(raw, report, resolve)
    assert len(unis) == 1497
    assert unis["iso3"].nunique() == 104 and len(countries) == 104
    assert report.had_short_header_row and report.encoding == "utf-8"
    assert report.duplicates_dropped == 0
    assert countries["avail"].sum() == pytest.approx(1.0)
    mit = unis[unis["name"].str.contains("Massachusetts Institute of Technology")].iloc[0]
    assert (mit["rank"], mit["rep"], mit["country"]) == (1, 1.0, "United States")
    assert mit["name"] == mit["name"].strip()
    # every rank form of the file is kept raw and parsed
    assert set(unis.loc[unis["rank_raw"] == "1401+", "rank"]) == {1401}
    banded = unis[unis["rank_raw"] == "801-850"]
    assert len(banded) and set(banded["rank"]) == {801}
    tied = unis[unis["rank_raw"].str.startswith("=")]
    assert (tied["rank"] == tied["rank_raw"].str[1:].astype(int)).all()
    # QS spellings land on one canonical name
    assert {"China", "Hong Kong", "Macau", "Palestine", "Iran"} <= set(unis["country"])
    # beyond R_max the global Rep is 0, but local ranks keep the full range
    assert (unis.loc[unis["rank"] > 1200, "rep"] == 0).all()
    usa = countries.set_index("iso3").loc["USA"]
    assert usa["local_rank_min"] == 1 and usa["local_rank_max"] == 1401


def test_demo_corpus_reads(resolve):
    raw, report = corpus.read_qs_export(DEMO_CORPUS)
    unis, countries = corpus.build_corpus(raw, report, resolve)
    assert 24 <= len(unis) <= 60
    assert {"NGA", "IND"} <= set(unis["iso3"])


def test_missing_column_names_file_and_column(tmp_path, resolve):
    p = write(tmp_path, "1,1,MIT,US\n", header="2024 RANK,2023 RANK,Institution Name,Country Code\n")
    with pytest.raises(corpus.CorpusError, match=r"qs\.csv.*'Country'"):
        corpus.read_qs_export(p)


def test_unparseable_rank_names_file_line_and_column(tmp_path, resolve):
    p = write(tmp_path, "1,1,MIT,US,United States\nabout 20,,Oxford,UK,United Kingdom\n")
    raw, report = corpus.read_qs_export(p)
    with pytest.raises(corpus.CorpusError, match=r"qs\.csv: line 4, column '2024 RANK': unparseable rank 'about 20'"):
        corpus.build_corpus(raw, report, resolve)


def test_empty_cell_names_line(tmp_path, resolve):
    p = write(tmp_path, "1,1,MIT,US,United States\n2,,,UK,United Kingdom\n")
    raw, report = corpus.read_qs_export(p)
    with pytest.raises(corpus.CorpusError, match=r"line 4, column 'Institution Name': empty"):
        corpus.build_corpus(raw, report, resolve)


@pytest.mark.parametrize("content", [b"", b"   \n\n"])
def test_empty_file(tmp_path, content):
    p = tmp_path / "empty.csv"
    p.write_bytes(content)
    with pytest.raises(corpus.CorpusError, match=r"empty\.csv: the ranking file is empty"):
        corpus.read_qs_export(p)


def test_header_only(tmp_path):
    p = write(tmp_path, "")
    with pytest.raises(corpus.CorpusError, match="no university rows"):
        corpus.read_qs_export(p)


def test_missing_file_is_named(tmp_path):
    with pytest.raises(corpus.CorpusError, match="nope.csv: ranking file not found"):
        corpus.read_qs_export(tmp_path / "nope.csv")


def test_unknown_country_names_the_value(tmp_path, resolve):
    p = write(tmp_path, "1,1,MIT,US,United States\n2,,Uni of Atlantis,AT,Atlantis\n")
    raw, report = corpus.read_qs_export(p)
    with pytest.raises(ValueError, match="Atlantis"):
        corpus.build_corpus(raw, report, resolve)


def test_exact_duplicates_dropped_and_counted(tmp_path, resolve):
    body = "1,1,MIT,US,United States\n2,,Oxford,UK,United Kingdom\n1,1,MIT,US,United States\n"
    raw, report = corpus.read_qs_export(write(tmp_path, body))
    unis, _ = corpus.build_corpus(raw, report, resolve)
    assert len(unis) == 2 and report.duplicates_dropped == 1
    assert any("duplicate" in w and "line 5" in w for w in report.warnings)


def test_same_university_twice_with_different_data_is_an_error(tmp_path, resolve):
    body = "1,1,MIT,US,United States\n5,,MIT,US,United States\n"
    raw, report = corpus.read_qs_export(write(tmp_path, body))
    with pytest.raises(corpus.CorpusError, match="more than once"):
        corpus.build_corpus(raw, report, resolve)


def test_dirty_file_cp1252_no_short_header_blank_lines_whitespace(tmp_path, resolve):
    body = (
        "1,1,  Universit\u00e4t Z\u00fcrich  ,CH, Switzerland \n\n"
        '=17,,"Cambridge, University of",UK,United Kingdom\n601\u2013650,,S\u00e3o Paulo,BR,Brazil\n'
    )
    body = body.replace("\u2013", "-")  # cp1252 has the en dash, but keep the file simple
    p = write(tmp_path, body, encoding="cp1252", header=HEADER)
    raw, report = corpus.read_qs_export(p)
    unis, countries = corpus.build_corpus(raw, report, resolve)
    assert report.encoding == "cp1252" and report.warnings
    assert not report.had_short_header_row
    assert list(unis["name"]) == ["Universit\u00e4t Z\u00fcrich", "Cambridge, University of", "S\u00e3o Paulo"]
    assert list(unis["rank"]) == [1, 17, 601]
    assert list(unis["country"]) == ["Switzerland", "United Kingdom", "Brazil"]
    assert list(unis["source_line"]) == [2, 4, 5]


def test_one_university_country_has_local_rep_one(tmp_path, resolve):
    body = "1,1,MIT,US,United States\n1401+,,Uni A,KE,Kenya\n100,,Uni B,US,United States\n"
    raw, report = corpus.read_qs_export(write(tmp_path, body))
    unis, countries = corpus.build_corpus(raw, report, resolve)
    ken = unis[unis["iso3"] == "KEN"].iloc[0]
    assert ken["rep_local"] == 1.0 and ken["rep"] == 0.0
    assert list(unis[unis["iso3"] == "USA"]["rep_local"]) == [1.0, 0.0]
    assert countries.set_index("iso3").loc["KEN", "avail"] == pytest.approx(1 / 3)


def test_other_export_years_column_names(tmp_path, resolve):
    header = "2025 RANK,Previous Rank,Institution Name,Location code,Location\n"
    p = write(tmp_path, "1,1,MIT,US,United States\n=2,,Oxford,UK,United Kingdom\n", header=header)
    raw, report = corpus.read_qs_export(p)
    unis, _ = corpus.build_corpus(raw, report, resolve)
    assert list(unis["rank"]) == [1, 2] and list(unis["country"]) == ["United States", "United Kingdom"]
    assert any("'2025 RANK'" in w for w in report.warnings) and any("'Location'" in w for w in report.warnings)
