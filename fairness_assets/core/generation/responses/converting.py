"""Validated responses made generation rows: the generation table's columns, the prompt re-rendered
from the template files (:func:`to_generations`), already-split items made samples and back
(:func:`samples_from_items`, :func:`items_from_generations`), and the chunk-at-a-time converter that
:func:`import_responses` and :func:`stage_responses` share. The profile columns are the axes of the
active catalogue, read at call time."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Callable, Mapping, Optional

import numpy as np
import pandas as pd

from ...reference import axes
from ...reference.names import NAME_COLUMN
from .validating import ITEM_COLS, REJECT_COLUMNS, SAMPLE_KEY, _Chunk, _shown

if TYPE_CHECKING:
    from ...reference.axes import Catalogue
    from ...reference.prompts import PromptTemplate

# what a generation's ``response`` holds: the answer as written (parsed), or the JSON document of an
# answer imported already split into items (not parsed; see samples_from_items)
TEXT_FORMAT, ITEMS_FORMAT = "text", "items"

# the generation table's columns before the profile's axis columns, and after them
_BEFORE_AXES = [
    "partition_key",
    "audit_id",
    "response_id",
    "model",
    "template",
    "template_hash",
    "profile_id",
]
_AFTER_AXES = [
    "run",
    "seed",
    "prompt",
    "response",
    "model_source",
    "model_revision",
    "backend",
    "decoding_json",
    "text_note",
    "response_format",
]


def generation_columns() -> list[str]:
    """The generation table's columns: one per axis of the active catalogue after ``profile_id``."""
    return [*_BEFORE_AXES, *axes.names(), *_AFTER_AXES]


def __getattr__(name: str):
    # GENERATION_COLUMNS: generation_columns() of the active catalogue, read when asked for (never at import)
    if name == "GENERATION_COLUMNS":
        return generation_columns()
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def to_generations(
    responses: pd.DataFrame,
    templates: Mapping[str, "PromptTemplate"],
    source: str,
    source_sha256: str,
    seen: Optional[set] = None,
) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Imported responses -> generation rows (prompt re-rendered from the template files).

    Returns (generations, rejects): rows whose template is unknown, or whose template does
    not fit the profile, and repeated (model, template, profile, run) samples are rejected
    with a reason, never dropped silently. ``seen``: the response ids kept from earlier parts of
    the same file (updated), for a file converted a chunk at a time.
    """
    ok, rej = _to_generations(responses, templates, source, source_sha256, seen)
    return ok[generation_columns()], rej


def import_audit_id(source_sha256: str) -> str:
    """The audit id of the answers imported from a file with this sha256: the same file is the same audit."""
    return f"import-{source_sha256[:12]}"


def _prompt(
    template: "PromptTemplate", cat: "Catalogue", values: tuple, name: Optional[str] = None
) -> tuple[Optional[str], list[str]]:
    """``(the prompt, [])`` of ``template`` for a profile (``values``: one per axis of ``cat``, None where
    unstated; ``name``: a named profile's name, core/reference/names.py), or ``(None, what it needs that the
    profile leaves unstated)``: the axes, and any placeholder that is no axis of the catalogue (``{word}``)."""
    used = template.placeholders()
    words, unstated = {}, []
    design = axes.current_design()
    spec = design.names if design is not None else None
    if spec is not None and spec.placeholder in used:
        if name:
            words[spec.placeholder] = name
        used = used - {spec.placeholder} if name else used
    for a, v in zip(cat.axes, values, strict=True):
        if a.word in used:
            if isinstance(v, str):
                words[a.word] = a.words_of(v)
            else:
                unstated.append(a.name)
    unstated += sorted(f"{{{w}}}" for w in used - {a.word for a in cat.axes} - set(words))
    return (None, unstated) if unstated else (template.render(words), [])


def _named_set() -> Optional[str]:
    """The active design's named profile set (core/reference/names.py), or None."""
    design = axes.current_design()
    return design.names.profile_set if design is not None and design.names is not None else None


def _render(ok: pd.DataFrame, templates, prompts: dict, rejects: list) -> pd.DataFrame:
    """``ok`` with its ``prompt``; a row leaving unstated an axis its template names is rejected."""
    cat = axes.current()
    rendered, keep = [], []
    names = ok[NAME_COLUMN] if NAME_COLUMN in ok.columns else pd.Series([None] * len(ok), index=ok.index)
    for r, name, key in zip(
        ok["source_row"], names, zip(ok["template"], *(ok[a.name] for a in cat.axes), strict=True), strict=True
    ):
        name = name if isinstance(name, str) else None
        if (key, name) not in prompts:
            prompts[(key, name)] = _prompt(templates[key[0]], cat, key[1:], name)
        text, unstated = prompts[(key, name)]
        keep.append(not unstated)
        if unstated:
            rejects.append(
                (
                    r,
                    "template",
                    key[0],
                    f"template {key[0]!r} needs {', '.join(unstated)}, which the row leaves unstated",
                )
            )
        else:
            rendered.append(text)
    out = ok[np.asarray(keep, dtype=bool)].copy()
    out["prompt"] = rendered
    return out


def _to_generations(responses, templates, source, source_sha256, seen=None, prompts=None):
    """:func:`to_generations` keeping ``source_row``; ``prompts`` caches rendered prompts (one
    string per distinct template and profile, shared by every run and model)."""
    from ..samples import sample_ids

    rejects = []
    known = responses["template"].isin(list(templates))
    for r, t in zip(responses.loc[~known, "source_row"], responses.loc[~known, "template"], strict=False):
        rejects.append((r, "template", t, f"unknown template (known: {sorted(templates)})"))
    ok = responses[known].copy()
    fits = [templates[t].profile_set == s for t, s in zip(ok["template"], ok["profile_set"], strict=False)]
    fits = np.asarray(fits, dtype=bool)
    for r, t, s in zip(
        ok.loc[~fits, "source_row"], ok.loc[~fits, "template"], ok.loc[~fits, "profile_set"], strict=False
    ):
        reason = f"template {t!r} is for {templates[t].profile_set} profiles, row has a {s} profile"
        if {templates[t].profile_set, s} == {"full", _named_set()}:
            reason += f" (a named template's row gives the student's name in {NAME_COLUMN!r}, a stated one's none)"
        rejects.append((r, "template", t, reason))
    prompts = {} if prompts is None else prompts
    ok = sample_ids(_render(ok[fits], templates, prompts, rejects))
    dup = ok.duplicated("response_id", keep="first")
    if seen:
        dup |= ok["response_id"].isin(seen)
    for r, rid in zip(ok.loc[dup, "source_row"], ok.loc[dup, "response_id"], strict=False):
        rejects.append((r, "model/template/profile/run", rid, "repeats an earlier row's sample"))
    ok = ok[~dup].reset_index(drop=True)
    if seen is not None:
        seen.update(ok["response_id"])
    ok["template_hash"] = [templates[t].sha256 for t in ok["template"]]
    ok["audit_id"] = import_audit_id(source_sha256)
    ok["model_source"] = source
    ok["model_revision"] = source_sha256
    ok["backend"] = "file"
    ok["decoding_json"] = "{}"
    if "text_note" not in ok:
        ok["text_note"] = None
    if "response_format" not in ok:
        ok["response_format"] = TEXT_FORMAT
    ok["run"] = ok["run"].astype(np.int64)
    rej = pd.DataFrame(rejects, columns=REJECT_COLUMNS)
    return ok, rej


def samples_from_items(items: pd.DataFrame) -> pd.DataFrame:
    """Already-split items (:func:`read_responses` of a file with ``university``/``program``/
    ``country`` columns: one row per item) -> one row per sample, as answers are: ``response`` is
    the JSON document ``{"items": [{"university": ..., "program": ..., "country": ...}, ...]}`` of
    the sample's items in ``item_index`` order (every item kept: how many are used is the
    recommendations' rule, METHOD.md §9) and ``response_format`` is ``items``. The sample's first
    row gives ``source_row``; the items' text notes are joined."""
    cols = list(ITEM_COLS)
    if items.empty:
        return items.drop(columns=cols + ["item_index"], errors="ignore").assign(
            response=pd.Series(dtype=object), response_format=ITEMS_FORMAT
        )
    f = items.sort_values(SAMPLE_KEY + ["item_index"], kind="stable").reset_index(drop=True)
    records = f[cols].astype(object).where(f[cols].notna(), None)
    snippets = pd.Series(
        [json.dumps(dict(zip(cols, r, strict=False)), ensure_ascii=False) for r in records.itertuples(index=False)],
        index=f.index,
    )
    groups = f.groupby(SAMPLE_KEY, sort=False, dropna=False)
    first = groups.head(1).set_index(SAMPLE_KEY)
    docs = snippets.groupby([f[k] for k in SAMPLE_KEY], sort=False, dropna=False).agg(",".join)
    notes = (
        f["text_note"]
        .groupby([f[k] for k in SAMPLE_KEY], sort=False, dropna=False)
        .agg(lambda s: "; ".join(dict.fromkeys(v for v in s if v)) or None)
        if "text_note" in f
        else None
    )
    out = first.drop(columns=cols + ["item_index"], errors="ignore")
    out["response"] = ('{"items": [' + docs + "]}").reindex(out.index).to_numpy()
    if notes is not None:
        out["text_note"] = notes.reindex(out.index).to_numpy()
    out["response_format"] = ITEMS_FORMAT
    return out.reset_index()


def items_from_generations(generations: pd.DataFrame) -> pd.DataFrame:
    """Generations whose ``response_format`` is ``items`` -> one row per item (``university``,
    ``program``, ``country``, ``item_index`` 0, 1, ...) with the generation's other columns; a
    sample without items keeps one row with no university. A document that is not the items
    document of :func:`samples_from_items` raises ValueError naming the response."""
    rows, keep = [], []
    for pos, (rid, text) in enumerate(zip(generations["response_id"], generations["response"], strict=False)):
        try:
            doc = json.loads(text)
            items = doc["items"]
            if not isinstance(items, list) or not all(isinstance(i, dict) for i in items):
                raise TypeError("'items' is not a list of objects")
        except (TypeError, ValueError, KeyError) as exc:
            raise ValueError(
                f"generation {rid}: response_format is 'items' but the response is not an items "
                f"document ({exc}): {_shown(text)}"
            ) from None
        for k, item in enumerate(items or [{}]):
            rows.append([item.get(c) for c in ITEM_COLS] + [k])
            keep.append(pos)
    meta = generations.drop(columns=["response"]).iloc[keep].reset_index(drop=True)
    return pd.concat([meta, pd.DataFrame(rows, columns=list(ITEM_COLS) + ["item_index"])], axis=1)


@dataclass
class ImportedResponses:
    """A responses file made into generation rows (:func:`import_responses`)."""

    generations: pd.DataFrame
    rejects: pd.DataFrame  # row, column, value, reason: every row not used, and why
    notes: pd.DataFrame  # rows whose text was altered to be stored, and how
    rows_read: int
    split_items: bool
    sha256: str
    models: set = field(default_factory=set)  # every model the file names
    pairs: set = field(default_factory=set)  # every (model, template) the file names

    @property
    def rows_rejected(self) -> int:
        return int(self.rejects["row"].nunique()) if len(self.rejects) else 0


_PIPE_REASON = "'|' separates model and template in partition keys: rename the model"


class _Converter:
    """The validated chunks of a responses file -> generation rows, a chunk at a time: what
    :func:`import_responses` and :func:`stage_responses` share. ``keep(pair_rows)`` receives the
    generation rows (answers as written) or the item rows (already split, made samples at the end)
    of the wanted (model, template) pairs; the rejects and notes are kept here (they are small)."""

    def __init__(self, templates, source: str, sha256: str, pairs: Optional[set], keep: Callable[[pd.DataFrame], None]):
        self.templates, self.source, self.sha256, self.wanted, self.keep = templates, source, sha256, pairs, keep
        self.reset()

    def reset(self) -> None:
        self.read_rejects: list[tuple] = []
        self.piped: list[tuple] = []
        self.converted: list[pd.DataFrame] = []  # to_generations' rejects, with the row's model and template
        self.notes: list[tuple] = []
        self.rows_read = 0
        self.split = False
        self.named: set = set()
        self.seen: set = set()
        self.prompts: dict = {}
        self.empty: Optional[pd.DataFrame] = None

    def add(self, chunk: _Chunk) -> None:
        self.read_rejects.extend(chunk.rejects)
        self.notes.extend(chunk.notes)
        self.rows_read += chunk.rows_read
        self.split = chunk.split
        frame = chunk.used
        if self.empty is None:
            self.empty = frame.iloc[:0]
        if not len(frame):
            return
        piped = frame["model"].astype(str).str.contains("|", regex=False).to_numpy()
        if piped.any():
            self.piped += [
                (r, "model", m, _PIPE_REASON)
                for r, m in zip(frame.loc[piped, "source_row"], frame.loc[piped, "model"], strict=False)
            ]
            frame = frame[~piped]
        self.named.update(zip(frame["model"].astype(str), frame["template"].astype(str), strict=False))
        if self.wanted is not None:
            wanted = np.fromiter(
                ((m, t) in self.wanted for m, t in zip(frame["model"], frame["template"], strict=False)),
                dtype=bool,
                count=len(frame),
            )
            frame = frame[wanted]
        if not len(frame):
            return
        if self.split:
            self.keep(frame)  # a sample's items may lie in several chunks: made samples at the end
        else:
            self.keep(self.convert(frame))

    def convert(self, frame: pd.DataFrame) -> pd.DataFrame:
        """Answers (or samples) -> generation rows (with ``source_row``); their rejects are kept."""
        table, rejects = _to_generations(frame, self.templates, self.source, self.sha256, self.seen, self.prompts)
        if len(rejects):
            pair = frame.set_index("source_row")[["model", "template"]]
            self.converted.append(rejects.join(pair, on="row"))
        return table

    def rejects(self, pairs: Optional[set] = None, with_pair: bool = False) -> pd.DataFrame:
        """Every reject, in file order, as :func:`import_responses` gives them for ``pairs``; with
        ``with_pair``, the ``model`` and ``template`` of the rows that to_generations rejected (a
        pairs filter leaves those out when their pair is not wanted; None for the others)."""
        cols = REJECT_COLUMNS + ["model", "template"]
        parts = [
            pd.DataFrame([t + (None, None) for t in self.read_rejects], columns=cols),
            pd.DataFrame([t + (None, None) for t in self.piped], columns=cols),
        ] + self.converted
        parts = [f for f in parts if len(f)]
        if not parts:
            return pd.DataFrame(columns=cols if with_pair else REJECT_COLUMNS)
        rej = pd.concat(parts, ignore_index=True).sort_values("row", kind="stable").reset_index(drop=True)
        if pairs is not None:
            own = rej["model"].isna() | pd.Series(
                [(m, t) in pairs for m, t in zip(rej["model"], rej["template"], strict=False)], index=rej.index
            )
            rej = rej[own.to_numpy()].reset_index(drop=True)
        return rej if with_pair else rej[REJECT_COLUMNS]

    def empty_generations(self) -> pd.DataFrame:
        base = self.empty if self.empty is not None else pd.DataFrame(columns=["source_row", "model", "template"])
        if self.split:
            base = samples_from_items(base)
        return _to_generations(base, self.templates, self.source, self.sha256)[0]
