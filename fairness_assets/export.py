"""The results of an audit as files: what ``fairness-audit score`` writes to ``--out``.

Everything is read back from the results database the assets wrote (one row source for the UI,
the report and the files): the recommendations, the DRS items with their components, GRS per
country, the analysis tables, base vs regional, the statistics (with ``behaviour_needs``: every
counterfactual pair split into behaviour and needs, column ``component`` valued ``total`` /
``behaviour`` / ``needs``, and ``envy``), the scoring parameters, and the
latest report (HTML, Markdown and its figures). Tables stored one partition per key get the
``model`` and ``template`` columns in front.
"""

from __future__ import annotations

import json
import math
import shutil
import tempfile
from pathlib import Path
from typing import Callable, Iterator, Mapping, Optional, Sequence

import pandas as pd
import sqlalchemy as sa

from fairness_assets.core.common import result_tables
from fairness_assets.core.common import tables as tables_core
from fairness_assets.core.common.partition import PartitionKey
from fairness_assets.core.reporting import scorecard as scorecard_core
from resources import database as D

# the exported files, from the catalogue of result tables (core/common/result_tables.py), in its order: the
# tables stored per partition, then those stored across partitions (partition key "")
EXPORTED = [t.file for t in result_tables.exported()]
COMPARISON = [t.file for t in result_tables.exported(cross_partition=True)]
# the tables stored one row per cell or per table row (core.common.tables), by the asset that stores them
LONG_ASSETS = ("analysis_tables", "audit_statistics", "audit_geography")
DIGEST = (
    "answers_left_out",
    "volume_diversity",
    "concentration",
    "drs_mean",
    "grs_positive",
    "scorecard_rows",
    "scorecard_findings",
)
# the model comparison's tables the scorecard of summary.md reads (as the report does): name -> file
SCORECARD_COMPARISON = {t.name: t.file for t in result_tables.of_asset("model_comparison")}
_INTERNAL = ["id", "partition_key", "provenance_id", "params_hash"]


def _front(df: pd.DataFrame) -> pd.DataFrame:
    front = [c for c in ("model", "template") if c in df.columns]
    return df[front + [c for c in df.columns if c not in front]]


def _split_key(df: pd.DataFrame) -> pd.DataFrame:
    """``model`` and ``template`` from ``partition_key`` where the table does not carry them."""
    keys = [PartitionKey.parse(k) for k in df["partition_key"]]
    out = df.copy()
    for col in ("model", "template"):
        if col not in out.columns:
            out[col] = pd.Series([getattr(k, col) for k in keys], index=df.index, dtype=object)
    return out


class _CsvTable:
    """One exported CSV written a partition at a time: each partition's frame goes to its own
    temporary file, and :meth:`close` joins them under the union of their columns (in the order
    first seen), reading one partition's file at a time. Memory: one partition's rows."""

    def __init__(self, path: Path, tmp: Path, empty_columns: Sequence[str] = ()):
        self.path, self.tmp, self.parts, self.columns = path, tmp, [], []
        self.default_columns, self.empty_columns = list(empty_columns), None
        self.rows, self._same = 0, True

    def add(self, df: pd.DataFrame) -> None:
        if df.empty:  # no rows; the first empty frame's columns head the file if no partition has rows
            if self.empty_columns is None:
                self.empty_columns = list(df.columns)
            return
        cols = list(df.columns)
        if self.columns and cols != self.columns:
            self._same = False
        self.columns += [c for c in cols if c not in self.columns]
        part = self.tmp / f"{self.path.stem}.{len(self.parts)}.csv"
        df.to_csv(part, index=False)
        self.parts.append(part)
        self.rows += len(df)

    def close(self) -> int:
        """Write the CSV; returns its number of rows."""
        if not self.parts:
            pd.DataFrame(columns=self.empty_columns or self.default_columns).to_csv(self.path, index=False)
            return 0
        with open(self.path, "w", encoding="utf-8", newline="") as out:
            for i, part in enumerate(self.parts):
                if self._same:  # the same columns everywhere: the files joined as they are
                    with open(part, encoding="utf-8", newline="") as f:
                        header = f.readline()
                        if i == 0:
                            out.write(header)
                        shutil.copyfileobj(f, out)
                else:
                    df = pd.read_csv(part, dtype=str, keep_default_na=False)
                    df.reindex(columns=self.columns, fill_value="").to_csv(out, index=False, header=i == 0)
                part.unlink()
        return self.rows


def _wide_partition(
    wide: Mapping[str, pd.DataFrame], key: PartitionKey, tables: Sequence[result_tables.ResultTable]
) -> dict[str, pd.DataFrame]:
    """One partition's stored result tables (``ResultsDatabase.partition_tables``) -> those among
    ``tables``, by file name, with ``model`` and ``template`` in front and the flags as booleans."""
    out = {}
    for t in tables:
        if t.name in wide:
            df = _front(wide[t.name].assign(model=key.model, template=key.template))
            for flag in ("significant", "by_construction"):
                if flag in df.columns:
                    df[flag] = df[flag].astype(str) == "True"
            out[t.file] = df
    return out


def _drop_internal(name: str, df: pd.DataFrame) -> pd.DataFrame:
    internal = ("id",) if name == "recommendations" else _INTERNAL
    return df.drop(columns=[c for c in internal if c in df.columns])


def stored_partition_keys(database: D.ResultsDatabase) -> list[str]:
    """Every partition key (``model|template``) with rows in any exported table, sorted."""
    keys: set[str] = set()
    for model in dict.fromkeys(D.TABLES[t.asset] for t in result_tables.exported()):
        keys |= {str(k) for k in database.distinct(model, ["partition_key"])["partition_key"] if k}
    return sorted(keys)


def _read(database: D.ResultsDatabase, model, key: str) -> pd.DataFrame:
    """One partition's rows of ``model``, integer columns as integers even where some are missing
    (``pd.read_sql`` makes them floats then, and one partition's "8.0" would follow another's "8"
    in the joined file)."""
    df = database.read_rows(model, [key])
    for col in model.__table__.columns:
        if isinstance(col.type, sa.Integer) and col.name in df and df[col.name].dtype.kind == "f":
            df[col.name] = df[col.name].astype("Int64")
    return df


def partition_results(database: D.ResultsDatabase, key: str) -> dict[str, pd.DataFrame]:
    """Every exported table of one partition, by name (the tables of :func:`read_results` that
    are stored per partition; base vs regional, stored across partitions, is not among them)."""
    pk = PartitionKey.parse(key)
    recs = _front(_read(database, D.Recommendation, key))
    items = _read(database, D.DRSItem, key)
    out = {"recommendations": recs}
    if len(items):
        score_cols = [
            c for c in items.columns if c not in recs.columns or c in ("partition_key", "response_id", "item_index")
        ]
        out["drs_items"] = _front(
            recs.merge(
                items[[c for c in score_cols if c not in ("id", "provenance_id")]],
                on=["partition_key", "response_id", "item_index"],
                how="inner",
                validate="one_to_one",
            )
        )
    else:
        out["drs_items"] = recs.iloc[:0]
    grs = _read(database, D.GRSCountry, key)
    out["grs_by_country"] = _front(_split_key(grs)) if len(grs) else grs
    for asset in LONG_ASSETS:
        group = D.ResultGroup(D.TABLES[asset].name, (asset,))
        out.update(_wide_partition(database.partition_tables(group, key), pk, result_tables.of_asset(asset)))
    return {name: _drop_internal(name, df) for name, df in out.items()}


def _comparison(database: D.ResultsDatabase) -> dict[str, pd.DataFrame]:
    """Base vs regional, the model comparison and the sensitivity (stored across partitions, key
    ``""``), by file name; a table not stored is an empty frame (``model`` or ``template`` column)."""
    stored = {
        asset: tables_core.from_long(database.read_rows(D.TABLES[asset], [""]))
        for asset in result_tables.CROSS_PARTITION_ASSETS
    }
    out = {}
    for t in result_tables.exported(cross_partition=True):
        empty = pd.DataFrame(columns=["model"] if t.asset == "base_vs_regional" else ["template"])
        out[t.file] = _drop_internal("", stored[t.asset].get(t.name, empty))
    return out


def read_results(database: D.ResultsDatabase, keys: Optional[Sequence[str]] = None) -> dict[str, pd.DataFrame]:
    """Every exported table, by name, of ``keys`` (default: every stored partition), concatenated
    in memory. For tests and small audits; :func:`export_results` writes the same tables to files
    a partition at a time."""
    frames: dict[str, list[pd.DataFrame]] = {n: [] for n in EXPORTED}
    for key in stored_partition_keys(database) if keys is None else keys:
        for name, df in partition_results(database, key).items():
            frames[name].append(df)
    out = {}
    for name, fs in frames.items():
        kept = [f for f in fs if not f.empty] or fs[:1]
        out[name] = pd.concat(kept, ignore_index=True) if kept else pd.DataFrame(columns=["model", "template"])
    out.update(_comparison(database))
    return out


def _digest(name: str, key: PartitionKey, df: pd.DataFrame, digest: dict[str, list[pd.DataFrame]]) -> None:
    """What summary.md and notes.csv need of a partition's table, kept small."""
    if name == "recommendations" and "n_items_left_out" in df:
        answers = df.drop_duplicates("response_id")
        digest["answers_left_out"].append(
            answers.loc[
                answers["n_items_left_out"] > 0,
                ["response_id", "model", "template", "n_items_found", "n_items_left_out"],
            ]
        )
    elif name in ("volume_diversity", "concentration"):
        digest[name].append(df)
    elif name == "drs_responses" and "drs" in df:
        digest["drs_mean"].append(
            pd.DataFrame(
                [
                    {
                        "model": key.model,
                        "template": key.template,
                        "drs": float(df["drs"].mean()) if len(df) else float("nan"),
                    }
                ]
            )
        )
    elif name == "grs_by_country" and "grs" in df:
        digest["grs_positive"].append(
            pd.DataFrame([{"model": key.model, "template": key.template, "countries": int((df["grs"] > 0).sum())}])
        )


class ExportedTables(Mapping[str, pd.DataFrame]):
    """The tables an export wrote to ``folder``, by name (``recommendations``, ``drs_items``, ...),
    each read from its CSV when first asked for: handing the tables back to a caller costs no
    memory until the caller reads one."""

    def __init__(self, folder: Path, names: Sequence[str]):
        self.folder, self.names, self._read = Path(folder), list(names), {}

    def __getitem__(self, name: str) -> pd.DataFrame:
        if name not in self.names:
            raise KeyError(f"{name!r}: no such exported table in {self.folder} (tables: {', '.join(self.names)})")
        if name not in self._read:
            self._read[name] = pd.read_csv(self.folder / f"{name}.csv", low_memory=False)
        return self._read[name]

    def __iter__(self) -> Iterator[str]:
        return iter(self.names)

    def __len__(self) -> int:
        return len(self.names)


def scoring_parameters(database: D.ResultsDatabase) -> dict:
    """The parameters the scores were computed with (their provenance record)."""
    prov = database.read_rows(D.Provenance) if hasattr(database, "read_rows") else pd.DataFrame()
    prov = prov[prov["asset"] == "scores"].sort_values("created_at") if len(prov) else prov
    return json.loads(prov["config_json"].iloc[-1]) if len(prov) else {}


def _latest_report(database: D.ResultsDatabase) -> pd.DataFrame:
    """The newest recorded report, as a one-row frame (empty when none). In a scoped view
    (``ResultsDatabase.scope``: a run's own partitions and audits) only a report of exactly those
    partitions and audits is this run's: another run's report is never taken for it."""
    reports = database.read_rows(D.ReportFile)
    owned = database.scope_map()
    if database.scope and len(reports):
        mine = reports.apply(
            lambda r: (
                sorted(json.loads(r["partitions"])) == sorted(owned)
                and sorted(json.loads(r["audit_ids"])) == sorted(set(owned.values()))
            ),
            axis=1,
        )
        reports = reports[mine.astype(bool)]
    return reports.sort_values("created_at").tail(1)


def export_results(
    database_url: str, outdir: Path, log: Callable[[str], None] = print, scope: Optional[Mapping[str, str]] = None
) -> dict[str, pd.DataFrame]:
    """Write every table (CSV), ``params.json`` and the latest report (report.html, report.md,
    figures/) of the results database at ``database_url`` to ``outdir``.

    ``scope`` (``{partition key: audit id}``): export only these partitions' rows of these audits, the
    cross-partition tables a run stored under that scope, and its report (``fairness-audit score``:
    what it scored itself, never another run's rows in a shared database).

    The tables are read and written one partition at a time (memory: one partition's rows, not
    the audit's; issue 19.5). Returns the digest that summary.md and notes.csv are written from:
    ``answers_left_out`` (answers with items left out), ``volume_diversity``, ``concentration``,
    ``drs_mean`` (mean DRS per partition) and ``grs_positive`` (countries with GRS > 0), each
    with ``model`` and ``template``."""
    database = (
        D.ResultsDatabase.scoped_to(database_url, dict(scope))
        if scope is not None
        else D.ResultsDatabase(url=database_url)
    )
    digest: dict[str, list[pd.DataFrame]] = {n: [] for n in DIGEST}
    try:
        keys = stored_partition_keys(database)
        with tempfile.TemporaryDirectory(prefix="fairness-export-", dir=outdir) as tmp:
            files = {n: _CsvTable(outdir / f"{n}.csv", Path(tmp), ["model", "template"]) for n in EXPORTED}
            for i, key in enumerate(keys):
                pk = PartitionKey.parse(key)
                tables = partition_results(database, key)
                for name, df in tables.items():
                    files[name].add(df)
                    _digest(name, pk, df, digest)
                _scorecard_digest(pk, tables, digest)
                del tables
                if len(keys) > 1:
                    log(f"export: partition {i + 1}/{len(keys)} ({key}) read")
            rows = {name: f.close() for name, f in files.items()}
        compared = _comparison(database)
        for name, df in compared.items():
            df.to_csv(outdir / f"{name}.csv", index=False)
            rows[name] = len(df)
        (outdir / "params.json").write_text(json.dumps(scoring_parameters(database), indent=2, sort_keys=True))
        reports = _latest_report(database)
    finally:
        database.dispose()
    log(f"export: {len(rows)} table(s) of {len(keys)} partition(s), {sum(rows.values()):,} row(s) in all")
    if len(reports):
        folder = Path(reports["html_path"].iloc[-1]).parent
        for path in folder.rglob("*"):
            if path.is_file():
                target = outdir / path.relative_to(folder)
                target.parent.mkdir(parents=True, exist_ok=True)
                shutil.copyfile(path, target)
        log(f"report written to {outdir / 'report.html'} ({int(reports['figures'].iloc[-1])} figures)")
    else:
        log("no report of the scored partitions: no report written")
    out = {
        n: pd.concat(fs, ignore_index=True) if fs else pd.DataFrame(columns=["model", "template"])
        for n, fs in digest.items()
    }
    out.update({name: compared[name] for name in SCORECARD_COMPARISON.values()})
    return out


def _scorecard_digest(key: PartitionKey, tables: Mapping[str, pd.DataFrame], digest: dict[str, list]) -> None:
    """The scorecard's row of a partition and its strongest behaviour findings (counterfactual pairs
    and geographic contrasts), from its full tables: what summary.md's scorecard is built from."""
    if not len(tables.get("drs_responses", pd.DataFrame())):
        return  # not scored: the report leaves it out too
    digest["scorecard_rows"].append(
        scorecard_core.partition_row(key.model, key.template, tables, tables, tables.get("grs_by_country"))
    )
    digest["scorecard_findings"].append(
        scorecard_core.behaviour_findings(
            tables.get("behaviour_needs"), tables.get("geography_geo_contrasts"), model=key.model, template=key.template
        )
    )


def scorecard(written: Mapping[str, pd.DataFrame]) -> Optional[scorecard_core.Scorecard]:
    """The scorecard of an export (:func:`export_results`'s digest): the same as at the top of the
    report (core.reporting.scorecard, from the same stored tables); None when nothing was scored."""
    rows = written.get("scorecard_rows")
    if rows is None or not len(rows):
        return None
    comparison = {k: written[n] for k, n in SCORECARD_COMPARISON.items() if n in written}
    return scorecard_core.build(rows, written.get("scorecard_findings"), comparison)


def notes_table(text_notes: pd.DataFrame, recommendations: pd.DataFrame) -> pd.DataFrame:
    """notes.csv: what was used but altered or cut. Rows of the responses file whose text was
    altered to be stored (``text``), and answers with more items than are scored (``items left
    out``: the first k scored, the rest counted; METHOD.md §9). ``recommendations``: the
    recommendation rows, or only those of answers with items left out (the export's
    ``answers_left_out``)."""
    rows = (
        [
            {
                "kind": "text",
                "row": r.row,
                "response_id": None,
                "model": None,
                "template": None,
                "detail": f"{r.column}: {r.note}",
            }
            for r in text_notes.itertuples(index=False)
        ]
        if len(text_notes)
        else []
    )
    if len(recommendations) and "n_items_left_out" in recommendations:
        answers = recommendations.drop_duplicates("response_id")
        for a in answers[answers["n_items_left_out"] > 0].itertuples(index=False):
            kept = int(a.n_items_found) - int(a.n_items_left_out)
            rows.append(
                {
                    "kind": "items left out",
                    "row": None,
                    "response_id": a.response_id,
                    "model": a.model,
                    "template": a.template,
                    "detail": f"{int(a.n_items_found)} items found, the first {kept} "
                    f"distinct items scored, {int(a.n_items_left_out)} left out",
                }
            )
    return pd.DataFrame(rows, columns=["kind", "row", "response_id", "model", "template", "detail"])


def _num(value, spec: str) -> str:
    """A number for the summary; 'n/a' where it is undefined (e.g. no recommendation at all)."""
    return "n/a" if value is None or (isinstance(value, float) and math.isnan(value)) else format(value, spec)


def _count(value) -> str:
    return "n/a" if value is None or (isinstance(value, float) and math.isnan(value)) else str(int(value))


def _escape_pipes(text: str) -> str:
    return str(text).replace("|", "\\|")


def summary_markdown(
    written: dict[str, pd.DataFrame],
    rows_read: int,
    n_rejected: int,
    corpus_path: str,
    responses: str,
    failures: Sequence[str] = (),
    not_scored: Optional[Mapping[str, str]] = None,
) -> str:
    """summary.md: the scorecard (:func:`scorecard`: the same as at the top of the report), one line
    per partition (responses, recommendations, matched, mean DRS, US+UK share, country coverage,
    countries with GRS > 0), then a "Failed" section with one line per failure (``failures``: what
    failed, which step, the cause) when anything failed, and a "Not scored" section with each partition of
    the file this score did not score itself (``not_scored``: key -> why, e.g. "taken over by run ..."):
    none of its rows are in the tables. ``written``: :func:`export_results`'s digest."""
    lines = [
        "# Audit summary",
        "",
        f"- responses file: `{responses}` ({rows_read} rows, {n_rejected} not usable)",
        f"- corpus: `{corpus_path}`",
        "",
        "| model | template | responses | recommendations | matched | mean DRS | US+UK share | country coverage | "
        "countries with GRS > 0 |",
        "| --- | --- | --- | --- | --- | --- | --- | --- | --- |",
    ]
    if failures:
        lines.insert(
            4,
            f"- **{len(failures)} failure(s)**: what could be scored is below and in the files; "
            "see [Failed](#failed) and `score.log` for the stack traces",
        )
    recs = written.get("answers_left_out", written.get("recommendations", pd.DataFrame()))
    if len(recs) and "n_items_left_out" in recs:
        answers = recs.drop_duplicates("response_id")
        cut = answers[answers["n_items_left_out"] > 0]
        if len(cut):
            lines.insert(
                4,
                f"- {len(cut)} answer(s) name more items than are scored: the first "
                f"{int((cut['n_items_found'] - cut['n_items_left_out']).max())} distinct items of each are "
                f"scored, {int(cut['n_items_left_out'].sum())} item(s) left out and counted "
                "(`n_items_left_out`, notes.csv; METHOD.md §9)",
            )
    empty = pd.DataFrame(columns=["model", "template"])
    vol, conc = written.get("volume_diversity", empty), written.get("concentration", empty)
    drs, grs = written.get("drs_mean", empty), written.get("grs_positive", empty)
    for (model, template), v in vol.groupby(["model", "template"], sort=True):
        v = v.iloc[0]
        c = conc[(conc["model"] == model) & (conc["template"] == template)]
        c = c.iloc[0] if len(c) else {}
        d = (
            drs[(drs["model"] == model) & (drs["template"] == template)]["drs"]
            if "drs" in drs
            else pd.Series(dtype=float)
        )
        g = (
            grs[(grs["model"] == model) & (grs["template"] == template)]["countries"]
            if "countries" in grs
            else pd.Series(dtype=float)
        )
        lines.append(
            f"| {_escape_pipes(model)} | {_escape_pipes(template)} | {_count(v['responses'])} | "
            f"{_count(v['recommendations'])} | "
            f"{_count(v['matched_recommendations'])} | {_num(float(d.iloc[0]) if len(d) else None, '.4f')} | "
            f"{_num(c.get('us_uk_share'), '.1%')} | {_num(c.get('country_coverage'), '.1%')} | {int(g.sum())} |"
        )
    card = scorecard(written)
    block = (
        scorecard_core.markdown(card).rstrip("\n").split("\n")
        if card is not None
        else [
            f"## {scorecard_core.TITLE}",
            "",
            "_Nothing was scored: no scorecard_" + (" (see [Failed](#failed))._" if failures else "._"),
        ]
    )
    at = next(i for i, ln in enumerate(lines) if ln.startswith("| model | template | responses"))
    lines[at:at] = block + ["", "## Partitions", ""]
    if not_scored:
        lines += [
            "",
            "## Not scored",
            "",
            "Partitions of the responses file that this score did not score itself: none of their rows are in the "
            "tables, the scorecard or the report.",
            "",
            "| model | template | why |",
            "| --- | --- | --- |",
        ]
        for key, why in sorted(not_scored.items()):
            pk = PartitionKey.parse(key)
            lines.append(f"| {_escape_pipes(pk.model)} | {_escape_pipes(pk.template)} | {_escape_pipes(why)} |")
    if failures:
        lines += [
            "",
            "## Failed",
            "",
            "Each failure: what it covers, the step and its cause (stack traces in `score.log`). Tables of a "
            "failed partition hold what its finished steps stored.",
            "",
        ]
        lines += [f"- {_escape_pipes(f)}" for f in failures]
    return "\n".join(lines) + "\n"
