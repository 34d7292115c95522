from __future__ import annotations

import re

import pytest

from faceedit_bench.builtin.datasets.celeba import CelebADataset
from faceedit_bench.errors import ConfigError, DatasetError
from faceedit_bench.testing import DatasetContract


def ids(faces):
    return [f.face_id for f in faces]


def names(paths):
    return [p.name for p in paths]


def test_fixture_is_the_official_layout(make_celeba, celeba_attributes):
    root = make_celeba()
    lines = (root / "Anno" / "list_attr_celeba.txt").read_text().splitlines()
    assert lines[0] == "9"
    assert lines[1].split() == list(celeba_attributes)
    assert re.fullmatch(r"000001\.jpg( (-1| 1)){40}", lines[2])  # aligned columns: "-1  1  1 -1"
    assert "  1" in lines[2]
    assert (root / "Anno" / "identity_CelebA.txt").read_text().splitlines()[0] == "000001.jpg 1"
    assert (root / "Eval" / "list_eval_partition.txt").read_text().splitlines()[0] == "000001.jpg 0"


def test_default_selection_test_partition_one_base_per_identity(make_celeba):
    faces = list(CelebADataset(root=make_celeba()).faces())
    # identity 3 has a single image, so no reference exists and it is skipped
    assert ids(faces) == ["celeba/000003.jpg", "celeba/000005.jpg", "celeba/000008.jpg"]
    by_id = {f.identity: f for f in faces}
    assert names(by_id["1"].references) == ["000001.jpg", "000004.jpg", "000009.jpg"]  # any partition
    assert names(by_id["2"].references) == ["000002.jpg"]
    assert names(by_id["4"].references) == ["000007.jpg"]
    assert by_id["1"].image.parent.name == "img_align_celeba" and by_id["1"].image.is_file()


def test_labels_from_male_and_young(make_celeba):
    faces = {f.face_id: f.demographics for f in CelebADataset(root=make_celeba(), partition="all",
                                                               bases_per_identity=9).faces()}
    assert faces["celeba/000003.jpg"] == {
        "gender": "male", "skin_tone": None, "age_group": "young", "age": None,
    }
    assert faces["celeba/000004.jpg"]["age_group"] == "old"
    assert faces["celeba/000002.jpg"]["gender"] == "female"


def test_more_bases_keep_one_reference_and_references_never_are_bases(make_celeba):
    faces = list(CelebADataset(root=make_celeba(), bases_per_identity=2).faces())
    assert ids(faces) == ["celeba/000003.jpg", "celeba/000004.jpg", "celeba/000005.jpg", "celeba/000008.jpg"]
    assert names(faces[0].references) == ["000001.jpg", "000009.jpg"]
    faces = list(CelebADataset(root=make_celeba(), partition="all", bases_per_identity=10).faces())
    bases = {f.image for f in faces}
    assert all(f.references for f in faces)  # at least one image always left for references
    assert not bases & {r for f in faces for r in f.references}
    assert all(f.image not in f.references for f in faces)


def test_partition_and_caps(make_celeba):
    root = make_celeba()
    val = CelebADataset(root=root, partition="val")
    assert ids(val.faces()) == ["celeba/000007.jpg", "celeba/000009.jpg"]
    assert ids(CelebADataset(root=root, partition="all").faces())[0] == "celeba/000001.jpg"
    one = list(CelebADataset(root=root, max_references=1).faces())
    assert [len(f.references) for f in one] == [1, 1, 1]
    assert ids(CelebADataset(root=root, limit=2).faces()) == ["celeba/000003.jpg", "celeba/000005.jpg"]
    assert ids(CelebADataset(root=root, limit=0).faces()) == []


def test_deterministic_and_described(make_celeba):
    root = make_celeba()
    a, b = CelebADataset(root=root), CelebADataset(root=str(root))
    assert list(a.faces()) == list(b.faces())
    d = a.describe()
    assert d == b.describe()
    assert d["name"] == "celeba" and d["partition"] == "test" and d["reference_mode"] == "other_images"
    assert d["min_base_fss"] == 0.95 and a.min_base_fss == 0.95 and a.single_face_only is True
    assert d["n_faces"] == 3 and d["n_identities"] == 3


def test_missing_root_and_files_say_where_to_get_them(make_celeba, tmp_path):
    missing = tmp_path / "nowhere"
    with pytest.raises(DatasetError, match=re.escape(str(missing))) as e:
        CelebADataset(root=missing)
    assert "dataset.params.root=" in str(e.value) and "mmlab.ie.cuhk.edu.hk" in str(e.value)
    root = make_celeba()
    (root / "Eval" / "list_eval_partition.txt").unlink()
    with pytest.raises(DatasetError, match="list_eval_partition.txt"):
        CelebADataset(root=root)


@pytest.mark.parametrize(
    ("file", "lineno", "damage"),
    [
        ("Anno/list_attr_celeba.txt", 4, lambda s: s.replace("000002.jpg -1", "000002.jpg", 1)),  # 39 values
        ("Anno/list_attr_celeba.txt", 5, lambda s: re.sub(r"^(000003\.jpg +)-?1", r"\g<1>0", s, flags=re.M)),
        ("Anno/list_attr_celeba.txt", 2, lambda s: s.replace(" Young", "", 1)),
        ("Anno/list_attr_celeba.txt", 1, lambda s: "x" + s),
        ("Anno/list_attr_celeba.txt", 1, lambda s: "".join(s.splitlines(keepends=True)[:-1])),  # truncated
        ("Anno/identity_CelebA.txt", 3, lambda s: s.replace("000003.jpg 1", "000003.jpg one", 1)),
        ("Eval/list_eval_partition.txt", 2, lambda s: s.replace("000002.jpg 0", "000002.jpg 3", 1)),
    ],
)
def test_malformed_lines_name_file_and_line(make_celeba, file, lineno, damage):
    root = make_celeba()
    path = root / file
    text = path.read_text()
    path.write_text(damage(text))
    assert path.read_text() != text
    with pytest.raises(DatasetError, match=rf"{re.escape(str(path))}, line {lineno}:"):
        list(CelebADataset(root=root).faces())


def test_image_missing_from_attributes_or_disk(make_celeba):
    root = make_celeba()
    attr = root / "Anno" / "list_attr_celeba.txt"
    lines = attr.read_text().splitlines(keepends=True)
    attr.write_text("8\n" + "".join(l for l in lines[1:] if not l.startswith("000003.jpg")))
    with pytest.raises(DatasetError, match="000003.jpg"):
        list(CelebADataset(root=root).faces())


def test_missing_image_file_is_named(make_celeba):
    root = make_celeba()
    (root / "Img" / "img_align_celeba" / "000004.jpg").unlink()
    faces = CelebADataset(root=root).faces()
    with pytest.raises(DatasetError, match="000004.jpg"):
        list(faces)


@pytest.mark.parametrize(
    "params", [{"partition": "dev"}, {"bases_per_identity": 0}, {"limit": -1}, {"max_references": 0},
               {"min_base_fss": 1.5}],
)
def test_bad_params(make_celeba, params):
    with pytest.raises(ConfigError):
        CelebADataset(root=make_celeba(), **params)


class TestCelebADatasetContract(DatasetContract):
    @pytest.fixture(params=["test", "all"])
    def dataset(self, request, make_celeba):
        return CelebADataset(root=make_celeba(), partition=request.param)
