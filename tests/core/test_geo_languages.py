"""Country names in any language (issue 35 item 4): the ``country`` field of an answer in French, Spanish,
Portuguese, German, Arabic, Hindi or Chinese resolves through CLDR (babel's territory names) as the English
name does, with no alias written for it; every text the English sources resolve resolves as before; the
matcher's country constraint reads the resolved country."""

from __future__ import annotations

import pandas as pd
import pytest

from fairness_assets.core.reference import corpus, geo
from fairness_assets.core.understanding import match
from fairness_assets.core.understanding import understand as understanding
from resources.settings import ALIASES_FILE, UNIVERSITY_ALIASES_FILE

from ..conftest import QS_EXPORT

# written by hand (not read from babel): the answer's country field -> the country meant
IN_OTHER_LANGUAGES = [
    ("Allemagne", "DEU"),  # French
    ("États-Unis", "USA"),
    ("Royaume-Uni", "GBR"),
    ("Sénégal", "SEN"),
    ("Corée du Sud", "KOR"),
    ("Estados Unidos", "USA"),  # Spanish, Portuguese
    ("Reino Unido", "GBR"),
    ("Países Bajos", "NLD"),
    ("Japón", "JPN"),
    ("Alemanha", "DEU"),  # Portuguese
    ("Índia", "IND"),
    ("Suíça", "CHE"),
    ("Vereinigte Staaten", "USA"),  # German
    ("Vereinigtes Königreich", "GBR"),
    ("Südafrika", "ZAF"),
    ("الهند", "IND"),  # Arabic
    ("مصر", "EGY"),
    ("ألمانيا", "DEU"),
    ("المملكة المتحدة", "GBR"),
    ("भारत", "IND"),  # Hindi
    ("जर्मनी", "DEU"),
    ("美国", "USA"),  # Chinese, simplified and traditional
    ("英国", "GBR"),
    ("德國", "DEU"),
    ("日本", "JPN"),
    ("中国", "CHN"),
]


@pytest.mark.parametrize("text,iso3", IN_OTHER_LANGUAGES)
def test_a_country_named_in_another_language_resolves_without_an_alias(text, iso3):
    assert geo.CountryResolver({}).iso3(text) == iso3
    assert geo.CountryResolver(geo.load_aliases(ALIASES_FILE)).iso3(text) == iso3


def test_the_names_in_other_languages_cover_every_country_of_the_study():
    from fairness_assets.core.reference.design import load_design
    from resources.settings import TEMPLATES_DIR

    study = load_design("study", templates_dir=TEMPLATES_DIR)
    home = next(a for a in study.axes if a.position == "home")
    resolver = geo.CountryResolver({})
    names = geo._cldr_names()
    for country in home.values:
        iso3 = resolver.iso3(country)
        for language in ("fr", "es", "pt", "de", "ar", "hi", "zh"):
            from babel import Locale

            code = next(k for k, v in geo.iso2_to_iso3().items() if v == iso3 and k != "UK")
            local = Locale.parse(language).territories[code]
            assert names.get(geo.fold(local), iso3) == iso3, (country, language, local)


def test_a_name_two_countries_share_is_never_a_guess():
    names = geo._cldr_names()
    assert all(len(v) == 3 and v.isupper() for v in names.values())
    # short Latin-script names are left to the English sources (no "US", "UK"-like guesses from CLDR)
    assert not [k for k in names if k.isascii() and len(k) < 3]


ENGLISH = [
    "United States",
    "United Kingdom",
    "UK",
    "USA",
    "China (Mainland)",
    "Hong Kong SAR",
    "Korea, South",
    "Türkiye",
    "Côte d'Ivoire",
    "Czech Republic",
    "Master of Public Health",  # not a country
    "MBA",
    "Georgia",
    "Congo",
    "Taiwan",
    "Macau SAR",
]


def test_english_and_qs_spellings_resolve_as_before(monkeypatch):
    texts = list(ENGLISH)
    if QS_EXPORT.exists():  # every country spelling of the QS export too (it is never committed)
        frame = pd.read_csv(QS_EXPORT, dtype=str, encoding="utf-8-sig", skiprows=[1])
        texts += sorted(set(frame["Country"].dropna()))
        assert len(texts) > 80
    now = {t: geo.CountryResolver(geo.load_aliases(ALIASES_FILE)).iso3(t) for t in texts}
    monkeypatch.setattr(geo, "_cldr_iso3", lambda text: None)  # the resolver without the CLDR names
    before = {t: geo.CountryResolver(geo.load_aliases(ALIASES_FILE)).iso3(t) for t in texts}
    assert now == before
    assert now["Master of Public Health"] is None and now["MBA"] is None


def test_the_matcher_constrains_by_a_country_named_in_another_language(qs_export):
    resolver = geo.CountryResolver(geo.load_aliases(ALIASES_FILE))
    unis, _, _ = corpus.load_corpus(qs_export, resolver.resolve)
    index = match.UniversityIndex.build(unis, match.load_university_aliases(UNIVERSITY_ALIASES_FILE))
    items = pd.DataFrame(
        {
            "response_id": "r",
            "item_index": [0, 1, 2],
            "parse_status": "ok",
            "parse_method": "json",
            "n_items_found": 3,
            "n_duplicates": 0,
            "university_text": ["University of Cambridge", "University of Tokyo", "University of Berlin"],
            "program_text": ["MPhil", "MSc", "MSc"],
            "country_text": ["Royaume-Uni", "日本", "Alemania"],
        }
    )
    out = understanding.match_items(items, resolver, index)
    assert list(out["stated_iso3"]) == ["GBR", "JPN", "DEU"]
    assert out["matched_name"].iloc[0] == "University of Cambridge"
    assert out["matched_name"].iloc[1] == "The University of Tokyo"
    assert not out["country_conflict"].iloc[:2].any()
    # a look-alike in another country is refused, as for the English name (University of Bern is Swiss)
    matched = out["matched_name"].iloc[2]
    assert pd.isna(matched) or "Bern" not in str(matched)
