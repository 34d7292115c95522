"""The commands about a run's inputs, before any run: ``data check`` (is a dataset's folder laid out as its
reader expects), ``testset show|check`` and ``write-instructions`` (an MLLM judge writes a test set's
instructions and freezes them)."""

from __future__ import annotations

import argparse
import functools
from pathlib import Path
from typing import Any

from faceedit_bench.errors import FaceEditBenchError


def _data_check_command(args: argparse.Namespace) -> int:
    from faceedit_bench.plugin.manager import current_plugins
    from faceedit_bench.run.data_check import check_dataset, docs_page
    from faceedit_bench.setting_checks import key_values

    result = check_dataset(current_plugins(), args.dataset, args.root, key_values(args.param, "--param"),
                           decode=not args.quick)
    from faceedit_bench.report.console import console_width

    print(result.describe(docs_page(args.dataset), console_width()))
    return 0 if result.ok else 1


def _testset_command(args: argparse.Namespace) -> int:
    from faceedit_bench import testsets

    # A plugin's frozen set is checked by its loader's check() against its loader's source (docs/plugin_hooks.md).
    if args.action == "show":
        loader = _frozen_loaders(only=args.name).get(args.name)
        found = loader() if loader is not None else testsets.load_testset(args.name)
        print(testsets.describe_testset(found, label=getattr(loader, "label", None)))
        return 0
    checks = {n: (functools.partial(testsets.frozen_matches_generator, n), "the generator")
              for n in testsets.BUILTIN_NAMES}
    checks.update({n: (loader.check, getattr(loader, "source", "its source")) for n, loader in _frozen_loaders().items()})
    if args.name and args.name not in checks:
        raise testsets.TestSetError(f"{args.name!r} is no frozen test set that can be checked; these can: "
                                    f"{', '.join(checks)}")
    names = [args.name] if args.name else list(checks)
    stale = [n for n in names if not checks[n][0]()]
    for n in names:
        print(f"{n}: {'DIFFERS from' if n in stale else 'matches'} {checks[n][1]}")
    return 1 if stale else 0


def _frozen_loaders(only: str | None = None) -> dict[str, Any]:
    """A plugin's frozen test sets by name (the one named ``only``, if given: loading a loader imports its
    plugin's modules): the registered loaders that can ``check()`` their file."""
    from faceedit_bench.plugin.manager import current_plugins
    from faceedit_bench.testsets import BUILTIN_NAMES

    table = current_plugins().registry["testsets"]
    loaders = {n: table.get(n).load() for n in table.names()
               if n not in (*BUILTIN_NAMES, "file") and only in (None, n)}
    return {n: loader for n, loader in loaders.items() if callable(getattr(loader, "check", None))}


def _write_instructions_command(args: argparse.Namespace) -> int:
    import yaml

    from faceedit_bench.config import ComponentConf
    from faceedit_bench.plugin.manager import current_plugins
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
    factory = current_plugins().registry.get("judges", args.judge).load()
    check_params("judge", ComponentConf(args.judge, params), factory)
    judge = factory(**params)
    content = write_testset(load_testset(args.source), judge, args.judge, Path(args.workspace), name=args.name)
    parse_testset(content, str(args.out))  # what is written must load
    from faceedit_bench.storage.atomic import write_text

    write_text(args.out, render(content))
    print(f"wrote {len(content['sessions'])} sessions to {args.out}; run it with "
          f"testset=file testset.params.path={args.out}")
    return 0


def add_parsers(sub: Any) -> None:
    """Add ``data``, ``testset`` and ``write-instructions`` to the subparsers of ``faceedit-bench``."""
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
    p = sub.add_parser("data", help="check that a dataset's folder is laid out as its reader expects, before any "
                                    "run (where to get each dataset: docs/datasets/)")
    data = p.add_subparsers(dest="data_action", required=True)
    p = data.add_parser("check", help="read a dataset's annotations and decode its images with its own reader; "
                                      "say what is missing, misnamed or unreadable (exit 1) or what was found "
                                      "(exit 0)")
    p.add_argument("dataset", help="a dataset name (faceedit-bench ls dataset), e.g. fairface, celeba")
    p.add_argument("root", nargs="?", help="the dataset's folder (dataset.params.root); not for sample")
    p.add_argument("--param", "-p", action="append", default=[], metavar="KEY=VALUE",
                   help="a further dataset parameter (YAML value), e.g. -p split=train; repeatable")
    p.add_argument("--quick", action="store_true",
                   help="do not decode every image (only check the annotations and that each image is there)")
    p.set_defaults(func=_data_check_command)
