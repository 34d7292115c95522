"""The commands about finished runs: ``report`` (rewrite a run's report.html), ``compare`` (runs side by
side), ``results`` (runs as one long table), ``export-replay`` (a run's images for ``editor=replay``) and
``merge`` (the shards of sharded runs into one run each)."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any


def _report_command(args: argparse.Namespace) -> int:
    from faceedit_bench.report.compared_runs import load_run
    from faceedit_bench.report.html_file import store_for_run_dir, write_html_report
    from faceedit_bench.storage.store import ImageStore

    report, run_dir = load_run(args.run)
    store = ImageStore(args.store) if args.store else store_for_run_dir(run_dir)
    print(write_html_report(run_dir, report, store=store))
    return 0


def _compare_command(args: argparse.Namespace) -> int:
    from faceedit_bench.compare.comparison import compare_runs
    from faceedit_bench.compare.render import format_compare

    result = compare_runs(args.runs)
    print(json.dumps(result, indent=2) if args.json else format_compare(result, args.format))
    if args.html:
        from faceedit_bench.storage.atomic import write_text

        write_text(args.html, format_compare(result, "html"))
        print(f"wrote {args.html}", file=sys.stderr)
    return 0


def _results_command(args: argparse.Namespace) -> int:
    from faceedit_bench.report.results import ResultsError, check_out, gather, write_table

    if not args.paths and not args.tracking_uri:
        raise ResultsError("give a workspace or run folders (e.g. `faceedit-bench results .faceedit_bench`), "
                           "or --tracking-uri for an MLflow store")
    check_out(args.out)  # before reading every run
    if args.plot is not None and args.plot.suffix.lower() != ".html":
        raise ResultsError(f"--plot {args.plot}: give an .html file, e.g. --plot results.html")
    if args.plot is not None and not args.paths:
        raise ResultsError("--plot draws from the sessions table, which MLflow runs do not keep: pass the "
                           "workspaces or run folders")
    gathered = gather(args.paths, which=args.table, tracking_uri=args.tracking_uri, experiments=args.experiment)
    write_table(gathered.table, args.out)
    if args.plot:  # a cross-run plot, from the sessions table (faceedit_bench.report.results_plot)
        from faceedit_bench.report.results_plot import write_plot

        sessions = gathered if args.table == "sessions" else gather(args.paths, which="sessions")
        write_plot(args, sessions)
    editors = sorted({str(v) for v in gathered.table.column("editor").to_pylist()})
    print(f"{gathered.table.num_rows} {args.table} rows from {len(gathered.runs)} run(s) "
          f"(editors: {', '.join(editors)})" + (f"; wrote {args.out}" if args.out else ""), file=sys.stderr)
    for where, why in gathered.skipped:
        print(f"skipped {where}: {why}", file=sys.stderr)
    return 0


def _export_replay_command(args: argparse.Namespace) -> int:
    from faceedit_bench.report.replay_export import export_replay

    counts = export_replay(args.run_dir, args.out)
    print(f"wrote {counts['images']} images and {counts['refused']} refusals to {args.out}")
    return 0


def _merge_command(args: argparse.Namespace) -> int:
    from faceedit_bench.run.merge import describe, merge_workspace

    results = merge_workspace(args.workspace, report=not args.ledger_only)
    print(describe(results))
    return 2 if any(r.missing for r in results) else 0


def add_parsers(sub: Any) -> None:
    """Add ``export-replay``, ``compare``, ``report``, ``merge`` and ``results`` to the subparsers of
    ``faceedit-bench``."""
    p = sub.add_parser("export-replay", help="write a run's edited images in the replay layout (editor=replay)")
    p.add_argument("run_dir", type=Path, help="<workspace>/runs/<run>")
    p.add_argument("out", type=Path, help="directory to create the replay layout in")
    p.set_defaults(func=_export_replay_command)
    p = sub.add_parser("compare", help="compare runs side by side: metrics with CIs, outcome rates, bias flags, "
                                       "cost, paired differences on shared sessions")
    p.add_argument("runs", nargs="+", type=Path, help="run directories (<workspace>/runs/<run>) or their report.json")
    p.add_argument("--format", choices=["text", "markdown"], default="text", help="console output format")
    p.add_argument("--html", type=Path, metavar="OUT.html", help="also write a self-contained HTML page")
    p.add_argument("--json", action="store_true", help="machine-readable output instead of the table")
    p.set_defaults(func=_compare_command)
    p = sub.add_parser("report", help="(re)write a run's self-contained report.html from its report.json")
    p.add_argument("run", type=Path, help="<workspace>/runs/<run> or its report.json")
    p.add_argument("--store", type=Path, help="image store for missing contact sheets (default: <workspace>/store)")
    p.set_defaults(func=_report_command)
    p = sub.add_parser("merge", help="union the shard ledgers of sharded runs (run.shard=i/n) into the workspace "
                                     "ledger, then write each finished experiment's one run (docs/sharding.md)")
    p.add_argument("workspace", type=Path, help="the shared workspace the shards ran in (run.workspace)")
    p.add_argument("--ledger-only", action="store_true", help="merge the ledgers, do not write the runs")
    p.set_defaults(func=_merge_command)
    p = sub.add_parser("results", help="gather the runs of workspaces (or an MLflow store) into one long table, "
                                       "one row per step with the run's identifiers")
    p.add_argument("paths", nargs="*", type=Path, help="workspaces (.faceedit_bench) or run folders (<workspace>/runs/<run>)")
    p.add_argument("--out", type=Path, metavar="TABLE.parquet|.csv", help="write here (default: CSV to stdout)")
    # the keys of report.results.TABLES, written out so that building the parser imports no report module
    p.add_argument("--table", choices=["sessions", "steps"], default="steps", help="one row per step (default) or per session")
    p.add_argument("--tracking-uri", help="also gather the finished runs of this MLflow store (their steps.csv, "
                                          "or sessions.csv with --table sessions)")
    p.add_argument("--experiment", action="append", metavar="NAME",
                   help="with --tracking-uri: only this MLflow experiment (repeatable; default: every faceedit/*)")
    p.add_argument("--plot", type=Path, metavar="OUT.html",
                   help="also draw each metric by editor and test set (from the sessions table) into this page")
    p.add_argument("--metric", action="append", metavar="NAME", help="with --plot: only this metric (repeatable)")
    p.set_defaults(func=_results_command)
