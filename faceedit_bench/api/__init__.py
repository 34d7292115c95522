"""The public API, topic **components and records**: what an editor, judge, face embedder or detector, dataset,
test-set loader or tracker plugin imports from the core: the hook marker and registration, the component
protocols, the records they exchange, the errors, the call plumbing of hosted and local models, and the files
a plugin writes or reads.

The other topics are submodules, one home each: :mod:`faceedit_bench.api.sections` (report sections and what
adds to a finished run), :mod:`faceedit_bench.api.images` (pixels, the run's images, image metrics),
:mod:`faceedit_bench.api.statistics`, :mod:`faceedit_bench.api.judging` (judge metrics, prompts, test sets)
and :mod:`faceedit_bench.api.testing` (the contract mixins). A plugin imports from these modules only (a layer
contract in ``pyproject.toml`` holds that); every other core module is private and may change between
releases.

Importing this module is cheap: each name loads its home module on first use (``tests/test_api_surface.py``
keeps the count of names, the import time and the modules loaded).
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from faceedit_bench import hookimpl
    from faceedit_bench.api._plugin_set import create_registered, registered
    from faceedit_bench.errors import ConfigError, FaceEditBenchError, ImageError
    from faceedit_bench.execution.batching import MicroBatcher
    from faceedit_bench.execution.call_errors import RetryableError
    from faceedit_bench.execution.hosted import HostedComponent, HostedConnection, HostedParams
    from faceedit_bench.execution.limits import CallLimits
    from faceedit_bench.execution.local_models import ModelSource
    from faceedit_bench.execution.secrets import redact
    from faceedit_bench.keys import fingerprint
    from faceedit_bench.plugin.payloads import RunInfo, StepRecord, TrackedRun
    from faceedit_bench.plugin.protocols import AsyncEditor, FaceDetector, FaceEmbedder, Judge
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
        SessionResult,
        Step,
        TestSet,
    )
    from faceedit_bench.scoring.embedding import LazyModels
    from faceedit_bench.storage.atomic import atomic_open
    from faceedit_bench.storage.first_time import built_beside, restore_replaced
    from faceedit_bench.storage.locks import file_lock
    from faceedit_bench.storage.user_files import csv_records, file_under, parse_json, read_utf8

#: Each public name and the private module that holds it, by use. A name is imported on first use, so a plugin
#: that is only loaded (``faceedit-bench plugins``, a run's start) pays only for what it touches.
_HOMES: dict[str, str] = {
    # registering a plugin, and what is registered
    "hookimpl": "faceedit_bench",
    "Register": "faceedit_bench.plugin.registry",
    "registered": "faceedit_bench.api._plugin_set",
    "create_registered": "faceedit_bench.api._plugin_set",
    # the component protocols
    **dict.fromkeys(("AsyncEditor", "FaceDetector", "FaceEmbedder", "Judge"), "faceedit_bench.plugin.protocols"),
    # the records components exchange
    **dict.fromkeys(("DetectedFace", "EditRequest", "EditResult", "Face", "FaceEmbedding", "JudgeAnswer",
                     "JudgeReply", "JudgeRequest", "Outcome", "Session", "SessionResult", "Step", "TestSet"),
                    "faceedit_bench.records"),
    # errors a user sees as one line (exit code 2)
    **dict.fromkeys(("ConfigError", "FaceEditBenchError", "ImageError"), "faceedit_bench.errors"),
    # calls: limits, retries, secrets kept out of text
    "CallLimits": "faceedit_bench.execution.limits",
    "RetryableError": "faceedit_bench.execution.call_errors",
    "redact": "faceedit_bench.execution.secrets",
    # hosted providers: one base, which also reads their answers and failures (docs/providers.md)
    **dict.fromkeys(("HostedComponent", "HostedConnection", "HostedParams"), "faceedit_bench.execution.hosted"),
    # local models: the model found and its loading helpers, lazy loading and its files' digest, batches
    "ModelSource": "faceedit_bench.execution.local_models",
    "LazyModels": "faceedit_bench.scoring.embedding",
    "MicroBatcher": "faceedit_bench.execution.batching",
    # trackers
    **dict.fromkeys(("RunInfo", "StepRecord", "TrackedRun"), "faceedit_bench.plugin.payloads"),
    # files: written atomically, locked, read with caps and one-line errors
    "fingerprint": "faceedit_bench.keys",
    "atomic_open": "faceedit_bench.storage.atomic",
    "built_beside": "faceedit_bench.storage.first_time",
    "restore_replaced": "faceedit_bench.storage.first_time",
    "file_lock": "faceedit_bench.storage.locks",
    **dict.fromkeys(("csv_records", "file_under", "parse_json", "read_utf8"), "faceedit_bench.storage.user_files"),
}


def __getattr__(name: str) -> Any:
    if name in _HOMES:
        value = getattr(importlib.import_module(_HOMES[name]), name)
        globals()[name] = value  # the next use is a plain attribute
        return value
    raise AttributeError(f"module 'faceedit_bench.api' has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted(__all__)


__all__ = ["AsyncEditor", "atomic_open", "built_beside", "CallLimits", "ConfigError",
           "create_registered", "csv_records", "DetectedFace", "EditRequest", "EditResult", "Face",
           "FaceDetector", "FaceEditBenchError", "FaceEmbedder", "FaceEmbedding", "file_lock", "file_under",
           "fingerprint", "hookimpl", "HostedComponent", "HostedConnection", "HostedParams", "ImageError", "Judge",
           "JudgeAnswer", "JudgeReply", "JudgeRequest", "LazyModels", "MicroBatcher",
           "ModelSource", "Outcome", "parse_json", "read_utf8", "redact", "Register", "registered",
           "restore_replaced", "RetryableError", "RunInfo", "Session", "SessionResult", "Step",
           "StepRecord", "TestSet", "TrackedRun"]
