"""faceedit_bench: a benchmark for text-guided editing of human faces.

Public API for plugin authors: :data:`hookimpl`, the records in
:mod:`faceedit_bench.records` and the protocols in :mod:`faceedit_bench.components`.
"""

from __future__ import annotations

import pluggy

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
