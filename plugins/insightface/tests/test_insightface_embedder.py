"""The insightface embedder without the real buffalo_l pack.

The real insightface plumbing (model routing, SCRFD decoding and NMS, static-shape detector
sessions, ArcFace alignment and blob building) runs on tiny ONNX models generated at test
time (see ``fake_buffalo_l``). The real weights are never needed.
"""

from __future__ import annotations

import importlib.util
import pickle
import re
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from faceedit_bench_insightface.embedder import (
    DEFAULT_MODEL_DIR,
    DETECTOR_FILE,
    RECOGNIZER_FILE,
    SIMILARITY,
    InsightFaceEmbedder,
)
from fake_buffalo_l import ARCFACE_TEMPLATE, FakeFace, fake_recognizer, make_pack
from PIL import Image

from faceedit_bench.api import ConfigError, FaceEmbedding, Outcome
from faceedit_bench.api.testing import EmbedderContract, FaceDetectorContract


def _image(name: str) -> np.ndarray:
    spec = importlib.util.find_spec("insightface")
    assert spec is not None and spec.submodule_search_locations
    path = Path(spec.submodule_search_locations[0]) / "data" / "images" / name
    return np.asarray(Image.open(path).convert("RGB"))


@pytest.fixture(scope="module")
def pack(tmp_path_factory) -> Path:
    return make_pack(tmp_path_factory.mktemp("models") / "buffalo_l")


@pytest.fixture(scope="module")
def embedder(pack) -> InsightFaceEmbedder:
    return InsightFaceEmbedder(model_dir=str(pack))


@pytest.fixture(scope="module")
def tom() -> np.ndarray:
    return _image("Tom_Hanks_54745.png")  # 112 x 112, already aligned to the ArcFace template


@pytest.fixture(scope="module")
def group() -> np.ndarray:
    return _image("t1.jpg")


@pytest.fixture(scope="module")
def colour_face(group) -> np.ndarray:
    """A colour 112 x 112 face (Tom_Hanks_54745.png is grey, so blind to channel order)."""
    face = np.ascontiguousarray(group[40:230, 840:1030])
    assert np.abs(face[..., 0].astype(int) - face[..., 2]).mean() > 20
    return np.asarray(Image.fromarray(face).resize((112, 112), Image.BILINEAR))


def _ok(result: FaceEmbedding, dim: int = 512) -> np.ndarray:
    assert result.outcome is Outcome.OK, result.reason
    assert result.vector.dtype == np.float32 and result.vector.shape == (dim,)
    assert np.linalg.norm(result.vector) == pytest.approx(1.0, abs=1e-5)
    return result.vector


def _reference(pack: Path, chip_rgb: np.ndarray) -> np.ndarray:
    """What the recognizer gives for a 112 x 112 chip fed in RGB order, computed without insightface."""
    import onnxruntime

    session = onnxruntime.InferenceSession(str(pack / RECOGNIZER_FILE), providers=["CPUExecutionProvider"])
    blob = ((chip_rgb.astype(np.float32) - 127.5) / 127.5).transpose(2, 0, 1)[None]
    out = session.run(None, {"data": np.ascontiguousarray(blob)})[0].ravel()
    return out / np.linalg.norm(out)


# -- missing pack ----------------------------------------------------------------------


def test_missing_directory_says_where_to_put_the_pack(tmp_path):
    where = tmp_path / "models" / "buffalo_l"
    with pytest.raises(ConfigError) as info:
        InsightFaceEmbedder(model_dir=str(where))
    message = str(info.value)
    for part in (str(where), "does not exist", DETECTOR_FILE, RECOGNIZER_FILE, "buffalo_l.zip", "v0.7",
                 "embedder.params.model_dir=/path/to/buffalo_l"):
        assert part in message


def test_missing_file_is_named(tmp_path):
    fake_recognizer(tmp_path / RECOGNIZER_FILE)
    with pytest.raises(ConfigError, match=f"lacks {DETECTOR_FILE}\\.") as info:
        InsightFaceEmbedder(model_dir=tmp_path)
    assert "buffalo_l.zip" in str(info.value)
    (tmp_path / RECOGNIZER_FILE).unlink()
    with pytest.raises(ConfigError, match=f"lacks {DETECTOR_FILE} and {RECOGNIZER_FILE}"):
        InsightFaceEmbedder(model_dir=tmp_path)


def test_default_directory_is_expanded(monkeypatch, tmp_path):
    monkeypatch.setenv("HOME", str(tmp_path))
    with pytest.raises(ConfigError, match=re.escape(str(tmp_path / ".insightface/models/buffalo_l"))):
        InsightFaceEmbedder()
    assert DEFAULT_MODEL_DIR == "~/.insightface/models/buffalo_l"


def test_wrong_model_in_place_of_the_detector_is_reported(tmp_path):
    fake_recognizer(tmp_path / DETECTOR_FILE)
    fake_recognizer(tmp_path / RECOGNIZER_FILE)
    embedder = InsightFaceEmbedder(model_dir=tmp_path)
    with pytest.raises(ConfigError, match="not an SCRFD face detector"):
        embedder.embed(np.zeros((64, 64, 3), np.uint8))


@pytest.mark.parametrize(
    "params",
    [
        {"det_size": 600},
        {"det_size": [640]},
        {"det_size": True},
        {"det_thresh": 1.5},
        {"providers": "CPUExecutionProvider"},
        {"providers": []},
    ],
)
def test_bad_params_are_config_errors(pack, params):
    with pytest.raises(ConfigError, match="embedder.params"):
        InsightFaceEmbedder(model_dir=pack, **params)


# -- the real insightface plumbing on fake models ------------------------------------


def test_aligned_face_gives_a_unit_512_vector_computed_from_rgb(embedder, pack, colour_face):
    result = embedder.embed(colour_face)
    vector = _ok(result)
    assert result.n_faces == 1
    # The fake detector puts the keypoints on the ArcFace template, so the aligned chip is
    # the image itself. insightface must have been given BGR: its blob swaps back to RGB.
    as_rgb = _reference(pack, colour_face)
    as_bgr = _reference(pack, colour_face[:, :, ::-1])
    assert float(vector @ as_rgb) > 0.9999
    assert float(vector @ as_bgr) < 0.99


def test_different_images_give_different_vectors(embedder, tom, group):
    a, b = _ok(embedder.embed(tom)), _ok(embedder.embed(group))
    assert embedder.similarity(a, b) < 0.95
    assert embedder.similarity(a, a) == pytest.approx(1.0)
    assert np.array_equal(a, _ok(embedder.embed(tom.copy())))


def test_blank_image_has_no_face(embedder):
    result = embedder.embed(np.zeros((200, 300, 3), np.uint8))
    assert result.outcome is Outcome.NO_FACE
    assert result.n_faces == 0 and result.vector is None
    assert "no face" in result.reason


def test_det_thresh_is_applied(pack, tom):
    # The fake detector scores any image with contrast at 0.9.
    assert InsightFaceEmbedder(model_dir=pack, det_thresh=0.89).embed(tom).outcome is Outcome.OK
    assert InsightFaceEmbedder(model_dir=pack, det_thresh=0.91).embed(tom).outcome is Outcome.NO_FACE


def test_det_size_is_applied(pack, embedder, tom):
    small = InsightFaceEmbedder(model_dir=pack, det_size=320)
    vector = _ok(small.embed(tom))
    assert tuple(small._models[0].input_size) == (320, 320)
    assert float(vector @ _ok(embedder.embed(tom))) > 0.999  # same keypoints found at another scale

    wide = InsightFaceEmbedder(model_dir=pack, det_size=[320, 256])
    assert wide.describe()["det_size"] == [320, 256]
    wide.embed(tom)
    assert tuple(wide._models[0].input_size) == (320, 256)


@pytest.mark.filterwarnings("ignore:`estimate` is deprecated:FutureWarning")  # insightface on skimage 0.26
def test_largest_face_is_chosen_not_the_best_scored(tmp_path):
    # Slot 0: a large face, score 0.7. Slot 1: a small face elsewhere, score 0.95.
    template = ARCFACE_TEMPLATE / 112
    large_kps = tuple((0.05 + x * 0.45, 0.4 + y * 0.55) for x, y in template)
    small_kps = tuple((0.7 + x * 0.2, 0.05 + y * 0.2) for x, y in template)
    large = FakeFace((0.05, 0.4, 0.5, 0.95), large_kps, score=0.7)
    small = FakeFace((0.7, 0.05, 0.9, 0.25), small_kps, score=0.95)
    pack = make_pack(tmp_path / "buffalo_l", faces=(large, small))
    embedder = InsightFaceEmbedder(model_dir=pack)

    rgb = np.asarray(Image.fromarray(_image("t1.jpg")).resize((640, 640), Image.BILINEAR))
    result = embedder.embed(rgb)
    assert result.n_faces == 2
    vector = _ok(result)

    from insightface.utils import face_align

    def chip(face: FakeFace) -> np.ndarray:
        return face_align.norm_crop(rgb, np.array(face.kps, np.float32) * 640, image_size=112)

    assert float(vector @ _reference(pack, chip(large))) > 0.999
    assert float(vector @ _reference(pack, chip(small))) < 0.99


def test_accepts_grayscale_and_rgba_and_rejects_floats(embedder, tom):
    assert embedder.embed(np.asarray(Image.fromarray(tom).convert("L"))).outcome is Outcome.OK
    rgba = np.dstack([tom, np.full(tom.shape[:2], 255, np.uint8)])
    assert np.array_equal(_ok(embedder.embed(rgba)), _ok(embedder.embed(tom)))
    with pytest.raises(ValueError, match="uint8"):
        embedder.embed(tom.astype(np.float64))


# -- scale, describe, pickling ---------------------------------------------------------


def test_similarity_is_raw_cosine(embedder):
    a = np.zeros(512, np.float32)
    a[0] = 1
    b = np.zeros(512, np.float32)
    b[1] = 1
    assert embedder.similarity(a, b) == pytest.approx(0.0)
    assert embedder.similarity(a, -a) == pytest.approx(-1.0)  # not clipped: the paper's FSS
    assert embedder.similarity(a, (a + b) / np.sqrt(2)) == pytest.approx(np.sqrt(0.5))
    with pytest.raises(ValueError):
        embedder.similarity(a, np.ones(128))


def test_describe_states_version_and_scale(embedder, pack, tmp_path):
    d = embedder.describe()
    assert d["name"] == "insightface"
    assert d["similarity"] == SIMILARITY == "cosine of L2-normalised ArcFace embeddings (paper FSS scale)"
    assert re.fullmatch(r"\d+(\.\d+)+\+[0-9a-f]{12}", d["version"])
    assert (d["det_size"], d["det_thresh"]) == ([640, 640], 0.5)
    assert embedder.describe() == d
    assert "providers" not in d  # only float rounding depends on them

    copy = tmp_path / "buffalo_l"
    shutil.copytree(pack, copy)
    assert InsightFaceEmbedder(model_dir=copy).describe()["version"] == d["version"]
    fake_recognizer(copy / RECOGNIZER_FILE, seed=1)
    assert InsightFaceEmbedder(model_dir=copy).describe()["version"] != d["version"]


def test_pickles_before_and_after_use(pack, tom):
    fresh = InsightFaceEmbedder(model_dir=pack)
    clone = pickle.loads(pickle.dumps(fresh))
    used = _ok(fresh.embed(tom))
    data = pickle.dumps(fresh)
    assert len(data) < 10_000  # configuration only, no sessions
    assert np.array_equal(_ok(pickle.loads(data).embed(tom)), used)
    assert np.array_equal(_ok(clone.embed(tom)), used)


def test_importing_the_plugin_loads_no_heavy_module(pack):
    code = (
        "import sys, faceedit_bench_insightface, faceedit_bench_insightface.embedder as m; "
        f"m.InsightFaceEmbedder(model_dir={str(pack)!r}).describe(); "
        "print(sorted(x for x in ('dlib', 'cv2', 'insightface', 'onnxruntime', 'onnx') if x in sys.modules))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"


# -- the contract every embedder passes --------------------------------------------------


class TestInsightFaceEmbedderContract(EmbedderContract):
    @pytest.fixture
    def face_rgb(self, colour_face: np.ndarray) -> np.ndarray:
        return colour_face


class TestInsightFaceDetectorContract(FaceDetectorContract):
    @pytest.fixture
    def detector(self, embedder):
        return embedder

    @pytest.fixture
    def face_rgb(self, colour_face: np.ndarray) -> np.ndarray:
        return colour_face


def test_detect_reports_every_face_largest_first_with_named_keypoints(tmp_path):
    from faceedit_bench.api import FaceDetector

    template = ARCFACE_TEMPLATE / 112
    small = FakeFace((0.7, 0.05, 0.9, 0.25), tuple((0.7 + x * 0.2, 0.05 + y * 0.2) for x, y in template), 0.95)
    large = FakeFace((0.05, 0.4, 0.5, 0.95), tuple((0.05 + x * 0.45, 0.4 + y * 0.55) for x, y in template), 0.7)
    embedder = InsightFaceEmbedder(model_dir=make_pack(tmp_path / "buffalo_l", faces=(small, large)))
    assert isinstance(embedder, FaceDetector)
    rgb = np.asarray(Image.fromarray(_image("t1.jpg")).resize((640, 640), Image.BILINEAR))
    first, second = embedder.detect(rgb)
    assert first.box == pytest.approx((0.05 * 640, 0.4 * 640, 0.5 * 640, 0.95 * 640), abs=1.0)
    assert first.score == pytest.approx(0.7, abs=1e-3) and second.score == pytest.approx(0.95, abs=1e-3)
    assert list(first.landmarks) == ["left_eye", "right_eye", "nose_tip", "mouth_left", "mouth_right"]
    assert first.landmarks["left_eye"][0] < first.landmarks["nose_tip"][0] < first.landmarks["right_eye"][0]
