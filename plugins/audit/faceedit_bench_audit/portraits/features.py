"""Paper (b)'s selection criteria 4 and 5 (METHODOLOGY §4.1: facial features unobstructed; a neutral or mildly
positive expression) measured from a face's 68 iBUG landmarks (``ibug68_00`` .. ``ibug68_67``) and its pixels.

- ``eye_aspect``: the mean over both eyes of the eye aspect ratio (Soukupová and Čech, 2016),
  ``(|p2 - p6| + |p3 - p5|) / (2 |p1 - p4|)`` of the six eye-contour points: open eyes about 0.2-0.4, closed
  or squeezed shut (a laugh) lower.
- ``mouth_open``: the gap between the inner lips over the inner mouth width, ``|p62 - p66| / |p60 - p64|``:
  closed lips near 0, a smile showing teeth about 0.1-0.2, a mouth held open more.
- ``eye_luma_ratio``: the mean luma inside both eye contours over that of the cheeks (the polygons jaw 1-3 /
  nose 31 / eye corner 39, and their mirror): dark glasses or a hand over the eyes make it small.
- ``lip_redness``: the chromaticity ``(R - G) / (R + G + B)`` of the lip ring (outer minus inner lip
  contour) minus the cheeks': lips are redder than skin; a mask, a scarf or a hand over the mouth is not.
  ``None`` for a grey-scale image, which has no colour to compare (the check is then not made).

The thresholds (:class:`~faceedit_bench_audit.portraits.quality.Criteria`) were measured with dlib's
68-point model on the real photos that ship in packages (docs/paper_b.md). Landmarks on an occluded region are
the model's guess; the pixel measures are what detects the occluder.
"""

from __future__ import annotations

import math
from collections.abc import Mapping

import numpy as np
from PIL import Image, ImageDraw

POINTS = 68


def _points(landmarks: Mapping[str, tuple[float, float]]) -> np.ndarray | None:
    names = [f"ibug68_{i:02d}" for i in range(POINTS)]
    if not all(n in landmarks for n in names):
        return None
    return np.array([landmarks[n] for n in names], dtype=np.float64)


def _dist(a: np.ndarray, b: np.ndarray) -> float:
    return float(math.hypot(*(a - b)))


def _eye_aspect(eye: np.ndarray) -> float:
    width = _dist(eye[0], eye[3])
    return (_dist(eye[1], eye[5]) + _dist(eye[2], eye[4])) / (2 * width) if width > 0 else 0.0


def _mask(shape: tuple[int, int], polygon: np.ndarray) -> np.ndarray:
    image = Image.new("L", (shape[1], shape[0]), 0)
    ImageDraw.Draw(image).polygon([(float(x), float(y)) for x, y in polygon], fill=1)
    return np.asarray(image, dtype=bool)


def _mean(values: np.ndarray, where: np.ndarray) -> float | None:
    return float(values[where].mean()) if where.any() else None


def features(rgb: np.ndarray, landmarks: Mapping[str, tuple[float, float]]) -> dict[str, float | None]:
    """The four measures of the module docstring; {} when the face has no 68-point landmarks."""
    p = _points(landmarks)
    if p is None:
        return {}
    image = np.asarray(rgb, dtype=np.float64)[..., :3]
    shape = image.shape[:2]
    luma = image @ np.array([0.299, 0.587, 0.114])
    cheeks = _mask(shape, p[[1, 2, 3, 31, 39]]) | _mask(shape, p[[15, 14, 13, 35, 42]])
    eyes = _mask(shape, p[36:42]) | _mask(shape, p[42:48])
    lips = _mask(shape, p[48:60]) & ~_mask(shape, p[60:68])
    out: dict[str, float | None] = {
        "eye_aspect": (_eye_aspect(p[36:42]) + _eye_aspect(p[42:48])) / 2,
        "mouth_open": _dist(p[62], p[66]) / w if (w := _dist(p[60], p[64])) > 0 else 0.0,
    }
    cheek_luma, eye_luma = _mean(luma, cheeks), _mean(luma, eyes)
    out["eye_luma_ratio"] = eye_luma / cheek_luma if cheek_luma and eye_luma is not None else None
    grey = float(np.abs(image[..., 0] - image[..., 1]).mean() + np.abs(image[..., 1] - image[..., 2]).mean()) < 2.0
    chroma = (image[..., 0] - image[..., 1]) / np.maximum(image.sum(axis=-1), 1.0)
    lip_chroma, cheek_chroma = _mean(chroma, lips), _mean(chroma, cheeks)
    out["lip_redness"] = (None if grey or lip_chroma is None or cheek_chroma is None
                          else lip_chroma - cheek_chroma)
    return out
