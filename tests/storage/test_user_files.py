"""read_utf8: the line, column and byte of the first non-UTF-8 byte, and how to fix it."""

from __future__ import annotations

import pytest

from faceedit_bench.builtin.datasets.celebset import CelebSETDataset
from faceedit_bench.errors import DatasetError, FaceEditBenchError
from faceedit_bench.storage.user_files import read_utf8


def test_utf8_with_or_without_bom(tmp_path):
    path = tmp_path / "a.csv"
    path.write_bytes("\ufeffname\nZoë\n".encode())
    assert read_utf8(path, what="CSV file") == "name\nZoë\n"


def test_latin1_names_line_and_column(tmp_path):
    path = tmp_path / "names.txt"
    path.write_bytes("Ann\nBob\nJos\u00e9 Garc\u00eda\n".encode("latin-1"))
    with pytest.raises(FaceEditBenchError, match=r"names.txt, line 3, column 4: byte 0xe9 is not UTF-8; "
                                                 r"the list must be UTF-8 text. Re-save it as UTF-8"):
        read_utf8(path, what="list")


def test_unreadable_file(tmp_path):
    with pytest.raises(DatasetError, match="cannot read list"):
        read_utf8(tmp_path / "missing.txt", what="list", error=DatasetError)


def test_celebset_allow_list_file_in_latin1(tmp_path):
    (tmp_path / "celebset.csv").write_text("file,celeb_name,celeb_id,gender,skin,dob,photo_taken,age,age_group,split\n")
    (tmp_path / "names.txt").write_bytes("Pen\u00e9lope Cruz\n".encode("latin-1"))
    with pytest.raises(DatasetError, match="names.txt, line 1, column 4: byte 0xe9 is not UTF-8; the celebrity "
                                           "allow-list must be UTF-8"):
        CelebSETDataset(root=tmp_path, allow_list="names.txt")
