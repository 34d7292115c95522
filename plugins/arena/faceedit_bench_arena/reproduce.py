"""``faceedit-bench reproduce genai-arena``, ``genai-bench`` and ``mmrb2``: GenAI-Arena's leaderboard and
GenAI-Bench's judge accuracies recomputed from their released raw data, and a judge's answers on MMRB2's pairs
scored against its labels (docs/reproductions.md)."""

from __future__ import annotations

from importlib import resources
from pathlib import Path
from typing import Any

# Only the standard library at import: every faceedit-bench invocation builds this parser.
DATA = "data"
ARENA_SOURCE = "TIGER-AI-Lab/GenAI-Arena: arena_elo/clean_battle_20240220.json @ e4e4637, " \
               "arena_elo/results/20240220/image_editing_leaderboard.csv @ a3221a7"
BENCH_SOURCE = "TIGER-AI-Lab/GenAI-Bench @ f0b0334: results/image_edition/<judge>/pairwise.jsonl, README"


def shipped(*parts: str) -> Path:
    return Path(str(resources.files("faceedit_bench_arena").joinpath(DATA, *parts)))


def _common(p: Any) -> None:
    p.add_argument("--expect", type=Path, default=None,
                   help="CSV name,value: compare with these values (each to its printed precision) instead")
    p.add_argument("--json", type=Path, default=None, help="also write the table as JSON to this file")


def add_genai_arena(sub: Any) -> None:
    p = sub.add_parser("genai-arena", help="GenAI-Arena's image-editing Elo leaderboard from its battle log",
                       description="GenAI-Arena's image-editing leaderboard (Elo, anonymous and all battles) "
                                   "recomputed from its battle log through the votes reader and the arena's "
                                   "rating code with GenAI-Arena's own method (l2_logistic), beside the published "
                                   "leaderboard. Your own log and leaderboard in the same layouts: --log, "
                                   "--leaderboard.")
    p.add_argument("--log", type=Path, default=None,
                   help="a battle log (JSON array: model_a, model_b, winner, judge, anony, tstamp); default: the "
                        "shipped clean_battle_20240220.json")
    p.add_argument("--leaderboard", type=Path, default=None,
                   help="a leaderboard CSV (Model, Arena Elo rating (anony), Arena Elo rating (full)) to compare "
                        "with, within 0.1 Elo; default: the shipped image-editing one with the shipped log")
    p.add_argument("--task", choices=("image_editing", "t2i_generation"), default="image_editing",
                   help="which battles of the log are rated (by the models' imagenhub_*_edition/_generation names)")
    p.add_argument("--method", choices=("l2_logistic", "default"), default="l2_logistic",
                   help="l2_logistic: GenAI-Arena's fit (default here); default: the project's own ratings")
    _common(p)
    p.set_defaults(func=genai_arena_main)


def genai_arena_main(args: Any) -> int:
    from faceedit_bench.api.statistics import Reproduction
    from faceedit_bench_arena import genai_arena as ga

    reproduction = Reproduction(f"GenAI-Arena {args.task} leaderboard (Elo)", args.expect)  # before any work
    log_path = args.log or shipped("genai_arena", "clean_battle_20240220.json")
    published = args.log is None and args.task == "image_editing"  # the shipped leaderboard rates only these
    board_path = args.leaderboard or (shipped("genai_arena", "image_editing_leaderboard.csv") if published else None)
    board = ga.read_leaderboard(board_path) if board_path is not None else None
    log = ga.read_battle_log(log_path, args.task)
    ga.add_numbers(reproduction, ga.recompute(log, args.method), board)
    notes = [f"battles: {len(log.votes)} of this task ({len(log.anony)} anonymous), {log.other_task} of the other "
             f"task left out; method: {args.method}; tolerance 0.1 Elo (the published fit stops at L-BFGS tol 1e-4)"]
    source = ARENA_SOURCE if published and args.leaderboard is None else f"{log_path} vs {board_path or args.expect}"
    return reproduction.report(source, args.json, notes)


#: GenAI-Bench's README prints round(accuracy * 100, 2) (its show_results.py), trailing zeros dropped ("25.9").
README_TOLERANCE = 0.005


def add_genai_bench(sub: Any) -> None:
    p = sub.add_parser("genai-bench", help="GenAI-Bench's image-editing judge accuracies from its results files",
                       description="Every judge's image-editing accuracy with ties (GenAI-Bench's rule) from its "
                                   "released results/image_edition/<judge>/pairwise.jsonl, beside the README's "
                                   "'Image Editing' column. Your own results folder in the same layout: --results.")
    p.add_argument("--results", type=Path, default=None,
                   help="a folder of <judge>/pairwise.jsonl; default: the shipped GenAI-Bench results")
    _common(p)
    p.set_defaults(func=genai_bench_main)


def genai_bench_main(args: Any) -> int:
    import csv

    from faceedit_bench.api.statistics import Reproduction
    from faceedit_bench_arena.genai_arena import PublishedFileError
    from faceedit_bench_arena.human_votes import VotesError, genai_bench_accuracy

    reproduction = Reproduction("GenAI-Bench image editing: judge–human accuracy with ties (%)", args.expect)
    folder = args.results or shipped("genai_bench", "image_edition")
    files = sorted(Path(folder).glob("*/pairwise.jsonl"))
    if not files:
        raise PublishedFileError(f"{folder}: no <judge>/pairwise.jsonl files "
                                 "(GenAI-Bench's results/image_edition layout)")
    published: dict[str, str] = {}
    if args.results is None:
        with shipped("genai_bench", "readme_image_editing.csv").open(encoding="utf-8") as f:
            published = {row["judge"]: row["image_editing"] for row in csv.DictReader(f)}
    notes = []
    for path in files:
        try:
            result = genai_bench_accuracy(path)
        except VotesError as exc:
            raise PublishedFileError(str(exc)) from None
        except (OSError, UnicodeDecodeError, TypeError) as exc:  # unreadable, not UTF-8, a vote of another type
            raise PublishedFileError(f"{path}: cannot be read as GenAI-Bench results ({exc})") from None
        judge, accuracy = path.parent.name, result["accuracy_with_ties"]
        text = published.get(judge)
        reproduction.add(judge, None if accuracy is None else 100.0 * accuracy, float(text) if text else None,
                         README_TOLERANCE if text else None)
        notes.append(f"{judge}: {result['items']} items, {result['unparsed']} judge answers unparsed (count as wrong)")
    return reproduction.report(str(args.expect or (BENCH_SOURCE if args.results is None else folder)), args.json,
                               notes)


#: MMRB2's README prints the example output of its sample predictions for the editing task: 55.50%. It is
#: compared when the two files are exactly the published ones (sha256 of each, facebookresearch/MMRB2 @ 7ff0552).
MMRB2_SAMPLE = {"labels": "c4c500c75742be4cafe0e48a6a27ee22089125f599baf970ccf783932cab416b",
                "answers": "a4c176cbd4e55293a03160776278abb8755ee9bb07b0524fd0f8e17cf08c7913",
                "published": "55.50"}


def add_mmrb2(sub: Any) -> None:
    p = sub.add_parser("mmrb2", help="a judge's answers on MMRB2's image-editing pairs, scored by MMRB2's rule",
                       description="A judge's answers (MMRB2's predictions layout: both orders of each pair) "
                                   "scored against MMRB2's expert labels by MMRB2's rule (each order one trial). "
                                   "MMRB2's data are CC BY-NC 4.0 and are not shipped: give its files. With "
                                   "MMRB2's own sample predictions the README's 55.50% is compared.")
    p.add_argument("--labels", type=Path, required=True,
                   help="MMRB2's benchmark/edit_response_only.json (or the built edit.json)")
    p.add_argument("--answers", type=Path, required=True,
                   help="the judge's answers: {pair id: {forward: [{judgement}], reverse: [{judgement}]}}")
    _common(p)
    p.set_defaults(func=mmrb2_main)


def mmrb2_main(args: Any) -> int:
    import hashlib

    from faceedit_bench.api.statistics import Reproduction
    from faceedit_bench_arena.mmrb2 import accuracy, read_answers, read_labels

    reproduction = Reproduction("MMRB2 image editing: judge accuracy against expert labels (%)", args.expect)
    result = accuracy(read_labels(args.labels), read_answers(args.answers))
    sample = all(hashlib.sha256(Path(getattr(args, k)).read_bytes()).hexdigest() == MMRB2_SAMPLE[k]
                 for k in ("labels", "answers"))
    percent = lambda v: None if v is None else 100.0 * v  # noqa: E731
    reproduction.add("edit/accuracy", percent(result["accuracy"]), float(MMRB2_SAMPLE["published"]) if sample else None,
                     0.005 if sample else None)
    reproduction.add("edit/consistent_accuracy", percent(result["consistent_accuracy"]))
    counted = [f"{k}: {v}" for k, v in sorted(result["counts"].items())]
    if result["answers_for_unknown_pairs"]:
        counted.append(f"answers for pairs not in the labels (ignored): {result['answers_for_unknown_pairs']}")
    notes = ["; ".join([f"{result['pairs']} labelled pairs, {result['trials']} judgements scored, "
                        f"{result['consistent_pairs']} pairs judged alike in both orders", *counted])]
    source = "facebookresearch/MMRB2 README (sample_task2_edit.json)" if sample else str(args.expect or args.answers)
    return reproduction.report(source, args.json, notes)
