"""The public API for plugin authors: everything a plugin may import from the core.

A plugin imports from this module only (a layer contract in ``pyproject.toml`` holds
that); every other core module is private and may change between releases. The contract
test mixins (``EditorContract`` ...) need pytest and are loaded on first use.
"""

from __future__ import annotations

from typing import Any

from faceedit_bench import hookimpl
from faceedit_bench.batching import MicroBatcher, is_out_of_memory
from faceedit_bench.components import AsyncEditor, Dataset, Editor, FaceEmbedder, TestSetLoader, Tracker
from faceedit_bench.cost import USAGE_KEYS, check_prices, cost_usd
from faceedit_bench.embedding import LazyModels, as_rgb_uint8, files_digest
from faceedit_bench.errors import ConfigError, DatasetError, FaceEditBenchError, ImageError, ModelNotFoundError
from faceedit_bench.execution import CallLimits, GaveUp, RetryableError, count_request, limits_from_config
from faceedit_bench.images import content_hash, decode_rgb, encode_png, sniff_mime
from faceedit_bench.judging import Judge, JudgeAnswer, JudgeReply, JudgeRequest, ParseFailure, PromptTemplate
from faceedit_bench.records import (
    EditRequest,
    EditResult,
    Face,
    FaceEmbedding,
    Outcome,
    Session,
    Step,
    TestSet,
)
from faceedit_bench.registry import Register
from faceedit_bench.run import ComponentInfo, RunInfo, StepRecord
from faceedit_bench.secrets import MissingSecretError, read_secret, redact

#: Names served lazily from :mod:`faceedit_bench.testing` (it imports pytest).
_TESTING = ("EditorContract", "PluginDistributionContract", "PixelEmbedder", "gradient_image")


def __getattr__(name: str) -> Any:
    if name in _TESTING:
        from faceedit_bench import testing

        return getattr(testing, name)
    raise AttributeError(f"module 'faceedit_bench.api' has no attribute {name!r}")


__all__ = [
    "USAGE_KEYS",
    "AsyncEditor",
    "CallLimits",
    "ComponentInfo",
    "ConfigError",
    "Dataset",
    "DatasetError",
    "EditRequest",
    "EditResult",
    "Editor",
    "EditorContract",
    "Face",
    "FaceEditBenchError",
    "FaceEmbedder",
    "FaceEmbedding",
    "GaveUp",
    "ImageError",
    "Judge",
    "JudgeAnswer",
    "JudgeReply",
    "JudgeRequest",
    "LazyModels",
    "MicroBatcher",
    "MissingSecretError",
    "ModelNotFoundError",
    "Outcome",
    "ParseFailure",
    "PixelEmbedder",
    "PluginDistributionContract",
    "PromptTemplate",
    "Register",
    "RetryableError",
    "RunInfo",
    "Session",
    "Step",
    "StepRecord",
    "TestSet",
    "TestSetLoader",
    "Tracker",
    "as_rgb_uint8",
    "check_prices",
    "content_hash",
    "cost_usd",
    "count_request",
    "decode_rgb",
    "encode_png",
    "files_digest",
    "gradient_image",
    "hookimpl",
    "is_out_of_memory",
    "limits_from_config",
    "read_secret",
    "redact",
    "sniff_mime",
]
