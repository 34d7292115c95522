"""The ``sample`` dataset holds real, detectable, correctly grouped faces (checked with dlib)."""

from __future__ import annotations

import importlib.util
import itertools
from pathlib import Path

import numpy as np
import pytest
from PIL import Image

from faceedit_bench.builtin.datasets import sample as sample_module
from faceedit_bench.builtin.datasets.sample import SampleDataset
from faceedit_bench.errors import DatasetError
from faceedit_bench.testing import DatasetContract

dlib = pytest.importorskip("dlib")
SAME_PERSON = 0.6  # dlib's documented same-person threshold on descriptor L2 distance


@pytest.fixture(scope="module")
def dataset(tmp_path_factory):
    return SampleDataset(cache_dir=tmp_path_factory.mktemp("sample"))


@pytest.fixture(scope="module")
def faces(dataset):
    return list(dataset.faces())


@pytest.fixture(scope="module")
def dlib_models():
    spec = importlib.util.find_spec("face_recognition_models")
    if spec is None:
        pytest.skip("face-recognition-models(-ng) is not installed")
    models = Path(spec.submodule_search_locations[0]) / "models"
    return (
        dlib.get_frontal_face_detector(),
        dlib.shape_predictor(str(models / "shape_predictor_5_face_landmarks.dat")),
        dlib.face_recognition_model_v1(str(models / "dlib_face_recognition_resnet_model_v1.dat")),
    )


@pytest.fixture(scope="module")
def descriptors(faces, dlib_models):
    """identity -> (base descriptor, reference descriptor); asserts one HOG face per image."""
    det, sp, rec = dlib_models
    out = {}
    for face in faces:
        pair = []
        for path in (face.image, *face.references):
            rgb = np.asarray(Image.open(path).convert("RGB"))
            dets = det(rgb, 1)
            assert len(dets) == 1, f"{path.name}: {len(dets)} faces detected"
            pair.append(np.array(rec.compute_face_descriptor(rgb, sp(rgb, dets[0]))))
        out[face.identity] = pair
    return out


def test_eight_people_with_one_distinct_reference_each(faces):
    assert [f.identity for f in faces] == [
        "astronaut_eileen_collins", *(f"t1_person{i}" for i in range(1, 7)), "tom_hanks"]
    assert len({f.face_id for f in faces}) == 8
    for f in faces:
        assert len(f.references) == 1 and f.references[0] != f.image
        assert f.image.read_bytes() != f.references[0].read_bytes()
        assert Image.open(f.image).size == (256, 256) and Image.open(f.references[0]).size == (320, 320)
    assert not {f.image for f in faces} & {r for f in faces for r in f.references}


def test_labels(faces):
    genders = {f.identity: f.demographics["gender"] for f in faces}
    assert [genders[f"t1_person{i}"] for i in range(1, 7)].count("female") == 3
    assert genders["tom_hanks"] == "male" and genders["astronaut_eileen_collins"] == "female"
    assert all(f.demographics["skin_tone"] is None and f.demographics["age_group"] is None for f in faces)


def test_same_person_close_different_people_apart(descriptors):
    for identity, (base, ref) in descriptors.items():
        assert np.linalg.norm(base - ref) < SAME_PERSON, identity
    for (a, da), (b, db) in itertools.combinations(descriptors.items(), 2):
        for x, y in itertools.product(da, db):
            assert np.linalg.norm(x - y) > SAME_PERSON, (a, b)


def test_describe_states_the_caveat(dataset):
    d = dataset.describe()
    assert d["reference_mode"] == "same_photo_variant"
    assert "same photo" in d["references"] and "never mirrored" in d["references"]
    assert "smoke test" in d["caveat"] and "not comparable" in d["caveat"]
    assert d["n_faces"] == 8 and set(d["sources"]) == {"t1", "tom_hanks", "astronaut"}


def test_files_are_deterministic_cached_and_regenerated(dataset, faces, tmp_path):
    other = list(SampleDataset(cache_dir=tmp_path).faces())
    for a, b in zip(faces, other):
        assert a.image.read_bytes() == b.image.read_bytes()
        assert a.references[0].read_bytes() == b.references[0].read_bytes()
    victim = other[3].image
    before = victim.read_bytes()
    victim.unlink()
    again = list(SampleDataset(cache_dir=tmp_path, limit=4).faces())
    assert len(again) == 4 and victim.read_bytes() == before
    assert not list(tmp_path.rglob("*.tmp"))  # atomic writes leave no temporary files


def test_missing_package_says_how_to_install(monkeypatch):
    monkeypatch.setattr(sample_module.importlib.util, "find_spec", lambda name: None)
    with pytest.raises(DatasetError, match="pip install insightface scikit-image"):
        SampleDataset()


def _replay(faces, root: Path, edit) -> Path:
    """A replay folder in which every step of the first pose session is ``edit(I_0)``."""
    from faceedit_bench.storage.replay_layout import face_dir

    for face in faces:
        folder = root / face_dir(face.face_id) / "pose-01"
        folder.mkdir(parents=True)
        with Image.open(face.image) as im:
            edited = edit(im.convert("RGB"))
        for k in range(1, 5):
            edited.save(folder / f"step_{k}.{'jpg' if edited.format == 'JPEG' else 'png'}",
                        **({"quality": 70} if edited.format == "JPEG" else {}))
    return root


def _jpeg(im: Image.Image) -> Image.Image:
    import io

    buf = io.BytesIO()
    im.save(buf, format="JPEG", quality=70)
    return Image.open(io.BytesIO(buf.getvalue()))


@pytest.mark.slow(seconds=10)
def test_no_edit_beats_mirroring_or_reencoding(plugins, compose, tmp_path):
    """Issue 10, item 11: with mirrored references a mirror-only editor scored Drop_FSS -10%,
    better than no edit. No trivial edit may now move I_k towards the reference."""
    from PIL import ImageOps

    from faceedit_bench.run.experiment import build_experiment, run_experiment

    faces = list(plugins.registry.create("datasets", "sample", {"cache_dir": str(tmp_path / "cache")}).faces())
    common = ("dataset=sample", f"+dataset.params.cache_dir={tmp_path / 'cache'}", "embedder=dlib", "testset=pose",
              "tracking=none", "run.max_sessions=1", "run.workers=1")
    drops = {}
    for name, edit in (("mirror", ImageOps.mirror), ("jpeg_q70", _jpeg), (None, None)):
        editor = ("editor=replay", f"editor.params.root={_replay(faces, tmp_path / name, edit)}") if name else (
            "editor=identity",)
        report = run_experiment(build_experiment(compose(*common, *editor), plugins), plugins)
        assert report["counts"]["sessions"]["included"] == 8, report["counts"]
        drops[name or "identity"] = report["metrics"]["drop_fss"]["mean"]
    assert drops["identity"] == pytest.approx(0.0)
    assert drops["mirror"] > 5.0, drops  # measured about +18 (it was about -20 with mirrored references)
    assert drops["jpeg_q70"] > 0.0, drops  # measured about +4
class TestSampleDatasetContract(DatasetContract):
    pass  # the module's dataset fixture
