"""The identity metric on real faces with the real dlib model, through the replay editor."""

from __future__ import annotations

import csv
import io
from pathlib import Path

import numpy as np
import pytest
from PIL import Image

from faceedit_bench.run.experiment import build_experiment, run_experiment
from faceedit_bench.storage.replay_layout import face_dir


def jpeg(data: bytes, quality: int) -> bytes:
    out = io.BytesIO()
    Image.open(io.BytesIO(data)).convert("RGB").save(out, format="JPEG", quality=quality)
    return out.getvalue()


def test_fss_follows_identity_through_a_session(plugins, compose, tmp_path):
    faces = list(plugins.registry.create("datasets", "sample").faces())[:2]
    replay = tmp_path / "replay"
    blank = io.BytesIO()
    Image.fromarray(np.full((256, 256, 3), 128, np.uint8)).save(blank, format="PNG")
    for face, other in ((faces[0], faces[1]), (faces[1], faces[0])):
        d = replay / face_dir(face.face_id) / "pose-01"
        d.mkdir(parents=True)
        base = face.image.read_bytes()
        (d / "step_1.jpg").write_bytes(jpeg(base, 50))  # same person, compressed
        (d / "step_2.png").write_bytes(other.image.read_bytes())  # a different person
        (d / "step_3.png").write_bytes(blank.getvalue())  # no face at all
        (d / "step_4.png").write_bytes(base)  # back to the original
    cfg = compose("editor=replay", f"editor.params.root={replay}", "dataset=sample", "embedder=dlib",
                  "testset=pose", "tracking=none", "run.max_faces=2", "run.max_sessions=1", "run.workers=1")
    report = run_experiment(build_experiment(cfg, plugins), plugins)

    assert report["counts"]["sessions"]["included"] == 2
    assert report["counts"]["edited_images_without_face"] == 2
    (run_dir,) = (Path(cfg.run.workspace) / "runs").iterdir()
    rows = list(csv.DictReader(open(run_dir / "steps.csv")))
    # Every row says who scored it: the embedder and its model version.
    assert {(r["embedder"], r["embedder_version"]) for r in rows} == {("dlib", report["scales"]["embedder_version"])}
    drops = []
    for face in faces:
        mine = [r for r in rows if r["face_id"] == face.face_id]
        assert [r["score_outcome"] for r in mine] == ["ok", "ok", "ok", "no_face", "ok"]
        fss = [float(r["fss"]) for r in mine]
        assert len(fss) == 5
        assert fss[1] > 0.6  # dlib: the same face after JPEG q50 stays well inside 'same person' (> 0.4)
        assert fss[2] < 0.4 < fss[0]  # another person falls below dlib's same-person threshold
        assert fss[3] == 0.0  # no face detected: identity lost (METHODOLOGY §6.5), counted above
        assert fss[4] == pytest.approx(fss[0])  # the original image scores as it did at k=0
        drops.append(100 / 4 * sum((fss[0] - fss[k]) / fss[0] for k in range(1, 5)))
    assert report["metrics"]["drop_fss"]["mean"] == pytest.approx(np.mean(drops), rel=1e-5)
    assert report["components"]["embedder"]["description"]["version"].startswith("20.")
