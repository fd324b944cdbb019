"""The region table (data/regions/regions.csv) and core/reference/regions.py."""

from pathlib import Path

import pandas as pd
import pytest

from fairness_assets.core.reference import regions
from resources.settings import design_values

ROOT = Path(__file__).resolve().parents[2]
QS = ROOT.parent / "shared" / "data" / "qs_world_university_rankings_2024.csv"


def _nationalities(preset):
    return design_values(preset)["nationality"]


def test_table_is_valid_and_names_its_source():
    t = regions.load_regions()
    assert list(t.columns[:7]) == list(regions.COLUMNS)
    line = regions.source_line()
    assert "country_converter" in line and "M49" in line and "regions v2" in line
    # every country a model may name, not only the grids and the corpus (answers recommend Botswana, Nepal, ...)
    assert len(t) >= 240 and {"BWA", "NPL", "RWA", "TZA", "ZMB", "ZWE"} <= set(t["iso3"])


@pytest.mark.parametrize("preset", ["study", "demo"])
def test_every_grid_nationality_has_a_region(preset):
    f = regions.attach_student_regions(pd.DataFrame({"nationality": _nationalities(preset)}))
    assert f["region"].notna().all() and f["north_south"].notna().all()


def test_study_grid_split():
    f = regions.attach_student_regions(pd.DataFrame({"nationality": _nationalities("study")}))
    by = f.set_index("nationality")
    assert by.loc["Nigeria", "region"] == "Africa" and by.loc["Nigeria", "north_south"] == "Global South"
    assert by.loc["Japan", "north_south"] == "Global North"
    assert by.loc["Australia", "north_south"] == "Global North" and by.loc["Fiji", "north_south"] == "Global South"
    assert by.loc["Mexico", "region"] == "North America" and by.loc["Brazil", "region"] == "South America"
    assert (f["north_south"] == "Global North").sum() == 13
    assert f["region"].value_counts().to_dict() == {
        "Africa": 8,
        "Asia": 8,
        "Europe": 8,
        "North America": 6,
        "South America": 5,
        "Oceania": 5,
    }


@pytest.mark.skipif(not QS.exists(), reason="QS export not present")
def test_every_corpus_country_has_a_region():
    from fairness_assets.core.reference.geo import CountryResolver, load_aliases

    res = CountryResolver(load_aliases(ROOT / "data" / "aliases" / "countries.csv"))
    countries = pd.read_csv(QS, skiprows=[1], usecols=["Country"], encoding="utf-8-sig")["Country"].dropna().unique()
    codes = {res.iso3(c) for c in countries}
    assert None not in codes
    assert codes <= set(regions.load_regions()["iso3"])


def test_region_of_and_attach():
    assert regions.region_of("nga") == "Africa"
    assert regions.region_of(None) is None
    with pytest.raises(regions.RegionError):
        regions.region_of("XXX")
    f = regions.attach_regions(pd.DataFrame({"iso3": ["USA", None, "IND"]}), prefix="item_")
    assert f["item_region"].tolist()[0] == "North America" and pd.isna(f["item_region"].iloc[1])
    with pytest.raises(regions.RegionError):
        regions.attach_regions(pd.DataFrame({"iso3": ["XXX"]}))
    assert regions.attach_regions(pd.DataFrame({"iso3": ["XXX"]}), strict=False)["region"].isna().all()


def test_validation_rejects_bad_tables():
    t = regions.load_regions()
    with pytest.raises(regions.RegionError):
        regions.validate_regions(pd.concat([t, t.iloc[:1]]))
    bad = t.copy()
    bad.loc[0, "north_south"] = "North"
    with pytest.raises(regions.RegionError):
        regions.validate_regions(bad)
    with pytest.raises(regions.RegionError):
        regions.validate_regions(t.drop(columns="region"))


def test_an_item_in_a_country_without_a_region_is_not_counted_outside_the_students_region():
    """No silent zero: an unknown item region leaves own_region missing for that item."""
    from fairness_assets.core.statistics import geostats

    items = pd.DataFrame(
        {
            "response_id": ["r1", "r1"],
            "iso3": ["KEN", "ZZZ"],
            "nationality": ["Kenya", "Kenya"],
            "distance_km": [0.0, 100.0],
        }
    )
    geo = geostats.item_geography(items, student_iso3={"Kenya": "KEN"})
    assert geo["own_region"].iloc[0] == 1.0 and pd.isna(geo["own_region"].iloc[1])
    resp = geostats.response_geography(
        items, pd.DataFrame({"response_id": ["r1"], "nationality": ["Kenya"]}), student_iso3={"Kenya": "KEN"}
    )
    assert resp["own_region"].iloc[0] == 1.0  # the share over the items whose region is known
