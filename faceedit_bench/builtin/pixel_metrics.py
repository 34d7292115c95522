"""The built-in image metrics: background preservation outside the face and hair region, and edit magnitude inside
the face (docs/metrics.md, "Image metrics"). Both read the run's detector's faces (scoring/face_region.py).

Images of a step that differ in size are compared at the earlier image's size: the later one is resized to it
(bilinear) and its faces' coordinates scaled with it.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np
from PIL import Image

from faceedit_bench.errors import ConfigError
from faceedit_bench.records import DetectedFace
from faceedit_bench.scoring.face_region import face_mask
from faceedit_bench.scoring.image_metric import ImageMetric, ImageValue, StepImages

#: PSNR of two identical backgrounds (squared error 0: infinity by the formula), and the ceiling of every PSNR: one
#: grey level of difference in one channel of one pixel of a 256 x 256 image is about 101 dB.
PSNR_CAP_DB = 100.0
#: Grey levels from RGB (ITU-R BT.709 luma weights, as skimage.color.rgb2gray).
LUMA = np.array([0.2125, 0.7154, 0.0721], dtype=np.float32)
#: A background smaller than this share of the image is not measured (the face fills the picture).
MIN_BACKGROUND = 0.05


def _pair(a: np.ndarray, b: np.ndarray, b_faces: tuple[DetectedFace, ...]) -> tuple[np.ndarray, tuple[float, float]]:
    """``b`` at ``a``'s size, and the (x, y) factors that move ``b``'s face coordinates with it."""
    if a.shape == b.shape:
        return b, (1.0, 1.0)
    height, width = a.shape[:2]
    resized = np.asarray(Image.fromarray(b).resize((width, height), Image.BILINEAR))
    return resized, (width / b.shape[1], height / b.shape[0])


def _regions(step: StepImages, earlier: str, *, hair: float, margin: float) -> tuple[np.ndarray, np.ndarray,
                                                                                       np.ndarray]:
    """The earlier image, the current one at its size, and the union of both images' face regions."""
    a = step.source if earlier == "source" else step.previous
    b, scale = _pair(a, step.current, step.faces.get("current", ()))
    shape = a.shape[:2]
    mask = (face_mask(shape, step.faces.get(earlier, ()), hair=hair, margin=margin)
            | face_mask(shape, step.faces.get("current", ()), hair=hair, margin=margin, scale=scale))
    return a, b, mask


def _check(name: str, value: Any, low: float, high: float) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not low <= value <= high:
        raise ConfigError(f"image_metric_params.{name} must be a number in [{low}, {high}], got {value!r}")
    return float(value)


class BackgroundPreservation(ImageMetric):
    """Masked SSIM, PSNR and mean absolute difference outside every face-and-hair region, between I_{k-1} and
    I_k (mean over the steps) and between I_0 and I_k (the last step: what the whole session kept).

    :param margin: how much each face region is grown about its centre (0.25: by a quarter).
    :param hair: how far above the face the region reaches, in face heights (forehead and hair).
    """

    name = "background"
    needs_faces = True

    def __init__(self, margin: float = 0.25, hair: float = 0.7) -> None:
        self.margin = _check("background.margin", margin, 0.0, 2.0)
        self.hair = _check("background.hair", hair, 0.0, 2.0)
        self.values = tuple(v for suffix, versus, aggregate in (("", "I_k-1", "mean"), ("_src", "I_0", "last"))
                            for v in _background_values(suffix, versus, aggregate))

    def describe(self) -> Mapping[str, Any]:
        return {"version": "1", "margin": self.margin, "hair": self.hair, "ssim": "grey, 7x7 uniform window",
                "psnr_cap_db": PSNR_CAP_DB, "min_background": MIN_BACKGROUND}

    def measure(self, step: StepImages) -> Mapping[str, float | None]:
        found = self._compare(step, "previous")
        # At step 1, I_{k-1} is I_0: compared once.
        found_src = found if step.source is step.previous else self._compare(step, "source")
        return {**found, **{f"{k}_src": v for k, v in found_src.items()}}

    def _compare(self, step: StepImages, earlier: str) -> dict[str, float | None]:
        a, b, face = _regions(step, earlier, hair=self.hair, margin=self.margin)
        background = ~face
        if background.mean() < MIN_BACKGROUND:
            return dict.fromkeys(("bg_ssim", "bg_psnr", "bg_mad"))
        if np.array_equal(a, b):  # what the formulas give for unchanged pixels (an editor that changed nothing)
            return {"bg_ssim": 1.0, "bg_psnr": PSNR_CAP_DB, "bg_mad": 0.0}
        # Imported here: scikit-image brings SciPy's ndimage (0.2 to 0.4 s of CPU), which a run's first call must not
        # wait for (tests/test_startup.py), and which a run whose images are all unchanged never needs.
        from skimage.metrics import structural_similarity

        _, ssim_map = structural_similarity(a @ LUMA, b @ LUMA, data_range=255.0, full=True)
        pa, pb = a[background], b[background]
        # skimage.metrics' mean_squared_error and peak_signal_noise_ratio, as they compute them (in float64):
        # importing them imports scipy.stats, half a second of CPU in every worker process.
        mse = float(np.mean((pa.astype(np.float64) - pb) ** 2))
        psnr = PSNR_CAP_DB if mse == 0 else min(PSNR_CAP_DB, float(10 * np.log10(255.0**2 / mse)))
        return {"bg_ssim": float(ssim_map[background].mean()), "bg_psnr": psnr,
                "bg_mad": float(np.abs(pa.astype(np.int16) - pb).mean())}


def _background_values(suffix: str, versus: str, aggregate: Any) -> tuple[ImageValue, ...]:
    when = "mean over the steps" if aggregate == "mean" else "after the last step"
    label = "" if versus == "I_k-1" else f" vs {versus}"
    return (
        ImageValue(f"bg_ssim{suffix}", True, "SSIM", f"SSIM of the background (outside the face and hair) between "
                   f"{versus} and I_k, {when}; 1: unchanged", label=f"BG SSIM{label}", bounds=(-1.0, 1.0),
                   aggregate=aggregate),
        ImageValue(f"bg_psnr{suffix}", True, "dB", f"PSNR of the background between {versus} and I_k, {when}; "
                   f"{PSNR_CAP_DB:g}: identical", label=f"BG PSNR{label}", bounds=(0.0, PSNR_CAP_DB),
                   aggregate=aggregate),
        ImageValue(f"bg_mad{suffix}", False, "grey levels", f"Mean absolute difference of the background's RGB "
                   f"values (0-255) between {versus} and I_k, {when}; 0: unchanged", label=f"BG MAD{label}",
                   bounds=(0.0, 255.0), aggregate=aggregate),  # type: ignore[arg-type]
    )


class EditMagnitude(ImageMetric):
    """How much the face itself changed: the mean absolute difference of RGB values (0-255) inside the face
    region (no hair) between I_{k-1} and I_k (mean over the steps) and between I_0 and I_k (the last step).
    The ``identity`` editor scores 0: it keeps the person by doing nothing, which FSS alone cannot tell.

    :param margin: how much each face region is grown about its centre.
    """

    name = "edit_magnitude"
    needs_faces = True

    def __init__(self, margin: float = 0.1) -> None:
        self.margin = _check("edit_magnitude.margin", margin, 0.0, 2.0)
        self.values = (
            ImageValue("face_change", None, "grey levels", "Mean absolute RGB difference (0-255) inside the face "
                       "between I_k-1 and I_k, mean over the steps; 0: the face was not changed",
                       label="Face change", bounds=(0.0, 255.0)),
            ImageValue("face_change_src", None, "grey levels", "Mean absolute RGB difference (0-255) inside the "
                       "face between I_0 and I_k after the last step; 0: the face was not changed",
                       label="Face change vs I_0", bounds=(0.0, 255.0), aggregate="last"),
        )

    def describe(self) -> Mapping[str, Any]:
        return {"version": "1", "margin": self.margin}

    def measure(self, step: StepImages) -> Mapping[str, float | None]:
        change = self._change(step, "previous")
        return {"face_change": change,
                "face_change_src": change if step.source is step.previous else self._change(step, "source")}

    def _change(self, step: StepImages, earlier: str) -> float | None:
        a, b, face = _regions(step, earlier, hair=0.0, margin=self.margin)
        if not face.any():
            return None
        return 0.0 if np.array_equal(a, b) else float(np.abs(a[face].astype(np.int16) - b[face]).mean())
