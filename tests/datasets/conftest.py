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


# -- FairFace fixtures made of real face photos shipped in installed packages --------------------------------

#: (source person, treatment, race, gender, age); the labels are fixture labels, not facts about the people.
#: Treatments: "upright" rotates the crop by the roll dlib measured on it, so the face is level; "blur",
#: "dark", "small" damage a good portrait; "as_is" keeps a turned or tilted face; "group" is the whole
#: group photo. Rolls (degrees) were measured with dlib's 68-point landmarks on the x2.0 crops.
REAL_ROWS = (
    ("astronaut_eileen_collins", "as_is", "White", "Female", "30-39"),
    ("t1_person1", "upright", "East Asian", "Female", "20-29"),
    ("t1_person3", "upright", "Black", "Male", "40-49"),
    ("t1_person5", "as_is", "Indian", "Male", "20-29"),  # turned away: not frontal
    ("astronaut_eileen_collins", "blur", "Latino_Hispanic", "Female", "50-59"),
    ("astronaut_eileen_collins", "dark", "Latino_Hispanic", "Female", "50-59"),
    ("t1", "group", "Middle Eastern", "Male", "60-69"),  # six faces
    ("astronaut_eileen_collins", "small", "White", "Male", "20-29"),
    ("t1_person4", "as_is", "Southeast Asian", "Male", "more than 70"),  # turned: not frontal
    ("tom_hanks", "as_is", "White", "Female", "0-2"),  # an age outside the grid: never a candidate
)
ROLLS = {"t1_person1": -25.6, "t1_person3": 15.5}
PORTRAIT_SIDE = 320


def real_portrait(person: str, treatment: str) -> Image.Image:
    """One fixture portrait as a PIL image (RGB)."""
    from PIL import ImageFilter

    from faceedit_bench.builtin.datasets import sample

    sources = {n: sample._package_file(pkg, rel) for n, (pkg, rel) in sample.SOURCES.items()}
    if treatment == "group":
        im = Image.open(sources["t1"]).convert("RGB")
        return im.resize((im.width // 2, im.height // 2), Image.LANCZOS)
    p = next(x for x in sample.PEOPLE if x.identity == person)
    src = Image.open(sources[p.source]).convert("RGB")
    if p.box is None:  # the aligned 112 px crop: pad with edge pixels, as the sample dataset does
        im = sample._pad(src, 56).resize((PORTRAIT_SIDE, PORTRAIT_SIDE), Image.LANCZOS)
    else:
        wide = sample._square_crop(src, p.box, 3.2, 2 * PORTRAIT_SIDE, (0.0, 0.0))
        if treatment == "upright":
            wide = wide.rotate(ROLLS[person], resample=Image.BICUBIC)
        margin = round(2 * PORTRAIT_SIDE * (1 - 2.0 / 3.2) / 2)
        im = wide.crop((margin, margin, 2 * PORTRAIT_SIDE - margin, 2 * PORTRAIT_SIDE - margin))
        im = im.resize((PORTRAIT_SIDE, PORTRAIT_SIDE), Image.LANCZOS)
    if treatment == "blur":
        im = im.filter(ImageFilter.GaussianBlur(3))
    elif treatment == "dark":
        im = im.point(lambda v: v // 5)
    elif treatment == "small":
        im = im.resize((96, 96), Image.LANCZOS)
    return im


def jpeg_bytes(im: Image.Image) -> bytes:
    import io

    buf = io.BytesIO()
    im.save(buf, format="JPEG", quality=95)
    return buf.getvalue()


#: HuggingFaceM4/FairFace ClassLabel names (dataset card, configs 0.25 and 1.25), in their order.
HF_NAMES = {
    "age": ["0-2", "3-9", "10-19", "20-29", "30-39", "40-49", "50-59", "60-69", "more than 70"],
    "gender": ["Male", "Female"],
    "race": ["East Asian", "Indian", "Black", "White", "Middle Eastern", "Latino_Hispanic", "Southeast Asian"],
}


def write_hf_parquet(path: Path, rows: Sequence[tuple[bytes, str, str, str, bool]], names=HF_NAMES,
                     image_path: Callable[[int], str | None] = lambda n: None, row_group_size: int = 4) -> Path:
    """A parquet file as the ``datasets`` library writes HuggingFaceM4/FairFace: an ``image`` struct
    {bytes, path}, ClassLabel int64 columns, a bool ``service_test`` and the ``huggingface`` schema metadata."""
    import json

    import pyarrow as pa
    import pyarrow.parquet as pq

    features = {"image": {"_type": "Image"},
                **{k: {"names": names[k], "_type": "ClassLabel"} for k in ("age", "gender", "race")},
                "service_test": {"dtype": "bool", "_type": "Value"}}
    schema = pa.schema([("image", pa.struct([("bytes", pa.binary()), ("path", pa.string())])),
                        ("age", pa.int64()), ("gender", pa.int64()), ("race", pa.int64()),
                        ("service_test", pa.bool_())],
                       metadata={"huggingface": json.dumps({"info": {"features": features}})})
    table = pa.table({
        "image": [{"bytes": r[0], "path": image_path(n)} for n, r in enumerate(rows)],
        "age": [names["age"].index(r[3]) for r in rows],
        "gender": [names["gender"].index(r[2]) for r in rows],
        "race": [names["race"].index(r[1]) for r in rows],
        "service_test": [r[4] for r in rows],
    }, schema=schema)
    path.parent.mkdir(parents=True, exist_ok=True)
    pq.write_table(table, path, row_group_size=row_group_size)
    return path


@pytest.fixture(scope="session")
def real_fairface_images() -> list[bytes]:
    """The JPEG bytes of :data:`REAL_ROWS`, made once per test session."""
    return [jpeg_bytes(real_portrait(person, treatment)) for person, treatment, *_ in REAL_ROWS]


@pytest.fixture
def make_real_fairface(tmp_path: Path, real_fairface_images: list[bytes]) -> Callable[[str], Path]:
    """FairFace of real faces (:data:`REAL_ROWS`) in a published layout: ``csv`` (label CSV + train/N.jpg) or
    ``hf`` (``1.25/train-0000X-of-00002.parquet``, split over two files)."""

    def make(layout: str) -> Path:
        root = _fresh(tmp_path / f"fairface_{layout}")
        rows = [(data, race, gender, age, n % 2 == 0)
                for n, (data, (_, _, race, gender, age)) in enumerate(zip(real_fairface_images, REAL_ROWS))]
        if layout == "csv":
            write_csv(root / "fairface_label_train.csv", ("file", "age", "gender", "race", "service_test"),
                      [(f"train/{n + 1}.jpg", age, gender, race, str(st)) for n, (_, race, gender, age, st)
                       in enumerate(rows)])
            for n, row in enumerate(rows):
                (root / "train").mkdir(parents=True, exist_ok=True)
                (root / "train" / f"{n + 1}.jpg").write_bytes(row[0])
        else:
            half = len(rows) // 2
            write_hf_parquet(root / "1.25" / "train-00000-of-00002.parquet", rows[:half])
            write_hf_parquet(root / "1.25" / "train-00001-of-00002.parquet", rows[half:])
        return root

    return make
