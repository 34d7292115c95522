"""Image-metric throughput: the score stage's image metrics against the raw libraries, and each part's cost.

Sessions of 4 steps on the `sample` faces (256 x 256): each step changes the previous image a little (brightness,
a blurred background, a shift), so every image has its own hash. Per step the shipped defaults (background and
edit_magnitude) need the faces of the new image I_k (dlib HOG + 68 landmarks; I_0's once per session), then
masked SSIM / PSNR / MAD and the face's mean absolute difference.

- each part alone, 1 process: detection, background, edit_magnitude (ms per step);
- raw libraries, 1 process and one process per core: detection + both metrics on decoded arrays in a loop;
- faceedit_bench's ImageScorer with one worker per core: images read from the store and decoded, faces and values
  written to the SQLite ledger; and a rerun (everything read back).

Usage: python benchmarks/bench_image_metrics.py [n_sessions]
"""

from __future__ import annotations

import asyncio
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
from PIL import Image, ImageEnhance, ImageFilter  # noqa: E402

STEPS = 4


def make_sessions(n: int) -> list[list[np.ndarray]]:
    """n sessions of I_0..I_4 as RGB arrays."""
    from faceedit_bench.plugin.manager import load_plugins

    faces = list(load_plugins().registry.create("datasets", "sample").faces())
    rng = np.random.default_rng(0)
    sessions = []
    for i in range(n):
        image = Image.open(faces[i % len(faces)].image).convert("RGB")
        images = [image]
        for k in range(STEPS):
            image = ImageEnhance.Brightness(image).enhance(rng.uniform(0.9, 1.1))
            if k % 2:
                image = image.filter(ImageFilter.GaussianBlur(rng.uniform(0.5, 1.5)))
            images.append(image.rotate(0, translate=(int(rng.integers(-3, 4)), 0)))
        sessions.append([np.asarray(im) for im in images])
    return sessions


_parts: dict[str, object] = {}


def _load() -> tuple[object, list[object]]:
    if not _parts:
        from faceedit_bench_dlib.embedder import DlibEmbedder

        from faceedit_bench.builtin.pixel_metrics import BackgroundPreservation, EditMagnitude

        _parts["detector"], _parts["metrics"] = DlibEmbedder(), [BackgroundPreservation(), EditMagnitude()]
    return _parts["detector"], _parts["metrics"]  # type: ignore[return-value]


def _raw_session(images: list[np.ndarray]) -> int:
    """What the stage computes for one session, with the libraries alone (arrays decoded already)."""
    from faceedit_bench.scoring.image_metric import StepImages

    detector, metrics = _load()
    faces = [tuple(detector.detect(image)) for image in images]  # type: ignore[attr-defined]
    for k in range(1, len(images)):
        step = StepImages(k, "x", images[0], images[k - 1], images[k], (),
                          {"source": faces[0], "previous": faces[k - 1], "current": faces[k]})
        for metric in metrics:
            metric.measure(step)  # type: ignore[attr-defined]
    return len(images) - 1


def rate(label: str, fn, steps: int) -> float:
    started = time.perf_counter()
    fn()
    per_s = steps / (time.perf_counter() - started)
    print(f"| {label} | {per_s:.1f} | {1000 / per_s:.0f} |", flush=True)
    return per_s


def parts(sessions: list[list[np.ndarray]]) -> None:
    """Each part's cost per step, 1 process."""
    from faceedit_bench.scoring.image_metric import StepImages

    detector, (background, edit) = _load()
    images = [image for s in sessions for image in s[1:]]
    rate("detection of I_k (dlib HOG + 68 landmarks)", lambda: [detector.detect(i) for i in images], len(images))
    steps = [StepImages(k, "x", s[0], s[k - 1], s[k], (), {r: tuple(detector.detect(s[j])) for r, j in
                                                            (("source", 0), ("previous", k - 1), ("current", k))})
             for s in sessions for k in range(1, STEPS + 1)]
    rate("background (masked SSIM, PSNR, MAD; vs I_k-1 and I_0)", lambda: [background.measure(s) for s in steps],
         len(steps))
    rate("edit_magnitude (face MAD; vs I_k-1 and I_0)", lambda: [edit.measure(s) for s in steps], len(steps))


def main(n: int) -> None:
    from faceedit_bench.records import AdmittedFace, Face, Outcome, Session, Step, StepState
    from faceedit_bench.run.image_metrics import image_metric_identities
    from faceedit_bench.scoring.image_scoring import ImageScorer
    from faceedit_bench.storage.images import encode_png
    from faceedit_bench.storage.ledger import Ledger
    from faceedit_bench.storage.store import ImageStore

    cores = os.cpu_count() or 1
    sessions = make_sessions(n + cores)  # the first ``cores`` warm the workers
    warm, timed = sessions[:cores], sessions[cores:]
    steps = n * STEPS
    _raw_session(sessions[0])  # load the models outside the timing
    print(f"{n} sessions x {STEPS} steps of 256 x 256 images, {cores} cores\n")
    print("| what | steps/s | ms per step |")
    print("|---|---:|---:|")
    parts(timed)
    rate("raw libraries, 1 process", lambda: [_raw_session(s) for s in timed], steps)
    with multiprocessing.get_context("spawn").Pool(cores) as pool:
        pool.map(_raw_session, warm, chunksize=1)  # warm the workers outside the timing
        raw = rate(f"raw libraries, {cores} processes", lambda: pool.map(_raw_session, timed, chunksize=1), steps)
    with tempfile.TemporaryDirectory() as tmp:
        store, ledger = ImageStore(Path(tmp) / "store"), Ledger(Path(tmp) / "ledger.sqlite")
        detector, metrics = _load()
        fps = image_metric_identities(metrics, detector.describe())  # type: ignore[attr-defined]
        scorer = ImageScorer(metrics, fps, detector, "bench", store, ledger, cores, frozenset({Outcome.FAILED}))
        scorer.editing_ended()  # full priority, as once the edits are done
        work = []
        for i, images in enumerate(sessions):
            hashes = [store.put(encode_png(image)) for image in images]
            face = AdmittedFace(Face(f"f{i}", f"f{i}", Path("x"), ()), hashes[0], [])
            session = Session(f"s{i}", "bench", tuple(Step(k, "edit") for k in range(1, STEPS + 1)))
            work.append((face, session, [StepState(k, Outcome.OK, "", hashes[k - 1], hashes[k], False)
                                         for k in range(1, STEPS + 1)]))

        async def measure(items):
            return await asyncio.gather(*(scorer.measure(*item) for item in items))

        asyncio.run(measure(work[:cores]))  # start the workers (model loading) outside the timing
        stage = rate(f"faceedit_bench score stage, {cores} workers",
                     lambda: asyncio.run(measure(work[cores:])), steps)
        rate("faceedit_bench score stage, rerun (ledger)", lambda: asyncio.run(measure(work[cores:])), steps)
        scorer.close()
        ledger.close()
    print(f"\nstage / raw ({cores} processes): {stage / raw:.2f}")


if __name__ == "__main__":
    main(int(sys.argv[1]) if len(sys.argv) > 1 else 32)
