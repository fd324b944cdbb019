"""A second ranking file for the sensitivity grid (issue 22 item 3): a THE- or ARWU-style export read
through a column mapping, the recommendations matched to it again, and a finding that rests on the
QS ranks re-scored with its ranks."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from fairness_assets.core.reference import geo
from fairness_assets.core.reference.corpus import CorpusError
from fairness_assets.core.scoring import metrics as mx
from fairness_assets.core.statistics import sensitivity as S
from fairness_assets.core.understanding import ranking as R
from resources.settings import ALIASES_FILE

THE = (
    "Rank,Name,Location,Overall\n"
    "1,Zembla Institute of Science,Germany,98.1\n"
    "=2,University of Lowmarsh,France,97.0\n"
    "201–250,Northfield University,Japan,60.2\n"
    "1001+,Eastbrook College,Brazil,20.0\n"
)


@pytest.fixture
def resolver():
    return geo.CountryResolver(geo.load_aliases(ALIASES_FILE))


def _the(tmp_path, text=THE):
    path = tmp_path / "the.csv"
    path.write_text(text, encoding="utf-8")
    return path


def test_a_the_export_is_read_through_its_column_mapping(tmp_path, resolver):
    mapping = R.parse_mapping("name=Name,rank=Rank,country=Location")
    r = R.load_ranking(_the(tmp_path), mapping, resolver.resolve)
    assert list(r["rank"]) == [1.0, 2.0, 201.0, 1001.0]
    assert list(r["iso3"]) == ["DEU", "FRA", "JPN", "BRA"] and list(r["source_line"]) == [2, 3, 4, 5]


@pytest.mark.parametrize(
    "text,msg",
    [
        ("", "missing name, rank, country"),
        ("name=Name,rank", "'rank' is not field=column"),
        ("name=Name,rank=Rank,country=Location,score=Overall", "unknown field 'score'"),
    ],
)
def test_a_bad_mapping_is_named(text, msg):
    with pytest.raises(ValueError, match=msg):
        R.parse_mapping(text)


def test_a_bad_file_names_the_line_and_column(tmp_path, resolver):
    mapping = R.parse_mapping("name=Name,rank=Rank,country=Location")
    with pytest.raises(CorpusError, match=r"line 1: the column mapping names columns the file lacks \(rank -> 'World"):
        R.load_ranking(_the(tmp_path), {**mapping, "rank": "World Rank"}, resolver.resolve)
    with pytest.raises(CorpusError, match=r"line 3, column 'Rank': 'n/a' is not a rank"):
        R.load_ranking(_the(tmp_path, THE.replace("=2,", "n/a,")), mapping, resolver.resolve)
    with pytest.raises(CorpusError, match="column 'Location'"):
        R.load_ranking(_the(tmp_path, THE.replace("Japan", "Atlantis")), mapping, resolver.resolve)


def test_items_are_matched_to_the_second_ranking_and_rescored(tmp_path, resolver):
    ranking = R.load_ranking(_the(tmp_path), R.parse_mapping("name=Name,rank=Rank,country=Location"), resolver.resolve)
    recs = pd.DataFrame(
        {
            "university_text": ["Zembla Institute of Science", "Eastbrook College", "Nowhere U"],
            "stated_iso3": ["DEU", "BRA", None],
        }
    )
    ranks = R.ranks_of_items(recs, ranking)
    assert ranks.iloc[0] == 1.0 and ranks.iloc[1] == 1001.0 and np.isnan(ranks.iloc[2])
    items = pd.DataFrame(
        {
            "rank": [900.0, 5.0, np.nan],
            "rank_alt": ranks.to_numpy(),
            "rep": [0.25, 0.99, 0.0],
            "distance_km": [100.0, 100.0, 100.0],
            "lambda_per_km": [1e-4] * 3,
            "economic_class": ["high"] * 3,
            "acad": [np.nan] * 3,
        }
    )
    params = mx.ScoringParams()
    setting = S.settings_grid(ranking=R.label(str(tmp_path / "the.csv")))[-1]
    assert setting.name == "ranking the.csv"
    out = S.rescore_items(items, setting, params)
    assert out["rep"].iloc[0] == pytest.approx(1.0) and out["rep"].iloc[2] == 0.0  # rank 1; unmatched: 0
    assert out["rep"].iloc[1] == pytest.approx((1200 - 1001) / 1199)  # "1001+": its lower bound
    with pytest.raises(ValueError, match="no 'rank_alt' column"):
        S.rescore_items(items.drop(columns="rank_alt"), setting, params)
