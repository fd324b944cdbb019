"""Command line.

``fairness-audit demo``   runs the main job and says where the results are;
``fairness-audit run JOB`` runs any job of the code location;
``fairness-audit score --responses FILE --corpus QS.csv --out DIR`` scores a responses file: the
same assets as the UI, materialized in this process on an ephemeral Dagster instance and a
throw-away SQLite results database (``--database URL`` to keep them), the tables, statistics and
report exported to DIR;
``fairness-audit ui`` starts the Dagster UI.

What each command runs lives in :mod:`fairness_assets.local`; this module parses arguments and
prints errors.
"""

from __future__ import annotations

import argparse
import sys

from .local import RunFailed, UsageError, run_job, score_responses, start_ui


def score_file(responses: str, corpus_path: str, out: str, tagger: str = "rules", rank_column: str = "2024 RANK",
               log=print, database_url: str = "", max_items=None) -> dict:
    """The `score` command (kept under its old name for scripts): see :func:`fairness_assets.local.score_responses`."""
    return score_responses(responses, corpus_path, out, tagger=tagger, rank_column=rank_column,
                           database_url=database_url, max_items=max_items, log=log)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="fairness-audit", description=__doc__)
    sub = parser.add_subparsers(dest="command", required=True)
    score = sub.add_parser("score", help="score a responses file (CSV/JSONL/Parquet): the audit's assets in process, results to --out")
    score.add_argument("--responses", required=True, help="responses file (docs/responses_format.md)")
    score.add_argument("--corpus", required=True, help="QS World University Rankings export (CSV)")
    score.add_argument("--out", required=True, help="folder for the tables (CSV) and summary.md")
    score.add_argument("--tagger", default="rules", choices=["rules", "llm"],
                       help="subject tagger: rules (default) or llm (the registry's tagger model; docs/parse_match.md)")
    score.add_argument("--rank-column", default="2024 RANK", help="rank column of the export")
    score.add_argument("--max-items", type=int, default=None, help="k: the first k distinct items of an answer are "
                       "scored, the rest counted in notes.csv (default FAIRNESS_MAX_ITEMS, else 3; METHOD.md §9)")
    score.add_argument("--database", default="", help="results database URL to keep the stored rows in "
                       "(default: a throw-away SQLite file)")
    sub.add_parser("demo", help="run the demo audit (job demo_audit) on the configured preset")
    run = sub.add_parser("run", help="run a job of the code location by name")
    run.add_argument("job", help="job name, e.g. demo_audit or reference_data")
    ui = sub.add_parser("ui", help="start the Dagster UI (dagster dev on workspace.yaml); stops on SIGTERM or Ctrl-C "
                        "even when started in the background by a script")
    ui.add_argument("dagster_args", nargs=argparse.REMAINDER, help="passed on to `dagster dev` (e.g. -p 3001)")
    argv = list(sys.argv[1:] if argv is None else argv)
    if argv[:1] == ["ui"] and not {"-h", "--help"} & set(argv[1:]):
        return start_ui(argv[1:])  # everything after `ui` belongs to dagster dev
    args = parser.parse_args(argv)
    from resources.llm.base import ModelUnavailableError
    from resources.secrets import redact
    from resources.settings import ConfigError

    expected: tuple = (UsageError, ConfigError, ModelUnavailableError, RunFailed)
    if args.command == "score":
        from .core.corpus import CorpusError
        from .core.geo import CountryResolutionError
        from .core.responses import ResponsesFileError

        expected += (CorpusError, ResponsesFileError, CountryResolutionError)
    try:
        if args.command == "score":
            if args.max_items is not None and args.max_items < 1:
                raise UsageError(f"--max-items must be at least 1, got {args.max_items}")
            score_file(args.responses, args.corpus, args.out, args.tagger, args.rank_column,
                       database_url=args.database, max_items=args.max_items)
            return 0
        if args.command == "demo":
            return run_job("demo_audit")
        if args.command == "run":
            return run_job(args.job)
    except expected as exc:  # a bad input or configuration: one line that names it, no traceback
        print(f"fairness-audit {args.command}: error: {redact(str(exc))}", file=sys.stderr)
        return 2
    parser.error(f"unknown command {args.command!r}")
    return 2


if __name__ == "__main__":
    sys.exit(main())
