"""Bring-your-own generations: reading a responses file (CSV, JSONL or Parquet).

Columns (case-insensitive; documented in docs/responses_format.md):

- ``model``, ``template``, ``run``                            required
- one per axis of the design (its name, or one of its         the profile: every axis the grid
  ``aliases``; core/reference/axes.py)                          crosses, or exactly one for the
                                                               reduced-context templates
- ``response``                                                 the model's full answer, or
- ``university``, ``program``, ``country`` (+ ``item_index``)  answers already split into items

The axes are the active catalogue's (the audit's design, ``axes.use``), read when a file is read, or
those of the ``design`` a caller passes: each value is read through its axis's spellings (its values,
their prompt words and their aliases, case-insensitive), and the home axis's values are checked with
the resolver a caller gives (``resolve_home``, e.g. a country resolver's ``iso3``).

A file that cannot be read, or lacks a required column, fails with a message naming the file
and the column. Rows that cannot be used (an unknown value of an axis, a missing model, a ``run``
that is not a whole number in range, a JSON object or array where a single value belongs, ...) are
not dropped silently: they are returned in a rejects table (file row, column, reason) and counted.

Text that no results database can store alike (NUL characters, which PostgreSQL rejects; lone
surrogates, which cannot be encoded as UTF-8) is made storable by :func:`storable_text`, the
rule the results database applies to every text value it writes; a row whose text was altered
keeps it, and says so in its ``text_note`` column (and in the report's ``notes``).

- :mod:`.validating`: column aliases (:func:`column_aliases`) and the axes' values, :func:`storable_text`,
  the run's parse, the file's columns and one chunk validated (rows used, rejects, notes);
  :class:`ResponsesFileError`, :class:`ResponsesReport`;
- :mod:`.reading`: the file's kind, the CSV/TSV, JSON Lines and Parquet chunk readers
  (:data:`CHUNK_ROWS`, :data:`CHUNK_CHARS`: read there, so patch them there), the validated chunks
  assembled by :func:`read_responses` and :func:`response_models`;
- :mod:`.converting`: :func:`generation_columns` (``GENERATION_COLUMNS``: those of the active
  catalogue, read when asked for), :func:`to_generations`, items made samples and
  back (:func:`samples_from_items`, :func:`items_from_generations`), :class:`ImportedResponses` and
  the chunk-at-a-time converter;
- :mod:`.staging`: :func:`stage_responses`, :class:`StagedResponses`, :func:`staging_folder`;
- :mod:`.importing`: :func:`import_responses`, the one import path (streamed, or staged).
"""

from __future__ import annotations

from .converting import (
    ITEMS_FORMAT,
    TEXT_FORMAT,
    ImportedResponses,
    generation_columns,
    import_audit_id,
    items_from_generations,
    samples_from_items,
    to_generations,
)
from .importing import import_responses

# _raw_chunks and _read_all: reachable as responses.X (tests/core/test_responses_streaming.py,
# tests/defs/test_generation_staging.py). To patch one, patch the module that calls it: _raw_chunks
# (and CHUNK_ROWS, CHUNK_CHARS) in .reading, _read_all in .staging and .importing.
from .reading import (  # noqa: F401
    CHUNK_CHARS,
    CHUNK_ROWS,
    _raw_chunks,
    _read_all,
    read_responses,
    response_models,
)
from .staging import STAGING_VERSION, StagedResponses, stage_responses, staging_folder
from .validating import (
    ITEM_COLS,
    MAX_RUN,
    NOTE_COLUMNS,
    REJECT_COLUMNS,
    REQUIRED,
    SAMPLE_KEY,
    ResponsesFileError,
    ResponsesReport,
    column_aliases,
    profile_columns,
    storable_text,
)


def __getattr__(name: str):
    # the column lists of the active catalogue, read when asked for (never at import)
    if name == "GENERATION_COLUMNS":
        return generation_columns()
    if name == "PROFILE_COLS":
        return profile_columns()
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


__all__ = [
    "CHUNK_CHARS",
    "CHUNK_ROWS",
    "GENERATION_COLUMNS",
    "ITEMS_FORMAT",
    "ITEM_COLS",
    "MAX_RUN",
    "NOTE_COLUMNS",
    "PROFILE_COLS",
    "REJECT_COLUMNS",
    "REQUIRED",
    "SAMPLE_KEY",
    "STAGING_VERSION",
    "TEXT_FORMAT",
    "ImportedResponses",
    "ResponsesFileError",
    "ResponsesReport",
    "StagedResponses",
    "column_aliases",
    "generation_columns",
    "import_audit_id",
    "import_responses",
    "items_from_generations",
    "profile_columns",
    "read_responses",
    "response_models",
    "samples_from_items",
    "stage_responses",
    "staging_folder",
    "storable_text",
    "to_generations",
]
