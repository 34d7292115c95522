"""The ``faceedit-bench`` command (the help text is :data:`DESCRIPTION`). Experiments run through Hydra:
``faceedit-bench run editor=... testset=...`` (:mod:`faceedit_bench.cli.run`), the same as
``python -m faceedit_bench editor=... testset=...``."""

from __future__ import annotations

import argparse
import functools
import json
import os
import sys
import warnings
from pathlib import Path
from typing import Any

from faceedit_bench.errors import FaceEditBenchError


def _plugins_command(args: argparse.Namespace) -> int:
    from faceedit_bench.plugin.manager import get_plugins

    plugins = get_plugins()
    rows = plugins.describe()
    problems = {
        "failed": plugins.failed,
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
    for key, value in problems.items():
        if value:
            print(f"{key.replace('_', ' ')}: {json.dumps(value)}")
    return 0


def _ls_command(args: argparse.Namespace) -> int:
    from faceedit_bench.plugin.manager import get_plugins
    from faceedit_bench.plugin.registry import suggest
    from faceedit_bench.run.hydra_app import group_options

    options = group_options(get_plugins())
    import textwrap

    from faceedit_bench.report.console import console_width

    for group in [args.group] if args.group else sorted(options):
        if group not in options:
            near = suggest(group, sorted(options))
            hint = f" Did you mean {' or '.join(repr(n) for n in near)}?" if near else ""
            raise FaceEditBenchError(f"unknown group {group!r}.{hint} Groups: {', '.join(sorted(options))}.")
        print(textwrap.fill(f"{group}: {', '.join(options[group]) or '(none)'}", console_width(),
                            subsequent_indent="    ", break_on_hyphens=False))
    return 0


def _testset_command(args: argparse.Namespace) -> int:
    from faceedit_bench import testsets

    # A plugin's frozen set is checked by its loader's check() against its loader's source (docs/plugin_hooks.md).
    loaders = _frozen_loaders()
    if args.action == "show":
        loader = loaders.get(args.name)
        found = loader() if loader is not None else testsets.load_testset(args.name)
        print(testsets.describe_testset(found, label=getattr(loader, "label", None)))
        return 0
    checks = {n: (functools.partial(testsets.frozen_matches_generator, n), "the generator")
              for n in testsets.BUILTIN_NAMES}
    checks.update({n: (loader.check, getattr(loader, "source", "its source")) for n, loader in loaders.items()})
    if args.name and args.name not in checks:
        raise testsets.TestSetError(f"{args.name!r} is no frozen test set that can be checked; these can: "
                                    f"{', '.join(checks)}")
    names = [args.name] if args.name else list(checks)
    stale = [n for n in names if not checks[n][0]()]
    for n in names:
        print(f"{n}: {'DIFFERS from' if n in stale else 'matches'} {checks[n][1]}")
    return 1 if stale else 0


def _frozen_loaders() -> dict[str, Any]:
    """A plugin's frozen test sets by name: the registered loaders that can ``check()`` their file."""
    from faceedit_bench.plugin.manager import get_plugins
    from faceedit_bench.testsets import BUILTIN_NAMES

    table = get_plugins().registry["testsets"]
    loaders = {n: table.get(n).load() for n in table.names() if n not in (*BUILTIN_NAMES, "file")}
    return {n: loader for n, loader in loaders.items() if callable(getattr(loader, "check", None))}


def _export_replay_command(args: argparse.Namespace) -> int:
    from faceedit_bench.report.replay_export import export_replay

    counts = export_replay(args.run_dir, args.out)
    print(f"wrote {counts['images']} images and {counts['refused']} refusals to {args.out}")
    return 0


def _write_instructions_command(args: argparse.Namespace) -> int:
    import yaml

    from faceedit_bench.config import ComponentConf
    from faceedit_bench.plugin.manager import get_plugins
    from faceedit_bench.run.components import check_params
    from faceedit_bench.testsets import load_testset, parse_testset
    from faceedit_bench.testsets.generator import render
    from faceedit_bench.testsets.mllm import write_testset

    params = {}
    for item in args.param:
        key, sep, value = item.partition("=")
        if not sep or not key:
            raise FaceEditBenchError(f"--param {item!r}: write key=value, e.g. --param model=gemini-2.5-flash")
        params[key] = yaml.safe_load(value)
    if args.out.exists() and not args.force:
        raise FaceEditBenchError(f"{args.out} exists; a frozen test set is never overwritten (use --force)")
    factory = get_plugins().registry.get("judges", args.judge).load()
    check_params("judge", ComponentConf(args.judge, params), factory)
    judge = factory(**params)
    content = write_testset(load_testset(args.source), judge, args.judge, Path(args.workspace), name=args.name)
    parse_testset(content, str(args.out))  # what is written must load
    from faceedit_bench.storage.atomic import write_text

    write_text(args.out, render(content))
    print(f"wrote {len(content['sessions'])} sessions to {args.out}; run it with "
          f"testset=file testset.params.path={args.out}")
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


def _report_command(args: argparse.Namespace) -> int:
    from faceedit_bench.report.compared_runs import load_run
    from faceedit_bench.report.html_file import store_for_run_dir, write_html_report
    from faceedit_bench.storage.store import ImageStore

    report, run_dir = load_run(args.run)
    store = ImageStore(args.store) if args.store else store_for_run_dir(run_dir)
    print(write_html_report(run_dir, report, store=store))
    return 0


def _data_check_command(args: argparse.Namespace) -> int:
    from faceedit_bench.plugin.manager import get_plugins
    from faceedit_bench.run.data_check import check_dataset, docs_page
    from faceedit_bench.setting_checks import key_values

    result = check_dataset(get_plugins(), args.dataset, args.root, key_values(args.param, "--param"))
    from faceedit_bench.report.console import console_width

    print(result.describe(docs_page(args.dataset), console_width()))
    return 0 if result.ok else 1


def _merge_command(args: argparse.Namespace) -> int:
    from faceedit_bench.run.merge import describe, merge_workspace

    results = merge_workspace(args.workspace, report=not args.ledger_only)
    print(describe(results))
    return 2 if any(r.missing for r in results) else 0


DESCRIPTION = """\
faceedit-bench: run experiments, and everything around them (plugins, options, datasets, test sets,
comparing and reporting runs, the leaderboard).

Experiments run through Hydra:
  faceedit-bench run editor=<name> testset=<name> dataset=<name> [key=value ...]
  faceedit-bench run --help            (config groups and options; also python -m faceedit_bench)
  eval "$(faceedit-bench run --shell-completion install=bash)"     (tab completion in bash)
"""


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="faceedit-bench", description=DESCRIPTION,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = parser.add_subparsers(dest="command", required=True)
    sub.add_parser("run", add_help=False,  # main() hands everything after "run" to Hydra
                   help="run an experiment: faceedit-bench run editor=<name> testset=<name> [key=value ...] "
                        "(Hydra's overrides and options: -m, --cfg job, --help; shell completion: "
                        "faceedit-bench run --shell-completion install=bash)")
    p = sub.add_parser("plugins", help="list installed plugins, versions and what each registers")
    p.add_argument("--json", action="store_true", help="machine-readable output")
    p.set_defaults(func=_plugins_command)
    p = sub.add_parser("ls", help="list the options of each config group (editor, dataset, ...)")
    p.add_argument("group", nargs="?")
    p.set_defaults(func=_ls_command)
    p = sub.add_parser("testset", help="show a test set, or check frozen test sets against the generator")
    p.add_argument("action", choices=["show", "check"])
    p.add_argument("name", nargs="?", help="builtin name or path to a test-set JSON file")
    p.set_defaults(func=_testset_command)
    p = sub.add_parser("write-instructions", help="have an MLLM judge write a test set's instructions step by step "
                                                  "(METHODOLOGY §2.4) and freeze them into a new test-set file")
    p.add_argument("source", help="builtin test set or test-set JSON file whose sessions (attributes) are kept")
    p.add_argument("--judge", required=True, help="registered judge, e.g. gemini or openai")
    p.add_argument("--param", "-p", action="append", default=[], metavar="KEY=VALUE",
                   help="judge parameter (YAML value), e.g. -p model=gemini-2.5-flash; repeatable")
    p.add_argument("--out", type=Path, required=True, help="the new test-set JSON file")
    p.add_argument("--name", help="name of the new test set (default: <source>-mllm)")
    p.add_argument("--workspace", default=".faceedit_bench", help="where the answers are cached (ledger)")
    p.add_argument("--force", action="store_true", help="overwrite --out")
    p.set_defaults(func=_write_instructions_command)
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
    p = sub.add_parser("data", help="check that a dataset's folder is laid out as its reader expects, before any "
                                    "run (where to get each dataset: docs/datasets/)")
    data = p.add_subparsers(dest="data_action", required=True)
    p = data.add_parser("check", help="read a dataset's annotations and check its images with its own reader; say "
                                      "what is missing or misnamed (exit 1) or what was found (exit 0)")
    p.add_argument("dataset", help="a dataset name (faceedit-bench ls dataset), e.g. fairface, celeba")
    p.add_argument("root", nargs="?", help="the dataset's folder (dataset.params.root); not for sample")
    p.add_argument("--param", "-p", action="append", default=[], metavar="KEY=VALUE",
                   help="a further dataset parameter (YAML value), e.g. -p split=train; repeatable")
    p.set_defaults(func=_data_check_command)
    p = sub.add_parser("merge", help="union the shard ledgers of sharded runs (run.shard=i/n) into the workspace "
                                     "ledger, then write each finished experiment's one run (docs/sharding.md)")
    p.add_argument("workspace", type=Path, help="the shared workspace the shards ran in (run.workspace)")
    p.add_argument("--ledger-only", action="store_true", help="merge the ledgers, do not write the runs")
    p.set_defaults(func=_merge_command)
    from faceedit_bench.report.results import add_parser as add_results_parser

    add_results_parser(sub)  # results
    from faceedit_bench.cli.leaderboard import add_parsers

    add_parsers(sub)  # submit, verify, leaderboard build
    add_plugin_commands(sub)  # what plugins contribute (e.g. questions)
    for action in sub._choices_actions:  # `faceedit-bench <command> --help` says what the command does
        command = sub.choices[action.dest]
        if command.description is None:
            command.description = action.help
    return parser


def add_plugin_commands(sub: Any) -> None:
    """Every command registered with ``faceedit_register_commands``. One that cannot be added (its plugin
    fails, two plugins claim its name, it takes a name faceedit-bench has) is left out with a warning."""
    from faceedit_bench.plugin.manager import PluginLoadWarning, get_plugins

    table = get_plugins().registry["commands"]
    for name in table.entries:
        providers = [r.provider for r in table.entries[name]]
        try:
            if name in sub.choices:
                raise FaceEditBenchError(f"faceedit-bench has a command {name!r} of its own")
            table.get(name).load()(sub)  # a clash raises here, naming both plugins
            if name not in sub.choices:
                raise FaceEditBenchError(f"its add_parser added no command {name!r}")
        except Exception as exc:  # one plugin's broken command must not take the others down
            warnings.warn(f"command {name!r} of plugin {', '.join(providers)} is not available: {exc}",
                          PluginLoadWarning, stacklevel=2)


def _subcommands() -> list[str]:
    parser = build_parser()
    return sorted(next(a for a in parser._actions if a.dest == "command").choices)


def main(argv: list[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    if argv[:1] == ["run"]:  # Hydra parses everything after it (-m, --cfg, --help are Hydra's)
        from faceedit_bench.cli.run import run_command

        try:
            return run_command(argv[1:], _subcommands())
        except FaceEditBenchError as exc:
            print(f"Error: {exc}", file=sys.stderr)
            return 2
    args = build_parser().parse_args(argv)
    if getattr(args, "action", None) == "show" and not args.name:
        build_parser().error("testset show needs a name, e.g. faceedit-bench testset show pose")
    from faceedit_bench.run.signals import exit_code, stopped_by, stopping_on_signals

    try:
        with stopping_on_signals():  # SIGTERM and SIGHUP stop a command (a merge's run) as Ctrl-C does
            code = int(args.func(args) or 0)
        sys.stdout.flush()  # a closed pipe shows here, inside the handler, not at interpreter exit
        return code
    except FaceEditBenchError as exc:
        print(f"Error: {exc}", file=sys.stderr)
        return 2
    except KeyboardInterrupt as stop:
        print(f"\n{stopped_by(stop)} Nothing finished is lost; run the same command again.", file=sys.stderr)
        return exit_code(stop)
    except BrokenPipeError:
        # The reader went away (`faceedit-bench compare ... | head`): stop quietly, as `cat` does. Point
        # stdout at devnull so the interpreter's final flush does not raise again.
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 141  # 128 + SIGPIPE, what a shell reports for a command killed by a closed pipe


if __name__ == "__main__":
    sys.exit(main())
