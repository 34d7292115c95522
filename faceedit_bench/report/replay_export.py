"""Export a finished run's edited images in the replay layout, so the same edits can be
re-scored elsewhere (``editor=replay``) or shared: the basis of submissions."""

from __future__ import annotations

import csv
from pathlib import Path

from PIL import Image

from faceedit_bench.errors import FaceEditBenchError
from faceedit_bench.storage import atomic
from faceedit_bench.storage.replay_layout import replay_extension, replay_step_path
from faceedit_bench.storage.store import ImageStore, store_root_of_run


def export_replay(run_dir: Path, out: Path) -> dict[str, int]:
    """Write ``<out>/<face_dir>/<session_id>/step_<k>.<ext>`` for every edited image of the
    run, and ``step_<k>.refused`` for refusals. Returns counts of what was written."""
    run_dir, out = Path(run_dir), Path(out)
    steps_csv = run_dir / "steps.csv"
    if not steps_csv.is_file():
        from faceedit_bench.storage.run_dirs import did_you_mean

        raise FaceEditBenchError(f"{run_dir} is not a run directory (no steps.csv). Runs live in <workspace>/runs/."
                                 + (did_you_mean(run_dir) if not run_dir.exists() else ""))
    store = ImageStore(store_root_of_run(run_dir))
    counts = {"images": 0, "refused": 0}
    with open(steps_csv, newline="") as fh:
        for row in csv.DictReader(fh):
            k = int(row["k"])
            if k == 0:
                continue
            if row["outcome"] == "ok" and row["image_hash"]:
                source = store.path(row["image_hash"])
                with Image.open(source) as im:  # the bytes are copied as they are: same hash, same scores
                    target = out / replay_step_path(row["face_id"], row["session_id"], k, replay_extension(im.format))
                target.parent.mkdir(parents=True, exist_ok=True)
                atomic.write_bytes(target, source.read_bytes())
                counts["images"] += 1
            elif row["outcome"] == "refused":
                target = out / replay_step_path(row["face_id"], row["session_id"], k, ".refused")
                target.parent.mkdir(parents=True, exist_ok=True)
                atomic.write_text(target, row["reason"] or "refused")
                counts["refused"] += 1
    return counts
