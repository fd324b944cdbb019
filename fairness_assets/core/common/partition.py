"""The audit's partition key: one model x one prompt template.

Dagster stores a two-dimensional partition as ``"<model>|<template>"`` (dimensions ordered by
name); that string is also the ``partition_key`` column of every stored row. This module is the
one place that builds and reads it: everything else handles :class:`PartitionKey` values and
iterates a table's partitions with :func:`by_partition`.
"""

from __future__ import annotations

from typing import Iterator, NamedTuple

import pandas as pd

SEPARATOR = "|"


class PartitionKey(NamedTuple):
    """A (model, template) pair: unpacks and compares as the tuple, prints as the stored key."""

    model: str
    template: str

    def check(self) -> "PartitionKey":
        for name, value in (("model", self.model), ("template", self.template)):
            if SEPARATOR in str(value):
                raise ValueError(
                    f"{name} {value!r} contains {SEPARATOR!r}, which separates model and template in partition keys"
                )
        return self

    def __str__(self) -> str:
        return f"{self.model}{SEPARATOR}{self.template}"

    @classmethod
    def parse(cls, key) -> "PartitionKey":
        """From a stored ``"model|template"`` string or a Dagster ``MultiPartitionKey``."""
        if isinstance(key, PartitionKey):
            return key
        dims = getattr(key, "keys_by_dimension", None)
        if dims:
            return cls(dims["model"], dims["template"]).check()
        model, sep, template = str(key).partition(SEPARATOR)
        if not sep or not model or not template or SEPARATOR in template:
            raise ValueError(f"partition key {key!r} is not '<model>{SEPARATOR}<template>'")
        return cls(model, template).check()


def key_column(models: pd.Series, templates: pd.Series) -> pd.Series:
    """The ``partition_key`` column for rows with ``model`` and ``template`` (vectorised)."""
    return models.astype(str) + SEPARATOR + templates.astype(str)


def by_partition(frame: pd.DataFrame, column: str = "partition_key") -> Iterator[tuple[PartitionKey, pd.DataFrame]]:
    """The rows of each partition of ``frame``, in key order (rows without a partition, key "",
    are not a partition and are skipped)."""
    if frame is None or frame.empty:
        return
    for key, part in frame.groupby(column, sort=True):
        if key != "":
            yield PartitionKey.parse(key), part
