"""understanding.non_exact_matches: the matches a reader should audit (issue 21.3), most frequent first."""

import pandas as pd

from fairness_assets.core.understanding.understand import NON_EXACT_COLUMNS, non_exact_matches


def _item(text, name, rule, method, score=90.0, runner=None, runner_score=None, uid=1, iso3=None):
    return {
        "university_text": text,
        "stated_iso3": iso3,
        "matched_name": name,
        "match_rule": rule,
        "match_method": method,
        "match_score": score,
        "match_runner_up": runner,
        "match_runner_up_score": runner_score,
        "university_id": uid,
    }


def test_counts_non_exact_matches_most_frequent_first():
    items = pd.DataFrame(
        [_item("Uni of Somewhere", "University of Somewhere", "fuzzy", "fuzzy", 91.0, "Somewhere Tech", 70.0)] * 3
        + [_item("Imperial College", "Imperial College London", "completion", "prefix", 100.0, None, None)] * 5
        + [_item("Oxford University", "University of Oxford", "exact", "exact", 100.0)] * 9  # exact: not listed
        + [_item("Nowhere College", None, None, "none", 0.0, uid=None)] * 4  # unmatched: not listed
        + [
            _item(
                "Uni of Somewhere",
                "University of Somewhere",
                "fuzzy",
                "fuzzy",
                91.0,
                "Somewhere Tech",
                70.0,
                iso3="GBR",
            )
        ]
    )
    out = non_exact_matches(items)
    assert list(out.columns) == NON_EXACT_COLUMNS
    assert list(out["university_text"]) == ["Imperial College", "Uni of Somewhere", "Uni of Somewhere"]
    assert list(out["items"]) == [5, 3, 1]
    first_fuzzy = out.iloc[1]
    assert first_fuzzy["match_runner_up"] == "Somewhere Tech" and first_fuzzy["match_runner_up_score"] == 70.0
    assert out.iloc[0]["match_runner_up"] is None and out.iloc[2]["stated_iso3"] == "GBR"
    assert len(non_exact_matches(items, n=1)) == 1


def test_nothing_to_audit_gives_an_empty_table_with_its_columns():
    exact = pd.DataFrame([_item("Oxford University", "University of Oxford", "exact", "exact")])
    assert non_exact_matches(exact).empty and list(non_exact_matches(exact).columns) == NON_EXACT_COLUMNS
    assert non_exact_matches(pd.DataFrame()).empty


def test_the_report_lists_the_matches_to_audit_after_parse_quality():
    from fairness_assets.core.reporting import audit_report as AR

    recs = pd.DataFrame(
        [
            {
                "response_id": "r1",
                "item_index": 0,
                "university_text": "Imperial College",
                "matched_name": "Imperial College London",
                "university_id": 1,
                "iso3": "GBR",
                "country": "United Kingdom",
                "program_text": "MSc",
                "audit_id": "a",
                "partition_key": "m|base",
            }
        ]
    )
    part = AR.PartitionResult("m", "base", recs, {}, pd.DataFrame())
    table = non_exact_matches(
        pd.DataFrame(
            [_item("Imperial College", "Imperial College London", "completion", "prefix", 100.0, "Imperial Tech", 80.0)]
            * 2
        )
    )
    quality = pd.DataFrame(
        [
            {
                "partition": "m|base",
                "check": "match_rate",
                "passed": True,
                "observed": 1.0,
                "threshold": 0.8,
                "blocking": True,
            }
        ]
    )
    html, md, _ = AR.build_report(
        [part],
        provenance={"code version": "test"},
        quality=quality,
        figures_by_partition={"m|base": []},
        matches={"m|base": table, "other|base": table.iloc[:0]},
    )
    assert AR.MATCHES_TITLE in md and "Imperial Tech" in md and "completion" in md
    assert md.index("Parse quality") < md.index(AR.MATCHES_TITLE)
    assert "other\\|base: every matched item was matched by an exact corpus name" in md
    assert AR.MATCHES_TITLE in html and "Imperial Tech" in html
