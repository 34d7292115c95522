"""Results under several prompt conditions, and the paired comparisons between them (METHODOLOGY §4.5-4.6).

:class:`ConditionResults` sends each session result to the :class:`Aggregator` of its condition. The
report's main sections (metrics, groups, disparity ...) describe the *reference* condition
(``baseline`` when the run has it, else the first listed). The ``conditions`` section has the
rest. It lists each condition's metric summaries and outcomes. For each other condition it
gives the paired comparison with the reference:

* A pair is one (face, session) under both conditions. For the single-step sessions of paper (b)
  that is one (face, session, step). Sessions of K > 1 steps pair on their session values, and
  also per (face, session, step) in ``by_step.<k>``: FSS_k (higher is better) and each judge
  metric's per-step value (e.g. SC_k x 100).
* For every metric value the run reports (FSS-based, judge metric values such as a judge metric's axes
  ...), and for all pairs and for each demographic group (each label of each attribute): Δ =
  condition − reference. The report gives the mean Δ with its CI (in the metric's range,
  docs/statistics.md), the two-sided Wilcoxon
  signed-rank p (:func:`faceedit_bench.analysis.paired.paired_comparison`, scipy) and Holm's
  correction (statsmodels) across the axes of one metric source: the values of one judge metric
  (a judge metric's axes, as paper (b) corrects across its axes), or the embedder's identity metrics.
  There is one family per source, condition and group (or step).
* ``n_pairs`` counts the pairs used. ``dropped`` counts the items seen under either condition whose
  value is undefined (or missing) on one side or both. ``undefined`` says on which side.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from faceedit_bench.analysis.aggregate import NOT_GROUPS, Aggregator
from faceedit_bench.analysis.paired import paired_comparison, paired_family
from faceedit_bench.analysis.statistics import summarize
from faceedit_bench.records import SessionResult

Item = tuple[str, ...]  # (face_id, session_id), or (face_id, session_id, k) for a step
Measure = tuple[str, bool | None, Any]  # (value name, higher is better, bounds)


class ConditionResults:
    """One aggregator per condition, and every item's metric values for pairing."""

    def __init__(self, names: Sequence[str], make: Callable[[], Aggregator], *, confidence: float,
                 alpha: float, families: Mapping[str, str] | None = None) -> None:
        """``families`` maps a metric value to its Holm family (its judge metric's name); a value not
        named is in the family ``identity`` (Drop_FSS and the other embedder-based metrics)."""
        self.families = dict(families or {})
        self.names = list(names)
        self.reference = "baseline" if "baseline" in self.names else self.names[0]
        self.aggregators = {name: make() for name in self.names}
        self.confidence, self.alpha = confidence, alpha
        self.items: dict[str, dict[Item, dict[str, float | None]]] = {name: {} for name in self.names}
        self.labels: dict[Item, dict[str, str]] = {}
        # Sessions of K > 1 steps: k -> condition -> (face, session, k) -> per-step values.
        self.steps: dict[int, dict[str, dict[Item, dict[str, float | None]]]] = defaultdict(
            lambda: {name: {} for name in self.names})
        self.step_measures: dict[str, tuple[bool | None, Any]] = {}  # name -> (higher is better, bounds)

    @property
    def main(self) -> Aggregator:
        return self.aggregators[self.reference]

    def add(self, result: SessionResult) -> dict[str, float | None]:
        condition = result.session.condition
        values = self.aggregators[condition].add(result)
        item = (result.face.face_id, result.session.session_id)
        self.items[condition][item] = dict(values)
        self.labels[item] = {k: str(v) for k, v in result.face.demographics.items()
                             if v is not None and k not in NOT_GROUPS}
        if len(result.session.steps) > 1:
            for k, step_values in self._step_values(result).items():
                self.steps[k][condition][(*item, k)] = step_values
        return values

    def _step_values(self, result: SessionResult) -> dict[int, dict[str, float | None]]:
        """FSS_k and every judge metric's point at step k (scaled as reported), k = 1..K; nothing for an
        excluded session (its values are undefined, and counted as dropped)."""
        out: dict[int, dict[str, float | None]] = {k: {} for k in range(1, len(result.session.steps) + 1)}
        self.step_measures.setdefault("fss", (True, None))
        if result.excluded is not None:
            return out
        for k in out:
            out[k]["fss"] = result.scores[k].fss if len(result.scores) > k else None
        judged = result.judged
        for judgment in (judged.metrics.values() if judged is not None else ()):
            if judgment.metric.over != "steps":
                continue
            for value in judgment.metric.values:
                if value.point is None:
                    continue
                self.step_measures.setdefault(value.name, (value.higher_is_better, value.bounds))
                for k, points in zip(judgment.ks, judgment.points):
                    point = points.get(value.name)
                    out[k][value.name] = None if point is None else value.scale * point
        return out

    # What the cost section and the run read of "the aggregator": every condition's edits cost.
    @property
    def edit_cost_usd(self) -> float | None:
        known = [a.edit_cost_usd for a in self.aggregators.values() if a.edit_cost_usd is not None]
        return sum(known) if known else None

    @property
    def faces_seen(self) -> set[str]:
        return set().union(*(a.faces_seen for a in self.aggregators.values()))

    @property
    def collectors(self) -> dict[str, Any]:  # the reference condition's report sections (their files)
        return self.main.collectors

    @property
    def face_exclusions(self) -> Any:
        return self.main.face_exclusions

    def sections(self) -> dict[str, Any]:
        sections = self.main.sections()
        sections["conditions"] = self.section()
        return sections

    def section(self) -> dict[str, Any]:
        metrics = self.main.metrics
        per_condition = {}
        for name, agg in self.aggregators.items():
            per_condition[name] = {
                "sessions": {"included": sum(1 for v in self.items[name].values() if v),
                             "excluded": dict(sorted(agg.sessions_excluded.items()))},
                "steps": dict(sorted(agg.steps.items())),
                "metrics": {m.name: {**summarize(agg.metric_values(m.name), self.confidence, bounds=m.bounds),
                                     "undefined_sessions": agg.undefined[m.name]} for m in metrics},
            }
        comparisons = {name: self.compare(name) for name in self.names if name != self.reference}
        return {"reference": self.reference, "order": self.names, "delta": "condition - reference",
                "pair": "(face, session) under both conditions", "per_condition": per_condition,
                "comparisons": comparisons, "confidence": self.confidence, "alpha": self.alpha,
                "holm_family": "the values of one metric source (one judge metric, e.g. its axes; "
                               "or the embedder's identity metrics) for one condition and group (or step)"}

    def compare(self, condition: str) -> dict[str, Any]:
        ref, other = self.items[self.reference], self.items[condition]
        everything = sorted(set(ref) | set(other))
        by_group: dict[str, dict[str, list[Item]]] = defaultdict(lambda: defaultdict(list))
        for item in everything:
            for attribute, label in self.labels.get(item, {}).items():
                by_group[attribute][label].append(item)
        measures = [(m.name, m.higher_is_better, m.bounds) for m in self.main.metrics]
        out = {"vs": self.reference, "overall": self._family(condition, ref, other, everything, measures),
               "by_group": {attribute: {label: self._family(condition, ref, other, items, measures)
                                        for label, items in sorted(labels.items())}
                            for attribute, labels in sorted(by_group.items())}}
        if self.steps:
            steps = [(name, hib, bounds) for name, (hib, bounds) in sorted(self.step_measures.items())]
            out["by_step"] = {str(k): self._family(condition, by[self.reference], by[condition],
                                                   sorted(set(by[self.reference]) | set(by[condition])), steps)
                              for k, by in sorted(self.steps.items())}
        return out

    def _family(self, condition: str, ref: Mapping[Item, Mapping[str, float | None]],
                other: Mapping[Item, Mapping[str, float | None]], items: Sequence[Item],
                measures: Sequence[Measure]) -> dict[str, Any]:
        tests = []
        for name, higher_is_better, bounds in measures:
            a = _defined(ref, items, name)
            b = _defined(other, items, name)
            test = paired_comparison(a, b, name=name, first_label=self.reference, second_label=condition,
                                     higher_is_better=higher_is_better, confidence=self.confidence, bounds=bounds)
            test["dropped"] = len(items) - test["n_pairs"]
            test["undefined"] = {self.reference: len(items) - len(a), condition: len(items) - len(b)}
            del test["unpaired"]  # `undefined` says it for every item, both sides
            tests.append(test)
        by_family: dict[str, list[dict[str, Any]]] = defaultdict(list)
        for test in tests:
            by_family[self._family_of(test["name"])].append(test)
        corrected = {name: paired_family(members, alpha=self.alpha) for name, members in sorted(by_family.items())}
        out = {t["name"]: {**t, "holm_family": name} for name, f in corrected.items() for t in f["tests"]}
        return {"items": len(items), "metrics": {t["name"]: out[t["name"]] for t in tests},
                "holm": {name: f["holm"] for name, f in corrected.items()}}

    def _family_of(self, name: str) -> str:
        return self.families.get(name, "identity")


def _defined(values: Mapping[Item, Mapping[str, float | None]], items: Sequence[Item], metric: str,
             ) -> dict[Item, float]:
    out = {}
    for item in items:
        value = values.get(item, {}).get(metric)
        if value is not None:
            out[item] = value
    return out
