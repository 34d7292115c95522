"""What plugins implement: editors, face embedders, datasets and test-set loaders.

Plugins register *factories* (see :mod:`faceedit_bench.plugin.registry`); a factory is called
with the ``params`` mapping of the selected config entry as keyword arguments and
returns an object satisfying one of these protocols.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from typing import TYPE_CHECKING, Any, Protocol, runtime_checkable

from faceedit_bench.execution.limits import CallLimits
from faceedit_bench.records import (
    DetectedFace,
    EditRequest,
    EditResult,
    Face,
    FaceEmbedding,
    JudgeReply,
    JudgeRequest,
    TestSet,
)

if TYPE_CHECKING:  # only annotations: a command that loads plugins does not import numpy for them
    import numpy as np


@runtime_checkable
class Editor(Protocol):
    """Edits one image with one instruction.

    ``describe()`` returns the exact model version and every parameter that can change
    the output; it is hashed into the identity of each edit, so a changed parameter
    never reuses an old image. Refusals and provider errors are returned as outcomes,
    not raised; an exception is recorded as ``failed``.
    """

    def describe(self) -> Mapping[str, Any]: ...

    def edit(self, request: EditRequest) -> EditResult: ...


@runtime_checkable
class AsyncEditor(Protocol):
    """An editor whose calls go through the core's execution layer: hosted APIs, or local
    models that batch the requests arriving together.

    ``aedit`` makes ONE attempt. It returns ``ok`` / ``refused`` / ``no_image`` (and
    ``api_error`` for a permanent failure such as a 400, with the status in ``reason``), and
    raises :class:`~faceedit_bench.execution.call_errors.RetryableError` for transient failures; the
    engine retries, rate-limits, times out and counts. ``limits`` says how calls may be
    made; ``prices`` maps usage keys (see :mod:`faceedit_bench.execution.cost`) to USD per unit, or is
    empty when the editor costs nothing per call.
    """

    limits: CallLimits
    prices: Mapping[str, float]

    def describe(self) -> Mapping[str, Any]: ...

    async def aedit(self, request: EditRequest) -> EditResult: ...


@runtime_checkable
class FaceEmbedder(Protocol):
    """Detects the face in an image and embeds it.

    ``describe()`` must include ``version`` (model file hashes or package version) and
    ``similarity`` (a one-line statement of the similarity scale): scores from
    different embedders are never compared, and the report says which scale applies.
    """

    def describe(self) -> Mapping[str, Any]: ...

    def embed(self, rgb: np.ndarray) -> FaceEmbedding:
        """Embed the largest face of an RGB uint8 image of shape (H, W, 3)."""
        ...

    def similarity(self, a: np.ndarray, b: np.ndarray) -> float:
        """Similarity of two embeddings on this embedder's documented scale, 0 to 1."""
        ...


@runtime_checkable
class FaceDetector(Protocol):
    """An embedder that also reports every face it finds with landmarks (optional capability, used
    to check source portraits: one face, its size, yaw and roll). ``describe()`` as for embedders."""

    def describe(self) -> Mapping[str, Any]: ...

    def detect(self, rgb: np.ndarray) -> Sequence[DetectedFace]:
        """Every face in an RGB uint8 image of shape (H, W, 3), largest first."""
        ...


@runtime_checkable
class Judge(Protocol):
    """An MLLM judge. ``describe()`` names the exact model version and every decoding
    parameter (temperature, seed policy, API flavour); it is hashed into every cache key.
    ``limits`` says how calls may be made; ``prices`` maps usage keys to USD per unit."""

    limits: CallLimits
    prices: Mapping[str, float]

    def describe(self) -> Mapping[str, Any]: ...

    async def ajudge(self, request: JudgeRequest) -> JudgeReply: ...


@runtime_checkable
class Dataset(Protocol):
    """A source of base faces with references and demographic labels.

    Optional: a ``check(**params) -> list[str]`` classmethod on the dataset's class, which
    ``faceedit-bench data check <name> <root>`` calls instead of its default (construct the dataset and
    read every face): the lines to print about what was found; a problem raises ``DatasetError``
    saying what is missing or misnamed. Give one where reading every face is slow or has side
    effects (copying images, selecting portraits). It must write nothing."""

    def describe(self) -> Mapping[str, Any]: ...

    def faces(self) -> Iterator[Face]:
        """Yield faces lazily; the engine streams them and never holds them all."""
        ...


class TestSetLoader(Protocol):
    """Returns a frozen test set; registered under the test set's name."""

    __test__ = False

    def __call__(self) -> TestSet: ...


@runtime_checkable
class Tracker(Protocol):
    """An experiment tracker. Once selected it is registered with the plugin manager
    for the duration of the run, so it receives the run lifecycle hooks
    (``faceedit_run_start``, ``faceedit_step_done``, ``faceedit_run_end``,
    ``faceedit_run_error``) like any other plugin."""

    def describe(self) -> Mapping[str, Any]: ...
