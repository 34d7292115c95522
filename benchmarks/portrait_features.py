"""The measures behind the portrait checks of criteria 4-5 (docs/paper_b.md), on the real photos that ship in
packages: scikit-image's astronaut, insightface's t1.jpg (six people, cropped as the `sample` dataset crops them)
and its aligned Tom Hanks (upscaled x3), each as it is, after one JPEG re-encoding, with dark glasses drawn over
the eyes, and with each of
insightface's four photographed surgical masks pasted over nose and mouth (as insightface renders masked faces).

Every version goes through dlib's HOG detector and 68-point model (the `dlib` plugin) and the checks of
plugins/audit/faceedit_bench_audit/portraits/features.py; "not found" means the detector missed the face. "first
reason" is what the selection would record (other criteria are checked first); "criteria 4-5" lists every one
of the four new checks the largest detected face fails.

Usage: python benchmarks/portrait_features.py
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

import numpy as np  # noqa: E402
from faceedit_bench.builtin.datasets.portrait_quality import Criteria, check_portrait, feature_tests  # noqa: E402
from PIL import Image, ImageDraw  # noqa: E402

from faceedit_bench.builtin.datasets import sample  # noqa: E402

MEASURES = ("eye_aspect", "mouth_open", "eye_luma_ratio", "lip_redness")


def photos() -> dict[str, Image.Image]:
    import insightface
    import skimage.data

    images = Path(insightface.__file__).parent / "data" / "images"
    out = {"astronaut": Image.fromarray(skimage.data.astronaut())}
    t1 = Image.open(images / "t1.jpg").convert("RGB")
    for person in sample.PEOPLE:
        if person.source == "t1" and person.box is not None:
            out[person.identity] = sample._square_crop(t1, person.box, 2.2, 320, (0.0, 0.0))
    tom = Image.open(images / "Tom_Hanks_54745.png").convert("RGB")
    out["tom_hanks"] = tom.resize((tom.width * 3, tom.height * 3), Image.BICUBIC)
    return out


def _points(face) -> np.ndarray:
    return np.array([face.landmarks[f"ibug68_{i:02d}"] for i in range(68)])


def jpeg(im: Image.Image) -> Image.Image:
    """The same photo after one JPEG re-encoding (quality 95): how much the measures move with no change."""
    import io

    buffer = io.BytesIO()
    im.save(buffer, format="JPEG", quality=95)
    return Image.open(io.BytesIO(buffer.getvalue())).convert("RGB")


def glasses(im: Image.Image, p: np.ndarray) -> Image.Image:
    out = im.copy()
    draw = ImageDraw.Draw(out)
    for eye in (p[36:42], p[42:48]):
        c, w = eye.mean(axis=0), float(np.hypot(*(eye[0] - eye[3]))) * 0.95
        draw.ellipse([c[0] - w, c[1] - 0.75 * w, c[0] + w, c[1] + 0.75 * w], fill=(18, 18, 22))
    draw.line([tuple(p[39]), tuple(p[42])], fill=(30, 30, 30), width=3)
    return out


def masked(im: Image.Image, p: np.ndarray, mask: Image.Image) -> Image.Image:
    out = im.copy()
    x0, x1 = int(min(p[2][0], p[14][0])), int(max(p[2][0], p[14][0]))
    y0, y1 = int(p[29][1]), int(p[8][1] + 5)
    out.paste(mask.resize((x1 - x0, y1 - y0)), (x0, y0))
    return out


def main() -> int:
    import insightface
    from faceedit_bench_dlib.embedder import DlibEmbedder

    detector, criteria = DlibEmbedder(), Criteria()
    masks = {c: Image.open(Path(insightface.__file__).parent / "data" / "images" / f"mask_{c}.jpg").convert("RGB")
             for c in ("white", "blue", "green", "black")}
    print(f"{'photo':<12} {'version':<12} {'first reason':<14} {'criteria 4-5':<26} "
          + " ".join(f"{m:>15}" for m in MEASURES))
    for name, im in photos().items():
        faces = detector.detect(np.asarray(im))
        if not faces:
            print(f"{name:<12} not found")
            continue
        p = _points(faces[0])
        versions = {"as is": im, "JPEG q95": jpeg(im), "dark glasses": glasses(im, p),
                    **{f"mask {c}": masked(im, p, m) for c, m in masks.items()}}
        for version, image in versions.items():
            rgb = np.asarray(image)
            reason, measured = check_portrait(rgb, detector.detect(rgb), criteria)
            if not measured.get("n_faces"):
                print(f"{name:<12} {version:<12} not found")
                continue
            cells = " ".join(f"{'n/a' if measured.get(m) is None else f'{measured[m]:.3f}':>15}" for m in MEASURES)
            failed = ",".join(r for r, hit in feature_tests(measured, criteria) if hit) or "pass"
            print(f"{name:<12} {version:<12} {reason or 'passes':<14} {failed:<26} {cells}")
    return 0


if __name__ == "__main__":
    os.environ.setdefault("MLFLOW_DISABLE_TELEMETRY", "true")
    raise SystemExit(main())
