"""Image metrics: numbers measured on a step's pixels, declared by plugins.

An :class:`ImageMetric` sees, per edited step, a :class:`StepImages`: I_0, I_{k-1} and I_k decoded and
orientation-corrected, the identity's reference images, the instruction, and the faces the run's own detector
found in I_0, I_{k-1} and I_k. It returns one number (or ``None``) per declared :class:`ImageValue`; each value
says how a session's steps reduce to the session's value (``aggregate``). What ``describe()`` returns is hashed
into every value's identity: changing a parameter recomputes that metric alone, and nothing else.

Values are kept in the ledger by the content of the step (image hashes, instruction) and the metric's identity,
so a rerun computes nothing. A step the metric raised on is recorded as ``failed`` with the reason; a step where
a metric that needs faces finds none in any of its images, as ``no_face``. Neither is ever a number: the session
value is then undefined and the reason counted.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

import numpy as np

from faceedit_bench.keys import fingerprint
from faceedit_bench.records import DetectedFace, Outcome

#: How a session's per-step values become the session's value.
Aggregate = Literal["mean", "last", "min", "max"]
AGGREGATES = ("mean", "last", "min", "max")
#: The images of a step whose faces a metric may read, by role.
FACE_ROLES = ("source", "previous", "current")


@dataclass(frozen=True)
class ImageValue:
    """One named number of an image metric, with how reports and the leaderboard read it.

    ``higher_is_better`` None: neither direction is better (e.g. how much an edit changed). ``bounds``: the
    values it can take, (low, high), None for an open side. ``aggregate``: the session value is the mean over
    the steps, the last step's value, or their minimum or maximum; undefined when a step it needs has none."""

    name: str
    higher_is_better: bool | None
    unit: str
    description: str
    label: str = ""
    bounds: tuple[float | None, float | None] | None = None
    aggregate: Aggregate = "mean"
    ideal: float | None = None

    def __post_init__(self) -> None:
        if not self.name.isidentifier():
            raise ValueError(f"image value {self.name!r}: its name must be a Python identifier")
        if self.aggregate not in AGGREGATES:
            raise ValueError(f"image value {self.name}: aggregate={self.aggregate!r}; "
                             f"use one of {', '.join(AGGREGATES)}")

    def session_value(self, points: Sequence[float | None]) -> float | None:
        """The session's value from its steps' values, in step order; None when one it needs is missing."""
        needed = points[-1:] if self.aggregate == "last" else points
        if not needed or any(p is None for p in needed):
            return None
        known = [float(p) for p in needed if p is not None]
        return {"mean": lambda: sum(known) / len(known), "last": lambda: known[-1],
                "min": lambda: min(known), "max": lambda: max(known)}[self.aggregate]()

    def declared(self) -> dict[str, Any]:
        return {"higher_is_better": self.higher_is_better, "unit": self.unit, "bounds": self.bounds,
                "aggregate": self.aggregate}


@dataclass(frozen=True)
class StepImages:
    """What an image metric sees of one step k (arrays are RGB uint8 (H, W, 3), read-only).

    ``faces`` maps ``source`` / ``previous`` / ``current`` to the faces the run's detector found in that image,
    largest first (:class:`~faceedit_bench.records.DetectedFace`: box and named landmarks; the dlib detector gives
    the 68 iBUG points as ``ibug68_00`` .. ``ibug68_67``); empty tuples for a metric that does not need faces."""

    k: int
    instruction: str
    source: np.ndarray
    previous: np.ndarray
    current: np.ndarray
    references: tuple[np.ndarray, ...] = ()
    faces: Mapping[str, tuple[DetectedFace, ...]] = field(default_factory=dict)


class ImageMetric:
    """Base class of an image metric: set ``name`` and ``values``, implement :meth:`measure` (or
    :meth:`measure_batch`, to batch steps through a model) and :meth:`describe` (its parameters and version).

    ``needs_faces``: the run's detector runs on the step's images first; a run without a detector refuses the
    metric at start, and a step with no face in I_0, I_{k-1} or I_k is recorded as ``no_face`` without calling it.
    Instances travel to worker processes by pickle: load models lazily (e.g. :class:`LazyModels`)."""

    name: str = ""
    values: tuple[ImageValue, ...] = ()
    needs_faces: bool = False
    #: What ``values`` is written with: ``ImageMetric.Value(name, higher_is_better, ...)``.
    Value = ImageValue

    def describe(self) -> Mapping[str, Any]:
        """Everything that decides the numbers (version, parameters, model files): hashed into each value."""
        return {}

    def measure(self, step: StepImages) -> Mapping[str, float | None]:
        """One step's values by name (a value it cannot give: None). Raising records the step as failed."""
        raise NotImplementedError(f"image metric {self.name}: implement measure() or measure_batch()")

    def measure_batch(self, steps: Sequence[StepImages]) -> Sequence[Mapping[str, float | None]]:
        """Several steps at once (a model's batch); by default one :meth:`measure` each."""
        return [self.measure(step) for step in steps]


def check_metric(metric: Any, registered_as: str) -> ImageMetric:
    """The metric a factory made, checked: one clear error naming what is wrong."""
    if not isinstance(metric, ImageMetric):
        raise ValueError(f"image metric {registered_as!r}: its factory returned {type(metric).__name__}, "
                         "not an ImageMetric")
    if metric.name != registered_as:
        raise ValueError(f"image metric {registered_as!r}: the object is named {metric.name!r}; use one name")
    if not metric.values or not all(isinstance(v, ImageValue) for v in metric.values):
        raise ValueError(f"image metric {registered_as!r}: declare its values as a tuple of ImageValue")
    return metric


def metric_identity(metric: ImageMetric, detector: Mapping[str, Any] | None, pixels: str) -> str:
    """What decides a metric's numbers: its description, its values' declarations, the pixel decoding and, for a
    metric that reads faces, the detector."""
    return fingerprint({"name": metric.name, "describe": dict(metric.describe()), "pixels": pixels,
                        "values": {v.name: v.declared() for v in metric.values},
                        "detector": dict(detector) if metric.needs_faces and detector is not None else None})


@dataclass(frozen=True)
class StepMeasure:
    """One metric's result on one step: ``ok`` with its values, or why there are none."""

    outcome: Outcome
    values: Mapping[str, float | None] = field(default_factory=dict)
    reason: str = ""
    resumed: bool = False


@dataclass(frozen=True)
class MeasuredSession:
    """Every selected image metric's results on one session: per metric, its steps' results (k = 1..K) and the
    session values of its declared values."""

    steps: Mapping[str, tuple[StepMeasure, ...]]
    values: Mapping[str, float | None]
    owners: Mapping[str, str] = field(default_factory=dict)  # value name -> its metric's name

    def why_undefined(self, name: str) -> str | None:
        """Why value ``name`` has no session value: ``image_<outcome>`` of the first step it lacks, or
        ``measured_without_value`` (the metric gave None); None when it is not this session's value."""
        if name not in self.owners:
            return None
        failed = next((m.outcome.value for m in self.steps[self.owners[name]] if m.outcome is not Outcome.OK), None)
        return f"image_{failed}" if failed else "measured_without_value"

    @classmethod
    def of(cls, metrics: Sequence[ImageMetric], steps: Mapping[str, tuple[StepMeasure, ...]]) -> MeasuredSession:
        values: dict[str, float | None] = {}
        owners = {v.name: m.name for m in metrics for v in m.values}
        for metric in metrics:
            measured = steps[metric.name]
            for value in metric.values:
                values[value.name] = value.session_value(
                    [m.values.get(value.name) if m.outcome is Outcome.OK else None for m in measured])
        return cls(steps, values, owners)

    def at(self, k: int) -> dict[str, Any]:
        """Step k's results, per metric (for the steps table)."""
        return {name: {"outcome": m[k - 1].outcome.value, **m[k - 1].values, **({"reason": m[k - 1].reason}
                                                                                  if m[k - 1].reason else {})}
                for name, m in self.steps.items() if 0 < k <= len(m)}
