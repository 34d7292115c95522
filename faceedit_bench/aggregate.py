"""From session results to test-set and per-group statistics.

Only the per-session metric values are kept (a few floats per session); images and
step details are written out as they stream past.
"""

from __future__ import annotations

import math
from collections import Counter, defaultdict
from typing import Any

from faceedit_bench.engine import SessionResult
from faceedit_bench.metrics import SessionMetric, SessionScores
from faceedit_bench.records import STEPS_PER_SESSION, Outcome
from faceedit_bench.statistics import summarize

#: Demographic keys never reported as groups (numeric or free-form).
NOT_GROUPS = frozenset({"age"})


class Aggregator:
    def __init__(self, metrics: list[SessionMetric], confidence: float) -> None:
        self.metrics = metrics
        self.confidence = confidence
        self.faces_seen: set[str] = set()
        self.face_exclusions: Counter[str] = Counter()
        self.sessions_excluded: Counter[str] = Counter()
        self.steps: Counter[str] = Counter()
        self.edited_without_face = 0
        self.values: dict[str, list[float]] = defaultdict(list)
        self.undefined: Counter[str] = Counter()
        self.trajectory: list[list[float]] = [[] for _ in range(STEPS_PER_SESSION + 1)]
        # group key -> group label -> {"included": n, "excluded": Counter, metric -> values}
        self.groups: dict[str, dict[str, dict[str, Any]]] = defaultdict(dict)

    def add(self, result: SessionResult) -> dict[str, float | None]:
        """Count one session; returns its metric values (empty when excluded)."""
        self.faces_seen.add(result.face.face_id)
        for state in result.steps:
            self.steps[state.outcome.value] += 1
        self.edited_without_face += sum(1 for s in result.scores[1:] if s.outcome is Outcome.NO_FACE)
        values: dict[str, float | None] = {}
        fss = result.fss
        if fss is not None:
            scores = SessionScores(fss=fss)
            for k, value in enumerate(fss):
                self.trajectory[k].append(value)
            for metric in self.metrics:
                value = metric.compute(scores)
                if value is not None and not math.isfinite(value):
                    value = None  # NaN or inf would poison every mean; count it as undefined
                values[metric.name] = value
                if value is None:
                    self.undefined[metric.name] += 1
                else:
                    self.values[metric.name].append(value)
        else:
            self.sessions_excluded[result.excluded or "unscored"] += 1
        self._add_to_groups(result, values)
        return values

    def _add_to_groups(self, result: SessionResult, values: dict[str, float | None]) -> None:
        for key, label in result.face.demographics.items():
            if label is None or key in NOT_GROUPS:
                continue
            group = self.groups[key].setdefault(str(label), {"included": 0, "excluded": Counter(), "values": defaultdict(list)})
            if result.excluded is None:
                group["included"] += 1
                for name, value in values.items():
                    if value is not None:
                        group["values"][name].append(value)
            else:
                group["excluded"][result.excluded] += 1

    # -- report sections -------------------------------------------------------------------

    def sections(self) -> dict[str, Any]:
        included = sum(len(v) for v in self.trajectory[:1])
        excluded = sum(self.sessions_excluded.values())
        return {
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
                "edited_images_without_face": self.edited_without_face,
            },
            "metrics": {
                m.name: {
                    "higher_is_better": m.higher_is_better,
                    "unit": m.unit,
                    "description": m.description,
                    **summarize(self.values[m.name], self.confidence),
                    "undefined_sessions": self.undefined[m.name],
                }
                for m in self.metrics
            },
            "trajectory": {
                "fss": [{"k": k, **summarize(v, self.confidence)} for k, v in enumerate(self.trajectory)],
            },
            "groups": {
                key: {
                    label: {
                        "sessions_included": g["included"],
                        "sessions_excluded": dict(sorted(g["excluded"].items())),
                        "metrics": {m.name: summarize(g["values"][m.name], self.confidence) for m in self.metrics},
                    }
                    for label, g in sorted(labels.items())
                }
                for key, labels in sorted(self.groups.items())
            },
        }
