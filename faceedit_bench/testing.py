"""Helpers for testing faceedit_bench and its plugins.

``EditorContract`` is a pytest mixin every editor plugin can run::

    class TestMyEditor(EditorContract):
        @pytest.fixture
        def editor(self):
            return MyEditor(...)

``EmbedderContract``, ``JudgeContract`` and ``DatasetContract`` do the same for the other
component kinds (fixtures ``embedder``, ``judge``, ``dataset``); ``SectionContract`` for a protocol's report
section (fixtures ``section``, ``report_part``: :mod:`faceedit_bench.testing_sections`). ``PluginDistributionContract`` checks a plugin distribution's packaging (wheel, entry
point, config entry). ``PixelEmbedder`` is a fast stand-in embedder for engine tests that need no face
model; it is not a face recognizer and is never registered as a plugin.
"""

from __future__ import annotations

import asyncio
import importlib
import inspect
import json
import math
import subprocess
import sys
import zipfile
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from faceedit_bench.errors import ConfigError
from faceedit_bench.execution.cost import USAGE_KEYS, check_prices
from faceedit_bench.execution.limits import CallLimits
from faceedit_bench.plugin.protocols import Dataset, FaceEmbedder, Judge
from faceedit_bench.records import EditRequest, EditResult, Face, FaceEmbedding, JudgeReply, JudgeRequest, Outcome
from faceedit_bench.storage.images import decode_rgb, encode_png
from faceedit_bench.testing_sections import SectionContract  # noqa: F401  (served from here)


def gradient_image(seed: int, size: int = 64) -> bytes:
    """A PNG that differs per seed (for stores, ledgers and fake editors)."""
    rng = np.random.default_rng(seed)
    base = rng.integers(0, 255, size=(8, 8, 3), dtype=np.uint8)
    return encode_png(np.kron(base, np.ones((size // 8, size // 8, 1), dtype=np.uint8)))


class PixelEmbedder:
    """Embeds the whole image as an 8x8 grey thumbnail; a uniform image has 'no face'.
    An image smaller than 8x8 gets a NaN vector: a stand-in for a broken embedder."""

    def describe(self) -> dict[str, Any]:
        return {"name": "pixel", "version": "1", "similarity": "cosine of centred 8x8 thumbnails (test only)"}

    def embed(self, rgb: np.ndarray) -> FaceEmbedding:
        grey = rgb.astype(np.float32).mean(axis=2)
        if grey.std() < 1.0:
            return FaceEmbedding(Outcome.NO_FACE, reason="uniform image")
        h, w = grey.shape
        if h < 8 or w < 8:
            thumb = np.full(64, np.nan, dtype=np.float32)
        else:
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


def _json_description(component: Any) -> Mapping[str, Any]:
    """``describe()``, checked to be plain JSON values and stable (it is hashed into keys)."""
    description = component.describe()
    assert json.loads(json.dumps(description)) == dict(description), "describe() must hold plain JSON values"
    assert component.describe() == description, "describe() must not change between calls"
    return description


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
        description = _json_description(embedder)
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
        description = _json_description(judge)
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


class DatasetContract:
    """Checks every dataset must pass. Subclass and provide a ``dataset`` fixture that yields
    at least one face."""

    def test_describe_is_json(self, dataset: Any) -> None:
        assert isinstance(dataset, Dataset)
        _json_description(dataset)

    def test_faces_are_lazy_and_reproducible(self, dataset: Any) -> None:
        faces = dataset.faces()
        assert isinstance(faces, Iterator), "faces() yields lazily: an iterator, not a list"
        first = [face.face_id for face in faces]
        assert first, "the contract's dataset must yield at least one face"
        assert [face.face_id for face in dataset.faces()] == first, "faces() yields the same faces each time"

    def test_faces_are_well_formed(self, dataset: Any) -> None:
        faces = list(dataset.faces())
        assert faces, "the contract's dataset must yield at least one face"
        ids = [face.face_id for face in faces]
        assert len(set(ids)) == len(ids), "face_ids must be unique"
        for face in faces:
            assert isinstance(face, Face) and isinstance(face.face_id, str) and face.face_id
            assert isinstance(face.identity, str) and face.identity, face.face_id
            assert isinstance(face.image, Path) and face.image.is_file(), face.image
            assert isinstance(face.references, tuple), face.face_id
            for reference in face.references:
                assert isinstance(reference, Path) and reference.is_file(), reference
                assert reference.resolve() != face.image.resolve(), f"{face.face_id} is its own reference"
            for attribute, group in face.demographics.items():
                assert isinstance(attribute, str) and (group is None or isinstance(group, str)), (attribute, group)
        n_faces = dataset.describe().get("n_faces")
        if n_faces is not None:
            assert n_faces == len(faces), f"describe() says n_faces={n_faces}, faces() yielded {len(faces)}"


class PluginDistributionContract:
    """Checks every plugin distribution should pass: its built wheel carries the entry point,
    the code and the config entry; it is found through its entry point like any third-party
    plugin; and its config entry lists every factory parameter with the same default and a
    comment above it. Subclass and set the class attributes."""

    plugin_root: Path  # the directory holding the plugin's pyproject.toml
    distribution: str  # e.g. "faceedit-bench-dlib"
    module: str  # e.g. "faceedit_bench_dlib"
    group: str  # Hydra config group, e.g. "embedder"
    kind: str  # registry kind, e.g. "embedders"
    component: str  # registered name, also the config-entry name
    entry_point: str = ""  # the plugin's entry-point name when it differs from ``component``
    dependencies: tuple[str, ...] = ()

    @property
    def plugin_name(self) -> str:
        return self.entry_point or self.component

    @property
    def config_path(self) -> str:
        return f"{self.module}/conf/{self.group}/{self.component}.yaml"

    @pytest.fixture(scope="class")
    @classmethod
    def wheel(cls, tmp_path_factory: Any) -> Path:
        out = tmp_path_factory.mktemp("wheel")
        subprocess.run([sys.executable, "-m", "build", "--wheel", "--no-isolation", "--outdir", str(out),
                        str(cls.plugin_root)], check=True, capture_output=True)
        (built,) = out.glob(f"{cls.module}-*.whl")
        return built

    def test_wheel_holds_entry_point_code_and_config(self, wheel: Path) -> None:
        with zipfile.ZipFile(wheel) as zf:
            names = set(zf.namelist())
            entry_points = zf.read(next(n for n in names if n.endswith(".dist-info/entry_points.txt"))).decode()
            metadata = zf.read(next(n for n in names if n.endswith(".dist-info/METADATA"))).decode()
            conf = zf.read(self.config_path).decode()
        assert f"{self.module}/__init__.py" in names and f"{self.module}/conf/__init__.py" in names
        assert not any(n.endswith(".pyc") or "/tests/" in n for n in names)
        assert "[faceedit_bench]" in entry_points and f"{self.plugin_name} = {self.module}" in entry_points
        assert f"name: {self.component}" in conf
        for dep in ("faceedit-bench", *self.dependencies):
            assert f"Requires-Dist: {dep}" in metadata, dep

    def test_discovered_through_its_entry_point(self, wheel: Path, tmp_path: Path, monkeypatch: Any) -> None:
        from faceedit_bench.plugin.manager import load_plugins

        with zipfile.ZipFile(wheel) as zf:
            zf.extractall(tmp_path)
        monkeypatch.syspath_prepend(str(tmp_path))
        monkeypatch.setenv("FACEEDIT_BENCH_LOAD_PLUGINS", self.plugin_name)
        plugins = load_plugins()
        assert plugins.info[self.plugin_name].distribution == self.distribution
        registration = plugins.registry.get(self.kind, self.component)
        assert registration.provider == self.plugin_name and registration.description
        assert f"pkg://{self.module}.conf" in plugins.searchpath()

    def test_config_entry_matches_the_factory(self) -> None:
        import yaml

        from faceedit_bench.plugin.registry import Register, Registry

        module = importlib.import_module(self.module)
        registry = Registry()
        getattr(module, f"faceedit_register_{self.kind}")(register=Register(registry[self.kind], self.component))
        factory = registry.get(self.kind, self.component).load()
        lines = (self.plugin_root / self.config_path).read_text().splitlines()
        entry = yaml.safe_load("\n".join(lines))
        assert entry["name"] == self.component
        defaults = {n: p.default for n, p in inspect.signature(factory).parameters.items()}
        params = entry.get("params") or {}
        assert set(params) == set(defaults), "every factory parameter, and only those, in the config entry"
        for name, value in params.items():
            default = list(defaults[name]) if isinstance(defaults[name], tuple) else defaults[name]
            assert value == default, f"{name}: config {value!r} != factory default {default!r}"
            line = next(i for i, t in enumerate(lines) if t.strip().startswith(f"{name}:"))
            assert lines[line - 1].strip().startswith("#"), f"param {name} has no comment above it"
