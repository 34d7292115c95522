"""Helpers for testing faceedit_bench and its plugins: a contract mixin for every component kind.

``EditorContract`` is a pytest mixin every editor plugin can run::

    class TestMyEditor(EditorContract):
        @pytest.fixture
        def editor(self):
            return MyEditor(...)

The others do the same for their kind, each with its fixture: ``EmbedderContract`` (``embedder``),
``FaceDetectorContract`` (``detector``), ``JudgeContract`` (``judge``), ``DatasetContract`` (``dataset``),
``TestSetLoaderContract`` (``loader``), ``TrackerContract`` (``tracker``), ``SectionContract`` (``section``,
``report_part``) for a protocol's report section. ``PluginDistributionContract`` checks a plugin distribution's
packaging (wheel, entry point, config entry). ``PixelEmbedder`` is a fast stand-in embedder for engine tests that
need no face model; it is not a face recognizer and is never registered as a plugin. Everything here needs
pytest; plugins import these names from ``faceedit_bench.api`` (served on first use) or from here.

A plugin's tests import the core only through ``faceedit_bench.api`` and this package, which also serves what
they need to drive a component as a run does (:mod:`faceedit_bench.testing.harness`): ``load_plugins``,
``Plugins``, ``Registry``, ``hook_manager``, ``Executor``, ``JudgeService`` with ``SC_TEMPLATE`` and
``STATE_TEMPLATE``, ``compose_config`` and ``run_config`` (Hydra's composition and a whole run), ``RunStopped``.
"""

from faceedit_bench.testing.components import (
    EditorContract,
    EmbedderContract,
    FaceDetectorContract,
    JudgeContract,
)
from faceedit_bench.testing.data import DatasetContract, TestSetLoaderContract
from faceedit_bench.testing.distribution import PluginDistributionContract
from faceedit_bench.testing.harness import (
    SC_TEMPLATE,
    STATE_TEMPLATE,
    Executor,
    JudgeService,
    Plugins,
    Registry,
    RunStopped,
    compose_config,
    hook_manager,
    load_plugins,
    run_config,
)
from faceedit_bench.testing.helpers import PixelEmbedder, gradient_image
from faceedit_bench.testing.sections import SectionContract
from faceedit_bench.testing.tracking import TrackerContract

__all__ = ["SC_TEMPLATE", "STATE_TEMPLATE", "DatasetContract", "EditorContract", "EmbedderContract", "Executor",
           "FaceDetectorContract", "JudgeContract", "JudgeService", "PixelEmbedder", "PluginDistributionContract",
           "Plugins", "Registry", "RunStopped", "SectionContract", "TestSetLoaderContract", "TrackerContract",
           "compose_config", "gradient_image", "hook_manager", "load_plugins", "run_config"]
