"""``faceedit-bench human report``: a ratings CSV (docs/human_evaluation.md) analysed, alone or against the
runs that made the rated outputs.

    faceedit-bench human report ratings.csv
    faceedit-bench human report ratings.csv --run .faceedit_bench/runs/flux2_dev-diagnostic-... --metric sc

Writes ``human_agreement.json`` and ``human_agreement.html`` (into ``--out``, default: the first run's folder,
else the current folder) and prints the tables. With runs, each run's report.json gains the section
``human_agreement`` (its report.html is rewritten) and, when the run was tracked, its tracker run gets the
``human_*`` metrics (the ``faceedit_log_run_metrics`` hook).
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from faceedit_bench.api import FaceEditBenchError, atomic_open
from faceedit_bench.api.sections import study_csv
from faceedit_bench_audit.human.ratings import read_ratings
from faceedit_bench_audit.human.report import format_human, human_section, render_human_html
from faceedit_bench_audit.human.runs import load_rated_runs
from faceedit_bench_audit.human.to_runs import SECTION, add_to_run, log_to_trackers
from faceedit_bench_audit.winobias.cli import add_actions


def _pairs(items: Sequence[str]) -> dict[str, str]:
    out = {}
    for item in items:
        axis, sep, value = item.partition("=")
        if not sep or not axis or not value:
            raise FaceEditBenchError(f"--vlm-axis {item!r}: write AXIS=VALUE, e.g. --vlm-axis skin=skin_tone")
        out[axis] = value
    return out


def _command(args: argparse.Namespace) -> int:
    low, high = args.scale
    ratings = read_ratings(study_csv(args.ratings), scale=(low, high))
    runs = load_rated_runs(args.run)
    section = human_section(ratings, runs, metrics=args.metric, against=args.against, vlm_axes=_pairs(args.vlm_axis),
                            confidence=args.confidence, alpha=args.alpha)
    out = args.out or (runs[0].run_dir if runs else Path.cwd())
    out.mkdir(parents=True, exist_ok=True)
    with atomic_open(out / f"{SECTION}.json", "w", encoding="utf-8") as fh:
        json.dump(section, fh, indent=2, default=str)
    with atomic_open(out / f"{SECTION}.html", "w", encoding="utf-8") as fh:
        fh.write(render_human_html(section))
    for run in runs:
        add_to_run(run, section)
    notes = log_to_trackers(runs, section, args.tracking_uri) if runs and not args.no_tracking else []
    print(json.dumps(section, indent=2, default=str) if args.json else format_human(section))
    for line in [*notes, f"wrote {out / (SECTION + '.json')} and {out / (SECTION + '.html')}"]:
        print(line, file=sys.stderr)
    return 0


def add_parser(sub: Any) -> None:
    p = sub.add_parser("human", help="human evaluation: import a ratings CSV, reliability (Fleiss' kappa, "
                                     "Krippendorff's alpha), tests, VLM - human, agreement of metrics with people")
    actions = p.add_subparsers(dest="action", required=True)
    r = actions.add_parser("report", aliases=["import"],
                           help="analyse a ratings CSV, alone or against the runs that made the outputs "
                                "(and add it to those runs)")
    r.add_argument("ratings", type=Path, help="CSV: item,rater,axis,score[,condition,editor,race,gender,age_bin], "
                                             "or a rating study: study:<id>[@<workspace>] (docs/studies.md)")
    r.add_argument("--run", action="append", type=Path, default=[], metavar="RUN_DIR",
                   help="a run that made rated outputs (<workspace>/runs/<run>); repeat for several editors")
    r.add_argument("--metric", action="append", default=[], metavar="NAME",
                   help="a run metric to check against people (sc, creval, drop_fss ...); repeatable")
    r.add_argument("--against", default="edit_success", metavar="AXIS",
                   help="the human axis the --metric values are compared with (default: edit_success)")
    r.add_argument("--scale", type=float, nargs=2, default=(1.0, 5.0), metavar=("LOW", "HIGH"),
                   help="the rating scale (default 1 5)")
    r.add_argument("--vlm-axis", action="append", default=[], metavar="AXIS=VALUE",
                   help="compare the human AXIS with the run's judge value VALUE (default: the value named like the "
                        "axis), e.g. --vlm-axis skin=skin_tone; repeatable")
    r.add_argument("--confidence", type=float, default=0.95, help="confidence level of the intervals")
    r.add_argument("--alpha", type=float, default=0.05, help="family-wise level of the Holm correction")
    r.add_argument("--out", type=Path, help="folder for human_agreement.json/.html (default: the first run's folder)")
    r.add_argument("--tracking-uri", help="tracker store of the runs (default: each run's own configuration)")
    r.add_argument("--no-tracking", action="store_true", help="do not log the human_* metrics to a tracker")
    r.add_argument("--json", action="store_true", help="print the section as JSON instead of the tables")
    r.set_defaults(func=_command)
    add_actions(actions)
