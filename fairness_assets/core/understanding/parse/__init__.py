"""Model response text -> up to three (university, program, country) items.

Pure and total: :func:`parse_response` never raises, whatever string it gets. Strategies are
tried from the most to the least structured and the first that yields items wins:

1. ``json``      a JSON list/object anywhere in the text (fences, trailing commas, single
                 quotes, comments and wrapper objects tolerated; objects recovered one by one
                 when the whole does not load)
2. ``table``     a markdown table or "University | Program | Country" lines
3. ``list``      numbered or bulleted items, possibly spanning several lines with
                 "Program:" / "Country:" sub-lines
4. ``prose``     university-like names in running text, with "Master's in X" and "in <country>"
                 near them

Every item whose university text is "<program> at <university> (in <country>)" ("the MSc
Computer Science at ETH Zurich in Switzerland", "Master of Public Health from Johns Hopkins
University", "the Data Science program offered by Harvard University") is split into its three
parts, whatever the strategy (:func:`split_program`); names such as "University of Texas at
Austin" are left whole because their first part holds no degree word.

Status per response: ``ok`` (three distinct items with a university, none of whose university
texts still holds a program, :func:`holds_program`), ``partial`` (one or two, or items without a
university, or a university text that still holds a program), ``refused`` (no item, and the
model declined or asked a question back), ``unparseable`` (no item otherwise).

Modules:

- :mod:`.shared`: :data:`PARSER_VERSION`, :data:`MAX_ITEMS`, :data:`MAX_ANSWER_CHARS`, the statuses,
  :class:`Item`, :class:`ParseResult`, :func:`clean`, the accent folding, the key vocabulary and the
  regular expressions every strategy reads;
- :mod:`.program`: "<program> at <university>" told and split (:func:`holds_program`,
  :func:`split_program`, :func:`clean_program`);
- :mod:`.structured`: strategies 1 and 2, JSON (:func:`_parse_json`) and tables (:func:`_parse_table`);
- :mod:`.lists`: strategy 3, numbered or bulleted lists (:func:`_parse_list`), and key-value lines
  (:func:`_parse_kv`);
- :mod:`.prose`: strategy 4, names in running text (:func:`_parse_prose`);
- :mod:`.entry`: :func:`parse_response`, which tries each in turn, and :func:`check_limits`.
"""

from __future__ import annotations

from .entry import check_limits, parse_response
from .program import clean_program, holds_program, split_program
from .shared import (
    MAX_ANSWER_CHARS,
    MAX_ITEMS,
    PARSER_VERSION,
    STATUS_OK,
    STATUS_PARTIAL,
    STATUS_REFUSED,
    STATUS_UNPARSEABLE,
    STATUSES,
    Item,
    ParseResult,
    _fold,  # noqa: F401 - parse._fold: tests/core/test_text.py checks the folding
    clean,
)

__all__ = [
    "MAX_ANSWER_CHARS",
    "MAX_ITEMS",
    "PARSER_VERSION",
    "STATUSES",
    "STATUS_OK",
    "STATUS_PARTIAL",
    "STATUS_REFUSED",
    "STATUS_UNPARSEABLE",
    "Item",
    "ParseResult",
    "check_limits",
    "clean",
    "clean_program",
    "holds_program",
    "parse_response",
    "split_program",
]
