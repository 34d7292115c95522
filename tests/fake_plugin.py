"""A test-only plugin: a synthetic dataset, a fast pixel embedder and misbehaving editors."""

from __future__ import annotations

import os
import signal
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np

from faceedit_bench import hookimpl
from faceedit_bench.records import EditRequest, EditResult, Face, Outcome
from faceedit_bench.storage import atomic
from faceedit_bench.storage.images import encode_png
from faceedit_bench.testing import PixelEmbedder, gradient_image


def _put(path: Path, data: bytes) -> None:
    """A face file written whole, and only when it differs: the processes of one test (shards, a sweep,
    restarts) build the dataset on the same root at once, and one must never read another's half-written file."""
    if not (path.is_file() and path.read_bytes() == data):
        atomic.write_bytes(path, data)


class SyntheticDataset:
    """``n`` faces of generated images; optional broken faces to exercise exclusions, and
    ``spoilt_references`` good faces that also list an unreadable and a faceless reference."""

    def __init__(self, root: str, n: int = 4, corrupt: int = 0, blank: int = 0, bad_reference: int = 0,
                 spoilt_references: int = 0) -> None:
        self.root = Path(root)
        self.root.mkdir(parents=True, exist_ok=True)
        self.items: list[Face] = []
        for i in range(n + corrupt + blank + bad_reference):
            base, ref = self.root / f"face{i}.png", self.root / f"face{i}_ref.png"
            if i < n:
                _put(base, gradient_image(i))
                _put(ref, gradient_image(i))
            elif i < n + corrupt:
                _put(base, b"")  # an empty file: unreadable
                _put(ref, gradient_image(i))
            elif i < n + corrupt + blank:
                _put(base, encode_png(np.full((64, 64, 3), 128, np.uint8)))  # no "face"
                _put(ref, gradient_image(i))
            else:
                _put(base, gradient_image(i))
                _put(ref, gradient_image(i)[:40])  # a truncated reference
            refs: tuple[Path, ...] = (ref,)
            if i < min(n, spoilt_references):
                unreadable, faceless = self.root / f"face{i}_ref_empty.png", self.root / f"face{i}_ref_blank.png"
                _put(unreadable, b"")
                _put(faceless, encode_png(np.full((64, 64, 3), 128, np.uint8)))
                refs = (ref, unreadable, faceless)
            gender = "male" if i % 2 == 0 else "female"
            self.items.append(Face(f"synthetic/{i}", f"id{i}", base, refs, {"gender": gender, "skin_tone": None}))

    def describe(self) -> dict[str, Any]:
        return {"name": "synthetic", "n_faces": len(self.items)}

    def faces(self) -> Iterator[Face]:
        return iter(self.items)


class NoiseEditor:
    """Adds seeded noise: every step changes the image a little."""

    def __init__(self, strength: float = 20.0) -> None:
        self.strength = strength

    def describe(self) -> dict[str, Any]:
        return {"name": "noise", "version": "1", "strength": self.strength}

    def edit(self, request: EditRequest) -> EditResult:
        from faceedit_bench.storage.images import decode_rgb

        rgb = decode_rgb(request.image).astype(np.float32)
        noise = np.random.default_rng(request.seed).normal(0, self.strength, rgb.shape)
        return EditResult.ok(encode_png(np.clip(rgb + noise, 0, 255).astype(np.uint8)))


class TwoImageEditor:
    """Takes I_{k-1} and one further image; returns their pixel mean (a stand-in for a
    multi-reference editor)."""

    max_input_images = 2

    def describe(self) -> dict[str, Any]:
        return {"name": "two_image", "version": "1"}

    def edit(self, request: EditRequest) -> EditResult:
        from faceedit_bench.storage.images import decode_rgb

        images = [decode_rgb(b).astype(np.float32) for b in (request.image, *request.extra_images)]
        size = min(i.shape[0] for i in images), min(i.shape[1] for i in images)
        mean = sum(i[: size[0], : size[1]] for i in images) / len(images)
        return EditResult.ok(encode_png(mean.astype(np.uint8)), inputs=len(images))


class ScriptedEditor:
    """Returns a fixed outcome for chosen "session/k" keys and the input otherwise."""

    def __init__(self, script: dict[str, str] | None = None, calls_file: str | None = None,
                 die_after: int | None = None, noise: float = 0.0, hang_after: int | None = None,
                 seconds_per_edit: float = 0.0) -> None:
        self.script = script or {}
        self.seconds_per_edit = seconds_per_edit
        self.noise = noise
        self.calls_file = calls_file
        self.die_after = die_after
        self.hang_after = hang_after

    def describe(self) -> dict[str, Any]:
        # calls_file, die_after, hang_after and seconds_per_edit only observe, interrupt or slow down; they do
        # not change outputs.
        return {"name": "scripted", "version": "1", "script": self.script, "noise": self.noise}

    def calls(self) -> list[str]:
        return Path(self.calls_file).read_text().splitlines() if self.calls_file and Path(self.calls_file).exists() else []

    def edit(self, request: EditRequest) -> EditResult:
        if self.die_after is not None and len(self.calls()) >= self.die_after:
            os.kill(os.getpid(), signal.SIGKILL)  # a killed run: no cleanup, no except, no finally
        if self.hang_after is not None and len(self.calls()) >= self.hang_after:
            time.sleep(3600)  # a run that is busy when it is killed from outside
        time.sleep(self.seconds_per_edit)  # a model's time per edit
        if self.calls_file:
            with open(self.calls_file, "a") as fh:
                fh.write(f"{request.face_id} {request.session_id} {request.k}\n")
        action = self.script.get(f"{request.session_id}/{request.k}")
        if action == "raise":
            raise RuntimeError("scripted crash")
        if action == "garbage":
            return EditResult.ok(b"not an image")
        if action == "tiny":  # decodes, but the pixel embedder answers NaN for it: a broken score
            return EditResult.ok(encode_png(np.random.default_rng(0).integers(0, 255, (4, 4, 3), dtype=np.uint8)))
        if action in {o.value for o in Outcome}:
            return EditResult(Outcome(action), reason=f"scripted {action}")
        if self.noise:
            return NoiseEditor(self.noise).edit(request)
        return EditResult.ok(request.image)


@hookimpl
def faceedit_register_datasets(register: Any) -> None:
    register("synthetic", SyntheticDataset)


class CoarsePixelEmbedder(PixelEmbedder):
    """A second embedder (different identity), to re-score stored edits."""

    def describe(self) -> dict[str, Any]:
        return {**super().describe(), "name": "pixel_coarse", "version": "2"}


class SlowPixelEmbedder(PixelEmbedder):
    """The pixel embedder at 20 ms per image, noting when each embedding ran (in-process
    only, run.workers=1): to see what else happens meanwhile."""

    spans: list[tuple[float, float]] = []

    def describe(self) -> dict[str, Any]:
        return {**super().describe(), "name": "pixel_slow"}

    def embed(self, rgb: Any) -> Any:
        started = time.monotonic()
        time.sleep(0.02)
        embedding = super().embed(rgb)
        SlowPixelEmbedder.spans.append((started, time.monotonic()))
        return embedding


@hookimpl
def faceedit_register_embedders(register: Any) -> None:
    register("pixel", PixelEmbedder)
    register("pixel_coarse", CoarsePixelEmbedder)
    register("pixel_slow", SlowPixelEmbedder)


@hookimpl
def faceedit_register_editors(register: Any) -> None:
    register("noise", NoiseEditor)
    register("scripted", ScriptedEditor)
    register("two_image", TwoImageEditor)
