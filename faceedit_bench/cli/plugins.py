"""``faceedit-bench plugins`` and ``faceedit-bench ls``: what is installed, and the options of each config group."""

from __future__ import annotations

import argparse
import json
from typing import Any

from faceedit_bench.errors import FaceEditBenchError


def _plugins_command(args: argparse.Namespace) -> int:
    from faceedit_bench.plugin.manager import current_plugins

    plugins = current_plugins()
    rows = plugins.describe()
    problems = {
        "broken": plugins.failed,  # plugin -> why it was skipped (the others work)
        "blocked": plugins.blocked,
        "entry_point_clashes": plugins.entry_point_clashes,
        "name_clashes": plugins.registry.clashes(),
    }
    if args.json:
        print(json.dumps({"plugins": rows, **problems}, indent=2))
        return 0
    for row in rows:
        print(f"{row['name']}  ({row['distribution']} {row['version']})")
        for kind, names in row["registers"].items():
            print(f"    {kind}: {', '.join(names)}")
    for name, reason in sorted(plugins.failed.items()):
        print(f"{name}  (broken, skipped: {reason})")
    for key, value in problems.items():
        if value and key != "broken":
            print(f"{key.replace('_', ' ')}: {json.dumps(value)}")
    return 0


def _ls_command(args: argparse.Namespace) -> int:
    from faceedit_bench.plugin.manager import current_plugins
    from faceedit_bench.plugin.registry import suggest
    from faceedit_bench.run.group_options import group_options

    options = group_options(current_plugins())
    import textwrap

    from faceedit_bench.report.console import console_width

    groups = [args.group] if args.group else sorted(options)
    for group in groups:
        if group not in options:
            near = suggest(group, sorted(options))
            hint = f" Did you mean {' or '.join(repr(n) for n in near)}?" if near else ""
            raise FaceEditBenchError(f"unknown group {group!r}.{hint} Groups: {', '.join(sorted(options))}.")
    from faceedit_bench.run.access import GROUPS, option_access

    # Editors and judges one a line: hosted or local, the key's variable, the price
    access = option_access(current_plugins(), {g: options[g] for g in groups if g in GROUPS})
    for group in groups:
        if group in access:
            width = max((len(n) for n in options[group]), default=0)
            print(f"{group}:")
            for name in options[group]:
                print(textwrap.fill(f"    {name:<{width}}  {access[group][name]}", console_width(),
                                    subsequent_indent=" " * (width + 6), break_on_hyphens=False))
            continue
        print(textwrap.fill(f"{group}: {', '.join(options[group]) or '(none)'}", console_width(),
                            subsequent_indent="    ", break_on_hyphens=False))
    return 0


def add_parsers(sub: Any) -> None:
    """Add ``plugins`` and ``ls`` to the subparsers of ``faceedit-bench``."""
    p = sub.add_parser("plugins", help="list installed plugins, versions and what each registers")
    p.add_argument("--json", action="store_true", help="machine-readable output")
    p.set_defaults(func=_plugins_command)
    p = sub.add_parser("ls", help="list the options of each config group (editor, dataset, ...); for each editor "
                                  "and judge: hosted or local, the variable its API key is read from, its price")
    p.add_argument("group", nargs="?")
    p.set_defaults(func=_ls_command)
