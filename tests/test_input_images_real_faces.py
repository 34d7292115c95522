"""Real face photos that a naive decoder shows wrongly (a phone photo's EXIF orientation,
a 16-bit PNG) are found, scored and sent to the editor upright (issue 10, items 3-4), with
the real dlib embedder."""

from __future__ import annotations

import csv
import io
from pathlib import Path

import numpy as np
import pytest
from PIL import Image

from faceedit_bench.run.experiment import build_experiment, run_experiment
from faceedit_bench.storage.images import decode_rgb
from faceedit_bench.storage.store import ImageStore

pytest.importorskip("faceedit_bench_dlib")


def rotated_jpeg(upright: Image.Image) -> bytes:
    """What a phone writes when held sideways: the pixels lie on their side and EXIF
    orientation 6 says 'rotate 90 degrees clockwise to view'."""
    exif = Image.Exif()
    exif[0x0112] = 6
    buf = io.BytesIO()
    upright.rotate(90, expand=True).save(buf, format="JPEG", quality=95, exif=exif)
    return buf.getvalue()


def gray_16_bit_png(upright: Image.Image) -> bytes:
    gray = np.asarray(upright.convert("L")).astype(np.uint16) * 257  # full 16-bit range
    buf = io.BytesIO()
    Image.fromarray(gray).save(buf, format="PNG")
    return buf.getvalue()


@pytest.fixture
def photos(plugins, tmp_path):
    """A folder dataset: two sample people, one base photo rotated by EXIF, one a 16-bit PNG."""
    faces = list(plugins.registry.create("datasets", "sample", {"cache_dir": str(tmp_path / "cache")}).faces())[:2]
    root = tmp_path / "photos"
    root.mkdir()
    rows = ["file,identity,role,gender,skin_tone,age"]
    for face, (name, make) in zip(faces, (("phone.jpg", rotated_jpeg), ("scan16.png", gray_16_bit_png))):
        with Image.open(face.image) as im:
            (root / name).write_bytes(make(im.convert("RGB")))
        (root / f"{face.identity}_ref.png").write_bytes(face.references[0].read_bytes())
        rows += [f"{name},{face.identity},base,,,", f"{face.identity}_ref.png,{face.identity},reference,,,"]
    (root / "manifest.csv").write_text("\n".join(rows) + "\n")
    return root


def test_a_naive_decoder_finds_no_face_in_either(photos):
    from faceedit_bench_dlib.embedder import DlibEmbedder

    embedder = DlibEmbedder()
    for name in ("phone.jpg", "scan16.png"):
        data = (photos / name).read_bytes()
        naive = np.asarray(Image.open(io.BytesIO(data)).convert("RGB"))  # the old decoding
        assert embedder.embed(naive).n_faces == 0, name
        assert embedder.embed(decode_rgb(data)).n_faces == 1, name


def test_rotated_and_16_bit_photos_are_measured_and_edited_upright(plugins, compose, photos):
    cfg = compose("dataset=folder", f"dataset.params.root={photos}", "embedder=dlib", "editor=identity",
                  "testset=pose", "tracking=none", "run.max_sessions=1", "run.workers=1")
    report = run_experiment(build_experiment(cfg, plugins), plugins)

    assert report["counts"]["faces"]["excluded"] == {}  # before the fix: 2 x no_face_in_base
    assert report["counts"]["sessions"]["included"] == 2
    assert report["counts"]["images_converted"] == {"exif_orientation": 1, "high_bit_depth": 1}
    assert report["trajectory"]["fss"][0]["mean"] > 0.6  # the same person as the reference

    (run_dir,) = (Path(cfg.run.workspace) / "runs").iterdir()
    store = ImageStore(Path(cfg.run.workspace) / "store")
    rows = list(csv.DictReader(open(run_dir / "steps.csv")))
    for face_id, name in (("folder/phone.jpg", "phone.jpg"), ("folder/scan16.png", "scan16.png")):
        mine = {int(r["k"]): r for r in rows if r["face_id"] == face_id}
        assert store.get(mine[0]["image_hash"]) == (photos / name).read_bytes()  # the original bytes are kept
        sent = store.get(mine[1]["image_hash"])  # the identity editor returns what it was sent
        with Image.open(io.BytesIO(sent)) as im:
            assert im.format == "PNG" and im.mode == "RGB" and not im.getexif().get(0x0112)
        assert (decode_rgb(sent) == decode_rgb((photos / name).read_bytes())).all()
        assert float(mine[1]["fss"]) == pytest.approx(float(mine[0]["fss"]))
