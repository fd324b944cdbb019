"""Command line.

``fairness-audit demo``   runs the main job and says where the results are;
``fairness-audit run JOB`` runs any job of the code location;
``fairness-audit score --responses FILE --corpus QS.csv --out DIR`` scores a responses file: the
same assets as the UI, materialized in this process on an ephemeral Dagster instance and a
throw-away SQLite results database (``--database URL`` to keep them), the tables, statistics and
report exported to DIR;
``fairness-audit gate --gate GATE.yaml --responses FILE --corpus QS.csv --out DIR`` (or
``--database URL`` holding both audits) judges a candidate model against its baseline: exit 0 on
pass, 1 on fail, 2 on inconclusive or bad input, the verdict in DIR/gate.md;
``fairness-audit ui`` starts the Dagster UI, and beside it a read-only server of the reports folder
(the report links of the UI open there; :func:`fairness_assets.local.start_report_server`).

Runs print one line per asset step (rows stored, checks, progress of long steps), a failed step as
its one-line cause; Dagster's full event stream, stack traces included, goes to a log file whose
path is printed (``--verbose`` prints it too). ``score`` writes what it could score
and exits 1 with the list of what failed.

What each command runs lives in :mod:`fairness_assets.local`; this module parses arguments and
prints errors.
"""

from __future__ import annotations

import argparse
import os
import sys

from .local import GATE_EXIT_CODES, RunFailed, ScoreFailed, UsageError, gate_audits, run_job, score_responses, start_ui

VERBOSE_HELP = (
    "print every event in full, failed steps with their stack traces (by default: one line per step, "
    "a failed step as its cause; the traces go to the log file whose path is printed)"
)


DESIGN_HELP = (
    "the audit's design: a design file, or the name of a shipped design in data/designs "
    "(default FAIRNESS_DESIGN, else demo; docs/designs.md)"
)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="fairness-audit", description=__doc__)
    sub = parser.add_subparsers(dest="command", required=True)
    score = sub.add_parser(
        "score", help="score a responses file (CSV/JSONL/Parquet): the audit's assets in process, results to --out"
    )
    score.add_argument("--responses", required=True, help="responses file (docs/responses_format.md)")
    score.add_argument("--corpus", required=True, help="QS World University Rankings export (CSV)")
    score.add_argument("--out", required=True, help="folder for the tables (CSV) and summary.md")
    score.add_argument(
        "--tagger",
        default="rules",
        choices=["rules", "llm"],
        help="subject tagger: rules (default) or llm (the registry's tagger model; docs/parse_match.md)",
    )
    score.add_argument("--rank-column", default="2024 RANK", help="rank column of the export")
    score.add_argument(
        "--max-items",
        type=int,
        default=None,
        help="k: the first k distinct items of an answer are "
        "scored, the rest counted in notes.csv (default FAIRNESS_MAX_ITEMS, else 3; METHOD.md §9)",
    )
    score.add_argument(
        "--database",
        default="",
        help="results database URL to keep the stored rows in (default: a throw-away SQLite file)",
    )
    score.add_argument("--verbose", action="store_true", help=VERBOSE_HELP + " (DIR/score.log)")
    score.add_argument("--design", default="", help=DESIGN_HELP)
    design = sub.add_parser("design", help="what a design asks, before anything is generated (docs/designs.md)")
    design_sub = design.add_subparsers(dest="design_command", required=True)
    show = design_sub.add_parser("show", help="validate a design; its axes, grid, templates, size and estimated cost")
    show.add_argument("design", help="a design file, or the name of a shipped design (data/designs)")
    show.add_argument("--database", default="", help="results database of earlier audits (default: the configured one)")
    gate = sub.add_parser(
        "gate",
        help="the release gate: is the candidate model at least as fair as the baseline? "
        "(exit 0 pass, 1 fail, 2 inconclusive or bad input; docs/operations.md)",
    )
    gate.add_argument("--gate", required=True, help="gate file (YAML): baseline, candidate, lines")
    gate.add_argument("--responses", default="", help="responses file holding both models' answers (scored first)")
    gate.add_argument("--corpus", default="", help="QS World University Rankings export (CSV), with --responses")
    gate.add_argument(
        "--database",
        default="",
        help="results database URL: keep the scored rows (with "
        "--responses) or compare the audits it already holds (without)",
    )
    gate.add_argument("--out", required=True, help="folder for gate.md, gate.csv (and the scored tables)")
    gate.add_argument("--tagger", default="rules", choices=["rules", "llm"], help="subject tagger, with --responses")
    gate.add_argument("--verbose", action="store_true", help=VERBOSE_HELP + " (DIR/score.log)")
    demo = sub.add_parser("demo", help="run the demo audit (job demo_audit) on the configured design")
    demo.add_argument("--verbose", action="store_true", help=VERBOSE_HELP + " ($DAGSTER_HOME/logs/)")
    demo.add_argument("--design", default="", help=DESIGN_HELP)
    run = sub.add_parser("run", help="run a job of the code location by name")
    run.add_argument("job", help="job name, e.g. demo_audit or reference_data")
    run.add_argument("--verbose", action="store_true", help=VERBOSE_HELP + " ($DAGSTER_HOME/logs/)")
    run.add_argument("--design", default="", help=DESIGN_HELP)
    ui = sub.add_parser(
        "ui",
        help="start the Dagster UI (dg dev on workspace.yaml) and a read-only server of the "
        "reports folder on 127.0.0.1:FAIRNESS_REPORT_PORT (none when FAIRNESS_REPORT_BASE_URL is set); "
        "both stop on SIGTERM or Ctrl-C even when started in the background by a script",
    )
    ui.add_argument("dagster_args", nargs=argparse.REMAINDER, help="passed on to `dg dev` (e.g. -p 3001)")
    argv = list(sys.argv[1:] if argv is None else argv)
    if argv[:1] == ["ui"] and not {"-h", "--help"} & set(argv[1:]):
        return start_ui(argv[1:])  # everything after `ui` belongs to dg dev
    args = parser.parse_args(argv)
    from resources.llm.base import ModelUnavailableError
    from resources.secrets import redact
    from resources.settings import ConfigError

    expected: tuple = (UsageError, ConfigError, ModelUnavailableError, RunFailed)
    if args.command == "gate":
        from .core.statistics.gate import GateError

        expected += (GateError,)
    if args.command in ("score", "gate"):
        from .core.generation.responses import ResponsesFileError
        from .core.reference.corpus import CorpusError
        from .core.reference.geo import CountryResolutionError
        from .core.reference.prompts import TemplateError

        expected += (CorpusError, ResponsesFileError, CountryResolutionError, TemplateError)
    try:
        if args.command == "design":
            from .local.design import show_design

            print(show_design(args.design, args.database), end="")
            return 0
        if args.command in ("demo", "run", "score") and args.design:
            from .local.design import show_design

            show_design(args.design)  # a bad design is refused before anything runs
            # the code location (its template partitions) loads with this design; a job's runs are children
            os.environ["FAIRNESS_DESIGN"] = args.design
        if args.command == "score":
            if args.max_items is not None and args.max_items < 1:
                raise UsageError(f"--max-items must be at least 1, got {args.max_items}")
            score_responses(
                args.responses,
                args.corpus,
                args.out,
                tagger=args.tagger,
                rank_column=args.rank_column,
                database_url=args.database,
                max_items=args.max_items,
                verbose=args.verbose,
                design=args.design,
            )
            return 0
        if args.command == "gate":
            verdict = gate_audits(
                args.gate,
                args.out,
                responses=args.responses,
                corpus_path=args.corpus,
                database_url=args.database,
                tagger=args.tagger,
                verbose=args.verbose,
            )
            return GATE_EXIT_CODES[verdict]
        if args.command == "demo":
            return run_job("demo_audit", verbose=args.verbose)
        if args.command == "run":
            return run_job(args.job, verbose=args.verbose)
    except ScoreFailed as exc:  # what could be scored is written; the list of what failed, exit code 1
        print(
            f"fairness-audit score: {len(exc.failures)} failure(s); what could be scored is written to "
            f"{args.out} (summary.md lists the failures):",
            file=sys.stderr,
        )
        for failure in exc.failures:
            print(f"  {redact(failure.line())}", file=sys.stderr)
        print(
            f"fairness-audit score: stack traces: {exc.log_path}"
            + ("" if args.verbose else " (--verbose prints them)"),
            file=sys.stderr,
        )
        return 1
    except expected as exc:  # a bad input or configuration: one line that names it, no traceback
        print(f"fairness-audit {args.command}: error: {redact(str(exc))}", file=sys.stderr)
        return 2
    parser.error(f"unknown command {args.command!r}")
    return 2


if __name__ == "__main__":
    sys.exit(main())
