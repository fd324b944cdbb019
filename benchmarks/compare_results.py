"""Compare two results databases table by table: are the stored results of two codes identical?

Used for the before/after runs of docs/benchmarks.md (``pipeline_study.py --keep DIR`` keeps each run's
SQLite results file): every table of both files is read whole, the columns that name a run rather than a
result left aside (row ids, timestamps, paths, leases, provenance ids and content hashes, which cover the
code version), and compared as sorted rows of text. Prints one line per differing table (its rows, or
the columns that differ) and exits 1 when any differs, 0 when every table is the same.

    .venv/bin/python benchmarks/compare_results.py BEFORE.db AFTER.db
"""

from __future__ import annotations

import argparse
import sqlite3
import sys

import pandas as pd

# columns that say which run, when or where, not what was found
VOLATILE_COLUMNS = {
    "id",
    "provenance_id",
    "content_sha256",
    "run_id",
    "token",
    "path",
    "html_path",
    "markdown_path",
    "report_id",
    "model_source",
    "config_json",
    "code_version",
    "folder",
}
# tables that record the runs themselves (leases, provenance, outcomes, migrations)
RUN_TABLES = {
    "partition_lease",
    "partition_lease_grant",
    "provenance",
    "alembic_version",
    "run_outcome",
    "table_content",
}


def tables_of(conn: sqlite3.Connection) -> list[str]:
    return sorted(r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'"))


def compare(before: str, after: str) -> list[str]:
    """One line per table that differs between the SQLite files ``before`` and ``after``; empty when none."""
    a, b = sqlite3.connect(before), sqlite3.connect(after)
    try:
        ta, tb = tables_of(a), tables_of(b)
        out = [f"{t}: only in {before if t in ta else after}" for t in sorted(set(ta) ^ set(tb))]
        for t in sorted(set(ta) & set(tb) - RUN_TABLES):
            x, y = pd.read_sql(f'SELECT * FROM "{t}"', a), pd.read_sql(f'SELECT * FROM "{t}"', b)
            if list(x.columns) != list(y.columns):
                out.append(f"{t}: columns differ ({sorted(set(x.columns) ^ set(y.columns))})")
                continue
            if len(x) != len(y):
                out.append(f"{t}: {len(x)} rows against {len(y)}")
                continue
            cols = [c for c in x.columns if c not in VOLATILE_COLUMNS and not c.endswith("_at")]
            if not len(x) or not cols:
                continue
            xs = x[cols].astype(str).sort_values(cols).reset_index(drop=True)
            ys = y[cols].astype(str).sort_values(cols).reset_index(drop=True)
            if not xs.equals(ys):
                out.append(f"{t}: {len(x)} rows, columns differing: {[c for c in cols if not xs[c].equals(ys[c])]}")
        return out
    finally:
        a.close()
        b.close()


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("before")
    ap.add_argument("after")
    args = ap.parse_args(argv)
    differing = compare(args.before, args.after)
    for line in differing:
        print(line)
    with sqlite3.connect(args.before) as conn:
        n = len(set(tables_of(conn)) - RUN_TABLES)
    print(f"{n} tables compared, {len(differing)} differ")
    return 1 if differing else 0


if __name__ == "__main__":
    sys.exit(main())
