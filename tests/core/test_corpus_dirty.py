"""Dirty QS exports (issue 11, low items): rank column fallback, encodings, physical line
numbers, unresolved countries and out-of-range ranks. Small synthetic files in tmp_path."""

import codecs

import pandas as pd
import pytest

from fairness_assets.core.reference import corpus
from fairness_assets.core.reference.geo import CountryResolver, load_aliases
from resources.settings import ALIASES_FILE

HEADER = "2024 RANK,2023 RANK,Institution Name,Country Code,Country\n"
BODY = "1,1,MIT,US,United States\n=2,,Universit\u00e4t Z\u00fcrich,CH,Switzerland\n601-650,,S\u00e3o Paulo,BR,Brazil\n"


@pytest.fixture(scope="module")
def resolve():
    r = CountryResolver(load_aliases(ALIASES_FILE))
    return lambda s: r.resolve(s, strict=True)


def write(tmp_path, text, name="qs.csv", encoding="utf-8", bom=b""):
    p = tmp_path / name
    p.write_bytes(bom + text.encode(encoding))
    return p


# -- (a) the configured rank column is absent ---------------------------------------------------
def test_fallback_rank_column_is_named_with_the_reason(tmp_path, resolve):
    p = write(tmp_path, "2023 RANK,Institution Name,Country\n1,MIT,United States\n2,Oxford,United Kingdom\n")
    raw, report = corpus.read_qs_export(p, "2024 RANK")
    assert report.rank_column == "2023 RANK"
    warning = next(w for w in report.warnings if "rank column" in w)
    assert "'2024 RANK'" in warning and "'2023 RANK'" in warning and "not in the header" in warning
    unis, _ = corpus.build_corpus(raw, report, resolve)
    assert list(unis["rank"]) == [1, 2]


def test_errors_name_the_rank_column_actually_read(tmp_path, resolve):
    p = write(tmp_path, "2023 RANK,Institution Name,Country\n1,MIT,United States\nabout 5,Oxford,United Kingdom\n")
    raw, report = corpus.read_qs_export(p, "2024 RANK")
    with pytest.raises(corpus.CorpusError) as err:
        corpus.build_corpus(raw, report, resolve)
    assert "line 3, column '2023 RANK': unparseable rank 'about 5'" in str(err.value)
    assert "2024 RANK" not in str(err.value)


def test_most_recent_rank_column_wins_and_the_others_are_listed(tmp_path, resolve):
    p = write(tmp_path, "2022 RANK,2023 RANK,Institution Name,Country\n9,1,MIT,United States\n")
    raw, report = corpus.read_qs_export(p, "2024 RANK")
    assert report.rank_column == "2023 RANK"
    assert any("'2022 RANK'" in w and "using '2023 RANK'" in w for w in report.warnings)
    unis, _ = corpus.build_corpus(raw, report, resolve)
    assert list(unis["rank"]) == [1]


def test_configured_column_present_means_no_warning(tmp_path, resolve):
    raw, report = corpus.read_qs_export(write(tmp_path, HEADER + BODY))
    assert report.rank_column == "2024 RANK" and not report.warnings


# -- (b) encodings -----------------------------------------------------------------------------
@pytest.mark.parametrize(
    "bom,encoding,label",
    [
        (codecs.BOM_UTF8, "utf-8", "utf-8"),
        (codecs.BOM_UTF16_LE, "utf-16-le", "utf-16-le"),
        (codecs.BOM_UTF16_BE, "utf-16-be", "utf-16-be"),
        (codecs.BOM_UTF32_LE, "utf-32-le", "utf-32-le"),
        (codecs.BOM_UTF32_BE, "utf-32-be", "utf-32-be"),
    ],
)
def test_encoding_is_detected_from_the_bom(tmp_path, resolve, bom, encoding, label):
    p = write(tmp_path, HEADER + BODY, encoding=encoding, bom=bom)
    raw, report = corpus.read_qs_export(p)
    unis, _ = corpus.build_corpus(raw, report, resolve)
    assert report.encoding == label
    assert list(unis["name"]) == ["MIT", "Universit\u00e4t Z\u00fcrich", "S\u00e3o Paulo"]
    assert list(unis["country"]) == ["United States", "Switzerland", "Brazil"]
    assert list(unis["source_line"]) == [2, 3, 4]


def test_utf16_as_windows_excel_writes_it(tmp_path, resolve):
    """Python's 'utf-16' codec writes a BOM and CRLF line ends as Excel's "Unicode text" does."""
    p = tmp_path / "qs.csv"
    p.write_bytes((HEADER + BODY).replace("\n", "\r\n").encode("utf-16"))
    raw, report = corpus.read_qs_export(p)
    unis, _ = corpus.build_corpus(raw, report, resolve)
    assert report.encoding.startswith("utf-16") and len(unis) == 3


def test_bom_with_invalid_body_says_the_encoding_is_the_problem(tmp_path):
    p = tmp_path / "broken16.csv"
    p.write_bytes(codecs.BOM_UTF16_LE + (HEADER + BODY).encode("utf-16-le") + b"\x00\xd8")  # lone high surrogate
    with pytest.raises(corpus.CorpusError) as err:
        corpus.read_qs_export(p)
    msg = str(err.value)
    assert "broken16.csv" in msg and "encoding" in msg and "UTF-16-LE" in msg


@pytest.mark.parametrize("encoding", ["utf-16-le", "utf-16-be", "utf-32-le"])
def test_utf16_without_bom_says_the_encoding_is_the_problem(tmp_path, encoding):
    p = write(tmp_path, HEADER + BODY, name="nobom.csv", encoding=encoding)
    with pytest.raises(corpus.CorpusError) as err:
        corpus.read_qs_export(p)
    msg = str(err.value)
    assert msg.startswith(f"{p}: the encoding is the problem") and "UTF-16" in msg


def test_neither_utf8_nor_cp1252_is_an_encoding_error(tmp_path):
    p = tmp_path / "odd.csv"
    p.write_bytes(HEADER.encode() + b"1,1,Uni \x81\x8d,US,United States\n")  # bytes Windows-1252 leaves undefined
    with pytest.raises(corpus.CorpusError, match=r"odd\.csv: the encoding is the problem"):
        corpus.read_qs_export(p)


def test_cp1252_fallback_still_reads_with_a_warning(tmp_path, resolve):
    p = write(tmp_path, HEADER + BODY, encoding="cp1252")
    raw, report = corpus.read_qs_export(p)
    unis, _ = corpus.build_corpus(raw, report, resolve)
    assert report.encoding == "cp1252" and any("Windows-1252" in w for w in report.warnings)
    assert list(unis["name"])[1] == "Universit\u00e4t Z\u00fcrich"


# -- (c) physical line numbers -----------------------------------------------------------------
def test_quoted_name_with_newline_does_not_shift_later_lines(tmp_path, resolve):
    body = (
        '1,1,"Massachusetts Institute\nof Technology",US,United States\n'
        "2,,Oxford,UK,United Kingdom\n"
        '"3",,"Two\nline\nname",CH,Switzerland\n'
        "4,,Zurich,CH,Switzerland\n"
    )
    raw, report = corpus.read_qs_export(write(tmp_path, HEADER + body))
    unis, _ = corpus.build_corpus(raw, report, resolve)
    assert list(unis["source_line"]) == [2, 4, 5, 8]
    assert unis["name"].iloc[0] == "Massachusetts Institute\nof Technology"


def test_error_after_a_multiline_name_names_the_physical_line(tmp_path, resolve):
    body = (
        '1,1,"Massachusetts Institute\nof Technology",US,United States\n2,,Oxford,UK,United Kingdom\n'
        "about 20,,Bad,UK,United Kingdom\n"
    )
    raw, report = corpus.read_qs_export(write(tmp_path, HEADER + body))
    with pytest.raises(corpus.CorpusError, match=r"qs\.csv: line 5, column '2024 RANK': unparseable rank 'about 20'"):
        corpus.build_corpus(raw, report, resolve)


def test_crlf_and_blank_lines_count_as_lines(tmp_path, resolve):
    body = "1,1,MIT,US,United States\r\n\r\n\r\n2,,Oxford,UK,United Kingdom\r\n"
    raw, report = corpus.read_qs_export(write(tmp_path, HEADER.replace("\n", "\r\n") + body))
    unis, _ = corpus.build_corpus(raw, report, resolve)
    assert list(unis["source_line"]) == [2, 5]


def test_unclosed_quote_names_the_line_where_it_opens(tmp_path):
    body = '1,1,MIT,US,United States\n2,,"Oxford,UK,United Kingdom\n3,,Zurich,CH,Switzerland\n'
    with pytest.raises(corpus.CorpusError, match=r"qs\.csv: line 3: not a readable CSV file \(a quoted field"):
        corpus.read_qs_export(write(tmp_path, HEADER + body))


def test_too_many_fields_names_the_line(tmp_path):
    body = '1,1,"MIT\nCambridge",US,United States\n2,,Oxford,UK,United Kingdom,extra\n'
    with pytest.raises(corpus.CorpusError, match=r"qs\.csv: line 4: 6 fields, but the header \(line 1\) has 5"):
        corpus.read_qs_export(write(tmp_path, HEADER + body))


def test_duplicate_example_lines_are_physical(tmp_path, resolve):
    body = '1,1,"MIT\nCambridge",US,United States\n2,,Oxford,UK,United Kingdom\n2,,Oxford,UK,United Kingdom\n'
    raw, report = corpus.read_qs_export(write(tmp_path, HEADER + body))
    corpus.build_corpus(raw, report, resolve)
    assert report.duplicate_examples == ["line 5: Oxford"]


# -- (d) a country that does not resolve names its line ----------------------------------------
def test_unresolved_country_names_value_and_lines(tmp_path, resolve):
    body = (
        '1,1,"MIT\nCambridge",US,United States\n2,,Uni of Atlantis,AT,Atlantis\n'
        "3,,Oxford,UK,United Kingdom\n4,,Atlantis Tech,AT,Atlantis\n5,,Mu U,MU,Lemuria\n"
    )
    raw, report = corpus.read_qs_export(write(tmp_path, HEADER + body))
    with pytest.raises(corpus.CorpusError) as err:
        corpus.build_corpus(raw, report, resolve)
    msg = str(err.value)
    assert msg.startswith(f"{report.path}: line 4, column 'Country'")
    assert "'Atlantis' (lines 4, 6)" in msg and "'Lemuria' (line 7)" in msg
    assert "data/aliases/countries.csv" in msg  # the resolver's own advice is kept


def test_unresolved_country_from_a_lenient_resolver_is_named_too(tmp_path):
    r = CountryResolver(load_aliases(ALIASES_FILE))
    body = "1,1,MIT,US,United States\n2,,Uni of Atlantis,AT,Atlantis\n"
    raw, report = corpus.read_qs_export(write(tmp_path, HEADER + body))
    with pytest.raises(corpus.CorpusError, match=r"line 3, column 'Country'.*'Atlantis' \(line 3\)"):
        corpus.build_corpus(raw, report, lambda s: r.resolve(s, strict=False))


# -- (e) rank outside 1..max --------------------------------------------------------------------
@pytest.mark.parametrize("rank", ["0", "=0", "0-50", "00", "100001"])
def test_rank_outside_range_is_rejected_with_the_line(tmp_path, resolve, rank):
    body = f'1,1,"MIT\nCambridge",US,United States\n{rank},,Oxford,UK,United Kingdom\n'
    raw, report = corpus.read_qs_export(write(tmp_path, HEADER + body))
    with pytest.raises(corpus.CorpusError) as err:
        corpus.build_corpus(raw, report, resolve)
    assert f"line 4, column '2024 RANK': rank {rank!r} is outside 1..{corpus.MAX_RANK}" in str(err.value)


def test_max_rank_is_a_parameter(tmp_path, resolve):
    raw, report = corpus.read_qs_export(write(tmp_path, HEADER + BODY))
    with pytest.raises(corpus.CorpusError, match=r"line 4, column '2024 RANK': rank '601-650' is outside 1\.\.600"):
        corpus.build_corpus(raw, report, resolve, max_rank=600)
    unis, _ = corpus.build_corpus(raw, report, resolve, max_rank=601)
    assert unis["rank"].max() == 601


def test_csv_records_report_start_lines():
    recs = corpus.csv_records('a,b\n"x\ny",1\n\nz,"2"\r\nw,3')
    assert [line for line, _ in recs] == [1, 2, 4, 5, 6]
    assert recs[1][1] == ["x\ny", "1"] and recs[2][1] == []
    assert pd.Series([f for _, f in recs]).map(len).tolist() == [2, 2, 0, 2, 2]
