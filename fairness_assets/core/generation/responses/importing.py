"""The one import path of a responses file (:func:`import_responses`): read and converted a chunk at
a time, keeping only the pairs asked for, or through a staged folder (:mod:`.staging`)."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Callable, Mapping, Optional

import pandas as pd

from .converting import GENERATION_COLUMNS, ImportedResponses, _Converter, samples_from_items
from .reading import _concat, _read_all
from .staging import stage_responses
from .validating import NOTE_COLUMNS

if TYPE_CHECKING:
    from ...reference.prompts import PromptTemplate


def import_responses(
    path: str | Path,
    templates: Mapping[str, "PromptTemplate"],
    resolve_nationality: Optional[Callable[[str], Optional[str]]] = None,
    pairs: Optional[set] = None,
    staging: Optional[str | Path] = None,
) -> ImportedResponses:
    """Read a responses file (answers as written, or already split into items) and make it
    generation rows, keeping the (model, template) ``pairs`` when given; what cannot be used is
    in ``rejects`` with the reason. The one import path of the ``generations`` asset (and so of
    ``fairness-audit score``).

    The file is read a chunk at a time and only the rows of ``pairs`` are kept, so memory follows
    what is returned, not the file. With ``staging`` (a folder), the file is converted once into
    that folder (:func:`stage_responses`) and each later import of the same file reads only the
    partitions it asks for."""
    if staging is not None:
        return stage_responses(path, templates, resolve_nationality, staging).imported(pairs)
    from ...reference.corpus import file_sha256

    path = Path(path)
    sha = file_sha256(path) if path.exists() else ""
    kept: list[pd.DataFrame] = []
    conv = _Converter(templates, str(path), sha, pairs, kept.append)

    def reset() -> None:
        kept.clear()
        conv.reset()

    _read_all(path, resolve_nationality, conv.add, reset)
    if conv.split:
        table = conv.convert(samples_from_items(_concat(kept))) if kept else conv.empty_generations()
    else:
        table = _concat(kept) if kept else conv.empty_generations()
    return ImportedResponses(
        table[GENERATION_COLUMNS],
        conv.rejects(pairs),
        pd.DataFrame(conv.notes, columns=NOTE_COLUMNS),
        conv.rows_read,
        conv.split,
        sha,
        {m for m, _ in conv.named},
        set(conv.named),
    )
