"""The one import path of a responses file (:func:`import_responses`): read and converted a chunk at
a time, keeping only the pairs asked for, or through a staged folder (:mod:`.staging`)."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Mapping, Optional

import pandas as pd

from ...reference import axes
from .converting import ImportedResponses, _Converter, generation_columns, samples_from_items
from .reading import Resolver, _concat, _read_all
from .staging import stage_responses
from .validating import NOTE_COLUMNS, crossed_axes

if TYPE_CHECKING:
    from ...reference.design import Design
    from ...reference.prompts import PromptTemplate


def import_responses(
    path: str | Path,
    templates: Mapping[str, "PromptTemplate"],
    resolve_home: Optional[Resolver] = None,
    pairs: Optional[set] = None,
    staging: Optional[str | Path] = None,
    *,
    design: Optional["Design"] = None,
) -> ImportedResponses:
    """Read a responses file (answers as written, or already split into items) and make it
    generation rows, keeping the (model, template) ``pairs`` when given; what cannot be used is
    in ``rejects`` with the reason. The one import path of the ``generations`` asset (and so of
    ``fairness-audit score``).

    The file is read a chunk at a time and only the rows of ``pairs`` are kept, so memory follows
    what is returned, not the file. With ``staging`` (a folder), the file is converted once into
    that folder (:func:`stage_responses`) and each later import of the same file reads only the
    partitions it asks for.

    The profile columns are the axes of the active catalogue, or of ``design`` (made active while the
    file is imported; its crossed axes make a ``full`` profile); ``resolve_home`` checks the home
    axis's values."""
    if staging is not None:
        return stage_responses(path, templates, resolve_home, staging, design=design).imported(pairs)
    with axes.using(design.catalogue if design is not None else None):
        return _import(Path(path), templates, resolve_home, pairs, crossed_axes(design))


def _import(
    path: Path, templates, resolve_home: Optional[Resolver], pairs: Optional[set], crossed
) -> ImportedResponses:
    from ...reference.corpus import file_sha256

    sha = file_sha256(path) if path.exists() else ""
    kept: list[pd.DataFrame] = []
    conv = _Converter(templates, str(path), sha, pairs, kept.append)

    def reset() -> None:
        kept.clear()
        conv.reset()

    _read_all(path, resolve_home, conv.add, reset, crossed)
    if conv.split:
        table = conv.convert(samples_from_items(_concat(kept))) if kept else conv.empty_generations()
    else:
        table = _concat(kept) if kept else conv.empty_generations()
    return ImportedResponses(
        table[generation_columns()],
        conv.rejects(pairs),
        pd.DataFrame(conv.notes, columns=NOTE_COLUMNS),
        conv.rows_read,
        conv.split,
        sha,
        {m for m, _ in conv.named},
        set(conv.named),
    )
