"""faceedit_bench: a benchmark for text-guided editing of human faces.

Plugin authors import the core only through :mod:`faceedit_bench.api` (the hook marker, the records, the
component protocols, ...) and its submodules; every other module is private (docs/reference/api.md).
"""

from __future__ import annotations

import os

# Nothing faceedit_bench runs may call outside hosts: MLflow (and anything honouring
# DO_NOT_TRACK) sends usage telemetry unless told not to before it is imported.
for _var, _off in (("MLFLOW_DISABLE_TELEMETRY", "true"), ("DO_NOT_TRACK", "true"), ("RAY_USAGE_STATS_ENABLED", "0")):
    os.environ.setdefault(_var, _off)

import pluggy  # noqa: E402

from faceedit_bench.records import (  # noqa: E402
    EditRequest,
    EditResult,
    Face,
    FaceEmbedding,
    Outcome,
    Session,
    Step,
    TestSet,
)

__version__ = "0.1.0"

hookimpl = pluggy.HookimplMarker("faceedit_bench")

__all__ = [
    "EditRequest",
    "EditResult",
    "Face",
    "FaceEmbedding",
    "Outcome",
    "Session",
    "Step",
    "TestSet",
    "__version__",
    "hookimpl",
]
