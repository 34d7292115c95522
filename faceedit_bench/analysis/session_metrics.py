"""Session metrics: one number per complete session, with how to read it.

A metric returns ``None`` when it cannot be computed for a session (the reason is
counted); it never substitutes a number.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from faceedit_bench.plugin.needs import NO_NEEDS, Needs


@dataclass(frozen=True)
class SessionScores:
    """What scorers measured on one complete session. ``fss[k]`` is FSS_k, k = 0..4;
    ``sc[k-1]`` is SC_k in [0, 1] (``None`` where the judge gave no usable answer) and
    ``oer`` the overedits per edit (no upper bound), both ``None`` without a judge. ``judge`` holds every
    selected judge metric's session values by value name (``sc`` x100, ``oer`` x100, ...), and ``image`` every
    selected image metric's session values by value name."""

    fss: tuple[float, ...]
    sc: tuple[float | None, ...] | None = None
    oer: float | None = None
    judge: Mapping[str, float | None] = field(default_factory=dict)
    image: Mapping[str, float | None] = field(default_factory=dict)


@dataclass(frozen=True)
class SessionMetric:
    name: str
    higher_is_better: bool | None  # None: neither direction is better (the ideal is ``ideal``)
    unit: str
    description: str
    compute: Callable[[SessionScores], float | None]
    requires: frozenset[str] = frozenset({"embedder"})
    #: How pages name it (``Drop_FSS``); the name when empty.
    label: str = ""
    #: The values it can take, (low, high) with None for an open side (SC x100: (0, 100); OER x100: (0, None));
    #: None when open-ended both ways (Drop_FSS). Plot axes and every mean's interval follow them.
    bounds: tuple[float | None, float | None] | None = None
    #: With ``higher_is_better`` None: the value that means "no change" (groups are compared by their deviation).
    ideal: float | None = None
    #: What it needs of the faces (labels, references), checked before the run's first paid call.
    needs: Needs = NO_NEEDS


def drop_fss(scores: SessionScores) -> float | None:
    """Drop_FSS = (100/K) * sum_{k=1..K} (FSS_0 - FSS_k) / FSS_0 (METHODOLOGY §2.5).

    Undefined when FSS_0 <= 0 (no identity to lose in the base image).
    """
    fss0 = scores.fss[0]
    k_steps = len(scores.fss) - 1  # K = 4 in paper (a); any K >= 1 in a format-2 test set
    if fss0 <= 0 or k_steps < 1:
        return None
    return 100.0 / k_steps * sum((fss0 - scores.fss[k]) / fss0 for k in range(1, k_steps + 1))


def semantic_consistency(scores: SessionScores) -> float | None:
    """Session SC x 100 = 100 * mean_k min(success, overediting)/10 (METHODOLOGY §2.5, §3.3).

    Undefined when any step lacks a usable judge answer: a partial mean would favour
    sessions whose hard steps were refused or unparsable.
    """
    if scores.sc is None or not scores.sc or any(v is None for v in scores.sc):
        return None
    return 100.0 * sum(v for v in scores.sc if v is not None) / len(scores.sc)


def overediting_rate(scores: SessionScores) -> float | None:
    """OER x 100 = 100 * overedits in the session / K (K = 4 in paper (a); METHODOLOGY §2.5, §8.5)."""
    return None if scores.oer is None else 100.0 * scores.oer


@dataclass(frozen=True)
class _JudgedValue:
    name: str

    def __call__(self, scores: SessionScores) -> float | None:
        return scores.judge.get(self.name)


def judge_metric_values(metric: Any) -> list[SessionMetric]:
    """A declared judge metric's values (``metric.values``, see
    :mod:`faceedit_bench.scoring.judge.declared`) as session metrics that need a judge."""
    needs = frozenset({"judge", "taxonomy"} if getattr(metric, "needs_taxonomy", False) else {"judge"})
    return [SessionMetric(name=v.name, higher_is_better=v.higher_is_better, unit=v.unit, description=v.description,
                          compute=_JudgedValue(v.name), requires=needs, label=getattr(v, "label", ""),
                          bounds=getattr(v, "bounds", None), ideal=getattr(v, "ideal", None))
            for v in metric.values]


@dataclass(frozen=True)
class _MeasuredValue:
    name: str

    def __call__(self, scores: SessionScores) -> float | None:
        return scores.image.get(self.name)


#: What an image metric's values need: the image metrics ran (a session without their results has no value).
IMAGE_METRICS = "image_metrics"


def image_metric_values(metric: Any) -> list[SessionMetric]:
    """An image metric's declared values (:mod:`faceedit_bench.scoring.image_metric`) as session metrics."""
    return [SessionMetric(name=v.name, higher_is_better=v.higher_is_better, unit=v.unit, description=v.description,
                          compute=_MeasuredValue(v.name), requires=frozenset({IMAGE_METRICS}), label=v.label,
                          bounds=v.bounds, ideal=v.ideal)
            for v in metric.values]


def registered_measures(metrics: Iterable[SessionMetric]) -> dict[str, dict[str, Any]]:
    """How to read each registered metric (computed or skipped in a run): the run report's ``measures``
    entries (docs/run_report.md), from the registration only."""
    return {m.name: {"label": m.label or m.name, "higher_is_better": m.higher_is_better, "unit": m.unit,
                     "description": m.description, "bounds": list(m.bounds) if m.bounds is not None else None,
                     "ideal": m.ideal, "requires": sorted(m.requires), "section": "metrics"}
            for m in metrics}
