"""The automatic portrait checks on known geometry and pixels (no detector needed)."""

from __future__ import annotations

import math

import numpy as np
import pytest
from faceedit_bench_audit.portraits.quality import REASONS, Criteria, check_portrait, pixel_stats, pose

from faceedit_bench.api import ConfigError, DetectedFace


def _landmarks(yaw_deg: float = 0.0, roll_deg: float = 0.0, jaw: bool = True) -> dict:
    """A head as a cylinder of radius 1 seen from the front, turned by yaw, then rolled in the image."""
    yaw = math.radians(yaw_deg)
    points = {"left_eye": (-0.4, 0.0), "right_eye": (0.4, 0.0), "nose_tip": (math.sin(yaw), 0.5)}
    if jaw:  # the contour at eye height: the cylinder's silhouette, which does not move with yaw
        points.update(jaw_left=(-1.0, 0.0), jaw_right=(1.0, 0.0))
    roll = math.radians(roll_deg)
    return {k: (100 + 50 * (x * math.cos(roll) - y * math.sin(roll)), 100 + 50 * (x * math.sin(roll) + y * math.cos(roll)))
            for k, (x, y) in points.items()}


@pytest.mark.parametrize("yaw", [-40.0, -15.0, 0.0, 10.0, 35.0])
@pytest.mark.parametrize("roll", [-20.0, 0.0, 12.0])
def test_yaw_and_roll_from_landmarks(yaw, roll):
    got = pose(_landmarks(yaw, roll))
    assert got["roll_deg"] == pytest.approx(roll, abs=1e-6)
    assert got["yaw_deg"] == pytest.approx(yaw, abs=1e-6)  # exact for the cylinder model
    eyes_only = pose(_landmarks(yaw, roll, jaw=False))
    assert math.copysign(1, eyes_only["yaw_deg"]) == math.copysign(1, yaw) or yaw == 0
    assert pose({"nose_tip": (1.0, 1.0)}) == {}


def test_pixel_statistics():
    rng = np.random.default_rng(0)
    flat = np.full((64, 64), 128.0)
    noisy = np.clip(flat + rng.normal(0, 40, flat.shape), 0, 255)
    assert pixel_stats(flat)["sharpness"] == 0.0 and pixel_stats(noisy)["sharpness"] > 1000
    half = flat.copy()
    half[:, :32] = 40
    s = pixel_stats(half)
    assert s["side_contrast"] == pytest.approx(88 / 84) and s["luma_mean"] == pytest.approx(84)
    assert pixel_stats(np.full((10, 10), 255.0))["clipped"] == 1.0


def _image(value: float = 128.0, noise: float = 40.0) -> np.ndarray:
    rng = np.random.default_rng(1)
    gray = np.clip(value + rng.normal(0, noise, (200, 200)), 0, 255)
    return np.repeat(gray[..., None], 3, axis=2).astype(np.uint8)


def _face(side: float = 150.0, **pose_kw) -> DetectedFace:
    return DetectedFace((25, 25, 25 + side, 25 + side), 1.0, _landmarks(**pose_kw))


@pytest.mark.parametrize(("image", "faces", "reason"), [
    (_image(), [], "no_face"),
    (_image(), [_face(), _face(100)], "several_faces"),
    (_image(), [_face(100)], "small_face"),
    (_image(), [_face(yaw_deg=30)], "not_frontal"),
    (_image(), [_face(roll_deg=-15)], "tilted"),
    (_image(30, 10), [_face()], "too_dark"),
    (_image(230, 5), [_face()], "too_bright"),
    (_image(128, 0), [_face()], "blurry"),
    (_image(), [_face()], None),
])
def test_each_reason(image, faces, reason):
    got, measured = check_portrait(image, faces, Criteria())
    assert got == reason and measured["n_faces"] == len(faces)
    assert reason is None or reason in REASONS


def test_criteria_errors():
    assert Criteria.from_mapping({"min_face_px": "96"}).min_face_px == 96.0
    for bad in ({"min_face": 1}, {"min_face_px": "big"}, {"max_abs_yaw_deg": -1}):
        with pytest.raises(ConfigError):
            Criteria.from_mapping(bad)


def _ibug68(eye_open: float, mouth_gap: float) -> dict:
    """A frontal face's 68 iBUG points (about 100 px between the eyes): eye contours of height ``eye_open`` x their
    width, inner lips ``mouth_gap`` x the inner mouth width apart."""
    p = np.zeros((68, 2))
    p[0:17] = [(40 + 120 * i / 16, 100 + 60 * math.sin(math.pi * i / 16)) for i in range(17)]  # jaw
    p[27:31] = [(100, 95 + 10 * i) for i in range(4)]  # nose bridge to tip
    p[31:36] = [(85 + 7.5 * i, 130) for i in range(5)]
    for start, cx in ((36, 60), (42, 140)):  # eyes: corner, two upper, corner, two lower
        w, h = 30, 30 * eye_open / 2
        p[start:start + 6] = [(cx - w / 2, 100), (cx - w / 6, 100 - h), (cx + w / 6, 100 - h), (cx + w / 2, 100),
                              (cx + w / 6, 100 + h), (cx - w / 6, 100 + h)]
    p[48:60] = [(75 + 50 * (1 - math.cos(math.pi * i / 6)) / 2, 165 + (-8 if i < 7 else 8) * math.sin(math.pi * i / 6))
                for i in range(12)]
    gap = 40 * mouth_gap / 2
    p[60:68] = [(80, 165), (93, 165 - gap), (100, 165 - gap), (107, 165 - gap), (120, 165),
                (107, 165 + gap), (100, 165 + gap), (93, 165 + gap)]
    names = {f"ibug68_{i:02d}": (float(x), float(y)) for i, (x, y) in enumerate(p)}
    return {**names, "left_eye": tuple(p[36:42].mean(0)), "right_eye": tuple(p[42:48].mean(0)),
            "nose_tip": tuple(p[30]), "jaw_left": tuple(p[1]), "jaw_right": tuple(p[15])}


@pytest.mark.parametrize(("eye_open", "mouth_gap", "reason"), [
    (0.30, 0.05, None), (0.10, 0.05, "eyes_closed"), (0.30, 0.40, "mouth_open"), (0.05, 0.50, "eyes_closed")])
def test_eyes_and_mouth_from_the_68_landmarks(eye_open, mouth_gap, reason):
    from faceedit_bench_audit.portraits.features import features

    face = DetectedFace((20, 20, 200, 220), 1.0, _ibug68(eye_open, mouth_gap))
    got, measured = check_portrait(_image(), [face], Criteria())
    assert got == reason
    assert measured["eye_aspect"] == pytest.approx(eye_open) and measured["mouth_open"] == pytest.approx(mouth_gap)
    assert measured["lip_redness"] is None and measured["eye_luma_ratio"] > 0.5  # grey: no lip colour to compare
    assert features(_image(), {"left_eye": (1, 1)}) == {}  # 5-point landmarks: nothing measured, nothing failed
    assert {"eyes_covered", "mouth_covered", "eyes_closed", "mouth_open"} <= set(REASONS)
