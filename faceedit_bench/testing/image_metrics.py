"""Contract checks of an image metric (``faceedit_register_image_metrics``)."""

from __future__ import annotations

import math
import pickle
from typing import Any

import pytest

from faceedit_bench.keys import fingerprint
from faceedit_bench.records import DetectedFace
from faceedit_bench.scoring.image_metric import ImageMetric, ImageValue, StepImages
from faceedit_bench.storage.images import decode_rgb
from faceedit_bench.testing.helpers import gradient_image


def contract_steps() -> list[StepImages]:
    """Two steps of 96 x 96 gradient images, read-only, with a face box in the middle of each."""
    images = [decode_rgb(gradient_image(i, size=96)) for i in range(3)]
    for image in images:
        image.flags.writeable = False
    face = (DetectedFace((28.0, 24.0, 68.0, 72.0), 1.0, {"left_eye": (40.0, 40.0), "right_eye": (56.0, 40.0),
                                                            "nose_tip": (48.0, 52.0)}),)
    faces = dict.fromkeys(("source", "previous", "current"), face)
    return [StepImages(k, f"make step {k}", images[0], images[k - 1], images[k], (images[0],), faces)
            for k in (1, 2)]


class ImageMetricContract:
    """Checks every image metric must pass. Subclass and provide a ``metric`` fixture; override ``steps`` to give
    steps of your own (default: :func:`contract_steps`)."""

    @pytest.fixture
    def steps(self) -> list[StepImages]:
        return contract_steps()

    def test_declares_its_values(self, metric: Any) -> None:
        assert isinstance(metric, ImageMetric) and metric.name.isidentifier()
        assert metric.values and all(isinstance(v, ImageValue) for v in metric.values)
        assert len({v.name for v in metric.values}) == len(metric.values), "value names are unique"

    def test_describe_is_json_and_stable(self, metric: Any) -> None:
        assert fingerprint(dict(metric.describe())) == fingerprint(dict(metric.describe()))

    def test_travels_to_a_worker_by_pickle(self, metric: Any, steps: list[StepImages]) -> None:
        copy = pickle.loads(pickle.dumps(metric))
        assert fingerprint(dict(copy.describe())) == fingerprint(dict(metric.describe()))
        assert self._values(copy, steps) == self._values(metric, steps), "a worker's copy measures the same"

    def test_measures_every_step_within_its_bounds(self, metric: Any, steps: list[StepImages]) -> None:
        for answer in self._values(metric, steps):
            assert set(answer) <= {v.name for v in metric.values}, f"undeclared values {set(answer)}"
            for value in metric.values:
                number = answer.get(value.name)
                if number is None:
                    continue
                assert math.isfinite(number), (value.name, number)
                low, high = value.bounds or (None, None)
                assert (low is None or number >= low - 1e-6) and (high is None or number <= high + 1e-6), (
                    f"{value.name} = {number} outside its bounds {value.bounds}")

    def test_is_deterministic_and_batches_like_single_steps(self, metric: Any, steps: list[StepImages]) -> None:
        batched = self._values(metric, steps)
        assert batched == self._values(metric, steps)
        alone = [dict(metric.measure_batch([step])[0]) for step in steps]
        for a, b in zip(batched, alone):
            assert a.keys() == b.keys()
            assert all(a[n] == pytest.approx(b[n], abs=1e-5) for n in a if a[n] is not None), (a, b)

    @staticmethod
    def _values(metric: Any, steps: list[StepImages]) -> list[dict[str, Any]]:
        answers = [dict(a) for a in metric.measure_batch(steps)]
        assert len(answers) == len(steps), "one answer per step"
        return answers
