"""Propose the table of university systems and places with several universities from the corpus
(issue 21.1), keeping the review of the rows already reviewed.

    .venv/bin/python benchmarks/build_systems_and_cities.py [--corpus QS.csv] [--check]

Writes ``data/aliases/systems_and_cities.csv`` (see :mod:`fairness_assets.core.understanding.match_tables`):
new proposals come with an empty ``reviewed`` column and are not used by the matcher until a
reviewer sets ``yes`` (refuse completions of this name) or ``no`` (a name that may be completed).
``--check`` writes nothing and exits 1 when a proposal is unreviewed or a reviewed row's covers
differ from the corpus.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from fairness_assets.core.reference import corpus, geo  # noqa: E402
from fairness_assets.core.understanding import match, match_tables  # noqa: E402
from resources.settings import ALIASES_FILE  # noqa: E402

TABLE = ROOT / "data" / "aliases" / "systems_and_cities.csv"
SHARED = ROOT.parent / "shared" / "data"


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--corpus", default=str(SHARED / "qs_world_university_rankings_2024.csv"))
    ap.add_argument("--check", action="store_true")
    args = ap.parse_args()
    resolver = geo.CountryResolver(geo.load_aliases(ALIASES_FILE))
    unis, _, _ = corpus.load_corpus(args.corpus, resolver.resolve)
    countries = list(unis["country"].dropna().astype(str)) + list(unis["country_raw"].dropna().astype(str))
    countries += list(geo.load_aliases(ALIASES_FILE))
    proposed = match_tables.propose(
        unis["name"].astype(str), unis["iso3"].astype(str), match.load_name_words(match.NAME_WORDS_FILE), countries
    )
    existing = match_tables.load(TABLE) if TABLE.exists() else []
    rows = match_tables.merge(proposed, existing)
    unreviewed = [r for r in rows if not r.reviewed]
    print(
        f"{len(rows)} rows: {sum(r.reviewed == 'yes' for r in rows)} refused (yes), "
        f"{sum(r.reviewed == 'no' for r in rows)} completable (no), {len(unreviewed)} to review"
    )
    if args.check:
        changed = [r for r in rows if r not in existing]
        for r in changed[:20]:
            print("differs or new:", r)
        return 1 if unreviewed or changed else 0
    match_tables.write(TABLE, rows)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
