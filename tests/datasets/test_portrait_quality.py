"""The automatic portrait checks on known geometry and pixels (no detector needed)."""

from __future__ import annotations

import math

import numpy as np
import pytest

from faceedit_bench.builtin.datasets.portrait_quality import REASONS, Criteria, check_portrait, pixel_stats, pose
from faceedit_bench.errors import ConfigError
from faceedit_bench.records import DetectedFace


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
