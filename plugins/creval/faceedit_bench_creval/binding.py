"""The question sets of a run: ``analysis.creval.questions=[...]`` loaded through the registered loaders and bound to
the ``creval`` judge metric before anything runs (METHODOLOGY §5.3), and the run's CREval failure
policy (``analysis.creval.on_failure``) bound to ``creval`` and ``creval_face``: the ``creval`` report
section's ``prepare`` (:mod:`faceedit_bench_creval.section`).

An entry is ``<loader>:<path>`` or a bare path: a ``.json`` file is read by the ``file`` loader, a folder
by ``creval_bench`` (CREval-Bench's published layout). A selected ``creval`` metric without question sets,
or question sets without a ``creval`` metric, is a configuration error that says how to fix it.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from faceedit_bench.api import ConfigError, FaceEditBenchError, TestSet
from faceedit_bench.api.judging import JudgeMetric
from faceedit_bench_creval.metric import bind_question_sets, with_policy
from faceedit_bench_creval.questions import QuestionSet

CREVAL = "creval"
CREVAL_FACE = "creval_face"


def resolve_entry(entry: str) -> tuple[str, str]:
    loader, sep, path = entry.partition(":")
    if sep and loader.isidentifier() and not Path(entry).expanduser().exists():
        return loader, path
    return ("file" if entry.endswith(".json") else "creval_bench"), entry


#: A registered object by kind and name: ``load("question_sets", "file")`` is the ``file`` loader.
Load = Callable[[str, str], Any]


def load_question_sets(load: Load, entries: Sequence[str]) -> list[QuestionSet]:
    sets = []
    for entry in entries:
        loader, path = resolve_entry(str(entry))
        if not Path(path).expanduser().exists():
            raise ConfigError(f"analysis.creval.questions entry {entry!r}: {path} does not exist. Give a question-set file "
                              "(faceedit-bench questions generate writes one) or a CREval-Bench folder.")
        try:
            sets.append(load("question_sets", loader)(path))
        except FaceEditBenchError as exc:
            raise ConfigError(f"analysis.creval.questions entry {entry!r}: {exc}") from exc
    return sets


def bind_questions(load: Load, metrics: list[JudgeMetric], entries: Sequence[str],
                   testset: TestSet, on_failure: str = "exclude") -> tuple[list[JudgeMetric], list[QuestionSet]]:
    """``metrics`` with ``creval`` bound to the run's question sets, both CREval metrics to the failure
    policy ``on_failure``, and those sets."""
    metrics = [with_policy(m, on_failure) if m.name == CREVAL_FACE else m for m in metrics]
    selected = any(m.name == CREVAL for m in metrics)
    if entries and not selected:
        raise ConfigError(f"analysis.creval.questions={list(entries)} is given but the judge metric creval is not selected; add it "
                          "(e.g. judge_metrics=[creval]) or drop analysis.creval.questions")
    if not selected:
        return metrics, []
    if not entries:
        raise ConfigError("the judge metric creval answers frozen question sets; name them with "
                          "analysis.creval.questions=[<file.json or CREval-Bench folder>] (faceedit-bench questions generate writes "
                          "one), or use creval_face for taxonomy-bound face test sets")
    sets = load_question_sets(load, entries)
    asked = {(i.session_id, i.k) for q in sets for i in q.items}
    if not any((s.session_id, step.k) in asked for s in testset.sessions for step in s.steps):
        raise ConfigError(f"no step of test set {testset.name} has questions in {', '.join(map(str, entries))}: the "
                          "question sets were written for another test set (their items name its sessions)")
    return [bind_question_sets(m, sets, on_failure) if m.name == CREVAL else m for m in metrics], sets


def describe_sets(sets: Sequence[QuestionSet]) -> list[dict[str, Any]]:
    return [q.describe() for q in sets]
