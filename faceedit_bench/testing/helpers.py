"""Stand-ins and checks the contract mixins share: a per-seed test image, a pixel "embedder" for engine tests
that need no face model, and the check that ``describe()`` is stable plain JSON."""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

import numpy as np

from faceedit_bench.records import FaceEmbedding, Outcome
from faceedit_bench.storage.images import encode_png


def gradient_image(seed: int, size: int = 64) -> bytes:
    """A PNG that differs per seed (for stores, ledgers and fake editors)."""
    rng = np.random.default_rng(seed)
    base = rng.integers(0, 255, size=(8, 8, 3), dtype=np.uint8)
    return encode_png(np.kron(base, np.ones((size // 8, size // 8, 1), dtype=np.uint8)))


class PixelEmbedder:
    """Embeds the whole image as an 8x8 grey thumbnail; a uniform image has 'no face'.
    An image smaller than 8x8 gets a NaN vector: a stand-in for a broken embedder.

    It computes in float64, as the shipped embedders' similarities do: float32 sums and dot products round
    differently with each CPU's vector width and BLAS kernel, and 1 - similarity of near-identical images
    magnifies that (pinned values differed in the fourth digit between two machines)."""

    def describe(self) -> dict[str, Any]:
        return {"name": "pixel", "version": "2", "similarity": "cosine of centred 8x8 thumbnails (test only)"}

    def embed(self, rgb: np.ndarray) -> FaceEmbedding:
        grey = rgb.astype(np.float64).mean(axis=2)
        if grey.std() < 1.0:
            return FaceEmbedding(Outcome.NO_FACE, reason="uniform image")
        h, w = grey.shape
        if h < 8 or w < 8:
            thumb = np.full(64, np.nan)
        else:
            thumb = grey[: h - h % 8, : w - w % 8].reshape(8, h // 8, 8, w // 8).mean(axis=(1, 3)).ravel()
        thumb -= thumb.mean()
        return FaceEmbedding(Outcome.OK, (thumb / (np.linalg.norm(thumb) or 1.0)).astype(np.float32), n_faces=1)

    def similarity(self, a: np.ndarray, b: np.ndarray) -> float:
        va, vb = np.asarray(a, dtype=np.float64), np.asarray(b, dtype=np.float64)
        norms = np.linalg.norm(va) * np.linalg.norm(vb)
        return float(np.dot(va, vb) / norms) if norms else 0.0


def json_description(component: Any) -> Mapping[str, Any]:
    """``describe()``, checked to be plain JSON values and stable (it is hashed into keys)."""
    description = component.describe()
    assert json.loads(json.dumps(description)) == dict(description), "describe() must hold plain JSON values"
    assert component.describe() == description, "describe() must not change between calls"
    return description


def skip_without_cuda() -> None:
    """Skip the calling test (or fixture) unless torch sees a CUDA device. Call it when the test runs, not at
    import: every test worker collects every module, and importing torch at collection cost each worker 1.6 s
    of CPU on a machine without CUDA, where such tests are all skipped."""
    import pytest

    torch = pytest.importorskip("torch")
    if not torch.cuda.is_available():
        pytest.skip("needs a CUDA device")
