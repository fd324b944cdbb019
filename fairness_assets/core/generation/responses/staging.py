"""A responses file staged: converted once into generation rows stored by (model, template) as
Parquet files in a folder, with its rejects, notes and manifest (:func:`stage_responses`), and read
back a partition at a time (:class:`StagedResponses`). The profile columns are the axes of the active
catalogue (or of the ``design`` a caller gives), which are part of what a staged folder was made with."""

from __future__ import annotations

import contextlib
import json
import math
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Iterator, Mapping, Optional

import numpy as np
import pandas as pd

from ...reference import axes
from .converting import ImportedResponses, _Converter, generation_columns, samples_from_items
from .reading import Resolver, _read_all
from .validating import NOTE_COLUMNS, REJECT_COLUMNS, SAMPLE_KEY, ResponsesFileError, crossed_axes

if TYPE_CHECKING:
    from ...reference.design import Design
    from ...reference.prompts import PromptTemplate

STAGING_VERSION = 1
_MANIFEST = "manifest.json"


def _arrow_schema(columns: list[str], ints: tuple = ("run", "seed", "source_row", "item_index")):
    import pyarrow as pa

    return pa.schema([(c, pa.int64() if c in ints else pa.string()) for c in columns])


def _write_part(frame: pd.DataFrame, folder: Path, columns: list[str], n: int) -> None:
    import pyarrow as pa
    import pyarrow.parquet as pq

    folder.mkdir(parents=True, exist_ok=True)
    table = pa.Table.from_pandas(frame[columns], schema=_arrow_schema(columns), preserve_index=False)
    pq.write_table(table, folder / f"part-{n:06d}.parquet")


def _read_parts(folder: Path) -> pd.DataFrame:
    import pyarrow as pa
    import pyarrow.parquet as pq

    files = sorted(folder.glob("part-*.parquet"))
    return pa.concat_tables([pq.read_table(f) for f in files]).to_pandas()


def _item_stage_columns() -> list[str]:
    """The columns of the staged item rows: one per axis of the active catalogue after ``run``."""
    return [
        "source_row",
        "model",
        "template",
        "run",
        *axes.names(),
        "profile_set",
        "profile_id",
        "university",
        "program",
        "country",
        "item_index",
        "text_note",
    ]


@dataclass
class StagedResponses:
    """A responses file converted once into generation rows, stored by (model, template) as Parquet
    files in a folder (:func:`stage_responses`): the file's rejects, notes and partitions are known
    without holding its rows, and :meth:`generations` reads only the partitions asked for."""

    folder: Path
    source: str
    sha256: str
    rows_read: int
    split_items: bool
    partitions: dict  # (model, template) -> (subfolder, rows)
    named: set  # every (model, template) the file names (usable or not)
    columns: tuple = ()  # the generation rows' columns (the axes staged with); () -> those of the active catalogue

    @property
    def generation_columns(self) -> list[str]:
        return list(self.columns) or generation_columns()

    @property
    def models(self) -> set:
        return {m for m, _ in self.named}

    @property
    def pairs(self) -> set:
        """The (model, template) pairs with usable rows."""
        return set(self.partitions)

    @property
    def n_generations(self) -> int:
        """How many generation rows the file gave (every partition)."""
        return sum(n for _, n in self.partitions.values())

    def rejects(self, pairs: Optional[set] = None) -> pd.DataFrame:
        """The rejects of the file as :func:`import_responses` gives them for ``pairs``."""
        r = pd.read_parquet(self.folder / "rejects.parquet")
        if not len(r):
            return pd.DataFrame(columns=REJECT_COLUMNS)
        if pairs is not None:  # to_generations' rejects (they name their pair) only for the pairs asked for
            own = r["model"].isna() | pd.Series(
                [(m, t) in pairs for m, t in zip(r["model"], r["template"], strict=False)], index=r.index
            )
            r = r[own.to_numpy()].reset_index(drop=True)
        return r[REJECT_COLUMNS]

    def notes(self) -> pd.DataFrame:
        n = pd.read_parquet(self.folder / "notes.parquet")
        n["row"] = n["row"].astype(np.int64)
        return n

    def generations(self, pairs: Optional[set] = None) -> pd.DataFrame:
        """The generation rows of ``pairs`` (every pair when None), in the order
        :func:`import_responses` returns them."""
        want = [p for p in self.partitions if pairs is None or p in pairs]
        frames = [_read_parts(self.folder / "partitions" / self.partitions[p][0]) for p in want]
        frames = [f for f in frames if len(f)]
        if not frames:
            return pd.read_parquet(self.folder / "empty.parquet")[self.generation_columns]
        table = frames[0] if len(frames) == 1 else pd.concat(frames, ignore_index=True)
        order = SAMPLE_KEY if self.split_items else ["source_row"]
        if len(frames) > 1:
            table = table.sort_values(order, kind="stable").reset_index(drop=True)
        return table[self.generation_columns]

    def iter_partitions(self, pairs: Optional[set] = None) -> Iterator[tuple[tuple[str, str], pd.DataFrame]]:
        """((model, template), generation rows) per partition, one partition in memory at a time."""
        for p in self.partitions:
            if pairs is None or p in pairs:
                yield p, self.generations({p})

    def imported(self, pairs: Optional[set] = None) -> ImportedResponses:
        """What :func:`import_responses` returns for ``pairs``, read from the staged files."""
        return ImportedResponses(
            self.generations(pairs),
            self.rejects(pairs),
            self.notes(),
            self.rows_read,
            self.split_items,
            self.sha256,
            self.models,
            set(self.named),
        )

    def summary(self) -> ImportedResponses:
        """What :func:`import_responses` returns, without the generation rows (an empty frame):
        rejects, notes, rows read, the models and pairs of the file."""
        return ImportedResponses(
            pd.read_parquet(self.folder / "empty.parquet")[self.generation_columns],
            self.rejects(),
            self.notes(),
            self.rows_read,
            self.split_items,
            self.sha256,
            self.models,
            set(self.named),
        )


def staging_folder(root: str | Path, path: str | Path) -> Path:
    """Where a responses file is staged under ``root`` (e.g. the results folder): one folder per
    file path, so that every run importing the same file reuses it (:func:`stage_responses`
    replaces its content when the file changes)."""
    import hashlib

    digest = hashlib.sha256(str(Path(path).expanduser().resolve()).encode("utf-8")).hexdigest()[:16]
    return Path(root) / "staged-responses" / f"{Path(path).name[:40]}-{digest}"


def _staging_key(
    path: Path, templates: Mapping[str, "PromptTemplate"], sha: str, crossed: Optional[tuple] = None
) -> dict:
    """What a staged folder was made from: the file, the templates, and the axes (the active catalogue,
    and the crossed ones) that read its profile columns."""
    st = path.stat()
    return {
        "version": STAGING_VERSION,
        "source": str(path.resolve()),
        "size": st.st_size,
        "mtime_ns": st.st_mtime_ns,
        "sha256": sha,
        "templates": {k: templates[k].sha256 for k in sorted(templates)},
        "axes": [a.as_dict() for a in axes.axes_of()],
        "crossed": None if crossed is None else list(crossed),
    }


def _open_staged(folder: Path, key: dict) -> Optional[StagedResponses]:
    try:
        manifest = json.loads((folder / _MANIFEST).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    if manifest.get("key") != key:
        return None
    return StagedResponses(
        folder,
        manifest["key"]["source"],
        manifest["key"]["sha256"],
        manifest["rows_read"],
        manifest["split_items"],
        {(m, t): (sub, n) for m, t, sub, n in manifest["partitions"]},
        {tuple(p) for p in manifest["named"]},
        tuple(manifest.get("columns") or ()),
    )


def stage_responses(
    path: str | Path,
    templates: Mapping[str, "PromptTemplate"],
    resolve_home: Optional[Resolver] = None,
    folder: str | Path = "",
    *,
    design: Optional["Design"] = None,
) -> StagedResponses:
    """Read and validate a responses file once, a chunk at a time, and store its generation rows by
    (model, template) as Parquet files in ``folder`` (created; what this function wrote there before
    is replaced): then any partition is read back alone, without reading the file again, and
    memory never holds the whole file. A folder already holding this file (same path, size,
    modification time, SHA-256, templates and axes) is reused as it is. Errors, rejects and notes are
    those of :func:`import_responses`. ``design``: its catalogue is made active while the file is
    staged, and its crossed axes make a ``full`` profile (every axis of the active catalogue without one)."""
    path, folder = Path(path), Path(folder)
    if not str(folder):
        raise ValueError("stage_responses: give the folder to stage the responses file in")
    if not path.exists():
        raise ResponsesFileError(f"{path}: responses file not found")
    folder.mkdir(parents=True, exist_ok=True)
    from ...reference.corpus import file_sha256

    with axes.using(design.catalogue if design is not None else None), _folder_lock(folder):
        key = _staging_key(path, templates, file_sha256(path), crossed_axes(design))
        if _open_staged(folder, key) is None:
            _stage(path, templates, resolve_home, folder, key)
        staged = _open_staged(folder, key)
    assert staged is not None
    return staged


def _stage(
    path: Path, templates: Mapping[str, "PromptTemplate"], resolve_home: Optional[Resolver], folder: Path, key: dict
) -> None:
    """Stage the file into ``folder`` (its lock held), replacing what was there; the manifest last."""
    import shutil

    for name in (_MANIFEST, "rejects.parquet", "notes.parquet", "empty.parquet"):
        (folder / name).unlink(missing_ok=True)
    for sub in ("partitions", "items"):
        shutil.rmtree(folder / sub, ignore_errors=True)
    subfolders: dict = {}  # (model, template) -> its folder's name
    rows: dict = {}  # (model, template) -> rows staged
    parts: dict = {}  # folder -> part files written
    columns = generation_columns()
    gen_columns, item_columns = columns + ["source_row"], _item_stage_columns()

    def write(frame: pd.DataFrame, where: Path, columns: list[str]) -> None:
        parts[where] = parts.get(where, 0) + 1
        _write_part(frame, where, columns, parts[where] - 1)

    def keep(frame: pd.DataFrame) -> None:
        base, columns = ("items", item_columns) if conv.split else ("partitions", gen_columns)
        for pair, part in frame.groupby(["model", "template"], sort=False):
            name = subfolders.setdefault(pair, f"p{len(subfolders):05d}")
            write(part, folder / base / name, columns)
            rows[pair] = rows.get(pair, 0) + len(part)

    def reset() -> None:
        conv.reset()
        subfolders.clear(), rows.clear(), parts.clear()
        for s in ("partitions", "items"):
            shutil.rmtree(folder / s, ignore_errors=True)

    conv = _Converter(templates, str(path), key["sha256"], None, keep)
    _read_all(path, resolve_home, conv.add, reset, None if key["crossed"] is None else tuple(key["crossed"]))
    if conv.split:  # one pair at a time: its items made samples, then generation rows
        for pair, name in subfolders.items():
            table = conv.convert(samples_from_items(_read_parts(folder / "items" / name)))
            rows[pair] = len(table)
            if len(table):
                write(table, folder / "partitions" / name, gen_columns)
        shutil.rmtree(folder / "items", ignore_errors=True)
    _write_frame(
        conv.rejects(with_pair=True),
        folder / "rejects.parquet",
        REJECT_COLUMNS + ["model", "template"],
        ints=("row",),
    )
    _write_frame(pd.DataFrame(conv.notes, columns=NOTE_COLUMNS), folder / "notes.parquet", NOTE_COLUMNS, ints=("row",))
    _write_frame(conv.empty_generations(), folder / "empty.parquet", columns)
    manifest = {
        "key": key,
        "rows_read": conv.rows_read,
        "split_items": conv.split,
        "partitions": [[m, t, subfolders[(m, t)], n] for (m, t), n in rows.items() if n],
        "named": sorted(conv.named),
        "columns": columns,
    }
    tmp = folder / (_MANIFEST + ".tmp")
    tmp.write_text(json.dumps(manifest), encoding="utf-8")
    tmp.replace(folder / _MANIFEST)  # written last: a folder without it is never read


def _write_frame(frame: pd.DataFrame, path: Path, columns: list[str], ints: tuple = ("run", "seed")) -> None:
    import pyarrow as pa
    import pyarrow.parquet as pq

    value = frame[columns].copy()
    for c in columns:
        if c not in ints:
            value[c] = value[c].map(lambda v: None if v is None or (isinstance(v, float) and math.isnan(v)) else str(v))
    pq.write_table(pa.Table.from_pandas(value, schema=_arrow_schema(columns, ints), preserve_index=False), path)


@contextlib.contextmanager
def _folder_lock(folder: Path):
    """One process stages into a folder at a time (others wait, then reuse what it wrote)."""
    try:
        import fcntl
    except ImportError:  # pragma: no cover - not POSIX: no lock
        yield
        return
    with open(folder / ".lock", "w") as fh:
        fcntl.flock(fh, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(fh, fcntl.LOCK_UN)
