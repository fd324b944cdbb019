"""METHOD.md §9: the first k distinct items of an answer are scored (k = 3 by default,
configurable); the rest are counted per answer, never dropped silently."""

import pandas as pd
import pytest

from fairness_assets.core.understanding import understand as understanding
from fairness_assets.core.understanding.parse import parse_response

LIST = "\n".join(
    f"{i}. University {name} - MSc Physics"
    for i, name in enumerate(["of Oxford", "of Cambridge", "of Tokyo", "of Nairobi", "of Lagos", "of Ghana"], 1)
)


@pytest.mark.parametrize("k", [1, 3, 5, 6, 10])
def test_first_k_items_kept_the_rest_counted(k):
    p = parse_response(LIST, max_items=k)
    kept = min(k, 6)
    assert [it.university for it in p.items] == [
        f"University {n}" for n in ["of Oxford", "of Cambridge", "of Tokyo", "of Nairobi", "of Lagos", "of Ghana"]
    ][:kept]
    assert p.n_found == 6 and p.n_left_out == 6 - kept
    assert p.status == ("ok" if k <= 6 else "partial")


def test_an_exact_repeat_is_not_counted_as_left_out():
    text = LIST + "\n7. University of Oxford - MSc Physics"
    p = parse_response(text, max_items=3)
    assert p.n_duplicates == 1 and p.n_left_out == 3


def test_k_below_one_is_refused_naming_it():
    with pytest.raises(ValueError, match="max_items must be at least 1, got 0"):
        parse_response(LIST, max_items=0)


def test_parse_responses_carries_the_count_on_every_row():
    out = understanding.parse_responses(pd.Series({"r1": LIST, "r2": "I cannot help."}), max_items=2)
    r1 = out[out["response_id"] == "r1"]
    assert len(r1) == 2 and set(r1["n_items_left_out"]) == {4}
    assert list(out.loc[out["response_id"] == "r2", "n_items_left_out"]) == [0]
