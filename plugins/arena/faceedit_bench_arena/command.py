"""`faceedit-bench arena run RUN RUN ... --judge NAME` and `faceedit-bench arena verify DIR`."""

from __future__ import annotations

import json
import sys
from importlib import resources
from pathlib import Path
from typing import Any

# Only the standard library at import: every faceedit-bench invocation builds this parser.
SCHEMA = "arena.schema.json"


def add_parser(sub: Any) -> None:
    arena = sub.add_parser("arena", help="rank editors of stored runs by position-swapped pairwise judge battles",
                           description="faceedit-bench arena run RUN RUN ... --judge NAME --out DIR; "
                                       "faceedit-bench arena verify DIR. docs/arena.md explains every number.")
    commands = arena.add_subparsers(dest="arena_command", required=True)
    add_verify_parser(commands)
    p = commands.add_parser("run", help="judge battles between the editors of stored runs and rate them",
                       description="Judge battles between the editors of stored runs (same test set, one "
                                   "workspace), both orders each, and rate them (Bradley-Terry, Elo scale, "
                                   "identity-bootstrap CIs). docs/arena.md explains every number.")
    p.add_argument("runs", nargs="+", type=Path, help="run folders (<workspace>/runs/<run>), one per editor")
    p.add_argument("--judge", required=True,
                   help="a registered judge, e.g. openai or gemini, or panel (members in --judge-param members=...)")
    p.add_argument("--judge-param", action="append", default=[], metavar="KEY=VALUE",
                   help="a parameter of the judge (YAML value), repeatable")
    p.add_argument("--budget", type=int, default=2000, help="judge calls at most (two per battle; default 2000)")
    p.add_argument("--batch", type=int, default=100, help="battles per adaptive round (default 100)")
    p.add_argument("--target-width", type=float, default=None, help="stop when every CI is this narrow (Elo)")
    p.add_argument("--anchor", default=None, help="the editor rated 1000 (e.g. identity); default: mean 1000")
    p.add_argument("--policy", choices=("loss", "exclude"), default="loss",
                   help="a step one editor refused or failed: its loss, or left out (both are reported)")
    p.add_argument("--ties", choices=("half_win", "davidson"), default="half_win",
                   help="ties in the ratings: half a win each (default), or Davidson's tie model (fits its ν)")
    p.add_argument("--resamples", type=int, default=1000, help="bootstrap resamples of identities")
    p.add_argument("--votes", type=Path, default=None,
                   help="people's votes (CSV: model_a, model_b, vote or winner, voter_id or judge[, input_id, "
                        "identity, labels], or a pairwise study: study:<id>[@<workspace>]): their ratings and the "
                        "judge-human agreement are added")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--no-attach", action="store_true",
                   help="do not add the arena to the runs' report.json, report.html and tracker runs")
    p.add_argument("--tracking-uri", default=None, help="the tracker of the runs (default: each run's own)")
    p.add_argument("--out", type=Path, required=True, help="folder for arena.json and battles.jsonl")
    p.set_defaults(func=main)


def schema() -> dict:
    return json.loads((resources.files("faceedit_bench_arena") / "schemas" / SCHEMA).read_text(encoding="utf-8"))


def main(args: Any) -> int:
    import jsonschema

    from faceedit_bench.api import atomic_open
    from faceedit_bench.api.sections import key_values, study_csv
    from faceedit_bench_arena.arena import ArenaSettings, run_arena
    from faceedit_bench_arena.console import summary
    from faceedit_bench_arena.human_votes import identity_warning, read_votes
    from faceedit_bench_arena.panel import arena_judges
    from faceedit_bench_arena.verify import LOG, log_record

    votes = read_votes(study_csv(args.votes)) if args.votes is not None else None  # checked before any call
    if votes is not None and identity_warning(votes):
        print(f"warning: {args.votes}: {identity_warning(votes)}", file=sys.stderr)
    judges = arena_judges(args.judge, key_values(args.judge_param, "--judge-param"))  # every member checked before any call
    settings = ArenaSettings(budget_calls=args.budget, batch=args.batch, target_width=args.target_width,
                             anchor=args.anchor, policy=args.policy, n_resamples=args.resamples, seed=args.seed,
                             ties=args.ties)
    part, log = run_arena(args.runs, judges, args.judge, settings)
    if votes is not None:
        from faceedit_bench_arena.arena import human_part

        part["human"] = human_part(part, log, votes, settings)
    log_text = "".join(json.dumps(b, sort_keys=True) + "\n" for b in log)
    part["battle_log"] = log_record(log_text)
    jsonschema.validate(part, schema())
    args.out.mkdir(parents=True, exist_ok=True)
    with atomic_open(args.out / LOG, "w", encoding="utf-8") as fh:
        fh.write(log_text)
    with atomic_open(args.out / "arena.json", "w", encoding="utf-8") as fh:
        json.dump(part, fh, indent=1, sort_keys=True)
    print(summary(part))
    if not args.no_attach:
        from faceedit_bench_arena.attach import attach
        from faceedit_bench_arena.stored_runs import build_pool

        for line in attach(part, build_pool(args.runs).runs, args.tracking_uri,
                           files=(args.out / "arena.json", args.out / LOG)):
            print(line)
    return 0


def add_verify_parser(sub: Any) -> None:
    p = sub.add_parser("verify", help="re-check an arena's battle log hash and recompute its ratings",
                       description="Checks battles.jsonl against the sha256 in arena.json and recomputes every "
                                   "rating from the log; exit code 1 on any mismatch.")
    p.add_argument("folder", type=Path, help="the folder the arena command wrote (arena.json, battles.jsonl)")
    p.set_defaults(func=verify_main)


def verify_main(args: Any) -> int:
    from faceedit_bench_arena.verify import verify

    problems = verify(args.folder)
    if problems:
        print(f"{args.folder}: {len(problems)} mismatch(es):\n  " + "\n  ".join(problems[:30]))
        return 1
    print(f"{args.folder}: verified (log hash and every rating recomputed from the log)")
    return 0
