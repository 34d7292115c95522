from __future__ import annotations

import re

import pytest

from faceedit_bench.builtin.datasets.fairface import FairFaceDataset
from faceedit_bench.errors import ConfigError, DatasetError
from faceedit_bench.testing import DatasetContract

HEADER = "file,age,gender,race,service_test"


def test_fixture_is_the_official_csv(make_fairface):
    root = make_fairface()
    lines = (root / "fairface_label_train.csv").read_text().splitlines()
    assert lines[:2] == [HEADER, "train/9.jpg,10-19,Male,White,True"]  # the §6.2 example row


def test_faces_are_their_own_identity_in_natural_order(make_fairface):
    ds = FairFaceDataset(root=make_fairface())
    faces = list(ds.faces())
    assert [f.face_id for f in faces] == ["fairface/val/1.jpg", "fairface/val/2.jpg", "fairface/val/3.jpg",
                                           "fairface/val/10.jpg"]
    assert all(f.identity == f.face_id.removeprefix("fairface/") for f in faces)
    assert all(f.references == () and f.image.is_file() for f in faces)
    assert ds.describe()["reference_mode"] == "self"


def test_label_mapping(make_fairface):
    labels = {f.identity: f.demographics for f in FairFaceDataset(root=make_fairface()).faces()}
    assert labels["val/1.jpg"] == {"gender": "male", "skin_tone": None, "age_group": "young", "age": None,
                                   "race": "East Asian", "age_bin": "20-29"}
    assert labels["val/2.jpg"]["age_group"] == "old" and labels["val/2.jpg"]["gender"] == "female"
    assert labels["val/10.jpg"]["age_group"] is None  # 30-39 is in neither §2.2 group
    assert labels["val/3.jpg"]["age_bin"] == "more than 70"
    # skin tone is never derived from race, not even for "Black" or "White"
    assert labels["val/2.jpg"]["race"] == "Black" and labels["val/2.jpg"]["skin_tone"] is None


def test_split_limit_and_determinism(make_fairface):
    root = make_fairface()
    train = FairFaceDataset(root=root, split="train")
    assert [f.identity for f in train.faces()] == ["train/1.jpg", "train/9.jpg"]
    assert [f.identity for f in FairFaceDataset(root=root, limit=2).faces()] == ["val/1.jpg", "val/2.jpg"]
    assert list(FairFaceDataset(root=root).faces()) == list(FairFaceDataset(root=root).faces())
    d = FairFaceDataset(root=root, padding=0.25).describe()
    assert d["padding"] == 0.25 and d["split"] == "val" and d["n_faces"] == 4
    assert d["single_face_only"] is False and d["min_base_fss"] is None


def test_missing_root_and_labels(make_fairface, tmp_path):
    with pytest.raises(DatasetError, match=re.escape(str(tmp_path / "ff"))) as e:
        FairFaceDataset(root=tmp_path / "ff")
    assert "dataset.params.root=" in str(e.value) and "joojs/fairface" in str(e.value)
    root = make_fairface({"train": ()})
    with pytest.raises(DatasetError, match=re.escape(str(root / "fairface_label_val.csv"))):
        FairFaceDataset(root=root)


@pytest.mark.parametrize(
    ("row", "problem"),
    [
        ("val/5.jpg,20-29,male,White,False", "gender"),
        ("val/5.jpg,70+,Male,White,False", "age"),
        ("val/5.jpg,20-29,Male,Asian,False", "race"),
        ("val/5.jpg,20-29,Male,White,yes", "service_test"),
        ("val/5.jpg,20-29,Male,White", "cells"),
        ("val/1.jpg,20-29,Male,White,False", "twice"),
    ],
)
def test_malformed_line_is_named(make_fairface, row, problem):
    root = make_fairface()
    labels = root / "fairface_label_val.csv"
    labels.write_text(labels.read_text() + row + "\n")
    with pytest.raises(DatasetError, match=rf"fairface_label_val\.csv, line 6: .*{problem}"):
        list(FairFaceDataset(root=root).faces())


def test_bad_header_and_missing_image(make_fairface):
    root = make_fairface()
    labels = root / "fairface_label_val.csv"
    labels.write_text(labels.read_text().replace(HEADER, "file,age,gender,race"))
    with pytest.raises(DatasetError, match=r"line 1: .*service_test"):
        list(FairFaceDataset(root=root).faces())
    root = make_fairface()
    (root / "val" / "2.jpg").unlink()
    with pytest.raises(DatasetError, match=re.escape(str(root / "val" / "2.jpg"))):
        list(FairFaceDataset(root=root).faces())


@pytest.mark.parametrize("params", [{"split": "test"}, {"padding": 0.5}, {"limit": "3"}])
def test_bad_params(make_fairface, params):
    with pytest.raises(ConfigError):
        FairFaceDataset(root=make_fairface(), **params)


class TestFairFaceDatasetContract(DatasetContract):
    @pytest.fixture
    def dataset(self, make_fairface):
        return FairFaceDataset(root=make_fairface())


# -- the Hugging Face HuggingFaceM4/FairFace parquet layout ---------------------------------------------------


def test_both_published_layouts_give_the_same_labels_and_image_bytes(make_real_fairface, tmp_path):
    from tests.datasets.conftest import REAL_ROWS

    csv_ds = FairFaceDataset(root=make_real_fairface("csv"), split="train")
    hf_ds = FairFaceDataset(root=make_real_fairface("hf"), split="train", cache_dir=tmp_path / "cache")
    assert (csv_ds.describe()["layout"], hf_ds.describe()["layout"]) == ("csv", "hf")
    assert hf_ds.describe()["files"] == ["train-00000-of-00002.parquet", "train-00001-of-00002.parquet"]
    csv_faces, hf_faces = list(csv_ds.faces()), list(hf_ds.faces())
    assert [f.face_id for f in hf_faces] == [f"fairface/1.25/train/{n}" for n in range(len(REAL_ROWS))]
    assert [f.demographics for f in hf_faces] == [f.demographics for f in csv_faces]
    # ClassLabel integers mapped through their names: row 3 is Black / Male / 40-49 (index 2 / 0 / 5)
    assert hf_faces[2].demographics["race"] == "Black" and hf_faces[2].demographics["age_bin"] == "40-49"
    assert hf_faces[0].demographics == {"gender": "female", "skin_tone": None, "age_group": None, "age": None,
                                        "race": "White", "age_bin": "30-39"}
    for a, b in zip(csv_faces, hf_faces):
        assert a.image.read_bytes() == b.image.read_bytes()  # copied byte for byte, never re-encoded
    again = [f.image for f in FairFaceDataset(root=hf_ds.root, split="train", cache_dir=tmp_path / "cache").faces()]
    assert again == [f.image for f in hf_faces]  # the cache is reused


def test_hf_layout_errors_say_how_to_fix(make_real_fairface, tmp_path):
    from tests.datasets.conftest import HF_NAMES, REAL_ROWS, write_hf_parquet

    root = make_real_fairface("hf")
    with pytest.raises(DatasetError, match=r"validation-\*\.parquet.*dataset\.params\.root="):
        FairFaceDataset(root=root, split="val")  # only the train files exist
    with pytest.raises(DatasetError, match=r"0\.25"):
        FairFaceDataset(root=root, split="train", padding=0.25)
    # ClassLabel names in another order than the dataset card: refused, never silently mislabelled
    bad = tmp_path / "bad"
    swapped = {**HF_NAMES, "race": list(reversed(HF_NAMES["race"]))}
    write_hf_parquet(bad / "1.25" / "train-00000-of-00001.parquet", [(b"x", "White", "Male", "20-29", True)],
                     names=swapped)
    with pytest.raises(DatasetError, match=r"ClassLabel names of 'race'"):
        list(FairFaceDataset(root=bad, split="train").faces())
    assert len(REAL_ROWS) == FairFaceDataset(root=root, split="train").describe()["n_faces"]


def test_hf_layout_without_metadata_uses_the_card_names(tmp_path):
    import pyarrow.parquet as pq

    from tests.datasets.conftest import write_hf_parquet

    path = write_hf_parquet(tmp_path / "ff" / "1.25" / "train-00000-of-00001.parquet",
                            [(b"\xff\xd8\xff" + b"0" * 20, "Southeast Asian", "Female", "more than 70", False)])
    table = pq.read_table(path)
    pq.write_table(table.replace_schema_metadata(None), path)
    ds = FairFaceDataset(root=tmp_path / "ff", split="train", layout="hf", cache_dir=tmp_path / "c")
    (face,) = ds.faces()
    assert face.demographics["race"] == "Southeast Asian" and face.demographics["age_bin"] == "more than 70"
    assert face.image.suffix == ".jpg"


class TestFairFaceParquetContract(DatasetContract):
    @pytest.fixture
    def dataset(self, make_real_fairface, tmp_path):
        return FairFaceDataset(root=make_real_fairface("hf"), split="train", cache_dir=tmp_path / "c")
