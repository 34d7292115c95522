"""CLIP-T / CLIP-I and DINO image metrics on tiny random models built from configs (no download): the image-metric
contract, loading from a local directory and the Hugging Face cache layout, and the numbers' meaning where a
random model can show it (an unchanged image has similarity 1)."""

from __future__ import annotations

import pickle
import shutil
from pathlib import Path

import numpy as np
import pytest
from faceedit_bench_transformers import testing
from faceedit_bench_transformers.image_similarity import ClipSimilarity, DinoSimilarity

from faceedit_bench.api import ConfigError
from faceedit_bench.api.images import StepImages
from faceedit_bench.api.testing import ImageMetricContract


@pytest.fixture(scope="module")
def tiny_models(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    root = tmp_path_factory.mktemp("tiny_image_models")
    return {"clip": testing.tiny_clip(root / "clip"), "dino": testing.tiny_dino(root / "dino")}


class TestClipContract(ImageMetricContract):
    @pytest.fixture
    def metric(self, tiny_models):
        return ClipSimilarity(model=str(tiny_models["clip"]))


class TestDinoContract(ImageMetricContract):
    @pytest.fixture
    def metric(self, tiny_models):
        return DinoSimilarity(model=str(tiny_models["dino"]))


def step(k: int, previous: np.ndarray, current: np.ndarray, source: np.ndarray, text: str = "make the hair red"):
    return StepImages(k, text, source, previous, current)


def test_an_unchanged_image_has_similarity_one_and_a_changed_one_less(tiny_models):
    rng = np.random.default_rng(0)
    a, b = (rng.integers(0, 255, (48, 48, 3), dtype=np.uint8) for _ in range(2))
    for metric in (ClipSimilarity(model=str(tiny_models["clip"])), DinoSimilarity(model=str(tiny_models["dino"]))):
        same, changed = metric.measure_batch([step(1, a, a, a), step(2, a, b, a)])
        kind = metric.name
        assert same[f"{kind}_i"] == pytest.approx(1.0) and same[f"{kind}_i_src"] == pytest.approx(1.0)
        assert changed[f"{kind}_i"] < 0.9999 and changed[f"{kind}_i"] == pytest.approx(changed[f"{kind}_i_src"])
    texts = ClipSimilarity(model=str(tiny_models["clip"])).measure_batch(
        [step(1, a, a, a, "make the hair red"), step(1, a, a, a, "add glasses")])
    assert texts[0]["clip_t"] != texts[1]["clip_t"]  # the instruction is read


def test_the_identity_names_the_model_and_the_weights_never_travel(tiny_models):
    metric = ClipSimilarity(model=str(tiny_models["clip"]))
    metric.measure_batch([step(1, *(np.zeros((32, 32, 3), np.uint8),) * 3)])  # loads the model
    description = metric.describe()
    assert description["model"] == "clip" and description["config_hash"]
    assert "path" not in description and str(tiny_models["clip"]) not in str(description)
    copy = pickle.loads(pickle.dumps(metric))
    assert copy._models is None and copy.describe() == description


def test_a_missing_model_says_how_to_get_it(tmp_path, monkeypatch):
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.setenv("HF_HOME", str(tmp_path / "hf"))
    with pytest.raises(ConfigError, match="hf download openai/clip-vit-base-patch32"):
        ClipSimilarity()
    with pytest.raises(ConfigError, match="config.json not found"):
        DinoSimilarity(model=str(tmp_path))


def test_a_snapshot_of_the_hugging_face_cache_is_named_by_its_repository_and_commit(tiny_models, tmp_path):
    snapshot = tmp_path / "hub" / "models--openai--clip-vit-base-patch32" / "snapshots" / ("a" * 40)
    shutil.copytree(tiny_models["clip"], snapshot)
    metric = ClipSimilarity(model=str(snapshot))
    assert (metric.describe()["model"], metric.describe()["revision"]) == ("openai/clip-vit-base-patch32", "a" * 40)
    assert metric.measure_batch([step(1, *(np.zeros((32, 32, 3), np.uint8),) * 3)])[0]["clip_i"] == pytest.approx(1)
