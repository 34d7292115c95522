"""Items of a ``categorical`` study: people answer the fields of a judge metric's answer that take fixed values
(:func:`~faceedit_bench.studies.questions.answer_fields`), about the images the judge saw, with the judge's
question filled in for the item exactly as the judge read it.

What an item needs is found when the study is made and kept with it:

- the images: those of the run judge's answer in the workspace ledger (every input the judge saw, in its
  order, e.g. two input people and the edited image), labelled as the judge's question labels them;
- the question's fields: the step of the run's test set (loaded as the run's ``config.yaml`` selects it, and
  refused when its content hash is not the run's), so fields from the step's metadata (a target role ...) read as the judge read them;
- the judge's answer to each field, for judge-human agreement (a panel whose members disagree on a field
  gives no answer to it).

A metric that judges a whole session (``over="session"``) is asked about the session's last step. An output the
judge has no answer about in the ledger, or whose question cannot be put, is not asked (counted).
"""

from __future__ import annotations

import string
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from faceedit_bench.errors import FaceEditBenchError
from faceedit_bench.report.compared_runs import load_run
from faceedit_bench.storage.judge_answers import JudgeRow, template_answers
from faceedit_bench.studies.items import Output, RunOutputs, count, item_id
from faceedit_bench.studies.questions import answer_fields


def load_metric(name: str) -> Any:
    from faceedit_bench.plugin.manager import current_plugins
    from faceedit_bench.scoring.judge.declared import JudgeMetric

    table = current_plugins().registry["judge_metrics"]
    if name not in table.names():
        raise FaceEditBenchError(f"--metric {name!r} is no registered judge metric; `faceedit-bench plugins` lists "
                                 "them")
    metric = table.get(name).load()
    if not isinstance(metric, JudgeMetric):
        raise FaceEditBenchError(f"judge metric {name!r} is not a JudgeMetric; fix the plugin that registers it")
    return metric


def _testset(report: dict[str, Any], run: RunOutputs) -> Any:
    """The run's test set as the run made it: the ``testset`` its ``config.yaml`` selects (a file's path kept
    there), else the one its report names (a builtin or a plugin's frozen set)."""
    from omegaconf import OmegaConf

    from faceedit_bench.config import ComponentConf
    from faceedit_bench.plugin.manager import current_plugins
    from faceedit_bench.run.components import create_component
    from faceedit_bench.testsets import load_testset

    config = run.run_dir / "config.yaml"
    if not config.is_file():
        return load_testset(str((report.get("testset") or {}).get("name")))
    selected = OmegaConf.to_container(OmegaConf.load(config)).get("testset") or {}  # type: ignore[union-attr]
    conf = ComponentConf(name=str(selected.get("name")), params=dict(selected.get("params") or {}))
    return create_component(current_plugins(), "testset", conf)[0]


def _sessions(report: dict[str, Any], run: RunOutputs) -> dict[str, Any]:
    recorded = report.get("testset") or {}
    try:
        testset = _testset(report, run)
    except (FaceEditBenchError, OSError, ValueError, KeyError) as exc:
        raise FaceEditBenchError(f"{run.run_dir}: its test set {recorded.get('name')!r} does not load ({exc}); a "
                                 "categorical study fills the judge's question from the test set's steps") from None
    if recorded.get("content_hash") and testset.content_hash != recorded["content_hash"]:
        raise FaceEditBenchError(f"{run.run_dir}: test set {testset.name} has changed since the run (content hash "
                                 f"{testset.content_hash[:12]}, the run's {recorded['content_hash'][:12]})")
    return {s.session_id: s for s in testset.sessions}


def _judge_answer(rows: Sequence[JudgeRow], names: Sequence[str]) -> dict[str, str]:
    """Each field's answer where every answer of the judge (a panel: every member) that holds it agrees."""
    given: dict[str, set[str]] = {}
    for row in rows:
        if row.outcome == "ok" and isinstance(row.value, dict):
            for name in names:
                if isinstance(row.value.get(name), str):
                    given.setdefault(name, set()).add(row.value[name])
    return {name: next(iter(values)) for name, values in given.items() if len(values) == 1}


def _fields(metric: Any, output: Output, session: Any, k: int) -> dict[str, str]:
    from faceedit_bench.records import Face
    from faceedit_bench.scoring.judge.declared import step_fields

    fields = dict(metric.fields(session, k) if metric.fields is not None else step_fields(session, k))
    if metric.face_fields is not None:
        fields.update(metric.face_fields(Face(output.face_id, output.identity, Path(), (), dict(output.groups)),
                                         session, k))
    return fields


def _labels(metric: Any, n: int) -> list[str]:
    labels = [label.strip().rstrip(":").strip() for label in metric.image_labels]
    return labels if len(labels) == n and all(labels) else [f"image {i}" for i in range(1, n + 1)]


def categorical_items(runs: Sequence[RunOutputs], metric_name: str, not_asked: dict[str, int]
                      ) -> list[dict[str, Any]]:
    from faceedit_bench.scoring.judge.declared import NotAsked

    metric = load_metric(metric_name)
    template = f"{metric.template.name}@{metric.template.version}"
    items = []
    for run in runs:
        report, _ = load_run(run.run_dir)
        answers = template_answers(run.run_dir.parent.parent, (report.get("components") or {}).get("judge"), template)
        if not answers:
            raise FaceEditBenchError(f"{run.run_dir}: the workspace ledger holds no answer of the run's judge to "
                                     f"{metric_name} ({template}); a categorical study asks what that judge answered")
        sessions = _sessions(report, run)
        for output in run.outputs:
            if metric.over == "session" and output.k != output.steps:
                continue  # the judge asked about the session's last image only
            rows, session = answers.get(output.output_hash), sessions.get(output.session_id)
            if not rows or session is None:
                count(not_asked, f"{run.editor}: no answer of the judge about the output in the ledger"
                      if not rows else f"{run.editor}: a session the test set does not hold")
                continue
            try:
                fields = _fields(metric, output, session, output.k)
            except NotAsked as exc:
                count(not_asked, str(exc))
                continue
            rows = [r for r in rows if r.images[0] == output.source_hash] or rows  # asked about this session's face
            rendered = string.Template(metric.template.text).safe_substitute(fields)
            questions = answer_fields(metric, rendered)
            images = rows[0].images
            shown = [list(pair) for pair in zip(_labels(metric, len(images)), images)]
            items.append({"item_id": item_id("categorical", output.editor, *output.where), "editor": output.editor,
                          **output.unit(), "metric": metric_name, "prompt": rendered, "images": dict(shown),
                          "shown": shown, "judge": _judge_answer(rows, [q.name for q in questions]),
                          "questions": [q.as_dict() for q in questions]})
    return items
