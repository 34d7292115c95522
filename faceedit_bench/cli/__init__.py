"""The ``faceedit-bench`` command (the help text is :data:`DESCRIPTION`): :func:`main` and its parser. Each
module of this package adds its own subcommands (``add_parsers``) and imports what a command needs inside the
command's function, so that ``faceedit-bench --help`` stays quick:

* :mod:`~faceedit_bench.cli.run`: ``run``, an experiment through Hydra (the same as ``python -m faceedit_bench``),
  and its bash completion;
* :mod:`~faceedit_bench.cli.plugins`: ``plugins`` and ``ls``, what is installed and the options of each group;
* :mod:`~faceedit_bench.cli.inputs`: ``data check``, ``testset`` and ``write-instructions``, a run's inputs;
* :mod:`~faceedit_bench.cli.runs`: ``report``, ``compare``, ``results``, ``export-replay`` and ``merge``,
  what to do with finished runs;
* :mod:`~faceedit_bench.cli.serve`: ``serve`` (the web app over a workspace) and ``runs`` (its runs table);
* :mod:`~faceedit_bench.cli.leaderboard`: ``submit``, ``verify`` and ``leaderboard build``;
* :mod:`~faceedit_bench.cli.reproduce`: ``reproduce``, published results recomputed from their raw data;
* :mod:`~faceedit_bench.cli.completion`: ``completion bash``, tab completion from a static index;
* :mod:`~faceedit_bench.cli.study`: ``study``, human studies over finished runs.

A protocol package adds its own commands through the ``faceedit_register_commands`` hook
(:func:`add_plugin_commands`; docs/plugin_hooks.md).
"""

from __future__ import annotations

import argparse
import os
import sys
import warnings
from typing import Any

from faceedit_bench.errors import FaceEditBenchError
from faceedit_bench.report.fit import width

DESCRIPTION = """\
faceedit-bench: run experiments, and everything around them (plugins, options, datasets, test sets,
comparing and reporting runs, the leaderboard).

Experiments run through Hydra:
  faceedit-bench run editor=<name> testset=<name> dataset=<name> [key=value ...]
  faceedit-bench run --help                  (its config groups and options)
  faceedit-bench plan <the run's overrides>  (its calls, cached, estimated cost, time; no call made)
  eval "$(faceedit-bench completion bash)"   (tab completion in bash; --install keeps it)
"""


class Parser(argparse.ArgumentParser):
    """An argument parser whose help fits 100 columns (:func:`faceedit_bench.report.fit.width`). Its subparsers
    are of this class too, so every command's and subcommand's ``--help`` fits."""

    def _get_formatter(self) -> argparse.HelpFormatter:
        return self.formatter_class(prog=self.prog, width=width())

    def add_subparsers(self, **kwargs: Any) -> Any:
        kwargs.setdefault("metavar", "COMMAND")  # not the list of every choice in braces, one unbreakable word
        return super().add_subparsers(**kwargs)


def build_parser(argv: list[str] | None = None) -> argparse.ArgumentParser:
    """The whole parser; with ``argv``, only the plugin command it invokes is loaded (the others are
    listed by name)."""
    parser = Parser(prog="faceedit-bench", description=DESCRIPTION,
                    formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = parser.add_subparsers(dest="command", required=True)
    from faceedit_bench.cli import completion, inputs, leaderboard, plugins, reproduce, run, runs, serve, study

    # each adds its commands
    for commands in (run, plugins, inputs, runs, serve, leaderboard, reproduce, completion, study):
        commands.add_parsers(sub)
    add_plugin_commands(sub, argv)  # what plugins contribute (questions, portraits, human, arena ...)
    for action in sub._choices_actions:  # `faceedit-bench <command> --help` says what the command does
        command = sub.choices[action.dest]
        if command.description is None:
            command.description = action.help
    return parser


def add_plugin_commands(sub: Any, argv: list[str] | None = None) -> None:
    """Every command registered with ``faceedit_register_commands``. One that cannot be added (its plugin
    fails, two plugins claim its name, it takes a name faceedit-bench has) is left out with a warning.

    Only the command ``argv`` invokes is loaded (its module may import a statistics stack that takes
    seconds); the others are listed by name and description. ``argv=None`` loads every one."""
    from faceedit_bench.plugin.manager import PluginLoadWarning, current_plugins

    table = current_plugins().registry["commands"]
    invoked = next((a for a in argv if not a.startswith("-")), None) if argv is not None else None
    for name in table.entries:
        providers = [r.provider for r in table.entries[name]]
        try:
            if name in sub.choices:
                raise FaceEditBenchError(f"faceedit-bench has a command {name!r} of its own")
            registration = table.get(name)  # a clash raises here, naming both plugins
            if argv is not None and name != invoked:
                sub.add_parser(name, help=registration.description or f"(from {', '.join(providers)})")
                continue
            registration.load()(sub)
            if name not in sub.choices:
                raise FaceEditBenchError(f"its add_parser added no command {name!r}")
        except Exception as exc:  # one plugin's broken command must not take the others down
            warnings.warn(f"command {name!r} of plugin {', '.join(providers)} is not available: {exc}",
                          PluginLoadWarning, stacklevel=2)


def _subcommands() -> list[str]:
    parser = build_parser([])  # names only: no plugin command's module is loaded
    return sorted(next(a for a in parser._actions if a.dest == "command").choices)


def main(argv: list[str] | None = None) -> int:
    """The ``faceedit-bench`` command. Without ``argv`` it is the console script, the process's own command:
    the garbage collector then runs at a command's pace (faceedit_bench/collector.py)."""
    if argv is None:
        from faceedit_bench.collector import collect_less_often

        collect_less_often()
        argv = sys.argv[1:]
    argv = list(argv)
    if argv[:1] in (["run"], ["plan"]):  # Hydra parses everything after it (-m, --cfg, --help are Hydra's)
        from faceedit_bench.cli.run import plan_command, run_command

        try:
            return (run_command if argv[0] == "run" else plan_command)(argv[1:], _subcommands())
        except FaceEditBenchError as exc:
            print(f"Error: {exc}", file=sys.stderr)
            return 2
    parser = build_parser(argv)
    args = parser.parse_args(argv)
    if getattr(args, "action", None) == "show" and not args.name:
        parser.error("testset show needs a name, e.g. faceedit-bench testset show pose")
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
