"""The partition key type: one place builds and reads "model|template"."""

import dagster as dg
import pandas as pd
import pytest

from fairness_assets.core.common.partition import PartitionKey, by_partition, key_column


def test_key_round_trips_and_behaves_as_the_pair():
    key = PartitionKey("llama-3.1-8b", "regional")
    assert str(key) == "llama-3.1-8b|regional" and PartitionKey.parse(str(key)) == key
    model, template = key
    assert (model, template) == ("llama-3.1-8b", "regional") and key in {("llama-3.1-8b", "regional")}
    multi = dg.MultiPartitionKey({"model": "llama-3.1-8b", "template": "regional"})
    assert PartitionKey.parse(multi) == key and str(multi) == str(key)  # Dagster's own string form


@pytest.mark.parametrize("bad", ["no-separator", "m|", "|base", "a|b|c"])
def test_malformed_keys_are_named(bad):
    with pytest.raises(ValueError, match="is not '<model>|<template>'"):
        PartitionKey.parse(bad)


def test_a_model_name_with_the_separator_is_refused():
    with pytest.raises(ValueError, match="contains '|'"):
        PartitionKey("llama|3", "base").check()


def test_by_partition_yields_typed_keys_in_order_and_skips_unpartitioned_rows():
    frame = pd.DataFrame({"partition_key": ["b|base", "a|regional", "", "a|regional"], "x": [1, 2, 3, 4]})
    got = [(k, list(part["x"])) for k, part in by_partition(frame)]
    assert got == [(PartitionKey("a", "regional"), [2, 4]), (PartitionKey("b", "base"), [1])]
    assert list(by_partition(frame.iloc[:0])) == []
    assert list(key_column(pd.Series(["a", "b"]), pd.Series(["base", "academic"]))) == ["a|base", "b|academic"]
