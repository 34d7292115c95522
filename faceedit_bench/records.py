"""The vocabulary of a benchmark run: faces, sessions, steps, outcomes.

Records are frozen dataclasses of plain values so they can cross process
boundaries, be hashed into keys and be written to the ledger unchanged.
"""

from __future__ import annotations

import enum
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from faceedit_bench.face_labels import label_summary

#: Chained edits per session in paper (a) and in the version-1 test-set format (METHODOLOGY §2.1).
#: Test sets of format 2 have sessions of any length K >= 1.
STEPS_PER_SESSION = 4


class Outcome(enum.StrEnum):
    """What happened to one unit of work. Stored as its value in the ledger."""

    OK = "ok"
    REFUSED = "refused"  # the provider declined (safety filter, policy)
    NO_IMAGE = "no_image"  # an answer came back without an image
    API_ERROR = "api_error"  # the call failed after retries
    FAILED = "failed"  # the editor raised an unexpected error
    INVALID_IMAGE = "invalid_image"  # bytes that do not decode as an image
    NO_FACE = "no_face"  # no face found where one was needed
    PARSE_ERROR = "parse_error"  # a judge answer that does not fit its schema
    SKIPPED = "skipped"  # not attempted because an earlier step did not succeed
    UNSUPPORTED = "unsupported"  # the editor cannot take the request (e.g. more input images than it accepts)
    PROMPT_FAILED = "prompt_failed"  # a prompt condition's text (feature prompt, rewrite) could not be made


#: Outcomes worth another attempt when a run is resumed.
TRANSIENT_OUTCOMES = frozenset({Outcome.API_ERROR, Outcome.FAILED})


@dataclass(frozen=True)
class Face:
    """One base image I_0 of a dataset, with its identity's reference images.

    ``references`` are other images of the same identity, never the base image itself
    (METHODOLOGY §2.2). ``demographics`` maps a demographic attribute (see
    ``gender``, ``skin_tone``, ``age_group``, plus dataset-specific ones such as ``race``) to a group label,
    or ``None`` where the dataset does not know it; :meth:`label_summary` counts the labels of many faces.
    """

    face_id: str
    identity: str
    image: Path
    references: tuple[Path, ...]
    demographics: Mapping[str, str | None] = field(default_factory=dict)

    label_summary = staticmethod(label_summary)


#: How a step's ``dataset`` input picks another face (documented in faceedit_bench/run/inputs.py).
INPUT_RULES = ("other_gender", "other_gender_other_race", "female_other_race", "male_other_race")


@dataclass(frozen=True)
class StepInput:
    """An input image a step needs besides I_{k-1}, named by its role.

    ``source`` is ``file`` (``path``, a fixed image shipped with the test set) or ``dataset``
    (another face of the dataset, chosen by ``rule``, or named by its ``face`` id: see
    :mod:`faceedit_bench.run.inputs`).
    """

    role: str
    source: str
    path: str | None = None
    rule: str | None = None
    face: str | None = None


@dataclass(frozen=True)
class Step:
    """One instruction P_k of a session. The taxonomy binding (attribute, category,
    sub-axis, axis) is ``None`` for a free-text instruction; metrics that need it (OER, the
    overediting matrix) are then skipped. ``prompt_id`` / ``prompt_category`` name the
    instruction in a published prompt list (e.g. "O-01", "Occupational/Authority"). ``meta`` holds
    further published facts about the prompt as text (e.g. a ``target_occupation``,
    ``stereotyped_gender``), for judge metrics that need them."""

    k: int
    instruction: str
    attribute: str | None = None
    category: str | None = None
    sub_axis: str | None = None
    axis: str | None = None
    prompt_id: str | None = None
    prompt_category: str | None = None
    inputs: tuple[StepInput, ...] = ()
    meta: Mapping[str, str] = field(default_factory=dict, hash=False, compare=True)

    @property
    def bound(self) -> bool:
        return self.attribute is not None


@dataclass(frozen=True)
class Session:
    """K >= 1 instructions applied to every base image: K = 1 is a single edit of the base
    image, K > 1 chains each edit on the previous step's output. ``face_id`` ties a session to the one
    base image it is written for (e.g. an item of a benchmark of source images); None: every face of the dataset."""

    session_id: str
    test_set: str
    steps: tuple[Step, ...]
    #: The prompt condition the session runs under (faceedit_bench/run/condition_prompts.py); "baseline" is the
    #: test set's own instructions.
    condition: str = "baseline"
    face_id: str | None = None

    def applies_to(self, face_id: str) -> bool:
        return self.face_id is None or self.face_id == face_id

    @property
    def bound(self) -> bool:
        """Every step carries a taxonomy binding."""
        return all(step.bound for step in self.steps)


def version_text(version: Any) -> str:
    """A version as people read it: ``v1.0.0`` for ``1.0.0``; a name (``published``, a model) unchanged;
    ``""`` for none."""
    text = "" if version is None else str(version).strip()
    return f"v{text}" if text[:1].isdigit() else text


@dataclass(frozen=True)
class TestSet:
    """A frozen, versioned list of sessions. ``content_hash`` is recorded with every result."""

    __test__ = False  # not a pytest class

    name: str
    version: str
    content_hash: str
    taxonomy_version: str
    sessions: tuple[Session, ...]
    reconstruction: bool = True
    description: str = ""

    @property
    def bound(self) -> bool:
        """Every step of every session carries a taxonomy binding (paper (a)'s sets do)."""
        return all(session.bound for session in self.sessions)


@dataclass(frozen=True)
class EditRequest:
    """Everything an editor needs for one step: I_{k-1} as encoded bytes and P_k, plus the
    step's further input images (``extra_images``, named by ``extra_roles``) in order. An
    editor takes at most its ``max_input_images`` (default 1) images in all; a request with
    more never reaches it (outcome ``unsupported``)."""

    image: bytes
    instruction: str
    face_id: str
    session_id: str
    k: int
    seed: int
    extra_images: tuple[bytes, ...] = ()
    extra_roles: tuple[str, ...] = ()


@dataclass(frozen=True)
class EditResult:
    """An editor's answer. ``image`` is set only when ``outcome`` is ``ok``."""

    outcome: Outcome
    image: bytes | None = None
    reason: str = ""
    usage: Mapping[str, Any] = field(default_factory=dict)

    @classmethod
    def ok(cls, image: bytes, **usage: Any) -> EditResult:
        return cls(Outcome.OK, image=image, usage=usage)


@dataclass(frozen=True)
class FaceEmbedding:
    """The embedding of the chosen face in an image, or why there is none."""

    outcome: Outcome
    vector: Any = None  # numpy float32 array when outcome is ok
    n_faces: int = 0
    reason: str = ""


@dataclass(frozen=True)
class DetectedFace:
    """One face a detector found: its box ``(left, top, right, bottom)`` in pixels, the detector's
    score, and named landmarks ``{name: (x, y)}``. Names: ``left_eye`` / ``right_eye`` (the eye
    centres on the image's left and right), ``nose_tip``, optionally ``mouth_left`` / ``mouth_right``
    and ``jaw_left`` / ``jaw_right`` (the face contour at eye height, image left and right), and a
    detector with the 68-point iBUG layout also gives every point as ``ibug68_00`` .. ``ibug68_67``
    (the portrait checks of eyes and mouth read them)."""

    box: tuple[float, float, float, float]
    score: float
    landmarks: Mapping[str, tuple[float, float]] = field(default_factory=dict, hash=False)


# -- results the stages hand on (edit stage -> score stage -> analysis -> report) ----------


@dataclass
class StepState:
    k: int
    outcome: Outcome
    reason: str
    input_hash: str
    output_hash: str | None
    resumed: bool
    usage: dict[str, Any] = field(default_factory=dict)
    inputs: tuple[tuple[str, str], ...] = ()  # the step's further input images: (role, stored hash)
    prompt: str | None = None  # the prompt the editor received, where a condition composed one


@dataclass(frozen=True)
class ImageScore:
    """How one image I_k was scored: ``ok`` or ``no_face`` (FSS_k = 0, METHODOLOGY §6.5),
    or a failure (``invalid_image``, ``failed``) that leaves FSS_k undefined."""

    outcome: Outcome
    n_faces: int
    fss: float | None


@dataclass
class SessionResult:
    """One (face, session): its steps, the scores of I_0..I_k, and why it is excluded if it is."""

    face: Face
    session: Session
    steps: list[StepState]
    excluded: str | None  # None when included in metrics, else the reason
    scores: tuple[ImageScore, ...] = ()
    image_hashes: tuple[str | None, ...] = ()
    judged: Any = None  # a JudgedSession when a judge scored this session
    measured: Any = None  # a MeasuredSession when image metrics measured it (scoring/image_metric.py)

    @property
    def fss(self) -> tuple[float, ...] | None:
        """FSS_0..FSS_K of an included session, else None."""
        if self.excluded is not None:
            return None
        return tuple(s.fss for s in self.scores if s.fss is not None)


@dataclass(frozen=True)
class JudgeRequest:
    """One judge attempt. ``images`` are PNG/JPEG bytes in the order the prompt names them;
    ``schema`` is the JSON schema of the expected answer (for providers with structured
    output); ``seed`` varies between parse retries; ``system`` is a system message to send
    before the images and the prompt ("" for none). ``image_labels`` (empty, or one text per
    image, ``""`` for none) are the texts the judge metric puts before its images, e.g. paper (b)'s
    ``"SOURCE IMAGE:"``: a judge lays the request out as :meth:`parts` says."""

    prompt: str
    images: tuple[bytes, ...]
    schema: Mapping[str, Any]
    schema_name: str
    seed: int
    # keyword-only: two optional texts side by side are too easy to pass in each other's place
    system: str = field(default="", kw_only=True)
    image_labels: tuple[str, ...] = field(default=(), kw_only=True)

    def __post_init__(self) -> None:
        if self.image_labels and len(self.image_labels) != len(self.images):
            raise ValueError(f"a judge request has {len(self.images)} image(s) but {len(self.image_labels)} "
                             "image label(s); give one label per image ('' for none) or none at all")

    def parts(self) -> tuple[tuple[str, str | bytes], ...]:
        """The user turn in order, as ``("text", str)`` and ``("image", bytes)`` parts: each image,
        preceded by its label when it has one, then the prompt. Every judge plugin sends these parts in
        this order, so a metric's declared layout reaches every provider alike."""
        out: list[tuple[str, str | bytes]] = []
        for i, image in enumerate(self.images):
            label = self.image_labels[i] if self.image_labels else ""
            if label:
                out.append(("text", label))
            out.append(("image", image))
        out.append(("text", self.prompt))
        return tuple(out)


@dataclass(frozen=True)
class JudgeReply:
    """What the model said, unparsed: ``ok`` with ``text``, or ``refused`` (a provider
    safety block or a model refusal) with the reason. Transient failures are raised as
    :class:`~faceedit_bench.execution.call_errors.RetryableError` instead; permanent API failures
    (400, 401 ...) are returned as ``api_error`` with the status in ``reason``."""

    outcome: Outcome
    text: str | None = None
    reason: str = ""
    usage: Mapping[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class JudgeAnswer:
    """The recorded result of one judge call (after parse retries)."""

    outcome: Outcome  # ok | refused | api_error | parse_error | failed (the judge plugin raised)
    value: dict[str, Any] | None
    raw: str | None
    reason: str
    usage: dict[str, Any]
    template: str  # name@version
    template_hash: str
    resumed: bool = False


@dataclass
class AdmittedFace:
    """A face the admission stage accepted: its stored base image and references, their
    embeddings' vectors and FSS_0. The edit and score stages work on these."""

    face: Face
    base_hash: str
    reference_hashes: list[str]
    fss0: float = 0.0
    base_n_faces: int = 0
    reference_vectors: list[Any] = field(default_factory=list)


#: A session after the edit stage: its face, the session, and its steps' states.
Edited = tuple[AdmittedFace, Session, list[StepState]]

#: Session exclusion reason when the spending budget stopped the run before it finished.
STOPPED_BY_BUDGET = "stopped_by_budget"
