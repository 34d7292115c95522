"""``faceedit-bench study``: human studies over finished runs (docs/studies.md).

    faceedit-bench study create RUN_A RUN_B --kind pairwise --items 200 --annotators 6 --per-item 3
    faceedit-bench study create RUN --kind rating --metric NAME      (a judge metric with point-by-point scales)
    faceedit-bench study create RUN --kind checklist [--metric NAME] (the yes/no questions the judge answered)
    faceedit-bench study create RUN --kind categorical --metric NAME (the judge's answer fields of fixed values)
    faceedit-bench study list [WORKSPACE]
    faceedit-bench study results s-1a2b3c4d [--workspace W] [--json]
    faceedit-bench study export s-1a2b3c4d           (ratings, votes, annotations or answers CSV; docs/studies.md)
    faceedit-bench study add-annotators s-1a2b3c4d 2

Annotators open their link in ``faceedit-bench serve``; each link is printed once, when it is made.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import Any


def _workspace(args: argparse.Namespace) -> Path:
    from faceedit_bench.studies.export import default_workspace

    return args.workspace if args.workspace is not None else default_workspace()


def _print_links(study_id: str, links: dict[str, str]) -> None:
    print("Annotator links (shown this once; only a hash of each is kept). Append each to the URL "
          "`faceedit-bench serve` prints, e.g. http://127.0.0.1:8000/annotate/...:")
    for annotator, secret in links.items():
        print(f"  {annotator}  /annotate/{study_id}/{secret}")


def _create(args: argparse.Namespace) -> int:
    from faceedit_bench.studies.create import Settings, create_study

    workspace = args.workspace or Path(args.runs[0]).resolve().parent.parent  # <workspace>/runs/<run>
    created = create_study(workspace, args.runs, Settings(
        kind=args.kind, items=args.items, annotators=args.annotators, per_item=args.per_item, gold=args.gold,
        seed=args.seed, metric=args.metric, title=args.title or ""))
    print(f"study {created.study_id} in {workspace}: {created.n_items} items, {created.n_gold} gold, "
          f"{args.annotators} annotators, {args.per_item} per item")
    for reason, n in created.not_asked.items():
        print(f"  not asked: {n} x {reason}")
    _print_links(created.study_id, created.links)
    return 0


def _list(args: argparse.Namespace) -> int:
    from faceedit_bench.storage.study_tables import StudyTables

    for study in StudyTables(_workspace(args)).studies():
        print(f"{study['study_id']}  {study['kind']:<11}  {study['spec']['title']}")
    return 0


def _results(args: argparse.Namespace) -> int:
    from faceedit_bench.studies.results import study_results
    from faceedit_bench.studies.text import format_results

    results = study_results(_workspace(args), _known(args))
    print(json.dumps(results, indent=2) if args.json else format_results(results))
    return 0


def _known(args: argparse.Namespace) -> str:
    from faceedit_bench.errors import FaceEditBenchError
    from faceedit_bench.storage.study_tables import StudyTables

    if StudyTables(_workspace(args)).study(args.study) is None:
        raise FaceEditBenchError(f"no study {args.study!r} in {_workspace(args)}; `faceedit-bench study list "
                                 f"{_workspace(args)}` shows them (or pass --workspace)")
    return str(args.study)


def _export(args: argparse.Namespace) -> int:
    from faceedit_bench.studies.export import export

    print(export(_workspace(args), _known(args)))
    return 0


def _add(args: argparse.Namespace) -> int:
    from faceedit_bench.studies.create import add_annotators

    _print_links(args.study, add_annotators(_workspace(args), _known(args), args.n))
    return 0


KINDS = ("pairwise", "rating", "checklist", "categorical")  # studies.create.KINDS, without importing it at start


def add_parsers(sub: Any) -> None:
    p = sub.add_parser("study", help="human studies over finished runs: create one (annotator links), its live "
                                     "agreement, its export as a ratings or votes CSV")
    actions = p.add_subparsers(dest="action", required=True)
    c = actions.add_parser("create", help="make a study from runs and print the annotators' links")
    c.add_argument("runs", nargs="+", type=Path, help="run folders (<workspace>/runs/<run>); pairwise: two or more")
    c.add_argument("--kind", choices=KINDS, required=True,
                   help="pairwise: A / B / both good / both bad; rating: a judge metric's scales (--metric); "
                        "checklist: the yes/no questions the judge answered item by item; categorical: the judge's "
                        "answer fields of fixed values (--metric)")
    c.add_argument("--metric", default=None, help="the judge metric whose questions people answer, in its own words "
                                                   "(`faceedit-bench plugins` lists the judge metrics); checklist: "
                                                   "default the run's only one")
    c.add_argument("--items", type=int, default=None, help="how many items (default: all), balanced over editors "
                                                           "and demographic groups")
    c.add_argument("--annotators", type=int, default=2, help="how many annotator links (default 2)")
    c.add_argument("--per-item", type=int, default=2, help="annotators per item (default 2)")
    c.add_argument("--gold", type=int, default=2, help="attention-check items every annotator answers (default 2)")
    c.add_argument("--seed", type=int, default=0)
    c.add_argument("--title", default=None)
    c.add_argument("--workspace", type=Path, default=None, help="where the study is kept (default: the runs' own)")
    c.set_defaults(func=_create)
    ls = actions.add_parser("list", help="the studies of a workspace")
    ls.add_argument("workspace", nargs="?", type=Path, default=None,
                    help="the workspace (default: FACEEDIT_BENCH_HOME or .faceedit_bench)")
    ls.set_defaults(func=_list)
    for name, func, text in (("results", _results, "progress, attention checks and agreement as the answers stand"),
                             ("export", _export, "write the answers in the layout the analysis commands read "
                                                 "(ratings, votes, annotations, answers) and print its path"),
                             ("add-annotators", _add, "N more annotators, who share the items once more")):
        a = actions.add_parser(name, help=text)
        a.add_argument("study", help="the study's id (s-...)")
        if name == "add-annotators":
            a.add_argument("n", type=int)
        if name == "results":
            a.add_argument("--json", action="store_true")
        a.add_argument("--workspace", type=Path, default=None,
                       help="the workspace (default: FACEEDIT_BENCH_HOME or .faceedit_bench)")
        a.set_defaults(func=func)
