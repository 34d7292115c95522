"""From session results to test-set and per-group statistics.

Only the per-session metric values, labels, identity and FSS trajectory are kept, once and
compactly (:mod:`faceedit_bench.analysis.compact`: a few bytes per session); the run-wide and
per-group series the report summarises are selected from them when it is built. Images and step
details are written out as they stream past.
"""

from __future__ import annotations

import math
from collections import Counter, defaultdict
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

import numpy as np

from faceedit_bench.analysis.compact import Codes, SessionRows, series
from faceedit_bench.analysis.disparity import GroupTest, compare_groups
from faceedit_bench.analysis.free_memory import release_free_memory
from faceedit_bench.analysis.group_report import group_statistics
from faceedit_bench.analysis.multiplicity import family_summary
from faceedit_bench.analysis.section_collectors import section_collectors
from faceedit_bench.analysis.session_metrics import SessionMetric, SessionScores, registered_measures
from faceedit_bench.analysis.statistics import sample_size, summarize
from faceedit_bench.config import AnalysisConf
from faceedit_bench.plugin.manager import sections_in_use
from faceedit_bench.plugin.sections import ReportSection, failing_section
from faceedit_bench.records import Outcome, SessionResult
from faceedit_bench.scoring.judge.panel import PanelTally

#: Demographic keys never reported as groups (numeric or free-form).
NOT_GROUPS = frozenset({"age"})

SKIP_REASONS = {
    "judge": "needs an MLLM judge; none was configured (judge=none)",
    "taxonomy": "this test set has no taxonomy binding",
    "embedder": "the dataset's images are not faces: identity is not measured",
}


def _why_undefined(name: str, result: SessionResult) -> str:
    """Why an included session has no value of metric ``name``: ``judge_<outcome>`` (an answer it needs was
    not usable), ``answered_without_value`` (every answer was ok, and gives no value: not applicable, such
    as aging accuracy outside the aging prompt, or undecided), ``not_judged``, else ``undefined`` (e.g.
    Drop_FSS without a positive FSS_0); for an image metric's value, ``image_<outcome>`` or
    ``measured_without_value``."""
    if result.measured is not None and (why := result.measured.why_undefined(name)) is not None:
        return why
    judged = result.judged
    for judgment in (judged.metrics.values() if judged is not None else ()):
        if any(v.name == name for v in judgment.metric.values):
            failed = next((a.outcome.value for a in judgment.answers if a.outcome is not Outcome.OK), None)
            return f"judge_{failed}" if failed else "answered_without_value"
    return "not_judged" if judged is not None else "undefined"


def at(steps: list[Any], k: int) -> Any:
    """The values of step k, growing the series to k: sessions of a test set may differ in length."""
    while len(steps) <= k:
        steps.append(series())
    return steps[k]


class _Group:
    """A group's counts; its values come from the aggregator's rows (:meth:`Aggregator._selected`)."""

    def __init__(self) -> None:
        self.included = 0
        self.excluded: Counter[str] = Counter()
        self.steps: Counter[str] = Counter()


class Aggregator:
    """``sections``: the report sections whose collectors see every session (default: those in use)."""

    def __init__(self, metrics: list[SessionMetric], confidence: float, *, available: Iterable[str] = ("embedder",),
                 analysis: AnalysisConf | None = None, judge_metrics: Sequence[Any] = (), panel: Any = None,
                 sections: Sequence[ReportSection] | None = None, image_metrics: Sequence[Any] = (),
                 run_access: Mapping[str, Any] | None = None) -> None:
        """``run_access``: what sections may read of the run (SectionRun's ``images``, ``run_dir``, ``components``)."""
        available = set(available)
        self.registered = list(metrics)  # computed or skipped: the report says how to read each
        self.metrics = [m for m in metrics if m.requires <= available]
        self.skipped = {m.name: SKIP_REASONS.get(next(iter(m.requires - available)), "requirements not met")
                        for m in metrics if not m.requires <= available}
        self.confidence = confidence
        self.analysis = analysis or AnalysisConf()
        self.judged = "judge" in available
        self.faces_seen: set[str] = set()
        self.included = 0
        self.face_exclusions: Counter[str] = Counter()
        self.sessions_excluded: Counter[str] = Counter()
        self.steps: Counter[str] = Counter()
        self.edited_without_face = 0
        self.undefined: Counter[str] = Counter()
        self.undefined_reasons: dict[str, Counter[str]] = defaultdict(Counter)  # metric -> why -> sessions
        # Per-step values of the step metrics (SC_k x 100 ...): value name -> k-1 -> values.
        self.judge_trajectory: dict[str, list[list[float]]] = {
            v.name: []
            for m in judge_metrics if m.over == "steps" for v in m.values if v.point is not None}
        self.judge_trajectory_identities: dict[str, list[Any]] = {name: [] for name in self.judge_trajectory}
        self.judge_bounds = {v.name: v.bounds for m in judge_metrics for v in m.values}  # of the step series
        self.judge_answers: dict[str, Counter[str]] = defaultdict(Counter)  # template -> outcome -> n
        # The image metrics' per-step values (value name -> k-1 -> values) and step outcomes (metric -> outcome -> n)
        self.image_trajectory: dict[str, list[list[float]]] = {v.name: [] for m in image_metrics for v in m.values}
        self.image_trajectory_identities: dict[str, list[Any]] = {name: [] for name in self.image_trajectory}
        self.image_bounds = {v.name: v.bounds for m in image_metrics for v in m.values}
        self.image_steps: dict[str, Counter[str]] = {m.name: Counter() for m in image_metrics}
        # Metrics that give a session whose edit failed values of their own (a failure rule that scores it 0)
        self.unjudged = [m.unjudged for m in judge_metrics if getattr(m, "unjudged", None) is not None]
        self.panel = panel  # the panel's rule, when a panel judged
        self.panel_tally = PanelTally()
        self.edit_cost_usd: float | None = None
        self.groups: dict[str, dict[str, _Group]] = defaultdict(dict)
        self.rows = SessionRows()  # (labels, metric values) of every included session, for the group tests
        self.identity_codes = Codes()
        # The report sections active in this run (plugin/sections.py): each sees every session result.
        self.collectors = section_collectors(sections_in_use() if sections is None else sections, self.analysis,
                                             judge_metrics if self.judged else (), confidence=confidence,
                                             panel=panel, judged=self.judged, run_access=run_access)

    def add(self, result: SessionResult) -> dict[str, float | None]:
        """Count one session; returns its metric values (empty when excluded)."""
        self.faces_seen.add(result.face.face_id)
        for state in result.steps:
            self.steps[state.outcome.value] += 1
            cost = state.usage.get("cost_usd")
            if isinstance(cost, (int, float)):
                self.edit_cost_usd = (self.edit_cost_usd or 0.0) + cost
        self.edited_without_face += sum(1 for s in result.scores[1:] if s.outcome is Outcome.NO_FACE)
        judged = result.judged
        if judged is not None:
            for answer in judged.answers:
                self.judge_answers[answer.template][answer.outcome.value] += 1
            self.panel_tally.add(result.face.face_id, result.session.session_id, judged)
        values: dict[str, float | None] = {}
        fss = result.fss
        if fss is not None:
            self.included += 1
            oer = judged.oer if judged else None
            measured = result.measured
            scores = SessionScores(fss=fss, sc=judged.sc_steps if judged else None,
                                   oer=oer.oer if oer is not None else None, judge=judged.values if judged else {},
                                   image=measured.values if measured is not None else {})
            if judged is not None:
                self._add_judged(judged, self.identity_codes(result.face.identity))
            if measured is not None:
                self._add_measured(measured, self.identity_codes(result.face.identity))
            for metric in self.metrics:
                value = metric.compute(scores)
                if value is not None and not math.isfinite(value):
                    value = None  # NaN or inf would poison every mean; count it as undefined
                values[metric.name] = value
                if value is None:
                    self.undefined[metric.name] += 1
                    self.undefined_reasons[metric.name][_why_undefined(metric.name, result)] += 1
        else:
            self.sessions_excluded[result.excluded or "unscored"] += 1
            values = self._unjudged_values(result)
        self._add_to_groups(result, values)
        for name, collector in self.collectors.items():
            with failing_section(name, "collector (add_session)"):
                collector.add_session(result)
        return values

    def _unjudged_values(self, result: SessionResult) -> dict[str, float | None]:
        """The values judge metrics declare for an excluded session no judge saw (a rule that scores a failed edit)."""
        if not self.judged or result.judged is not None or not self.unjudged:
            return {}
        found: dict[str, float | None] = {}
        base = result.image_hashes[0] if result.image_hashes else None
        for values in self.unjudged:
            found.update(values(result.session, result.excluded or "", base) or {})
        return {m.name: found[m.name] for m in self.metrics if m.name in found}

    def _add_judged(self, judged: Any, identity: int) -> None:
        for judgment in judged.metrics.values():
            scale = {v.name: v.scale for v in judgment.metric.values}
            for k, points in zip(judgment.ks, judgment.points):
                for value_name, steps in self.judge_trajectory.items():
                    if points.get(value_name) is None:
                        continue
                    at(steps, k - 1).append(scale[value_name] * points[value_name])
                    at(self.judge_trajectory_identities[value_name], k - 1).append(identity)

    def _add_measured(self, measured: Any, identity: int) -> None:
        for metric, steps in measured.steps.items():
            for k, step in enumerate(steps, start=1):
                self.image_steps[metric][step.outcome.value] += 1
                for name, value in step.values.items():
                    if value is not None and name in self.image_trajectory:
                        at(self.image_trajectory[name], k - 1).append(value)
                        at(self.image_trajectory_identities[name], k - 1).append(identity)

    def _add_to_groups(self, result: SessionResult, values: dict[str, float | None]) -> None:
        if result.excluded is None or values:  # an excluded session with values: a metric scores its failure
            self.rows.append(({k: v for k, v in result.face.demographics.items() if k not in NOT_GROUPS}, values),
                             identity=self.identity_codes(result.face.identity), trajectory=result.fss or ())
        for key, label in result.face.demographics.items():
            if label is None or key in NOT_GROUPS:
                continue
            group = self.groups[key].setdefault(str(label), _Group())
            for state in result.steps:
                group.steps[state.outcome.value] += 1
            if result.excluded is None:
                group.included += 1
            else:
                group.excluded[result.excluded] += 1

    # -- report sections: series selected from the rows, in session order ---------------------

    def _selected(self, attribute: str | None = None, label: str | None = None) -> np.ndarray:
        """The included sessions of group ``attribute`` = ``label`` (all included sessions without one)."""
        if attribute is None:
            return np.ones(len(self.rows), dtype=bool)
        code = self.rows.label_code(attribute, label)
        return np.zeros(len(self.rows), dtype=bool) if code is None else self.rows.codes(attribute)[0] == code

    def _values(self, metric: str, selected: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """The defined values of ``metric`` among ``selected`` sessions, and those sessions' identity codes."""
        values = self.rows.values(metric)
        kept = selected & ~np.isnan(values)
        return values[kept], self.rows.identities()[kept]

    def metric_values(self, metric: str) -> np.ndarray:
        """The defined values of ``metric`` over all included sessions, in session order."""
        return self._values(metric, self._selected())[0]

    def _summary(self, metric: SessionMetric, selected: np.ndarray) -> dict[str, Any]:
        """The summary of ``metric`` over ``selected`` sessions, its interval clustered by identity."""
        values, identities = self._values(metric.name, selected)
        return summarize(values, self.confidence, bounds=metric.bounds, clusters=identities)

    def _trajectory(self, selected: np.ndarray) -> list[dict[str, Any]]:
        """FSS_k summaries of ``selected`` sessions, for every k one of them reaches (clustered by identity)."""
        points = ((self.rows.trajectory_at(k, selected), self.rows.trajectory_identities(k, selected))
                  for k in range(self.rows.trajectory_length()))
        return [{"k": k, **summarize(v, self.confidence, clusters=ids)} for k, (v, ids) in enumerate(points) if v.size]


    def disparity(self) -> list[dict[str, Any]]:
        """WD, permutation p-values and bias flags per metric x contrast (METHODOLOGY §7)."""
        tests = []
        for contrast, labels in self.analysis.contrasts.items():
            if len(labels) != 2 or contrast not in self.groups:
                continue
            a, b = (self._selected(contrast, label) for label in labels)
            for m in self.metrics:
                (values_a, identities_a), (values_b, identities_b) = self._values(m.name, a), self._values(m.name, b)
                tests.append(GroupTest(
                    metric=m.name, contrast=contrast, group_a=labels[0], group_b=labels[1],
                    values_a=values_a, values_b=values_b,
                    clusters_a=self.identity_codes.sortable(identities_a),
                    clusters_b=self.identity_codes.sortable(identities_b),
                    higher_is_better=m.higher_is_better, bounds=m.bounds,
                ))
        results = compare_groups(tests, n_resamples=self.analysis.n_resamples, seed=self.analysis.seed,
                                 threshold=self.analysis.wd_threshold, alpha=self.analysis.alpha,
                                 confidence=self.confidence)
        del tests
        release_free_memory()  # the tests' sorted pools: their pages go back before the next section
        return results

    def sections(self) -> dict[str, Any]:
        included = self.included
        excluded = sum(self.sessions_excluded.values())
        everyone = self._selected()
        disparity = self.disparity()
        sections: dict[str, Any] = {
            "counts": {
                "faces": {
                    "seen": len(self.faces_seen),
                    "excluded": dict(sorted(self.face_exclusions.items())),
                },
                "sessions": {
                    "planned": included + excluded,
                    "included": included,
                    "excluded": dict(sorted(self.sessions_excluded.items())),
                },
                "steps": {o.value: self.steps.get(o.value, 0) for o in Outcome if o.value in self.steps},
                "steps_by_group": {
                    key: {label: dict(sorted(g.steps.items())) for label, g in sorted(labels.items())}
                    for key, labels in sorted(self.groups.items())
                },
                "edited_images_without_face": self.edited_without_face,
            },
            "metrics": {
                m.name: {
                    "higher_is_better": m.higher_is_better,
                    "unit": m.unit,
                    "description": m.description,
                    "label": m.label or m.name,
                    "bounds": list(m.bounds) if m.bounds is not None else None,
                    "ideal": m.ideal,
                    "requires": sorted(m.requires),
                    **self._summary(m, everyone),
                    "undefined_sessions": self.undefined[m.name],
                    "undefined_by_reason": dict(sorted(self.undefined_reasons[m.name].items())),
                }
                for m in self.metrics
            },
            "trajectory": {
                "fss": self._trajectory(everyone),
            },
            "groups": {
                key: {
                    label: {
                        "sessions_included": g.included,
                        "sessions_excluded": dict(sorted(g.excluded.items())),
                        "metrics": {m.name: self._summary(m, self._selected(key, label)) for m in self.metrics},
                        "trajectory": {"fss": self._trajectory(self._selected(key, label))},
                    }
                    for label, g in sorted(labels.items())
                }
                for key, labels in sorted(self.groups.items())
            },
            "sample_size": sample_size(included, self.rows.identities()),
            "disparity": disparity,
            "multiplicity": family_summary(disparity, alpha=self.analysis.alpha),
            "group_tests": group_statistics(self.rows, self.metrics, self.analysis, self.confidence),
            "skipped_metrics": dict(sorted(self.skipped.items())),
            "measures": registered_measures(self.registered),
        }
        if self.image_steps:
            sections["counts"]["image_metrics"] = {m: dict(sorted(c.items()))
                                                   for m, c in sorted(self.image_steps.items())}
        for name, steps in self.image_trajectory.items():
            sections["trajectory"][name] = [
                {"k": k + 1, **summarize(v, self.confidence, bounds=self.image_bounds.get(name),
                                         clusters=self.image_trajectory_identities[name][k])}
                for k, v in enumerate(steps)]
        if self.judged:
            sections["counts"]["judge"] = {t: dict(sorted(c.items())) for t, c in sorted(self.judge_answers.items())}
            for name, steps in self.judge_trajectory.items():
                sections["trajectory"][name] = [
                    {"k": k + 1, **summarize(v, self.confidence, bounds=self.judge_bounds.get(name),
                                             clusters=self.judge_trajectory_identities[name][k])}
                    for k, v in enumerate(steps)]
            if self.panel is not None:
                sections["counts"]["judge_members"] = self.panel_tally.member_counts()
                sections["judge_panel"] = self.panel_tally.section(self.panel.describe())
        for name, collector in self.collectors.items():
            with failing_section(name, "collector (finish)"):
                part = collector.finish()
            if part is not None:
                sections[name] = dict(part)
        release_free_memory()  # before the tables are converted (another allocator's memory)
        return sections

