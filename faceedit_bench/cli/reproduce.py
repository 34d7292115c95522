"""``faceedit-bench reproduce <result>``: a published result recomputed from its released raw data with the
project's own machinery, beside the published numbers (docs/reproductions.md). Each result is registered
with the ``faceedit_register_reproductions`` hook by the package whose machinery recomputes it."""

from __future__ import annotations

import warnings
from typing import Any


def add_parsers(sub: Any) -> None:
    p = sub.add_parser("reproduce", help="recompute a published result from its released raw data",
                       description="Recompute a published result from its released raw data (shipped, or your "
                                   "own files in the same layout) and print the published number, ours and the "
                                   "difference; exit code 0 only when every number matches within its printed "
                                   "precision. docs/reproductions.md lists them.")
    results = p.add_subparsers(dest="reproduction", required=True, metavar="RESULT")
    from faceedit_bench.plugin.manager import PluginLoadWarning, current_plugins

    table = current_plugins().registry["reproductions"]
    for name in table.names():
        try:
            table.get(name).load()(results)
        except Exception as exc:  # one plugin's broken reproduction must not take the others down
            warnings.warn(f"reproduction {name!r} is not available: {exc}", PluginLoadWarning, stacklevel=2)
