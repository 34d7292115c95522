"""The public API for component authors (editors, judges, embedders, image metrics, datasets, trackers): everything
such a plugin may import from the core, and the run's images (``RunImages``) that report sections read.

A plugin imports from this package only (a layer contract in ``pyproject.toml`` holds that); every other core
module is private and may change between releases. Protocol authors (report sections, judge metrics,
statistics) import :mod:`faceedit_bench.api.protocol` too. The contract test mixins (``EditorContract`` ...)
need pytest and are loaded on first use.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from faceedit_bench import hookimpl
from faceedit_bench.errors import ConfigError, DatasetError, FaceEditBenchError, ImageError, ModelNotFoundError
from faceedit_bench.execution.batching import MicroBatcher, is_out_of_memory
from faceedit_bench.execution.call_errors import (
    EndpointUnreachable,
    GaveUp,
    RetryableError,
    retry_after_s,
)
from faceedit_bench.execution.calls import count_request
from faceedit_bench.execution.cost import USAGE_KEYS, check_prices, cost_usd
from faceedit_bench.execution.endpoints import Endpoint
from faceedit_bench.execution.limits import CallLimits
from faceedit_bench.execution.local_models import (
    ModelSource,
    check_dtype,
    hf_offline,
    how_to_get,
    image_only_processor,
    locate_model,
    package_version,
    torch_dtype,
)
from faceedit_bench.execution.secrets import MissingSecretError, redact
from faceedit_bench.keys import fingerprint
from faceedit_bench.plugin.payloads import (
    ComponentInfo,
    RunInfo,
    StepRecord,
    TrackedRun,
    component_identity,
    component_version,
    run_description,
    run_title,
)
from faceedit_bench.plugin.protocols import (
    CAPABILITIES,
    DATASET_CAPABILITIES,
    EDITOR_CAPABILITIES,
    AsyncEditor,
    Capability,
    Dataset,
    Editor,
    FaceDetector,
    FaceEmbedder,
    Judge,
    TestSetLoader,
    Tracker,
    capability,
)
from faceedit_bench.plugin.registry import Register
from faceedit_bench.records import (
    DetectedFace,
    EditRequest,
    EditResult,
    Face,
    FaceEmbedding,
    JudgeAnswer,
    JudgeReply,
    JudgeRequest,
    Outcome,
    Session,
    Step,
    TestSet,
)
from faceedit_bench.scoring.embedding import LazyModels, as_rgb_uint8, files_digest
from faceedit_bench.scoring.image_metric import ImageMetric, ImageValue, StepImages
from faceedit_bench.scoring.judge.declared import JudgeMetric, JudgeValue, MetricJudgment, NotAsked
from faceedit_bench.scoring.judge.service import ParseFailure, PromptTemplate, parse_answer
from faceedit_bench.storage.atomic import atomic_open
from faceedit_bench.storage.first_time import built_beside
from faceedit_bench.storage.images import content_hash, decode_rgb, encode_png, plain_image, sniff_mime
from faceedit_bench.storage.locks import directory_lock
from faceedit_bench.storage.run_images import RunImages

if TYPE_CHECKING:
    from faceedit_bench.report.run_report import metrics_for_tracking, results_digest, series_for_tracking
    from faceedit_bench.testing import (
        DatasetContract,
        EditorContract,
        EmbedderContract,
        FaceDetectorContract,
        ImageMetricContract,
        JudgeContract,
        PixelEmbedder,
        PluginDistributionContract,
        SectionContract,
        TestSetLoaderContract,
        TrackerContract,
        gradient_image,
    )

#: Names served on first use, from the module that holds them: the contract mixins need pytest, and a
#: report's tracker metrics need the report code (the sections, the fidelity tables); a plugin that is only
#: loaded (``faceedit-bench plugins``, a run's start) pays for neither. ``tests/test_api_surface.py`` keeps it so.
_LAZY = {
    **dict.fromkeys(("DatasetContract", "EditorContract", "EmbedderContract", "FaceDetectorContract",
                     "ImageMetricContract", "JudgeContract",
                     "PluginDistributionContract", "PixelEmbedder", "SectionContract", "TestSetLoaderContract",
                     "TrackerContract", "gradient_image"),
                    "faceedit_bench.testing"),
    **dict.fromkeys(("metrics_for_tracking", "results_digest", "series_for_tracking"),
                    "faceedit_bench.report.run_report"),
}


def __getattr__(name: str) -> Any:
    if name in _LAZY:
        import importlib

        return getattr(importlib.import_module(_LAZY[name]), name)
    raise AttributeError(f"module 'faceedit_bench.api' has no attribute {name!r}")


__all__ = [
    "CAPABILITIES",
    "DATASET_CAPABILITIES",
    "EDITOR_CAPABILITIES",
    "Capability",
    "capability",
    "USAGE_KEYS",
    "AsyncEditor",
    "CallLimits",
    "ComponentInfo",
    "ConfigError",
    "Dataset",
    "DatasetContract",
    "DetectedFace",
    "DatasetError",
    "EditRequest",
    "EditResult",
    "Editor",
    "EditorContract",
    "Endpoint",
    "EndpointUnreachable",
    "EmbedderContract",
    "Face",
    "FaceEditBenchError",
    "FaceDetector",
    "FaceDetectorContract",
    "FaceEmbedder",
    "FaceEmbedding",
    "GaveUp",
    "ImageError",
    "ImageMetric",
    "ImageMetricContract",
    "ImageValue",
    "Judge",
    "JudgeAnswer",
    "JudgeContract",
    "JudgeMetric",
    "JudgeReply",
    "JudgeRequest",
    "JudgeValue",
    "LazyModels",
    "MetricJudgment",
    "MicroBatcher",
    "MissingSecretError",
    "ModelNotFoundError",
    "ModelSource",
    "NotAsked",
    "Outcome",
    "ParseFailure",
    "PixelEmbedder",
    "PluginDistributionContract",
    "PromptTemplate",
    "Register",
    "RetryableError",
    "RunImages",
    "RunInfo",
    "SectionContract",
    "Session",
    "Step",
    "StepImages",
    "StepRecord",
    "TestSet",
    "TestSetLoader",
    "TestSetLoaderContract",
    "TrackedRun",
    "Tracker",
    "TrackerContract",
    "as_rgb_uint8",
    "atomic_open",
    "built_beside",
    "check_dtype",
    "check_prices",
    "component_identity",
    "component_version",
    "content_hash",
    "cost_usd",
    "count_request",
    "decode_rgb",
    "directory_lock",
    "encode_png",
    "files_digest",
    "fingerprint",
    "gradient_image",
    "hf_offline",
    "hookimpl",
    "how_to_get",
    "image_only_processor",
    "is_out_of_memory",
    "locate_model",
    "metrics_for_tracking",
    "package_version",
    "parse_answer",
    "plain_image",
    "redact",
    "retry_after_s",
    "results_digest",
    "run_description",
    "run_title",
    "series_for_tracking",
    "sniff_mime",
    "torch_dtype",
]
