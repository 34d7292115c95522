"""``serve`` (the local web app over a workspace) and ``runs`` (its runs table in the console)."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any


def _serve_command(args: argparse.Namespace) -> int:
    from faceedit_bench.serve.server import serve

    serve(args.workspace or _default_workspace(), host=args.host, port=args.port, open_browser=args.open,
          allow_remote=args.allow_remote)
    return 0


def _runs_command(args: argparse.Namespace) -> int:
    from faceedit_bench.serve.runs_index import RunsIndex, format_runs_table, select
    from faceedit_bench.serve.server import check_workspace

    workspace = check_workspace(args.workspace or _default_workspace())
    rows = select(RunsIndex(workspace).rows(), q=" ".join(args.search), sort="date")
    print(format_runs_table(rows))
    return 0


def _default_workspace() -> Path:
    from faceedit_bench.storage.run_dirs import default_runs_dir

    return default_runs_dir().parent


def add_parsers(sub: Any) -> None:
    """Add ``serve`` and ``runs`` to the subparsers of ``faceedit-bench``."""
    p = sub.add_parser("serve", help="browse a workspace's runs in the browser: runs, sessions, every step's "
                                     "images and the judge's reasoning (docs/serve.md)")
    p.add_argument("workspace", type=Path, nargs="?", default=None,
                   help="the workspace (default: $FACEEDIT_BENCH_HOME or .faceedit_bench)")
    p.add_argument("--host", default="127.0.0.1", help="address to listen on (default 127.0.0.1, this machine only)")
    p.add_argument("--port", type=int, default=0, help="port (default 0: a free one)")
    p.add_argument("--open", action="store_true", help="open the address in the browser")
    p.add_argument("--allow-remote", action="store_true", help="allow a --host other machines can reach")
    p.set_defaults(func=_serve_command)
    p = sub.add_parser("runs", help="list a workspace's runs: status, editor, test set, judge, headline metrics")
    p.add_argument("workspace", type=Path, nargs="?", default=None,
                   help="the workspace (default: $FACEEDIT_BENCH_HOME or .faceedit_bench)")
    p.add_argument("--search", nargs="*", default=[], metavar="WORD", help="only runs whose labels hold every word")
    p.set_defaults(func=_runs_command)
