"""Helpers for testing faceedit_bench and its plugins.

``EditorContract`` is a pytest mixin every editor plugin can run::

    class TestMyEditor(EditorContract):
        @pytest.fixture
        def editor(self):
            return MyEditor(...)

``PluginDistributionContract`` checks a plugin distribution's packaging (wheel, entry
point, config entry). ``PixelEmbedder`` is a fast stand-in embedder for engine tests that need no face
model; it is not a face recognizer and is never registered as a plugin.
"""

from __future__ import annotations

import importlib
import inspect
import json
import subprocess
import sys
import zipfile
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from faceedit_bench.records import EditRequest, EditResult, FaceEmbedding, Outcome
from faceedit_bench.storage.images import decode_rgb, encode_png


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
            import asyncio

            result = asyncio.run(editor.aedit(self.request()))
        else:
            result = editor.edit(self.request())
        assert isinstance(result, EditResult)
        assert isinstance(result.outcome, Outcome)
        if result.outcome is Outcome.OK:
            assert decode_rgb(result.image).ndim == 3
        else:
            assert result.image is None and result.reason


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
