"""What plugins implement: editors, face embedders, datasets and test-set loaders.

Plugins register *factories* (see :mod:`faceedit_bench.plugin.registry`); a factory is called
with the ``params`` mapping of the selected config entry as keyword arguments and
returns an object satisfying one of these protocols.

A component may also set *optional capabilities*: attributes the core reads with a default when they are
absent (an editor's ``max_input_images``, a dataset's ``measures_identity`` ...). They are declared here,
beside the protocol they belong to (:data:`EDITOR_CAPABILITIES`, :data:`DATASET_CAPABILITIES`), not as
protocol members: ``isinstance`` against a runtime-checkable protocol requires every member, and an editor
that omits an optional one is still an editor. The core reads them only through :func:`capability`, which
also refuses a value of the wrong kind; the contract mixins check them.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Protocol, runtime_checkable

from faceedit_bench.errors import ConfigError
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
    not raised; an exception is recorded as ``failed``. Optional: :data:`EDITOR_CAPABILITIES`.
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
    empty when the editor costs nothing per call. Optional: :data:`EDITOR_CAPABILITIES`.
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
    read every face): the lines to print about what was found; a problem raises a ``FaceEditBenchError``
    saying what is missing or misnamed. Give one where reading every face is slow or has side
    effects (copying images, selecting portraits). It must write nothing. Optional attributes:
    :data:`DATASET_CAPABILITIES`."""

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


@dataclass(frozen=True)
class Capability:
    """An optional attribute of a component: its name, the value the core uses when it is absent, what it
    means, and what a valid value is (``valid(value)`` is true; ``expected`` says so to a person)."""

    name: str
    default: Any
    about: str
    expected: str
    valid: Callable[[Any], bool]
    #: The component's own attribute used when this one is absent (``partners`` falls back to ``faces``).
    fallback: str | None = None


def _count(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and value >= 1


def _fss(value: Any) -> bool:
    return value is None or (isinstance(value, (int, float)) and not isinstance(value, bool) and 0 <= value <= 1)


#: What an editor (:class:`Editor` or :class:`AsyncEditor`) may declare.
EDITOR_CAPABILITIES = (
    Capability("max_input_images", 1, "how many input images one edit takes in all, the image being edited "
               "included; a step with further inputs is sent at most this many", "an int >= 1", _count),
    Capability("prices", None, "USD per usage unit (keys of faceedit_bench.api.USAGE_KEYS, and 'as_of'); "
               "absent: the editor makes no provider calls and costs nothing; an AsyncEditor must set it "
               "(empty when free)", "a mapping or None", lambda v: v is None or isinstance(v, Mapping)),
    Capability("usage_per_call", None, "the usage of one typical call (keys of faceedit_bench.api.USAGE_KEYS), "
               "which `faceedit-bench plan` prices until the workspace has measured calls of the editor; absent: "
               "the plan's cost is unknown until then", "a mapping or None",
               lambda v: v is None or isinstance(v, Mapping)),
    Capability("prepare", None, "a method with no arguments that readies what the first call needs (an SDK's "
               "import, its client); the engine calls it once, in a worker thread, beside the first admission "
               "that embeds a face (a rerun with every face embedded skips it), and leaves any failure for the "
               "first call to meet", "a method or None", lambda v: v is None or callable(v)),
)
#: What a dataset may declare.
DATASET_CAPABILITIES = (
    Capability("measures_identity", True, "false for a dataset of images that are not faces (e.g. a "
               "question-answering benchmark): no FSS is computed and no embedder is needed", "a bool",
               lambda v: isinstance(v, bool)),
    Capability("min_base_fss", None, "the engine excludes base images whose FSS to their references is not "
               "above it", "a number in [0, 1] or None", _fss),
    Capability("single_face_only", False, "the engine excludes base images in which other than one face is "
               "detected", "a bool", lambda v: isinstance(v, bool)),
    Capability("partners", None, "a method yielding the faces a step's further 'dataset' input may use, so a "
               "dataset can yield only some faces as base images and still offer all as partners; default: "
               "faces", "a method", callable, fallback="faces"),
    Capability("label_keys", None, "the demographic labels (keys of Face.demographics) its format gives every face, "
               "checked against what the run's metrics and sections need before the first paid call; None: not "
               "declared", "a tuple of label names or None",
               lambda v: v is None or (isinstance(v, (tuple, list, frozenset)) and all(isinstance(k, str) for k in v))),
    Capability("faces_cheap", False, "true when reading its faces opens no image and copies nothing (a manifest "
               "read once): the run's faces are then checked one by one for the labels and references its "
               "metrics need, before the first paid call", "a bool", lambda v: isinstance(v, bool)),
)
CAPABILITIES: Mapping[str, tuple[Capability, ...]] = {"editor": EDITOR_CAPABILITIES,
                                                       "dataset": DATASET_CAPABILITIES}


def capability(component: Any, kind: str, name: str) -> Any:
    """The component's ``name`` capability, or its declared default; a value of the wrong kind is a
    :class:`ConfigError` naming the component's class and what is expected (raised when the run starts)."""
    declared = next((c for c in CAPABILITIES[kind] if c.name == name), None)
    if declared is None:
        raise KeyError(f"{name!r} is no declared {kind} capability")
    if not hasattr(component, name):
        return getattr(component, declared.fallback) if declared.fallback else declared.default
    value = getattr(component, name)
    if not declared.valid(value):
        raise ConfigError(f"{kind} {type(component).__name__}: {name}={value!r} must be {declared.expected} "
                          f"({declared.about})")
    return value
