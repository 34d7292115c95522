"""``faceedit-bench run editor=<name> testset=<name> ...``: an experiment, as ``python -m faceedit_bench`` runs
it, from the console script, so that the shell can complete it.

Everything after ``run`` is Hydra's: overrides, ``-m`` (a sweep), ``--cfg job``, ``--help``, ``--info``.
Shell completion: ``eval "$(faceedit-bench run --shell-completion install=bash)"`` (zsh: after
``autoload -U bashcompinit && bashcompinit``) prints the static script of :mod:`faceedit_bench.cli.completion`,
which answers every TAB without starting Python. ``--shell-completion query=bash`` is still Hydra's own
completion (nested keys too, a Python start per TAB), asked with the word ``run`` taken out of the line.
"""

from __future__ import annotations

import os
import re
import sys
from collections.abc import Sequence
from typing import Any

from faceedit_bench.errors import ConfigError

COMPLETION_FLAGS = ("-sc", "--shell-completion")
_REQUEST = re.compile(r"^(install|uninstall|query)=(\w+)$")

UNINSTALL = "complete -r %(program)s 2>/dev/null\nunset -f _faceedit_bench_completion\n"


def completion_request(argv: Sequence[str]) -> tuple[str, str] | None:
    """``("install", "bash")`` for ``--shell-completion install=bash``; None when no completion is asked."""
    if not any(a in COMPLETION_FLAGS for a in argv):
        return None
    found = next((m.groups() for a in argv if (m := _REQUEST.match(a))), None)
    if found is None:
        raise ConfigError("--shell-completion needs install=bash, uninstall=bash or query=bash, e.g. "
                          'eval "$(faceedit-bench run --shell-completion install=bash)"')
    return found[0], found[1]


def without_run(line: str) -> str:
    """``faceedit-bench editor=`` for ``faceedit-bench run editor=``: the line as Hydra's completion reads it
    (the app's name first, then overrides)."""
    return re.sub(r"^(\s*\S+\s+)run(?=\s|$)\s?", r"\1", line, count=1)


def run_command(argv: Sequence[str], commands: Sequence[str]) -> int:
    """Run Hydra's app with ``argv``, or print the shell's completion script (``commands``: the subcommands of
    ``faceedit-bench`` it completes)."""
    request = completion_request(argv)
    program = os.path.basename(sys.argv[0]) or "faceedit-bench"
    if request is not None and request[0] != "query":
        if request[1] not in ("bash", "zsh"):
            raise ConfigError(f"shell completion for {request[1]!r} is not provided: use bash (or zsh with "
                              "autoload -U bashcompinit && bashcompinit)")
        if request[0] == "install":  # the static index: no Python on a TAB (faceedit_bench/cli/completion.py)
            from faceedit_bench.cli.completion import bash_script, completion_index

            print(bash_script(completion_index(list(commands)), program), end="")
        else:
            print(UNINSTALL % {"program": program}, end="")
        return 0
    if request is not None:  # Hydra answers the query, about the line without the word "run"
        os.environ["COMP_LINE"] = without_run(os.environ.get("COMP_LINE", ""))
    from faceedit_bench.run.hydra_app import main

    sys.argv = [sys.argv[0], *argv]
    main()
    return 0


def plan_command(argv: Sequence[str], commands: Sequence[str]) -> int:
    """``faceedit-bench plan <overrides>``: the run's plan, as ``run.dry_run=true`` prints it (no provider call)."""
    return run_command([*argv, "run.dry_run=true"], commands)


def add_parsers(sub: Any) -> None:
    """Add ``run`` to the subparsers of ``faceedit-bench``: only for ``--help`` and the command list, since
    :func:`faceedit_bench.cli.main` hands everything after ``run`` to Hydra (:func:`run_command`)."""
    sub.add_parser("run", add_help=False,
                   help="run an experiment: faceedit-bench run editor=<name> testset=<name> [key=value ...] "
                        "(Hydra's overrides and options: -m, --cfg job, --help; shell completion: "
                        "faceedit-bench run --shell-completion install=bash)")
    sub.add_parser("plan", add_help=False,
                   help="a run's calls per provider and model, how many are cached, their estimated cost and the "
                        "time its rate limits imply, without a provider call: faceedit-bench plan <the run's "
                        "overrides> (docs/plan.md)")
