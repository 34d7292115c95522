"""Identity-metric throughput: the framework's score stage against raw dlib.

Both measure the same 64 distinct real-face images (views of the `sample` faces with
varied crop, brightness and JPEG quality, so every image has its own hash):

- raw dlib, 1 process: HOG detection + 5-point landmarks + ResNet descriptor in a loop;
- raw dlib, one process per core (multiprocessing.Pool);
- faceedit_bench's EmbeddingService with one worker per core: images read from the
  content-addressed store, decoded, embedded, written to the SQLite ledger.

Usage: python benchmarks/bench_identity.py [n_images]
"""

from __future__ import annotations

import io
import multiprocessing
import os
import sys
import tempfile
import time
from pathlib import Path

os.environ.setdefault("MLFLOW_DISABLE_TELEMETRY", "true")
ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

import numpy as np  # noqa: E402
from PIL import Image, ImageEnhance  # noqa: E402


def make_images(n: int) -> list[bytes]:
    from faceedit_bench.plugin.manager import load_plugins

    faces = list(load_plugins().registry.create("datasets", "sample").faces())
    rng = np.random.default_rng(0)
    out = []
    for i in range(n):
        im = Image.open(faces[i % len(faces)].image).convert("RGB")
        side = int(im.width * rng.uniform(0.85, 1.0))
        x, y = rng.integers(0, im.width - side + 1, size=2)
        im = ImageEnhance.Brightness(im.crop((x, y, x + side, y + side))).enhance(rng.uniform(0.8, 1.2))
        buf = io.BytesIO()
        im.save(buf, format="JPEG", quality=int(rng.integers(60, 95)))
        out.append(buf.getvalue())
    return out


_embedder = None


def _raw(data: bytes) -> int:
    global _embedder
    if _embedder is None:
        from faceedit_bench_dlib.embedder import DlibEmbedder

        _embedder = DlibEmbedder()
    rgb = np.asarray(Image.open(io.BytesIO(data)).convert("RGB"))
    return _embedder.embed(rgb).n_faces


def rate(label: str, fn, n: int) -> float:
    started = time.perf_counter()
    fn()
    per_s = n / (time.perf_counter() - started)
    print(f"| {label} | {per_s:.1f} |", flush=True)
    return per_s


def main(n: int) -> None:
    from faceedit_bench.plugin.manager import load_plugins
    from faceedit_bench.records import Outcome
    from faceedit_bench.scoring.identity import EmbeddingService
    from faceedit_bench.storage.ledger import Ledger
    from faceedit_bench.storage.store import ImageStore

    images = make_images(n)
    cores = os.cpu_count() or 1
    _raw(images[0])  # load the model outside the timing
    print(f"{n} images, {cores} cores\n")
    print("| what | faces/s |")
    print("|---|---:|")
    rate("raw dlib, 1 process", lambda: [_raw(d) for d in images], n)
    with multiprocessing.get_context("spawn").Pool(cores) as pool:
        pool.map(_raw, images[:cores])  # warm the workers (model loading) outside the timing
        rate(f"raw dlib, {cores} processes", lambda: pool.map(_raw, images, chunksize=4), n)
    plugins = load_plugins()
    with tempfile.TemporaryDirectory() as tmp:
        store, ledger = ImageStore(Path(tmp) / "store"), Ledger(Path(tmp) / "ledger.sqlite")
        hashes = [store.put(d) for d in images]
        make = lambda: plugins.registry.create("embedders", "dlib")  # noqa: E731
        service = EmbeddingService(make(), "bench", make, store, ledger, cores, frozenset({Outcome.FAILED}))
        service.get([store.put(images[0])])  # start the pool's workers outside the timing
        service._compute(hashes[: cores * 2])
        rate(f"faceedit_bench score stage, {cores} workers", lambda: service.get(hashes[1:]), n - 1)
        rate("faceedit_bench score stage, rerun (ledger)", lambda: service.get(hashes), n)
        service.close()
        ledger.close()


if __name__ == "__main__":
    main(int(sys.argv[1]) if len(sys.argv) > 1 else 64)
