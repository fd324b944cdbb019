"""Builds data/regions/regions.csv: one row per country that country_converter classifies (every
country a student or a recommended university can be in: a model names countries outside the
grid and the corpus), checked to cover the study grid, the demo grid and the QS 2024 corpus, with
its continent, UN geoscheme region and a Global North / Global South split.

    .venv/bin/python data/regions/build_regions.py [--qs ../shared/data/qs_world_university_rankings_2024.csv]

Source: country_converter (coco) 1.3's classification table (``CountryConverter().data``):
- ``un_region``   = coco ``UNregion``: the UN M49 geoscheme sub-region ("Western Africa", ...).
- ``continent``   = coco ``continent`` (Africa, America, Asia, Europe, Oceania).
- ``region``      = coco ``Continent_7`` (Africa, Asia, Europe, North America, South America,
                    Oceania): the study's `region` attribute; it splits the Americas, which
                    hold 11 of the grid's 40 nationalities.
- ``north_south`` = the UN M49 "developed regions" rule (UN Statistics Division, Standard
                    country or area codes for statistical use, as published until 2021):
                    Global North = every country of Europe (un_region in Northern, Western,
                    Southern, Eastern Europe), Northern America, Australia and New Zealand,
                    and Japan; every other country is Global South. coco has no
                    developed/developing column, so the rule is applied to its UNregion.
                    Caveat: South Korea, Singapore, Israel, Hong Kong and Taiwan fall in the
                    South under this rule (the M49 list predates their reclassification).
- ``oecd``        = coco ``OECD`` (year of accession; empty for non-members): a second,
                    membership-based split, kept for sensitivity checks.
Only country names and codes are written; no QS rows are copied.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import country_converter as coco
import pandas as pd
import yaml

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

OUT = ROOT / "data" / "regions" / "regions.csv"
VERSION = "2"  # 2: every country coco classifies (1: the grids and the corpus only)
NORTH_UNREGIONS = {
    "Northern Europe",
    "Western Europe",
    "Southern Europe",
    "Eastern Europe",
    "Northern America",
    "Australia and New Zealand",
}
NORTH_EXTRA = {"JPN"}


def north_south(iso3: str, un_region: str) -> str:
    return "Global North" if (un_region in NORTH_UNREGIONS or iso3 in NORTH_EXTRA) else "Global South"


def _iso3_of(names: list[str]) -> dict[str, str]:
    from fairness_assets.core.reference.geo import CountryResolver, load_aliases

    res = CountryResolver(load_aliases(ROOT / "data" / "aliases" / "countries.csv"))  # the project's reviewed aliases
    out = {}
    for n in names:
        iso = res.iso3(n)
        if not iso:
            raise SystemExit(f"cannot resolve the country {n!r}")
        out[n] = iso
    return out


def build(qs: Path | None) -> pd.DataFrame:
    names: list[str] = []
    for preset in ("study", "demo"):
        names += yaml.safe_load((ROOT / "data" / "presets" / f"{preset}.yaml").read_text())["nationalities"]
    iso3s = set(_iso3_of(sorted(set(names))).values())
    if qs is not None and qs.exists():
        corpus_countries = pd.read_csv(qs, skiprows=[1], usecols=["Country"], encoding="utf-8-sig")["Country"]
        iso3s |= set(_iso3_of(sorted(set(corpus_countries.dropna().astype(str)))).values())
    data = coco.CountryConverter().data.drop_duplicates("ISO3").set_index("ISO3")
    missing = sorted(iso3s - set(data.index))
    if missing:
        raise SystemExit(f"country_converter does not classify {missing}")
    classified = data[data["UNregion"].notna() & data["Continent_7"].notna()].index
    rows = []
    for iso in sorted(set(classified) | iso3s):
        r = data.loc[iso]
        rows.append(
            {
                "iso3": iso,
                "country": r["name_short"],
                "un_region": r["UNregion"],
                "continent": r["continent"],
                "region": r["Continent_7"],
                "north_south": north_south(iso, r["UNregion"]),
                "oecd": "" if pd.isna(r["OECD"]) else str(int(r["OECD"])),
            }
        )
    return pd.DataFrame(rows)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument(
        "--qs", type=Path, default=ROOT.parent / "shared" / "data" / "qs_world_university_rankings_2024.csv"
    )
    args = ap.parse_args()
    table = build(args.qs)
    header = (
        f"# regions v{VERSION}: country_converter {coco.__version__} (UNregion, continent, Continent_7, OECD); "
        "north_south = UN M49 developed regions (Europe, Northern America, Australia and New Zealand, Japan) "
        "vs the rest; built by data/regions/build_regions.py\n"
    )
    OUT.write_text(header + table.to_csv(index=False), encoding="utf-8")
    print(f"wrote {len(table)} countries to {OUT}")
    print(table.groupby(["region", "north_south"]).size().to_string())


if __name__ == "__main__":
    main()
