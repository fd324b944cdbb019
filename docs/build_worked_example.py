"""Rebuilds docs/worked_example.md from a fresh run of `fairness-audit score` on the example file.

.venv/bin/python docs/build_worked_example.py
"""

from __future__ import annotations

import sys
import tempfile
from pathlib import Path

import pandas as pd

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from fairness_assets.local import score_responses  # noqa: E402
from resources.settings import DATA_DIR, DEMO_CORPUS  # noqa: E402


def main() -> None:
    with tempfile.TemporaryDirectory() as tmp:
        score_responses(
            str(DATA_DIR / "examples" / "worked_example_responses.csv"), str(DEMO_CORPUS), tmp, log=lambda *_: None
        )
        d = Path(tmp)

        def md(name, cols=None, q=None):
            df = pd.read_csv(d / f"{name}.csv")
            if q:
                df = df.query(q)
            if cols:
                df = df[cols]
            return df.to_markdown(index=False, floatfmt=".4f")

        # summary.md below its file lines, its headings one level down (it sits under "## summary.md")
        summary = "\n".join(
            "#" + ln if ln.startswith("#") else ln
            for ln in (d / "summary.md").read_text().split("\n", 5)[-1].split("\n")
        )
        items = md(
            "drs_items",
            [
                "template",
                "profile_id",
                "item_index",
                "university_text",
                "iso3",
                "distance_km",
                "lambda_per_km",
                "rank",
                "acc",
                "rep",
                "acad",
                "drs",
                "drs_components",
            ],
            "profile_id=='full:female:low:nigeria' and template in ['base','academic']",
        )
        doc = f"""# Worked example

A small responses file, `data/examples/worked_example_responses.csv` (33 hand-written answers of an
illustrative `example-model`: two genders x two classes x Nigeria and India for the `base`,
`regional` and `academic` templates, the reduced-context templates, and one refusal), scored
against the illustrative demo corpus (`data/demo/`, **not** the QS ranking) with the default
parameters:

```bash
.venv/bin/fairness-audit score --responses data/examples/worked_example_responses.csv \\
    --corpus data/demo/illustrative_rankings_demo.csv --out results/worked_example
```

The command writes every table below as CSV (plus `recommendations.csv`, `rejects.csv`,
`params.json` and `summary.md`). The Dagster assets produce the same tables from the same input
(`tests/e2e/test_score_cli.py` compares them); `tests/e2e/test_docs.py` checks the figures of
this page against a fresh run, and `docs/build_worked_example.py` rebuilds it.

## summary.md

{summary}
## DRS per item (`drs_items.csv`), one student: female, low-income, Nigeria

lambda = 0.001 per km (low class). Acc = exp(-lambda x d); Rep = (1200 - R)/(1200 - 1), 0 beyond
1200 or outside the corpus; Acad only on `academic` (student interest Engineering & Technology;
Jaccard with the program's tags). DRS = the mean of the available components with equal weights.

{items}

## DRS, Acc, Rep, Acad overall and by group (`drs_summary.csv`), base and academic

{md("drs_summary", None, "template in ['base','academic']")}

## Academic alignment by gender and class (`academic_alignment.csv`)

{md("academic_alignment")}

## GRS per country (`grs_by_country.csv`), base template, countries recommended

{
            md(
                "grs_by_country",
                [
                    "iso3",
                    "country",
                    "total_unis",
                    "recs",
                    "n_recommendations",
                    "avail",
                    "repr",
                    "scaled_repr",
                    "rep_covg",
                    "grs",
                ],
                "template=='base' and n_recommendations>0",
            )
        }

## Base vs regional (`base_vs_regional_drs_change.csv`, `base_vs_regional_grs_change.csv`)

{
            md(
                "base_vs_regional_drs_change",
                ["group_by", "group", "drs_base", "drs_regional", "drs_change_pct", "acc_change_pct", "rep_change_pct"],
            )
        }

{
            md(
                "base_vs_regional_grs_change",
                ["country", "grs_base", "grs_regional", "grs_change_pct"],
                "grs_base>0 or grs_regional>0",
            )
        }

## Volume and diversity (`volume_diversity.csv`)

{md("volume_diversity")}

## US+UK share and country coverage (`concentration.csv`)

{
            md(
                "concentration",
                [
                    "template",
                    "recommendations_with_country",
                    "us_uk_share",
                    "countries_recommended",
                    "corpus_countries",
                    "country_coverage",
                ],
            )
        }

## Reduced context (`reduced_context_top.csv`), top 3 countries per value

{
            md(
                "reduced_context_top",
                ["template", "attribute", "value", "rank", "item", "count", "share"],
                "what=='country' and rank<=3",
            )
        }
"""
    (ROOT / "docs" / "worked_example.md").write_text(doc, encoding="utf-8")


if __name__ == "__main__":
    main()
