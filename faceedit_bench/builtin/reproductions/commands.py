"""``faceedit-bench reproduce viescore``. Only the standard library at import: the parser is built on every
invocation."""

from __future__ import annotations

from importlib import resources
from pathlib import Path
from typing import Any

VIESCORE_SOURCE = ("TIGER-AI-Lab/VIEScore @ 2cbea4e: paper_implementation/_answers/results_gemini_0shot, "
                   "_human_annotations/ImagenHub_human_eval_results, analyze_json.ipynb")
#: The notebook prints float(f"{r:#.4f}"): four decimals, trailing zeros dropped.
NOTEBOOK_TOLERANCE = 0.00005


def published(*parts: str) -> Path:
    return Path(str(resources.files("faceedit_bench").joinpath("data", "published", *parts)))


def _common(p: Any) -> None:
    p.add_argument("--expect", type=Path, default=None,
                   help="CSV name,value: compare with these values (each to its printed precision) instead")
    p.add_argument("--json", type=Path, default=None, help="also write the table as JSON to this file")


def add_viescore(sub: Any) -> None:
    p = sub.add_parser("viescore", help="VIEScore's judge–human Spearman correlations on ImagenHub's ratings",
                       description="Per editor, Spearman's rho between a judge's SC, PQ and O answers and "
                                   "ImagenHub's three raters, and the task averages as VIEScore's notebook takes "
                                   "them (tanh of the mean r) beside the proper Fisher-z average. Default: the "
                                   "shipped Gemini 0-shot answers against the notebook's printed numbers; your own "
                                   "judge's answers and ratings in the same layouts: --answers, --ratings.")
    p.add_argument("--answers", type=Path, default=None,
                   help="a judge's answers: <task>/<editor>/{SC,PQ}.json (VIEScore's _answers/results_<judge> "
                        "layout); default: the shipped results_gemini_0shot")
    p.add_argument("--ratings", type=Path, default=None,
                   help="the raters' TSVs: <task>/*_rater<k>.tsv; default: the shipped ImagenHub ratings")
    p.add_argument("--exact", action="store_true",
                   help="average the raters exactly (ties kept whatever the files' order) instead of as the "
                        "notebook did (floating point, in the order it read the files)")
    _common(p)
    p.set_defaults(func=viescore_main)


def viescore_main(args: Any) -> int:
    import csv

    from faceedit_bench.analysis.published import Number, read_expect, report, with_expected
    from faceedit_bench.builtin.reproductions.viescore import ASPECTS, viescore_table

    expected = read_expect(args.expect) if args.expect is not None else None
    orders = {}
    if args.ratings is None:  # the shipped ratings, read in the order that gives the notebook's numbers
        with published("viescore", "rater_order.csv").open(encoding="utf-8") as f:
            orders = {row["task"]: row["files"].split() for row in csv.DictReader(f)}
    shipped = args.answers is None and args.ratings is None
    if shipped and expected is None:
        with published("viescore", "analyze_json_gemini_0shot.csv").open(encoding="utf-8") as f:
            expected = {r["name"]: (float(r["value"]), NOTEBOOK_TOLERANCE) for r in csv.DictReader(f)}
    answers = args.answers or published("viescore", "gemini_0shot")
    ratings = args.ratings or published("imagenhub_human_ratings")
    table = viescore_table(answers, ratings, orders, args.exact)
    numbers, notes = [], []
    for task, part in table.items():
        for editor, r in part.get("editors", {}).items():
            numbers += [Number(f"{task}/{editor}/{a}", r[a]) for a in ASPECTS]
            if r["unrated"]:
                notes.append(f"{task}/{editor}: {r['unrated']} answered images no rater rated (left out)")
        numbers += [Number(f"{task}/average/{a}", part["average"]["tanh_of_mean"][a]) for a in ASPECTS]
        numbers += [Number(f"{task}/average_fisher_z/{a}", part["average"]["fisher_z"][a]) for a in ASPECTS]
    if expected is not None:
        numbers = with_expected(numbers, expected)
    notes.append("average: tanh of the mean r, as the notebook; average_fisher_z: the proper average (not published)")
    source = str(args.expect) if args.expect else VIESCORE_SOURCE if shipped else f"{answers} vs {ratings}"
    return report("VIEScore: judge–human Spearman correlations", source, numbers, args.json, notes)


IMAGENHUB_SOURCE = "TIGER-AI-Lab/ImagenHub @ 439f72c: eval/human_ratings/<task>/*_rater<k>.tsv, AnalyzeHumanEval.ipynb"
#: The notebook prints float(f"{x:#.2f}"): two decimals, trailing zeros dropped.
IMAGENHUB_TOLERANCE = 0.005


def add_imagenhub_human(sub: Any) -> None:
    p = sub.add_parser("imagenhub-human", help="ImagenHub's human-evaluation table from its rater TSVs",
                       description="Per task and editor: the raters' mean SC, PQ and sqrt(SC*PQ), their spread "
                                   "over raters, and the raters' agreement (Fleiss' kappa, Krippendorff's alpha "
                                   "at the ordinal level), beside ImagenHub's printed table. Your own ratings in "
                                   "the same layout: --ratings.")
    p.add_argument("--ratings", type=Path, default=None,
                   help="the raters' TSVs: <task>/*_rater<k>.tsv; default: the shipped ImagenHub ratings")
    _common(p)
    p.set_defaults(func=imagenhub_human_main)


def imagenhub_human_main(args: Any) -> int:
    import csv

    from faceedit_bench.analysis.published import Number, read_expect, report, with_expected
    from faceedit_bench.builtin.reproductions.imagenhub import human_eval_table

    expected = read_expect(args.expect) if args.expect is not None else None
    if args.ratings is None and expected is None:
        with published("imagenhub_human_eval_table.csv").open(encoding="utf-8") as f:
            expected = {r["name"]: (float(r["value"]), IMAGENHUB_TOLERANCE) for r in csv.DictReader(f)}
    table = human_eval_table(args.ratings or published("imagenhub_eval_human_ratings"))
    numbers = [Number(f"{task}/{editor}/{column}", value) for task, editors in table.items()
               for editor, row in editors.items() for column, value in row.items()]
    if expected is not None:
        numbers = with_expected(numbers, expected)
    notes = ["kappa and alpha: the three raters image by image; undefined (—) where every rating is the same score"]
    source = str(args.expect) if args.expect else IMAGENHUB_SOURCE if args.ratings is None else str(args.ratings)
    return report("ImagenHub's human-evaluation table", source, numbers, args.json, notes)
