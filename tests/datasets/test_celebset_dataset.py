from __future__ import annotations

import re
from datetime import date

import pytest
from scipy.io import loadmat

from faceedit_bench.builtin.datasets.celebset import CelebSETDataset
from faceedit_bench.builtin.datasets.imdb_wiki import age_on_july_first, matlab_date, read_mat
from faceedit_bench.errors import ConfigError, DatasetError
from faceedit_bench.testing import DatasetContract

NAN = float("nan")

# file, celeb_name, celeb_id, gender, skin, dob, photo_taken, age, age_group, split
ANN = ("Ann Light", "1", "female", "light", "1960-03-01")
BO = ("Bo Dark", "2", "male", "dark")
CSV_ROWS = [
    ("01/nm0000001_rm1_1960-3-1_1985.jpg", *ANN, "1985", "25", "young", "base"),
    ("01/nm0000001_rm2_1960-3-1_2012.jpg", *ANN, "2012", "52", "old", "base"),
    ("01/nm0000001_rm3_1960-3-1_1990.jpg", *ANN, "1990", "30", "young", "reference"),
    ("01/nm0000001_rm4_1960-3-1_1999.jpg", *ANN, "1999", "39", "other", "reference"),
    ("02/nm0000002_rm5_1950-1-1_1995.jpg", *BO, "1950-01-01", "1995", "45", "other", "base"),
    ("02/nm0000002_rm6_1950-1-1_2001.jpg", *BO, "", "", "", "", "reference"),
    ("03/nm0000003_rm7_1970-1-1_2000.jpg", "Cy Solo", "3", "", "", "", "", "", "", "base"),
]


def test_csv_bases_references_and_labels(make_celebset_csv):
    root = make_celebset_csv(CSV_ROWS)
    ds = CelebSETDataset(root=root)
    faces = list(ds.faces())
    assert [f.face_id for f in faces] == ["celebset/" + CSV_ROWS[i][0] for i in (0, 1, 4, 6)]
    ann, ann2, bo, cy = faces
    assert ann.identity == "Ann Light" and ann.references == (root / CSV_ROWS[2][0], root / CSV_ROWS[3][0])
    assert ann.demographics == {"gender": "female", "skin_tone": "light", "age_group": "young", "age": "25"}
    assert ann2.demographics["age_group"] == "old"
    assert bo.demographics == {"gender": "male", "skin_tone": "dark", "age_group": None, "age": "45"}
    assert cy.references == () and cy.demographics["gender"] is None
    assert not {f.image for f in faces} & {r for f in faces for r in f.references}
    d = ds.describe()
    assert d["source"] == "csv" and d["reconstruction"] is True and "reconstruction" in d["format"]
    assert d["reference_mode"] == "mixed" and d["n_self_reference"] == 1 and d["n_identities"] == 3
    assert d["min_base_fss"] == 0.85 and ds.min_base_fss == 0.85 and ds.single_face_only is True


def test_csv_caps_allow_list_limit_determinism(make_celebset_csv, tmp_path):
    root = make_celebset_csv(CSV_ROWS)
    ds = CelebSETDataset(root=root, bases_per_identity=1, max_references=1)
    faces = list(ds.faces())
    assert [f.identity for f in faces] == ["Ann Light", "Bo Dark", "Cy Solo"]
    assert faces[0].references == (root / CSV_ROWS[2][0],)
    assert [f.identity for f in CelebSETDataset(root=root, allow_list=["Bo Dark"]).faces()] == ["Bo Dark"]
    names = tmp_path / "names.txt"
    names.write_text("Cy Solo\n\nBo Dark\n")
    from_file = CelebSETDataset(root=root, allow_list=names)
    assert [f.identity for f in from_file.faces()] == ["Bo Dark", "Cy Solo"]
    assert len(list(CelebSETDataset(root=root, limit=2).faces())) == 2
    assert list(CelebSETDataset(root=root).faces()) == list(CelebSETDataset(root=str(root)).faces())


def test_csv_age_group_is_derived_from_age_when_empty(make_celebset_csv):
    row = list(CSV_ROWS[6])
    row[7] = "58"
    (face,) = CelebSETDataset(root=make_celebset_csv([row])).faces()
    assert face.demographics["age_group"] == "old"


@pytest.mark.parametrize(
    ("column", "value", "problem"),
    [(9, "test", "split"), (3, "m", "gender"), (4, "brown", "skin"), (7, "2x", "age"),
     (8, "old", "contradicts"), (5, "1960/03/01", "dob"), (6, "nineteen", "photo_taken")],
)
def test_csv_malformed_line_is_named(make_celebset_csv, column, value, problem):
    row = list(CSV_ROWS[0])
    row[column] = value
    root = make_celebset_csv([*CSV_ROWS[1:], row])
    with pytest.raises(DatasetError, match=rf"celebset\.csv, line 8: .*{problem}"):
        list(CelebSETDataset(root=root).faces())


def test_csv_duplicate_and_missing(make_celebset_csv, tmp_path):
    root = make_celebset_csv([*CSV_ROWS, CSV_ROWS[2][:9] + ("base",)])
    with pytest.raises(DatasetError, match="line 9: .*listed twice"):
        list(CelebSETDataset(root=root).faces())
    with pytest.raises(DatasetError, match=re.escape(str(tmp_path / "gone"))) as e:
        CelebSETDataset(root=tmp_path / "gone")
    assert "dataset.params.root=" in str(e.value)
    root = make_celebset_csv(CSV_ROWS)
    (root / "celebset.csv").unlink()
    with pytest.raises(DatasetError, match=re.escape(str(root / "celebset.csv"))) as e:
        CelebSETDataset(root=root)
    assert "dataset.params.mat=imdb.mat" in str(e.value)
    root = make_celebset_csv(CSV_ROWS)
    (root / CSV_ROWS[3][0]).unlink()
    with pytest.raises(DatasetError, match="rm4"):
        list(CelebSETDataset(root=root).faces())


# -- IMDB-WIKI .mat input --------------------------------------------------------------


def test_matlab_dates_and_july_first_ages():
    # the first imdb.mat entry: dob 693726 and path 01/nm0000001_rm124825600_1899-5-10_1968.jpg
    assert matlab_date(693726.0) == date(1899, 5, 10)
    assert matlab_date(NAN) is None and matlab_date(0.0) is None
    born = date(1980, 8, 15).toordinal() + 366
    assert age_on_july_first(born, 2010) == 29  # birthday after 1 July: not yet 30
    assert age_on_july_first(date(1980, 6, 15).toordinal() + 366, 2010) == 30
    assert age_on_july_first(date(1980, 7, 1).toordinal() + 366, 2010) == 30
    assert age_on_july_first(born, 1970) is None  # photo before birth: a metadata error


def test_mat_writer_matches_the_real_layout(tmp_path, write_imdb_mat, imdb_entry):
    entries = [imdb_entry("01/nm0000001_rm1_1899-5-10_1968.jpg", "Fred Astaire"), imdb_entry("02/x.jpg", "")]
    path = write_imdb_mat(tmp_path / "imdb.mat", entries)
    m = loadmat(str(path))["imdb"]
    assert m.shape == (1, 1)
    s = m[0, 0]
    assert s.dtype.names == (
        "dob", "photo_taken", "full_path", "gender", "name", "face_location", "face_score",
        "second_face_score", "celeb_names", "celeb_id",
    )
    assert s["full_path"][0][0][0] == "01/nm0000001_rm1_1899-5-10_1968.jpg"
    assert s["name"][0][1].size == 0  # an empty name cell, as in the real file
    assert s["dob"].shape == (1, 2) and s["face_location"][0][0].shape == (1, 4)
    (fred, empty) = read_mat(path)
    assert fred.name == "Fred Astaire" and fred.gender == "male" and fred.age == 25 and empty.name is None


def _imdb_entries(e):
    return [
        e("10/nm0000010_rm3_1980-3-1_2005.jpg", "Ann Light", gender=0.0),
        e("10/nm0000010_rm1_1980-3-1_2005.jpg", "Ann Light", gender=0.0),
        e("10/nm0000010_rm2_1980-3-1_2035.jpg", "Ann Light", gender=0.0, photo_taken=2035),
        e("10/nm0000010_rm4_1980-3-1_2005.jpg", "Ann Light", gender=0.0, face_score=float("-inf")),  # no face
        e("10/nm0000010_rm5_1980-3-1_2005.jpg", "Ann Light", gender=0.0, second_face_score=1.5),  # two faces
        e("20/nm0000020_rm6_1970-9-9_1990.jpg", "Bo Dark", dob=date(1970, 9, 9), photo_taken=1990,
          gender=NAN),
        e("20/nm0000020_rm7_1970-9-9_1995.jpg", "Bo Dark", dob=None),
        e("30/nm0000030_rm8_1990-1-1_2010.jpg", "Cy Unlabelled"),
        e("30/nm0000030_rm9_1990-1-1_2011.jpg", "Cy Unlabelled"),
        e("40/nm0000040_rm10_1990-1-1_2010.jpg", "Di Solo"),  # one usable image: no reference possible
        e("40/x.jpg", ""),
    ]


SKINS = [("Ann Light", "light"), ("Bo Dark", "dark"), ("Di Solo", "")]


def test_mat_single_face_filter_split_and_labels(make_imdb, imdb_entry):
    root = make_imdb(_imdb_entries(imdb_entry), SKINS)
    ds = CelebSETDataset(root=root, mat="imdb.mat", skin_tones="skin.csv", bases_per_identity=2)
    faces = list(ds.faces())
    assert [f.face_id for f in faces] == ["celebset/10/nm0000010_rm1_1980-3-1_2005.jpg",
                                           "celebset/10/nm0000010_rm2_1980-3-1_2035.jpg",
                                           "celebset/20/nm0000020_rm6_1970-9-9_1990.jpg"]
    ann1, ann2, bo = faces
    # rm4 (no face) and rm5 (second face) are dropped; the rest of Ann's images are references
    assert ann1.references == (root / "10/nm0000010_rm3_1980-3-1_2005.jpg",) == ann2.references
    assert ann1.demographics == {"gender": "female", "skin_tone": "light", "age_group": "young", "age": "25"}
    assert ann2.demographics["age"] == "55" and ann2.demographics["age_group"] == "old"
    assert bo.references == (root / "20/nm0000020_rm7_1970-9-9_1995.jpg",)  # 1 image kept for reference
    assert bo.demographics == {"gender": None, "skin_tone": "dark", "age_group": None, "age": "19"}
    d = ds.describe()
    assert d["source"] == "mat" and d["reconstruction"] and d["reference_mode"] == "other_images"
    assert d["n_identities"] == 2 and d["bases_per_identity"] == 2  # Cy has no skin-tone row, Di no reference


def test_mat_defaults_caps_allow_list_and_wiki(make_imdb, imdb_entry, tmp_path):
    root = make_imdb(_imdb_entries(imdb_entry), SKINS)
    ds = CelebSETDataset(root=root, mat="imdb.mat", skin_tones="skin.csv")
    assert ds.bases_per_identity == 10 and len(list(ds.faces())) == 3  # every image but one reference
    ds = CelebSETDataset(root=root, mat=root / "imdb.mat", skin_tones=root / "skin.csv", bases_per_identity=1,
                         max_references=1, allow_list=["Ann Light"], min_face_score=2.5)
    (ann,) = ds.faces()
    assert ann.image.name == "nm0000010_rm1_1980-3-1_2005.jpg" and len(ann.references) == 1
    again = CelebSETDataset(root=root, mat="imdb.mat", skin_tones="skin.csv", bases_per_identity=1,
                            max_references=1, allow_list=["Ann Light"], min_face_score=2.5)
    assert list(ds.faces()) == list(again.faces()) and ds.describe() == again.describe()
    strict = CelebSETDataset(root=root, mat="imdb.mat", skin_tones="skin.csv", min_face_score=3.0)
    with pytest.raises(DatasetError, match="lists no base image.*0 faces.*min_face_score"):
        list(strict.faces())  # no image passes: refused, not a run of 0 faces
    wiki = make_imdb(_imdb_entries(imdb_entry)[:3], SKINS, key="wiki")
    assert len(list(CelebSETDataset(root=wiki, mat="wiki.mat", skin_tones="skin.csv").faces())) == 2


def test_mat_duplicate_entry_is_never_its_own_reference(make_imdb, imdb_entry):
    e = imdb_entry("10/a.jpg", "Ann Light")
    root = make_imdb([e, e, imdb_entry("10/b.jpg", "Ann Light")], SKINS)
    (face,) = CelebSETDataset(root=root, mat="imdb.mat", skin_tones="skin.csv", bases_per_identity=1).faces()
    assert face.image == root / "10/a.jpg" and face.references == (root / "10/b.jpg",)


def test_mat_errors(make_imdb, imdb_entry, tmp_path):
    root = make_imdb(_imdb_entries(imdb_entry), SKINS)
    with pytest.raises(DatasetError, match="skin_tones is required"):
        CelebSETDataset(root=root, mat="imdb.mat")
    with pytest.raises(DatasetError, match=re.escape(str(root / "wiki.mat"))):
        CelebSETDataset(root=root, mat="wiki.mat", skin_tones="skin.csv")
    with pytest.raises(DatasetError, match="allow_list names without a row .*Cy Unlabelled"):
        CelebSETDataset(
            root=root, mat="imdb.mat", skin_tones="skin.csv", allow_list=["Cy Unlabelled"]
        ).describe()
    (root / "skin.csv").write_text("name,skin_tone\nAnn Light,olive\n")
    with pytest.raises(DatasetError, match=r"skin\.csv, line 2: skin_tone 'olive'"):
        list(CelebSETDataset(root=root, mat="imdb.mat", skin_tones="skin.csv").faces())
    (root / "skin.csv").write_text("name,skin_tone\nAnn Light,light\n")
    (root / "junk.mat").write_bytes(b"not a mat file")
    with pytest.raises(DatasetError, match="junk.mat is not a readable IMDB-WIKI .mat"):
        list(CelebSETDataset(root=root, mat="junk.mat", skin_tones="skin.csv").faces())
    from scipy.io import savemat

    savemat(str(root / "other.mat"), {"other": {"x": 1}})
    with pytest.raises(DatasetError, match="no 'imdb' or 'wiki' struct"):
        list(CelebSETDataset(root=root, mat="other.mat", skin_tones="skin.csv").faces())
    savemat(str(root / "partial.mat"), {"imdb": {"dob": [[1.0]], "full_path": [["a"]]}})
    with pytest.raises(DatasetError, match="lacks field"):
        list(CelebSETDataset(root=root, mat="partial.mat", skin_tones="skin.csv").faces())


@pytest.mark.parametrize("params", [{"bases_per_identity": 0}, {"limit": -2}, {"min_base_fss": -0.1}])
def test_bad_params(make_celebset_csv, params):
    with pytest.raises(ConfigError):
        CelebSETDataset(root=make_celebset_csv(CSV_ROWS), **params)


class TestCelebSETDatasetContract(DatasetContract):
    @pytest.fixture(params=["csv", "imdb.mat"])
    def dataset(self, request, make_celebset_csv, make_imdb, imdb_entry):
        if request.param == "csv":
            return CelebSETDataset(root=make_celebset_csv(CSV_ROWS))
        return CelebSETDataset(root=make_imdb(_imdb_entries(imdb_entry), SKINS), mat="imdb.mat", skin_tones="skin.csv")
