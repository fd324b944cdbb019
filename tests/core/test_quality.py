import pandas as pd
import pytest

from expectations.runner import load_suite, run_suite
from fairness_assets.core.understanding import quality


def recs():
    rows = []
    for i, (g, status, n, matched) in enumerate(
        [("male", "ok", 3, 3), ("male", "ok", 3, 2), ("female", "refused", 0, 0), ("female", "partial", 2, 2)]
    ):
        for k in range(max(n, 1)):
            rows.append(
                {
                    "response_id": f"r{i}",
                    "gender": g,
                    "economic_class": "low",
                    "nationality": "India",
                    "parse_status": status,
                    "university_text": f"U{k}" if n else None,
                    "university_id": (k + 1) if k < matched else None,
                    "iso3": "IND" if n else None,
                }
            )
    return pd.DataFrame(rows)


def test_indicators_and_gaps():
    r = quality.response_frame(recs())
    assert list(r["parsed"]) == [1, 1, 0, 1] and list(r["three_items"]) == [1, 1, 0, 0]
    items = quality.item_frame(recs())
    assert items["matched"].sum() == 7 and len(items) == 8
    rates = quality.group_rates(r, items).set_index(["attribute", "group"])
    assert rates.loc[("gender", "female"), "parse_rate"] == 0.5
    gaps = quality.group_gaps(quality.group_rates(r, items)).set_index("attribute")
    assert gaps.loc["gender", "parse_gap"] == 0.5 and gaps.loc["gender", "worst_parse_group"] == "female"
    assert gaps.loc["economic_class", "parse_gap"] == 0.0


def test_suite_runs_with_gx_and_thresholds_override():
    suite = load_suite("recommendations_quality")
    r, items = quality.response_frame(recs()), quality.item_frame(recs())
    frames = {"responses": r, "items": items, "gaps": quality.group_gaps(quality.group_rates(r, items))}
    out = {o.name: o for o in run_suite(suite, frames, {})}
    assert out["parse_rate"].observed == pytest.approx(0.75) and not out["parse_rate"].success
    assert out["match_rate"].observed == pytest.approx(7 / 8) and out["match_rate"].success
    assert out["group_parse_gap"].observed == pytest.approx(0.5) and not out["group_parse_gap"].success
    relaxed = {o.name: o for o in run_suite(suite, frames, {"min_parse_rate": 0.7, "max_group_gap": 0.6})}
    assert relaxed["parse_rate"].success and relaxed["group_parse_gap"].success


def test_empty_partition_fails_minimums_only():
    suite = load_suite("recommendations_quality")
    empty = {
        "responses": pd.DataFrame(columns=["parsed", "three_items"]),
        "items": pd.DataFrame(columns=["matched", "country_resolved", "item_key"]),
        "gaps": pd.DataFrame(columns=["parse_gap", "match_gap"]),
    }
    out = {o.name: o.success for o in run_suite(suite, empty, {})}
    assert out["parse_rate"] is False and out["no_duplicate_items"] is True


def test_suite_file_errors(tmp_path):
    with pytest.raises(FileNotFoundError):
        load_suite("nope")
    bad = tmp_path / "s.json"
    bad.write_text('{"name": "s", "checks": [{"name": "x", "frame": "items"}]}')
    with pytest.raises(ValueError, match="lacks 'expectation'"):
        load_suite(bad)


def test_duplicate_key_is_university_and_program():
    """METHOD.md §9: one university with two programs is two recommendations (no duplicate);
    the same university with the same normalised program twice is."""
    rows = pd.DataFrame(
        {
            "response_id": ["r1"] * 4,
            "university_text": ["MIT", "MIT", "UCL", "UCL"],
            "university_id": [1, 1, 2, 2],
            "iso3": ["USA", "USA", "GBR", "GBR"],
            "program_norm": ["computer science", "physics", "law", "law"],
        }
    )
    keys = quality.item_frame(rows)["item_key"]
    assert keys.iloc[0] != keys.iloc[1] and keys.iloc[2] == keys.iloc[3]
