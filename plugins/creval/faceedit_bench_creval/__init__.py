"""faceedit-bench-creval: paper (c), CREval's question-answer scoring (METHODOLOGY §5, docs/creval.md), as a
protocol package that plugs in through the public API only.

It registers the judge metrics ``creval`` (frozen question sets, ``analysis.creval.questions=[...]``) and
``creval_face`` (an EXTENSION, §5.4: questions written from the taxonomy for taxonomy-bound face sessions),
their report sections, the question-set loaders ``file`` and ``creval_bench``, the CREval-Bench dataset and
test set, the ``questions`` command, its presets (``experiment=creval``, ``judge=creval_gpt4o``, ...) and its
fidelity table. Loading this module is cheap: every target is imported when it is used.
"""

from __future__ import annotations

from importlib import resources
from typing import Any

from faceedit_bench.api import hookimpl

__all__ = ["faceedit_config_searchpath", "faceedit_fidelity_tables", "faceedit_register_commands",
           "faceedit_register_datasets", "faceedit_register_judge_metrics", "faceedit_register_question_sets",
           "faceedit_register_sections", "faceedit_register_testsets"]


@hookimpl
def faceedit_register_judge_metrics(register: Any) -> None:
    register("creval", "faceedit_bench_creval.metric:CREVAL_METRIC",
             description="CREval QA scoring of frozen question sets: IF/VC/VQ, overall 0.4/0.4/0.2, x100 (select the "
                         "sets with analysis.creval.questions=[...]).")
    register("creval_face", "faceedit_bench_creval.metric:CREVAL_FACE_METRIC",
             description="EXTENSION: CREval QA scoring of taxonomy-bound face steps with questions from the taxonomy, "
                         "x100.")


def load_bench_questions(path: str):  # noqa: ANN201 - returns a QuestionSet
    from faceedit_bench_creval.bench import read_bench

    return read_bench(path)[1]


def load_file_questions(path: str):  # noqa: ANN201 - returns a QuestionSet
    from faceedit_bench_creval.questions import load_question_set

    return load_question_set(path)


@hookimpl
def faceedit_register_question_sets(register: Any) -> None:
    register("file", load_file_questions, description="a frozen question-set JSON file (faceedit-bench questions "
                                                      "generate writes one)")
    register("creval_bench", load_bench_questions, description="CREval-Bench's published questions "
                                                               "(bench/questiions_all/{IF,VC,VQ}/<item>.json)")


@hookimpl
def faceedit_register_datasets(register: Any) -> None:
    register("creval_bench", "faceedit_bench_creval.dataset:CrevalBenchDataset",
             description="CREval-Bench's source images in the published layout (not faces: no identity metrics)")


@hookimpl
def faceedit_register_testsets(register: Any) -> None:
    register("creval_bench", "faceedit_bench_creval.dataset:creval_bench_testset",
             description="CREval-Bench: one single-edit session per item, tied to its image")


@hookimpl
def faceedit_register_sections(register: Any) -> None:
    register("creval", "faceedit_bench_creval.section:CREVAL",
             description="CREval QA scores of frozen question sets (analysis.creval)")
    register("creval_face", "faceedit_bench_creval.section:CREVAL_FACE",
             description="EXTENSION: CREval QA scores of taxonomy-bound face sessions")


@hookimpl
def faceedit_register_commands(register: Any) -> None:
    register("questions", "faceedit_bench_creval.cli:add_parser",
             description="question sets for the creval judge metric: generate, show, check, score a folder")


@hookimpl
def faceedit_config_searchpath() -> list[str]:
    """The presets: experiment=creval, judge=creval_gpt4o, dataset=creval_bench, testset=creval_bench."""
    return ["pkg://faceedit_bench_creval.conf"]


@hookimpl
def faceedit_fidelity_tables() -> list[Any]:
    return [resources.files("faceedit_bench_creval") / "fidelity" / "creval.yaml"]
