from __future__ import annotations

import re

import pytest

from faceedit_bench.builtin.datasets.folder import FolderDataset
from faceedit_bench.errors import ConfigError, DatasetError
from faceedit_bench.testing import DatasetContract

ROWS = [
    ("alice/portrait.jpg", "alice", "base", "female", "light", "27"),
    ("alice/holiday.jpg", "alice", "reference", "female", "light", ""),
    ("alice/beach.png", "alice", "reference", "", "", ""),
    ("bob/id.png", "bob", "base", "male", "", ""),
    ("carol/10.jpg", "carol", "base", "female", "dark", "55"),
    ("carol/9.jpg", "carol", "base", "female", "dark", "54.0"),
    ("carol/ref.jpg", "carol", "reference", "female", "dark", ""),
]


def test_bases_references_and_self_reference(make_folder):
    root = make_folder(ROWS)
    ds = FolderDataset(root=root)
    faces = list(ds.faces())
    assert [f.face_id for f in faces] == [  # natural file order
        "folder/alice/portrait.jpg", "folder/bob/id.png", "folder/carol/9.jpg", "folder/carol/10.jpg",
    ]
    alice, bob = faces[0], faces[1]
    assert alice.image == root / "alice/portrait.jpg"
    assert alice.references == (root / "alice/beach.png", root / "alice/holiday.jpg")
    assert bob.references == ()  # no reference row: FSS against itself
    assert faces[2].references == faces[3].references == (root / "carol/ref.jpg",)
    bases = {f.image for f in faces}
    assert not bases & {r for f in faces for r in f.references}
    d = ds.describe()
    assert d["reference_mode"] == "mixed" and d["n_self_reference"] == 1
    assert d["n_faces"] == 4 and d["n_identities"] == 3 and d["single_face_only"] is True


def test_reference_modes(make_folder):
    only_refs = [r for r in ROWS if r[1] != "bob"]
    assert FolderDataset(root=make_folder(only_refs)).describe()["reference_mode"] == "other_images"
    no_refs = [r for r in ROWS if r[2] == "base"]
    d = FolderDataset(root=make_folder(no_refs)).describe()
    assert d["reference_mode"] == "self" and d["n_self_reference"] == 4


def test_labels(make_folder):
    faces = {f.face_id: f.demographics for f in FolderDataset(root=make_folder(ROWS)).faces()}
    assert faces["folder/alice/portrait.jpg"] == {
        "gender": "female", "skin_tone": "light", "age_group": "young", "age": "27",
    }
    assert faces["folder/bob/id.png"] == {"gender": "male", "skin_tone": None, "age_group": None, "age": None}
    assert faces["folder/carol/9.jpg"]["age"] == "54" and faces["folder/carol/9.jpg"]["age_group"] == "old"


@pytest.mark.parametrize(
    ("age", "group"),
    [("19", None), ("20", "young"), ("30", "young"), ("31", None), ("49", None), ("50", "old"), ("60", "old"),
     ("61", None), ("30.9", "young")],
)
def test_age_groups_follow_methodology(make_folder, age, group):
    root = make_folder([("a.jpg", "a", "base", "", "", age)])
    (face,) = FolderDataset(root=root).faces()
    assert face.demographics["age_group"] == group


def test_extra_columns_become_labels(make_folder):
    header = ("file", "identity", "role", "gender", "skin_tone", "age", "race")
    root = make_folder([("a.jpg", "a", "base", "", "", "", "Indian"), ("b.jpg", "b", "base", "", "", "", "")],
                       header=header)
    faces = list(FolderDataset(root=root).faces())
    assert faces[0].demographics["race"] == "Indian" and faces[1].demographics["race"] is None


def test_manifest_elsewhere_name_limit_and_caps(make_folder):
    root = make_folder(ROWS)
    (root / "manifest.csv").rename(root / "list.csv")
    ds = FolderDataset(root=root, manifest="list.csv", name="mine", limit=2, max_references=1)
    faces = list(ds.faces())
    assert [f.face_id for f in faces] == ["mine/alice/portrait.jpg", "mine/bob/id.png"]
    assert faces[0].references == (root / "alice/beach.png",)
    assert list(ds.faces()) == list(FolderDataset(root=root, manifest=root / "list.csv", name="mine", limit=2,
                                                  max_references=1).faces())
    assert ds.describe()["name"] == "mine"


def test_min_base_fss_and_single_face_only_are_exposed(make_folder):
    ds = FolderDataset(root=make_folder(ROWS), min_base_fss=0.9, single_face_only=False)
    assert ds.min_base_fss == 0.9 and ds.single_face_only is False
    assert ds.describe()["min_base_fss"] == 0.9


def test_missing_root_and_manifest(make_folder, tmp_path):
    with pytest.raises(DatasetError, match=re.escape(str(tmp_path / "none"))) as e:
        FolderDataset(root=tmp_path / "none")
    assert "dataset.params.root=" in str(e.value)
    root = make_folder(ROWS)
    (root / "manifest.csv").unlink()
    with pytest.raises(DatasetError, match=re.escape(str(root / "manifest.csv"))):
        FolderDataset(root=root)


@pytest.mark.parametrize(
    ("row", "problem"),
    [
        (("x.jpg", "x", "edit", "", "", ""), "role"),
        (("x.jpg", "x", "base", "M", "", ""), "gender"),
        (("x.jpg", "x", "base", "", "medium", ""), "skin_tone"),
        (("x.jpg", "x", "base", "", "", "twenty"), "age"),
        (("x.jpg", "x", "base", "", "", "-3"), "age"),
        (("x.jpg", "", "base", "", "", ""), "identity"),
        (("alice/portrait.jpg", "alice", "reference", "", "", ""), "already listed on line 2"),
        (("./alice/portrait.jpg", "alice", "reference", "", "", ""), "already listed on line 2"),
    ],
)
def test_malformed_line_is_named(make_folder, row, problem):
    root = make_folder([*ROWS, row])
    with pytest.raises(DatasetError, match=rf"manifest\.csv, line 9: .*{re.escape(problem)}"):
        list(FolderDataset(root=root).faces())


def test_missing_image_and_bad_header(make_folder):
    root = make_folder(ROWS)
    (root / "bob" / "id.png").unlink()
    with pytest.raises(DatasetError, match=r"line 5: image .*bob/id\.png does not exist"):
        list(FolderDataset(root=root).faces())
    root = make_folder([("a.jpg", "a", "base", "")], header=("file", "identity", "role", "gender"))
    with pytest.raises(DatasetError, match=r"line 1: .*skin_tone, age"):
        list(FolderDataset(root=root).faces())


@pytest.mark.parametrize("params", [{"limit": -1}, {"max_references": 0}, {"min_base_fss": "high"}])
def test_bad_params(make_folder, params):
    with pytest.raises(ConfigError):
        FolderDataset(root=make_folder(ROWS), **params)


class TestFolderDatasetContract(DatasetContract):
    @pytest.fixture
    def dataset(self, make_folder):
        return FolderDataset(root=make_folder(ROWS))
