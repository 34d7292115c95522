"""The public API, topic **judging**: judge metrics (``faceedit_register_judge_metrics``), their prompts and
conditions, a judge asked outside a run, judge panels, and the test sets and taxonomy questions are asked about.

* :class:`JudgeMetric` (with what a declaration is written with: ``JudgeMetric.Value``, each value it declares
  (name, direction, unit, bounds, label, how a session aggregates it); ``JudgeMetric.Question``, the questions
  its ``reduce_questions`` receives; ``JudgeMetric.NotAsked``, raised by its ``face_fields``;
  ``JudgeMetric.step_fields``, its ``fields``' default),
  :class:`PromptTemplate` (a versioned prompt with its answer's schema), :class:`ConditionTemplate` (prompt
  conditions);
* :class:`JudgeSession` (``with JudgeSession.open(judge, name, workspace) as session``): a judge asked with the
  run's service, ledger cache and image store, in a workspace of a command's own;
* a judge panel's answer carries its rule (``answer.rule``): ``answer.rule.number(values, rounding)`` is the
  panel's number under each rounding, to recombine stored member answers;
* test sets: :func:`load_testset` (by name, by path, or a frozen test set's parsed JSON, validated),
  :class:`PublishedSample` (the items a paper ran, ``faceedit_register_samples``), :class:`Taxonomy`
  (``Taxonomy.builtin()``: the edits' taxonomy; ``Taxonomy.TESTSETS``: the builtin test sets bound to it).
"""

from __future__ import annotations

from faceedit_bench.run.sampling import PublishedSample
from faceedit_bench.scoring.judge.condition_templates import ConditionTemplate
from faceedit_bench.scoring.judge.declared import JudgeMetric
from faceedit_bench.scoring.judge.outside_run import JudgeSession
from faceedit_bench.scoring.judge.service import PromptTemplate
from faceedit_bench.taxonomy import Taxonomy
from faceedit_bench.testsets import load_testset

__all__ = ["ConditionTemplate", "JudgeMetric", "JudgeSession",
           "PromptTemplate", "PublishedSample", "Taxonomy", "load_testset"]
