"""Builtin plugin: the CREval judge metrics (METHODOLOGY §5) with their report sections, question-set
loaders, the CREval-Bench dataset and test set, and the ``questions`` command.

``creval`` answers frozen question sets (``questions=[...]``); ``creval_face`` (an EXTENSION, §5.4)
answers questions written from the taxonomy for taxonomy-bound face sessions.
"""

from __future__ import annotations

from typing import Any

from faceedit_bench import hookimpl
from faceedit_bench.scoring.creval.metric import CREVAL_FACE_METRIC, CREVAL_METRIC


@hookimpl
def faceedit_register_judge_metrics(register: Any) -> None:
    register("creval", CREVAL_METRIC, description="CREval QA scoring of frozen question sets: IF/VC/VQ, overall "
                                           "0.4/0.4/0.2, x100 (select the sets with questions=[...]).")
    register("creval_face", CREVAL_FACE_METRIC, description="EXTENSION: CREval QA scoring of taxonomy-bound face steps "
                                                     "with questions from the taxonomy, x100.")


def load_bench_questions(path: str):  # noqa: ANN201 - returns a QuestionSet
    from faceedit_bench.scoring.creval.bench import read_bench

    return read_bench(path)[1]


def load_file_questions(path: str):  # noqa: ANN201 - returns a QuestionSet
    from faceedit_bench.scoring.creval.questions import load_question_set

    return load_question_set(path)


@hookimpl
def faceedit_register_question_sets(register: Any) -> None:
    register("file", load_file_questions, description="a frozen question-set JSON file (faceedit-bench questions "
                                                      "generate writes one)")
    register("creval_bench", load_bench_questions, description="CREval-Bench's published questions "
                                                               "(bench/questiions_all/{IF,VC,VQ}/<item>.json)")


@hookimpl
def faceedit_register_datasets(register: Any) -> None:
    register("creval_bench", "faceedit_bench.builtin.datasets.creval_bench:CrevalBenchDataset",
             description="CREval-Bench's source images in the published layout (not faces: no identity metrics)")


@hookimpl
def faceedit_register_testsets(register: Any) -> None:
    register("creval_bench", "faceedit_bench.builtin.datasets.creval_bench:creval_bench_testset",
             description="CREval-Bench: one single-edit session per item, tied to its image")


@hookimpl
def faceedit_register_sections(register: Any) -> None:
    register("creval", "faceedit_bench.report.creval_section:CREVAL",
             description="CREval QA scores of frozen question sets (analysis.creval)")
    register("creval_face", "faceedit_bench.report.creval_section:CREVAL_FACE",
             description="EXTENSION: CREval QA scores of taxonomy-bound face sessions")


@hookimpl
def faceedit_register_commands(register: Any) -> None:
    register("questions", "faceedit_bench.run.questions_cli:add_parser",
             description="question sets for the creval judge metric: generate, show, check, score a folder")
