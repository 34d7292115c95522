"""insightface ``buffalo_l`` face embedder: the paper's FSS model (METHODOLOGY §2.5, §6.5).

SCRFD-10GF detection (``det_10g.onnx``) and ArcFace R50 recognition (``w600k_r50.onnx``)
from a local model directory. Only those two models are loaded; the landmark and
gender/age models of the pack are not needed for FSS. insightface is never asked to
download: the directory is checked first and a missing pack raises
``ConfigError`` saying where to put it.

``insightface`` and ``onnxruntime`` are imported only inside methods, so importing this
module and building, describing or pickling an embedder stays cheap.
"""

from __future__ import annotations

import functools
import importlib.metadata
import os
import warnings
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from faceedit_bench.api import ConfigError, DetectedFace, FaceEmbedding, LazyModels, Outcome
from faceedit_bench.api.images import decode_rgb

DEFAULT_MODEL_DIR = "~/.insightface/models/buffalo_l"
DETECTOR_FILE = "det_10g.onnx"
RECOGNIZER_FILE = "w600k_r50.onnx"

#: One-line statement of the similarity scale, reported by ``describe()``.
SIMILARITY = "cosine of L2-normalised ArcFace embeddings (paper FSS scale)"


class InsightFaceEmbedder(LazyModels):
    """Embeds the largest face of an image with insightface buffalo_l (ArcFace R50, 512-d).

    The RGB input is converted to BGR, the channel order insightface expects (its blob
    builder swaps back to RGB). The detector returns boxes with 5 keypoints. The largest
    box is kept, with ties going to the higher detector score (METHODOLOGY §6.5). The face
    is aligned to the ArcFace template with those keypoints and embedded. The embedding
    is the L2-normalised 512-d vector.

    Similarity scale: ``similarity(a, b)`` is the raw cosine (dot product of the
    normalised embeddings), the paper's FSS. It is not clipped: its range is [-1, 1]
    in principle, and in practice different people score near 0. It is not comparable
    with the dlib embedder's scale.

    :param model_dir: the unpacked buffalo_l pack. Only ``det_10g.onnx`` and
        ``w600k_r50.onnx`` are needed. ``~`` is expanded.
    :param providers: onnxruntime execution providers, e.g. ``["CUDAExecutionProvider",
        "CPUExecutionProvider"]``. Not part of ``describe()``: providers change the
        numerics only at float rounding level.
    :param det_size: detector input size, an int for a square or ``[width, height]``.
    :param det_thresh: minimum detector score for a face.

    The constructor only checks the files; the models load on the first :meth:`embed`.
    Pickling drops loaded models. One instance serialises its own calls with a lock.
    """

    def __init__(
        self,
        model_dir: str | os.PathLike[str] = DEFAULT_MODEL_DIR,
        providers: Sequence[str] = ("CPUExecutionProvider",),
        det_size: int | Sequence[int] = 640,
        det_thresh: float = 0.5,
    ):
        self.model_dir = str(Path(model_dir).expanduser())
        if isinstance(providers, str) or not providers or not all(isinstance(p, str) for p in providers):
            raise ConfigError(
                "embedder.params.providers must be a non-empty list of onnxruntime provider names, "
                f"got {providers!r}."
            )
        self.providers = [str(p) for p in providers]
        self.det_size = _det_size(det_size)
        number = isinstance(det_thresh, (int, float)) and not isinstance(det_thresh, bool)
        if not number or not 0 <= det_thresh <= 1:
            raise ConfigError(f"embedder.params.det_thresh must be a number in [0, 1], got {det_thresh!r}.")
        self.det_thresh = float(det_thresh)
        self.detector_path = os.path.join(self.model_dir, DETECTOR_FILE)
        self.recognizer_path = os.path.join(self.model_dir, RECOGNIZER_FILE)
        check_model_dir(self.model_dir)
        super().__init__()  # models load lazily on first use and never travel in a pickle

    def __repr__(self) -> str:
        return (
            f"InsightFaceEmbedder(model_dir={self.model_dir!r}, providers={self.providers!r}, "
            f"det_size={self.det_size!r}, det_thresh={self.det_thresh!r})"
        )

    # -- FaceEmbedder protocol -------------------------------------------------------

    def describe(self) -> Mapping[str, Any]:
        return {
            "name": "insightface",
            "version": f"{_insightface_version()}+{self.files_digest(self.detector_path, self.recognizer_path)[:12]}",
            "detector": f"{DETECTOR_FILE} (SCRFD)",
            "recognizer": f"{RECOGNIZER_FILE} (ArcFace)",
            "det_size": list(self.det_size),
            "det_thresh": self.det_thresh,
            "similarity": SIMILARITY,
        }

    def embed(self, rgb: np.ndarray) -> FaceEmbedding:
        """Embed the largest face of an RGB uint8 image of shape (H, W, 3)."""
        from insightface.utils import face_align

        bgr = decode_rgb(rgb)[:, :, ::-1].copy()  # insightface expects BGR
        detector, recognizer = self._load()
        with self._lock:
            boxes, keypoints = detector.detect(bgr, max_num=0)
            if boxes.shape[0] == 0:
                return FaceEmbedding(
                    Outcome.NO_FACE,
                    n_faces=0,
                    reason=f"insightface SCRFD found no face (det_thresh={self.det_thresh}, "
                    f"det_size={self.det_size})",
                )
            areas = (boxes[:, 2] - boxes[:, 0]) * (boxes[:, 3] - boxes[:, 1])
            best = max(range(len(boxes)), key=lambda i: (float(areas[i]), float(boxes[i, 4])))
            with warnings.catch_warnings():
                # insightface's norm_crop calls a scikit-image API deprecated in 0.26.
                warnings.simplefilter("ignore", FutureWarning)
                chip = face_align.norm_crop(bgr, keypoints[best], image_size=recognizer.input_size[0])
            raw = np.asarray(recognizer.get_feat(chip), dtype=np.float64).ravel()
        norm = np.linalg.norm(raw)
        if not np.isfinite(norm) or norm == 0:
            raise RuntimeError(f"recognizer {self.recognizer_path} returned a degenerate embedding")
        return FaceEmbedding(Outcome.OK, vector=(raw / norm).astype(np.float32), n_faces=int(boxes.shape[0]))

    def detect(self, rgb: np.ndarray) -> tuple[DetectedFace, ...]:
        """Every SCRFD detection, largest first, with its 5 keypoints named (FaceDetector protocol): the
        eye centres, nose tip and mouth corners, in the image's left-right order as SCRFD reports them."""
        bgr = decode_rgb(rgb)[:, :, ::-1].copy()
        detector, _ = self._load()
        with self._lock:
            boxes, keypoints = detector.detect(bgr, max_num=0)
        names = ("left_eye", "right_eye", "nose_tip", "mouth_left", "mouth_right")
        found = [DetectedFace(tuple(float(v) for v in boxes[i, :4]), float(boxes[i, 4]),
                              {n: (float(x), float(y)) for n, (x, y) in zip(names, keypoints[i])})
                 for i in range(boxes.shape[0])]
        return tuple(sorted(found, key=lambda f: -(f.box[2] - f.box[0]) * (f.box[3] - f.box[1])))

    def similarity(self, a: np.ndarray, b: np.ndarray) -> float:
        """Cosine of the two embeddings (dot product of unit vectors); not clipped."""
        va = np.asarray(a, dtype=np.float64).ravel()
        vb = np.asarray(b, dtype=np.float64).ravel()
        if va.shape != vb.shape:
            raise ValueError(f"embeddings differ in size: {va.size} vs {vb.size}")
        return float(np.dot(va, vb) / (np.linalg.norm(va) * np.linalg.norm(vb)))

    # -- internals ---------------------------------------------------------------------

    def _load(self) -> tuple[Any, Any]:
        if self._models is None:
            with self._lock:
                if self._models is None:
                    self._models = self._load_models()
        return self._models

    def _load_models(self) -> tuple[Any, Any]:
        from insightface.model_zoo import get_model

        # A path ending in .onnx is routed by its inputs/outputs and never downloaded.
        ctx_id = -1 if all(p == "CPUExecutionProvider" for p in self.providers) else 0
        detector = get_model(self.detector_path, providers=self.providers)
        if getattr(detector, "taskname", None) != "detection" or not getattr(detector, "use_kps", False):
            raise ConfigError(
                f"{self.detector_path} is not an SCRFD face detector with 5 keypoints "
                f"(insightface loaded it as {type(detector).__name__}). {_pack_hint(self.model_dir)}"
            )
        recognizer = get_model(self.recognizer_path, providers=self.providers)
        if getattr(recognizer, "taskname", None) != "recognition":
            raise ConfigError(
                f"{self.recognizer_path} is not an ArcFace recognition model "
                f"(insightface loaded it as {type(recognizer).__name__}). {_pack_hint(self.model_dir)}"
            )
        detector.prepare(ctx_id, input_size=self.det_size, det_thresh=self.det_thresh)
        recognizer.prepare(ctx_id)
        return detector, recognizer


def check_model_dir(model_dir: str) -> None:
    """Raise :class:`ConfigError` unless ``model_dir`` holds the two FSS models."""
    if not os.path.isdir(model_dir):
        raise ConfigError(
            f"insightface model directory {model_dir} does not exist. {_pack_hint(model_dir)}"
        )
    missing = [n for n in (DETECTOR_FILE, RECOGNIZER_FILE) if not os.path.isfile(os.path.join(model_dir, n))]
    if missing:
        raise ConfigError(
            f"insightface model directory {model_dir} lacks {' and '.join(missing)}. {_pack_hint(model_dir)}"
        )


def _pack_hint(model_dir: str) -> str:
    return (
        f"Put the buffalo_l pack in {model_dir}: it needs {DETECTOR_FILE} (SCRFD detector) and "
        f"{RECOGNIZER_FILE} (ArcFace recognizer). buffalo_l.zip from the insightface v0.7 release "
        f"(github.com/deepinsight/insightface/releases/tag/v0.7) unpacks there. Or point to another "
        f"directory with the config override embedder.params.model_dir=/path/to/buffalo_l."
    )


def _det_size(value: Any) -> tuple[int, int]:
    if isinstance(value, (int, np.integer)) and not isinstance(value, bool):
        pair: tuple[Any, ...] = (value, value)
    elif isinstance(value, Sequence) and not isinstance(value, str) and len(value) == 2:
        pair = tuple(value)
    else:
        pair = ()
    if len(pair) != 2 or not all(
        isinstance(v, (int, np.integer)) and not isinstance(v, bool) and v >= 32 and v % 32 == 0 for v in pair
    ):
        raise ConfigError(
            "embedder.params.det_size must be a multiple of 32 (>= 32), or [width, height] of such, "
            f"got {value!r}."
        )
    return int(pair[0]), int(pair[1])




@functools.lru_cache(maxsize=1)
def _insightface_version() -> str:
    try:
        return importlib.metadata.version("insightface")
    except importlib.metadata.PackageNotFoundError:
        return "unknown"

