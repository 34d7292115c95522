"""Writers of tiny datasets in the EXACT official on-disk formats (METHODOLOGY §6.1-6.4).

Each fixture returns a function, so a test can write the default layout or its own rows
(and then damage a file to test an error path).
"""

from __future__ import annotations

import csv
from collections.abc import Callable, Sequence
from datetime import date
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from PIL import Image

#: The 40 CelebA attribute names in the official order (§6.1).
CELEBA_ATTRIBUTES = (
    "5_o_Clock_Shadow Arched_Eyebrows Attractive Bags_Under_Eyes Bald Bangs Big_Lips Big_Nose Black_Hair "
    "Blond_Hair Blurry Brown_Hair Bushy_Eyebrows Chubby Double_Chin Eyeglasses Goatee Gray_Hair Heavy_Makeup "
    "High_Cheekbones Male Mouth_Slightly_Open Mustache Narrow_Eyes No_Beard Oval_Face Pale_Skin Pointy_Nose "
    "Receding_Hairline Rosy_Cheeks Sideburns Smiling Straight_Hair Wavy_Hair Wearing_Earrings Wearing_Hat "
    "Wearing_Lipstick Wearing_Necklace Wearing_Necktie Young"
).split()
assert len(CELEBA_ATTRIBUTES) == 40

# (file, identity, partition, male, young); identity 3 has a single image (no reference
# possible), identity 1 spans all partitions.
CELEBA_ROWS = (
    ("000001.jpg", 1, 0, True, True),
    ("000002.jpg", 2, 0, False, True),
    ("000003.jpg", 1, 2, True, True),
    ("000004.jpg", 1, 2, True, False),
    ("000005.jpg", 2, 2, False, False),
    ("000006.jpg", 3, 2, True, True),
    ("000007.jpg", 4, 1, False, True),
    ("000008.jpg", 4, 2, False, True),
    ("000009.jpg", 1, 1, True, True),
)

FAIRFACE_ROWS = {
    "val": (
        ("val/1.jpg", "20-29", "Male", "East Asian", "False"),
        ("val/2.jpg", "50-59", "Female", "Black", "True"),
        ("val/10.jpg", "30-39", "Female", "Latino_Hispanic", "False"),
        ("val/3.jpg", "more than 70", "Male", "Middle Eastern", "True"),
    ),
    "train": (
        ("train/9.jpg", "10-19", "Male", "White", "True"),  # the §6.2 example row
        ("train/1.jpg", "0-2", "Female", "Indian", "False"),
    ),
}


def write_image(path: Path, seed: int = 0) -> Path:
    """A tiny real image (JPEG or PNG by suffix) with seed-dependent pixels."""
    path.parent.mkdir(parents=True, exist_ok=True)
    rgb = np.random.default_rng(seed).integers(0, 256, size=(8, 8, 3), dtype=np.uint8)
    Image.fromarray(rgb).save(path)
    return path


def _fresh(path: Path) -> Path:
    """``path``, or ``path2``, ``path3``... so a test can write several datasets."""
    n, candidate = 1, path
    while candidate.exists():
        n += 1
        candidate = path.with_name(f"{path.name}{n}")
    return candidate


def write_csv(path: Path, header: Sequence[str], rows: Sequence[Sequence[Any]]) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("w", newline="", encoding="utf-8") as fh:
        w = csv.writer(fh)
        w.writerow(header)
        w.writerows(rows)
    return path


@pytest.fixture
def make_celeba(tmp_path: Path) -> Callable[..., Path]:
    """CelebA: aligned-column attribute file, identity and partition files, JPEGs."""

    def make(rows: Sequence[tuple[str, int, int, bool, bool]] = CELEBA_ROWS, images: bool = True) -> Path:
        root = _fresh(tmp_path / "celeba")
        (root / "Anno").mkdir(parents=True)
        (root / "Eval").mkdir()
        (root / "Img" / "img_align_celeba").mkdir(parents=True)
        i_male, i_young = CELEBA_ATTRIBUTES.index("Male"), CELEBA_ATTRIBUTES.index("Young")
        # the official names line ends in a space
        lines = [f"{len(rows)}\n", " ".join(CELEBA_ATTRIBUTES) + " \n"]
        for n, (file, _, _, male, young) in enumerate(rows):
            values = [1 if (n + j) % 3 == 0 else -1 for j in range(40)]  # arbitrary other attributes
            values[i_male], values[i_young] = (1 if male else -1), (1 if young else -1)
            # official alignment: each value right-aligned in 2 chars after one space ("-1  1  1 -1")
            lines.append(file + " " + " ".join(f"{v:2d}" for v in values) + "\n")
        (root / "Anno" / "list_attr_celeba.txt").write_text("".join(lines))
        (root / "Anno" / "identity_CelebA.txt").write_text("".join(f"{r[0]} {r[1]}\n" for r in rows))
        (root / "Eval" / "list_eval_partition.txt").write_text("".join(f"{r[0]} {r[2]}\n" for r in rows))
        if images:
            for n, row in enumerate(rows):
                write_image(root / "Img" / "img_align_celeba" / row[0], n)
        return root

    return make


@pytest.fixture
def make_fairface(tmp_path: Path) -> Callable[..., Path]:
    """FairFace: ``fairface_label_{train,val}.csv`` and ``train/N.jpg`` / ``val/N.jpg``."""

    def make(rows: dict[str, Sequence[tuple[str, ...]]] = FAIRFACE_ROWS) -> Path:
        root = _fresh(tmp_path / "fairface")
        for split, split_rows in rows.items():
            header = ("file", "age", "gender", "race", "service_test")
            write_csv(root / f"fairface_label_{split}.csv", header, split_rows)
            for n, row in enumerate(split_rows):
                write_image(root / row[0], n)
        return root

    return make


@pytest.fixture
def make_folder(tmp_path: Path) -> Callable[..., Path]:
    """A ``folder`` dataset: manifest.csv plus the images it lists."""

    def make(rows: Sequence[Sequence[str]], header: Sequence[str] = ("file", "identity", "role", "gender",
                                                                     "skin_tone", "age")) -> Path:
        root = _fresh(tmp_path / "myfaces")
        write_csv(root / "manifest.csv", header, rows)
        for n, row in enumerate(rows):
            write_image(root / row[0], n)
        return root

    return make


CELEBSET_HEADER = (
    "file", "celeb_name", "celeb_id", "gender", "skin", "dob", "photo_taken", "age", "age_group", "split",
)


@pytest.fixture
def make_celebset_csv(tmp_path: Path) -> Callable[..., Path]:
    """The §6.4 reconstruction CSV next to IMDB-WIKI-style crop paths."""

    def make(rows: Sequence[Sequence[str]]) -> Path:
        root = _fresh(tmp_path / "imdb_crop")
        write_csv(root / "celebset.csv", CELEBSET_HEADER, rows)
        for n, row in enumerate(rows):
            write_image(root / row[0], n)
        return root

    return make


def matlab_datenum(d: date) -> float:
    """MATLAB ``datenum`` of a date: days from year 0 (inverse of the loader's conversion)."""
    return float(d.toordinal() + 366)


def _cells(values: Sequence[Any]) -> np.ndarray:
    out = np.empty((1, len(values)), dtype=object)  # 1xN cell array
    for i, v in enumerate(values):
        out[0, i] = v
    return out


def write_imdb_mat(path: Path, entries: Sequence[dict[str, Any]], key: str = "imdb") -> Path:
    """An IMDB-WIKI metadata file with the real struct layout.

    Each entry has ``full_path``, ``name``, ``dob`` (a date or None), ``photo_taken``,
    ``gender`` (1, 0 or nan), ``face_score`` and ``second_face_score``. Field order,
    1xN shapes and dtypes follow the real ``imdb.mat``; ``wiki.mat`` has no celeb fields.
    """
    from scipy.io import savemat

    names = sorted({e["name"] for e in entries if e["name"]})
    struct: dict[str, Any] = {
        "dob": np.array([[matlab_datenum(e["dob"]) if e["dob"] else 0.0 for e in entries]]),
        "photo_taken": np.array([[e["photo_taken"] for e in entries]], dtype=np.uint16),
        "full_path": _cells([e["full_path"] for e in entries]),
        "gender": np.array([[e["gender"] for e in entries]], dtype=float),
        "name": _cells([e["name"] for e in entries]),  # "" is saved as an empty cell, as in the real file
        "face_location": _cells([np.array([[10.0, 12.0, 90.0, 100.0]]) for _ in entries]),
        "face_score": np.array([[e["face_score"] for e in entries]], dtype=float),
        "second_face_score": np.array([[e["second_face_score"] for e in entries]], dtype=float),
    }
    if key == "imdb":
        struct["celeb_names"] = _cells(names)
        struct["celeb_id"] = np.array([[names.index(e["name"]) + 1 if e["name"] else 0 for e in entries]],
                                      dtype=np.uint16)
    path.parent.mkdir(parents=True, exist_ok=True)
    savemat(str(path), {key: struct})
    return path


def imdb_entry(
    full_path: str,
    name: str,
    dob: date | None = date(1980, 3, 1),
    photo_taken: int = 2005,
    gender: float = 1.0,
    face_score: float = 3.0,
    second_face_score: float = float("nan"),
) -> dict[str, Any]:
    return dict(full_path=full_path, name=name, dob=dob, photo_taken=photo_taken, gender=gender,
                face_score=face_score, second_face_score=second_face_score)


@pytest.fixture
def make_imdb(tmp_path: Path) -> Callable[..., Path]:
    """An ``imdb_crop/`` folder: ``imdb.mat``, the crops in shard folders, a skin-tone CSV."""

    def make(
        entries: Sequence[dict[str, Any]], skin_tones: Sequence[tuple[str, str]] = (), key: str = "imdb"
    ) -> Path:
        root = _fresh(tmp_path / f"{key}_crop")
        write_imdb_mat(root / f"{key}.mat", entries, key)
        for n, e in enumerate(entries):
            write_image(root / e["full_path"], n)
        write_csv(root / "skin.csv", ("name", "skin_tone"), skin_tones)
        return root

    return make


@pytest.fixture(name="imdb_entry")
def _imdb_entry() -> Callable[..., dict[str, Any]]:
    return imdb_entry


@pytest.fixture(name="write_image")
def _write_image() -> Callable[..., Path]:
    return write_image


@pytest.fixture(name="write_imdb_mat")
def _write_imdb_mat() -> Callable[..., Path]:
    return write_imdb_mat


@pytest.fixture(name="celeba_attributes")
def _celeba_attributes() -> tuple[str, ...]:
    return CELEBA_ATTRIBUTES
