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
