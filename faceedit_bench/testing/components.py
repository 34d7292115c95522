"""Contract mixins for the components that run a model: editors, face embedders, face detectors and judges."""

from __future__ import annotations

import asyncio
import inspect
import json
import math
from collections.abc import Mapping
from typing import Any

import numpy as np
import pytest

from faceedit_bench.errors import ConfigError
from faceedit_bench.execution.cost import USAGE_KEYS, check_prices
from faceedit_bench.execution.limits import CallLimits
from faceedit_bench.plugin.protocols import (
    EDITOR_CAPABILITIES,
    Editor,
    FaceDetector,
    FaceEmbedder,
    Judge,
    capability,
)
from faceedit_bench.records import (
    DetectedFace,
    EditRequest,
    EditResult,
    FaceEmbedding,
    JudgeReply,
    JudgeRequest,
    Outcome,
)
from faceedit_bench.storage.images import decode_rgb
from faceedit_bench.testing.helpers import gradient_image, json_description


class EditorContract:
    """Checks every editor must pass. Subclass and provide an ``editor`` fixture."""

    def request(self, k: int = 1) -> EditRequest:
        return EditRequest(gradient_image(1), "make the person's hair color crimson red", "face-1", "hair-01", k, 7)

    def test_describe_is_json(self, editor: Any) -> None:
        description = editor.describe()
        assert json.loads(json.dumps(description)) == dict(description)
        assert "version" in description or "model" in description

    def test_edit_returns_an_outcome(self, editor: Any) -> None:
        if hasattr(editor, "aedit"):  # an AsyncEditor: one attempt, run on its own loop here
            result = asyncio.run(editor.aedit(self.request()))
        else:
            result = editor.edit(self.request())
        assert isinstance(result, EditResult)
        assert isinstance(result.outcome, Outcome)
        if result.outcome is Outcome.OK:
            assert decode_rgb(result.image).ndim == 3
        else:
            assert result.image is None and result.reason

    def test_is_an_editor_with_valid_capabilities(self, editor: Any) -> None:
        assert isinstance(editor, Editor) or inspect.iscoroutinefunction(getattr(editor, "aedit", None)), \
            "an editor has edit(request) or an async aedit(request)"
        for declared in EDITOR_CAPABILITIES:
            try:
                capability(editor, "editor", declared.name)
            except ConfigError as exc:
                pytest.fail(str(exc))
        prices = capability(editor, "editor", "prices")
        if prices is not None:
            check_prices(prices, "editor.prices")
        elif inspect.iscoroutinefunction(getattr(editor, "aedit", None)):
            pytest.fail("an AsyncEditor sets prices (empty when it costs nothing per call)")


def _checked_embedding(result: Any) -> FaceEmbedding:
    """An embedder's answer, checked: an outcome; an ok vector 1-D and finite; else a reason."""
    assert isinstance(result, FaceEmbedding) and isinstance(result.outcome, Outcome)
    if result.outcome is Outcome.OK:
        vector = np.asarray(result.vector)
        assert vector.ndim == 1 and vector.size > 0, f"an ok vector must be 1-D, got shape {vector.shape}"
        assert np.issubdtype(vector.dtype, np.floating) and np.isfinite(vector).all(), "non-finite vector"
        assert result.n_faces >= 1, "an ok embedding found at least one face"
    else:
        assert result.vector is None and result.reason, "a failed embedding gives a reason and no vector"
    return result


class EmbedderContract:
    """Checks every face embedder must pass. Subclass and provide an ``embedder`` fixture, and
    a ``face_rgb`` fixture (an RGB uint8 image with one face) so the checks of embeddings run:
    without it they are skipped, and only a no-face image is tried."""

    @pytest.fixture
    def face_rgb(self) -> np.ndarray | None:
        return None

    def _face_vector(self, embedder: Any, face_rgb: np.ndarray | None) -> np.ndarray:
        if face_rgb is None:
            pytest.skip("give the contract a face_rgb fixture (an RGB uint8 image with one face)")
        result = _checked_embedding(embedder.embed(face_rgb))
        assert result.outcome is Outcome.OK, f"the face_rgb face was not embedded: {result.outcome} {result.reason}"
        return result.vector

    def test_is_an_embedder_that_states_version_and_scale(self, embedder: Any) -> None:
        assert isinstance(embedder, FaceEmbedder)
        description = json_description(embedder)
        for key in ("version", "similarity"):
            assert isinstance(description.get(key), str) and description[key].strip(), f"describe() lacks {key!r}"

    @pytest.mark.parametrize("shape", [(4, 4, 3), (2, 300, 3), (97, 131, 3)])
    def test_any_image_gets_an_outcome_and_never_a_broken_vector(self, embedder: Any, shape: tuple[int, ...]) -> None:
        _checked_embedding(embedder.embed(np.random.default_rng(0).integers(0, 256, size=shape, dtype=np.uint8)))

    @pytest.mark.parametrize("value", [0, 128, 255])
    def test_a_blank_image_has_no_face(self, embedder: Any, value: int) -> None:
        result = embedder.embed(np.full((160, 128, 3), value, np.uint8))
        assert result.outcome is Outcome.NO_FACE, f"a blank image gave {result.outcome}"
        assert result.vector is None and result.n_faces == 0 and result.reason

    def test_a_face_embeds_the_same_every_time(self, embedder: Any, face_rgb: Any) -> None:
        vector = self._face_vector(embedder, face_rgb)
        assert np.allclose(self._face_vector(embedder, face_rgb.copy()), vector, atol=1e-5)

    def test_similarity_is_highest_with_itself_and_symmetric(self, embedder: Any, face_rgb: Any) -> None:
        v = self._face_vector(embedder, face_rgb)
        others = [np.roll(v, 1), v[::-1].copy()]
        mirrored = embedder.embed(np.ascontiguousarray(face_rgb[:, ::-1]))
        if mirrored.outcome is Outcome.OK:
            others.append(mirrored.vector)
        same = embedder.similarity(v, v.copy())
        assert isinstance(same, (float, np.floating)), f"similarity returned a {type(same).__name__}"
        assert -1e-6 <= float(same) <= 1 + 1e-6, f"similarity(v, v) = {same} is outside [0, 1]"
        for w in others:
            score = float(embedder.similarity(v, w))
            assert math.isfinite(score) and score <= float(same) + 1e-6, f"similarity(v, w) = {score} > {same}"
            assert score == pytest.approx(float(embedder.similarity(w, v)), abs=1e-6), "similarity is not symmetric"


class JudgeContract:
    """Checks every judge must pass. Subclass and provide a ``judge`` fixture whose calls are
    answered (a fake server, a tiny model). Override ``judge_request`` (or ``request``) to ask
    something else, ``judge_calls`` (a callable giving the number of calls served so far) to
    check that ``ajudge`` makes exactly one attempt, and ``decoding_keys`` to name the
    decoding parameters ``describe()`` must state."""

    decoding_keys: tuple[str, ...] = ("temperature",)

    def request(self) -> JudgeRequest:
        """The default question: two images and a one-field answer schema."""
        schema = {"type": "object", "properties": {"score": {"type": "integer", "minimum": 0, "maximum": 10}},
                  "required": ["score"], "additionalProperties": False}
        return JudgeRequest("Rate from 0 to 10 how well the second image applies 'make the hair red' to the first.",
                            (gradient_image(1), gradient_image(2)), schema, "contract_score", 3)

    @pytest.fixture
    def judge_request(self) -> JudgeRequest:
        return self.request()

    @pytest.fixture
    def judge_calls(self) -> Any:
        return None

    def test_describe_names_the_model_and_decoding(self, judge: Any) -> None:
        assert isinstance(judge, Judge) and inspect.iscoroutinefunction(judge.ajudge)
        description = json_description(judge)
        model = description.get("version") or description.get("model")
        assert isinstance(model, str) and model.strip(), "describe() names the exact model as 'version' or 'model'"
        missing = [key for key in self.decoding_keys if key not in description]
        assert not missing, f"describe() lacks the decoding parameter(s) {missing}"

    def test_limits_and_prices(self, judge: Any) -> None:
        assert isinstance(judge.limits, CallLimits)
        assert isinstance(judge.prices, Mapping)
        try:
            check_prices(judge.prices, "judge.prices")
        except ConfigError as exc:
            pytest.fail(str(exc))
        if any(key != "as_of" for key in judge.prices):
            assert isinstance(judge.prices.get("as_of"), str) and judge.prices["as_of"], "prices need an as_of date"

    def test_ajudge_makes_one_attempt_and_returns_an_outcome(self, judge: Any, judge_request: JudgeRequest,
                                                             judge_calls: Any) -> None:
        before = judge_calls() if judge_calls else 0
        reply = asyncio.run(judge.ajudge(judge_request))
        assert isinstance(reply, JudgeReply) and isinstance(reply.outcome, Outcome)
        assert reply.outcome in (Outcome.OK, Outcome.REFUSED, Outcome.API_ERROR), reply.outcome
        if reply.outcome is Outcome.OK:
            assert isinstance(reply.text, str) and reply.text, "an ok reply carries the model's text"
        else:
            assert reply.text is None and reply.reason, "a refusal or API error carries a reason and no text"
        assert isinstance(reply.usage, Mapping)
        for key in set(USAGE_KEYS) & set(reply.usage):
            value = reply.usage[key]
            assert isinstance(value, (int, float)) and not isinstance(value, bool) and value >= 0, (key, value)
        if judge_calls:
            assert judge_calls() - before == 1, "ajudge makes exactly one attempt (the core retries)"


class FaceDetectorContract:
    """Checks every face detector must pass. Subclass and provide a ``detector`` fixture, and a ``face_rgb``
    fixture (an RGB uint8 image with one face) so the checks of a found face run: without it they are
    skipped, and only blank images are tried."""

    @pytest.fixture
    def face_rgb(self) -> np.ndarray | None:
        return None

    def test_is_a_detector_that_states_its_version(self, detector: Any) -> None:
        assert isinstance(detector, FaceDetector)
        description = json_description(detector)
        assert isinstance(description.get("version"), str) and description["version"].strip()

    @pytest.mark.parametrize("value", [0, 255])
    def test_a_blank_image_has_no_face(self, detector: Any, value: int) -> None:
        found = list(detector.detect(np.full((160, 128, 3), value, np.uint8)))
        assert found == [], f"a blank image gave {len(found)} face(s)"

    def test_a_face_is_found_with_box_score_and_named_landmarks(self, detector: Any, face_rgb: Any) -> None:
        if face_rgb is None:
            pytest.skip("give the contract a face_rgb fixture (an RGB uint8 image with one face)")
        found = list(detector.detect(face_rgb))
        assert found and all(isinstance(f, DetectedFace) for f in found), "the face_rgb face was not found"
        height, width = face_rgb.shape[:2]
        areas = []
        for face in found:
            left, top, right, bottom = face.box
            assert left < right and top < bottom, f"box {face.box} is empty or inverted"
            assert -width * 0.5 <= left and right <= width * 1.5 and -height * 0.5 <= top and bottom <= height * 1.5
            assert math.isfinite(face.score), face.score
            missing = {"left_eye", "right_eye", "nose_tip"} - set(face.landmarks)
            assert not missing, f"landmarks lack {sorted(missing)}"
            assert face.landmarks["left_eye"][0] < face.landmarks["right_eye"][0], "left_eye is the image-left eye"
            areas.append((right - left) * (bottom - top))
        assert areas == sorted(areas, reverse=True), "faces are listed largest first"
