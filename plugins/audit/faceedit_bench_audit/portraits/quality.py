"""Automatic checks of a source portrait against paper (b)'s selection criteria (METHODOLOGY §4.1).

The measurable criteria: exactly one face, face size, frontal (yaw), upright (roll), sharp focus and even
lighting, and, where the detector gives the 68 iBUG landmarks, unobstructed eyes and mouth and an expression
that is not eyes shut or mouth open (:mod:`~faceedit_bench_audit.portraits.features`). Faces and
landmarks come from a :class:`~faceedit_bench.plugin.protocols.FaceDetector` plugin; everything else is pixel
statistics (numpy). The person who approves the contact sheet still sees every portrait: a smile's degree and
an occluder the measures miss are theirs to judge.

Measurements (all recorded, so a threshold can be revisited without re-detecting):

- ``n_faces``: detections; ``face_px``: the shorter side of the largest face box.
- ``roll_deg``: the angle of the line from the image-left to the image-right eye centre.
- ``yaw_deg``: with the landmarks de-rolled, ``asin((a - b) / (a + b))`` where ``a`` and ``b`` are the
  horizontal distances from the nose tip to the face contour at eye height on the image's left and right
  (a head seen as a cylinder); without contour landmarks, ``asin(2 d / iod)`` with ``d`` the nose tip's
  offset from the eye midpoint and ``iod`` the eye distance. An approximation, good for rejecting
  profiles and strong turns, not a head-pose estimate.
- ``sharpness``: the variance of the 4-neighbour Laplacian of the face box's luma (0-255 scale), the box
  first resampled to :data:`SHARPNESS_SIDE` px square so the value does not depend on the image size.
- ``luma_mean``: mean luma of the face box; ``clipped``: the share of its pixels at luma <= 5 or >= 250;
  ``side_contrast``: ``|mean(left half) - mean(right half)| / mean`` of the face box (harsh side light).
- ``eye_luma_ratio``, ``lip_redness`` (occluded eyes, mouth), ``eye_aspect``, ``mouth_open`` (expression):
  see :mod:`~faceedit_bench_audit.portraits.features`; absent without 68-point landmarks, and
  then not checked (the manifest counts such portraits).
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass
from typing import Any

import numpy as np
from PIL import Image

from faceedit_bench.api import ConfigError, DetectedFace
from faceedit_bench_audit.portraits.features import features

#: Every rejection reason, in the order the checks run (the first failing check is the reason). Lighting
#: comes before focus: a dark face also has a weak Laplacian, and "too dark" is the cause.
REASONS = ("unreadable", "no_face", "several_faces", "small_face", "not_frontal", "tilted", "too_dark",
           "too_bright", "clipped", "uneven_lighting", "blurry", "eyes_covered", "mouth_covered", "eyes_closed",
           "mouth_open")
SHARPNESS_SIDE = 128
#: Criteria that may be negative (a difference of chromaticities).
SIGNED = frozenset({"min_lip_redness"})


@dataclass(frozen=True)
class Criteria:
    """Thresholds of the checks; defaults follow §4.1 (minimum face size 128 px) or were chosen on
    real photos (see docs/paper_b.md)."""

    min_face_px: float = 128.0
    max_abs_yaw_deg: float = 20.0
    max_abs_roll_deg: float = 10.0
    min_sharpness: float = 30.0
    min_luma: float = 60.0
    max_luma: float = 200.0
    max_clipped: float = 0.05
    max_side_contrast: float = 0.35
    # criteria 4-5 (68-point landmarks), measured on real photos: docs/paper_b.md
    min_eye_luma_ratio: float = 0.30
    min_lip_redness: float = 0.0
    min_eye_aspect: float = 0.12
    max_mouth_open: float = 0.30

    @classmethod
    def from_mapping(cls, values: Mapping[str, Any]) -> Criteria:
        known = set(asdict(cls()))
        unknown = sorted(set(values) - known)
        if unknown:
            raise ConfigError(f"unknown portrait criteria {', '.join(unknown)}; known: {', '.join(sorted(known))}")
        out = {}
        for key, value in values.items():
            try:
                out[key] = float(value)
            except (TypeError, ValueError):
                raise ConfigError(f"portrait criterion {key} must be a number, got {value!r}") from None
            if not math.isfinite(out[key]) or (out[key] < 0 and key not in SIGNED):
                raise ConfigError(f"portrait criterion {key} must be a finite number >= 0, got {value!r}")
        return cls(**out)


def check_portrait(rgb: np.ndarray, faces: Sequence[DetectedFace], criteria: Criteria) -> tuple[str | None, dict]:
    """``(reason or None, measurements)`` for one image and its detections (largest first)."""
    measured: dict[str, Any] = {"n_faces": len(faces)}
    if not faces:
        return "no_face", measured
    face = faces[0]
    left, top, right, bottom = face.box
    measured["face_px"] = round(float(min(right - left, bottom - top)), 1)
    measured.update({k: round(v, 2) for k, v in pose(face.landmarks).items()})
    region = _crop(luma(rgb), face.box)
    measured.update({k: round(v, 4) for k, v in pixel_stats(region).items()})
    measured.update({k: None if v is None else round(v, 4) for k, v in features(rgb, face.landmarks).items()})
    tests = (
        ("several_faces", len(faces) > 1),
        ("small_face", measured["face_px"] < criteria.min_face_px),
        ("not_frontal", abs(measured.get("yaw_deg", 0.0)) > criteria.max_abs_yaw_deg),
        ("tilted", abs(measured.get("roll_deg", 0.0)) > criteria.max_abs_roll_deg),
        ("too_dark", measured["luma_mean"] < criteria.min_luma),
        ("too_bright", measured["luma_mean"] > criteria.max_luma),
        ("clipped", measured["clipped"] > criteria.max_clipped),
        ("uneven_lighting", measured["side_contrast"] > criteria.max_side_contrast),
        ("blurry", measured["sharpness"] < criteria.min_sharpness),
        *feature_tests(measured, criteria),
    )
    return next((reason for reason, failed in tests if failed), None), measured


def feature_tests(measured: Mapping[str, Any], criteria: Criteria) -> tuple[tuple[str, bool], ...]:
    """Criteria 4-5, occluders first: the landmarks on a covered eye or mouth are the model's guess, and so is
    the shape the expression checks read from them. A measure that was not made fails nothing."""
    return (
        ("eyes_covered", _below(measured.get("eye_luma_ratio"), criteria.min_eye_luma_ratio)),
        ("mouth_covered", _below(measured.get("lip_redness"), criteria.min_lip_redness)),
        ("eyes_closed", _below(measured.get("eye_aspect"), criteria.min_eye_aspect)),
        ("mouth_open", measured.get("mouth_open") is not None and measured["mouth_open"] > criteria.max_mouth_open),
    )


def _below(value: float | None, threshold: float) -> bool:
    """A measure that was made (not None) and is under its threshold."""
    return value is not None and value < threshold


def pose(landmarks: Mapping[str, tuple[float, float]]) -> dict[str, float]:
    """``roll_deg`` and ``yaw_deg`` from named landmarks (see the module docstring); {} without eyes."""
    if "left_eye" not in landmarks or "right_eye" not in landmarks:
        return {}
    (lx, ly), (rx, ry) = landmarks["left_eye"], landmarks["right_eye"]
    roll = math.atan2(ry - ly, rx - lx)
    out = {"roll_deg": math.degrees(roll)}
    if "nose_tip" not in landmarks:
        return out
    cx, cy = (lx + rx) / 2, (ly + ry) / 2
    cos, sin = math.cos(-roll), math.sin(-roll)

    def x_of(name: str) -> float:  # x in the de-rolled frame centred on the eye midpoint
        x, y = landmarks[name]
        return (x - cx) * cos - (y - cy) * sin

    nose = x_of("nose_tip")
    if "jaw_left" in landmarks and "jaw_right" in landmarks:
        a, b = nose - x_of("jaw_left"), x_of("jaw_right") - nose
        ratio = (a - b) / (a + b) if a + b > 0 else 1.0
    else:
        iod = math.hypot(rx - lx, ry - ly)
        ratio = 2 * nose / iod if iod > 0 else 1.0
    out["yaw_deg"] = math.degrees(math.asin(max(-1.0, min(1.0, ratio))))
    return out


def luma(rgb: np.ndarray) -> np.ndarray:
    """ITU-R BT.601 luma of an RGB uint8 image, float64 on the 0-255 scale."""
    return np.asarray(rgb, dtype=np.float64)[..., :3] @ np.array([0.299, 0.587, 0.114])


def pixel_stats(gray: np.ndarray) -> dict[str, float]:
    """``sharpness``, ``luma_mean``, ``clipped`` and ``side_contrast`` of a luma region."""
    if gray.shape[0] < 3 or gray.shape[1] < 3:
        return {"sharpness": 0.0, "luma_mean": float(gray.mean()) if gray.size else 0.0, "clipped": 1.0,
                "side_contrast": 0.0}
    side = SHARPNESS_SIDE
    g = np.asarray(Image.fromarray(gray.astype(np.float32), mode="F").resize((side, side), Image.BILINEAR),
                   dtype=np.float64)
    lap = g[:-2, 1:-1] + g[2:, 1:-1] + g[1:-1, :-2] + g[1:-1, 2:] - 4 * g[1:-1, 1:-1]
    mean = float(gray.mean())
    half = gray.shape[1] // 2
    sides = abs(float(gray[:, :half].mean()) - float(gray[:, gray.shape[1] - half:].mean()))
    return {"sharpness": float(lap.var()), "luma_mean": mean,
            "clipped": float(((gray <= 5) | (gray >= 250)).mean()),
            "side_contrast": sides / mean if mean > 0 else 0.0}


def _crop(gray: np.ndarray, box: tuple[float, float, float, float]) -> np.ndarray:
    h, w = gray.shape
    left, top = max(0, int(round(box[0]))), max(0, int(round(box[1])))
    right, bottom = min(w, int(round(box[2]))), min(h, int(round(box[3])))
    return gray[top:bottom, left:right]
