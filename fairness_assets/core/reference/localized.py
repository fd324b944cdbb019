"""The words of a prompt in another language than English (METHOD.md §11, issue 35): a country's name in
the template's language, from CLDR's territory names (babel), for the home axis of a design whose values are
countries written in English."""

from __future__ import annotations

from functools import lru_cache
from typing import Optional

from . import geo


@lru_cache(maxsize=4096)
def country_name(country: str, language: str) -> Optional[str]:
    """``country`` (a name the resolver reads: "Nigeria", "United States") in ``language`` (BCP 47: "fr",
    "zh-Hant"), from CLDR; None where the country or the language has no CLDR name."""
    from babel import Locale, UnknownLocaleError

    iso3 = geo.CountryResolver().iso3(country)
    if iso3 is None:
        return None
    iso2 = next((code for code, i in geo.iso2_to_iso3().items() if i == iso3 and code != "UK"), None)
    try:
        names = Locale.parse(str(language).replace("-", "_")).territories
    except (ValueError, TypeError, UnknownLocaleError):
        return None
    return names.get(iso2) if iso2 else None
