"""Helpers for testing faceedit_bench and its plugins.

``EditorContract`` is a pytest mixin every editor plugin can run::

    class TestMyEditor(EditorContract):
        @pytest.fixture
        def editor(self):
            return MyEditor(...)

``PixelEmbedder`` is a fast stand-in embedder for engine tests that need no face
model; it is not a face recognizer and is never registered as a plugin.
"""

from __future__ import annotations

import json
from typing import Any

import numpy as np

from faceedit_bench.images import decode_rgb, encode_png
from faceedit_bench.records import EditRequest, EditResult, FaceEmbedding, Outcome


def gradient_image(seed: int, size: int = 64) -> bytes:
    """A PNG that differs per seed (for stores, ledgers and fake editors)."""
    rng = np.random.default_rng(seed)
    base = rng.integers(0, 255, size=(8, 8, 3), dtype=np.uint8)
    return encode_png(np.kron(base, np.ones((size // 8, size // 8, 1), dtype=np.uint8)))


class PixelEmbedder:
    """Embeds the whole image as an 8x8 grey thumbnail; a uniform image has 'no face'."""

    def describe(self) -> dict[str, Any]:
        return {"name": "pixel", "version": "1", "similarity": "cosine of centred 8x8 thumbnails (test only)"}

    def embed(self, rgb: np.ndarray) -> FaceEmbedding:
        grey = rgb.astype(np.float32).mean(axis=2)
        if grey.std() < 1.0:
            return FaceEmbedding(Outcome.NO_FACE, reason="uniform image")
        h, w = grey.shape
        thumb = grey[: h - h % 8, : w - w % 8].reshape(8, h // 8, 8, w // 8).mean(axis=(1, 3)).ravel()
        thumb -= thumb.mean()
        return FaceEmbedding(Outcome.OK, (thumb / (np.linalg.norm(thumb) or 1.0)).astype(np.float32), n_faces=1)

    def similarity(self, a: np.ndarray, b: np.ndarray) -> float:
        return float(np.dot(a, b))


class EditorContract:
    """Checks every editor must pass. Subclass and provide an ``editor`` fixture."""

    def request(self, k: int = 1) -> EditRequest:
        return EditRequest(gradient_image(1), "make the person's hair color crimson red", "face-1", "hair-01", k, 7)

    def test_describe_is_json(self, editor: Any) -> None:
        description = editor.describe()
        assert json.loads(json.dumps(description)) == dict(description)
        assert "version" in description or "model" in description

    def test_edit_returns_an_outcome(self, editor: Any) -> None:
        result = editor.edit(self.request())
        assert isinstance(result, EditResult)
        assert isinstance(result.outcome, Outcome)
        if result.outcome is Outcome.OK:
            assert decode_rgb(result.image).ndim == 3
        else:
            assert result.image is None and result.reason
