"""The public API, topic **testing**: the contract mixins, one per plugin kind, and the home of all of them.
Each is a pytest mixin with a fixture to provide (docs/plugins.md)::

    class TestMyEditor(EditorContract):
        @pytest.fixture
        def editor(self):
            return MyEditor(...)

:class:`EditorContract` (``editor``), :class:`EmbedderContract` (``embedder``), :class:`FaceDetectorContract`
(``detector``), :class:`JudgeContract` (``judge``), :class:`DatasetContract` (``dataset``),
:class:`TestSetLoaderContract` (``loader``), :class:`TrackerContract` (``tracker``), :class:`ImageMetricContract`
(``metric``), :class:`SectionContract` (``section``, ``report_part``), :class:`PluginDistributionContract` (a
distribution's wheel, entry point and config entry). :func:`gradient_image` is a PNG that differs per seed, for
fake editors and stores. Importing this module imports pytest.
"""

from __future__ import annotations

from faceedit_bench.testing.components import EditorContract, EmbedderContract, FaceDetectorContract, JudgeContract
from faceedit_bench.testing.data import DatasetContract, TestSetLoaderContract
from faceedit_bench.testing.distribution import PluginDistributionContract
from faceedit_bench.testing.helpers import gradient_image
from faceedit_bench.testing.image_metrics import ImageMetricContract
from faceedit_bench.testing.sections import SectionContract
from faceedit_bench.testing.tracking import TrackerContract

__all__ = ["DatasetContract", "EditorContract", "EmbedderContract", "FaceDetectorContract", "ImageMetricContract",
           "JudgeContract", "PluginDistributionContract", "SectionContract", "TestSetLoaderContract",
           "TrackerContract", "gradient_image"]
